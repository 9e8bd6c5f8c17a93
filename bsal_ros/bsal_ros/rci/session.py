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

"""One RCI control-application session: the state machine of 001 4.5 and 4.6.

Pure asyncio + the protocol library; the robot is reached through a
:class:`~bsal_ros.rci.port.RobotPort`. One session runs per TCP connection;
:class:`~bsal_ros.rci.server.RciServer` makes sure there is only one at a time.

Life of a session::

    login:         CA IIId -> login throttle wait -> auth (USER / AUTHENTICATE)
    init phase:    our IIId, ICaIq -> ICaRp, IInCp <-> IInCp (ours first after
                   init_quiet_s of silence; held until the robot is known,
                   at most hardware_wait_s, then IInCp + CSvTm ERROR), CBsTm
                   (both: :mod:`.handshake`)
    control phase: every packet of 001 4.6 to its code's handler object
                   (:mod:`.handlers`: one table, code -> handler)
    silence:       after watchdog_s without a packet the motors the session set
                   running are stopped (logged once, CStIq(CStMt) ABORT,
                   "silence" on the port's session events); the session
                   stays open
    end:           EOF, idle limit if configured (CSvTm NOACK), bad input (CSvTm ERROR),
                   guest writing (CSvTm ACCESS), robot gone (CSvTm ERROR)
                   -> homing cancelled, motors stopped, what the CA
                   activated deactivated, socket closed.

Bytes in and out go through :class:`~bsal_ros.rci.transport.RciTransport`;
the login and initialization phase is :class:`~bsal_ros.rci.handshake.Handshake`;
the handlers share the session's parts (:mod:`.session_parts`), each given
the ones it uses when it is made. Commands are executed in the order
received; only the steering homing runs in the background.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from typing import Callable

from .handlers import check_handlers, HANDLERS, session_handlers, SessionParts
from .handlers_base import DeviceCommands
from .handshake import Handshake
from .inquiries import Inquiries
from .port import PortUnavailable, RobotPort
from .session_parts import Answers, BaseTime, CaState, Homing, RobotCalls
from .settings import SessionConfig
from .stream import PacketReader, PacketWriter
from .transport import RciTransport, SessionEnd
from .users import Users
from ..core.device_classes import MOTOR_CLASSES
from ..protocol.constants import CStRpStatus, RciCode, TermCode
from ..protocol.rci import CGtMtIq, CGtSnIq, CODE_OF, CStRp
from ..protocol.rci_registry import commands

log = logging.getLogger("bsal_ros.rci")


class RciSession:
    """One control application, from accept to close."""

    def __init__(self, port: RobotPort, users: Users, reader: PacketReader,
                 writer: PacketWriter, config: SessionConfig | None = None,
                 logger: logging.Logger | None = None, *, stopper=None, throttle=None,
                 throttle_key: str = "", sleep: Callable = asyncio.sleep,
                 on_released: Callable[[], None] | None = None):
        """``stopper``: retries refused safety stops across sessions;
        ``throttle``/``throttle_key``: the login throttle and this peer's key
        in it; ``sleep``: how the throttle's wait is slept; ``on_released``:
        called once the robot is safe, before the socket's lingering close.
        Raises RciCommandError when a command the session runs has no
        handler, or names a port method ``port`` lacks."""
        check_handlers(commands(), HANDLERS, type(port))
        self.port = port
        self.cfg = config or SessionConfig()
        self.log = logger or log
        self.transport = RciTransport(reader, writer, self.cfg.byteorder)
        self.peer = self.transport.peer
        self.stopper = stopper
        self.on_released = on_released
        self.handshake = Handshake(self.transport, users, port, self.cfg, self.log, throttle,
                                   throttle_key, sleep)
        self.answers = Answers(self.transport, self.log, self._who)
        self.calls = RobotCalls(port, self.cfg)
        self.ca = CaState(port)
        self.homing = Homing()
        parts = SessionParts(
            out=self.transport, port=port, cfg=self.cfg, log=self.log, who=self._who,
            answers=self.answers, calls=self.calls, ca=self.ca, homing=self.homing,
            devices=DeviceCommands(port, self.answers, self.calls, self.ca),
            inquiries=Inquiries(self.transport, port, self.answers, self.calls, self.ca),
            stopper=stopper, force_end=self._force_end)
        #: packet class -> (spec, handler object) of every command the session runs
        self._handlers = session_handlers(parts)
        #: packet class -> (spec, the part of its handler that answers at once)
        self._at_once = {cls: (spec, h.now) for cls, (spec, h) in self._handlers.items()
                         if h.now is not None}
        #: the base time the statvals count from (CBsTm)
        self.base_time = BaseTime(port, self.ca, self.transport, self.cfg)
        self.control_phase = False
        self._silence_task: asyncio.Task | None = None
        #: how often silence stopped this session's motors
        self.silence_stops = 0
        self.end_reason = ""
        #: the session has started to end (safety stop, close)
        self.closing = False
        self._run_task: asyncio.Task | None = None
        self._forced_end: SessionEnd | None = None
        self._busy = False

    @property
    def user(self):
        """Who logged in; None until the login is accepted."""
        return self.handshake.user

    @property
    def term_sent(self) -> int | None:
        """The CSvTm code sent to end the connection (None: none)."""
        return self.transport.term_sent

    def login_notice(self) -> str:
        """``<user> from <address> at <UTC time>``: who logged in, from where and
        since when, as rci/session says it (Brak's page shows it; docs/INTERFACES.md)."""
        at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
        return f"{self.user.name if self.user else ''} from {self.peer} at {at[:-6]}Z"

    def _who(self) -> str:
        """``peer (user)`` for log lines."""
        return f"{self.peer} ({self.user.name if self.user else '-'})"

    async def login(self) -> bool:
        """Identification and authentication (:meth:`Handshake.login`); False:
        refused, answered and closed."""
        ok = await self.handshake.login()
        if not ok:
            self.end_reason = self.handshake.end_reason
        return ok

    # ================================================================ driver
    async def run(self) -> None:
        """Log in (unless done), run the init and control phases, end safely."""
        if self.user is None and not await self.login():
            return
        self._run_task = asyncio.current_task()
        watchdog = asyncio.get_running_loop().create_task(self._watchdog())
        end: SessionEnd | None = None
        try:
            await self.handshake.initialize(lambda: self._forced_end is not None)
            self.control_phase = True
            self.base_time.take()
            self.port.session_event("connected", self.login_notice())
            await self._control_phase()
        except SessionEnd as e:
            end = e
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            end = SessionEnd(f"connection lost ({exc.__class__.__name__})")
        except asyncio.CancelledError:
            if self._forced_end is None:
                end = SessionEnd("gateway shutting down", TermCode.EMERGENCY)
                watchdog.cancel()
                await self._finish(end)
                raise
            end = self._forced_end
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        except Exception as exc:   # never crash the gateway: log and clean up
            self.log.exception("RCI client %s: internal error", self.peer)
            end = SessionEnd(f"internal error: {exc!r}", TermCode.ERROR, logging.ERROR)
        watchdog.cancel()
        await self._finish(end or SessionEnd("closed"))

    def _force_end(self, end: SessionEnd) -> None:
        """End the session from another task (watchdog, homing)."""
        if self._forced_end is None:
            self._forced_end = end
            if self._run_task is not None and not self._run_task.done():
                self._run_task.cancel()

    def closing_soon(self) -> bool:
        """True when the session is ending or its peer has closed (its EOF
        read by the loop, maybe not yet by the session, which may still
        have packets of it to handle)."""
        return self.closing or self.transport.peer_closed or self.transport.closed

    async def _finish(self, end: SessionEnd) -> None:
        self.closing = True
        self.end_reason = end.reason
        self.log.log(end.level, "RCI client %s (%s): session ends: %s%s", self.peer,
                     self.user.name if self.user else "-", end.reason,
                     f"; sent CSvTm {TermCode(end.term).name}" if end.term else "")
        self.transport.send_term(end.term)
        await self._safety_stop()
        self.port.session_event("closed", end.reason)
        if self.on_released is not None:
            self.on_released()        # robot safe: the next client may come in
        await self.transport.close(self.cfg.linger_s)

    async def _safety_stop(self) -> None:
        """Cancel the homing, stop every motor, switch off what the control
        application switched on; refused stops are left to the stopper."""
        stopping, self._silence_task = self._silence_task, None
        if stopping is not None and not stopping.done():
            await asyncio.gather(stopping, return_exceptions=True)
        ca = self.ca
        ca.running.clear()
        task, self.homing.task = self.homing.task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.gather(task, return_exceptions=True)),
                                       2.0)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        # every device back as the hardware had it before this session: what
        # it switched on off again, what it switched off (motors, a reset) on
        orig = ca.hw_orig
        deactivate = {c: sorted(i for i, on in o.items() if not on) for c, o in orig.items()}
        reactivate = {c: sorted(i for i, on in o.items() if on) for c, o in orig.items()}
        deactivate = {c: ids for c, ids in deactivate.items() if ids}
        reactivate = {c: ids for c, ids in reactivate.items() if ids}
        try:
            failed = await asyncio.wait_for(self.port.stop_all(deactivate, reactivate), 5.0)
        except Exception as exc:   # the port promises not to raise; be safe anyway
            self.log.error("RCI client %s: safety stop failed: %r", self.peer, exc)
            failed = set(MOTOR_CLASSES)
        if failed and self.stopper is not None:
            self.stopper.add(failed)
        ca.activated.clear()
        ca.hw_orig.clear()

    async def _watchdog(self) -> None:
        """Silence: stop the motors the session set (once per silence), and
        end the session only past ``idle_limit_s`` when that is set."""
        limits = [x for x in (self.cfg.watchdog_s, self.cfg.idle_limit_s) if x > 0]
        period = max(0.01, min(min(limits, default=1.0) / 4, 0.25))
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(period)
            if not self._busy:
                self._check_base()      # a moved base time goes out at once
            if not self.control_phase or self.calls.ack_pending or self._busy:
                continue
            silent = time.monotonic() - self.transport.last_rx
            idle = self.cfg.idle_limit_s
            if idle > 0 and silent > idle:
                self._force_end(SessionEnd(f"idle limit: silent for more than {idle:.1f} s",
                                           TermCode.NOACK, logging.WARNING))
                return
            if (silent > self.cfg.watchdog_s and any(self.ca.running.values())
                    and (self._silence_task is None or self._silence_task.done())):
                self._silence_task = loop.create_task(self._silence_stop(silent))

    async def _silence_stop(self, silent: float) -> None:
        """Stop every motor class in which this session set a motor running;
        the session stays open (the next command waits for this to finish)."""
        classes = sorted(c for c, ids in self.ca.running.items() if ids)
        self.ca.running.clear()
        failed = set()
        for cls in classes:
            try:
                ok = await asyncio.wait_for(self.port.stop_motors(cls), 5.0)
            except Exception:   # noqa: BLE001 - the port promises not to raise
                ok = False
            if not ok:
                failed.add(cls)
        if failed and self.stopper is not None:
            self.stopper.add(failed)
        # the Set Motor in force was cancelled by the CP: CStIq(CStMt) says so
        self.answers.status[RciCode.CStMt] = CStRpStatus.ABORT
        self.silence_stops += 1
        self.log.warning("RCI client %s (%s): silent for %.1f s (watchdog_s %.1f): motors "
                         "stopped (%s)%s; the session stays open", self.peer,
                         self.user.name if self.user else "-", silent, self.cfg.watchdog_s,
                         ", ".join(classes),
                         f", stop refused for {', '.join(sorted(failed))}" if failed else "")
        self.port.session_event("silence", f"motors stopped after {silent:.1f} s without a "
                                f"packet: {', '.join(classes)}")

    def _check_base(self) -> None:
        """In the control phase: CBsTm when the base time moved."""
        if self.control_phase and not self.transport.ending:
            self.base_time.check()

    # ========================================================= control phase
    def _answer_now(self, pkt) -> bool:
        """In the loop's read callback, while the control phase waits for a
        packet: answer it at once when its handler can (an inquiry the cache
        answers); False: it goes to :meth:`_control_phase` (a command, a
        fetch, a silence stop in flight, answers piling up unread)."""
        entry = self._at_once.get(type(pkt))
        if entry is None or self.closing or self._forced_end is not None:
            return False
        stopping = self._silence_task
        if stopping is not None and not stopping.done():
            return False
        if self.transport.buffered() > self.cfg.max_write_buffer:
            return False
        spec, now = entry
        self._check_base()
        self._guard_write(spec)
        try:
            return now(pkt)
        except PortUnavailable:
            # nothing sent yet (e.g. the device list is not known):
            # the control phase answers it (CStRp ABORT)
            return False

    async def _control_phase(self) -> None:
        handlers = self._handlers       # code -> handler: bsal_ros/rci/handlers.py
        transport = self.transport
        transport.answer_at_once(self._answer_now)
        while True:
            pkt = await transport.next()
            stopping = self._silence_task
            if stopping is not None and not stopping.done():
                # a silence stop in flight must not overwrite this command
                await asyncio.gather(stopping, return_exceptions=True)
            self._check_base()
            entry = handlers.get(type(pkt))
            if entry is None:
                raise SessionEnd(f"bad input: {type(pkt).__name__} in the control phase",
                                 TermCode.ERROR, logging.WARNING)
            spec, handler = entry
            self._guard_write(spec)     # a guest sent a command declared ``writes``
            self._busy = True
            try:
                await handler.run(pkt)
                if transport.buffered() > self.cfg.max_write_buffer:
                    # the CA sends faster than it reads: stop reading it until
                    # it catches up, so our buffer stays bounded
                    await transport.drain(self.cfg.drain_timeout_s)
            except PortUnavailable as exc:     # e.g. device list unknown: robot gone
                self._port_failed(pkt, exc)
            finally:
                self._busy = False
                transport.last_rx = time.monotonic()

    def _guard_write(self, spec) -> None:
        """A guest may not send commands that change the robot (declared
        ``writes``): CSvTm ACCESS, before the handler runs."""
        if spec.writes and self.user.read_only:
            raise SessionEnd(f"guest sent {spec.name}, a command it may not use",
                             TermCode.ACCESS, logging.WARNING)

    def _port_failed(self, pkt, exc: PortUnavailable) -> None:
        """A handler met an unreachable robot: the command is ABORTed."""
        self.calls.unreachable(exc)
        base = int(CODE_OF[type(pkt)])
        self.answers.status[base] = CStRpStatus.ABORT
        self.answers.log_refusal(base, CStRpStatus.ABORT, f"robot not answering: {exc}")
        if isinstance(pkt, (CGtMtIq, CGtSnIq)) or getattr(pkt, "rq_ack", False):
            self.transport.send(CStRp(base, CStRpStatus.ABORT))


# Brak's own commands have handlers, and the port methods they name are
# RobotPort's: a gap fails here, at import (a later registration: when a
# session is built)
check_handlers(commands(), HANDLERS, RobotPort)
