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

"""RCI motor commands: Activate Motor, Set Motor (speeds and the steering
homing) and Get Motor (seed 001 4.6.8-4.6.10), one handler object each
(:class:`~bsal_ros.rci.handlers_base.Handler`).

Only the steering homing runs in the background (its CCnAc is sent when it
ends), so that while it runs steering commands get ABORT and everything else
proceeds.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

from .handlers_base import DeviceCommands, Handler
from .inquiries import Inquiries
from .port import MotorSetting, RobotPort
from .session_parts import Answers, CaState, Homing, RobotCalls, status_of
from .transport import SessionEnd
from ..core.device_classes import DC_MOTOR, PSERVO_MOTOR
from ..protocol.constants import CStRpStatus, GetMotorStatus, MotorType, RciCode
from ..protocol.rci import CAcMt, CGtMtIq, CGtMtRp, CStMt, MotorCommandKind, MotorData, StatusData
from ..protocol.values import speedval_unpack

MOTOR_CLASS = {MotorType.DC: DC_MOTOR, MotorType.PSERVO: PSERVO_MOTOR}


class ActivateMotor(Handler):
    """CAcMt: motors switched on or off (not the steering while it homes)."""

    def __init__(self, devices: DeviceCommands, homing: Homing, stopper):
        self.devices = devices
        self.homing = homing
        #: retries refused safety stops across sessions (None: none)
        self.stopper = stopper

    async def run(self, pkt: CAcMt) -> None:
        """Activate or deactivate; ABORT for the steering while it homes."""
        cls = MOTOR_CLASS[pkt.sub_code]
        if self.devices.ids(RciCode.CAcMt, cls, pkt) is None:
            return
        if cls == PSERVO_MOTOR and self.homing.now():
            return self.devices.answers.finish(RciCode.CAcMt, CStRpStatus.ABORT, pkt.rq_ack,
                                               "the steering is homing")
        if self.stopper is not None:
            await self.stopper.claim(cls)
        await self.devices.activate(RciCode.CAcMt, cls, pkt)


class SetMotor(Handler):
    """CStMt: speeds of motors this control application activated, or the
    steering homing (a RESET item), which runs in the background."""

    def __init__(self, port: RobotPort, devices: DeviceCommands, answers: Answers,
                 calls: RobotCalls, ca: CaState, homing: Homing, stopper, log: logging.Logger,
                 who: Callable[[], str], force_end: Callable[[SessionEnd], None]):
        self.port = port
        self.devices = devices
        self.answers = answers
        self.calls = calls
        self.ca = ca
        self.homing = homing
        #: retries refused safety stops across sessions (None: none)
        self.stopper = stopper
        self.log = log
        self.who = who
        #: ends the session from the homing task (the robot stayed unreachable)
        self.force_end = force_end

    async def run(self, pkt: CStMt) -> None:
        """Set the speeds (or start the homing) and answer."""
        cls = MOTOR_CLASS[pkt.sub_code]
        finish = self.answers.finish
        if self.devices.ids(RciCode.CStMt, cls, pkt) is None:
            return
        resets = [i for i, d in pkt.items if d.kind == MotorCommandKind.RESET]
        if resets:
            if len(resets) != len(pkt.items) or self.homing.now():
                # mixing homing with speeds, or a second homing: protection
                return finish(RciCode.CStMt, CStRpStatus.ABORT, pkt.rq_ack,
                              "a homing mixed with speeds, or a second homing")
            self.answers.status[RciCode.CStMt] = CStRpStatus.BUSY
            self.homing.ids = set(resets)
            if pkt.rq_ack:
                self.calls.ack_pending += 1
            self.homing.task = asyncio.get_running_loop().create_task(
                self._home(resets, pkt.rq_ack))
            return
        if cls == PSERVO_MOTOR and self.homing.now():
            return finish(RciCode.CStMt, CStRpStatus.ABORT, pkt.rq_ack, "the steering is homing")
        settings = []
        for i, d in pkt.items:
            duty, value = speedval_unpack(d.speedval)
            settings.append(MotorSetting(i, duty, value))
        if any(s.value and not self.ca.ca_on(cls, s.id) for s in settings):
            # not activated by this CA (every device starts deactivated for
            # it, whatever ran before): the CP refuses; a stop never is
            return finish(RciCode.CStMt, CStRpStatus.ABORT, pkt.rq_ack,
                          "a speed for a motor this control application did not activate")
        if self.stopper is not None:
            await self.stopper.claim(cls)
        res = await self.calls.acked_call(self.port.set_motors(cls, settings), pkt.rq_ack)
        if res.ok:
            self.ca.set_running(cls, settings)
        self.answers.finish_result(RciCode.CStMt, res, pkt.rq_ack)

    async def _home(self, ids: list[int], rq_ack: bool) -> None:
        """The steering homing task; its CCnAc (or CStRp) is sent when it ends."""
        status = CStRpStatus.ABORT
        why = "the homing failed"
        end: SessionEnd | None = None
        call = self.calls.call
        try:
            # the book's CA homes right after a reset, without activating the
            # steering motor (001 3.3): the CP switches it on for the homing
            await self.ca.remember_hw(PSERVO_MOTOR, ids)
            res = await call(self.port.activate(PSERVO_MOTOR, ids, [True] * len(ids)))
            if res.ok:
                self.ca.activated.setdefault(PSERVO_MOTOR, set()).update(ids)
            for i in ids:
                if not res.ok:
                    break
                res = await call(self.port.home_steering(i))
            status, why = status_of(res), res.message
        except asyncio.CancelledError:
            status = CStRpStatus.ABORT      # reset, session end: the homing was cancelled
            why = "the homing was cancelled (reset or end of the session)"
            raise
        except SessionEnd as e:
            end = e                         # the robot stayed unreachable while homing
        except Exception:                   # never leave the session waiting for an ack
            self.log.exception("RCI client %s: homing failed", self.who())
        finally:
            self.homing.ids = set()
            if rq_ack:
                self.calls.ack_pending -= 1
            self.answers.finish(RciCode.CStMt, status, rq_ack, why)
            if end is not None:
                self.force_end(end)


class GetMotor(Handler):
    """CGtMtIq: speeds and positions, or statvals, from the port's cache
    (at once) or fetched."""

    def __init__(self, inquiries: Inquiries, ca: CaState):
        self.inquiries = inquiries
        self.ca = ca

    def now(self, pkt: CGtMtIq) -> bool:
        """Answer from the cache (or refuse) at once; False: the states must
        be fetched (nothing was sent)."""
        cls = MOTOR_CLASS[pkt.sub_code]
        inquiries = self.inquiries
        if any(s == GetMotorStatus.TIME for _, s in pkt.items):
            # invalid ids first (INVALID_ID), as for any inquiry
            if inquiries.ids(RciCode.CGtMtIq, cls, pkt) is not None:
                inquiries.answers.inquiry_failed(RciCode.CGtMtIq, CStRpStatus.NO_SUPPORT,
                                                 "a motor's time is not supported")
            return True
        return inquiries.now(RciCode.CGtMtIq, cls, pkt, self._reply)

    async def run(self, pkt: CGtMtIq) -> None:
        """Answer, fetching the states when the cache cannot."""
        if not self.now(pkt):
            await self.inquiries.fetched(RciCode.CGtMtIq, MOTOR_CLASS[pkt.sub_code], pkt,
                                         self._reply)

    def _reply(self, pkt: CGtMtIq, states):
        """CGtMtRp for ``states``."""
        items = []
        pservo = pkt.sub_code == MotorType.PSERVO
        statval = self.ca.statval
        for (i, s), state in zip(pkt.items, states):
            if s == GetMotorStatus.STATUS:
                items.append((i, StatusData(statval(state))))
            else:
                items.append((i, MotorData(state.speedval & 0xFFFF,
                                           (state.mposval & 0xFFFFFFFF) if pservo else None)))
        what = "status" if pkt.items[0][1] == GetMotorStatus.STATUS else "data"
        return CGtMtRp(pkt.sub_code, items, pkt.form), what, None
