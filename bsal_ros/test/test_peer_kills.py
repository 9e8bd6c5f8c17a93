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

"""ROS peers SIGKILLed next to the bridge stall nothing (issue 28).

The whole bridge (brak_bringup with the shipped Fast DDS profile) runs in
the robot namespace of two test namespaces (SUBNET discovery, as on a real
robot). Beside it, four peer processes with Fast DDS's default transports
(shared memory + UDP) subscribe to its topics and call ``list_devices``; one
is SIGKILLed at a random instant every 0.1-0.8 s and replaced, 50 times.
Meanwhile the lab's control application times Get Sensor and acked Set Motor
requests back to back, and a probe records the drive board's reading stamps.
Not one RCI answer may take over 100 ms, and not one gap between the drive
board's polls may exceed its 50 ms period by 100 ms: a dead peer's
shared-memory port (1-4 s of Fast DDS's compiled-in waits, with the GIL held)
or discovery clean-up that blocked a publish would show as exactly that.
The peers start under SCHED_IDLE so that their start-ups (0.5-1 s of CPU
each) do not take the bridge's two cores (a peer not up after 3 s, as
beside busy processes, gets nice 10 instead), and the bridge and both agents
run under SCHED_RR (BRIDGE_RR), ahead of anything else on the machine; what is
measured is what a dead peer does to the bridge, not CPU share. bench/bench_peer_kills.py
prints the same window beside a quiet one.
"""
import argparse
import os
import signal
import threading
import time

import pytest

from two_hosts.churn import BOARD_PERIOD_S, churn_window, over, parser, pct, STALL_S
from two_hosts.rig import Deployment

# alone: it times a bound (100 ms), so it runs with no other test module beside it
pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.alone, pytest.mark.timeout(420)]

KILLS = 50
#: the self-check's stop of the whole bridge process (s), well over STALL_S
FROZEN_S = 0.3
#: the bridge's and the agents' SCHED_RR priority. At nice 0, other work on
#: the 2 cores (load 11-13: two helpers' builds beside it) put 1 of about
#: 30,000 answers at 106-120 ms in 4 of 8 runs (2026-11-27); at nice -5, beside
#: two CPU burners, 4 answers of 103-164 ms (p99 35 ms) in a clean clone's run;
#: under SCHED_RR beside the same burners, max 35.6 and 52.4 ms (2026-11-29)
BRIDGE_RR = 1


def kill_window(two_hosts, tmp_path, kills, freeze=False):
    """The churn window beside the bridge (robot placement); with ``freeze``
    the bridge's process is SIGSTOPped for FROZEN_S once, 1 s into it (the
    window lasts until the last kill: several seconds)."""
    a: argparse.Namespace = parser().parse_args(["--kills", str(kills)])
    assert a.peer_transports == "default" and a.peer_idle_s == 3.0 and a.peer_nice == 10
    env = dict(os.environ)
    dep = Deployment(two_hosts, "robot", tmp_path, env, rr=BRIDGE_RR)
    try:
        dep.wait_up()
        bridge = next(p for p in dep.procs if p.name == "bringup")
        assert os.sched_getscheduler(bridge.pid) == os.SCHED_RR
        on_start = None
        if freeze:
            timer = threading.Timer(1.0, stop_for, (bridge.pid, FROZEN_S))
            on_start = timer.start
        w, churn = churn_window(two_hosts, dep, env, tmp_path, a, on_start)
    finally:
        codes = dep.stop()
    bridge_codes = {k: v for k, v in codes.items() if not k.startswith("agent")}
    assert all(c == 0 for c in bridge_codes.values()), (codes, dep.logs())
    assert churn.error == "" and churn.kills >= kills, (churn.error, churn.kills)
    print(f"PEER_KILLS {churn.kills} kills{' (bridge frozen once)' if freeze else ''}, "
          f"{churn.promoted} of {churn.started} peers moved to nice {a.peer_nice}: "
          f"{len(w['rtt'])} RCI answers, p50 {pct(w['rtt'], 50):.2f} p99 "
          f"{pct(w['rtt'], 99):.2f} max {max(w['rtt']):.1f} ms; {len(w['gaps'])} board "
          f"gaps, max {max(w['gaps']):.1f} ms", flush=True)
    assert w["bad"] == [], w["bad"][:5]
    # the board stamps span the window: a probe that started receiving late
    # would leave a stall at the window's start unseen
    assert sum(w["gaps"]) >= 0.9 * w["seconds"] * 1e3, (sum(w["gaps"]), w["seconds"])
    return w


def stop_for(pid, seconds):
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        os.kill(pid, signal.SIGCONT)


def test_fifty_peer_kills_delay_no_rci_answer_and_no_board_poll(hosts, tmp_path):
    w = kill_window(hosts, tmp_path, KILLS)
    assert len(w["rtt"]) > 10 * KILLS and len(w["gaps"]) > 100
    slow, late = over(w)
    assert slow == 0, (f"{slow} RCI answers over {STALL_S * 1e3:.0f} ms: "
                       f"{sorted(w['rtt'])[-slow:]}")
    assert late == 0, (f"{late} drive-board gaps over {(BOARD_PERIOD_S + STALL_S) * 1e3:.0f} ms: "
                       f"{sorted(w['gaps'])[-late:]}")


def test_the_window_sees_a_bridge_that_stands_still(hosts, tmp_path):
    """The measurement itself: one 0.3 s stop of the bridge's process shows
    as an RCI answer over 100 ms and a drive-board gap over 150 ms."""
    w = kill_window(hosts, tmp_path, 10, freeze=True)
    slow, late = over(w)
    assert slow >= 1 and max(w["rtt"]) >= FROZEN_S * 1e3 * 0.9, (slow, max(w["rtt"]))
    assert late >= 1, (late, max(w["gaps"]))
