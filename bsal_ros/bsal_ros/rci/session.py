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
    control phase: every packet of 001 4.6 (:mod:`.handlers_base`,
                   :mod:`.handlers_motor`, :mod:`.handlers_sensor`)
    silence:       after watchdog_s without a packet the motors the session set
                   running are stopped (logged once, CStIq(CStMt) ABORT,
                   "silence" on the port's session events); the session
                   stays open
    end:           EOF, idle limit if configured (CSvTm NOACK), bad input (CSvTm ERROR),
                   guest writing (CSvTm ACCESS), robot gone (CSvTm ERROR)
                   -> homing cancelled, motors stopped, what the CA
                   activated deactivated, socket closed.

Bytes in and out go through :class:`~bsal_ros.rci.transport.RciTransport`.
Commands are executed in the order received; only the steering homing runs in
the background.
"""

from __future__ import annotations

import asyncio
import logging
import time

from .commands import check_commands, dispatch_table
from .handlers_base import BaseHandlers, RefusalLog, Replies
from .handlers_motor import MotorHandlers
from .handlers_sensor import DataItems, SensorHandlers
from .handshake import Handshake
from .port import PortUnavailable, RobotPort
from .settings import SessionConfig
from .stream import PacketReader, PacketWriter
from .transport import RciTransport, SessionEnd
from .users import Users
from ..core.device_classes import MOTOR_CLASSES
from ..protocol.constants import (CStRpStatus, RCI_VERSION_MAJOR, RCI_VERSION_MINOR, RciCode,
                                  TermCode)
from ..protocol.rci import CBsTm
from ..protocol.values import Timeval

log = logging.getLogger("bsal_ros.rci")


class RciSession(Handshake, BaseHandlers, MotorHandlers, SensorHandlers):
    """One control application, from accept to close."""

    def __init__(self, port: RobotPort, users: Users, reader: PacketReader,
                 writer: PacketWriter, config: SessionConfig | None = None,
                 logger: logging.Logger | None = None):
        self.port = port
        #: packet class -> (spec, handler): every registered command, its
        #: names resolved against this session and port (RciCommandError if not)
        self._commands = dispatch_table(type(self), type(port))
        #: packet class -> the part of its handler that answers at once
        #: (:func:`~bsal_ros.rci.handlers_base.answers_at_once`)
        self._at_once = {cls: (spec, getattr(type(self), h.at_once))
                         for cls, (spec, h) in self._commands.items() if hasattr(h, "at_once")}
        self.users = users
        self.cfg = config or SessionConfig()
        self.log = logger or log
        self.transport = RciTransport(reader, writer, self.cfg.byteorder)
        self.peer = self.transport.peer
        self.user = None
        self.version = (RCI_VERSION_MAJOR, RCI_VERSION_MINOR)
        self.control_phase = False
        self._ack_pending = 0
        self._status: dict[int, CStRpStatus] = {}
        #: the control application's view: devices it activated this session
        self._activated: dict[str, set[int]] = {}
        #: DATA items converted once per state object (Get Sensor)
        self._data_items = DataItems()
        #: the last reply to each inquiry (Get Sensor, Get Motor)
        self._replies = Replies()
        #: which refusals are logged (one line per kind, not per packet)
        self._refusals = RefusalLog()
        #: hardware on-state of each device before this session first changed it
        self._hw_orig: dict[str, dict[int, bool]] = {}
        self._home_task: asyncio.Task | None = None
        self._homing_ids: set[int] = set()
        self._port_down_since: float | None = None
        #: motor ids per class this session set to a non-zero speed
        self._running: dict[str, set[int]] = {}
        self._silence_task: asyncio.Task | None = None
        #: how often silence stopped this session's motors
        self.silence_stops = 0
        self._base_ns = 0
        #: the hardware node's base time (ns) this session last took; None: unknown
        self._hw_base_ns: int | None = None
        self._rebase_at_ns = 0
        self.end_reason = ""
        #: the session has started to end (safety stop, close)
        self.closing = False
        self.term_sent: int | None = None
        self._run_task: asyncio.Task | None = None
        self._forced_end: SessionEnd | None = None
        self._busy = False
        #: called once the robot is safe, before the socket's lingering close
        self.on_released = None
        #: retries refused safety stops across sessions (set by the server)
        self.stopper = None
        #: login throttle (set by the server) and this peer's key in it
        self.throttle = None
        self.throttle_key = ""
        #: how the throttle's wait is slept (injectable: tests)
        self.sleep = asyncio.sleep
        #: seconds this login waited because of the throttle
        self.throttled_for = 0.0
        self._logged_in = False
        self._init_used = 0.0

    # ================================================================ driver
    async def run(self) -> None:
        """Log in (unless done), run the init and control phases, end safely."""
        if not self._logged_in and not await self.login():
            return
        self._run_task = asyncio.current_task()
        watchdog = asyncio.get_running_loop().create_task(self._watchdog())
        end: SessionEnd | None = None
        try:
            await self._initialize()
            self.port.session_event("connected", self.user.name if self.user else "")
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
        self._send_term(end)
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
        self._running.clear()
        task, self._home_task = self._home_task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.gather(task, return_exceptions=True)),
                                       2.0)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        # every device back as the hardware had it before this session: what
        # it switched on off again, what it switched off (motors, a reset) on
        orig = self._hw_orig
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
        self._activated.clear()
        self._hw_orig.clear()

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
            if not self.control_phase or self._ack_pending or self._busy:
                continue
            silent = time.monotonic() - self.transport.last_rx
            idle = self.cfg.idle_limit_s
            if idle > 0 and silent > idle:
                self._force_end(SessionEnd(f"idle limit: silent for more than {idle:.1f} s",
                                           TermCode.NOACK, logging.WARNING))
                return
            if (silent > self.cfg.watchdog_s and any(self._running.values())
                    and (self._silence_task is None or self._silence_task.done())):
                self._silence_task = loop.create_task(self._silence_stop(silent))

    async def _silence_stop(self, silent: float) -> None:
        """Stop every motor class in which this session set a motor running;
        the session stays open (the next command waits for this to finish)."""
        classes = sorted(c for c, ids in self._running.items() if ids)
        self._running.clear()
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
        self._status[RciCode.CStMt] = CStRpStatus.ABORT
        self.silence_stops += 1
        self.log.warning("RCI client %s (%s): silent for %.1f s (watchdog_s %.1f): motors "
                         "stopped (%s)%s; the session stays open", self.peer,
                         self.user.name if self.user else "-", silent, self.cfg.watchdog_s,
                         ", ".join(classes),
                         f", stop refused for {', '.join(sorted(failed))}" if failed else "")
        self.port.session_event("silence", f"motors stopped after {silent:.1f} s without a "
                                f"packet: {', '.join(classes)}")

    # ============================================================ base time
    def _rebase(self, send: bool) -> None:
        """Take the control process's base time: the hardware node's when the
        port knows it (one base time for RCI, RDI and the ROS stamps), else
        our own (a port without one, e.g. the tests' fake robot)."""
        hw = self.port.base_time_ns()
        now = time.time_ns()
        self._hw_base_ns = hw
        if hw is not None:
            self._base_ns = hw
            self._rebase_at_ns = None
            if send:
                self.transport.send(CBsTm(Timeval.from_ns(hw)))
            return
        self._base_ns = now
        span = max(int(self.cfg.base_time_span_ms), 1000)
        # move on with a margin (a tenth of the span, at most 10 minutes)
        margin = min(span // 10, 600_000)
        self._rebase_at_ns = now + (span - margin) * 1_000_000
        if send:
            self.transport.send(CBsTm(Timeval.from_ns(now)))

    def _check_base(self) -> None:
        """Send CBsTm when the base time moved (4.6.16: whenever it is
        updated): the hardware node's moved, or our own window is used up."""
        if not self.control_phase or self.transport.ending:
            return
        hw = self.port.base_time_ns()
        if hw is not None:
            if hw != self._base_ns:
                self._rebase(send=True)
        elif self._rebase_at_ns is None or time.time_ns() >= self._rebase_at_ns:
            self._rebase(send=True)

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
            return now(self, pkt)
        except PortUnavailable:
            # nothing sent yet (e.g. the device list is not known):
            # the control phase answers it (CStRp ABORT)
            return False

    async def _control_phase(self) -> None:
        handlers = self._commands       # built from bsal_ros/protocol/rci_commands.py
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
            spec, h = entry
            self._guard_write(spec)     # a guest sent a command declared ``writes``
            self._busy = True
            try:
                await h(self, pkt)
                if transport.buffered() > self.cfg.max_write_buffer:
                    # the CA sends faster than it reads: stop reading it until
                    # it catches up, so our buffer stays bounded
                    await transport.drain(self.cfg.drain_timeout_s)
            except PortUnavailable as exc:     # e.g. device list unknown: robot gone
                self._port_failed(pkt, exc)
            finally:
                self._busy = False
                transport.last_rx = time.monotonic()


# Brak's own commands name handlers of this class and methods of RobotPort:
# a misspelt name fails here, at import (a later registration: when a session
# is built)
check_commands(RciSession, RobotPort)
