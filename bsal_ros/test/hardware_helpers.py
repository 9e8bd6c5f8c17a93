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

"""Shared helpers of the hardware-layer tests (a fake clock, a robot on it); no tests here."""

from bsal_ros.hardware import load_description, Robot
from bsal_ros.protocol.values import speedval_pack


def speedval_from_duty(percent):
    """speedval of a duty cycle in percent."""
    return speedval_pack(True, percent)


def speedval_from_rad_s(rad_s):
    """speedval of an angular speed in rad/s."""
    return speedval_pack(False, rad_s)


class FakeClock:

    def __init__(self, t=100.0):
        self.t = t

    def __call__(self):
        return self.t


def make_robot(overrides=None, activate=True, **kw):
    clock = FakeClock()
    desc = load_description(overrides=overrides)
    robot = Robot(desc["robot"], clock=clock, wall=clock, **kw)
    robot.start(activate=activate)
    return robot, clock


def run(robot, clock, seconds, dt=0.01, each=None):
    """Advance the fake clock in dt steps, cycling the robot; returns all updates."""
    out = []
    for _ in range(int(round(seconds / dt))):
        clock.t += dt
        out += robot.cycle()
        if each is not None:
            each()
    return out


def run_until(robot, clock, cond, limit=60.0, dt=0.01, each=None):
    t_end = clock.t + limit
    while clock.t < t_end:
        clock.t += dt
        robot.cycle()
        if each is not None:
            each()
        if cond():
            return True
    return False
