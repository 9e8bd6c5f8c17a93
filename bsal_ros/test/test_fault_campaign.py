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

"""The fault campaign (issue 7): its corpus (pure) and its short version run
end to end (``test/fault_campaign.py --quick``: the bridge as separate
processes on the simulated robot, faults injected, clients killed, the
hardware node killed and restarted).

The campaign reports times; this test asserts only outcomes: zero crashes,
no fd/thread leak beyond the report's small tolerance, motors stopped after
a killed or silent control application, recovery after every fault and
restart (each within the campaign's own generous deadlines). The goals
(under 100 ms for a closed socket, one watchdog period for silence) are
reported in docs/FAULTS.md, not asserted here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys

import pytest

from bsal_ros.protocol import encode_rci, ProtocolError, RciDecoder
from bsal_ros.protocol.rci import IIId, IInCp
from faults.corpus import build_corpus, CATEGORIES, CONTROL, INIT
from faults.stats import leak_check, pct, summary

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/ beside the packages


# ------------------------------------------------------------------ pure parts
def test_corpus_is_seeded_and_covers_every_category():
    a, b = build_corpus(60, seed=3), build_corpus(60, seed=3)
    assert a == b
    assert build_corpus(60, seed=4) != a
    assert {e.category for e in build_corpus(len(CATEGORIES))} == set(CATEGORIES)
    for e in a:
        assert e.phase in (INIT, CONTROL)
        assert 0 < len(e.data) <= 65536


def _feed(entry):
    """What the gateway's decoder makes of an entry (after a handshake for
    control-phase entries): 'error', 'incomplete' or the packets."""
    dec = RciDecoder(role="server")
    if entry.phase == CONTROL:
        assert len(dec.feed(encode_rci(IIId(0, 3, b"demo", bytes(16))) +
                            encode_rci(IInCp()))) == 2
    try:
        pkts = dec.feed(entry.data)
    except ProtocolError:
        return "error"
    return pkts or "incomplete"


def test_corpus_entries_are_malformed_for_the_gateway():
    for e in build_corpus(240, seed=7):
        got = _feed(e)               # never anything but ProtocolError
        if e.category == "truncated":
            assert got == "incomplete", e.describe()
        elif e.category in ("unknown_code", "bad_flags", "wrong_direction", "bad_value"):
            assert got == "error", e.describe()
        elif e.category == "init_in_control":
            assert isinstance(got, list) and len(got) == 1, e.describe()
        elif e.category == "control_before_init":
            assert isinstance(got, list) and not isinstance(got[0], IIId), e.describe()


def test_stats_helpers():
    assert pct([3, 1, 2], 50) == 2
    assert pct([1, 2, 3, 4], 100) == 4
    s = summary([0.1, None, 0.3])
    assert s["n"] == 2 and s["failed"] == 1 and s["max"] == 0.3
    snap = {"fds": 10, "threads": 5, "rss": 100, "tcp": 1}
    assert not leak_check(snap, dict(snap, fds=12))["fd_leak"]
    assert leak_check(snap, dict(snap, fds=30))["fd_leak"]
    assert leak_check(snap, dict(snap, threads=9))["thread_leak"]


# ------------------------------------------------------------- the quick run
@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("faults")
    env = dict(os.environ)
    assert env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"     # conftest.py
    assert env.get("ROS_DOMAIN_ID")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "test" / "fault_campaign.py"), "--quick",
         "--json", str(out / "report.json"), "--logdir", str(out / "logs")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=280)
    path = out / "report.json"
    assert path.exists(), f"no report (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    r = json.loads(path.read_text())
    r["_stdout"], r["_stderr"], r["_rc"] = proc.stdout, proc.stderr, proc.returncode
    return r


def _ctx(r) -> str:
    return f"{r['_stdout']}\n{r['_stderr'][-4000:]}"


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_quick_campaign_ran_every_step_without_crashes(report):
    v = report["verdict"]
    assert not v["campaign_error"], report.get("campaign_error")
    assert report["_rc"] == 0, _ctx(report)
    assert v["crash_count"] == 0, _ctx(report)
    assert not v["unclean_exits"], _ctx(report)
    assert v["processes_left"] == [], _ctx(report)
    assert set(report["steps"]) == {"A_i2c_faults", "C_kill_ca",
                                    "C3_disconnect_during_board_fault", "D_rdi_churn",
                                    "E_rci_corpus", "B_kill_hardware"}
    # C3: a control application leaves while the drive board is faulted; the
    # drive must end stopped (the board watchdog and the latched stop of the
    # hardware layer, the gateway's retried safety stop; docs/FAULTS.md).
    c3 = report["steps"]["C3_disconnect_during_board_fault"]
    assert c3["cases"], _ctx(report)
    assert c3["all_stopped"], json.dumps(c3["cases"])
    assert not report["cut_short"], _ctx(report)
    assert report["config"]["discovery_range"] == "LOCALHOST"


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_no_fd_or_thread_leaks(report):
    v = report["verdict"]
    assert v["fd_leaks"] == [] and v["thread_leaks"] == [], json.dumps(report["leaks"])
    assert all(leak["checked"] for leak in report["leaks"].values()), json.dumps(report["leaks"])
    for step in ("D_rdi_churn", "E_rci_corpus"):
        lk = report["steps"][step]["leak"]
        assert lk["checked"] and not lk["fd_leak"] and not lk["thread_leak"], (step, lk)


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_faults_are_detected_and_recovered(report):
    a = report["steps"]["A_i2c_faults"]
    assert {r["fault"] for r in a["injections"]} == {"error_rate", "stuck", "missing"}
    for r in a["injections"]:
        assert r["sim_control"][0] == 0, r
        assert r["to_error"] is not None, r          # ERROR on /diagnostics (10 s deadline)
        assert r["clear_to_ok"] is not None, r       # OK again (15 s deadline)


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_motors_stopped_after_killed_and_silent_clients(report):
    c = report["steps"]["C_kill_ca"]
    assert c["closed_socket"] and c["silent"]
    for r in c["closed_socket"]:
        assert r.get("moving_seen"), r
        assert r.get("kill_to_stopped") is not None, r
    for r in c["silent"]:
        assert r.get("silence_to_stopped") is not None, r
        assert r["terms"] == ["NOACK"], r            # the watchdog ended the session
        assert r["exit"] == 0, r


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_commands_work_again_after_the_hardware_node_restart(report):
    b = report["steps"]["B_kill_hardware"]
    assert b["kills"]
    for r in b["kills"]:
        # the whole row and the step's log lines (with the gateway's and the new
        # node's last lines when no command was acked): pytest cuts a dict short
        lines = report["_stderr"].splitlines()
        step_log = "\n".join(ln for ln in lines if "B kill" in ln or ln.startswith("  "))
        assert r["restart_to_commands_ok"] is not None, f"{json.dumps(r)}\n{step_log}"
        assert r["first_failure"] is not None, r     # the application was told (ABORT)
    assert b["rdi_serves_after_restarts"]


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_gateways_survive_rdi_churn_and_malformed_rci_input(report):
    d = report["steps"]["D_rdi_churn"]
    assert d["cycles"] > 0 and d["checks"] > 0 and d["checks_passed"] == d["checks"], d
    e = report["steps"]["E_rci_corpus"]
    assert e["entries"] > 0 and not e["not_served"], e["not_served"]
    assert e["flood"] and e["flood"]["served_after"] is not None, e["flood"]
