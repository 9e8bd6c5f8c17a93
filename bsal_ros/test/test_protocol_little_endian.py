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

"""Every RCI and RDI packet in both byte orders, from bytes typed by hand.

The big-endian bytes are the golden vectors of test_protocol_rci.py and
test_protocol_rdi.py (written from 001 chapters 4 and 5 and docs/PROTOCOL.md).
Here each of them has its little-endian twin, typed by hand from the same
field tables (every multi-byte field, the code included, with its bytes
reversed; one-byte fields, byte strings and the reserved area as they are),
not produced by our encoder. Each fixture, in each order, is decoded and its
fields compared one by one with the values the vector states, and our
encoder's output is compared with the typed bytes. A coverage check makes
sure every RCI code and every RDI code and sub code has a fixture in both
orders.
"""

from __future__ import annotations

import dataclasses
from enum import IntEnum

import pytest

from bsal_ros.protocol import (CapInquiry, CapReply, decode_rdi, encode_rci, encode_rdi, ICaIq,
                               ICaRp, RciCode, RciDecoder)
from bsal_ros.protocol.rdi import (RdiActuatorType, RdiBaseTime, RdiMotorType, RdiOrientEgo,
                                   RdiOrientOmni, RdiSensorType)

from test_protocol_rci import GOLDEN as RCI_GOLDEN
from test_protocol_rdi import GOLDEN as RDI_GOLDEN

# big-endian golden hex -> the same packet little-endian, typed by hand
RCI_LITTLE = {
    "0010 00 03 6775657374 0000000000000000000000 000102030405060708090a0b0c0d0e0f" + "00" * 24:
        "1000 00 03 6775657374 0000000000000000000000 000102030405060708090a0b0c0d0e0f"
        + "00" * 24,
    "0011": "1100",
    "0012 02 0201 18 0213 1a": "1200 02 0102 18 1302 1a",
    "0012 00": "1200 00",
    "0013 02 0201 23 0213 00 03": "1300 02 0102 23 1302 00 03",
    "0013 01 0104 22": "1300 01 0401 22",
    "0013 01 9999 20": "1300 01 9999 20",
    "0100 0100": "0001 0001",
    "0101 0201 09": "0101 0102 09",
    "0102 0011": "0201 1100",
    "0103 0201": "0301 0102",
    "0904": "0409",
    "0104": "0401",
    "0106": "0601",
    "0107 3a4fc880 0007a120": "0701 80c84f3a 20a10700",
    "0200 c0 0001 01": "0002 c0 0100 01",
    "8a00 c0 02 0000 01 01": "008a c0 02 0000 01 01",
    "4200 c1 02 0000 00 0007 01": "0042 c1 02 0000 00 0700 01",
    "0201 c0 0001 d0 8fff": "0102 c0 0100 d0 ff8f",
    "0a01 c1 0000 d2": "010a c1 0000 d2",
    "4201 c1 02 0000 d1 0064 0005 d2": "0142 c1 02 0000 d1 6400 0500 d2",
    "8201 c0 02 0000 d0 8199 d0 0000": "0182 c0 02 0000 d0 9981 d0 0000",
    "8202 c0 02 0000 01 02": "0282 c0 02 0000 01 02",
    "8203 c0 02 0000 8199 00012d05": "0382 c0 02 0000 9981 052d0100",
    "0203 c1 0000 0064 00200000": "0302 c1 0000 6400 00002000",
    "4210 83 02 0000 01 000b 00": "1042 83 02 0000 01 0b00 00",
    "0211 82 0000 90": "1102 82 0000 90",
    "8211 83 02 0000 91 00 91 06": "1182 83 02 0000 91 00 91 06",
    "0211 83 0003 92 0041": "1102 83 0300 92 4100",
    "8212 83 0c 0000" + "04" * 12: "1282 83 0c 0000" + "04" * 12,
    "8213 83 0c 0000 03e8 07d0 0bb8 0fa0 1388 1770 1b58 1f40 2328 2710 2af8 2ee0":
        "1382 83 0c 0000 e803 d007 b80b a00f 8813 7017 581b 401f 2823 1027 f82a e02e",
    "4212 82 02 0000 04 0001 05": "1242 82 02 0000 04 0100 05",
    "4213 82 02 0000 0005 fff6 0001 00000107": "1342 82 02 0000 0500 f6ff 0100 07010000",
    "0213 81 0000 3f800000": "1302 81 0000 0000803f",
    "0213 80 0002 ff38": "1302 80 0200 38ff",
}

# fixtures of our own where a golden vector cannot tell the orders apart
# (0x9999 reads the same both ways): (big, little, packet, inquiry)
RCI_EXTRA = [
    ("0013 01 7fee 20", "1300 01 ee7f 20", ICaRp([(0x7FEE, CapReply.ERROR)]),
     ICaIq([(0x7FEE, CapInquiry.VERSION)])),
]

RDI_LITTLE = {
    "0010 01 0003 1234 00ffff07": "1000 01 0300 3412 07ffff00",
    "8010 01 02 0000 03e8 00000a07 07d0 00000a07":
        "1080 01 02 0000 e803 070a0000 d007 070a0000",
    "4010 02 02 0000 000a 00000105 0064 00000105 0001 fffe 00000105 ff9c 00000105":
        "1040 02 02 0000 0a00 05010000 6400 05010000 0100 feff 05010000 9cff 05010000",
    "0010 03 0000 0200 00000007": "1000 03 0000 0002 07000000",
    "0010 04 0000 bf800000 00000007": "1000 04 0000 000080bf 07000000",
    "8020 01 02 0000 8199 00000307 0000 00000306":
        "2080 01 02 0000 9981 07030000 0000 06030000",
    "0030 01 0000 3e800000 00000007": "3000 01 0000 0000803e 07000000",
    "0030 02 0001 41200000 00000007": "3000 02 0100 00002041 07000000",
    "0040 01 3fc00000 c0100000 3f000000 00001007":
        "4000 01 0000c03f 000010c0 0000003f 07100000",
    "0040 02 3f000000 3ec00000 00000007": "4000 02 0000003f 0000c03e 07000000",
    "0800 01 3a4fc880 00000000": "0008 01 80c84f3a 00000000",
}


def h(text: str) -> bytes:
    """Hex with spaces -> bytes."""
    return bytes.fromhex(text.replace(" ", ""))


def fields(value):
    """A packet as plain nested values, field by field (dataclass and named
    tuple fields by name, enums as their numbers)."""
    if dataclasses.is_dataclass(value):
        return {"type": type(value).__name__,
                **{f.name: fields(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"type": type(value).__name__,
                **{name: fields(getattr(value, name)) for name in value._fields}}
    if isinstance(value, (list, tuple)):
        return [fields(v) for v in value]
    if isinstance(value, IntEnum):
        return int(value)
    return value


def differences(got, want, path="packet") -> list[str]:
    """Each field where ``got`` differs from ``want``, with its path."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for key in sorted(set(want) | set(got)):
            out += differences(got.get(key, "<missing>"), want.get(key, "<missing>"),
                               f"{path}.{key}")
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return [f"{path}: {len(got)} items, expected {len(want)}"]
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            out += differences(g, w, f"{path}[{i}]")
        return out
    if got != want or type(got) is not type(want) and not (
            isinstance(got, (int, float)) and isinstance(want, (int, float))):
        return [f"{path}: {got!r}, expected {want!r}"]
    return []


def rci_cases():
    """(big hex, little hex, packet, inquiry) of every RCI fixture."""
    return [(be, RCI_LITTLE[be], pkt, inq) for be, pkt, inq in RCI_GOLDEN] + RCI_EXTRA


def decode_one_rci(wire: bytes, order: str, inquiry):
    dec = RciDecoder(order, role="any")
    if inquiry is not None:
        dec.expect_reply(inquiry)
    got = dec.feed(wire)
    dec.feed_eof()
    assert len(got) == 1, got
    return got[0]


def test_every_golden_vector_has_its_little_endian_twin():
    assert sorted(RCI_LITTLE) == sorted(be for be, _, _ in RCI_GOLDEN)
    assert sorted(RDI_LITTLE) == sorted(be for be, _ in RDI_GOLDEN)
    for be, le, *_ in rci_cases():
        # same length, and not the same bytes (each holds a multi-byte code)
        assert len(h(be)) == len(h(le)) and h(be) != h(le), be


@pytest.mark.parametrize("order", ["big", "little"])
@pytest.mark.parametrize("case", rci_cases(), ids=lambda c: f"{type(c[2]).__name__}-{c[0][:9]}")
def test_rci_fixture_decoded_field_by_field_and_encoded(case, order):
    be, le, packet, inquiry = case
    wire = h(be if order == "big" else le)
    got = decode_one_rci(wire, order, inquiry)
    assert differences(fields(got), fields(packet)) == []
    assert encode_rci(packet, order) == wire


@pytest.mark.parametrize("order", ["big", "little"])
@pytest.mark.parametrize("case", RDI_GOLDEN, ids=lambda c: f"{type(c[1]).__name__}-{c[0][:9]}")
def test_rdi_fixture_decoded_field_by_field_and_encoded(case, order):
    be, packet = case
    wire = h(be if order == "big" else RDI_LITTLE[be])
    got = decode_rdi(wire, order)
    assert len(got) == 1, got
    assert differences(fields(got[0]), fields(packet)) == []
    assert encode_rdi(packet, order) == wire


def test_the_fixtures_cover_every_rci_code_in_both_orders():
    codes = set()
    for be, le, packet, inquiry in rci_cases():
        for order, text in (("big", be), ("little", le)):
            wire = h(text)
            code = int.from_bytes(wire[:2], order) & ~0xC800     # flags off
            assert type(decode_one_rci(wire, order, inquiry)).__name__ == RciCode(code).name
            codes.add((order, code))
    assert codes == {(o, int(c)) for o in ("big", "little") for c in RciCode}


def test_the_fixtures_cover_every_rdi_code_and_sub_code():
    seen = set()
    for be, packet in RDI_GOLDEN:
        seen.add((type(packet).__name__, int(getattr(packet, "sub_code", 0))))
    wanted = ({("RdiSensor", int(s)) for s in RdiSensorType}
              | {("RdiMotor", int(s)) for s in RdiMotorType}
              | {("RdiActuator", int(s)) for s in RdiActuatorType}
              | {(RdiOrientEgo.__name__, 0), (RdiOrientOmni.__name__, 0),
                 (RdiBaseTime.__name__, 0)})
    assert seen == wanted
