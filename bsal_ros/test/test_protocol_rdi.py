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

"""RDI packets (001 chapter 5): hand-written golden vectors, every form, errors."""

import random

import pytest

from bsal_ros.protocol import (AbsEncoderReading, AccelReading, DcMotorReading, decode_rdi,
                               DriveReading, encode_rdi, encode_rdi_frame, Form, ProtocolError,
                               RdiActuator, RdiActuatorType, RdiBaseTime, RdiDecoder, RdiMotor,
                               RdiMotorType, RdiOrientEgo, RdiOrientOmni, RdiSensor, RdiSensorType,
                               RelEncoderReading, SteerReading, Timeval, UltrasonicReading)

US, REL, ABS, ACC = (RdiSensorType.ULTRASONIC, RdiSensorType.RELENCODER,
                     RdiSensorType.ABSENCODER, RdiSensorType.ACCEL)


def h(s):
    return bytes.fromhex(s.replace(" ", ""))


GOLDEN = [
    ("0010 01 0003 1234 00ffff07", RdiSensor(US, [(3, UltrasonicReading(0x1234, 0x00FFFF07))])),
    ("8010 01 02 0000 03e8 00000a07 07d0 00000a07",
     RdiSensor(US, [(0, UltrasonicReading(1000, 0xA07)), (1, UltrasonicReading(2000, 0xA07))],
               Form.GROUP)),
    ("4010 02 02 0000 000a 00000105 0064 00000105 0001 fffe 00000105 ff9c 00000105",
     RdiSensor(REL, [(0, RelEncoderReading(10, 0x105, 100, 0x105)),
                     (1, RelEncoderReading(-2, 0x105, -100, 0x105))], Form.POLY)),
    ("0010 03 0000 0200 00000007", RdiSensor(ABS, [(0, AbsEncoderReading(512, 7))])),
    ("0010 04 0000 bf800000 00000007", RdiSensor(ACC, [(0, AccelReading(-1.0, 7))])),
    ("8020 01 02 0000 8199 00000307 0000 00000306",
     RdiMotor(RdiMotorType.DC, [(0, DcMotorReading(0x8199, 0x307)),
                                (1, DcMotorReading(0, 0x306))], Form.GROUP)),
    ("0030 01 0000 3e800000 00000007",
     RdiActuator(RdiActuatorType.STEER, [(0, SteerReading(0.25, 7))])),
    ("0030 02 0001 41200000 00000007",
     RdiActuator(RdiActuatorType.DRIVE, [(1, DriveReading(10.0, 7))])),
    ("0040 01 3fc00000 c0100000 3f000000 00001007", RdiOrientEgo(1.5, -2.25, 0.5, 0x1007)),
    ("0040 02 3f000000 3ec00000 00000007", RdiOrientOmni(0.5, 0.375, 7)),
    ("0800 01 3a4fc880 00000000", RdiBaseTime(Timeval(978307200, 0))),
]


@pytest.mark.parametrize("hexstr,packet", GOLDEN, ids=[str(i) for i in range(len(GOLDEN))])
def test_golden(hexstr, packet):
    wire = h(hexstr)
    got = decode_rdi(wire)
    assert got == [packet]
    assert encode_rdi(got[0]) == wire
    assert encode_rdi(packet) == wire


def test_little_endian_golden():
    wire = h("1000 01 0300 3412 07ffff00")
    pkt = RdiSensor(US, [(3, UltrasonicReading(0x1234, 0x00FFFF07))])
    assert encode_rdi(pkt, "little") == wire
    assert decode_rdi(wire, "little") == [pkt]


def samples():
    out = [RdiOrientEgo(1.0, 2.0, -3.0, 5), RdiOrientOmni(-0.5, 1.25, 0xFFFFFFFF),
           RdiBaseTime(Timeval(-1, 5))]
    data = [(RdiSensor, US, UltrasonicReading(65535, 7)),
            (RdiSensor, REL, RelEncoderReading(-32768, 1, 32767, 2)),
            (RdiSensor, ABS, AbsEncoderReading(-1, 3)),
            (RdiSensor, ACC, AccelReading(9.75, 4)),
            (RdiMotor, RdiMotorType.DC, DcMotorReading(0x8FFF, 5)),
            (RdiActuator, RdiActuatorType.STEER, SteerReading(-1.5, 6)),
            (RdiActuator, RdiActuatorType.DRIVE, DriveReading(123.5, 7))]
    for cls, sub, d in data:
        out.append(cls.one(sub, 7, d))
        out.append(cls.group(sub, 0, [d] * 12))
        out.append(cls.poly(sub, [(11, d), (2, d)]))
    return out


@pytest.mark.parametrize("byteorder", ["big", "little"])
def test_round_trip_every_packet_every_form(byteorder):
    pk = samples()
    for p in pk:
        assert RdiDecoder(byteorder).feed(encode_rdi(p, byteorder)) == [p]
    wire = encode_rdi_frame(pk, byteorder)
    rng = random.Random(5)
    for mode in ("bytes", "random"):
        dec, got, pos = RdiDecoder(byteorder), [], 0
        while pos < len(wire):
            step = 1 if mode == "bytes" else rng.randint(1, 100)
            got += dec.feed(wire[pos:pos + step])
            pos += step
        dec.feed_eof()
        assert got == pk


BAD = [
    ("0050 01", "unknown RDI code", 0, "0050"),
    ("4040 01 3fc00000 c0100000 3f000000 00001007", "without id", 0, "4040"),
    ("8800 01 00000000 00000000", "without id", 0, "8800"),
    ("c010 01 01 0000 0000 00000000", "both POLY and GROUP", 0, "c010"),
    ("8010 01 00", "zero count", 3, "00"),
    ("0010 05 0000", "bad id_sub_code", 2, "05"),
    ("0020 02 0000", "bad id_sub_code", 2, "02"),
    ("0040 03", "bad id_sub_code", 2, "03"),
    ("0800 02", "bad id_sub_code", 2, "02"),
]


@pytest.mark.parametrize("hexstr,msg,offset,data", BAD, ids=[b[1] for b in BAD])
def test_bad_input(hexstr, msg, offset, data):
    good = encode_rdi(RdiBaseTime(Timeval(1, 2)))
    with pytest.raises(ProtocolError, match=msg) as ei:
        RdiDecoder().feed(good + h(hexstr))
    assert ei.value.offset == offset + len(good)
    assert ei.value.data == h(data)
    assert ei.value.packets == [RdiBaseTime(Timeval(1, 2))]


def test_truncated():
    wire = encode_rdi(RdiSensor.group(US, 0, [UltrasonicReading(1, 2)] * 12))
    dec = RdiDecoder()
    assert dec.feed(wire[:-1]) == []
    with pytest.raises(ProtocolError, match="truncated"):
        dec.feed_eof()


def test_encoder_rejects():
    for p in [RdiSensor(US, [(0, AccelReading(1.0, 2))]),
              RdiSensor(9, [(0, UltrasonicReading(1, 2))]),
              RdiSensor(US, [(0, UltrasonicReading(70000, 2))]),
              RdiMotor(RdiMotorType.DC, [], Form.POLY),
              RdiOrientEgo("x", 0, 0, 0),
              RdiOrientOmni(0, 0, -1),
              RdiSensor(ACC, [(0, AccelReading(1e39, 0))]),
              RdiSensor(US, [(0, UltrasonicReading(1, 2))], "group")]:
        with pytest.raises(ProtocolError):
            encode_rdi(p)
