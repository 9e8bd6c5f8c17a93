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

"""A bus device that is missing or forbidden (no /dev/i2c-N, user not in the
i2c group): one clear log line, every board down with the reason, bounded
retries, and the bus is picked up when it appears. The opener is faked and
injected through the backend registry (no real i2c device is needed)."""
import errno

import pytest

from bsal_ros.hardware import diagnostics as D, load_description, register_backend
from bsal_ros.hardware.backends import BACKENDS
from bsal_ros.hardware.bus import Smbus2Bus
from bsal_ros.hardware.robot import Robot
from bsal_ros.hardware.sim import build_sim_bus

from hardware_helpers import FakeClock, run


class FlakyOpener:
    """Opens /dev/i2c-N only once ``present``; before that raises ``error``.
    The opened device forwards to a simulated bus (the boards answer)."""

    def __init__(self, sim_bus, error):
        self.sim_bus = sim_bus
        self.error = error
        self.present = False
        self.calls = 0

    def __call__(self, number):
        self.calls += 1
        if not self.present:
            raise self.error
        return self.sim_bus


@pytest.fixture
def flaky_robot(request):
    error = getattr(request, "param", FileNotFoundError(errno.ENOENT, "No such file or directory"))
    desc = load_description()["robot"]
    clock = FakeClock()
    opener = FlakyOpener(build_sim_bus(desc, clock), error)
    register_backend("test_flaky_i2c", lambda robot, opts: Smbus2Bus(
        5, smbus_factory=opener, clock=opts.clock))
    try:
        robot = Robot(desc, backend="test_flaky_i2c", clock=clock, wall=clock)
        robot.start(activate=True)
        yield robot, clock, opener
    finally:
        BACKENDS.pop("test_flaky_i2c", None)


def test_a_missing_bus_is_one_log_line_and_every_board_down_with_the_reason(flaky_robot):
    robot, clock, opener = flaky_robot
    events = robot.drain_events()
    errors = [e.message for e in events if e.level == "error"]
    assert errors == ["cannot open /dev/i2c-5: No such file or directory; check i2c_bus, load "
                      "the i2c-dev module (modprobe i2c-dev), enable the I2C adapter; "
                      "retrying every 2 s"]
    assert all(not b.up and "cannot open /dev/i2c-5" in b.fault for b in robot.boards.values())
    diags = D.device_diagnostics(robot, clock.t)
    assert diags and all(d.level == D.ERROR and "cannot open /dev/i2c-5" in d.message
                         for d in diags)
    bus = D.BusDiagnostics()(robot, clock.t)
    assert bus.level == D.ERROR and "No such file or directory" in bus.message


def test_the_open_is_retried_at_a_bounded_rate_and_not_logged_again(flaky_robot):
    robot, clock, opener = flaky_robot
    robot.drain_events()
    assert opener.calls == 1
    run(robot, clock, 1.5)          # many polls, no new attempt within 2 s
    assert opener.calls == 1
    run(robot, clock, 5.0)          # about one attempt per 2 s
    assert 3 <= opener.calls <= 4
    assert [e for e in robot.drain_events() if e.level == "error"] == []


def test_the_bus_is_picked_up_when_it_appears(flaky_robot):
    robot, clock, opener = flaky_robot
    robot.drain_events()
    opener.present = True
    run(robot, clock, 3.0)
    assert all(b.up and b.ok for b in robot.boards.values())
    assert all(d.on for d in robot.devices.values())     # activate_on_start applied late
    messages = [e.message for e in robot.drain_events()]
    assert any("opened /dev/i2c-5" in m for m in messages)
    assert robot.get_states("ultrasonic", [0])[1][0].range_m < 10.0
    assert D.BusDiagnostics()(robot, clock.t).level == D.OK


@pytest.mark.parametrize("flaky_robot", [PermissionError(errno.EACCES, "Permission denied")],
                         indirect=True)
def test_a_forbidden_bus_says_to_join_the_i2c_group(flaky_robot):
    robot, clock, opener = flaky_robot
    errors = [e.message for e in robot.drain_events() if e.level == "error"]
    assert len(errors) == 1
    assert errors[0].startswith("cannot open /dev/i2c-5: Permission denied; add the user to "
                                "the i2c group")
