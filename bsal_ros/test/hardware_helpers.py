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


def wire_timed_smbus2(robot, opts):
    """A bus backend for ``smbus2`` (``backends.register_backend``; bench_rci's
    ``--bus slow-smbus2``): the smbus2 backend's own code (Smbus2Bus) over the
    simulated boards, each transfer first sleeping its wire time at 100 kHz
    (the GIL released, as in smbus2's ioctl; Smbus2Bus's lock makes the
    transfers one at a time, as on the wire)."""
    import time

    from bsal_ros.hardware.bus import i2c_wire_time, Smbus2Bus
    from bsal_ros.hardware.sim import build_sim_bus
    bus = build_sim_bus(robot, opts.clock, seed=opts.seed)
    read, write = bus.read_i2c_block_data, bus.write_i2c_block_data   # the byte ones use them
    bus.read_i2c_block_data = lambda a, r, n: time.sleep(i2c_wire_time(n)) or read(a, r, n)
    bus.write_i2c_block_data = lambda a, r, d: (
        time.sleep(i2c_wire_time(len(d), write=True)) or write(a, r, d))
    return Smbus2Bus(int(opts.i2c_bus), clock=opts.clock, smbus_factory=lambda n: bus)
