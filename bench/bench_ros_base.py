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

"""A legacy program on another ROS 2 base (issue 39): the ``ros_base`` backend
on ir-sim's tricycle base (bsal_ros/test/irsim_base.py) against Brak's
simulated boards, both bridges running at once (namespaces /brak and /sim).

    scripts/with_env.sh python bench/bench_ros_base.py [--samples 400] [--hold-s 60] [--kills 5]

This process is the control application (plain sockets, no rclpy). RCI
latency: a 12-sonar group Get Sensor and an acked Set Motor of 0 % (the base
stays put), blocks interleaved across the bridges; the simulated boards are
the floor. Then test/speed_holder.py holds 5 % for ``--hold-s`` (the room is
6 m): the gaps between the commands the base received (20 Hz asked; the
issue's bound 200 ms, a ros2_control base brakes past 500 ms); it is killed
by SIGKILL then and after ``--kills`` 3 s holds: kill to the first zero
command on the base (bound 0.5 s). Prints Markdown for scripts/run_bench.py.
"""

from __future__ import annotations

import argparse
from importlib import metadata
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
TEST = ROOT / "bsal_ros" / "test"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(TEST))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

from bench_rci import Client, pct, round_trips, summary, wait_ready  # noqa: E402
from bsal_ros.protocol.rci import CCnAc, CGtSnRp, encode_rci  # noqa: E402
from child_process import Child, STARTED  # noqa: E402
from irsim_base import read_record  # noqa: E402
from two_hosts.clients import set_motor, sonar_inquiry  # noqa: E402

UP = r"Brak is up: .*RCI 127\.0\.0\.1:(\d+), "


def bridge(name: str, logdir: Path, *extra: str) -> tuple[Child, int]:
    child = Child(name, [sys.executable, "-m", "bsal_ros.nodes.bringup", "--rci-port", "0",
                         "--rdi-realtime-port", "0", "--rdi-ca-port", "0", "--foxglove-port", "0",
                         "--page-port", "0",
                         "--duration", "3600",
                         *extra], logdir, cwd=ROOT / "bsal_ros")
    return child, int(child.wait_log(UP, 90).group(1))


def hold(port: int, seconds: float, duty: float, record: Path) -> dict:
    """A holder process for ``seconds``, then SIGKILL: gaps while held, kill -> zero."""
    proc = subprocess.Popen([sys.executable, "speed_holder.py", str(port), str(duty)], cwd=TEST,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    STARTED.append(proc.pid)
    try:
        first = proc.stdout.readline().strip()
        if first != "holding":
            raise RuntimeError(f"the holder said {first!r}: {proc.stdout.read()}")
        start = time.monotonic() + 0.5          # the base's first commands of the speed
        time.sleep(seconds)
        killed = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = killed + 5.0
        while time.monotonic() < deadline:
            got = read_record(record)
            zero = next((t for t, vx, wz in got if t >= killed and vx == 0.0 and wz == 0.0),
                        None)
            if zero is not None:
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
    held = [t for t, vx, _ in got if start <= t <= killed and vx > 0.0]
    gaps = [b - a for a, b in zip(held, held[1:])]
    return {"n": len(held), "gaps_ms": [g * 1e3 for g in gaps],
            "zero_ms": None if zero is None else (zero - killed) * 1e3}


def latency(clients: dict, n: int, blocks: int) -> dict:
    """{(path, bridge): ns samples}, blocks interleaved across the bridges."""
    data_sonar = encode_rci(sonar_inquiry())
    inq = sonar_inquiry()
    data_motor = encode_rci(set_motor(0.0))
    out: dict = {}
    for _ in range(blocks):
        for name, c in clients.items():
            paths = {
                "12-sonar Get Sensor": round_trips(
                    "sonar", lambda i, c=c: c.request(inq, data_sonar),
                    lambda rp: isinstance(rp, CGtSnRp)),
                "acked Set Motor 0 %": round_trips(
                    "set motor", lambda i, c=c: c.request(set_motor(0.0), data_motor),
                    lambda rp: isinstance(rp, CCnAc)),
            }
            for path, sample in paths.items():
                out.setdefault((path, name), []).extend(sample(max(1, n // blocks)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=400, help="per path and bridge")
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--hold-s", type=float, default=60.0)
    ap.add_argument("--kills", type=int, default=5, help="short holds (3 s) killed")
    a = ap.parse_args(argv)
    children = []
    with tempfile.TemporaryDirectory(prefix="bench_ros_base.") as tmp:
        logdir, record = Path(tmp), Path(tmp) / "commands.txt"
        try:
            base = Child("irsim_base", [sys.executable, str(TEST / "irsim_base.py"),
                                        "--record", str(record)], logdir, cwd=TEST)
            children.append(base)
            base.wait_log("tricycle base up", 60)
            sim, sim_port = bridge("bringup-sim", logdir, "--namespace", "sim")
            children.append(sim)
            ros, ros_port = bridge("bringup-ros_base", logdir, "--bus-backend", "ros_base",
                                   "--base-profile", "tricycle", "--namespace", "brak")
            children.append(ros)
            clients = {"sim": Client(sim_port), "ros_base": Client(ros_port)}
            for c in clients.values():
                wait_ready(c)
            latency(clients, 50, 1)                    # warm-up
            lat = latency(clients, a.samples, a.blocks)
            for c in clients.values():
                c.close()
            long_hold = hold(ros_port, a.hold_s, 5.0, record)
            kills = [hold(ros_port, 3.0, 5.0, record)["zero_ms"] for _ in range(a.kills)]
        finally:
            for child in reversed(children):
                child.stop()
    print_report(a, lat, long_hold, kills)
    return 0


def print_report(a, lat: dict, long_hold: dict, kills: list) -> None:
    print(f"ir-sim {metadata.version('ir-sim')} tricycle base "
          f"through the `tricycle` profile (`ros_base`) against Brak's simulated boards "
          f"(`sim`), both bridges running, blocks interleaved; {a.samples} samples per row.\n")
    print("| path | bridge | p50 ms | p99 ms | mean ms | ratio p50 to sim |")
    print("|---|---|---|---|---|---|")
    for path in ("12-sonar Get Sensor", "acked Set Motor 0 %"):
        floor = summary(lat[(path, "sim")])["p50"]
        for name in ("sim", "ros_base"):
            s = summary(lat[(path, name)])
            print(f"| {path} | {name} | {s['p50']:.3f} | {s['p99']:.3f} | {s['mean']:.3f} | "
                  f"{s['p50'] / floor:.2f} |")
    gaps = sorted(long_hold["gaps_ms"])
    print(f"\nA speed held for {a.hold_s:.0f} s (Set Motor 5 % every 0.1 s, 20 Hz asked: "
          f"50 ms): {long_hold['n']} commands on the base; gap median "
          f"{pct(gaps, 50):.1f} ms, p99 {pct(gaps, 99):.1f} ms, longest {gaps[-1]:.1f} ms; "
          f"gaps over 200 ms: {sum(g > 200 for g in gaps)}; over 500 ms (the base brakes): "
          f"{sum(g > 500 for g in gaps)}.\n")
    zeros = [long_hold["zero_ms"], *kills]
    shown = ", ".join("none" if z is None else f"{z:.0f}" for z in zeros)
    print(f"The holder killed (SIGKILL) mid-drive, {len(zeros)} times: kill to the first zero "
          f"command on the base {shown} ms (bound 500 ms).")


if __name__ == "__main__":
    sys.exit(main())
