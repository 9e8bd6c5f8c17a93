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

"""The RCI command handlers every control phase has: what a handler is
(:class:`Handler`), the steps the commands that change the robot share
(:class:`DeviceCommands`), and the session-wide commands: Status Inquiry,
Reset, Base Time Inquiry (seed 001 4.6.2-4.6.7), the generic forwarding
handler of added commands and the one that drops unsolicited replies.

Each handler is an object made once per session with the session's parts it
uses (:mod:`bsal_ros.rci.session_parts`); the table of which handler runs
which code is :data:`bsal_ros.rci.handlers.HANDLERS`. Loop thread only.
"""

from __future__ import annotations

import logging
from typing import Callable

from .port import RobotPort
from .session_parts import Answers, CaState, Homing, RobotCalls
from .transport import RciTransport
from ..core.device_classes import MOTOR_CLASSES
from ..core.result import Result
from ..kinds import device_classes, kind
from ..protocol.constants import CStRpStatus, RciCode
from ..protocol.rci import CBsTm, CBsTmIq, CCnAc, CRs, CStIq, CStRp
from ..protocol.rci_packets import FLAGS
from ..protocol.rci_registry import command_of, tracked_codes
from ..protocol.values import Timeval


class Handler:
    """Runs one RCI command code for one session: :meth:`run` for each
    packet, in the order received. A handler that can often answer without
    waiting also has ``now(pkt) -> bool``: called in the loop's read
    callback, it answers and returns True, or returns False having sent
    nothing (then :meth:`run` runs); ``now`` is None when there is no such
    part."""

    now: Callable[[object], bool] | None = None

    async def run(self, pkt) -> None:
        """Carry out ``pkt`` and answer it."""
        raise NotImplementedError


class DeviceCommands:
    """The steps of the commands that change devices: their ids checked,
    devices switched on and off for the control application."""

    def __init__(self, port: RobotPort, answers: Answers, calls: RobotCalls, ca: CaState):
        self.port = port
        self.answers = answers
        self.calls = calls
        self.ca = ca

    def ids(self, base: int, device_class: str, pkt) -> list[int] | None:
        """The ids of a command that changes the robot (a guest was refused
        before); None when an id is invalid (then answered: INVALID_ID)."""
        ids = [i for i, _ in pkt.items]
        if self.ca.invalid(device_class, ids):
            self.answers.finish(base, CStRpStatus.INVALID_ID, pkt.rq_ack,
                                f"no {device_class} among ids {sorted(set(ids))}")
            return None
        return ids

    async def activate(self, base: int, cls: str, pkt) -> None:
        """Switch the packet's devices on or off for the control application.
        Motors follow in the hardware; a sensor is switched on in the hardware
        when activated and keeps running there when deactivated (the ROS side
        still reads it; only the CA's view says off). What the hardware had
        before is restored when the session ends."""
        ids = [i for i, _ in pkt.items]
        flags = [bool(d) for _, d in pkt.items]
        hw = list(zip(ids, flags)) if cls in MOTOR_CLASSES else [(i, f) for i, f in
                                                                 zip(ids, flags) if f]
        if hw:
            await self.ca.remember_hw(cls, [i for i, _ in hw])
            res = await self.calls.acked_call(self.port.activate(cls, [i for i, _ in hw],
                                                                 [f for _, f in hw]), pkt.rq_ack)
        else:
            res = Result(Result.OK, "view only")
        if res.ok:
            on = self.ca.activated.setdefault(cls, set())
            for i, f in zip(ids, flags):
                (on.add if f else on.discard)(i)
        self.answers.finish_result(base, res, pkt.rq_ack)


class Ignore(Handler):
    """An unsolicited reply or acknowledgement (CStRp, CCnAc): dropped."""

    def __init__(self, log: logging.Logger, who: Callable[[], str]):
        self.log = log
        self.who = who

    async def run(self, pkt) -> None:
        """Log it at debug level; nothing is answered."""
        self.log.debug("RCI client %s: ignoring unsolicited %s", self.who(), type(pkt).__name__)


class StatusInquiry(Handler):
    """CStIq: the status of the last command of a code (BUSY while the
    steering homes), NO_SUPPORT for a code no status is kept of."""

    def __init__(self, out: RciTransport, answers: Answers, homing: Homing):
        self.out = out
        self.answers = answers
        self.homing = homing

    async def run(self, pkt: CStIq) -> None:
        """Send CStRp (and CCnAc after it when asked)."""
        base = pkt.control_id & ~FLAGS
        if base in tracked_codes():      # CStIq itself: never stored, so IDLE
            if base == RciCode.CStMt and self.homing.now():
                st = CStRpStatus.BUSY
            else:
                st = self.answers.status.get(base, CStRpStatus.IDLE)
        else:
            st = CStRpStatus.NO_SUPPORT
        # CStRp carries the base code (DESIGN 3, PROTOCOL 3.3), like CCnAc
        self.out.send(CStRp(base, st))
        if pkt.rq_ack:
            # like every other inquiry: asked-for acknowledgement after the reply
            self.out.send(CCnAc(RciCode.CStIq))


class BaseTimeInquiry(Handler):
    """CBsTmIq: the session's base time."""

    def __init__(self, out: RciTransport, ca: CaState):
        self.out = out
        self.ca = ca

    async def run(self, pkt: CBsTmIq) -> None:
        """Send CBsTm (and CCnAc when asked)."""
        self.out.send(CBsTm(Timeval.from_ns(self.ca.base_ns)))
        if pkt.rq_ack:
            self.out.send(CCnAc(RciCode.CBsTmIq))


class Reset(Handler):
    """CRs: the homing cancelled, every device switched off (the sensors the
    ROS side had on run again for it), the CA's view all off."""

    def __init__(self, port: RobotPort, answers: Answers, calls: RobotCalls, ca: CaState,
                 homing: Homing, stopper):
        self.port = port
        self.answers = answers
        self.calls = calls
        self.ca = ca
        self.homing = homing
        #: retries refused safety stops across sessions (None: none)
        self.stopper = stopper

    async def run(self, pkt: CRs) -> None:
        """Reset the robot; the status is the reset's (or a failed re-activation's)."""
        await self.homing.cancel()
        if self.stopper is not None:
            await self.stopper.claim_all()
        ca, calls = self.ca, self.calls
        # every registered kind (bsal_ros.kinds), a plugin's too
        classes = device_classes()
        for cls in classes:
            await ca.remember_hw(cls, sorted(self.port.device_ids(cls)))
        res = await calls.acked_call(self.port.reset(), True)
        if res.ok:
            ca.activated.clear()
            ca.running.clear()
            for cls in (c for c in classes if not kind(c).motor):
                on = sorted(i for i, o in ca.hw_orig.get(cls, {}).items() if o)
                if on:
                    r2 = await calls.acked_call(self.port.activate(cls, on, [True] * len(on)),
                                                True)
                    if not r2.ok:
                        res = r2
        self.answers.finish_result(RciCode.CRs, res, pkt.rq_ack)


class Forward(Handler):
    """A command that only forwards its items: its declaration's first port
    method gets ``(sub_code, items)`` and answers with a Result, which
    becomes the command's status (INVALID_ID, ABORT ...; CCnAc or CStRp
    when acknowledgement was asked)."""

    def __init__(self, port: RobotPort, answers: Answers, calls: RobotCalls):
        self.port = port
        self.answers = answers
        self.calls = calls

    async def run(self, pkt) -> None:
        """Call the port method and answer with its result."""
        spec = command_of(type(pkt))
        method = getattr(self.port, spec.port_methods[0])
        res = await self.calls.acked_call(method(pkt.sub_code, list(pkt.items)), pkt.rq_ack)
        self.answers.finish_result(spec.code, res, pkt.rq_ack)
