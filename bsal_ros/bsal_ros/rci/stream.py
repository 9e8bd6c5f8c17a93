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

"""The socket side of an RCI connection on asyncio's public API only: an
:class:`asyncio.Protocol` of our own (:class:`PacketProtocol`) with a
receiving half (:class:`PacketReader`: its own buffer, or every chunk handed
to a callback in the loop's read callback) and a sending half
(:class:`PacketWriter`: write, half-close, drain), both driving the socket
through the transport's public methods (``pause_reading``,
``resume_reading``, ``write``, ``write_eof``, ``close``).

Everything here runs on the event loop's thread.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

#: buffered bytes beyond which the socket is no longer read, while the
#: connection is not diverted (the session reads them in chunks of at most
#: 64 KiB; as asyncio's StreamReader does with its default limit)
BUFFER_LIMIT = 64 * 1024
PAUSE_ABOVE = 2 * BUFFER_LIMIT


class PacketReader:
    """The received bytes of one connection: buffered for :meth:`read`, or
    handed to a callback as they arrive (:meth:`divert`), which then also
    hears of the end of the stream. Loop thread only."""

    def __init__(self):
        #: the peer has closed its side (its FIN reached the loop), though
        #: bytes it sent before may still wait to be read
        self.peer_closed = False
        self._buffer = bytearray()
        self._eof = False
        self._exc: BaseException | None = None
        self._waiter: asyncio.Future | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._sink: Callable[[bytes], None] | None = None
        self._on_end: Callable[[], None] | None = None
        # the socket is not read while either is set: the buffer is full,
        # the owner holds it (hold/release)
        self._full = False
        self._held = False

    def set_transport(self, transport) -> None:
        """The transport whose reading this reader pauses and resumes."""
        self._transport = transport

    # ------------------------------------------------------ from the protocol
    def feed_data(self, data: bytes) -> None:
        """Received bytes: to the sink when diverted, else to the buffer
        (the socket is paused above :data:`PAUSE_ABOVE` buffered bytes)."""
        if self._sink is not None:
            self._sink(data)
            return
        self._buffer += data
        self._wake()
        if len(self._buffer) > PAUSE_ABOVE and not self._full:
            self._full = True
            self._set_reading()

    def feed_eof(self) -> None:
        """The peer closed its side; a diverted reader tells its sink's owner."""
        self.peer_closed = True
        self._eof = True
        self._wake()
        if self._on_end is not None:
            self._on_end()

    def set_exception(self, exc: BaseException) -> None:
        """The connection failed: :meth:`read` raises ``exc`` from now on;
        a diverted reader tells its sink's owner."""
        self._exc = exc
        w = self._waiter
        if w is not None and not w.done():
            w.set_exception(exc)
        if self._on_end is not None:
            self._on_end()

    # ------------------------------------------------------------ the owner's
    def exception(self) -> BaseException | None:
        """The connection's failure, if it failed."""
        return self._exc

    def at_eof(self) -> bool:
        """The peer closed its side and every buffered byte was read."""
        return self._eof and not self._buffer

    async def read(self, n: int) -> bytes:
        """Up to ``n`` buffered bytes, waiting for some; ``b""`` at the end
        of the stream. Raises the connection's failure (ConnectionError)."""
        if self._exc is not None:
            raise self._exc
        while not self._buffer and not self._eof:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        if self._full and len(self._buffer) <= BUFFER_LIMIT:
            self._full = False
            self._set_reading()
        return data

    def divert(self, sink: Callable[[bytes], None], on_end: Callable[[], None]) -> None:
        """Hand every received chunk to ``sink`` from now on, the bytes
        already buffered first; ``on_end`` is called at EOF or a connection
        error (then :meth:`exception` / :meth:`at_eof` say which)."""
        self._sink, self._on_end = sink, on_end
        if self._buffer:
            data = bytes(self._buffer)
            self._buffer.clear()
            if self._full:
                self._full = False
                self._set_reading()
            sink(data)

    def undivert(self) -> None:
        """Bytes go to the buffer again (for a lingering close)."""
        self._sink = self._on_end = None
        self.release()

    def hold(self) -> None:
        """Stop reading the socket until :meth:`release` (diverted bytes
        have no buffer to bound)."""
        if not self._held:
            self._held = True
            self._set_reading()

    def release(self) -> None:
        """Read the socket again after :meth:`hold`."""
        if self._held:
            self._held = False
            self._set_reading()

    def _set_reading(self) -> None:
        """Pause or resume the socket after a change of ``_full``/``_held``."""
        t = self._transport
        if t is None or t.is_closing():
            return
        if self._full or self._held:
            t.pause_reading()
        else:
            t.resume_reading()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)


class PacketWriter:
    """The sending half of one connection: writes go straight to the
    transport; :meth:`drain` waits while the transport asks us to pause
    (its buffer above its high-water mark). Loop thread only."""

    def __init__(self, transport: asyncio.WriteTransport, reader: PacketReader):
        #: the asyncio transport (its write buffer size, abort)
        self.transport = transport
        self._reader = reader
        self._paused = False
        self._lost: BaseException | None = None
        self._drain_waiters: list[asyncio.Future] = []

    def write(self, data: bytes) -> None:
        """Queue ``data`` for the socket (never blocks)."""
        self.transport.write(data)

    def can_write_eof(self) -> bool:
        """True when the transport can half-close (TCP)."""
        return self.transport.can_write_eof()

    def write_eof(self) -> None:
        """Half-close: the peer reads EOF once our buffer is sent."""
        self.transport.write_eof()

    def close(self) -> None:
        """Close the transport (what is buffered is still sent)."""
        self.transport.close()

    def get_extra_info(self, name: str, default=None):
        """The transport's extra information (``peername``, ``socket``)."""
        return self.transport.get_extra_info(name, default)

    async def drain(self) -> None:
        """Until the transport's buffer is below its low-water mark; raises
        the connection's failure, or ConnectionResetError once it is lost."""
        exc = self._reader.exception()
        if exc is not None:
            raise exc
        if self._lost is not None or self.transport.is_closing():
            await asyncio.sleep(0)      # let connection_lost run, as asyncio's streams do
        if self._lost is not None:
            raise ConnectionResetError("Connection lost") from self._lost
        if not self._paused:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._drain_waiters.append(waiter)
        try:
            await waiter
        finally:
            self._drain_waiters.remove(waiter)

    # ------------------------------------------------------ from the protocol
    def pause_writing(self) -> None:
        """The transport's buffer passed its high-water mark."""
        self._paused = True

    def resume_writing(self) -> None:
        """The transport's buffer fell below its low-water mark."""
        self._paused = False
        for w in self._drain_waiters:
            if not w.done():
                w.set_result(None)

    def connection_lost(self, exc: BaseException | None) -> None:
        """The connection is gone: every drain waiter is released with a failure."""
        self._lost = exc or ConnectionResetError("Connection lost")
        for w in self._drain_waiters:
            if not w.done():
                w.set_exception(ConnectionResetError("Connection lost"))


class PacketProtocol(asyncio.Protocol):
    """One accepted connection: feeds a :class:`PacketReader`, flow-controls
    a :class:`PacketWriter`, and runs ``client_connected(reader, writer)`` as
    a task (kept here until it ends; an exception it lets out closes the
    connection)."""

    def __init__(self, client_connected: Callable[[PacketReader, PacketWriter], Awaitable]):
        self._client_connected = client_connected
        self.reader = PacketReader()
        self.writer: PacketWriter | None = None
        self._task: asyncio.Task | None = None

    def connection_made(self, transport) -> None:
        """Start the connection's task."""
        self.reader.set_transport(transport)
        self.writer = PacketWriter(transport, self.reader)
        self._task = asyncio.get_running_loop().create_task(
            self._client_connected(self.reader, self.writer))
        self._task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None and self.writer is not None:
            self.writer.transport.close()

    def data_received(self, data: bytes) -> None:
        """Bytes from the socket."""
        self.reader.feed_data(data)

    def eof_received(self) -> bool:
        """The peer half-closed: keep our side open (we close it ourselves)."""
        self.reader.feed_eof()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        """The socket is closed (``exc``: why, None at a clean close)."""
        if exc is None:
            if not self.reader.peer_closed:
                self.reader.feed_eof()
        else:
            self.reader.set_exception(exc)
        if self.writer is not None:
            self.writer.connection_lost(exc)

    def pause_writing(self) -> None:
        """The transport's buffer is full: drain() waits."""
        if self.writer is not None:
            self.writer.pause_writing()

    def resume_writing(self) -> None:
        """The transport's buffer has room again."""
        if self.writer is not None:
            self.writer.resume_writing()


async def start_packet_server(client_connected, host: str, port: int, **kwargs) -> asyncio.Server:
    """A listening server whose every connection runs
    ``client_connected(reader, writer)`` over a :class:`PacketProtocol`
    (``kwargs`` go to :meth:`asyncio.loop.create_server`)."""
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: PacketProtocol(client_connected), host, port,
                                    **kwargs)
