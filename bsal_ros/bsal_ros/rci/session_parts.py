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

"""The parts of one RCI session that its command handlers share, each passed
to the handlers that use it (:mod:`bsal_ros.rci.handlers`):

* :class:`Answers`: the status of each command (what CStIq reports), its
  acknowledgement or refusal, and the one log line per kind of refusal;
* :class:`RobotCalls`: calls to the robot port, counting the acknowledged
  ones pending, and how long the robot side has been unreachable;
* :class:`CaState`: what the control application activated and set
  running, what the hardware had before (restored at the end), the base time;
* :class:`Homing`: the steering homing running in the background;
* :class:`BaseTime`: the base time the statvals count from (CBsTm).

All of them run on the session's event loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Awaitable, Callable

from .port import PortUnavailable, RobotPort
from .settings import SessionConfig
from .transport import RciTransport, SessionEnd
from ..core.device_state import DeviceState
from ..core.result import Result
from ..protocol.constants import CStRpStatus, RciCode, TermCode
from ..protocol.rci import CBsTm, CCnAc, CStRp
from ..protocol.values import Statval, Timeval

_RESULT_STATUS = {Result.OK: CStRpStatus.IDLE, Result.INVALID_ID: CStRpStatus.INVALID_ID,
                  Result.NOT_SUPPORTED: CStRpStatus.NO_SUPPORT}

#: s between two log lines of one kind of refusal (the first is logged at once)
REFUSAL_LOG_EVERY_S = 10.0


def status_of(result: Result) -> CStRpStatus:
    """Port result -> CStRp status: refusals, faults, busy, bad requests = ABORT."""
    return _RESULT_STATUS.get(result.code, CStRpStatus.ABORT)


def code_name(base: int) -> str:
    """The book's name of an RCI code (its hex value when unknown)."""
    try:
        return RciCode(base).name
    except ValueError:
        return f"0x{base:04x}"


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


class Answers:
    """Each command's status and its answer: CCnAc, or CStRp with the
    status, when acknowledgement was asked; a refusal logged with its reason."""

    def __init__(self, out: RciTransport, log: logging.Logger, who: Callable[[], str]):
        #: the session's socket side (``send``)
        self.out = out
        self.log = log
        #: "peer (user)" for log lines
        self.who = who
        #: base code -> the status CStIq reports for it
        self.status: dict[int, CStRpStatus] = {}
        self._refusals = RefusalLog()

    def finish(self, base: int, status: CStRpStatus, rq_ack: bool, why: str = "") -> None:
        """Remember a command's status; acknowledge it when asked (CCnAc or
        CStRp); a refusal is logged with ``why`` (:meth:`log_refusal`)."""
        self.status[base] = status
        if status not in (CStRpStatus.IDLE, CStRpStatus.BUSY):
            self.log_refusal(base, status, why)
        if rq_ack:
            self.out.send(CCnAc(base) if status == CStRpStatus.IDLE else CStRp(base, status))

    def finish_result(self, base: int, res: Result, rq_ack: bool) -> None:
        """:meth:`finish` with the status and reason of a port's result."""
        self.finish(base, status_of(res), rq_ack, res.message)

    def inquiry_failed(self, base: int, status: CStRpStatus, why: str = "") -> None:
        """An inquiry that cannot be answered gets a CStRp instead of its reply."""
        self.status[base] = status
        self.log_refusal(base, status, why)
        self.out.send(CStRp(base, status))

    def log_refusal(self, base: int, status: CStRpStatus, why: str) -> None:
        """One line saying why a command or inquiry was refused, not one per
        packet (:class:`RefusalLog`)."""
        why = why or "no reason given"
        skipped = self._refusals.note((base, status, why), time.monotonic())
        if skipped is None:
            return
        more = (f" ({skipped} more like it in the last {REFUSAL_LOG_EVERY_S:.0f} s)"
                if skipped else "")
        self.log.warning("RCI client %s: %s answered %s: %s%s", self.who(), code_name(base),
                         CStRpStatus(status).name, why, more)


class RobotCalls:
    """Calls to the robot port: an unreachable robot is an ABORT, or the
    end of the session (CSvTm ERROR) once it has been gone longer than
    ``hardware_gone_s`` (0: never)."""

    def __init__(self, port: RobotPort, cfg: SessionConfig):
        self.port = port
        self.cfg = cfg
        #: acknowledged commands waiting for the robot (the silence watchdog waits)
        self.ack_pending = 0
        #: monotonic time of the first failed call of an outage (None: reachable)
        self.down_since: float | None = None

    async def call(self, coro: Awaitable[Result]) -> Result:
        """Run a port command; PortUnavailable -> a HARDWARE_FAULT result, or
        SessionEnd when the robot side has been gone too long."""
        try:
            res = await coro
        except PortUnavailable as exc:     # logged by the command's refusal
            self.unreachable(exc)
            return Result(Result.HARDWARE_FAULT, f"robot not answering: {exc}")
        self.down_since = None
        return res

    async def acked_call(self, coro: Awaitable[Result], rq_ack: bool) -> Result:
        """:meth:`call`, counted as an acknowledged command pending meanwhile."""
        self.ack_pending += rq_ack
        try:
            return await self.call(coro)
        finally:
            self.ack_pending -= rq_ack

    def unreachable(self, exc: Exception) -> None:
        """Note a failed call; raise SessionEnd (CSvTm ERROR) once the robot
        side has been gone longer than hardware_gone_s (0: never)."""
        now = time.monotonic()
        if self.down_since is None:
            self.down_since = now
        gone_s = self.cfg.hardware_gone_s
        if gone_s and now - self.down_since > gone_s:
            raise SessionEnd(f"robot unreachable for more than {gone_s:.1f} s "
                             f"({exc})", TermCode.ERROR, logging.ERROR)

    def reachable(self) -> None:
        """A call went through."""
        self.down_since = None


class CaState:
    """The control application's side of the robot in this session: the
    devices it activated (every device starts deactivated for it), the
    motors it set running, the hardware's on-state before it first changed
    a device, and the base time its statvals count from."""

    def __init__(self, port: RobotPort):
        self.port = port
        #: device class -> ids this CA activated
        self.activated: dict[str, set[int]] = {}
        #: device class -> {id: on in the hardware before this session changed it}
        self.hw_orig: dict[str, dict[int, bool]] = {}
        #: device class -> motor ids this session set to a non-zero speed
        self.running: dict[str, set[int]] = {}
        #: the session's base time (ns since the epoch)
        self.base_ns = 0
        #: the hardware node's base time this session last took; None: unknown
        self.hw_base_ns: int | None = None

    def ca_on(self, device_class: str, dev_id: int) -> bool:
        """On for this control application: it activated the device."""
        return dev_id in self.activated.get(device_class, ())

    def invalid(self, device_class: str, ids) -> bool:
        """True when any id names no device of the class."""
        return not self.port.device_ids(device_class).issuperset(ids)

    def view(self, device_class: str) -> tuple:
        """What an inquiry's reply depends on besides the request and the
        states: the devices of the class this CA activated, the base times."""
        return (frozenset(self.activated.get(device_class, ())), self.base_ns, self.hw_base_ns)

    def statval(self, state: DeviceState) -> int:
        """statval of a state for this control application: the on-bit from
        its own view, the time against the session's base time. When that is
        the hardware node's (always, once its ``base_time`` is known) the
        hardware's own milliseconds are sent unchanged, so a reading carries
        the same base + ms on RCI, RDI and its ROS stamp."""
        on = self.ca_on(state.device_class, state.id)
        if self.base_ns == self.hw_base_ns and state.stamp is not None:
            return (state.statval & ~1) | int(on)
        stamp_ns = 0 if state.stamp is None else round(state.stamp * 1e9)
        ms = (stamp_ns - self.base_ns) // 1_000_000
        return Statval(on, state.up, state.ok, ms).pack()

    async def remember_hw(self, cls: str, ids) -> None:
        """Note the hardware's on-state of ``ids`` before this session first
        changes it (restored when the session ends)."""
        orig = self.hw_orig.setdefault(cls, {})
        new = [i for i in ids if i not in orig]
        if not new:
            return
        states = self.port.cached(cls, new)
        if states is None:
            states = await self.port.fetch(cls, new)
        for i, st in zip(new, states):
            orig[i] = bool(st.on)

    def set_running(self, cls: str, settings) -> None:
        """Note which motors of ``cls`` now run (a non-zero speed) for the
        silence watchdog."""
        running = self.running.setdefault(cls, set())
        for s in settings:
            (running.add if s.value else running.discard)(s.id)


class Homing:
    """The steering homing, the one command that runs in the background."""

    def __init__(self):
        self.task: asyncio.Task | None = None
        #: the motors being homed
        self.ids: set[int] = set()

    def now(self) -> bool:
        """A homing is running."""
        return self.task is not None and not self.task.done()

    async def cancel(self) -> None:
        """Cancel a running homing and wait until it has ended."""
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


class BaseTime:
    """The session's base time (001 4.6.15-16): the hardware node's when the
    port knows it (one base time for RCI, RDI and the ROS stamps), else our
    own (a port without one, e.g. the tests' fake robot), moved before its
    statval window is used up; CBsTm goes out whenever it moves."""

    def __init__(self, port: RobotPort, ca: CaState, out: RciTransport, cfg: SessionConfig):
        self.port = port
        #: holds the base time itself (the statvals read it there)
        self.ca = ca
        self.out = out
        self.cfg = cfg
        #: when our own base time moves on (ns; None: the hardware node's is used)
        self._move_at_ns: int | None = 0

    def take(self) -> None:
        """Take the control process's base time now and send it (CBsTm)."""
        hw = self.port.base_time_ns()
        now = time.time_ns()
        self.ca.hw_base_ns = hw
        if hw is not None:
            self.ca.base_ns = hw
            self._move_at_ns = None
            self.out.send(CBsTm(Timeval.from_ns(hw)))
            return
        self.ca.base_ns = now
        span = max(int(self.cfg.base_time_span_ms), 1000)
        # move on with a margin (a tenth of the span, at most 10 minutes)
        margin = min(span // 10, 600_000)
        self._move_at_ns = now + (span - margin) * 1_000_000
        self.out.send(CBsTm(Timeval.from_ns(now)))

    def check(self) -> None:
        """Take it again when it moved (4.6.16: CBsTm whenever it is
        updated): the hardware node's moved, or our own window is used up."""
        hw = self.port.base_time_ns()
        if hw is not None:
            if hw != self.ca.base_ns:
                self.take()
        elif self._move_at_ns is None or time.time_ns() >= self._move_at_ns:
            self.take()
