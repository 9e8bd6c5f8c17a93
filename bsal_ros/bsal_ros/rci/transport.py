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

"""The byte side of one RCI connection: read and decode packets, encode and
write answers, keep the write buffer bounded, close so that the peer reads our
last packet. No protocol decisions: those are the session's
(:mod:`bsal_ros.rci.session`).

In the control phase the bytes of a :class:`PacketReader` are decoded in the
loop's read callback, and a packet that arrives while the session waits for
one is offered to the session there (:meth:`RciTransport.answer_at_once`): an
inquiry the cache answers goes out without a task being woken (issue 31).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Callable

from .stream import PacketReader, PacketWriter
from ..protocol.constants import TermCode
from ..protocol.errors import ProtocolError
from ..protocol.rci import CSvTm, encode_rci, IIID_SIZE, RciDecoder

#: bytes read at a time once the user is logged in
READ_SIZE = 65536
#: the first two bytes of a connection (its IIId's code, 0x0010) -> its byte order
ORDER_OF_HEAD = {b"\x00\x10": "big", b"\x10\x00": "little"}
#: decoded packets waiting for the session beyond which the socket is no
#: longer read (a CA that sends faster than its commands run), and below
#: which it is read again
HOLD_QUEUED = 256
RELEASE_QUEUED = 64


class SessionEnd(Exception):
    """End the session; ``term`` is the CSvTm code to send (None: just close)."""

    def __init__(self, reason: str, term: int | None = None, level: int = logging.INFO):
        super().__init__(reason)
        self.reason, self.term, self.level = reason, term, level


async def linger_close(reader: PacketReader, writer: PacketWriter, linger_s: float) -> None:
    """Half-close, let the peer read what was written, then close.

    What the peer still sends is read and dropped for up to ``linger_s``, so
    that closing does not reset the connection before it has read our last
    packet. Never raises for a peer that is gone.
    """
    try:
        if writer.can_write_eof():
            writer.write_eof()
        await asyncio.wait_for(writer.drain(), linger_s)
        deadline = time.monotonic() + linger_s
        while (left := deadline - time.monotonic()) > 0:
            if not await asyncio.wait_for(reader.read(READ_SIZE), left):
                break
    except (asyncio.TimeoutError, ConnectionError, OSError, RuntimeError):
        pass
    finally:
        try:
            writer.close()
        except Exception:   # noqa: BLE001 - closing a broken transport
            pass


async def peer_byteorder(reader: PacketReader, wait_s: float, default: str) -> str:
    """Byte order of a connection answered before its login (a refusal): read
    the first two bytes of its IIId, waiting at most ``wait_s`` for them;
    ``default`` when they do not come or are not an IIId's code. The bytes read
    are dropped (the connection is being refused). Never raises for a peer
    that is gone."""
    head = b""
    deadline = time.monotonic() + wait_s
    try:
        while len(head) < 2 and (left := deadline - time.monotonic()) > 0:
            data = await asyncio.wait_for(reader.read(2 - len(head)), left)
            if not data:
                break
            head += data
    except (asyncio.TimeoutError, ConnectionError, OSError):
        pass
    return ORDER_OF_HEAD.get(head, default)


class RciTransport:
    """Packets in and out of one TCP connection.

    Before the login it reads one identification's worth of bytes at a time,
    so that a client not logged in (or throttled) never has more than a few
    decoded packets queued here (its :class:`~bsal_ros.rci.stream.PacketReader`
    holds at most 128 KiB of raw bytes for it, then stops reading its
    socket); :meth:`logged_in` lifts that.
    """

    def __init__(self, reader: PacketReader, writer: PacketWriter, byteorder: str = "big"):
        self.reader = reader
        self.writer = writer
        #: the gateway's default; the first two bytes of the CA's IIId decide
        #: this connection's own order (:meth:`_detect_order`)
        self.byteorder = byteorder
        self.decoder = RciDecoder(byteorder, role="server")
        #: bytes kept until the first two of the connection are known
        self._head = b""
        self.order_known = False
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        #: monotonic time of the last bytes received
        self.last_rx = time.monotonic()
        #: nothing is written any more (the socket is closed or closing)
        self.closed = False
        #: a CSvTm went out: nothing may follow it
        self.ending = False
        #: the CSvTm code sent (None: none)
        self.term_sent: int | None = None
        self._queue: collections.deque = collections.deque()
        self._pending_error: ProtocolError | None = None
        #: answer_at_once: the session's answer, the future next() waits on,
        #: what an answer raised (next() raises it)
        self._answer: Callable | None = None
        self._waiter: asyncio.Future | None = None
        self._failure: BaseException | None = None
        self._read_size = IIID_SIZE

    @property
    def peer_closed(self) -> bool:
        """The peer has closed its side, though packets it sent before may
        still wait to be handed out: a program that closes and logs in again
        at once is let in as soon as the loop has read its EOF, whatever
        those packets still take."""
        return self.reader.peer_closed

    def answer_at_once(self, answer: Callable[[object], bool]) -> None:
        """Decode in the loop's read callback from now on, and offer each
        packet that arrives while :meth:`next` waits with nothing queued to
        ``answer(pkt)``: True, it was answered; False, :meth:`next` hands it
        (and every packet after it, in order) to the session."""
        self._answer = answer
        self.reader.divert(self._on_data, self._wake)

    def _on_data(self, data: bytes) -> None:
        """Bytes from the read callback (diverted): decode, answer what can be
        answered at once, queue the rest. Never raises (an exception here
        would reset the connection): what an answer raises goes to next()."""
        if self.closed or self._failure is not None or self._pending_error is not None:
            return
        self.last_rx = time.monotonic()
        try:
            pkts = self.decoder.feed(data)
        except ProtocolError as err:
            pkts, self._pending_error = err.packets, err
        queue = self._queue
        if not queue and self._waiter is not None:
            answer = self._answer
            n = 0
            for pkt in pkts:
                try:
                    if not answer(pkt):
                        break
                except BaseException as exc:   # noqa: BLE001 - ends the session in next()
                    self._failure = exc
                    self._wake()
                    return
                n += 1
            pkts = pkts[n:] if n else pkts
        if pkts:
            queue.extend(pkts)
            if len(queue) > HOLD_QUEUED:
                self.reader.hold()
        if queue or self._pending_error is not None:
            self._wake()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def logged_in(self) -> None:
        """Read in large chunks from now on."""
        self._read_size = READ_SIZE

    @property
    def queued(self) -> int:
        """Decoded packets not yet handed out."""
        return len(self._queue)

    async def next(self):
        """The next decoded packet; raises :class:`SessionEnd` on EOF or bad input
        (packets decoded before the bad bytes are handed out first)."""
        queue = self._queue
        while not queue:
            if self._failure is not None:
                raise self._failure
            if self._pending_error is not None:
                err, self._pending_error = self._pending_error, None
                raise SessionEnd(f"bad input: {err}", TermCode.ERROR, logging.WARNING)
            if self._answer is not None:
                await self._wait_diverted()
                continue
            data = await self.reader.read(self._read_size)
            if not data:
                raise SessionEnd("control application closed the connection")
            self.last_rx = time.monotonic()
            if not self.order_known:
                data = self._detect_order(data)
                if not data:
                    continue
            try:
                queue.extend(self.decoder.feed(data))
            except ProtocolError as err:
                queue.extend(err.packets)
                self._pending_error = err
        pkt = queue.popleft()
        if self._answer is not None and len(queue) <= RELEASE_QUEUED:
            self.reader.release()
        return pkt

    async def _wait_diverted(self) -> None:
        """Until _on_data queued a packet, or the stream ended (raised)."""
        exc = self.reader.exception()
        if exc is not None:
            raise exc
        if self.reader.at_eof():
            raise SessionEnd("control application closed the connection")
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _detect_order(self, data: bytes) -> bytes:
        """Byte order of this connection from the first two bytes of its
        IIId (code 0x0010): ``00 10`` big-endian, ``10 00`` little-endian;
        anything else keeps the gateway's default (and fails to decode as an
        IIId there). Returns the bytes to decode (none until two arrived)."""
        data = self._head + data
        if len(data) < 2:
            self._head = data
            return b""
        self._head = b""
        self.order_known = True
        order = ORDER_OF_HEAD.get(bytes(data[:2]))
        if order is not None and order != self.byteorder:
            self.byteorder = order
            self.decoder = RciDecoder(order, role="server")
        return data

    def send_term(self, term: int | None) -> None:
        """Send the CSvTm ``term`` of an ending connection (None: none);
        nothing is sent after it."""
        if term is not None and not self.closed:
            self.send(CSvTm(term))
            self.term_sent = int(term)
        self.ending = True

    def send(self, pkt) -> None:
        """Encode and write one packet (dropped once the session is ending)."""
        if self.closed or self.ending:
            return
        self.writer.write(encode_rci(pkt, self.byteorder))

    def encode(self, pkt) -> bytes:
        """``pkt`` in this connection's byte order."""
        return encode_rci(pkt, self.byteorder)

    def send_encoded(self, data: bytes) -> None:
        """Write a packet encoded by :meth:`encode` (dropped once ending)."""
        if self.closed or self.ending:
            return
        self.writer.write(data)

    def buffered(self) -> int:
        """Bytes written and not yet taken by the socket."""
        return self.writer.transport.get_write_buffer_size()

    async def drain(self, timeout_s: float) -> None:
        """Wait until the peer has read enough of our answers; a peer that does
        not read within ``timeout_s`` ends the session (CSvTm NOACK)."""
        try:
            await asyncio.wait_for(self.writer.drain(), timeout_s)
        except asyncio.TimeoutError:
            raise SessionEnd(f"control application does not read its answers "
                             f"({self.buffered()} bytes pending for {timeout_s:.1f} s)",
                             TermCode.NOACK, logging.WARNING) from None

    async def close(self, linger_s: float) -> None:
        """Close once (see :func:`linger_close`)."""
        if self.closed:
            return
        self.closed = True
        if self._answer is not None:
            self.reader.undivert()      # the linger reads and drops what still comes
        await linger_close(self.reader, self.writer, linger_s)

    def abort(self) -> None:
        """Close at once, nothing more is sent (the session task is cancelled)."""
        self.closed = True
        try:
            self.writer.close()
        except Exception:   # noqa: BLE001 - closing a broken transport
            pass
