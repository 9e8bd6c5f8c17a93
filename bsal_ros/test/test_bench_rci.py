# Copyright 2026 The bsal_ros authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# SPDX-License-Identifier: Apache-2.0

"""bench/bench_rci.py end to end in its smoke mode (--quick): both
deployments come up as child processes, a separate client process gets
answers on both RCI paths, the floors answer, the tracer's marks add up to a
breakdown, and no child is left behind. Only outcomes are asserted, no times."""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/, bench/ beside the packages

# untraced: it runs no line of bsal_ros that another module does not (scripts/coverage_unique.py)
pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.untraced]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_quick_run_measures_both_deployments_and_breaks_an_acked_command_down(tmp_path):
    report = tmp_path / "report.json"
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "bench_rci.py"), "--quick",
         "--floor-executors", "single", "--breakdown-deployments", "per-node",
         "--json", str(report), "--logdir", str(tmp_path / "logs")],
        cwd=REPO, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    print(out)                          # shown by pytest when an assertion fails
    print(err[-3000:], file=sys.stderr)
    assert proc.returncode == 0, err[-3000:]
    assert "| 12-sonar group Get (CGtSnIq -> CGtSnRp) | one process" in out
    assert "| Set Motor + RQ_ACK (CStMt -> CCnAc) | a process per node" in out
    data = json.loads(report.read_text())
    # echo + Trigger server + client + relay server + relay, bringup, 3 nodes,
    # the same with the previous executors, 3 nodes traced
    assert len(data["child_pids"]) == 5 + 1 + 3 + 1 + 3 + 3
    assert [p for p in data["child_pids"] if _alive(p)] == []
    assert set(data["runs"]) == {"one", "per-node", "one@previous", "per-node@previous"}
    # each variant ran the executor it names (the bring-up says which in its log)
    logs = tmp_path / "logs"
    assert "bus sim, EventsExecutor" in (logs / "bringup.log").read_text()
    assert "bus sim, SingleThreadedExecutor" in (logs / "bringup-previous.log").read_text()
    # every run's acked Set Motor is set against the floor taken, and before /
    # after is shown, for every deployment; figures and ratios, no verdicts
    rows = [ln for ln in out.splitlines()
            if ln.startswith("| Set Motor + RQ_ACK (CStMt -> CCnAc) |")
            and "| rclpy Trigger, 2 processes, single-threaded |" in ln]
    assert len(rows) == 4 and all(ln.endswith("x |") for ln in rows), rows
    assert "| acked Set Motor | a process per node (as the launch file) |" in out
    assert "verdict" not in out and "met |" not in out
    # the first read after a command, set against the acked clear alone
    assert len([ln for ln in out.splitlines()
                if ln.startswith("| clear + Get Sensor DATA in one write")
                and "| the acked clear alone, same deployment |" in ln]) == 4
    assert "| clear + read in one write | a process per node (as the launch file) |" in out
    assert "Garbage collections in the traced processes" in out
    # the architecture's floor (the relay) is taken and set against each deployment
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("| deployment | rclpy single"))
    floor_rows = lines[head + 2:head + 6]
    assert [ln.split(" (")[0] for ln in floor_rows] == ["| one process"] * 2 + [
        "| a process per node"] * 2, floor_rows
    assert all(ln.count(" | ") == 8 for ln in floor_rows), floor_rows
    for run in data["runs"].values():
        for key in ("sonar", "motor", "tcp_sonar", "tcp_motor", "trigger_single", "clear",
                    "clear_read", "relay_bare", "relay_states"):
            s = run["summary"][key]
            assert s["n"] == 50
            assert 0 < s["p50"] <= s["p99"] <= s["p999"]
        assert run["sizes"]["motor"] == [8, 4]
    assert list(data["breakdown"]) == ["per-node"]
    for dep, b in data["breakdown"].items():
        assert b["complete"] > 0, dep
        assert len(b["segments"]) == 9, dep
        assert b["segments"]["hardware node set_motors callback"]["p50"] > 0
        assert b["states"]["rate_hz"] > 0


def test_pin_puts_the_servers_on_their_cpus_and_gives_the_client_its_own(monkeypatch):
    # --pin CLIENT/SERVERS: a process started under server_affinity runs on
    # the servers' CPUs, and the bench itself keeps its own affinity
    import argparse

    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import bench_rci
    assert bench_rci.parse_pin("0/1") == ([0], [1])
    assert bench_rci.parse_pin("0,1/1") == ([0, 1], [1])
    with pytest.raises(argparse.ArgumentTypeError, match="CLIENT/SERVERS"):
        bench_rci.parse_pin("0")
    cpu = min(os.sched_getaffinity(0))
    own = os.sched_getaffinity(0)
    monkeypatch.setattr(bench_rci, "SERVER_CPUS", [cpu])
    with bench_rci.server_affinity():
        child = subprocess.run([sys.executable, "-c",
                                "import os; print(sorted(os.sched_getaffinity(0)))"],
                               capture_output=True, text=True, timeout=30)
    assert child.stdout.strip() == f"[{cpu}]"
    assert os.sched_getaffinity(0) == own
