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

"""What every RCI command handler shares, and the session-wide commands:
Status Inquiry, Reset and Base Time Inquiry (seed 001 4.6.2-4.6.7).

A mix-in of :class:`~bsal_ros.rci.session.RciSession`; it reads and writes the
session's state.
"""

from __future__ import annotations

import asyncio
import logging
from operator import is_
import time
from typing import Awaitable, NamedTuple, Sequence

from .ca_view import CaView
from .port import PortUnavailable
from .transport import SessionEnd
from ..core.device_classes import MOTOR_CLASSES
from ..core.device_state import DeviceState
from ..core.result import Result
from ..kinds import device_classes, kind
from ..protocol.constants import CStRpStatus, RciCode, TermCode
from ..protocol.rci import CBsTm, CBsTmIq, CCnAc, CGtMtIq, CGtSnIq, CODE_OF, CRs, CStIq, CStRp
from ..protocol.rci_packets import FLAGS
from ..protocol.rci_registry import command_of, tracked_codes
from ..protocol.values import Statval, Timeval

# The commands whose status a CStIq reports (001 4.6.x "status inquiry"
# notes) are those declared ``tracked`` (bsal_ros/protocol/rci_commands.py).

_RESULT_STATUS = {Result.OK: CStRpStatus.IDLE, Result.INVALID_ID: CStRpStatus.INVALID_ID,
                  Result.NOT_SUPPORTED: CStRpStatus.NO_SUPPORT}


#: s between two log lines of one kind of refusal (the first is logged at once)
REFUSAL_LOG_EVERY_S = 10.0


class RefusalLog:
    """Which refusals to log: the first of a kind (command, status, reason)
    at once, the same again at most every :data:`REFUSAL_LOG_EVERY_S` with
    how many were not logged meanwhile, so a CA polling a refused command
    does not flood the log."""

    __slots__ = ("_last",)
    #: kinds remembered (all forgotten when full)
    SIZE = 64

    def __init__(self):
        self._last: dict = {}

    def note(self, kind: tuple, now: float) -> int | None:
        """None: not logged now; else how many of this kind were not logged
        since its last line."""
        hit = self._last.get(kind)
        if hit is not None and now - hit[0] < REFUSAL_LOG_EVERY_S:
            hit[1] += 1
            return None
        if hit is None and len(self._last) >= self.SIZE:
            self._last.clear()
        self._last[kind] = [now, 0]
        return 0 if hit is None else hit[1]


def code_name(base: int) -> str:
    """The book's name of an RCI code (its hex value when unknown)."""
    try:
        return RciCode(base).name
    except ValueError:
        return f"0x{base:04x}"


def answers_at_once(name: str):
    """Mark an async handler whose command can often be answered without
    waiting: the session method ``name`` answers it and returns True, or
    returns False having sent nothing (the handler then runs). The session
    calls it in the loop's read callback (:meth:`RciTransport.answer_at_once
    <bsal_ros.rci.transport.RciTransport.answer_at_once>`); a handler
    registered in its place has no such part unless it declares one."""
    def mark(handler):
        handler.at_once = name
        return handler
    return mark


def status_of(result: Result) -> CStRpStatus:
    """Port result -> CStRp status: refusals, faults, busy, bad requests = ABORT."""
    return _RESULT_STATUS.get(result.code, CStRpStatus.ABORT)


class Reply(NamedTuple):
    """An inquiry's reply as sent: its bytes, "data" or "status", and the
    DATA item of each state (None where there was none)."""

    encoded: bytes
    what: str
    data: Sequence | None


class Replies:
    """The last reply to each inquiry, sent again while the request, the
    state objects (the port's cache hands out the same object until a newer
    reading replaces it) and the CA's view are the same: a control
    application polling at kHz rates asks for one reading hundreds of times,
    and building and encoding the reply was a third of the answer's time in
    the gateway's loop (issue 31)."""

    __slots__ = ("_last",)
    #: requests remembered; a CA asks a handful of different ones
    SIZE = 64

    def __init__(self):
        self._last: dict = {}

    def get(self, request: tuple, states: Sequence, view: tuple) -> Reply | None:
        """The reply kept for ``request`` if made from these very state
        objects and this view, else None."""
        hit = self._last.get(request)
        if hit is None or hit[1] != view:
            return None
        old = hit[0]
        if len(old) != len(states) or not all(map(is_, old, states)):
            return None
        return hit[2]

    def put(self, request: tuple, states: Sequence, view: tuple, reply: Reply) -> None:
        """Keep ``reply`` for ``request`` (all forgotten when full)."""
        if len(self._last) >= self.SIZE and request not in self._last:
            self._last.clear()
        self._last[request] = (list(states), view, reply)


class BaseHandlers:
    """Shared steps of the handlers, and the CStIq, CRs and CBsTmIq handlers."""

    # ------------------------------------------------------------ answering
    def _guard_write(self, spec) -> None:
        """A guest may not send commands that change the robot (declared
        ``writes``): CSvTm ACCESS. The session checks it before the handler."""
        if spec.writes and self.user.read_only:
            raise SessionEnd(f"guest sent {spec.name}, a command it may not use",
                             TermCode.ACCESS, logging.WARNING)

    def _write_ids(self, base: int, device_class: str, pkt) -> list[int] | None:
        """The ids of a command that changes the robot (the guest was refused
        before); None when an id is invalid (then answered: INVALID_ID)."""
        ids = [i for i, _ in pkt.items]
        if self._invalid(device_class, ids):
            self._finish_command(base, CStRpStatus.INVALID_ID, pkt.rq_ack,
                                 f"no {device_class} among ids {sorted(set(ids))}")
            return None
        return ids

    def _inquiry_ids(self, base: int, device_class: str, pkt) -> list[int] | None:
        """The ids of an inquiry; None when an id is invalid (then answered:
        CStRp INVALID_ID)."""
        ids = [i for i, _ in pkt.items]
        if self._invalid(device_class, ids):
            self._inquiry_failed(base, CStRpStatus.INVALID_ID,
                                 f"no {device_class} among ids {sorted(set(ids))}")
            return None
        return ids

    def _finish_command(self, base: int, status: CStRpStatus, rq_ack: bool,
                        why: str = "") -> None:
        """Remember a command's status; acknowledge it when asked (CCnAc or
        CStRp); a refusal is logged with ``why`` (:meth:`_log_refusal`)."""
        self._status[base] = status
        if status not in (CStRpStatus.IDLE, CStRpStatus.BUSY):
            self._log_refusal(base, status, why)
        if rq_ack:
            self.transport.send(CCnAc(base) if status == CStRpStatus.IDLE
                                else CStRp(base, status))

    def _finish_result(self, base: int, res: Result, rq_ack: bool) -> None:
        """:meth:`_finish_command` with the status and reason of a port's result."""
        self._finish_command(base, status_of(res), rq_ack, res.message)

    def _inquiry_failed(self, base: int, status: CStRpStatus, why: str = "") -> None:
        """An inquiry that cannot be answered gets a CStRp instead of its reply."""
        self._status[base] = status
        self._log_refusal(base, status, why)
        self.transport.send(CStRp(base, status))

    def _reply(self, base: int, reply: Reply, device_class: str,
               states: Sequence[DeviceState], activated: frozenset, rq_ack: bool) -> None:
        """Send an inquiry's reply (and CCnAc when asked); tell the port what
        the control application now knows, built when the port reads it."""
        self.transport.send_encoded(reply.encoded)
        self._status[base] = CStRpStatus.IDLE
        if rq_ack:
            self.transport.send(CCnAc(base))
        self.port.delivered(device_class, CaView(states, activated, reply.data), reply.what)

    def _log_refusal(self, base: int, status: CStRpStatus, why: str) -> None:
        """One line saying why a command or inquiry was refused, not one per
        packet (:class:`RefusalLog`)."""
        why = why or "no reason given"
        skipped = self._refusals.note((base, status, why), time.monotonic())
        if skipped is None:
            return
        more = (f" ({skipped} more like it in the last {REFUSAL_LOG_EVERY_S:.0f} s)"
                if skipped else "")
        self.log.warning("RCI client %s (%s): %s answered %s: %s%s", self.peer,
                         self.user.name if self.user else "-", code_name(base),
                         CStRpStatus(status).name, why, more)

    def _view(self, device_class: str) -> tuple:
        """What an inquiry's reply depends on besides the request and the
        states: the devices of the class this CA activated, the base times."""
        return (frozenset(self._activated.get(device_class, ())), self._base_ns,
                self._hw_base_ns)

    def _ca_on(self, device_class: str, dev_id: int) -> bool:
        """On for this control application: it activated the device in this
        session (every device starts deactivated for a CA; docs/INTERFACES.md)."""
        return dev_id in self._activated.get(device_class, ())

    def _invalid(self, device_class: str, ids) -> bool:
        """True when any id names no device of the class."""
        return not self.port.device_ids(device_class).issuperset(ids)

    def _statval(self, state: DeviceState) -> int:
        """statval of a state for this control application: the on-bit from
        its own view, the time against the session's base time. When that is
        the hardware node's (always, once its ``base_time`` is known) the
        hardware's own milliseconds are sent unchanged, so a reading carries
        the same base + ms on RCI, RDI and its ROS stamp."""
        on = self._ca_on(state.device_class, state.id)
        if self._base_ns == self._hw_base_ns and state.stamp is not None:
            return (state.statval & ~1) | int(on)
        stamp_ns = 0 if state.stamp is None else round(state.stamp * 1e9)
        ms = (stamp_ns - self._base_ns) // 1_000_000
        return Statval(on, state.up, state.ok, ms).pack()

    # -------------------------------------------------------- calling the port
    async def _call(self, coro: Awaitable[Result]) -> Result:
        """Run a port command; PortUnavailable -> ABORT, or CSvTm ERROR when the
        robot side has been gone longer than hardware_gone_s."""
        try:
            res = await coro
        except PortUnavailable as exc:     # logged by the command's refusal
            self._robot_unreachable(exc)
            return Result(Result.HARDWARE_FAULT, f"robot not answering: {exc}")
        self._port_down_since = None
        return res

    async def _acked_call(self, coro: Awaitable[Result], rq_ack: bool) -> Result:
        """:meth:`_call`, counted as an acknowledged command pending meanwhile
        (the silence watchdog waits for it)."""
        self._ack_pending += rq_ack
        try:
            return await self._call(coro)
        finally:
            self._ack_pending -= rq_ack

    # ------------------------------------------------------------ inquiries
    def _inquire_now(self, base: int, device_class: str, pkt, build) -> bool:
        """An inquiry's at-once part: refuse invalid ids, or answer from the
        port's cache (:meth:`_answer_inquiry`); False, having sent nothing,
        when the states must be fetched (:meth:`_inquire_fetched`)."""
        ids = self._inquiry_ids(base, device_class, pkt)
        if ids is None:
            return True
        states = self.port.cached(device_class, ids)
        if states is None:
            return False
        self._answer_inquiry(base, device_class, pkt, states, build)
        return True

    async def _inquire_fetched(self, base: int, device_class: str, pkt, build) -> None:
        """Answer an inquiry from states fetched from the robot side; CStRp
        ABORT when it does not answer."""
        try:
            states = await self.port.fetch(device_class, [i for i, _ in pkt.items])
        except PortUnavailable as exc:
            self._robot_unreachable(exc)
            self._inquiry_failed(base, CStRpStatus.ABORT, f"robot not answering: {exc}")
            return
        self._port_down_since = None
        self._answer_inquiry(base, device_class, pkt, states, build)

    def _answer_inquiry(self, base: int, device_class: str, pkt, states, build) -> None:
        """Send the reply to ``pkt`` from ``states``: the kept one while the
        request, the state objects and the CA's view are the same (:class:`Replies`),
        else ``build(pkt, states)`` -> (reply packet, "data"/"status", DATA
        item per state or None), or None when ``build`` answered otherwise."""
        request = (base, pkt.sub_code, pkt.form, tuple(pkt.items))
        view = self._view(device_class)
        reply = self._replies.get(request, states, view)
        if reply is None:
            built = build(pkt, states)
            if built is None:
                return
            packet, what, data = built
            reply = Reply(self.transport.encode(packet), what, data)
            self._replies.put(request, states, view, reply)
        self._reply(base, reply, device_class, states, view[0], pkt.rq_ack)

    def _robot_unreachable(self, exc: Exception) -> None:
        """Note a failed call; end the session (CSvTm ERROR) once the robot
        side has been gone longer than hardware_gone_s (0: never)."""
        now = time.monotonic()
        if self._port_down_since is None:
            self._port_down_since = now
        gone_s = self.cfg.hardware_gone_s    # 0: never end the session for it
        if gone_s and now - self._port_down_since > gone_s:
            raise SessionEnd(f"robot unreachable for more than {gone_s:.1f} s "
                             f"({exc})", TermCode.ERROR, logging.ERROR)

    def _port_failed(self, pkt, exc: PortUnavailable) -> None:
        """A handler met an unreachable robot: the command is ABORTed."""
        self._robot_unreachable(exc)
        base = int(CODE_OF[type(pkt)])
        self._status[base] = CStRpStatus.ABORT
        self._log_refusal(base, CStRpStatus.ABORT, f"robot not answering: {exc}")
        if isinstance(pkt, (CGtMtIq, CGtSnIq)) or getattr(pkt, "rq_ack", False):
            self.transport.send(CStRp(base, CStRpStatus.ABORT))

    async def _remember_hw(self, cls: str, ids) -> None:
        """Note the hardware's on-state of ``ids`` before this session first
        changes it (restored when the session ends)."""
        orig = self._hw_orig.setdefault(cls, {})
        new = [i for i in ids if i not in orig]
        if not new:
            return
        states = self.port.cached(cls, new)
        if states is None:
            states = await self.port.fetch(cls, new)
        for i, st in zip(new, states):
            orig[i] = bool(st.on)

    async def _activate(self, base: int, cls: str, pkt) -> None:
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
            await self._remember_hw(cls, [i for i, _ in hw])
            res = await self._acked_call(self.port.activate(cls, [i for i, _ in hw],
                                                            [f for _, f in hw]), pkt.rq_ack)
        else:
            res = Result(Result.OK, "view only")
        if res.ok:
            on = self._activated.setdefault(cls, set())
            for i, f in zip(ids, flags):
                (on.add if f else on.discard)(i)
        self._finish_result(base, res, pkt.rq_ack)

    # ------------------------------------------------------------- handlers
    async def _h_ignore(self, pkt) -> None:
        self.log.debug("RCI client %s: ignoring unsolicited %s", self.peer, type(pkt).__name__)

    async def _h_cstiq(self, pkt: CStIq) -> None:
        cid = pkt.control_id
        base = cid & ~FLAGS
        if base in tracked_codes():      # CStIq itself: never stored, so IDLE
            if base == RciCode.CStMt and self._homing_now():
                st = CStRpStatus.BUSY
            else:
                st = self._status.get(base, CStRpStatus.IDLE)
        else:
            st = CStRpStatus.NO_SUPPORT
        # CStRp carries the base code (DESIGN 3, PROTOCOL 3.3), like CCnAc
        self.transport.send(CStRp(base, st))
        if pkt.rq_ack:
            # like every other inquiry: asked-for acknowledgement after the reply
            self.transport.send(CCnAc(RciCode.CStIq))

    async def _h_forward(self, pkt) -> None:
        """A command that only forwards its items: its spec's first port
        method gets ``(sub_code, items)`` and answers with a Result, which
        becomes the command's status (INVALID_ID, ABORT ...; CCnAc or CStRp
        when acknowledgement was asked)."""
        spec = command_of(type(pkt))
        method = getattr(self.port, spec.port_methods[0])
        res = await self._acked_call(method(pkt.sub_code, list(pkt.items)), pkt.rq_ack)
        self._finish_result(spec.code, res, pkt.rq_ack)

    async def _h_cbstmiq(self, pkt: CBsTmIq) -> None:
        self.transport.send(CBsTm(Timeval.from_ns(self._base_ns)))
        if pkt.rq_ack:
            self.transport.send(CCnAc(RciCode.CBsTmIq))

    async def _h_crs(self, pkt: CRs) -> None:
        await self._cancel_homing()
        if self.stopper is not None:
            await self.stopper.claim_all()
        # every registered kind (bsal_ros.kinds), a plugin's too
        classes = device_classes()
        for cls in classes:
            await self._remember_hw(cls, sorted(self.port.device_ids(cls)))
        res = await self._acked_call(self.port.reset(), True)
        if res.ok:
            self._activated.clear()
            self._running.clear()
            # the reset switched every device off; the sensors the ROS side
            # had on run again for it (the CA's view: all off)
            for cls in (c for c in classes if not kind(c).motor):
                on = sorted(i for i, o in self._hw_orig.get(cls, {}).items() if o)
                if on:
                    r2 = await self._acked_call(self.port.activate(cls, on, [True] * len(on)),
                                                True)
                    if not r2.ok:
                        res = r2
        self._finish_result(RciCode.CRs, res, pkt.rq_ack)

    async def _cancel_homing(self) -> None:
        task = self._home_task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def _homing_now(self) -> bool:
        return self._home_task is not None and not self._home_task.done()
