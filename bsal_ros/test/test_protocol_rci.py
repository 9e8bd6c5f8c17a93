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

"""RCI packets (001 chapter 4): golden vectors written by hand from the spec,
round trips of every packet in every form, streaming, context and errors."""

import random

import pytest

from bsal_ros.protocol import (AbsEncoderData, AccelData, CAcMt, CAcSn, CapInquiry, CapReply, CBsTm,
                               CBsTmIq, CCnAc, CGtMtIq, CGtMtRp, CGtSnIq, CGtSnRp, CRs, CStIq,
                               CStMt, CStRp, CStRpStatus, CStSn, CSvTm, decode_rci, encode_rci,
                               Form, GetMotorStatus, GetSensorStatus, ICaIq, ICaRp, IIId, IInCp,
                               MotorCommand, MotorCommandKind, MotorData, MotorType, ProtocolError,
                               RciCode, RciDecoder, RelEncoderData, SensorCommand,
                               SensorCommandCode, SensorType, StatusData, TermCode, Timeval,
                               UltrasonicData, VersionReply)

SPVAL, RESET = MotorCommandKind.SPVAL, MotorCommandKind.RESET
DATA_M, STAT_M = GetMotorStatus.DATA, GetMotorStatus.STATUS
DATA_S, STAT_S = GetSensorStatus.DATA, GetSensorStatus.STATUS


def h(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


# Golden vectors: (hex written by hand from 001 ch. 4 + DESIGN.md 3, packet,
# inquiry the decoder must know about or None). Big-endian.
GOLDEN = [
    # IIId: code, major 0, minor 3, "guest" NUL padded, key 00..0f, 24 reserved
    ("0010 00 03 6775657374 0000000000000000000000 000102030405060708090a0b0c0d0e0f"
     + "00" * 24, IIId(0, 3, b"guest", bytes(range(16)), bytes(24)), None),
    ("0011", IInCp(), None),
    ("0012 02 0201 18 0213 1a",
     ICaIq([(0x0201, CapInquiry.ACCESS), (0x0213, CapInquiry.VERSION)]), None),
    ("0012 00", ICaIq([]), None),
    ("0013 02 0201 23 0213 00 03",
     ICaRp([(0x0201, CapReply.PERMISSION), (0x0213, VersionReply(0, 3))]),
     ICaIq([(0x0201, CapInquiry.ACCESS), (0x0213, CapInquiry.VERSION)])),
    ("0013 01 0104 22", ICaRp([(0x0104, CapReply.NO_SUPPORT)]),
     ICaIq([(0x0104, CapInquiry.SUPPORT)])),
    # VERSION of an unknown command: the one-byte ERROR (001 4.5.5)
    ("0013 01 9999 20", ICaRp([(0x9999, CapReply.ERROR)]),
     ICaIq([(0x9999, CapInquiry.VERSION)])),
    ("0100 0100", CStIq(0x0100), None),
    ("0101 0201 09", CStRp(0x0201, CStRpStatus.ABORT), None),
    ("0102 0011", CSvTm(TermCode.AUTHENTICATE), None),
    ("0103 0201", CCnAc(0x0201), None),
    ("0904", CRs(rq_ack=True), None),
    ("0104", CRs(), None),
    ("0106", CBsTmIq(), None),
    ("0107 3a4fc880 0007a120", CBsTm(Timeval(978307200, 500000)), None),
    ("0200 c0 0001 01", CAcMt(MotorType.DC, [(1, 1)]), None),
    ("8a00 c0 02 0000 01 01", CAcMt(MotorType.DC, [(0, 1), (1, 1)], Form.GROUP, True), None),
    ("4200 c1 02 0000 00 0007 01", CAcMt(MotorType.PSERVO, [(0, 0), (7, 1)], Form.POLY), None),
    # Set DC motor 1 to -100 % duty: speedval 0x8fff
    ("0201 c0 0001 d0 8fff", CStMt(MotorType.DC, [(1, MotorCommand(SPVAL, 0x8FFF))]), None),
    ("0a01 c1 0000 d2", CStMt(MotorType.PSERVO, [(0, MotorCommand(RESET))], rq_ack=True), None),
    ("4201 c1 02 0000 d1 0064 0005 d2",
     CStMt(MotorType.PSERVO, [(0, MotorCommand(SPVAL, 0x0064)), (5, MotorCommand(RESET))],
           Form.POLY), None),
    ("8201 c0 02 0000 d0 8199 d0 0000",
     CStMt(MotorType.DC, [(0, MotorCommand(SPVAL, 0x8199)), (1, MotorCommand(SPVAL, 0))],
           Form.GROUP), None),
    ("8202 c0 02 0000 01 02", CGtMtIq(MotorType.DC, [(0, DATA_M), (1, STAT_M)], Form.GROUP),
     None),
    # reply: id 0 DATA speedval +20 % duty, id 1 STATUS on+ok 301 ms
    ("8203 c0 02 0000 8199 00012d05",
     CGtMtRp(MotorType.DC, [(0, MotorData(0x8199)), (1, StatusData(0x00012D05))], Form.GROUP),
     CGtMtIq(MotorType.DC, [(0, DATA_M), (1, STAT_M)], Form.GROUP)),
    # PSERVO DATA: speedval 0.1 rad/s + mposval 1.0 rad
    ("0203 c1 0000 0064 00200000", CGtMtRp(MotorType.PSERVO, [(0, MotorData(0x64, 0x200000))]),
     CGtMtIq(MotorType.PSERVO, [(0, DATA_M)])),
    ("4210 83 02 0000 01 000b 00", CAcSn(SensorType.ULTRASONIC, [(0, 1), (11, 0)], Form.POLY),
     None),
    ("0211 82 0000 90",
     CStSn(SensorType.RELENCODER, [(0, SensorCommand(SensorCommandCode.RELENCODER_CLEAR))]),
     None),
    ("8211 83 02 0000 91 00 91 06",
     CStSn(SensorType.ULTRASONIC, [(0, SensorCommand(SensorCommandCode.ULTRASONIC_ORDER, 0)),
                                   (1, SensorCommand(SensorCommandCode.ULTRASONIC_ORDER, 6))],
           Form.GROUP), None),
    ("0211 83 0003 92 0041",
     CStSn(SensorType.ULTRASONIC, [(3, SensorCommand(SensorCommandCode.ULTRASONIC_TIMING, 65))]),
     None),
    ("8212 83 0c 0000" + "04" * 12,
     CGtSnIq(SensorType.ULTRASONIC, [(i, DATA_S) for i in range(12)], Form.GROUP), None),
    ("8213 83 0c 0000 03e8 07d0 0bb8 0fa0 1388 1770 1b58 1f40 2328 2710 2af8 2ee0",
     CGtSnRp(SensorType.ULTRASONIC, [(i, UltrasonicData(1000 * (i + 1))) for i in range(12)],
             Form.GROUP),
     CGtSnIq(SensorType.ULTRASONIC, [(i, DATA_S) for i in range(12)], Form.GROUP)),
    ("4212 82 02 0000 04 0001 05",
     CGtSnIq(SensorType.RELENCODER, [(0, DATA_S), (1, STAT_S)], Form.POLY), None),
    ("4213 82 02 0000 0005 fff6 0001 00000107",
     CGtSnRp(SensorType.RELENCODER, [(0, RelEncoderData(5, -10)), (1, StatusData(0x107))],
             Form.POLY),
     CGtSnIq(SensorType.RELENCODER, [(0, DATA_S), (1, STAT_S)], Form.POLY)),
    ("0213 81 0000 3f800000", CGtSnRp(SensorType.ACCEL, [(0, AccelData(1.0))]),
     CGtSnIq(SensorType.ACCEL, [(0, DATA_S)])),
    ("0213 80 0002 ff38", CGtSnRp(SensorType.ABSENCODER, [(2, AbsEncoderData(-200))]),
     CGtSnIq(SensorType.ABSENCODER, [(2, DATA_S)])),
]


@pytest.mark.parametrize("hexstr,packet,inquiry", GOLDEN,
                         ids=[f"{i:02d}-{type(g[1]).__name__}" for i, g in enumerate(GOLDEN)])
def test_golden_decode_then_reencode(hexstr, packet, inquiry):
    wire = h(hexstr)
    dec = RciDecoder(role="any")
    if inquiry is not None:
        dec.expect_reply(inquiry)
    got = dec.feed(wire)
    dec.feed_eof()
    assert got == [packet]
    assert encode_rci(got[0]) == wire
    assert encode_rci(packet) == wire


def test_iiid_is_60_bytes():
    assert len(encode_rci(IIId(0, 3, b"guest"))) == 60


def test_little_endian_golden():
    wire = h("0102 c0 0100 d0 ff8f")  # CStMt DC id 1, -100 % duty, little-endian
    pkt = CStMt(MotorType.DC, [(1, MotorCommand(SPVAL, 0x8FFF))])
    assert encode_rci(pkt, "little") == wire
    assert RciDecoder("little").feed(wire) == [pkt]
    wire = h("0701 80c84f3a 20a10700")
    assert decode_rci(wire, "little") == [CBsTm(Timeval(978307200, 500000))]


# ------------------------------------------------------- every packet, every form
def all_samples():
    """(packet, inquiry or None) for every packet type and every allowed form."""
    out = [(IIId(0, 2, b"operator", b"k" * 16, bytes(24)), None), (IInCp(), None),
           (ICaIq([(0x0201, CapInquiry.ACCESS)]), None),
           (ICaRp([(0x0201, CapReply.NO_PERMISSION)]), ICaIq([(0x0201, CapInquiry.ACCESS)])),
           (CStIq(0x0201, True), None), (CStRp(0x0100, CStRpStatus.BUSY), None),
           (CSvTm(TermCode.NOACK), None), (CCnAc(0x0104, False), None), (CRs(), None),
           (CBsTmIq(True), None), (CBsTm(Timeval(-5, 999999), True), None)]
    for form in Form:
        n = 1 if form is Form.GENERAL else 3
        ids = [4 + i for i in range(n)] if form is not Form.POLY else [9, 2, 9][:n]
        for ack in (False, True):
            out += [
                (CAcMt(MotorType.PSERVO, [(i, i % 2) for i in ids], form, ack), None),
                (CAcSn(SensorType.ACCEL, [(i, 1) for i in ids], form, ack), None),
                (CStMt(MotorType.PSERVO,
                       [(i, MotorCommand(SPVAL, 0x8123) if i % 2 else MotorCommand(RESET))
                        for i in ids], form, ack), None),
                (CStSn(SensorType.ULTRASONIC,
                       [(i, SensorCommand(SensorCommandCode.ULTRASONIC_TIMING, 300 + i)
                         if i % 2 else SensorCommand(SensorCommandCode.ULTRASONIC_ORDER, i))
                        for i in ids], form, ack), None),
                (CGtMtIq(MotorType.DC, [(i, DATA_M) for i in ids], form, ack), None),
                (CGtSnIq(SensorType.RELENCODER, [(i, STAT_S) for i in ids], form, ack), None),
            ]
            for sub, datas in [(MotorType.DC, [MotorData(0x8010), StatusData(0x1207)]),
                               (MotorType.PSERVO, [MotorData(0x0010, 0x10AD0000)])]:
                items = [(i, datas[k % len(datas)]) for k, i in enumerate(ids)]
                inq = CGtMtIq(sub, [(i, STAT_M if isinstance(d, StatusData) else DATA_M)
                                    for i, d in items], form)
                out.append((CGtMtRp(sub, items, form, ack), inq))
            for sub, data in [(SensorType.ULTRASONIC, UltrasonicData(5831)),
                              (SensorType.RELENCODER, RelEncoderData(-3, 32767)),
                              (SensorType.ABSENCODER, AbsEncoderData(-32768)),
                              (SensorType.ACCEL, AccelData(-0.5)),
                              (SensorType.ACCEL, StatusData(0xFFFFFF07))]:
                items = [(i, data) for i in ids]
                st = STAT_S if isinstance(data, StatusData) else DATA_S
                out.append((CGtSnRp(sub, items, form, ack),
                            CGtSnIq(sub, [(i, st) for i in ids], form)))
    return out


SAMPLES = all_samples()


@pytest.mark.parametrize("byteorder", ["big", "little"])
def test_round_trip_every_packet_every_form(byteorder):
    seen = set()
    for pkt, inq in SAMPLES:
        wire = encode_rci(pkt, byteorder)
        dec = RciDecoder(byteorder, role="any")
        if inq is not None:
            dec.expect_reply(inq)
        assert dec.feed(wire) == [pkt], pkt
        assert dec.pending == 0 and dec.expected == []
        seen.add((type(pkt).__name__, getattr(pkt, "form", None)))
    for cls in (CAcMt, CStMt, CGtMtIq, CGtMtRp, CAcSn, CStSn, CGtSnIq, CGtSnRp):
        for form in Form:
            assert (cls.__name__, form) in seen
    for code in RciCode:
        assert any(type(p).__name__ == code.name or (code.name == "CAtSn" and
                                                     type(p) is CAcSn) for p, _ in SAMPLES)


def test_stream_in_arbitrary_chunks():
    rng = random.Random(3)
    # IInCp last: it ends the initialization phase and drops pending ICaIq
    samples = [s for s in SAMPLES if not isinstance(s[0], IInCp)] + [(IInCp(), None)]
    wire = b"".join(encode_rci(p) for p, _ in samples)
    want = [p for p, _ in samples]
    for chunking in ("bytes", "random", "all"):
        dec = RciDecoder(role="any")
        for _, q in samples:
            if q is not None:
                dec.expect_reply(q)
        got, pos = [], 0
        while pos < len(wire):
            step = 1 if chunking == "bytes" else (rng.randint(1, 64) if chunking == "random"
                                                  else len(wire))
            got += dec.feed(wire[pos:pos + step])
            pos += step
        dec.feed_eof()
        assert got == want


def test_server_and_client_roles():
    set_motor = encode_rci(CStMt.one(MotorType.DC, 0, MotorCommand(SPVAL, 1)))
    assert RciDecoder(role="server").feed(set_motor)
    with pytest.raises(ProtocolError, match="not valid towards the client"):
        RciDecoder(role="client").feed(set_motor)
    term = encode_rci(CSvTm(TermCode.USER))
    assert RciDecoder(role="client").feed(term) == [CSvTm(TermCode.USER)]
    with pytest.raises(ProtocolError):
        RciDecoder(role="server").feed(term)
    with pytest.raises(ValueError):
        RciDecoder(role="robot")


def test_cstrp_consumes_unanswerable_inquiry():
    dec = RciDecoder(role="client")
    q = CGtMtIq.one(MotorType.DC, 9, GetMotorStatus.TIME)
    dec.expect_reply(q)
    assert dec.feed(encode_rci(CStRp(RciCode.CGtMtIq, CStRpStatus.NO_SUPPORT)))
    assert dec.expected == []
    # a status inquiry about CGtMtIq is answered by CStRp too: oldest match first
    s = CStIq(RciCode.CGtMtIq)
    dec.expect_reply(s)
    dec.expect_reply(q)
    dec.feed(encode_rci(CStRp(RciCode.CGtMtIq, CStRpStatus.IDLE)))
    assert dec.expected == [q]


def test_control_phase_drops_unanswered_capability_inquiries():
    """The peer's IInCp may come before its ICaRp (001 4.5.3: "at any time"
    after IIId), so the inquiry still waits; the first control-phase packet
    means no ICaRp can follow (unanswered ACCESS inquiries are legal)."""
    dec = RciDecoder(role="client")
    dec.expect_reply(ICaIq([(0x0201, CapInquiry.ACCESS)]))
    assert dec.feed(h("0011")) == [IInCp()]
    assert dec.feed(h("0013 01 0201 23")) == [ICaRp([(0x0201, CapReply.PERMISSION)])]
    dec.expect_reply(ICaIq([(0x0201, CapInquiry.ACCESS)]))
    dec.feed(h("0011"))
    assert len(dec.expected) == 1
    dec.feed(h("0107 3a4fc880 0007a120"))             # CBsTm: the control phase
    assert dec.expected == []


def test_reply_matched_by_id_when_reordered():
    inq = CGtSnIq(SensorType.ULTRASONIC, [(3, DATA_S), (7, STAT_S)], Form.POLY)
    rp = CGtSnRp(SensorType.ULTRASONIC, [(7, StatusData(0x0507)), (3, UltrasonicData(99))],
                 Form.POLY)
    assert decode_rci(encode_rci(rp), expect=[inq]) == [rp]


# ------------------------------------------------------------------- errors
BAD = [
    ("0300", "unknown RCI code", 0, "0300"),
    ("0105", "unknown RCI code", 0, "0105"),
    ("4100 0100", "poly/group on non-multi", 0, "4100"),
    ("c201 c0 01 0000 d0 0000", "both POLY and GROUP", 0, "c201"),
    ("8200 c0 00", "zero count", 3, "00"),
    ("4201 c0 00", "zero count", 3, "00"),
    ("0201 c0 0001 d2", "bad motor command byte", 5, "d2"),
    ("0201 c1 0001 d0 0000", "bad motor command byte", 5, "d0"),
    ("0211 82 0000 91 00", "bad sensor command byte", 5, "91"),
    ("0211 80 0000 90", "bad id_sub_code", 2, "80"),
    ("0201 c2 0001 d0 0000", "bad id_sub_code", 2, "c2"),
    ("0200 c0 0001 02", "undefined data byte", 5, "02"),
    ("0202 c0 0001 04", "undefined data byte", 5, "04"),
    ("0101 0100 07", "bad status_resp", 4, "07"),
    ("0102 0016", "bad term_code", 2, "0016"),
    ("0012 01 0201 17", "bad inq_type", 5, "17"),
    ("0810", "RQ_ACK on initialization", 0, "0810"),
    ("0213 83 0000 0001", "without a pending", 0, "0213"),
    ("0013 01 0201 23", "without a pending", 0, "0013"),
    ("8200 c0 02 ffff 01 01", "past 0xFFFF", 4, "ffff"),
]


@pytest.mark.parametrize("hexstr,msg,offset,data", BAD, ids=[b[1] for b in BAD])
def test_bad_input_raises_protocol_error(hexstr, msg, offset, data):
    dec = RciDecoder(role="any")
    prefix = h("0104")  # a good packet first: offsets are absolute in the stream
    with pytest.raises(ProtocolError, match=msg) as ei:
        dec.feed(prefix + h(hexstr))
    err = ei.value
    assert err.offset == offset + 2
    assert err.data == h(data)
    assert err.packets == [CRs()]
    with pytest.raises(ProtocolError, match="earlier error"):
        dec.feed(h("0104"))
    dec.reset()
    assert dec.feed(h("0104")) == [CRs()]


def test_truncated_at_end_of_stream():
    wire = encode_rci(CStMt.one(MotorType.DC, 0, MotorCommand(SPVAL, 5)))
    for cut in range(1, len(wire)):
        dec = RciDecoder()
        assert dec.feed(wire[:cut]) == []
        assert dec.pending == cut
        with pytest.raises(ProtocolError, match="truncated") as ei:
            dec.feed_eof()
        assert ei.value.offset == 0 and ei.value.data == wire[:cut]


def test_reply_errors():
    inq = CGtSnIq(SensorType.ULTRASONIC, [(0, DATA_S)])
    with pytest.raises(ProtocolError, match="not asked"):
        decode_rci(h("0213 83 0005 0001"), expect=[inq])
    with pytest.raises(ProtocolError, match="differs"):
        decode_rci(h("0213 82 0000 0001 0002"), expect=[inq])
    time_inq = CGtSnIq(SensorType.ULTRASONIC, [(0, GetSensorStatus.TIME)])
    with pytest.raises(ProtocolError, match="no reply layout"):
        decode_rci(h("0213 83 0000 0001"), expect=[time_inq])
    with pytest.raises(TypeError):
        RciDecoder().expect_reply(CRs())


def test_encoder_rejects_bad_packets():
    bad = [
        CStMt(MotorType.DC, [(0, MotorCommand(RESET))]),              # RESET is PSERVO only
        CStMt(MotorType.DC, [(0, 5)]),
        CStMt(MotorType.DC, []),
        CAcMt(MotorType.DC, [(0, 1), (1, 1)], Form.GENERAL),           # general = 1 item
        CAcMt(MotorType.DC, [(0, 1), (2, 1)], Form.GROUP),             # ids not consecutive
        CAcMt(MotorType.DC, [(i, 1) for i in range(256)], Form.POLY),  # count > 255
        CAcMt(0x42, [(0, 1)]),
        CAcMt(MotorType.DC, [(70000, 1)]),
        CStSn(SensorType.RELENCODER, [(0, SensorCommand(SensorCommandCode.ULTRASONIC_ORDER))]),
        CStSn(SensorType.ULTRASONIC, [(0, SensorCommand(SensorCommandCode.ULTRASONIC_ORDER,
                                                        300))]),
        CGtMtRp(MotorType.DC, [(0, MotorData(1, 2))]),                 # DC has no mposval
        CGtMtRp(MotorType.PSERVO, [(0, MotorData(1))]),
        CGtSnRp(SensorType.ACCEL, [(0, UltrasonicData(1))]),
        CStRp(0x0100, 0x42),
        IIId(user_id=b"x" * 17),
        ICaRp([]),
        CAcMt(MotorType.DC, [(0, 1)], 7),                              # bad form
        CBsTm("soon"),
        "not a packet",
    ]
    for p in bad:
        with pytest.raises(ProtocolError):
            encode_rci(p)
    with pytest.raises(ValueError):
        encode_rci(CRs(), byteorder="middle")


def test_identification_repr_leaves_the_key_out():
    from bsal_ros.protocol import IIId
    key = bytes.fromhex("0123456789abcdef0123456789abcdef")
    text = repr(IIId(0, 3, b"demo", key))
    assert "demo" in text
    assert "auth_key" not in text and key.hex() not in text and repr(key) not in text


def test_version_error_answer_does_not_desynchronise():
    """Issue 13: `0013 01 9999 20` then `0011` once swallowed a byte: the
    ERROR answer to a VERSION inquiry is one byte, the next packet intact."""
    dec = RciDecoder("big", role="client")
    dec.expect_reply(ICaIq([(0x9999, CapInquiry.VERSION), (0x0201, CapInquiry.VERSION)]))
    wire = bytes.fromhex("0013 02 9999 20 0201 00 03 0011".replace(" ", ""))
    for cut in range(len(wire) + 1):          # in any two chunks
        d = RciDecoder("big", role="client")
        d.expect_reply(ICaIq([(0x9999, CapInquiry.VERSION), (0x0201, CapInquiry.VERSION)]))
        got = d.feed(wire[:cut]) + d.feed(wire[cut:])
        assert got == [ICaRp([(0x9999, CapReply.ERROR), (0x0201, VersionReply(0, 3))]),
                       IInCp()], cut
        assert d.pending == 0
    assert encode_rci(ICaRp([(0x9999, CapReply.ERROR)])) == bytes.fromhex("0013019999" "20")


def test_version_reply_with_the_error_byte_as_major_is_refused():
    with pytest.raises(ProtocolError):
        encode_rci(ICaRp([(0x0201, VersionReply(0x20, 0))]))
