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

"""A seeded corpus of malformed RCI input for the fault campaign.

Built from the protocol library: valid packets are encoded with
:func:`~bsal_ros.protocol.encode_rci` and then truncated, bit-flipped, given
unknown codes, impossible flags, absurd item counts, undefined values, the
wrong byte order, sent in the wrong phase or the wrong direction; plus plain
random bytes. Same seed, same corpus (``random.Random(seed)``).

Each :class:`Entry` says in which phase of a session it is sent:

* ``init``    - the first bytes on a fresh connection (initialization phase);
* ``control`` - after a complete, successful handshake (control phase).

Nothing here opens a socket; the campaign replays the entries.
"""

from __future__ import annotations

from dataclasses import dataclass
import random
import struct

from bsal_ros.protocol.constants import (CapInquiry, CStRpStatus, GetMotorStatus, GetSensorStatus,
                                         MotorType, RciCode, SensorCommandCode, SensorType,
                                         TermCode)
from bsal_ros.protocol.rci import (CAcMt, CAcSn, CBsTm, CBsTmIq, CGtMtIq, CGtMtRp, CGtSnIq,
                                   CGtSnRp, CRs, CStIq, CStMt, CStSn, CSvTm, encode_rci, ICaIq,
                                   IIId, IInCp, MotorCommand, MotorCommandKind, MotorData,
                                   SensorCommand, StatusData, UltrasonicData)
from bsal_ros.protocol.rci_registry import all_codes
from bsal_ros.protocol.values import speedval_pack, Timeval

#: the demo operator of config/users.yaml (public; the gateway refuses it off
#: loopback): init-phase entries identify as it, so that what follows the
#: IIId is reached instead of ending at the authentication
DEMO_USER, DEMO_KEY = b"demo", bytes.fromhex("0123456789abcdef0123456789abcdef")

INIT, CONTROL = "init", "control"

#: every category the corpus draws from, in round-robin order (so that a
#: short corpus still has each of them)
CATEGORIES = (
    "truncated",            # a valid packet cut short, then the connection closes
    "unknown_code",         # an id_code that is no RCI packet
    "bad_flags",            # POLY+GROUP, poly/group on a single code, RQ_ACK on init packets
    "absurd_count",         # count 0, 255 items announced and few sent, group past 0xFFFF, ...
    "bad_value",            # undefined sub-code, activation, status, command byte
    "init_in_control",      # IIId / IInCp / ICaIq after the handshake
    "control_before_init",  # a control command as the first packet
    "wrong_direction",      # packets only the control process may send
    "byte_order",           # little-endian packets to a big-endian gateway
    "bitflip",              # a valid packet with 1..3 bits flipped
    "random",               # random bytes
    "oversize",             # a large blob (bounded: at most 64 KiB)
)


@dataclass(frozen=True)
class Entry:
    category: str
    phase: str          # INIT or CONTROL
    data: bytes
    note: str

    def describe(self) -> str:
        return f"{self.category}/{self.phase}: {self.note} ({len(self.data)} B)"


def _u16(v: int) -> bytes:
    return struct.pack(">H", v & 0xFFFF)


def demo_iiid(user: bytes = DEMO_USER, key: bytes = DEMO_KEY) -> bytes:
    return encode_rci(IIId(0, 3, user, key))


def valid_control_packets(rng: random.Random) -> list:
    """Valid control-phase packets a control application may send (harmless
    speeds: at most 10 % duty)."""
    duty = rng.choice([0.0, 5.0, 10.0])
    return [
        CStIq(int(RciCode.CStMt), rq_ack=rng.random() < 0.5),
        CRs(rq_ack=True),
        CBsTmIq(rq_ack=rng.random() < 0.5),
        CAcMt.one(MotorType.DC, 0, rng.randint(0, 1), rq_ack=True),
        CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                speedval_pack(True, duty)), rq_ack=True),
        CGtMtIq.one(MotorType.DC, 0, GetMotorStatus.DATA),
        CGtMtIq.one(MotorType.PSERVO, 0, GetMotorStatus.STATUS),
        CAcSn.group(SensorType.ULTRASONIC, 0, [1] * 12, rq_ack=True),
        CStSn.one(SensorType.RELENCODER, 0, SensorCommand(SensorCommandCode.RELENCODER_CLEAR, 0),
                  rq_ack=True),
        CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12),
        CGtSnIq.poly(SensorType.ULTRASONIC, [(i, GetSensorStatus.STATUS) for i in (0, 3, 7)]),
        CGtSnIq.one(SensorType.RELENCODER, 0, GetSensorStatus.DATA),
    ]


def valid_init_packets(rng: random.Random) -> list:
    return [IIId(0, 3, DEMO_USER, DEMO_KEY),
            ICaIq([(int(RciCode.CStMt), CapInquiry.ACCESS)]), IInCp()]


def _truncated(rng):
    if rng.random() < 0.3:
        pkt, phase = rng.choice(valid_init_packets(rng)[:2]), INIT
    else:
        pkt, phase = rng.choice(valid_control_packets(rng)), CONTROL
    wire = encode_rci(pkt)
    cut = rng.randint(1, len(wire) - 1)
    return Entry("truncated", phase, wire[:cut], f"{type(pkt).__name__} cut at {cut}/{len(wire)}")


def _unknown_code(rng):
    while True:
        code = rng.getrandbits(16)
        if (code & ~0xC800) not in all_codes():
            break
    tail = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 16)))
    return Entry("unknown_code", rng.choice([INIT, CONTROL]), _u16(code) + tail,
                 f"code 0x{code:04x}")


def _bad_flags(rng):
    k = rng.randint(0, 3)
    if k == 0:      # POLY and GROUP together
        wire = bytearray(encode_rci(CGtSnIq.poly(SensorType.ULTRASONIC,
                                                 [(0, GetSensorStatus.DATA)])))
        wire[0] |= 0xC0
        return Entry("bad_flags", CONTROL, bytes(wire), "POLY+GROUP on CGtSnIq")
    if k == 1:      # poly/group on a code that does not allow it
        code = int(RciCode.CRs) | rng.choice([0x4000, 0x8000])
        return Entry("bad_flags", CONTROL, _u16(code), f"poly/group on CRs 0x{code:04x}")
    if k == 2:      # RQ_ACK on an initialization packet (in the init phase)
        wire = bytearray(demo_iiid())
        wire[0] |= 0x08
        return Entry("bad_flags", INIT, bytes(wire), "RQ_ACK on IIId")
    return Entry("bad_flags", CONTROL, _u16(int(RciCode.IInCp) | 0x0800), "RQ_ACK on IInCp")


def _absurd_count(rng):
    k = rng.randint(0, 5)
    if k == 0:      # count 0
        return Entry("absurd_count", CONTROL,
                     _u16(int(RciCode.CGtSnIq) | 0x4000) + bytes([SensorType.ULTRASONIC, 0]),
                     "poly CGtSnIq count 0")
    if k == 1:      # 255 items announced, a few sent, then close
        body = b"".join(_u16(i) + bytes([GetSensorStatus.DATA]) for i in range(3))
        return Entry("absurd_count", CONTROL,
                     _u16(int(RciCode.CGtSnIq) | 0x4000) + bytes([SensorType.ULTRASONIC, 255])
                     + body, "poly CGtSnIq count 255 with 3 items")
    if k == 2:      # group past 0xFFFF
        return Entry("absurd_count", CONTROL,
                     _u16(int(RciCode.CAcMt) | 0x8000) + bytes([MotorType.DC, 2]) + _u16(0xFFFF)
                     + bytes([1, 1]), "group CAcMt first id 0xFFFF count 2")
    if k == 3:      # a full, well-formed 255-item poly of unknown ids (INVALID_ID expected)
        ids = rng.sample(range(100, 0xFFFF), 255)
        pkt = CGtSnIq.poly(SensorType.ULTRASONIC, [(i, GetSensorStatus.DATA) for i in ids])
        return Entry("absurd_count", CONTROL, encode_rci(pkt), "poly CGtSnIq 255 unknown ids")
    if k == 4:      # a full 255-item group Set Motor (ids 0..254; all but 0 unknown)
        pkt = CStMt.group(MotorType.DC, 0, [MotorCommand(MotorCommandKind.SPVAL,
                                                         speedval_pack(True, 0.0))] * 255,
                          rq_ack=True)
        return Entry("absurd_count", CONTROL, encode_rci(pkt), "group CStMt 255 items")
    # ICaIq with 255 inquiries announced and 2 sent (init phase, after IIId)
    body = _u16(int(RciCode.CStMt)) + bytes([CapInquiry.ACCESS])
    return Entry("absurd_count", INIT,
                 demo_iiid() + _u16(int(RciCode.ICaIq)) + bytes([255]) + body * 2,
                 "ICaIq count 255 with 2 items")


def _bad_value(rng):
    k = rng.randint(0, 4)
    if k == 0:
        sub = rng.choice([0x00, 0x7F, 0xC2, 0xFF])
        return Entry("bad_value", CONTROL, _u16(int(RciCode.CAcMt)) + bytes([sub]) + _u16(0)
                     + bytes([1]), f"CAcMt sub-code 0x{sub:02x}")
    if k == 1:
        return Entry("bad_value", CONTROL, _u16(int(RciCode.CAcSn)) + bytes([SensorType.ACCEL])
                     + _u16(0) + bytes([rng.randint(2, 255)]), "CAcSn activation byte > 1")
    if k == 2:
        return Entry("bad_value", CONTROL, _u16(int(RciCode.CGtMtIq)) + bytes([MotorType.DC])
                     + _u16(0) + bytes([rng.choice([0x00, 0x04, 0x77])]),
                     "CGtMtIq undefined status code")
    if k == 3:
        return Entry("bad_value", CONTROL, _u16(int(RciCode.CStMt)) + bytes([MotorType.DC])
                     + _u16(0) + bytes([0xD1]) + _u16(0), "CStMt undefined command byte")
    return Entry("bad_value", CONTROL, _u16(int(RciCode.CStSn)) + bytes([SensorType.ACCEL])
                 + _u16(0) + bytes([0x90]), "CStSn on an accelerometer")


def _init_in_control(rng):
    k = rng.randint(0, 2)
    pkt = [IIId(0, 3, DEMO_USER, DEMO_KEY), IInCp(),
           ICaIq([(int(RciCode.CRs), CapInquiry.SUPPORT)])][k]
    return Entry("init_in_control", CONTROL, encode_rci(pkt), type(pkt).__name__)


def _control_before_init(rng):
    pkt = rng.choice(valid_control_packets(rng))
    return Entry("control_before_init", INIT, encode_rci(pkt), f"{type(pkt).__name__} first")


def _wrong_direction(rng):
    pkts = [CSvTm(TermCode.ERROR), CBsTm(Timeval(1, 0)),
            CGtSnRp.one(SensorType.ULTRASONIC, 0, UltrasonicData(100)),
            CGtMtRp.one(MotorType.DC, 0, MotorData(0, None)),
            CGtSnRp.one(SensorType.ULTRASONIC, 0, StatusData(7))]
    pkt = rng.choice(pkts)
    return Entry("wrong_direction", rng.choice([INIT, CONTROL]), encode_rci(pkt),
                 f"{type(pkt).__name__} towards the server")


def _byte_order(rng):
    if rng.random() < 0.3:
        return Entry("byte_order", INIT, encode_rci(IIId(0, 3, DEMO_USER, DEMO_KEY), "little"),
                     "little-endian IIId")
    pkt = rng.choice(valid_control_packets(rng))
    return Entry("byte_order", CONTROL, encode_rci(pkt, "little"),
                 f"little-endian {type(pkt).__name__}")


def _bitflip(rng):
    if rng.random() < 0.25:
        pkt, phase = rng.choice(valid_init_packets(rng)), INIT
    else:
        pkt, phase = rng.choice(valid_control_packets(rng)), CONTROL
    wire = bytearray(encode_rci(pkt))
    flips = []
    for _ in range(rng.randint(1, 3)):
        bit = rng.randrange(len(wire) * 8)
        wire[bit // 8] ^= 1 << (bit % 8)
        flips.append(bit)
    return Entry("bitflip", phase, bytes(wire), f"{type(pkt).__name__} bits {flips}")


def _random(rng):
    n = rng.choice([1, 2, 3, 7, 60, rng.randint(1, 512)])
    return Entry("random", rng.choice([INIT, CONTROL]),
                 bytes(rng.getrandbits(8) for _ in range(n)), f"{n} random bytes")


def _oversize(rng):
    n = rng.choice([8192, 65536])
    if rng.random() < 0.5:
        data = bytes(rng.getrandbits(8) for _ in range(n))
        return Entry("oversize", rng.choice([INIT, CONTROL]), data, f"{n} random bytes")
    # many valid inquiries back to back, then garbage: the gateway must keep up
    one = encode_rci(CGtSnIq.one(SensorType.RELENCODER, 0, GetSensorStatus.DATA))
    data = one * (n // len(one)) + b"\xff\xff"
    return Entry("oversize", CONTROL, data, f"{n // len(one)} inquiries then 0xffff")


_MAKERS = {"truncated": _truncated, "unknown_code": _unknown_code, "bad_flags": _bad_flags,
           "absurd_count": _absurd_count, "bad_value": _bad_value,
           "init_in_control": _init_in_control, "control_before_init": _control_before_init,
           "wrong_direction": _wrong_direction, "byte_order": _byte_order, "bitflip": _bitflip,
           "random": _random, "oversize": _oversize}


def build_corpus(n: int, seed: int = 7, categories=CATEGORIES) -> list[Entry]:
    """``n`` entries, categories in round-robin order, reproducible from ``seed``."""
    rng = random.Random(seed)
    cats = list(categories)
    return [_MAKERS[cats[i % len(cats)]](rng) for i in range(n)]


#: status names for reports
STATUS_NAMES = {int(s): s.name for s in CStRpStatus}
TERM_NAMES = {int(t): t.name for t in TermCode}

__all__ = ["Entry", "CATEGORIES", "INIT", "CONTROL", "build_corpus", "valid_control_packets",
           "STATUS_NAMES", "TERM_NAMES"]
