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

"""Every hex example of docs/PROTOCOL.md sections 3 (RCI) and 5 (RDI) decodes
with the library to the values the document states beside it (typed into
``RCI_STATED`` and ``RDI_STATED`` below from the document's words, in its
order) and re-encodes to the same bytes, so the document cannot drift from
the code."""

from datetime import datetime, timezone
import pathlib
import re

from bsal_ros.protocol import (CGtMtIq, CGtSnIq, encode_rci, encode_rdi, ICaIq, RciDecoder,
                               RdiDecoder)
from bsal_ros.protocol.constants import (CapInquiry, CapReply, CStRpStatus, Form, GetMotorStatus,
                                         GetSensorStatus, MotorType, RCI_RQ_ACK, RciCode,
                                         RdiActuatorType, RdiMotorType, RdiSensorType,
                                         SensorCommandCode, SensorType, TermCode)
from bsal_ros.protocol.rci import (AbsEncoderData, AccelData, CAcMt, CAcSn, CBsTm, CBsTmIq, CCnAc,
                                   CGtMtRp, CGtSnRp, CRs, CStIq, CStMt, CStRp, CStSn, CSvTm,
                                   ICaRp, IIId, IInCp, MotorCommand, MotorCommandKind, MotorData,
                                   RelEncoderData, SensorCommand, StatusData, UltrasonicData,
                                   VersionReply)
from bsal_ros.protocol.rci_commands import CSmTp, SimPose
from bsal_ros.protocol.rci_registry import commands
from bsal_ros.protocol.rdi import (AbsEncoderReading, AccelReading, DcMotorReading, DriveReading,
                                   RdiActuator, RdiBaseTime, RdiMotor, RdiOrientEgo,
                                   RdiOrientOmni, RdiSensor, RelEncoderReading, SteerReading,
                                   UltrasonicReading)
from bsal_ros.protocol.values import mposval_pack_rad, speedval_pack, statval_pack, Timeval

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md"
HEX = re.compile(r"`([0-9a-f]{2,}(?: [0-9a-f]{2,})*)`")


def examples(start: str, end: str):
    text = DOC.read_text()
    sec = text[text.index(start):text.index(end)]
    out = []
    for line in sec.splitlines():
        order = "little" if "ittle-endian" in line else "big"
        for m in HEX.findall(line):
            out.append((bytes.fromhex(m.replace(" ", "")), order))
    return out


def at(*ymd_hms, usec=0):
    """A UTC date as the Timeval the document writes it as."""
    return Timeval(int(datetime(*ymd_hms, tzinfo=timezone.utc).timestamp()), usec)


def spval(value, duty=True):
    """A speed as the document states it: % duty, or rad/s (``duty=False``)."""
    return MotorCommand(MotorCommandKind.SPVAL, speedval_pack(duty, value))


RESET = MotorCommand(MotorCommandKind.RESET)
OK = statval_pack(True, True, True, 0)                    # "on/up/ok at 0 ms"
DC, PSERVO = MotorType.DC, MotorType.PSERVO
US, REL, ABS, ACC = (SensorType.ULTRASONIC, SensorType.RELENCODER, SensorType.ABSENCODER,
                     SensorType.ACCEL)
M_DATA, M_STATUS = GetMotorStatus.DATA, GetMotorStatus.STATUS
S_DATA, S_STATUS = GetSensorStatus.DATA, GetSensorStatus.STATUS
minus_100 = spval(-100.0)

# What docs/PROTOCOL.md says each RCI example is, in the document's order.
RCI_STATED = [
    IIId(0, 3, b"guest", bytes(range(16))),                  # user guest, RCI 0.3, key 00..0f
    IInCp(),
    IInCp(),                                                 # "one that waits reads 0011"
    ICaIq([(RciCode.CStMt, CapInquiry.ACCESS), (RciCode.CGtSnRp, CapInquiry.VERSION)]),
    ICaRp([(RciCode.CStMt, CapReply.PERMISSION), (RciCode.CGtSnRp, VersionReply(0, 3))]),
    ICaIq([(0x0999, CapInquiry.VERSION)]),                   # VERSION of the unknown 0x0999
    ICaRp([(0x0999, CapReply.ERROR)]),
    CStIq(RciCode.CStIq),                                    # is the CP alive?
    CStRp(RciCode.CStMt, CStRpStatus.ABORT),
    CSvTm(TermCode.AUTHENTICATE),                            # bad authentication
    CCnAc(RciCode.CStMt),                                    # CStMt done
    CRs(),
    CRs(rq_ack=True),
    CBsTmIq(),
    CBsTm(at(2001, 1, 1, usec=500000)),                      # 2001-01-01T00:00:00.5Z
    CStIq(RciCode.CStMt | RCI_RQ_ACK),                       # about CStMt with RQ_ACK
    CStRp(RciCode.CStMt, CStRpStatus.IDLE),                  # answered with the base code
    CAcMt.one(DC, 1, 1),
    CAcMt.group(DC, 0, [1, 1], rq_ack=True),
    CAcMt.poly(PSERVO, [(0, 0), (7, 1)]),
    CStMt.one(DC, 1, minus_100),
    CStMt.one(PSERVO, 0, RESET, rq_ack=True),
    CStMt.poly(PSERVO, [(0, spval(0.100, duty=False)), (5, RESET)]),
    CStMt.group(DC, 0, [spval(20.0), spval(0.0, duty=False)]),
    CGtMtIq.group(DC, 0, [M_DATA, M_STATUS]),
    CGtMtRp(DC, [(0, MotorData(speedval_pack(True, 20.0))),
                 (1, StatusData(statval_pack(True, False, True, 301)))], Form.GROUP),
    CGtMtIq.one(PSERVO, 0, M_DATA),
    CGtMtRp(PSERVO, [(0, MotorData(speedval_pack(False, 0.100), mposval_pack_rad(1.0)))],
            Form.GENERAL),
    CAcSn.poly(US, [(0, 1), (11, 0)]),
    CStSn.one(REL, 0, SensorCommand(SensorCommandCode.RELENCODER_CLEAR)),
    CStSn.group(US, 0, [SensorCommand(SensorCommandCode.ULTRASONIC_ORDER, 0),
                        SensorCommand(SensorCommandCode.ULTRASONIC_ORDER, 6)]),
    CStSn.one(US, 3, SensorCommand(SensorCommandCode.ULTRASONIC_TIMING, 65)),
    CSmTp(0xF0, [(0, SimPose(1500, -250, 1571))], Form.GENERAL, rq_ack=True),
    CGtSnIq.group(US, 0, [S_DATA] * 12),
    CGtSnRp(US, [(i, UltrasonicData(1000 * (i + 1))) for i in range(12)], Form.GROUP),
    CGtSnIq.poly(REL, [(0, S_DATA), (1, S_STATUS)]),
    CGtSnRp(REL, [(0, RelEncoderData(5, -10)), (1, StatusData(statval_pack(True, True, True, 1)))],
            Form.POLY),
    CGtSnIq.one(ACC, 0, S_DATA),
    CGtSnRp(ACC, [(0, AccelData(1.0))], Form.GENERAL),
    CGtSnIq.one(ABS, 2, S_DATA),
    CGtSnRp(ABS, [(2, AbsEncoderData(-200))], Form.GENERAL),
    CStMt.one(DC, 1, minus_100),                             # little-endian, the same CStMt
]

# What docs/PROTOCOL.md says each RDI example is, in the document's order.
RDI_STATED = [
    RdiSensor(RdiSensorType.ULTRASONIC,
              [(3, UltrasonicReading(0x1234, statval_pack(True, True, True, 65535)))]),
    RdiSensor(RdiSensorType.ULTRASONIC,
              [(i, UltrasonicReading(d, statval_pack(True, True, True, 10)))
               for i, d in ((0, 1000), (1, 2000))], Form.GROUP),
    RdiSensor(RdiSensorType.RELENCODER,
              [(i, RelEncoderReading(dc, statval_pack(True, False, True, 1), c,
                                     statval_pack(True, False, True, 1)))
               for i, dc, c in ((0, 10, 100), (1, -2, -100))], Form.POLY),
    RdiSensor(RdiSensorType.ABSENCODER, [(0, AbsEncoderReading(512, OK))]),
    RdiSensor(RdiSensorType.ACCEL, [(0, AccelReading(-1.0, OK))]),
    RdiMotor(RdiMotorType.DC, [(0, DcMotorReading(speedval_pack(True, 20.0),
                                                  statval_pack(True, True, True, 3))),
                               (1, DcMotorReading(speedval_pack(False, 0.0),
                                                  statval_pack(False, True, True, 3)))],
             Form.GROUP),
    RdiActuator(RdiActuatorType.STEER, [(0, SteerReading(0.25, OK))]),
    RdiActuator(RdiActuatorType.DRIVE, [(1, DriveReading(10.0, OK))]),
    RdiOrientEgo(1.5, -2.25, 0.5, statval_pack(True, True, True, 16)),
    RdiOrientOmni(0.5, 0.375, OK),
    RdiBaseTime(at(2001, 1, 1)),
    RdiSensor(RdiSensorType.ULTRASONIC,                       # little-endian, the first row
              [(3, UltrasonicReading(0x1234, statval_pack(True, True, True, 65535)))]),
]


def test_the_stated_values_are_not_our_encoder_s_output():
    """Two of the stated values checked against bytes typed here, so a
    codec that packs and unpacks wrongly in the same way cannot pass."""
    assert speedval_pack(True, -100.0) == 0x8FFF and speedval_pack(True, 20.0) == 0x8199
    assert statval_pack(True, False, True, 301) == 0x00012D05
    assert mposval_pack_rad(1.0) == 0x00200000


def test_rci_examples_decode_and_reencode():
    ex = examples("### 3.2 Initialization phase", "## 4. Bit-packed values")
    assert len(ex) >= 30
    decs = {"big": RciDecoder("big", role="any"), "little": RciDecoder("little", role="any")}
    assert len(ex) == len(RCI_STATED), [w.hex(" ") for w, _ in ex]
    seen = set()
    for (wire, order), stated in zip(ex, RCI_STATED):
        dec = decs[order]
        pkts = dec.feed(wire)
        assert len(pkts) == 1 and dec.pending == 0, wire.hex(" ")
        p = pkts[0]
        assert p == stated, f"{wire.hex(' ')}: decoded {p!r}, the document says {stated!r}"
        assert encode_rci(p, order) == wire
        if isinstance(p, (ICaIq, CGtMtIq, CGtSnIq)):
            dec.expect_reply(p)      # the doc gives each reply right after its inquiry
        seen.add(type(p).__name__)
    # every RCI packet type has an example
    assert seen == {s.packet.__name__ for s in commands() if s.unsupported is None}


def test_rdi_examples_decode_and_reencode():
    ex = examples("## 5. RDI packets", "## 6. Decoder behaviour")
    assert len(ex) == len(RDI_STATED), [w.hex(" ") for w, _ in ex]
    seen = set()
    for (wire, order), stated in zip(ex, RDI_STATED):
        pkts = RdiDecoder(order).feed(wire)
        assert len(pkts) == 1, wire.hex(" ")
        assert pkts[0] == stated, \
            f"{wire.hex(' ')}: decoded {pkts[0]!r}, the document says {stated!r}"
        assert encode_rdi(pkts[0], order) == wire
        seen.add((type(pkts[0]).__name__, getattr(pkts[0], "sub_code", None)))
    assert len(seen) == 10           # every RDI packet kind has an example
