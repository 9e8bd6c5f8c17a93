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

"""The RCI TCP server: one control application at a time (001 section 4.3).

A second control application is refused politely: RCI-IInCp then RCI-CSvTm
(ACCESS) and the connection is closed; the first one keeps working. Every
answer is in the connection's own byte order, refusals included: a refusal
reads the first two bytes of the IIId (``00 10`` or ``10 00``) before it
answers, waiting for them at most :data:`ORDER_WAIT_S` (over the limits:
:data:`REFUSAL_LINGER_S`); the gateway's default order when they do not come.

A connection gets the control-application slot only once its user and key
have been accepted (:meth:`RciSession.login`): a client that connects and
says nothing, or is being slowed down by the login throttle, never keeps the
real control application out. Connections that are not the session
(identifying, throttled, refused, closing) are bounded in all and per source
address (:class:`~bsal_ros.rci.limits.PendingLimit`); one beyond the limit is
refused as 001 4.3 asks ("a status message before disconnecting"): IInCp
then CSvTm ACCESS, like a second control application, and closed after a
short linger. Answering is bounded: at most ``max_pending`` such refusals are
in progress at once, each for at most three times :data:`REFUSAL_LINGER_S`; beyond that a
connection is reset unanswered. See docs/SECURITY.md.
"""

from __future__ import annotations

import asyncio
import logging
import socket

from .limits import address_key, LoginThrottle, PendingLimit
from .port import RobotPort
from .safety import StopRetrier
from .session import RciSession
from .settings import SessionConfig
from .stream import PacketReader, PacketWriter, start_packet_server
from .transport import linger_close, peer_byteorder
from .users import check_bind_allowed, Users
from ..protocol.constants import TermCode
from ..protocol.rci import CSvTm, encode_rci, IInCp

log = logging.getLogger("bsal_ros.rci")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7650
#: longest a refused over-limit connection is kept to let it read the CSvTm
REFUSAL_LINGER_S = 0.25
#: longest a refused second control application is waited for to send the
#: first two bytes of its IIId, which tell its byte order (it sends the IIId
#: as soon as it has connected)
ORDER_WAIT_S = 1.0
#: longest a login waits for the previous session to finish closing (its
#: safety stop is bounded by 2 s for the homing and 5 s for the stops)
CLOSING_WAIT_S = 8.0
#: how long a new connection gives a session that looks alive to show it is
#: closing (its EOF may be read just after the new connection is accepted)
CLOSING_GRACE_S = 0.05


class RciServer:
    """The RCI TCP server: one control-application session at a time."""

    def __init__(self, port: RobotPort, users: Users, host: str = DEFAULT_HOST,
                 tcp_port: int = DEFAULT_PORT, config: SessionConfig | None = None,
                 logger: logging.Logger | None = None, throttle: LoginThrottle | None = None):
        check_bind_allowed(host, users)     # raises UsersFileError
        self.robot = port
        self.users = users
        self.host = host
        self.tcp_port = tcp_port
        self.cfg = config or SessionConfig()
        self.log = logger or log
        self.session: RciSession | None = None
        self.sessions_served = 0
        self.refused = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self.stopper: StopRetrier | None = None
        c = self.cfg
        self.throttle = throttle if throttle is not None else LoginThrottle(
            c.login_max_failures, c.login_window_s, c.login_delay_s, c.login_max_delay_s,
            c.login_table_size)
        self.pending = PendingLimit(c.max_pending, c.max_pending_per_address)
        #: how a throttled login waits (injectable: tests)
        self.sleep = asyncio.sleep
        self.failed_logins = 0
        #: connections between accept and the end of their login (introspection)
        self.logins: set[RciSession] = set()
        self.over_limit = 0
        #: over-limit connections answered with CSvTm / reset unanswered
        #: (more than max_pending refusals in progress at once)
        self.over_limit_answered = 0
        self.over_limit_reset = 0
        self._refusing = 0
        #: most over-limit refusals in progress at once (introspection)
        self.refusing_peak = 0

    @property
    def bound_port(self) -> int:
        """The actual TCP port (useful with tcp_port=0)."""
        assert self._server is not None
        return self._server.sockets[0].getsockname()[1]

    async def start(self) -> None:
        """Listen; returns the bound port."""
        self.stopper = StopRetrier(self.robot, self.log)
        self._server = await start_packet_server(self._on_client, self.host, self.tcp_port,
                                                 reuse_address=True)
        self.log.info("RCI gateway listening on %s:%d (byte order %s, watchdog %.1f s)",
                      self.host, self.bound_port, self.cfg.byteorder, self.cfg.watchdog_s)

    async def serve_forever(self) -> None:
        """Start and serve until cancelled."""
        if self._server is None:
            await self.start()
        await self._server.serve_forever()

    async def wait_idle(self) -> None:
        """Until no session is active (tests)."""
        await self._idle.wait()

    async def close(self) -> None:
        """Stop listening, end every connection safely."""
        if self._server is not None:
            self._server.close()
        if self.stopper is not None:
            await self.stopper.close()
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            try:
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            except asyncio.TimeoutError:
                pass

    async def _on_client(self, reader: PacketReader, writer: PacketWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        peer = writer.get_extra_info("peername")
        key = address_key(peer[0] if isinstance(peer, tuple) else str(peer))
        counted = False
        try:
            which = self.pending.enter(key)
            if which is not None:
                await self._over_limit(reader, writer, peer, key, which)
                return
            counted = True
            sock = writer.get_extra_info("socket")
            if sock is not None:
                try:
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                except OSError:
                    pass
            if self.session is not None and not await self._slot_free():
                await self._refuse(reader, writer, key)
                return

            def released():
                if self.session is session:
                    self.session = None
                    self.sessions_served += 1
                    self._idle.set()
            session = RciSession(self.robot, self.users, reader, writer, self.cfg, self.log,
                                 stopper=self.stopper, throttle=self.throttle, throttle_key=key,
                                 sleep=self.sleep, on_released=released)
            self.logins.add(session)
            try:
                ok = await session.login()
            finally:
                self.logins.discard(session)
            if not ok:                          # refused: answered and closed
                if session.term_sent is not None:
                    self.failed_logins += 1
                return
            if self.session is not None and not await self._slot_free():
                # a live control application holds the robot (or got in meanwhile)
                await self._refuse(reader, writer, key, session.transport.byteorder)
                return
            self.pending.leave(key)             # no longer pending: the session
            counted = False
            self.session = session
            self._idle.clear()
            try:
                await session.run()
            finally:
                released()
        except asyncio.CancelledError:
            pass                # gateway closing: the session has cleaned up
        except Exception:       # the server itself must survive anything
            self.log.exception("RCI gateway: unexpected error in a connection handler")
            try:
                writer.close()
            except Exception:
                pass
        finally:
            if counted:
                self.pending.leave(key)
            self._tasks.discard(task)

    async def _over_limit(self, reader, writer, peer, key: str, which: str) -> None:
        """Refuse a connection beyond the pending limits: IInCp + CSvTm ACCESS
        (001 4.3: a status message before disconnecting) in the order of its
        IIId's first two bytes (awaited at most REFUSAL_LINGER_S), then close
        after at most REFUSAL_LINGER_S; reset unanswered when max_pending
        refusals are already in progress (a flood costs bounded work)."""
        self.over_limit += 1
        p = self.pending
        level = logging.WARNING if p.should_log(key, which) else logging.DEBUG
        if which == "total":
            self.log.log(level, "RCI gateway: refusing new connection from %s (CSvTm ACCESS): "
                         "%d connections are already identifying or closing (max_pending; "
                         "further refusals logged at most every %.0f s)", peer, p.max_total,
                         p.log_every_s)
        else:
            self.log.log(level, "RCI gateway: refusing new connection from %s (CSvTm ACCESS): "
                         "%d connections from %s are already identifying or closing "
                         "(max_pending_per_address; further refusals logged at most every "
                         "%.0f s)", peer, p.max_per_address, key, p.log_every_s)
        if self._refusing >= p.max_total:
            self.over_limit_reset += 1
            try:
                writer.transport.abort()
            except Exception:
                pass
            return
        self._refusing += 1
        self.refusing_peak = max(self.refusing_peak, self._refusing)
        try:
            bo = await peer_byteorder(reader, REFUSAL_LINGER_S, self.cfg.byteorder)
            try:
                writer.write(encode_rci(IInCp(), bo) + encode_rci(CSvTm(TermCode.ACCESS), bo))
            except (ConnectionError, OSError, RuntimeError):
                pass
            self.over_limit_answered += 1
            await linger_close(reader, writer, min(self.cfg.linger_s, REFUSAL_LINGER_S))
        finally:
            self._refusing -= 1

    async def _slot_free(self) -> bool:
        """True once no session holds the slot. A session that is closing
        (its EOF read, or its safety stop running) is waited for, at most
        :data:`CLOSING_WAIT_S`; one that still looks alive is given
        :data:`CLOSING_GRACE_S` to show it is closing. False: a live session
        holds the robot (the caller refuses)."""
        loop = asyncio.get_running_loop()
        s = self.session
        grace_end = loop.time() + CLOSING_GRACE_S
        while s is not None and s is self.session and not s.closing_soon():
            if loop.time() >= grace_end:
                return False
            await asyncio.sleep(0.005)
        try:
            await asyncio.wait_for(self._idle.wait(), CLOSING_WAIT_S)
        except asyncio.TimeoutError:
            return False
        return self.session is None

    async def _refuse(self, reader, writer, key: str = "", byteorder: str = "") -> None:
        self.refused += 1
        peer = writer.get_extra_info("peername")
        level = logging.WARNING if self.pending.should_log(key, "busy") else logging.DEBUG
        self.log.log(level, "RCI client %s refused: another control application is connected",
                     peer)
        bo = byteorder or await peer_byteorder(reader, ORDER_WAIT_S, self.cfg.byteorder)
        try:
            writer.write(encode_rci(IInCp(), bo) + encode_rci(CSvTm(TermCode.ACCESS), bo))
        except (ConnectionError, OSError, RuntimeError):
            pass
        await linger_close(reader, writer, self.cfg.linger_s)
