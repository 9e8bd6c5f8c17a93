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

"""cmd_vel and the steering: the wheel waits while the steering is not homed
or homing (one log line per episode, a diagnostics WARN), and its speed is
scaled by the steering error the way tricycle_controller scales it."""
import math

import pytest

from bsal_ros.hardware import diagnostics as D
from bsal_ros.hardware.kinematics import steering_error_scale
from bsal_ros.protocol.values import speedval_unpack

from hardware_helpers import make_robot, run, run_until


def drive_board(robot):
    return robot.device("dc_motor", 0).board


def home(robot, clock):
    assert robot.start_homing(0).ok
    assert run_until(robot, clock, lambda: robot.homing_status(0)["done"])
    robot.homing_finished(0)


def dc_diag(robot, clock):
    return [d for d in D.device_diagnostics(robot, clock.t) if d.name == "dc_motor 0"][0]


def test_the_scale_follows_tricycle_controller():
    assert steering_error_scale(0.0) == 1.0
    assert steering_error_scale(math.radians(29.9)) == 1.0
    assert steering_error_scale(math.radians(60.0)) == pytest.approx(0.5)
    assert steering_error_scale(-math.radians(60.0)) == pytest.approx(0.5)
    assert steering_error_scale(math.radians(90.1)) == 0.01


def test_an_unhomed_steering_holds_the_wheel_with_one_line_and_a_warn():
    robot, clock = make_robot()
    robot.drain_events()
    run(robot, clock, 1.0, each=lambda: robot.drive(0.15, 0.0))
    world = robot.bus.simulation.world
    assert abs(world.w) < 0.01 and drive_board(robot).speed_set & 0x07FF == 0
    held = [e.message for e in robot.drain_events() if "drive wheel waits" in e.message]
    assert held == ["cmd_vel: the drive wheel waits: steering not homed (run home_steering)"]
    d = dc_diag(robot, clock)
    assert d.level == D.WARN and "steering not homed" in d.message
    # homing: still held (a new episode, its own line)
    assert robot.start_homing(0).ok
    run(robot, clock, 0.3, each=lambda: robot.drive(0.15, 0.0))
    assert abs(world.w) < 0.01
    assert robot.drive_held == "steering homing"
    assert run_until(robot, clock, lambda: robot.homing_status(0)["done"],
                     each=lambda: robot.drive(0.15, 0.0))
    robot.homing_finished(0)
    # homed: the wheel drives, the warning is gone
    run(robot, clock, 1.5, each=lambda: robot.drive(0.15, 0.0))
    assert world.w == pytest.approx(1.5, abs=0.05)
    assert robot.drive_held == "" and dc_diag(robot, clock).level == D.OK


def test_a_stop_is_never_held():
    robot, clock = make_robot()
    robot.drain_events()
    run(robot, clock, 0.5, each=lambda: robot.drive(0.0, 0.0))
    assert not any("drive wheel waits" in e.message for e in robot.drain_events())
    assert robot.drive_held == ""


def test_the_wheel_speed_is_scaled_by_the_steering_error():
    robot, clock = make_robot()
    home(robot, clock)
    run(robot, clock, 0.5)
    # a sharp turn: the steering must swing about 1.3 rad from the centre
    w, a = robot.drive(0.05, 0.5)
    assert abs(a) > math.pi / 2 - 0.3
    run(robot, clock, 0.05, each=lambda: robot.drive(0.05, 0.5))
    written = speedval_unpack(drive_board(robot).speed_set)[1]
    error = abs(a - robot.steer_angle())
    assert error > math.pi / 6
    assert 0.0 < written < w * math.cos(math.pi / 6) + 0.002
    # once the steering is there, full speed
    run(robot, clock, 3.0, each=lambda: robot.drive(0.05, 0.5))
    assert speedval_unpack(drive_board(robot).speed_set)[1] == pytest.approx(w, abs=0.002)


def test_an_explicit_command_ends_the_hold():
    robot, clock = make_robot()
    run(robot, clock, 0.3, each=lambda: robot.drive(0.15, 0.0))
    assert robot.drive_held
    assert robot.set_motors("dc_motor", [(0, 0, 0.0)]).ok      # a stop takes the drive
    assert robot.drive_held == "" and dc_diag(robot, clock).level == D.OK
