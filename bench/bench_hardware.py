#!/usr/bin/env python3
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

"""Hardware node benchmark (not a test).

A. CPU time per second of the hardware node (simulated bus) at the default
   board rates and with every board polled at 50 Hz, against a floor measured
   in the same run: the same process spinning the same executor (the one the
   hardware node's main() builds on the simulated bus) with an idle node
   (rclpy + DDS cost with no hardware node).
B. Bus transactions per board poll and per second, bytes, and the share of a
   100 kHz I2C wire those bytes would occupy.
C. Node time per board poll (block read through the bus API, decode, device
   snapshots, ROS messages published) against the time the same bytes take on
   a 100 kHz I2C wire (the physical floor: about 30 + 9N bit times for an
   N-byte block read). The simulated bus's own time (virtual board + world) is
   measured separately and subtracted.

Run:  scripts/with_env.sh python bench/bench_hardware.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import rclpy  # noqa: E402
import rclpy.context  # noqa: E402
from rclpy.node import Node  # noqa: E402

from bsal_ros.hardware.bus import i2c_wire_time  # noqa: E402
from bsal_ros.nodes.hardware_node import HardwareNode  # noqa: E402
from bsal_ros.nodes.runtime import make_executor  # noqa: E402

CLOCK_HZ = 100e3


class Spinner:

    def __init__(self, context, nodes):
        self.ex = make_executor(context)     # the one hardware_node's main() builds
        for n in nodes:
            self.ex.add_node(n)
        self.stop = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop:
            self.ex.spin_once(timeout_sec=0.05)

    def close(self):
        self.stop = True
        self.t.join(5)
        self.ex.shutdown()


def measure(seconds, make_node):
    """CPU seconds per wall second of this process while ``make_node`` runs."""
    ctx = rclpy.context.Context()
    rclpy.init(context=ctx)
    node = make_node(ctx)
    sp = Spinner(ctx, [node])
    time.sleep(1.0)  # warm-up: discovery, first polls
    hw = getattr(node, "robot", None)
    c0, w0 = time.process_time(), time.monotonic()
    s0 = hw.bus.stats.snapshot() if hw else None
    p0 = {b.name: b.polls for b in hw.boards.values()} if hw else {}
    pc0 = node.poller.cpu_s if hw else 0.0
    sim0 = hw.bus.sim_cpu_s if hw else 0.0
    time.sleep(seconds)
    c1, w1 = time.process_time(), time.monotonic()
    out = {"cpu_per_s": (c1 - c0) / (w1 - w0), "wall": w1 - w0}
    if hw:
        s1 = hw.bus.stats
        polls = {b.name: b.polls - p0[b.name] for b in hw.boards.values()}
        out.update(
            poller_cpu_per_s=(node.poller.cpu_s - pc0) / (w1 - w0),
            sim_cpu_per_s=(hw.bus.sim_cpu_s - sim0) / (w1 - w0),
            polls=polls, polls_total=sum(polls.values()),
            transactions=s1.transactions - s0.transactions,
            bytes=(s1.bytes_read - s0.bytes_read) + (s1.bytes_written - s0.bytes_written),
            wire_s=(s1.wire_bits - s0.wire_bits) / CLOCK_HZ,
            rates={b.name: 1.0 / b.poll_period() for b in hw.boards.values()})
    sp.close()
    if hasattr(node, "close"):
        node.close()
    node.destroy_node()
    rclpy.shutdown(context=ctx)
    return out


class FakeClock:

    def __init__(self, t):
        self.t = t

    def __call__(self):
        return self.t


def per_poll(n_iter):
    """Node time per board poll vs the sim bus's own time vs the wire.

    The robot runs on a fake clock advanced by one board update period before
    each poll (untimed), so every timed poll finds new data, as in operation.
    """
    ctx = rclpy.context.Context()
    rclpy.init(context=ctx)
    node = HardwareNode(context=ctx, auto_home=False)
    node.poller.stop()          # we drive the cycles ourselves
    robot = node.robot
    clock = FakeClock(time.monotonic())
    robot.clock = clock
    robot.bus.simulation.world.clock = clock
    rows = []
    for name, b in robot.boards.items():
        others = [x for x in robot.boards.values() if x is not b]
        n = b.data_len()
        step = 1.0 / b.update_hz() + 1e-4
        tot = sim = 0.0
        for i in range(n_iter + 20):          # 20 warm-up polls
            clock.t += step
            robot.bus.simulation.world.sync()                 # physics outside the timed part
            for x in others:
                x.next_due = float("inf")
            b.next_due = 0.0
            s0 = robot.bus.sim_cpu_s
            t0 = time.thread_time()
            ups = robot.cycle()
            node.out.on_cycle(ups)
            if i >= 20:
                tot += time.thread_time() - t0
                sim += robot.bus.sim_cpu_s - s0
            assert ups and ups[0].fresh, f"{name}: no new data"
        total_us = tot / n_iter * 1e6
        bus_us = sim / n_iter * 1e6
        wire_us = i2c_wire_time(n, clock_hz=CLOCK_HZ) * 1e6
        rows.append((name, b.type, n, total_us, bus_us, total_us - bus_us, wire_us))
    node.close()
    node.destroy_node()
    rclpy.shutdown(context=ctx)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--iterations", type=int, default=300)
    args = ap.parse_args(argv)

    floor = measure(args.seconds, lambda ctx: Node("idle_floor", context=ctx))
    default = measure(args.seconds, lambda ctx: HardwareNode(context=ctx, auto_home=False))
    fifty = measure(args.seconds, lambda ctx: HardwareNode(context=ctx, auto_home=False,
                                                           all_boards_hz=50.0))
    rows = per_poll(args.iterations)

    f = floor["cpu_per_s"] * 1e3
    print("### A. CPU time per second (process, all threads)\n")
    print(f"Executor: the EventsExecutor (what hardware_node's main() builds), "
          f"{args.seconds:g} s per configuration.\n")
    print("| configuration | polls/s | CPU ms/s | minus idle floor | of which simulating "
          "| node (minus floor and sim) | poll thread ms/s |")
    print("|---|---|---|---|---|---|---|")
    print(f"| idle rclpy node (floor) | - | {f:.1f} | - | - | - | - |")
    for label, m in (("hardware node, default rates", default),
                     ("hardware node, all boards 50 Hz", fifty)):
        c = m["cpu_per_s"] * 1e3
        sm = m["sim_cpu_per_s"] * 1e3
        print(f"| {label} | {m['polls_total'] / m['wall']:.1f} | {c:.1f} | {c - f:.1f} "
              f"| {sm:.1f} | {c - f - sm:.1f} | {m['poller_cpu_per_s'] * 1e3:.1f} |")
    print()
    print("Board poll rates (Hz), default: " + ", ".join(
        f"{k} {v:.2f}" for k, v in default["rates"].items()) + "; 50 Hz run: " + ", ".join(
        f"{k} {v:.2f}" for k, v in fifty["rates"].items()) + ".\n")

    print("### B. Bus transactions\n")
    print("| configuration | transactions per board poll | transactions/s | bytes/s "
          "| 100 kHz wire busy |")
    print("|---|---|---|---|---|")
    for label, m in (("default rates", default), ("all boards 50 Hz", fifty)):
        print(f"| {label} | {m['transactions'] / max(1, m['polls_total']):.2f} "
              f"| {m['transactions'] / m['wall']:.1f} | {m['bytes'] / m['wall']:.0f} "
              f"| {100.0 * m['wire_s'] / m['wall']:.1f} % |")
    print()

    print("### C. Node time per board poll vs the 100 kHz wire (floor)\n")
    print("| board | type | block bytes | total us (thread CPU) | simulating us "
          "| node us (total - sim) | wire us (30+9N bits) | node / wire |")
    print("|---|---|---|---|---|---|---|---|")
    for name, typ, n, tot, bus, nd, wire in rows:
        print(f"| {name} | {typ} | {n} | {tot:.0f} | {bus:.0f} | {nd:.0f} | {wire:.0f} "
              f"| {nd / wire:.2f} |")
    print()
    print(f"({args.iterations} polls per board; the node part includes decode, device "
          "snapshots, odometry and every ROS message that poll publishes.)")


if __name__ == "__main__":
    main()
