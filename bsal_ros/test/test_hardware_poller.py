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

"""The poll thread: polls when boards are due, hands updates to the listener,
survives a failing listener (one log event per distinct error), stops."""
import threading
import time

from bsal_ros.hardware import load_description, Robot, scale_rates
from bsal_ros.hardware.poller import Poller


def wait_for(cond, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and not cond():
        time.sleep(0.01)
    return cond()


def test_poller_runs_cycles_and_survives_listener_errors():
    desc = scale_rates(load_description()["robot"], rate_scale=4.0)
    robot = Robot(desc)
    robot.start(activate=True)
    seen = []
    lock = threading.Lock()

    def listener(updates):
        with lock:
            seen.extend(u.board.name for u in updates)
            if len(seen) > 20:
                raise RuntimeError("listener broke")

    poller = Poller(robot, listener)
    poller.start()
    try:
        assert wait_for(lambda: poller.errors >= 5)
        assert poller.running
        with lock:
            assert {"sonar_a", "drive", "accel"} <= set(seen)
        events = [e.message for e in robot.drain_events()]
        assert sum("listener broke" in m for m in events) == 1   # one line, not a flood
        assert poller.cpu_s > 0
    finally:
        poller.stop()
    assert not poller.running
    n = poller.cycles
    time.sleep(0.1)
    assert poller.cycles == n
    robot.close()
