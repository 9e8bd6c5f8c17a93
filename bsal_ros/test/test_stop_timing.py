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
"""The stop's clock (bsal_ros.nodes.process_exit): a slow stop says in one line
which phase took the time, and a stop that hangs past the bound is ended by
the watchdog with the phases already done and every thread's stack."""

import re
import subprocess
import sys
import textwrap

import pytest

from bsal_ros.nodes.process_exit import PhaseClock

# A node whose destroy_node takes DESTROY_S (time.sleep: the GIL is free, as
# when rclpy waits in Python; a C call that keeps the GIL is faulthandler's case).
DRIVER = textwrap.dedent("""
    import sys, time
    from rclpy.node import Node
    from bsal_ros.nodes import runtime
    destroy_s, bound = float(sys.argv[1]), float(sys.argv[2])
    runtime.SHUTDOWN_BOUND_S = bound

    class SlowToDestroy(Node):
        def destroy_node(self):
            time.sleep(destroy_s)
            return super().destroy_node()

    def build(nodes):
        nodes.add(SlowToDestroy("slow_stop", context=nodes.context))

    runtime.run("slow_stop", build, args=["slow_stop"], duration=0.5)
""")


def run_driver(destroy_s, bound):
    return subprocess.run([sys.executable, "-c", DRIVER, str(destroy_s), str(bound)],
                          capture_output=True, text=True, timeout=60)


def test_phase_clock_sums_its_laps_and_names_the_slow_ones(monkeypatch):
    now = [100.0]
    monkeypatch.setattr("bsal_ros.nodes.process_exit.time.monotonic", lambda: now[0])
    clock = PhaseClock()
    for phase, took in (("stop steps", 0.004), ("executor", 0.25), ("destroying x", 1.5)):
        now[0] += took
        clock.lap(phase)
    assert clock.total() == pytest.approx(1.754)
    assert clock.summary() == "executor 0.25 s, destroying x 1.50 s"
    now[0] += 0.003
    clock.lap("context shutdown")
    assert clock.total() == pytest.approx(1.757)
    assert PhaseClock().summary() == "no phase over 10 ms"


@pytest.mark.ros
def test_a_slow_stop_logs_one_line_naming_the_slow_phase():
    result = run_driver(1.3, 10.0)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [x for x in result.stderr.splitlines() if "[runtime]" in x]
    assert len(lines) == 1, result.stderr[-3000:]
    m = re.fullmatch(r"\[runtime\] slow_stop: the stop took (\d+\.\d\d) s \((.*)\)", lines[0])
    assert m, lines
    destroying = re.search(r"destroying slow_stop (\d+\.\d\d) s", m.group(2))
    assert destroying and float(destroying.group(1)) >= 1.3, lines
    assert float(m.group(1)) >= float(destroying.group(1)), lines


@pytest.mark.ros
def test_a_quick_stop_logs_nothing():
    result = run_driver(0.0, 10.0)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[runtime]" not in result.stderr, result.stderr[-3000:]


@pytest.mark.ros
def test_a_stop_past_the_bound_is_ended_with_the_phases_done_and_the_stacks():
    result = run_driver(30.0, 1.0)
    assert result.returncode == 1, result.stderr[-3000:]
    assert re.search(r"\[runtime\] slow_stop: not stopped within 1 s \(phases done: [^)]*\); "
                     r"forcing exit\. Threads:", result.stderr), result.stderr[-3000:]
    assert "in destroy_node" in result.stderr, result.stderr[-3000:]


# What start-up made is frozen before the first spin: a full collection of it
# would hold the GIL (the whole process) 60-70 ms (startup_gc, called by runtime.run).
FREEZE_DRIVER = textwrap.dedent("""
    import gc, sys, threading
    from rclpy.node import Node
    from bsal_ros.nodes import runtime

    def build(nodes):
        nodes.add(Node("frozen", context=nodes.context))
        # runs once the process spins: what the collector holds as permanent then
        threading.Timer(0.3, lambda: print("FROZEN", gc.get_freeze_count(), flush=True)).start()

    runtime.run("frozen", build, args=["frozen"], duration=0.8)
""")


@pytest.mark.ros
def test_start_up_objects_are_frozen_before_the_first_spin():
    result = subprocess.run([sys.executable, "-c", FREEZE_DRIVER], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    m = re.search(r"^FROZEN (\d+)$", result.stdout, re.M)
    assert m, (result.stdout, result.stderr[-3000:])
    assert int(m.group(1)) > 10000, m.group(0)      # rclpy, the messages, the node
