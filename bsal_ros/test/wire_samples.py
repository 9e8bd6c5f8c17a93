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
"""Every packet kind of docs/PROTOCOL.md as a session, for the dissector and fuzz tests.

``rci_events(byteorder)`` is a complete RCI conversation (CA's and CP's
packets in a causal order: every reply after its inquiry) built from the hex
examples of PROTOCOL.md sections 3 and 5, re-encoded for little-endian;
``rdi_events(byteorder)`` the RDI examples. ``decode_events`` turns events
back into packets with bsal_ros.protocol (the reference the tests compare
tshark's fields with).
"""

from __future__ import annotations

from bsal_ros.protocol import (CGtMtIq, CGtSnIq, CStIq, encode_rci, encode_rdi, ICaIq, RciDecoder,
                               RdiDecoder)

# (direction, hex of one or more packets sent together)
RCI_STEPS = [
    ("c2s", "0010 00 03 6775657374 0000000000000000000000 000102030405060708090a0b0c0d0e0f"
            " 000000000000000000000000000000000000000000000000"),
    ("s2c", "0010 00 03 00000000000000000000000000000000 00000000000000000000000000000000"
            " 000000000000000000000000000000000000000000000000"),
    ("c2s", "0012 02 0201 18 0213 1a  0012 01 0999 1a"),
    ("s2c", "0013 02 0201 23 0213 00 03  0013 01 0999 20"),
    ("c2s", "0011"),
    ("s2c", "0011  0107 3a4fc880 0007a120"),
    ("c2s", "0100 0100"),
    ("s2c", "0101 0201 09"),
    ("c2s", "0904 0106"),
    ("s2c", "0103 0104  0107 3a4fc880 00000000"),
    ("c2s", "0200 c0 0001 01  8a00 c0 02 0000 01 01  4200 c1 02 0000 00 0007 01"),
    ("s2c", "0103 0200"),
    ("c2s", "0201 c0 0001 d0 8fff  0a01 c1 0000 d2  4201 c1 02 0000 d1 0064 0005 d2"
            "  8201 c0 02 0000 d0 8199 d0 0000"),
    ("s2c", "0103 0201"),
    ("c2s", "8202 c0 02 0000 01 02"),
    ("s2c", "8203 c0 02 0000 8199 00012d05"),
    ("c2s", "0202 c1 0000 01"),
    ("s2c", "0203 c1 0000 0064 00200000"),
    ("c2s", "4210 83 02 0000 01 000b 00  0211 82 0000 90  8211 83 02 0000 91 00 91 06"
            "  0211 83 0003 92 0041"),
    ("c2s", "8212 83 0c 0000 040404040404040404040404"),
    ("s2c", "8213 83 0c 0000 03e8 07d0 0bb8 0fa0 1388 1770 1b58 1f40 2328 2710 2af8 2ee0"),
    ("c2s", "4212 82 02 0000 04 0001 05"),
    ("s2c", "4213 82 02 0000 0005 fff6 0001 00000107"),
    ("c2s", "0212 81 0000 04  0212 80 0002 04"),
    ("s2c", "0213 81 0000 3f800000  0213 80 0002 ff38"),
    ("c2s", "0a02 c0 0001 03"),
    ("s2c", "0101 0202 0d"),
    ("s2c", "0102 0015"),
]

RDI_STEPS = [
    ("s2c", "0800 01 3a4fc880 00000000"),
    ("s2c", "0010 01 0003 1234 00ffff07  8010 01 02 0000 03e8 00000a07 07d0 00000a07"),
    ("s2c", "4010 02 02 0000 000a 00000105 0064 00000105 0001 fffe 00000105 ff9c 00000105"),
    ("s2c", "0010 03 0000 0200 00000007  0010 04 0000 bf800000 00000007"
            "  8020 01 02 0000 8199 00000307 0000 00000306"),
    ("s2c", "0030 01 0000 3e800000 00000007  0030 02 0001 41200000 00000007"),
    ("s2c", "0040 01 3fc00000 c0100000 3f000000 00001007  0040 02 3f000000 3ec00000 00000007"),
]


def _h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def _rci_packets():
    """[(direction, [packets])] of RCI_STEPS, decoded big-endian."""
    ca, cp = RciDecoder("big", "server"), RciDecoder("big", "client")
    out = []
    for direction, text in RCI_STEPS:
        dec = ca if direction == "c2s" else cp
        pkts = dec.feed(_h(text))
        if direction == "c2s":
            for p in pkts:
                if isinstance(p, (ICaIq, CGtMtIq, CGtSnIq, CStIq)):
                    cp.expect_reply(p)
        out.append((direction, pkts))
    return out


def rci_events(byteorder: str = "big"):
    """(t, direction, bytes) of the whole RCI conversation in ``byteorder``."""
    return [(0.01 * i, d, b"".join(encode_rci(p, byteorder) for p in pkts))
            for i, (d, pkts) in enumerate(_rci_packets())]


def rdi_events(byteorder: str = "big"):
    """(t, "s2c", bytes) of the RDI examples in ``byteorder``."""
    out = []
    for i, (d, text) in enumerate(RDI_STEPS):
        pkts = RdiDecoder("big").feed(_h(text))
        out.append((0.01 * i, d, b"".join(encode_rdi(p, byteorder) for p in pkts)))
    return out


def decode_events(events, protocol: str = "rci", byteorder: str = "big"):
    """[(direction, packet)] of ``events`` decoded with bsal_ros.protocol."""
    if protocol == "rdi":
        dec = RdiDecoder(byteorder)
        return [(d, p) for _, d, data in events for p in dec.feed(data)]
    ca, cp = RciDecoder(byteorder, "server"), RciDecoder(byteorder, "client")
    out = []
    for _, d, data in events:
        for p in (ca if d == "c2s" else cp).feed(data):
            if d == "c2s" and isinstance(p, (ICaIq, CGtMtIq, CGtSnIq, CStIq)):
                cp.expect_reply(p)
            out.append((d, p))
    return out


def split(events, sizes=(1, 2, 3, 5, 7, 11)):
    """The same bytes in small pieces (a packet over several TCP segments)."""
    out, k = [], 0
    for t, d, data in events:
        pos = 0
        while pos < len(data):
            n = sizes[k % len(sizes)]
            out.append((t, d, data[pos:pos + n]))
            pos, k = pos + n, k + 1
    return out


def coalesce(events):
    """Consecutive chunks of one direction in one segment (several packets per segment)."""
    out = []
    for t, d, data in events:
        if out and out[-1][1] == d:
            out[-1] = (out[-1][0], d, out[-1][2] + data)
        else:
            out.append((t, d, data))
    return out


# ------------------------------------------- every code and sub-code of the registries
def _value(fmt: str, n: int):
    """A distinct wire value of struct code ``fmt`` (floats exact in a float32)."""
    return {"B": (7 + n) % 256, "H": 1000 + n, "h": -5 - n, "I": 0x00012D05 + n,
            "i": -100000 - n, "f": 1.5 + 0.25 * n}[fmt]


def layout_data(lay, n: int):
    """Item data of Layout ``lay`` (``n`` makes the values distinct)."""
    if lay.kind == "scalar":
        return max(lay.allowed) if lay.allowed is not None else _value(lay.fmt, n)
    vals = [_value(c, n + i) for i, c in enumerate(lay.fmt)]
    return lay.cls(*vals) if lay.kind == "named" else lay.cls(vals[0], None)


def registry_rci_packets():
    """[(direction, packet)]: one packet of every (code, sub-code) the RCI
    registry holds now, command bytes and reply layouts included; an inquiry
    before each reply."""
    from bsal_ros.protocol import rci_registry as reg
    from bsal_ros.protocol.rci_tables import REPLY_LAYOUTS
    out, n = [], 0
    for spec in reg.commands():
        if spec.wire is None or spec.sub_codes is None:
            continue
        to_cp = "c2s" if spec.server_receives else "s2c"
        shape = spec.wire.shape
        for sub in sorted(spec.sub_codes):
            n += 1
            if shape == "items" and spec.code + 1 not in REPLY_LAYOUTS:
                out.append((to_cp, spec.packet.one(sub, n, layout_data(spec.wire.layout, n))))
            elif shape == "commands":
                ci = spec.wire.commands
                for (s, byte), (kind, fmt) in sorted(ci.by_byte.items()):
                    if s == sub:
                        item = ci.item_type(kind, _value(fmt, n)) if fmt else ci.item_type(kind)
                        out.append((to_cp, spec.packet.one(sub, n, item)))
            elif shape == "reply":
                inquiry = reg.command(spec.code - 1).packet
                for (s, status), lay in sorted(REPLY_LAYOUTS[spec.code].items()):
                    if s == sub:
                        n += 1
                        out.append(("c2s", inquiry.one(sub, n, int(status))))
                        out.append(("s2c", spec.packet.one(sub, n, layout_data(lay, n))))
    return out


def registry_rci_events(byteorder: str = "big"):
    """The book's conversation (rci_events) with :func:`registry_rci_packets`
    before its closing Server Termination."""
    book = rci_events(byteorder)
    t0 = book[-1][0]
    extra = [(t0 + 0.001 * i, d, encode_rci(p, byteorder))
             for i, (d, p) in enumerate(registry_rci_packets())]
    return book[:-1] + extra + [(t0 + 1.0, *book[-1][1:])]


def registry_rdi_packets():
    """One RDI packet of every (code, sub-code) of an id-carrying RDI packet
    the registries hold now, then the examples' packets without ids."""
    from bsal_ros.protocol import RdiActuator, RdiCode, RdiMotor, RdiSensor
    from bsal_ros.protocol.wire_kinds import rdi_item_layouts
    cls = {RdiCode.Sn: RdiSensor, RdiCode.Mt: RdiMotor, RdiCode.Ac: RdiActuator}
    out = [cls[code].one(sub, i, layout_data(lay, i))
           for i, ((code, sub), lay) in enumerate(rdi_item_layouts().items())]
    book = RdiDecoder("big").feed(b"".join(_h(text) for _, text in RDI_STEPS))
    return book[:1] + out + [p for p in book if not hasattr(p, "items")][1:]


def registry_rdi_events(byteorder: str = "big"):
    """(t, "s2c", bytes) of :func:`registry_rdi_packets`, one per segment."""
    return [(0.01 * i, "s2c", encode_rdi(p, byteorder))
            for i, p in enumerate(registry_rdi_packets())]
