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

"""A small blocking RCI client on the protocol library (tests, benchmarks,
command-line probing). Not the legacy C++ library: see legacy/."""

from __future__ import annotations

import socket
import time

from ..protocol.constants import CapInquiry, RciCode
from ..protocol.rci import (CBsTm, CBsTmIq, CGtMtIq, CGtSnIq, CStIq, encode_rci, ICaIq, ICaRp, IIId,
                            IInCp, RciDecoder)

_INQUIRIES = (ICaIq, CGtMtIq, CGtSnIq, CStIq)


class RciClient:
    """A blocking RCI control-application client (tests, benchmarks, tools)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 7650, byteorder: str = "big",
                 timeout: float = 5.0, source: str | None = None):
        """``source``: local address to connect from (e.g. 127.0.0.2 in tests)."""
        self.byteorder = byteorder
        self.timeout = timeout
        self.sock = socket.create_connection((host, port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.decoder = RciDecoder(byteorder, role="client")
        self._queue: list = []
        self.eof = False
        #: the newest base time the server sent on its own (a Timeval), or None
        self.base_time = None

    # ------------------------------------------------------------------ io
    def send(self, pkt) -> None:
        """Send a packet; inquiries are registered so their replies decode."""
        if isinstance(pkt, _INQUIRIES):
            self.decoder.expect_reply(pkt)
        self.sock.sendall(encode_rci(pkt, self.byteorder))

    def send_raw(self, data: bytes) -> None:
        """Send bytes as they are (malformed input in tests)."""
        self.sock.sendall(data)

    def recv(self, timeout: float | None = None):
        """Next packet; raises EOFError when the server closed, TimeoutError."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self._queue:
            if self.eof:
                raise EOFError("server closed the connection")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no packet from the server")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError("no packet from the server") from None
            except ConnectionResetError:
                data = b""
            if not data:
                self.eof = True
                continue
            self._queue.extend(self.decoder.feed(data))
        return self._queue.pop(0)

    def request(self, pkt, timeout: float | None = None):
        """Send a packet and return the next packet received. A CBsTm the
        server sends on its own (4.6.16: whenever the base time moves) is kept
        in ``base_time`` and passed over, unless ``pkt`` asked for it."""
        self.send(pkt)
        while True:
            reply = self.recv(timeout)
            if isinstance(reply, CBsTm) and not isinstance(pkt, CBsTmIq):
                self.base_time = reply.time
                continue
            return reply

    def wait_closed(self, timeout: float | None = None) -> list:
        """Read until the server closes; returns the packets received meanwhile."""
        got = []
        while True:
            try:
                got.append(self.recv(timeout))
            except EOFError:
                return got

    def close(self) -> None:
        """Close the socket."""
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ handshake
    def handshake(self, user: str | bytes, key: bytes, version=(0, 3), inquiries=()):
        """Whole initialization phase. Returns (server IIId, [ICaRp...], CBsTm)."""
        uid = user.encode() if isinstance(user, str) else user
        self.send(IIId(version[0], version[1], uid, key))
        server_id = self.recv()
        if not isinstance(server_id, IIId):
            return server_id, [], None
        replies = []
        if inquiries:
            self.send(ICaIq(list(inquiries)))
        self.send(IInCp())
        # the CP's IInCp may come before or after its ICaRp (001 4.5.3: "at
        # any time" after IIId); CBsTm follows both IInCp
        got_incp = False
        while True:
            p = self.recv()
            if isinstance(p, IInCp) and not got_incp:
                got_incp = True
            elif got_incp and not isinstance(p, ICaRp):
                return server_id, replies, p
            else:
                replies.append(p)


def all_access_inquiries(kind=CapInquiry.ACCESS):
    """One capability inquiry of ``kind`` for every RCI code."""
    return [(int(c), kind) for c in dict.fromkeys(RciCode)]
