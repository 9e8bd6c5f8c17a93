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

"""The streaming part shared by the RCI and RDI decoders."""

from __future__ import annotations

import struct

# _items and _stream are private to this package: its codecs share them
from ._items import Bad, Incomplete, MAX_PACKET, prefix_of
from .errors import ProtocolError


class StreamDecoder:
    """Accumulates bytes and yields whole packets (subclasses implement ``_parse``).

    ``feed(data)`` returns the list of packets completed by ``data`` (possibly
    empty). Bytes of an unfinished packet stay buffered (never more than one
    packet, at most ``MAX_PACKET`` bytes). Bad input raises
    :class:`ProtocolError` with the absolute stream ``offset`` of the bad field
    and the offending ``data``; the packets decoded earlier in the same call are
    attached as ``error.packets``. After an error the stream has lost its
    framing (001 gives no way to re-synchronise), so the decoder refuses further
    input until :meth:`reset`. Thread: one at a time.

    :param byteorder: ``"big"`` (the wire's default) or ``"little"``.
    :raises ValueError: another byte order.
    """

    def __init__(self, byteorder: str = "big"):
        self.byteorder = "big" if prefix_of(byteorder) == ">" else "little"
        self._pfx = prefix_of(byteorder)
        self._buf = bytearray()
        self._offset = 0          # absolute stream offset of _buf[0]
        self._failed: ProtocolError | None = None

    # ----------------------------------------------------------------- API
    @property
    def pending(self) -> int:
        """Number of buffered bytes of an unfinished packet."""
        return len(self._buf)

    @property
    def offset(self) -> int:
        """Number of bytes consumed (decoded into packets) so far."""
        return self._offset

    def reset(self) -> None:
        """Forget buffered bytes and any earlier error (new connection)."""
        self._buf.clear()
        self._offset = 0
        self._failed = None

    def feed(self, data) -> list:
        """Decode what ``data`` completes; keep the rest buffered.

        :param data: the next bytes of the stream (bytes, bytearray, memoryview).
        :returns: the packets ``data`` completes, possibly none.
        :raises ProtocolError: bad bytes (the packets decoded before them are
            its ``packets``), data that is not bytes, or any call after an
            error until :meth:`reset`.
        """
        if self._failed is not None:
            raise ProtocolError("decoder stopped after an earlier error: " + self._failed.message,
                                self._failed.offset, self._failed.data)
        buf = self._buf
        if not buf and type(data) is bytes:
            # fast path: nothing buffered, parse the caller's bytes in place (no
            # copy); only an unfinished tail is copied into the buffer below
            src = data
        else:
            try:
                buf += data
            except TypeError:
                raise ProtocolError(f"feed() takes bytes, not {type(data).__name__}") from None
            src = buf
        out: list = []
        pos = 0
        n = len(src)
        parse = self._parse
        try:
            while pos < n:
                try:
                    pkt, end = parse(src, pos)
                except (Incomplete, struct.error, IndexError):
                    break
                out.append(pkt)
                pos = end
        except Bad as b:
            err = ProtocolError(b.msg, self._offset + b.pos, bytes(src[b.pos:b.pos + b.size]), out)
            err.packet_offset = self._offset + pos
            self._fail(err, pos)
            raise err from None
        except ProtocolError as e:        # raised by a helper with its own message
            err = ProtocolError(e.message, self._offset + pos, bytes(src[pos:pos + 16]), out)
            err.packet_offset = self._offset + pos
            self._fail(err, pos)
            raise err from None
        except Exception as exc:          # safety net: never leak anything else
            err = ProtocolError(f"internal decoder error: {exc!r}", self._offset + pos,
                                bytes(src[pos:pos + 16]), out)
            err.packet_offset = self._offset + pos
            self._fail(err, pos)
            raise err from None
        if src is buf:
            if pos:
                del buf[:pos]
        elif pos < n:                     # keep the unfinished tail
            buf += memoryview(data)[pos:]
        self._offset += pos
        if len(buf) > MAX_PACKET:        # cannot happen with valid framing; bound anyway
            err = ProtocolError("packet larger than any legal packet", self._offset,
                                bytes(buf[:16]), out)
            err.packet_offset = self._offset
            self._fail(err, 0)
            raise err
        return out

    def feed_eof(self) -> None:
        """Declare the end of the stream.

        :raises ProtocolError: bytes of an unfinished packet are left.
        """
        if self._failed is not None:
            return
        if self._buf:
            err = ProtocolError("truncated packet at end of stream", self._offset, bytes(self._buf))
            err.packet_offset = self._offset
            self._fail(err, 0)
            raise err

    close = feed_eof

    # ------------------------------------------------------------ internals
    def _fail(self, err: ProtocolError, pos: int) -> None:
        self._failed = err
        del self._buf[:]
        self._offset += pos

    def _parse(self, buf, pos):  # pragma: no cover - abstract
        raise NotImplementedError
