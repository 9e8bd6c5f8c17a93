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

"""The one RCI command spec (bsal_ros/protocol/rci_registry.py, rci_commands.py).

Every code of the book's table 4.8.1 is declared; a declaration that leaves
out or blanks any field, or names a port method that does not exist, fails
with a message naming the code and what is missing, and so does a command the
session dispatches without an entry in the one handler table
(rci/handlers.py) or an entry for a code it never dispatches; the tables
built from the declarations are those the code had before; the C++ header
and docs/PROTOCOL.md agree with them; and the worked example of
docs/EXTENDING.md (test/led_command.py, Set LED) goes through the codecs and
a session from its one declaration."""

from __future__ import annotations

import dataclasses
import pathlib
import re

import pytest

from bsal_ros.core.device_classes import DC_MOTOR
from bsal_ros.protocol.constants import (CapInquiry, CapReply, CStRpStatus, MotorCommandCode,
                                         MotorType, RciCode, SensorCommandCode, SensorType,
                                         TermCode)
from bsal_ros.protocol.errors import ProtocolError
from bsal_ros.protocol.rci import (CAcMt, CAcSn, CCnAc, CGtMtIq, CGtMtRp, CGtSnIq, CGtSnRp,
                                   CStIq, CStMt, CStRp, CStSn, CSvTm, decode_rci, encode_rci,
                                   ICaRp, RciDecoder, SensorCommand)
from bsal_ros.protocol.rci_registry import (BOTH, CLASS_OF, command, COMMAND_ITEMS, commands,
                                            RciCommandError, RciCommandSpec, receives,
                                            register_command, SUB_CODES, TO_CLIENT, TO_SERVER,
                                            tracked_codes, unregister_command, write_codes)
from bsal_ros.protocol.rci_tables import MOTOR_SUBS, SENSOR_SUBS, SET_SENSOR_SUBS
from bsal_ros.rci import RciSession, RobotPort
from bsal_ros.rci.client import RciClient
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.handlers import (check_handlers, check_port_methods, forward, HANDLERS,
                                   register_handler, SessionParts)
from bsal_ros.rci.handlers_base import BaseTimeInquiry, Ignore, Reset, StatusInquiry
from bsal_ros.rci.handlers_motor import ActivateMotor, GetMotor, SetMotor
from bsal_ros.rci.handlers_sensor import ActivateSensor, GetSensor, SetSensor
from bsal_ros.rci.users import DEMO_KEY

import led_command as led
from test_rci_gateway import connect, GUEST_KEY, ServerThread

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The book's table 4.8.1 (seed 001), as printed: name, acronym, value. Its
# slips (seeds README): "RCI-IIInCp" is Initialization Completed, IInCp
# elsewhere; Activate Sensor is written both RCI-CAtSn and RCI-CAcSn.
BOOK_4_8_1 = """
Identification	RCI-IIId	0x0010
Initialization Completed	RCI-IIInCp	0x0011
Capability Inquiry	RCI-ICaIq	0x0012
Capability Reply	RCI-ICaRp	0x0013
Status Inquiry	RCI-CStIq	0x0100
Status Reply	RCI-CStRp	0x0101
Server Termination	RCI-CSvTm	0x0102
Control Acknowledge	RCI-CCnAc	0x0103
Reset	RCI-CRs	0x0104
Base Time Inquiry	RCI-CBsTmIq	0x0106
Base Time	RCI-CBsTm	0x0107
Activate Motor	RCI-CAcMt	0x0200
Set Motor	RCI-CStMt	0x0201
Get Motor Inquiry	RCI-CGtMtIq	0x0202
Get Motor Reply	RCI-CGtMtRp	0x0203
Activate Sensor	RCI-CAtSn	0x0210
Set Sensor	RCI-CStSn	0x0211
Get Sensor Inquiry	RCI-CGtSnIq	0x0212
Get Sensor Reply	RCI-CGtSnRp	0x0213
"""
SLIPS = {"IIInCp": "IInCp", "CAtSn": "CAcSn"}
BOOK = [(title, SLIPS.get(acr[4:], acr[4:]), int(code, 16))
        for title, acr, code in (line.split("\t") for line in BOOK_4_8_1.strip().splitlines())]
BOOK_CODES = {code for _, _, code in BOOK}
SPECS = [command(code) for _, _, code in BOOK]
FIELDS = [f.name for f in dataclasses.fields(RciCommandSpec)]


def kwargs_of(spec: RciCommandSpec) -> dict:
    return {f: getattr(spec, f) for f in FIELDS}


# ----------------------------------------------------------- (a) table 4.8.1
@pytest.mark.parametrize("title,name,code", BOOK, ids=[n for _, n, _ in BOOK])
def test_every_code_of_table_4_8_1_is_declared(title, name, code):
    spec = command(code)
    assert spec is not None, f"0x{code:04x} {name} ({title}) has no declaration"
    assert (spec.name, spec.title, int(spec.code)) == (name, title, code)
    assert RciCode[name] == code
    if spec.unsupported is None:
        assert spec.packet is not None and spec.wire is not None
        assert CLASS_OF[code] is spec.packet
    else:
        assert spec.unsupported.strip(), f"{name}: unsupported without a reason"


def test_rcicode_is_the_books_table():
    # RciCode lists the book's codes; a command added later lives in its spec
    assert {int(c) for c in RciCode} == BOOK_CODES <= {int(s.code) for s in commands()}


# ------------------------------------------ (b) a field left out or blanked
REMOVALS = [(s, f) for s in SPECS for f in FIELDS]


@pytest.mark.parametrize("spec,field", REMOVALS,
                         ids=[f"{s.name}-{f}" for s, f in REMOVALS])
def test_a_declaration_without_one_field_fails_naming_code_and_field(spec, field):
    kw = kwargs_of(spec)
    del kw[field]
    with pytest.raises(RciCommandError) as ei:
        RciCommandSpec(**kw)
    msg = str(ei.value)
    assert f"'{field}'" in msg and "missing" in msg, msg
    assert spec.name in msg or field == "name", msg
    if field != "code":
        assert f"0x{int(spec.code):04x}" in msg, msg


def _blank(value):
    if isinstance(value, str):
        return ""
    if isinstance(value, tuple):
        return ()
    if isinstance(value, dict):
        return {}
    return None


BLANKS = [(s, f) for s in SPECS for f in FIELDS
          if f not in ("code", "writes", "tracked", "unsupported")
          and getattr(s, f) not in (None, (), "")]


@pytest.mark.parametrize("spec,field", BLANKS, ids=[f"{s.name}-{f}" for s, f in BLANKS])
def test_a_declaration_with_one_field_blanked_fails_naming_code_and_field(spec, field):
    with pytest.raises(RciCommandError) as ei:
        dataclasses.replace(spec, **{field: _blank(getattr(spec, field))})
    msg = str(ei.value)
    assert f"0x{int(spec.code):04x}" in msg and f"'{field}'" in msg, msg


WRITERS = [s for s in SPECS if s.writes]


@pytest.mark.parametrize("spec", WRITERS, ids=[s.name for s in WRITERS])
def test_a_write_command_not_tracked_fails(spec):
    # the old failure: a command missing from TRACKED answered CStIq NO_SUPPORT
    with pytest.raises(RciCommandError, match=rf"0x{int(spec.code):04x}.*'tracked'"):
        dataclasses.replace(spec, tracked=False)


DISPATCHED = [s for s in SPECS if s.dispatched]
PORT_USES = [(s, m) for s in SPECS for m in s.port_methods]


@pytest.mark.parametrize("spec", DISPATCHED, ids=[s.name for s in DISPATCHED])
def test_a_dispatched_command_without_a_handler_fails_naming_the_code(spec):
    check_handlers(commands(), HANDLERS, RobotPort)
    without = {code: make for code, make in HANDLERS.items() if code != spec.code}
    with pytest.raises(RciCommandError) as ei:
        check_handlers(commands(), without, RobotPort)
    msg = str(ei.value)
    assert f"0x{int(spec.code):04x}" in msg and "no handler" in msg, msg


def test_a_handler_for_a_code_the_session_never_dispatches_fails_naming_the_code():
    with pytest.raises(RciCommandError, match=r"0x0102 \(CSvTm\): a handler, but the session "
                                              r"never dispatches it"):
        register_handler(RciCode.CSvTm, forward)
    with pytest.raises(RciCommandError, match=r"0x0010 \(IIId\): a handler"):
        check_handlers(commands(), {**HANDLERS, RciCode.IIId: forward}, RobotPort)
    with pytest.raises(RciCommandError, match="0x0105: a handler for a code that is not declared"):
        register_handler(0x0105, forward)
    assert RciCode.CSvTm not in HANDLERS and 0x0105 not in HANDLERS


@pytest.mark.parametrize("spec,method", PORT_USES, ids=[f"{s.name}-{m}" for s, m in PORT_USES])
def test_a_port_method_that_does_not_exist_fails_naming_code_and_method(spec, method):
    methods = tuple(m + "_gone" if m == method else m for m in spec.port_methods)
    bad = dataclasses.replace(spec, port_methods=methods)
    with pytest.raises(RciCommandError) as ei:
        check_port_methods(bad, RobotPort)
    msg = str(ei.value)
    assert f"0x{int(spec.code):04x}" in msg and f"'{method}_gone'" in msg, msg


def test_a_code_name_or_packet_is_owned_once():
    cstmt = command(RciCode.CStMt)
    register_command(cstmt)                      # the same declaration again: no-op
    with pytest.raises(RciCommandError, match="0x0201 .CStXx.: code is CStMt's"):
        register_command(dataclasses.replace(cstmt, name="CStXx"))
    with pytest.raises(RciCommandError, match="name is 0x0201's"):
        register_command(dataclasses.replace(led.SPEC, name="CStMt"))
    with pytest.raises(RciCommandError, match="packet class CStMt is 0x0201's") as ei:
        register_command(dataclasses.replace(led.SPEC, packet=CStMt))
    assert "0x0220" in str(ei.value)
    assert command(led.LED_CODE) is None


def test_contradictions_are_refused():
    cases = {"carries no ids": dict(kwargs_of(command(RciCode.CRs)), sub_codes=MOTOR_SUBS),
             "lacks the RCI_MULTI bit": dict(kwargs_of(led.SPEC), code=0x0120),
             "for commands a control application sends":
             dict(kwargs_of(command(RciCode.CGtSnRp)), tracked=True),
             "unknown shape": dict(kwargs_of(command(RciCode.CRs)), wire="bare"),
             "not one of": dict(kwargs_of(command(RciCode.CRs)), direction="in"),
             "set, but the command is unsupported":
             dict(kwargs_of(command(RciCode.CRs)), unsupported="not yet")}
    for what, kw in cases.items():
        with pytest.raises(RciCommandError, match=what):
            RciCommandSpec(**kw)


# ------------------------------------------ the tables built from the spec
def test_the_built_tables_are_the_ones_written_before():
    """For the book's codes (a command added later adds to them)."""
    C = RciCode
    book = BOOK_CODES.__and__
    assert book(write_codes()) == {C.CRs, C.CAcMt, C.CStMt, C.CAcSn, C.CStSn}
    assert book(tracked_codes()) == {C.CStIq, C.CRs, C.CAcMt, C.CStMt, C.CGtMtIq, C.CAcSn,
                                     C.CStSn, C.CGtSnIq}
    both = {C.IIId, C.IInCp, C.ICaIq, C.ICaRp, C.CStIq, C.CStRp, C.CCnAc}
    assert book(receives("server")) == both | {C.CRs, C.CBsTmIq, C.CAcMt, C.CStMt, C.CGtMtIq,
                                               C.CAcSn, C.CStSn, C.CGtSnIq}
    assert book(receives("client")) == both | {C.CSvTm, C.CBsTm, C.CGtMtRp, C.CGtSnRp}
    subs = {c: d for c, d in SUB_CODES.items() if c in BOOK_CODES}
    assert subs == {C.CAcMt: MOTOR_SUBS, C.CStMt: MOTOR_SUBS, C.CGtMtIq: MOTOR_SUBS,
                    C.CGtMtRp: MOTOR_SUBS, C.CAcSn: SENSOR_SUBS, C.CStSn: SET_SENSOR_SUBS,
                    C.CGtSnIq: SENSOR_SUBS, C.CGtSnRp: SENSOR_SUBS}
    assert book(set(COMMAND_ITEMS)) == {C.CStMt, C.CStSn}
    # the handler objects' constructors only keep their parts
    parts = SessionParts(*[None] * len(SessionParts._fields))
    handlers = {code: type(make(parts)) for code, make in HANDLERS.items() if code in BOOK_CODES}
    assert handlers == {C.CStIq: StatusInquiry, C.CRs: Reset, C.CStRp: Ignore,
                        C.CCnAc: Ignore, C.CBsTmIq: BaseTimeInquiry, C.CAcMt: ActivateMotor,
                        C.CStMt: SetMotor, C.CGtMtIq: GetMotor, C.CAcSn: ActivateSensor,
                        C.CStSn: SetSensor, C.CGtSnIq: GetSensor}
    assert {s.direction for s in commands()} == {TO_SERVER, TO_CLIENT, BOTH}


# ----------------------------------------------------- (c) the C++ header
def _defines() -> dict:
    text = (ROOT / "legacy" / "include" / "bsal-protocols.h").read_text()
    return {m[1]: int(m[2], 16) for m in
            re.finditer(r"^#define\s+(RCI_\w+)\s+(0x[0-9a-fA-F]+)\b", text, re.M)}


def test_the_cpp_headers_packet_codes_are_the_specs():
    defs = _defines()
    codes = {n[4:]: v for n, v in defs.items() if re.fullmatch(r"RCI_[A-Z][A-Za-z]*[a-z]\w*", n)
             and "_" not in n[4:]}
    # every code the header defines is declared with that value; every code
    # of the book is in the header (a later command: only if C++ programs send it)
    assert codes == {s.name: int(s.code) for s in commands() if s.name in codes}
    assert set(codes.values()) >= BOOK_CODES


def test_the_cpp_headers_sub_codes_and_command_bytes_are_the_specs():
    defs = _defines()
    subs = {}
    for code, domain in SUB_CODES.items():
        for value, member in domain.items():
            if not isinstance(member, (MotorType, SensorType)):
                continue        # a kind registered later (test/bumper_kind.py): not the book's
            group = "MOTOR" if isinstance(member, MotorType) else "SENSOR"
            subs[f"RCI_{group}_{member.name}"] = value
    assert subs == {n: v for n, v in defs.items()
                    if re.fullmatch(r"RCI_(MOTOR|SENSOR)_[A-Z]+", n)}
    cmds = {}
    for items in COMMAND_ITEMS.values():
        for (sub, byte) in items.by_byte:
            member = (MotorCommandCode if byte >= 0xD0 else SensorCommandCode)(byte)
            group = "MOTOR" if byte >= 0xD0 else "SENSOR"
            cmds[f"RCI_{group}_{member.name}"] = byte
    assert cmds == {n: v for n, v in defs.items()
                    if re.fullmatch(r"RCI_(MOTOR|SENSOR)_[A-Z]+_[A-Z_]+", n)}


# ------------------------------------------------------ (d) docs/PROTOCOL.md
def _section(start: str, end: str) -> str:
    text = (ROOT / "docs" / "PROTOCOL.md").read_text()
    return text[text.index(start):text.index(end)]


def test_protocol_md_code_table_is_the_specs():
    rows = {}
    for line in _section("### 3.1 Codes", "| group | constants |").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for packet, code in zip(cells[0::3], cells[1::3]):
            m = re.fullmatch(r"RCI-(\w+)(?: \((\w+)\))? (.+)", packet)
            if m:
                rows[m[1]] = (m[3], int(code, 16))
    assert rows == {s.name: (s.title, int(s.code)) for s in commands()}


def test_protocol_md_direction_table_is_the_specs():
    sent_by = {"CA": TO_SERVER, "CP": TO_CLIENT, "both": BOTH}
    rows = {}
    for line in _section("| packet | sent by |", "### 3.2").splitlines()[2:]:
        if not line.startswith("|"):
            break
        name, who, guest, status = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[name] = (sent_by[who], guest == "refused", status == "reported")
    assert rows == {s.name: (s.direction, s.writes, s.tracked) for s in commands()}


# ------------------------------------- the worked example: Set LED (0x0220)
@pytest.fixture
def led_registered():
    led.register()
    yield
    led.unregister()


def test_set_led_goes_through_the_codecs(led_registered):
    one = led.CStLd.one(led.LED_RGB, 1, led.LedColor(255, 128, 0), rq_ack=True)
    assert encode_rci(one) == bytes.fromhex("0a20 e0 0001 ff8000")
    group = led.CStLd.group(led.LED_RGB, 0, [led.LedColor(1, 2, 3), led.LedColor(4, 5, 6)])
    for pkt in (one, group):
        wire = encode_rci(pkt)
        assert RciDecoder(role="server").feed(wire) == [pkt]
        with pytest.raises(ProtocolError, match="CStLd not valid towards the client"):
            decode_rci(wire, role="client")
    with pytest.raises(ProtocolError, match="bad id_sub_code 0xe1 for CStLd"):
        decode_rci(bytes.fromhex("0220 e1 0001 ff8000"), role="server")
    assert led.LED_CODE in receives("server") and led.LED_CODE in write_codes()


def test_set_led_is_forwarded_tracked_and_refused_to_a_guest(led_registered):
    gw = ServerThread(robot=led.LedRobotPort())
    try:
        c = connect(gw)
        assert c.request(led.CStLd.one(led.LED_RGB, 1, led.LedColor(9, 8, 7), rq_ack=True)) \
            == CCnAc(led.LED_CODE)
        assert gw.robot.leds[1] == (9, 8, 7)
        assert c.request(CStIq(led.LED_CODE)) == CStRp(led.LED_CODE, CStRpStatus.IDLE)
        assert c.request(led.CStLd.one(led.LED_RGB, 5, led.LedColor(1, 1, 1), rq_ack=True)) \
            == CStRp(led.LED_CODE, CStRpStatus.INVALID_ID)
        assert c.request(CStIq(led.LED_CODE)) == CStRp(led.LED_CODE, CStRpStatus.INVALID_ID)
        c.close()
        gw.wait_idle()
        g = RciClient("127.0.0.1", gw.port)
        _, replies, _ = g.handshake("guest", GUEST_KEY,
                                    inquiries=[(led.LED_CODE, CapInquiry.ACCESS),
                                               (led.LED_CODE, CapInquiry.SUPPORT)])
        assert [r for _, r in replies[0].items] == [CapReply.NO_PERMISSION,
                                                    CapReply.PERMISSION]
        g.send(led.CStLd.one(led.LED_RGB, 0, led.LedColor(1, 1, 1)))
        assert g.wait_closed() == [CSvTm(TermCode.ACCESS)]
        assert gw.robot.leds[0] == (0, 0, 0)
    finally:
        gw.stop()


def test_a_port_without_the_method_fails_when_the_session_is_built(led_registered):
    with pytest.raises(RciCommandError, match=r"0x0220 \(CStLd\): port method 'set_leds' "
                                              r"not found on FakeRobotPort"):
        RciSession(FakeRobotPort(), None, None, None)


# --------------------------------------------- an explicitly unsupported code
UNSUPPORTED = RciCommandSpec(
    code=0x0105, name="CXxIq", title="Example Inquiry", direction=TO_SERVER, packet=None,
    sub_codes=None, wire=None, writes=False, tracked=False, port_methods=(),
    unsupported="an example: known, not implemented")


@pytest.fixture
def unsupported_registered():
    register_command(UNSUPPORTED)
    yield
    unregister_command(UNSUPPORTED.code)


def test_an_unsupported_code_is_known_and_refused(unsupported_registered):
    with pytest.raises(ProtocolError, match="CXxIq .0x0105. is not supported: an example"):
        decode_rci(bytes.fromhex("0105"), role="server")
    gw = ServerThread()
    try:
        c = RciClient("127.0.0.1", gw.port)
        _, replies, _ = c.handshake("demo", DEMO_KEY,
                                    inquiries=[(0x0105, CapInquiry.SUPPORT),
                                               (0x0105, CapInquiry.ACCESS),
                                               (0x0109, CapInquiry.SUPPORT)])
        assert isinstance(replies[0], ICaRp)
        assert [r for _, r in replies[0].items] == [CapReply.NO_SUPPORT, CapReply.NO_SUPPORT,
                                                    CapReply.ERROR]
        assert c.request(CStIq(0x0105)) == CStRp(0x0105, CStRpStatus.NO_SUPPORT)
        c.close()
    finally:
        gw.stop()


def test_brak_commands_still_answer_as_before():
    """A few end-to-end answers the built tables decide (the full set:
    test_rci_gateway.py)."""
    gw = ServerThread()
    try:
        c = connect(gw)
        assert c.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
        no_support = CStRp(RciCode.CGtMtRp, CStRpStatus.NO_SUPPORT)
        assert c.request(CStIq(RciCode.CGtMtRp)) == no_support
        assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
        assert DC_MOTOR in gw.robot.on and 0 in gw.robot.on[DC_MOTOR]
        assert c.request(CStIq(RciCode.CAcMt)) == CStRp(RciCode.CAcMt, CStRpStatus.IDLE)
        assert c.request(CAcSn.one(SensorType.ULTRASONIC, 3, 1, rq_ack=True)) \
            == CCnAc(RciCode.CAcSn)
        rp = c.request(CGtSnIq.one(SensorType.ULTRASONIC, 3, 0x04))
        assert isinstance(rp, CGtSnRp)
        rp = c.request(CGtMtIq.one(MotorType.DC, 0, 0x01))
        assert isinstance(rp, CGtMtRp)
        clear = SensorCommand(SensorCommandCode.RELENCODER_CLEAR)
        assert c.request(CStSn.one(SensorType.RELENCODER, 0, clear, rq_ack=True)) \
            == CCnAc(RciCode.CStSn)
        c.close()
        c2 = RciClient("127.0.0.1", gw.port)
        _, replies, _ = c2.handshake("demo", DEMO_KEY,
                                     inquiries=[(RciCode.CGtSnRp, CapInquiry.ACCESS)])
        assert [r for _, r in replies[0].items] == [CapReply.NO_SUPPORT]
        c2.close()
    finally:
        gw.stop()
