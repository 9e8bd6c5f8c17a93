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

"""A legacy RCI or RDI connection's bytes as JSON messages, one per packet.

:class:`ConnectionDecoder` takes the chunks one connection carries, in the
order a proxy saw them (``c2s``: client to gateway, ``s2c``: gateway to
client), and decodes them with :mod:`bsal_ros.protocol` as a peer would: the
byte order from the connection's first bytes (RCI: the IIId's code, ``00 10``
big-endian or ``10 00`` little-endian; RDI: the base time's, ``08 00`` or
``00 08``), an RCI reply against the inquiry the client sent before it. Each
packet becomes one JSON object (:data:`SCHEMA`, docs/RECORDING.md)::

    {"conn": 0, "dir": "c2s", "packet": "CStMt",
     "fields": {"sub_code": "DC", "items": [{"id": 1, "data": {"kind": "SPVAL",
                "speedval": 53401}}], "form": "GENERAL", "rq_ack": true}}

Values are the protocol package's: enum members by name, raw statval and
speedval words as integers, a ``Timeval`` as ``{"sec": .., "usec": ..}``. The
IIId's authentication key is never written (``"auth_key": "not recorded"``).
RCI and RDI cannot resynchronise after bad bytes (docs/PROTOCOL.md 6), so
after a decode error a direction's further bytes are kept as hex
(``"event": "raw"``), with one exception: a program's RCI bytes that could
hold an IIId's key (any chunk before its IIId was decoded, any chunk with the
IIId's code in it) keep only their length (``"hex": "not recorded"``).
No ROS, no sockets here.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from enum import Enum
import math

from bsal_ros.protocol import ProtocolError, RciDecoder, RdiDecoder

#: the directions of a connection, as brak_wire's recordings name them (docs/WIRE.md)
C2S, S2C = "c2s", "s2c"
#: the first two bytes of each protocol's first packet, per byte order
FIRST_CODES = {"rci": (C2S, {b"\x00\x10": "big", b"\x10\x00": "little"}),
               "rdi": (S2C, {b"\x08\x00": "big", b"\x00\x08": "little"})}
#: what an IIId's authentication key becomes in a recording
KEY_NOT_RECORDED = "not recorded"

#: JSON schema of every message of a wire channel
SCHEMA = {
    "title": "bsal_ros wire packet",
    "description": "One RCI or RDI packet, or a connection event, as brak_record saw it "
                   "(docs/RECORDING.md)",
    "type": "object",
    "properties": {
        "conn": {"type": "integer",
                 "description": "connection number, from 0 in order of opening"},
        "dir": {"type": "string", "enum": [C2S, S2C],
                "description": "c2s: client to gateway, s2c: gateway to client"},
        "packet": {"type": "string", "description": "the protocol package's class name"},
        "fields": {"type": "object", "description": "the packet's fields, as decoded"},
        "byteorder": {"type": "string", "enum": ["big", "little"]},
        "event": {"type": "string", "enum": ["open", "close", "error", "raw"],
                  "description": "a connection event instead of a packet"},
        "peer": {"type": "string"},
        "by": {"type": "string", "enum": ["client", "server"]},
        "error": {"type": "string"},
        "hex": {"type": "string",
                "description": "the chunk's bytes, or \"not recorded\" where they could "
                               "hold an IIId's key"},
        "bytes": {"type": "integer", "description": "the chunk's length (error and raw)"},
    },
    "required": ["conn"],
}


def jsonable(value):
    """``value`` (a packet field) as plain JSON data: enum members by name,
    NamedTuples and dataclasses as objects, bytes as hex, (id, data) items as
    objects, a float that JSON cannot hold (inf, nan) as its text."""
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if hasattr(value, "_asdict"):           # NamedTuple
        return {k: jsonable(v) for k, v in value._asdict().items()}
    if is_dataclass(value):
        return {f.name: jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def packet_fields(packet) -> dict:
    """The ``fields`` object of a packet: its fields, ``items`` as
    ``[{"id": .., "data": ..}]``, an IIId's user name as text and its key left out."""
    out = jsonable(packet)
    if isinstance(out, dict) and isinstance(getattr(packet, "items", None), list):
        out["items"] = [_item(i) for i in packet.items]
    if type(packet).__name__ == "IIId":
        out["user_id"] = bytes(packet.user_id).rstrip(b"\0").decode("latin-1")
        out["auth_key"] = KEY_NOT_RECORDED
    return out


def _item(item):
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], int):
        return {"id": int(item[0]), "data": jsonable(item[1])}
    return jsonable(item)


class ConnectionDecoder:
    """One connection of ``protocol`` (``"rci"`` or ``"rdi"``): chunks in, JSON
    messages out (:meth:`feed`), packets in the order each direction sent them."""

    def __init__(self, protocol: str, conn: int):
        if protocol not in FIRST_CODES:
            raise ValueError(f"protocol {protocol!r}: rci or rdi")
        self.protocol, self.conn = protocol, conn
        self.byteorder: str | None = None
        self._decoders: dict = {}
        self._broken: set[str] = set()
        self._logged_in = False      # an IIId decoded from the program (RCI)

    def _start(self, direction: str, data: bytes) -> None:
        """Pick the byte order from the first bytes of the side that speaks first."""
        first_dir, orders = FIRST_CODES[self.protocol]
        order = orders.get(bytes(data[:2])) if direction == first_dir else None
        self.byteorder = order or "big"
        if self.protocol == "rci":
            self._decoders = {C2S: RciDecoder(self.byteorder, "server"),
                              S2C: RciDecoder(self.byteorder, "client")}
        else:
            self._decoders = {S2C: RdiDecoder(self.byteorder)}

    def feed(self, direction: str, data: bytes) -> list[dict]:
        """The messages of one chunk ``data`` sent in ``direction`` (c2s or s2c)."""
        if direction not in (C2S, S2C):
            raise ValueError(f"direction {direction!r}: c2s or s2c")
        if self.byteorder is None:
            self._start(direction, data)
        decoder = self._decoders.get(direction)
        if decoder is None or direction in self._broken:
            # RDI's client side carries no protocol; a broken direction cannot resync
            return [self._msg(direction, event="raw", **self._bytes(direction, data))]
        try:
            packets = decoder.feed(data)
        except ProtocolError as exc:
            self._broken.add(direction)
            return [self._msg(direction, event="error", error=str(exc),
                              **self._bytes(direction, data))]
        out = []
        for p in packets:
            if direction == C2S and type(p).__name__ == "IIId":
                self._logged_in = True
            if direction == C2S and self.protocol == "rci":
                try:
                    self._decoders[S2C].expect_reply(p)     # an inquiry: its reply follows
                except TypeError:
                    pass                                    # not an inquiry
            out.append(self._msg(direction, packet=type(p).__name__, fields=packet_fields(p)))
        return out

    def _bytes(self, direction: str, data: bytes) -> dict:
        """A chunk that did not decode: its length, and its hex unless it could hold a key."""
        data = bytes(data)
        if self.protocol == "rci" and direction == C2S:
            iiid = {v: k for k, v in FIRST_CODES["rci"][1].items()}[self.byteorder]
            if not self._logged_in or iiid in data:
                return {"bytes": len(data), "hex": KEY_NOT_RECORDED}
        return {"bytes": len(data), "hex": data.hex()}

    def _msg(self, direction: str, **body) -> dict:
        return {"conn": self.conn, "dir": direction, "byteorder": self.byteorder, **body}

    def event(self, event: str, **body) -> dict:
        """The message of a connection event: ``open`` or ``close``."""
        return {"conn": self.conn, "event": event, **body}
