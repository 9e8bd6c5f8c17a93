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

"""No control application waits on another's answer (issue 40): while one
session's acknowledged Set Motor waits for the robot, the gateway's loop
serves a second control application (its refusal: one session at a time)
and the held answer still comes when the robot answers."""

from __future__ import annotations

import asyncio
import time

import pytest

from bsal_ros.core.result import Result
from bsal_ros.protocol.constants import CStRpStatus, MotorType, RciCode, TermCode
from bsal_ros.protocol.rci import (CAcMt, CCnAc, CStIq, CStMt, CStRp, CSvTm, IIId, IInCp,
                                   MotorCommand, MotorCommandKind)
from bsal_ros.protocol.values import speedval_pack
from bsal_ros.rci.client import RciClient
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.users import DEMO_KEY

from conftest import RciServerThread

pytestmark = pytest.mark.timeout(120)

USERS_YAML = """
users:
  - {name: demo, role: operator, key: "0123456789abcdef0123456789abcdef"}
  - {name: ops, role: operator, key: "ffeeddccbbaa99887766554433221100"}
"""
OPS_KEY = bytes.fromhex("ffeeddccbbaa99887766554433221100")


def wait_for(condition, what, timeout=20.0):
    """Until ``condition()`` holds (a deadline for a loaded machine); fail with ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


class SlowRobot(FakeRobotPort):
    """Set Motor is answered only once ``release`` is set (loop thread)."""

    def __init__(self):
        super().__init__()
        self.release: asyncio.Event | None = None
        self.waiting = 0

    async def set_motors(self, device_class, settings) -> Result:
        """The fake robot's answer, held until released."""
        if self.release is not None:
            self.waiting += 1
            await self.release.wait()
        return await super().set_motors(device_class, settings)


def test_a_second_control_application_is_served_while_the_first_waits_for_its_answer():
    robot = SlowRobot()
    gw = RciServerThread(USERS_YAML, robot, linger_s=0.2)
    first = second = None
    try:
        first = RciClient("127.0.0.1", gw.port)
        first.handshake("demo", DEMO_KEY)
        assert first.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
        robot.release = gw.call(asyncio.Event)
        first.send(CStMt.one(MotorType.DC, 0, MotorCommand(
            MotorCommandKind.SPVAL, speedval_pack(True, 10.0)), rq_ack=True))
        wait_for(lambda: gw.call(lambda: robot.waiting) == 1, "the Set Motor reached the robot")
        # the first's answer is held: the second is answered meanwhile
        second = RciClient("127.0.0.1", gw.port)
        second.send(IIId(0, 3, b"ops", OPS_KEY))
        assert second.wait_closed() == [IInCp(), CSvTm(TermCode.ACCESS)]
        assert robot.waiting == 1 and not robot.release.is_set()
        gw.call(robot.release.set)
        assert first.recv() == CCnAc(RciCode.CStMt)
        assert first.request(CStIq(RciCode.CStMt)) == CStRp(RciCode.CStMt, CStRpStatus.IDLE)
    finally:
        for c in (first, second):
            if c is not None:
                c.close()
        gw.stop()
