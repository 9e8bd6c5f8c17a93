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
"""ROS peers SIGKILLed at random instants next to the bridge (issue 28): the
churn and its measuring window, shared by test/test_peer_kills.py (a verdict)
and bench/bench_peer_kills.py (the figures next to a quiet window's).

In the robot namespace, ``--peers`` peer processes (:mod:`.peer`, Fast DDS's
default transports: shared memory + UDP) subscribe to the bridge's topics and
call ``list_devices``; one of the peers that are up is SIGKILLed every 0.1-0.8
s (random) and replaced, until ``--kills`` were killed. Meanwhile the lab's
control application times Get Sensor (12 sonars) and acked Set Motor requests
back to back, and the robot's probe records the drive board's reading stamps.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import random
import signal
import sys
import threading
import time

from child_process import Child

from .rig import Deployment, niced, TEST

#: the drive board's poll period (s) on the simulated bus (config/brak.yaml)
BOARD_PERIOD_S = 0.05
PEER_TRANSPORTS = {"default": "Fast DDS's default transports (shared memory + UDP)",
                   "udp": "UDPv4 only"}
#: a delay beyond this (s) counts as a stall
STALL_S = 0.1


class Churn(threading.Thread):
    """Start peers, SIGKILL one that is up at random instants, replace it."""

    def __init__(self, hosts, env, logdir: Path, a):
        super().__init__(daemon=True)
        self.hosts, self.env, self.logdir, self.a = hosts, env, logdir, a
        self.rng = random.Random(a.seed)
        self.kills = 0
        self.started = 0
        #: peers moved from SCHED_IDLE to nice ``peer_nice`` (not up in time)
        self.promoted = 0
        self.error = ""

    def _spawn(self) -> Child:
        self.started += 1
        argv = [sys.executable, "-m", "two_hosts.peer", "--max-seconds",
                str(self.a.max_seconds)]
        if self.a.peer_idle_s > 0:
            # a peer's start-up (importing rclpy, 0.5-1 s of CPU) under
            # SCHED_IDLE: a waking bridge thread always preempts it. At nice 10
            # it still got slices, and each of the bridge's hand-offs waited
            # its turn (answers of 49-116 ms): load, not a middleware stall
            argv = ["chrt", "--idle", "0"] + argv
        else:
            argv = niced(self.a.peer_nice, argv)
        return Child(f"peer{self.started}", self.hosts.wrap("robot", argv), self.logdir, TEST,
                     self.hosts.ros_env("robot", self.env,
                                        udp_only=self.a.peer_transports == "udp"))

    def _promote_starved(self, starting: list[Child], born: dict[int, float]):
        """A peer not up ``peer_idle_s`` after its start gets nice
        ``peer_nice`` instead of SCHED_IDLE: beside busy processes an idle
        peer would never start, and the kills would not be reached."""
        now = time.monotonic()
        for p in starting:
            if p.pid in born and now - born[p.pid] > self.a.peer_idle_s:
                del born[p.pid]
                self._out_of_idle(p)
                self.promoted += 1

    def _out_of_idle(self, p: Child):
        """``p`` at nice ``peer_nice`` (when peers start under SCHED_IDLE)."""
        if self.a.peer_idle_s > 0:
            set_priority(p.pid, self.a.peer_nice)

    def run(self):
        peers: list[Child] = []
        born: dict[int, float] = {}   # PID -> start, while the peer is under SCHED_IDLE
        deadline = time.monotonic() + self.a.max_seconds
        try:
            while self.kills < self.a.kills and time.monotonic() < deadline:
                peers = [p for p in peers if p.alive()]
                while len(peers) < self.a.peers:
                    peers.append(self._spawn())
                    if self.a.peer_idle_s > 0:
                        born[peers[-1].pid] = time.monotonic()
                time.sleep(self.rng.uniform(0.1, 0.8))
                up = [p for p in peers if "PEER READY" in p.text()]
                self._promote_starved([p for p in peers if p not in up], born)
                if not up:
                    continue
                victim = self.rng.choice(up)
                # a process's exit runs at its own policy: beside two busy
                # processes a SCHED_IDLE peer took over 10 s to die
                self._out_of_idle(victim)
                os.kill(victim.pid, signal.SIGKILL)
                victim.popen.wait(10)
                victim.stop()
                self.kills += 1
        except Exception as exc:   # noqa: BLE001 - reported with the figures
            self.error = repr(exc)
        finally:
            for p in peers:
                self._out_of_idle(p)
                p.stop(timeout=2.0)


def set_priority(pid: int, nice: int) -> None:
    """Every thread of ``pid``: SCHED_OTHER at ``nice`` (a policy and a nice
    value are per thread; threads it starts later inherit them)."""
    for _ in range(2):   # a thread started during the first pass
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            return   # ended meanwhile
        for tid in tids:
            try:
                os.setpriority(os.PRIO_PROCESS, tid, nice)
                os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
            except ProcessLookupError:
                pass


def pct(xs, q):
    """Nearest-rank percentile."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s)) - 1))] if s else float("nan")


def window(dep: Deployment, churn: Churn | None, seconds: float) -> dict:
    """RCI round trips (ms) and board poll gaps (ms) while ``churn`` runs, or
    for ``seconds`` when it is None."""
    t0 = time.monotonic()
    rtt, bad = [], []
    if churn is not None:
        churn.start()

    def going():
        return churn.is_alive() if churn is not None else time.monotonic() - t0 < seconds
    while going():
        r = dep.lab.ask("rci_bench", n=20)
        rtt += [ns / 1e6 for ns in r["sonar"] + r["motor"]]
        bad += r["bad"]["sonar"] + r["bad"]["motor"]
    took = time.monotonic() - t0
    gaps = [g * 1e3 for g in dep.robot.ask("board_gaps", since=t0)["gaps"]]
    return {"seconds": took, "rtt": rtt, "bad": bad, "gaps": gaps}


def over(w) -> tuple[int, int]:
    """(RCI answers over STALL_S, board gaps over BOARD_PERIOD_S + STALL_S)."""
    return (sum(1 for x in w["rtt"] if x > STALL_S * 1e3),
            sum(1 for g in w["gaps"] if g > (BOARD_PERIOD_S + STALL_S) * 1e3))


def probe_reads_the_board(dep: Deployment, timeout: float = 60.0) -> None:
    """Wait until the robot's probe receives the drive board's readings.

    Its motor_states subscription matches the bridge's publisher through
    discovery, which may end seconds after the lab sees the whole graph
    (2-3 s under coverage): a window opened before that had no board stamps
    for its first seconds, and the self-check's stall there went unseen."""
    deadline = time.monotonic() + timeout
    while len(dep.robot.ask("board_gaps", since=time.monotonic() - 0.5)["gaps"]) < 3:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no drive-board reading reached the robot's probe in "
                               f"{timeout:.0f} s")
        time.sleep(0.1)


def churn_window(hosts, dep: Deployment, env: dict, logdir: Path, a,
                 on_start=None) -> tuple[dict, Churn]:
    """Log the lab's control application in, then time RCI answers and board
    gaps while ``a.kills`` peers are SIGKILLed (options of ``parser()``);
    ``on_start()`` is called as the window opens."""
    deadline = time.monotonic() + 60
    while "/hardware_node" not in dep.lab.ask("graph")["nodes"]:
        if time.monotonic() > deadline:
            raise RuntimeError("graph not complete from the lab")
        time.sleep(0.5)
    if dep.login()["activate"] != "ack":
        raise RuntimeError("DC motor 0 not switched on")
    dep.lab.ask("rci_bench", n=30)
    probe_reads_the_board(dep)
    churn = Churn(hosts, env, logdir, a)
    if on_start is not None:
        on_start()
    return window(dep, churn, 0.0), churn


def parser() -> argparse.ArgumentParser:
    """The options of bench_peer_kills; test_peer_kills.py takes its defaults."""
    ap = argparse.ArgumentParser(description="ROS peers SIGKILLed at random instants next "
                                             "to the bridge (issue 28)")
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--peers", type=int, default=4)
    ap.add_argument("--max-seconds", type=float, default=240.0)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--peer-transports", choices=["default", "udp"], default="default",
                    help="the peers' Fast DDS transports: default (shared memory + UDP) or "
                         "udp (FASTDDS_BUILTIN_TRANSPORTS=UDPv4: tells shared memory's part "
                         "from the rest)")
    ap.add_argument("--peer-idle-s", type=float, default=3.0,
                    help="peers start under SCHED_IDLE and get --peer-nice if not up after "
                         "this many seconds (0: start at --peer-nice)")
    ap.add_argument("--peer-nice", type=int, default=10,
                    help="the peers' nice value after --peer-idle-s (0: the bridge's priority)")
    return ap
