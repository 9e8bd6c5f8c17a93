"""The RCI TCP server: one control application at a time (001 section 4.3).

A second control application is refused politely: RCI-IInCp then RCI-CSvTm
(ACCESS) and the connection is closed; the first one keeps working.
"""

from __future__ import annotations

import asyncio
import logging
import socket

from ..protocol.constants import TermCode
from ..protocol.rci import CSvTm, IInCp, encode_rci
from .port import RobotPort
from .safety import StopRetrier
from .session import RciSession, SessionConfig
from .users import Users, check_bind_allowed

log = logging.getLogger("bsal_ros.rci")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7650


class RciServer:
    def __init__(self, port: RobotPort, users: Users, host: str = DEFAULT_HOST,
                 tcp_port: int = DEFAULT_PORT, config: SessionConfig | None = None,
                 logger: logging.Logger | None = None):
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
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self.stopper: StopRetrier | None = None

    @property
    def bound_port(self) -> int:
        """The actual TCP port (useful with tcp_port=0)."""
        assert self._server is not None
        return self._server.sockets[0].getsockname()[1]

    async def start(self) -> None:
        self.stopper = StopRetrier(self.robot, self.log)
        self._server = await asyncio.start_server(self._on_client, self.host, self.tcp_port,
                                                  reuse_address=True)
        self.log.info("RCI gateway listening on %s:%d (byte order %s, watchdog %.1f s)",
                      self.host, self.bound_port, self.cfg.byteorder, self.cfg.watchdog_s)

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        await self._server.serve_forever()

    async def wait_idle(self) -> None:
        """Until no session is active (tests)."""
        await self._idle.wait()

    async def close(self) -> None:
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

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            sock = writer.get_extra_info("socket")
            if sock is not None:
                try:
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                except OSError:
                    pass
            if self.session is not None:
                await self._refuse(reader, writer)
                return
            session = RciSession(self.robot, self.users, reader, writer, self.cfg, self.log)
            session.stopper = self.stopper
            self.session = session
            self._idle.clear()

            def released():
                if self.session is session:
                    self.session = None
                    self.sessions_served += 1
                    self._idle.set()
            session.on_released = released
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
            self._tasks.discard(task)

    async def _refuse(self, reader, writer) -> None:
        self.refused += 1
        peer = writer.get_extra_info("peername")
        self.log.warning("RCI client %s refused: another control application is connected", peer)
        bo = self.cfg.byteorder
        try:
            writer.write(encode_rci(IInCp(), bo) + encode_rci(CSvTm(TermCode.ACCESS), bo))
            if writer.can_write_eof():
                writer.write_eof()
            await asyncio.wait_for(writer.drain(), self.cfg.linger_s)
            # read (and drop) what it sends until it closes, briefly, so that
            # closing does not reset the connection before it read our packets
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.cfg.linger_s
            while (left := deadline - loop.time()) > 0:
                if not await asyncio.wait_for(reader.read(65536), left):
                    break
        except (asyncio.TimeoutError, ConnectionError, OSError):
            pass
        finally:
            writer.close()
