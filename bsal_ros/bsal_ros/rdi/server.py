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

"""RDI TCP streams (asyncio) and the two-stream gateway core (no ROS).

:class:`RdiStreamServer` serves one stream: clients connect and receive
(001 chapter 5 is one-way); a ticker builds one frame per period from the
:class:`~bsal_ros.rdi.state.StreamState` and the :class:`~bsal_ros.rdi.fanout.FanOut`
hands it to every client's bounded queue; one writer task per client writes
its queue to the socket. Nothing here blocks: a slow client only fills its own
queue (oldest frames dropped), its transport buffer (``write_buffer_bytes``)
and its kernel send buffer (``socket_send_buffer``), and is disconnected once
its lag passes ``max_lag_s``. Memory per client is therefore bounded by
``queue_frames`` frames + ``write_buffer_bytes`` + the kernel buffer.

:class:`RdiGateway` runs several streams in one asyncio loop in its own
thread; other threads (the ROS executor) hand over data with
:meth:`RdiGateway.call`, which uses ``loop.call_soon_threadsafe``; they never
touch a socket.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
import logging
import socket
import threading
import time

from .fanout import ClientQueue, FanOut, Frame
from .state import PSERVO_RDI_ID_OFFSET, StreamState
from ..loop_thread import LoopThread
from ..protocol import encode_rdi, encode_rdi_frame, RdiBaseTime

__all__ = ["StreamConfig", "RdiStreamServer", "RdiGateway"]

MIN_RATE_HZ, MAX_RATE_HZ = 0.1, 200.0


@dataclass
class StreamConfig:
    """Settings of one RDI stream (port, rate, limits)."""

    name: str = "realtime"
    host: str = "127.0.0.1"
    port: int = 7651                 # 0: any free port
    rate_hz: float = 10.0            # frames per second (Player's default delivery rate)
    byteorder: str = "big"
    max_clients: int = 64
    queue_frames: int = 8            # per-client bounded queue, oldest dropped
    max_lag_s: float = 5.0           # a client further behind is disconnected
    write_buffer_bytes: int = 16384  # asyncio transport high-water mark per client
    socket_send_buffer: int = 16384  # SO_SNDBUF per client socket (0: kernel default)
    extra: dict = field(default_factory=dict)

    def validate(self) -> None:
        """Raise ValueError for a value out of range."""
        if not MIN_RATE_HZ <= float(self.rate_hz) <= MAX_RATE_HZ:
            raise ValueError(f"{self.name}: rate_hz must be in {MIN_RATE_HZ}..{MAX_RATE_HZ}")
        if self.byteorder not in ("big", "little"):
            raise ValueError(f"{self.name}: byteorder must be 'big' or 'little'")
        if self.max_clients < 1 or self.queue_frames < 1 or self.max_lag_s <= 0:
            raise ValueError(f"{self.name}: max_clients, queue_frames, max_lag_s must be > 0")


class _Conn:
    __slots__ = ("q", "reader", "writer", "event", "tasks", "closed")

    def __init__(self, q: ClientQueue, reader, writer):
        self.q, self.reader, self.writer = q, reader, writer
        self.event = asyncio.Event()
        self.tasks: list[asyncio.Task] = []
        self.closed = False


class RdiStreamServer:
    """One RDI stream on one TCP port (run inside an asyncio loop)."""

    def __init__(self, state: StreamState, config: StreamConfig,
                 log: logging.Logger | None = None, clock=time.monotonic):
        config.validate()
        self.state = state
        self.cfg = config
        self.log = log or logging.getLogger(f"bsal_ros.rdi.{config.name}")
        self.clock = clock
        self.fanout = FanOut(config.max_clients, config.queue_frames, config.max_lag_s)
        self._refusal_logged: dict[str, float] = {}   # address -> last refusal line
        self._conns: dict[int, _Conn] = {}
        self._server: asyncio.AbstractServer | None = None
        self._ticker: asyncio.Task | None = None
        self.bound_port: int | None = None
        self.seq = 0
        self.frames_built = 0
        self.disconnected_lagging = 0
        self._base_cache: tuple[int, bytes] = (-1, b"")
        self._frame_cache: tuple[int, int, bytes] | None = None

    # ---------------------------------------------------------------- life
    async def start(self) -> int:
        """Listen and start sending frames; returns the bound port."""
        self._server = await asyncio.start_server(self._on_client, self.cfg.host, self.cfg.port,
                                                  reuse_address=True)
        self.bound_port = self._server.sockets[0].getsockname()[1]
        self._ticker = asyncio.get_running_loop().create_task(self._tick_loop())
        self.log.info(f"RDI {self.cfg.name} stream on {self.cfg.host}:{self.bound_port}, "
                      f"{self.cfg.rate_hz:g} Hz, at most {self.cfg.max_clients} clients")
        return self.bound_port

    async def stop(self) -> None:
        """Stop listening and close every client."""
        if self._ticker is not None:
            self._ticker.cancel()
        if self._server is not None:
            self._server.close()
        for key in list(self._conns):
            self._close(key, None)
        if self._server is not None:
            try:
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            except (asyncio.TimeoutError, Exception):   # noqa: BLE001
                pass

    def stats(self) -> dict:
        """Counters of this stream."""
        return {"clients": len(self._conns), "frames_built": self.frames_built,
                "refused": self.fanout.refused, "disconnected_lagging": self.disconnected_lagging,
                "dropped": sum(c.q.dropped for c in self._conns.values()),
                "bytes_sent": sum(c.q.bytes_sent for c in self._conns.values()),
                "queued_bytes": sum(c.q.queued_bytes() for c in self._conns.values())}

    # ------------------------------------------------------------- frames
    def _base_packet(self) -> bytes:
        st = self.state
        if st.base_time is None:
            return b""
        ver, data = self._base_cache
        if ver != st.base_version:
            data = encode_rdi(RdiBaseTime(st.base_time), self.cfg.byteorder)
            self._base_cache = (st.base_version, data)
        return data

    def build_frame(self) -> Frame:
        """Encode the current state as one frame."""
        st = self.state
        fc = self._frame_cache
        if fc is not None and fc[0] == st.version and fc[1] == st.base_version:
            data = fc[2]       # nothing changed since the last frame: reuse its bytes
        else:
            data = encode_rdi_frame(st.build_frame(), self.cfg.byteorder)
            self._frame_cache = (st.version, st.base_version, data)
        self.seq += 1
        self.frames_built += 1
        return Frame(data, st.base_version, self._base_packet(), self.clock(), self.seq)

    async def _tick_loop(self) -> None:
        loop = asyncio.get_running_loop()
        period = 1.0 / float(self.cfg.rate_hz)
        nxt = loop.time()
        while True:
            nxt += period
            delay = nxt - loop.time()
            if delay < -period:          # fell behind (machine busy): do not burst
                nxt = loop.time()
                delay = 0
            await asyncio.sleep(max(0.0, delay))
            try:
                self.tick()
            except Exception:   # noqa: BLE001 - one bad frame must not kill the stream
                self.log.exception(f"RDI {self.cfg.name}: frame failed")

    def tick(self) -> None:
        """Build one frame, hand it to every client, drop lagging clients."""
        if not self._conns:
            return
        frame = self.build_frame()
        self.fanout.broadcast(frame)
        for c in self._conns.values():
            c.event.set()
        now = self.clock()
        for key, lag in self.fanout.lagging(now):
            c = self._conns.get(key)
            if c is None:
                continue
            self.disconnected_lagging += 1
            self.log.warning(f"RDI {self.cfg.name}: disconnecting client {c.q.peer}: "
                             f"lag {lag:.2f} s > {self.cfg.max_lag_s:g} s "
                             f"({c.q.dropped} frames dropped, {c.q.frames_sent} sent)")
            self._close(key, None, abort=True)

    # ------------------------------------------------------------- clients
    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        peer = writer.get_extra_info("peername")
        peer_s = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        key = id(writer)
        q = self.fanout.admit(key, peer_s, self.clock())
        if q is None:
            # One line per address a minute: a connect flood must not flood the log.
            now = self.clock()
            host = peer[0] if isinstance(peer, tuple) else peer_s
            if now - self._refusal_logged.get(host, -1e9) >= 60.0:
                if len(self._refusal_logged) > 1024:
                    self._refusal_logged.clear()
                self._refusal_logged[host] = now
                self.log.warning(f"RDI {self.cfg.name}: refused client {peer_s}: "
                                 f"max_clients {self.cfg.max_clients} reached "
                                 f"({self.fanout.refused} refused so far; next line for "
                                 f"{host} in 60 s at the earliest)")
            writer.transport.abort()
            return
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if self.cfg.socket_send_buffer > 0:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF,
                                    int(self.cfg.socket_send_buffer))
            except OSError:
                pass
        writer.transport.set_write_buffer_limits(high=int(self.cfg.write_buffer_bytes))
        conn = self._conns[key] = _Conn(q, reader, writer)
        self.log.info(f"RDI {self.cfg.name}: client {peer_s} connected "
                      f"({len(self._conns)}/{self.cfg.max_clients})")
        loop = asyncio.get_running_loop()
        # base time on connect, before any frame
        base = self._base_packet()
        if base:
            writer.write(base)
            q.base_sent = self.state.base_version
        conn.tasks = [loop.create_task(self._writer(key, conn)),
                      loop.create_task(self._reader(key, conn))]
        conn.event.set()

    async def _reader(self, key, conn: _Conn) -> None:
        # RDI is one-way: whatever a client sends is read and discarded; EOF closes
        try:
            while True:
                data = await conn.reader.read(4096)
                if not data:
                    break
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            self._close(key, "client closed the connection")

    async def _writer(self, key, conn: _Conn) -> None:
        q, w = conn.q, conn.writer
        try:
            while not conn.closed:
                await conn.event.wait()
                conn.event.clear()
                while not conn.closed:
                    f = q.take()
                    if f is None:
                        break
                    n = 0
                    if f.base_version != q.base_sent and f.base_packet:
                        w.write(f.base_packet)
                        q.base_sent = f.base_version
                        n += len(f.base_packet)
                    if f.data:
                        w.write(f.data)
                        n += len(f.data)
                    await w.drain()
                    q.done(n)
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            self._close(key, "write failed")

    def _close(self, key, reason: str | None, abort: bool = False) -> None:
        conn = self._conns.pop(key, None)
        self.fanout.remove(key)
        if conn is None or conn.closed:
            return
        conn.closed = True
        conn.event.set()
        cur = asyncio.current_task()
        for t in conn.tasks:
            if t is not cur:
                t.cancel()
        try:
            if abort:
                conn.writer.transport.abort()
            else:
                conn.writer.close()
        except Exception:   # noqa: BLE001
            pass
        if reason:
            self.log.info(f"RDI {self.cfg.name}: client {conn.q.peer} gone ({reason}); "
                          f"{conn.q.frames_sent} frames sent, {conn.q.dropped} dropped")


class RdiGateway:
    """Several RDI streams served from one asyncio loop in a background thread."""

    def __init__(self, configs: list[StreamConfig], states: dict[str, StreamState] | None = None,
                 log: logging.Logger | None = None,
                 pservo_id_offset: int = PSERVO_RDI_ID_OFFSET):
        self.configs = {c.name: c for c in configs}
        for c in configs:
            c.validate()
        self.states = states or {c.name: StreamState(pservo_id_offset) for c in configs}
        self.log = log or logging.getLogger("bsal_ros.rdi")
        self.servers: dict[str, RdiStreamServer] = {}
        self._loop = LoopThread("rdi-asyncio")
        # calls made before the loop runs (e.g. a latched ROS message delivered
        # while the node starts) are kept, in order, and applied in the loop
        self._early_lock = threading.Lock()
        self._early: list | None = []

    def start(self, timeout: float = 10.0) -> dict[str, int]:
        """Start the loop thread and open every stream; returns {stream name: bound port}."""
        return self._loop.start(self._open(), timeout)

    async def _open(self) -> dict[str, int]:
        try:
            for name, cfg in self.configs.items():
                srv = RdiStreamServer(self.states[name], cfg, self.log)
                await srv.start()
                self.servers[name] = srv
        except BaseException:
            await self._close()
            raise
        with self._early_lock:
            early, self._early = self._early, None
        for stream, method, args in early or ():
            getattr(self.states[stream], method)(*args)
        return {n: s.bound_port for n, s in self.servers.items()}

    async def _close(self) -> None:
        for s in self.servers.values():
            await s.stop()

    def call(self, stream: str, method: str, *args) -> None:
        """Thread-safe: run ``states[stream].<method>(*args)`` in the loop."""
        fn = getattr(self.states[stream], method)
        if self._early is not None:
            with self._early_lock:
                if self._early is not None:
                    if len(self._early) < 10000:        # bounded
                        self._early.append((stream, method, args))
                    return
        self._loop.call_soon(fn, *args)     # dropped once the loop has stopped

    def call_all(self, method: str, *args) -> None:
        """``call`` on every stream."""
        for name in self.states:
            self.call(name, method, *args)

    def run_sync(self, fn, timeout: float = 5.0):
        """Run ``fn()`` in the loop thread and return its result (for stats/tests)."""
        if not self._loop.running:
            raise RuntimeError("RDI gateway not running")
        return self._loop.run(self._call(fn), timeout)

    @staticmethod
    async def _call(fn):
        return fn()

    def stats(self) -> dict:
        """Counters of every stream (from the loop thread)."""
        return self.run_sync(lambda: {n: s.stats() for n, s in self.servers.items()})

    def stop(self, timeout: float = 3.0) -> None:
        """Close every stream (at most ``timeout`` s), then stop and join the loop thread."""
        self._loop.stop(self._close, timeout)
