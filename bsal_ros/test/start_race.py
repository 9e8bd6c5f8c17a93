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

"""A control application at a fresh bridge's start: how many reads are refused.

A soak of test_rci_start_race.py's check, run by hand (not by the suite: one
fresh bridge per run, 2 s each), with a verdict: exit 1 when any read was
answered ABORT. Each run starts a fresh bridge, connects the moment its RCI
port accepts (a connection attempt every 10 ms), logs in, reads the 12 sonars' DATA and
then the drive encoder's, and stops the bridge. Printed: the reads refused
(CStRp ABORT; target 0), the sessions the gateway held in their
initialization phase until it knew the robot and how long, the sessions
refused, and the time from the process start to the answered reads::

    python bsal_ros/test/start_race.py --runs 100                 # brak_bringup
    python bsal_ros/test/start_race.py --runs 20 --layout three   # hardware_node + rci_gateway

Run it with the project's environment (scripts/with_env.sh) and a ROS domain
of its own (ROS_DOMAIN_ID); the runs are one after the other.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bsal_ros.protocol.constants import Form, GetSensorStatus, SensorType
from bsal_ros.protocol.rci import CBsTm, CGtSnIq, CGtSnRp, CStRp, IIId
from bsal_ros.rci.client import RciClient
from bsal_ros.rci.users import DEMO_KEY

PACKAGE = Path(__file__).resolve().parents[1]   # the bsal_ros package folder
#: the reads of the issue's control application: the 12 sonars' DATA, the drive encoder's
READS = (CGtSnIq(SensorType.ULTRASONIC, [(i, GetSensorStatus.DATA) for i in range(12)],
                 Form.POLY),
         CGtSnIq(SensorType.RELENCODER, [(0, GetSensorStatus.DATA)]))
#: longest a run waits for the port, and the client for a packet
WAIT_S = 60.0
KNOWN = re.compile(r"hardware node known after ([0-9.]+) s")


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(layout: str, port: int, ns: str, log) -> list[subprocess.Popen]:
    """The bridge's processes, their output in ``log``."""
    def spawn(*cmd):
        return subprocess.Popen([sys.executable, "-m", *cmd], cwd=PACKAGE, stdout=log,
                                stderr=subprocess.STDOUT)
    if layout == "bringup":
        return [spawn("bsal_ros.nodes.bringup", "--rci-port", str(port), "--rdi-realtime-port",
                      "0", "--rdi-ca-port", "0", "--foxglove-port", "0",
                      "--page-port", "0", "--namespace", ns)]
    ros = ["--ros-args", "-r", f"__ns:=/{ns}"]
    return [spawn("bsal_ros.nodes.hardware_node", *ros),
            spawn("bsal_ros.nodes.rci_gateway", *ros, "-p", f"port:={port}")]


def accepted(port: int, started: float) -> RciClient:
    """A client, its connection attempted every 10 ms until the port accepts."""
    while True:
        try:
            return RciClient("127.0.0.1", port, timeout=WAIT_S)
        except ConnectionRefusedError:
            if time.monotonic() - started > WAIT_S:
                raise TimeoutError(f"port {port} did not accept within {WAIT_S:.0f} s") from None
            time.sleep(0.01)


def one_run(layout: str, index: int) -> dict:
    """One fresh bridge; what its control application met."""
    port = free_port()
    ns = f"start_race_{os.getpid()}_{index}"
    out = {"aborts": 0, "reads": 0, "refused": "", "accept_s": None, "answered_s": None,
           "held_s": None}
    with tempfile.TemporaryFile() as log:
        started = time.monotonic()
        procs = start(layout, port, ns, log)
        try:
            with accepted(port, started) as c:
                out["accept_s"] = time.monotonic() - started
                server_id, _, base = c.handshake("demo", DEMO_KEY)
                if not isinstance(server_id, IIId) or not isinstance(base, CBsTm):
                    out["refused"] = f"{server_id!r} {base!r}"
                else:
                    for pkt in READS:
                        reply = c.request(pkt)
                        out["reads"] += 1
                        out["aborts"] += isinstance(reply, CStRp)
                        if not isinstance(reply, (CGtSnRp, CStRp)):
                            out["refused"] = repr(reply)
                    out["answered_s"] = time.monotonic() - started
        except (EOFError, TimeoutError, OSError) as exc:
            out["refused"] = repr(exc)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        log.seek(0)
        text = log.read().decode(errors="replace")
    m = KNOWN.search(text)
    out["held_s"] = float(m.group(1)) if m else None
    return out


def summary(values: list[float]) -> str:
    """p50 / max in s."""
    if not values:
        return "-"
    return f"p50 {statistics.median(values):.2f} s, max {max(values):.2f} s"


def main(argv=None) -> int:
    """Run the fresh bridges and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--layout", choices=["bringup", "three"], default="bringup",
                    help="brak_bringup (one process) or hardware_node + rci_gateway")
    a = ap.parse_args(argv)
    runs = []
    for i in range(a.runs):
        r = one_run(a.layout, i)
        runs.append(r)
        if r["aborts"] or r["refused"]:
            print(f"run {i}: {r['aborts']} ABORT {r['refused']}", flush=True)
    reads = sum(r["reads"] for r in runs)
    aborts = sum(r["aborts"] for r in runs)
    held = [r["held_s"] for r in runs if r["held_s"] is not None]
    print(f"{a.layout}: {len(runs)} fresh bridges, {reads} reads, {aborts} answered ABORT, "
          f"{sum(1 for r in runs if r['refused'])} sessions refused or lost")
    print(f"  port accepted after start: {summary([r['accept_s'] for r in runs if r['accept_s']])}")
    print(f"  sessions held until the robot was known: {len(held)}, for {summary(held)}")
    print("  reads answered after start: "
          f"{summary([r['answered_s'] for r in runs if r['answered_s']])}")
    return 1 if aborts else 0


if __name__ == "__main__":
    raise SystemExit(main())
