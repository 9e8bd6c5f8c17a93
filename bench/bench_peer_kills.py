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

"""ROS peers SIGKILLed at random instants next to the bridge: does any RCI
answer or any hardware-node poll period stall meanwhile?

    scripts/with_env.sh python bench/bench_peer_kills.py [--kills 50] [--peers 4]
        [--max-seconds 240] [--seed 28]

Needs root (network namespaces, test/two_hosts/netns.py). The whole bridge
(``brak_bringup``, shipped Fast DDS profile) runs in the robot namespace on
SUBNET discovery; beside it ``--peers`` peer processes (test/two_hosts/peer.py)
subscribe to its topics and call ``list_devices``, and one of them is
SIGKILLed every 0.1-0.8 s and replaced, until ``--kills`` were killed
(test/two_hosts/churn.py: the churn, the window, the options; the peers
start under SCHED_IDLE and get ``--peer-nice`` when not up after
``--peer-idle-s``). Meanwhile the lab's control application times Get Sensor
(12 sonars) and acked Set Motor back to back, and the robot's probe records
the gaps between the drive board's reading stamps. The floor: the same
measurement in a quiet window of the same length, in the same run.
"""

from __future__ import annotations

import os
from pathlib import Path
import sys
import tempfile

# the two-host rig and the churn are test helpers (bsal_ros/test/two_hosts)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bsal_ros" / "test"))

from two_hosts import netns  # noqa: E402
from two_hosts.churn import (BOARD_PERIOD_S, churn_window, over, parser, pct,  # noqa: E402
                             PEER_TRANSPORTS, STALL_S, window)
from two_hosts.rig import Deployment  # noqa: E402


def row(name, w, kills):
    """One Markdown row."""
    slow, late = over(w)
    return (f"| {name} | {w['seconds']:.0f} | {kills} | {len(w['rtt'])} | "
            f"{pct(w['rtt'], 50):.2f} | {pct(w['rtt'], 99):.2f} | {max(w['rtt']):.1f} | "
            f"{slow} | {len(w['bad'])} | {len(w['gaps'])} | {max(w['gaps']):.1f} | {late} |")


def priority(a, churn) -> str:
    """The peers' scheduling, as run."""
    if a.peer_idle_s > 0:
        return (f"SCHED_IDLE, {churn.promoted} not up after {a.peer_idle_s:g} s moved "
                f"to nice {a.peer_nice}")
    return f"nice {a.peer_nice}"


def main(argv=None) -> int:
    """Churn window, quiet window, the report."""
    a = parser().parse_args(argv)
    why = netns.unavailable_reason()
    if why:
        print(f"Skipped: peer kills need network namespaces: {why}.")
        return 0
    hosts = netns.TwoHosts().create()
    try:
        with tempfile.TemporaryDirectory(prefix="bench_peer_kills_") as tmp:
            env = dict(os.environ)
            dep = Deployment(hosts, "robot", Path(tmp), env)
            try:
                dep.wait_up()
                busy, churn = churn_window(hosts, dep, env, Path(tmp), a)
                quiet = window(dep, None, busy["seconds"])
            finally:
                codes = dep.stop()
                print(f"[bench] stopped {codes}", file=sys.stderr)
    finally:
        errors = hosts.delete()
        if errors:
            print(f"[bench] cleanup: {errors}", file=sys.stderr)
    print(f"The whole bridge (brak_bringup, shipped Fast DDS profile) in the robot namespace, "
          f"SUBNET discovery; {a.peers} peers with "
          f"{PEER_TRANSPORTS[a.peer_transports]} beside it ({priority(a, churn)}), one "
          f"SIGKILLed every 0.1-0.8 s "
          f"(seed {a.seed}) and "
          f"replaced: {churn.kills} kills of {churn.started} peers started"
          f"{'; error: ' + churn.error if churn.error else ''}. RCI: the lab's Get Sensor and "
          f"acked Set Motor, back to back (ms). Board: gaps between the drive board's "
          f"reading stamps (ms; polled every {BOARD_PERIOD_S * 1e3:.0f} ms). Stalled: RCI "
          f"answer over {STALL_S * 1e3:.0f} ms, board gap over "
          f"{(BOARD_PERIOD_S + STALL_S) * 1e3:.0f} ms.\n")
    print("| window | s | kills | RCI answers | p50 | p99 | max | over 100 ms | failed | "
          "board gaps | max gap | gaps over 150 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(row("peers killed", busy, churn.kills))
    print(row("quiet (floor)", quiet, 0))
    return 0 if not churn.error else 1


if __name__ == "__main__":
    raise SystemExit(main())
