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

"""CSmTp, Simulator Teleport (0x0230): the package's own RCI command added the
way docs/EXTENDING.md says (one declaration, a port method, its entry in the
handler table (``forward``), the ROS port's
call of the hardware node's existing ``sim_control`` service, PROTOCOL.md,
the regenerated dissector, this test), end to end through the real
gateway and hardware node on the simulated bus, from a raw socket."""

from __future__ import annotations

import math
import struct

import pytest
from test_rci_one_truth import RawCA, Robot

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

CSMTP, RQ_ACK, SIM_ROBOT = 0x0230, 0x0800, 0xF0
CSTIQ, CSTRP = 0x0100, 0x0101
IDLE, INVALID_ID, NO_SUPPORT = 0x0B, 0x0C, 0x0D


@pytest.fixture
def robot(ros_context):
    r = Robot(ros_context)
    yield r
    r.close()


def teleport(ca: RawCA, dev_id: int, x_mm: int, y_mm: int, yaw_mrad: int) -> bytes:
    return ca.pk("HBH", CSMTP | RQ_ACK, SIM_ROBOT, dev_id) + struct.pack(
        ca.o + "iii", x_mm, y_mm, yaw_mrad)


def test_a_control_application_teleports_the_simulated_robot(robot):
    world = robot.hw.sim.world
    ca = RawCA(robot.port)
    try:
        ca.send(teleport(ca, 0, 1500, -250, 1571))
        ca.expect_ack(CSMTP)
        x, y, th = world.pose()
        assert (x, y) == pytest.approx((1.5, -0.25), abs=0.02)
        assert math.remainder(th - 1.571, 2 * math.pi) == pytest.approx(0.0, abs=0.02)
        # CStIq reports it; an id that is not the simulated robot: INVALID_ID
        ca.send(ca.pk("HH", CSTIQ, CSMTP))
        assert ca.next_code() == CSTRP and ca.read(3) == ca.pk("HB", CSMTP, IDLE)
        ca.send(teleport(ca, 3, 0, 0, 0))
        assert ca.next_code() == CSTRP and ca.read(3) == ca.pk("HB", CSMTP, INVALID_ID)
        assert world.pose()[:2] == pytest.approx((1.5, -0.25), abs=0.02)
    finally:
        ca.close()


def test_a_little_endian_program_teleports_too(robot):
    world = robot.hw.sim.world
    ca = RawCA(robot.port, order="<")
    try:
        ca.send(teleport(ca, 0, -800, 400, 0))
        ca.expect_ack(CSMTP)
        assert world.pose()[:2] == pytest.approx((-0.8, 0.4), abs=0.02)
    finally:
        ca.close()


def test_on_a_real_bus_the_command_is_not_supported(ros_context, monkeypatch):
    # the smbus2 backend (over a fake SMBus) has no simulator: sim_control says
    # NOT_SUPPORTED, which the session answers CStRp NO_SUPPORT
    r = Robot(ros_context, backend="smbus2", monkeypatch=monkeypatch)
    ca = None
    try:
        ca = RawCA(r.port)
        ca.send(teleport(ca, 0, 1500, -250, 1571))
        assert ca.next_code() == CSTRP and ca.read(3) == ca.pk("HB", CSMTP, NO_SUPPORT)
    finally:
        if ca is not None:
            ca.close()
        r.close()
