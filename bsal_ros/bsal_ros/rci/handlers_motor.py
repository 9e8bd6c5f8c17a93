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
homing) and Get Motor (seed 001 4.6.8-4.6.10).

Only the steering homing runs in the background (its CCnAc is sent when it
ends), so that while it runs steering commands get ABORT and everything else
proceeds. A mix-in of :class:`~bsal_ros.rci.session.RciSession`.
"""

from __future__ import annotations

import asyncio

from .handlers_base import answers_at_once, status_of
from .port import MotorSetting
from .transport import SessionEnd
from ..core.device_classes import DC_MOTOR, PSERVO_MOTOR
from ..protocol.constants import CStRpStatus, GetMotorStatus, MotorType, RciCode
from ..protocol.rci import CAcMt, CGtMtIq, CGtMtRp, CStMt, MotorCommandKind, MotorData, StatusData
from ..protocol.values import speedval_unpack

MOTOR_CLASS = {MotorType.DC: DC_MOTOR, MotorType.PSERVO: PSERVO_MOTOR}


class MotorHandlers:
    """The CAcMt, CStMt and CGtMtIq handlers and the steering homing."""

    async def _h_cacmt(self, pkt: CAcMt) -> None:
        cls = MOTOR_CLASS[pkt.sub_code]
        if self._write_ids(RciCode.CAcMt, cls, pkt) is None:
            return
        if cls == PSERVO_MOTOR and self._homing_now():
            return self._finish_command(RciCode.CAcMt, CStRpStatus.ABORT, pkt.rq_ack,
                                        "the steering is homing")
        if self.stopper is not None:
            await self.stopper.claim(cls)
        await self._activate(RciCode.CAcMt, cls, pkt)

    async def _h_cstmt(self, pkt: CStMt) -> None:
        cls = MOTOR_CLASS[pkt.sub_code]
        if self._write_ids(RciCode.CStMt, cls, pkt) is None:
            return
        resets = [i for i, d in pkt.items if d.kind == MotorCommandKind.RESET]
        if resets:
            if len(resets) != len(pkt.items) or self._homing_now():
                # mixing homing with speeds, or a second homing: protection
                return self._finish_command(RciCode.CStMt, CStRpStatus.ABORT, pkt.rq_ack,
                                            "a homing mixed with speeds, or a second homing")
            self._status[RciCode.CStMt] = CStRpStatus.BUSY
            self._homing_ids = set(resets)
            if pkt.rq_ack:
                self._ack_pending += 1
            self._home_task = asyncio.get_running_loop().create_task(
                self._home(resets, pkt.rq_ack))
            return
        if cls == PSERVO_MOTOR and self._homing_now():
            return self._finish_command(RciCode.CStMt, CStRpStatus.ABORT, pkt.rq_ack,
                                        "the steering is homing")
        settings = []
        for i, d in pkt.items:
            duty, value = speedval_unpack(d.speedval)
            settings.append(MotorSetting(i, duty, value))
        if any(s.value and not self._ca_on(cls, s.id) for s in settings):
            # not activated by this CA (every device starts deactivated for
            # it, whatever ran before): the CP refuses; a stop never is
            return self._finish_command(RciCode.CStMt, CStRpStatus.ABORT, pkt.rq_ack,
                                        "a speed for a motor this control application did "
                                        "not activate")
        if self.stopper is not None:
            await self.stopper.claim(cls)
        res = await self._acked_call(self.port.set_motors(cls, settings), pkt.rq_ack)
        if res.ok:
            running = self._running.setdefault(cls, set())
            for s in settings:
                (running.add if s.value else running.discard)(s.id)
        self._finish_result(RciCode.CStMt, res, pkt.rq_ack)

    async def _home(self, ids: list[int], rq_ack: bool) -> None:
        """The steering homing task; its CCnAc (or CStRp) is sent when it ends."""
        status = CStRpStatus.ABORT
        why = "the homing failed"
        end: SessionEnd | None = None
        try:
            # the book's CA homes right after a reset, without activating the
            # steering motor (001 3.3): the CP switches it on for the homing
            await self._remember_hw(PSERVO_MOTOR, ids)
            res = await self._call(self.port.activate(PSERVO_MOTOR, ids, [True] * len(ids)))
            if res.ok:
                self._activated.setdefault(PSERVO_MOTOR, set()).update(ids)
            for i in ids:
                if not res.ok:
                    break
                res = await self._call(self.port.home_steering(i))
            status, why = status_of(res), res.message
        except asyncio.CancelledError:
            status = CStRpStatus.ABORT      # reset, session end: the homing was cancelled
            why = "the homing was cancelled (reset or end of the session)"
            raise
        except SessionEnd as e:
            end = e                         # the robot stayed unreachable while homing
        except Exception:                   # never leave the session waiting for an ack
            self.log.exception("RCI client %s: homing failed", self.peer)
        finally:
            self._homing_ids = set()
            if rq_ack:
                self._ack_pending -= 1
            self._finish_command(RciCode.CStMt, status, rq_ack, why)
            if end is not None:
                self._force_end(end)

    def _now_cgtmtiq(self, pkt: CGtMtIq) -> bool:
        """Answer from the cache (or refuse) at once; False: the states must
        be fetched (nothing was sent)."""
        cls = MOTOR_CLASS[pkt.sub_code]
        if any(s == GetMotorStatus.TIME for _, s in pkt.items):
            # invalid ids first (INVALID_ID), as for any inquiry
            if self._inquiry_ids(RciCode.CGtMtIq, cls, pkt) is not None:
                self._inquiry_failed(RciCode.CGtMtIq, CStRpStatus.NO_SUPPORT,
                                     "a motor's time is not supported")
            return True
        return self._inquire_now(RciCode.CGtMtIq, cls, pkt, self._motor_reply)

    @answers_at_once("_now_cgtmtiq")
    async def _h_cgtmtiq(self, pkt: CGtMtIq) -> None:
        if not self._now_cgtmtiq(pkt):
            await self._inquire_fetched(RciCode.CGtMtIq, MOTOR_CLASS[pkt.sub_code], pkt,
                                        self._motor_reply)

    def _motor_reply(self, pkt: CGtMtIq, states):
        """CGtMtRp for ``states``."""
        items = []
        pservo = pkt.sub_code == MotorType.PSERVO
        for (i, s), state in zip(pkt.items, states):
            if s == GetMotorStatus.STATUS:
                items.append((i, StatusData(self._statval(state))))
            else:
                items.append((i, MotorData(state.speedval & 0xFFFF,
                                           (state.mposval & 0xFFFFFFFF) if pservo else None)))
        what = "status" if pkt.items[0][1] == GetMotorStatus.STATUS else "data"
        return CGtMtRp(pkt.sub_code, items, pkt.form), what, None
