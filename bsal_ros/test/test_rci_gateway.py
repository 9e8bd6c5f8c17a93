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

"""Socket-level tests of the RCI gateway logic (bsal_ros.rci) against a fake
robot port: every packet and form, the initialization phase, authentication,
guests, a second client, homing, watchdog, robot gone and back, bad input and
bounded fuzzing. No ROS here (see test_rci_node.py for the node)."""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time

import pytest

from bsal_ros.protocol.constants import (CapInquiry, CapReply, CStRpStatus, Form, GetMotorStatus,
                                         GetSensorStatus, MotorType, RciCode, SensorCommandCode,
                                         SensorType, TermCode)
from bsal_ros.protocol.rci import (AbsEncoderData, AccelData, CAcMt, CAcSn, CBsTm, CBsTmIq, CCnAc,
                                   CGtMtIq, CGtMtRp, CGtSnIq, CGtSnRp, CRs, CStIq, CStMt, CStRp,
                                   CStSn, CSvTm, encode_rci, ICaRp, IIId, IInCp, MotorCommand,
                                   MotorCommandKind, MotorData, RelEncoderData, SensorCommand,
                                   UltrasonicData, VersionReply)
from bsal_ros.protocol.values import speedval_pack, Statval
from bsal_ros.rci import check_bind_allowed, RciServer, Users, UsersFileError
from bsal_ros.rci.client import all_access_inquiries, RciClient
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.users import DEMO_KEY

from conftest import RciServerThread

pytestmark = pytest.mark.timeout(120)

USERS_YAML = """
users:
  - {name: guest, role: guest, key: "00000000000000000000000000000000"}
  - {name: demo, role: operator, key: "0123456789abcdef0123456789abcdef"}
  - {name: ops, role: operator, key: "ffeeddccbbaa99887766554433221100"}
"""
GUEST_KEY = bytes(16)
OPS_KEY = bytes.fromhex("ffeeddccbbaa99887766554433221100")


class ServerThread(RciServerThread):
    """The shared server thread with this file's users."""

    def __init__(self, robot=None, **cfg):
        super().__init__(USERS_YAML, robot, **{"linger_s": 0.2, **cfg})

    def session_silence_stops(self) -> int:
        """How often silence stopped the motors of the current session."""
        return self.call(lambda: self.server.session.silence_stops)


@pytest.fixture
def gw():
    s = ServerThread()
    yield s
    s.stop()


def connect(gw, user="demo", key=DEMO_KEY, **kw):
    c = RciClient("127.0.0.1", gw.port, **kw)
    server_id, replies, base = c.handshake(user, key)
    assert isinstance(server_id, IIId), server_id
    assert isinstance(base, CBsTm)
    return c


def wait_for(condition, what, timeout=20.0):
    """Wait until ``condition()`` is true (a deadline sized for a loaded
    2-core machine); fail with ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def ack_ok(c, pkt, code):
    reply = c.request(pkt)
    assert reply == CCnAc(code), reply
    return reply


def set_drive(c, percent):
    """Set Motor with RQ_ACK: the drive (DC 0) forward at ``percent``, acknowledged."""
    ack_ok(c, CStMt.one(MotorType.DC, 0, MotorCommand(
        MotorCommandKind.SPVAL, speedval_pack(True, percent)), rq_ack=True), RciCode.CStMt)


def drive(c, percent):
    """Activate the drive motor (DC 0) and set it forward at ``percent``, both acknowledged."""
    ack_ok(c, CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
    set_drive(c, percent)


def leave_driving_with_the_stop_refused(gw):
    """A session drives at 30 %; the drive board then refuses stops and the
    client leaves: the session ends with its safety stop refused."""
    c = connect(gw)
    drive(c, 30.0)
    gw.robot.refuse_stop = {"dc_motor"}
    c.close()
    gw.wait_idle()


# ------------------------------------------------------------------ users file
def test_users_file_default_and_rules():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "config" / "users.yaml").read_text()
    users = Users.from_yaml_text(text)
    assert {"guest", "demo"} <= set(users.names())
    assert users.lookup("guest").read_only and not users.lookup("demo").read_only
    assert users.has_demo_key()
    check_bind_allowed("127.0.0.1", users)
    check_bind_allowed("::1", users)
    with pytest.raises(UsersFileError, match="demo"):
        check_bind_allowed("0.0.0.0", users)
    assert users.authenticate(b"demo", DEMO_KEY)[0].name == "demo"
    assert users.authenticate(b"demo", bytes(16)) == (None, "AUTHENTICATE")
    assert users.authenticate(b"nobody", DEMO_KEY) == (None, "USER")
    for bad in ("users: 3", "users: [{name: x, key: '12'}]", "{",
                "users: [{name: a, key: '0123456789abcdef0123456789abcdef'},"
                " {name: a, key: '0123456789abcdef0123456789abcdef'}]",
                "users: [{name: a, role: root, key: '0123456789abcdef0123456789abcdef'}]"):
        with pytest.raises(UsersFileError) as ei:
            Users.from_yaml_text(bad)
        assert "0123456789abcdef" not in str(ei.value)   # keys never in messages


def test_server_refuses_public_bind_with_demo_key():
    users = Users.from_yaml_text(USERS_YAML)
    with pytest.raises(UsersFileError, match="refusing to listen on 0.0.0.0"):
        RciServer(FakeRobotPort(), users, "0.0.0.0", 0)
    safe = Users.from_yaml_text("users: [{name: ops, key: 'ffeeddccbbaa99887766554433221100'}]")
    RciServer(FakeRobotPort(), safe, "0.0.0.0", 0)    # constructing does not bind


# --------------------------------------------------------------- initialization
def test_initialization_phase_every_capability(gw):
    c = RciClient("127.0.0.1", gw.port)
    inquiries = (all_access_inquiries(CapInquiry.ACCESS)
                 + all_access_inquiries(CapInquiry.SUPPORT)
                 + all_access_inquiries(CapInquiry.VERSION)
                 + [(0x0999, CapInquiry.ACCESS), (0x0999, CapInquiry.VERSION)])
    server_id, replies, base = c.handshake("demo", DEMO_KEY, inquiries=inquiries)
    assert (server_id.vers_major, server_id.vers_minor) == (0, 3)
    assert len(replies) == 1 and isinstance(replies[0], ICaRp)
    items = replies[0].items
    assert len(items) == len(inquiries)            # every item answered
    answers = {}
    for (cid, kind), (rcid, r) in zip(inquiries, items):
        assert rcid == cid
        answers[(cid, kind)] = r
    A, S, V = CapInquiry.ACCESS, CapInquiry.SUPPORT, CapInquiry.VERSION
    assert answers[(RciCode.CStMt, A)] == CapReply.PERMISSION
    assert answers[(RciCode.CGtSnIq, A)] == CapReply.PERMISSION
    assert answers[(RciCode.CGtSnRp, A)] == CapReply.NO_SUPPORT   # only the CP sends it
    assert answers[(RciCode.CStMt, S)] == CapReply.PERMISSION
    assert answers[(RciCode.CStMt, V)] == VersionReply(0, 3)
    assert answers[(0x0999, A)] == CapReply.ERROR
    assert answers[(0x0999, V)] == CapReply.ERROR        # one byte, 001 4.5.5
    assert isinstance(base, CBsTm)
    assert abs(base.time.sec - time.time()) < 60
    # and the control phase works
    assert c.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
    c.close()


def test_client_library_asks_after_the_cps_iincp():
    """The CP's IInCp came first (quiet time); our client's ICaIq sent after it
    still gets its ICaRp decoded, then CBsTm."""
    from bsal_ros.protocol.rci import ICaIq
    gw = ServerThread(init_quiet_s=0.1)
    try:
        c = RciClient("127.0.0.1", gw.port)
        c.send(IIId(0, 3, b"demo", DEMO_KEY))
        assert isinstance(c.recv(), IIId)
        assert c.recv() == IInCp()                  # the CP did not wait for us
        c.send(ICaIq([(RciCode.CStMt, CapInquiry.ACCESS)]))
        c.send(IInCp())
        assert c.recv() == ICaRp([(RciCode.CStMt, CapReply.PERMISSION)])
        assert isinstance(c.recv(), CBsTm)
        assert c.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
        c.close()
    finally:
        gw.stop()


def test_lower_client_version_wins(gw):
    c = RciClient("127.0.0.1", gw.port)
    server_id, replies, _ = c.handshake("demo", DEMO_KEY, version=(0, 2),
                                        inquiries=[(RciCode.CStMt, CapInquiry.VERSION)])
    assert (server_id.vers_major, server_id.vers_minor) == (0, 3)   # ours
    assert replies[0].items == [(RciCode.CStMt, VersionReply(0, 2))]  # agreed
    c.close()


@pytest.mark.parametrize("user,key,term", [
    ("nobody", DEMO_KEY, TermCode.USER),
    ("demo", bytes(16), TermCode.AUTHENTICATE),
    ("demo", DEMO_KEY[:15] + b"\x00", TermCode.AUTHENTICATE),
    ("guest", DEMO_KEY, TermCode.AUTHENTICATE),
])
def test_authentication_failures(gw, user, key, term, caplog):
    caplog.set_level(logging.INFO, logger="bsal_ros.rci")
    c = RciClient("127.0.0.1", gw.port)
    c.send(IIId(0, 3, user.encode(), key))
    assert c.wait_closed() == [CSvTm(term)]
    gw.wait_idle()
    assert key.hex() not in caplog.text and DEMO_KEY.hex() not in caplog.text
    # the gateway serves the next client
    connect(gw).close()


def test_guest_is_read_only(gw):
    c = RciClient("127.0.0.1", gw.port)
    inq = [(RciCode.CStMt, CapInquiry.ACCESS), (RciCode.CRs, CapInquiry.ACCESS),
           (RciCode.CAcSn, CapInquiry.ACCESS), (RciCode.CGtSnIq, CapInquiry.ACCESS),
           (RciCode.CBsTmIq, CapInquiry.ACCESS)]
    _, replies, _ = c.handshake("guest", GUEST_KEY, inquiries=inq)
    assert [r for _, r in replies[0].items] == [
        CapReply.NO_PERMISSION, CapReply.NO_PERMISSION, CapReply.NO_PERMISSION,
        CapReply.PERMISSION, CapReply.PERMISSION]
    rp = c.request(CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12))
    assert isinstance(rp, CGtSnRp) and len(rp.items) == 12
    c.send(CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL, 100), rq_ack=True))
    assert c.wait_closed() == [CSvTm(TermCode.ACCESS)]
    gw.wait_idle()
    assert not gw.robot.speed
    connect(gw).close()


def test_second_client_refused_first_keeps_working(gw):
    first = connect(gw)
    second = RciClient("127.0.0.1", gw.port)
    second.send(IIId(0, 3, b"ops", OPS_KEY))
    assert second.wait_closed() == [IInCp(), CSvTm(TermCode.ACCESS)]
    second.close()
    assert first.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
    ack_ok(first, CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
    assert gw.server.refused == 1
    first.close()


# ---------------------------------------------------------------- control phase
def test_reset_base_time_and_status(gw):
    c = connect(gw)
    ack_ok(c, CRs(rq_ack=True), RciCode.CRs)
    c.send(CRs())                                  # without ack: nothing comes back
    assert c.request(CStIq(RciCode.CRs)) == CStRp(RciCode.CRs, CStRpStatus.IDLE)
    bt = c.request(CBsTmIq())
    assert isinstance(bt, CBsTm)
    c.send(CBsTmIq(rq_ack=True))
    assert isinstance(c.recv(), CBsTm) and c.recv() == CCnAc(RciCode.CBsTmIq)
    for code in (RciCode.CSvTm, RciCode.CCnAc, RciCode.CGtSnRp, RciCode.CBsTm, RciCode.CStRp):
        assert c.request(CStIq(code)) == CStRp(code, CStRpStatus.NO_SUPPORT)
    assert c.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
    c.close()


@pytest.mark.parametrize("form", [Form.GENERAL, Form.POLY, Form.GROUP])
def test_motor_commands_every_form(gw, form):
    c = connect(gw)
    sv = speedval_pack(True, -20.0)
    if form == Form.GENERAL:
        act = CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)
        setm = CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL, sv), rq_ack=True)
        get = CGtMtIq.one(MotorType.DC, 0, GetMotorStatus.DATA)
    elif form == Form.POLY:
        act = CAcMt.poly(MotorType.DC, [(0, 1)], rq_ack=True)
        setm = CStMt.poly(MotorType.DC, [(0, MotorCommand(MotorCommandKind.SPVAL, sv))],
                          rq_ack=True)
        get = CGtMtIq.poly(MotorType.DC, [(0, GetMotorStatus.DATA), (0, GetMotorStatus.STATUS)])
    else:
        act = CAcMt.group(MotorType.DC, 0, [1], rq_ack=True)
        setm = CStMt.group(MotorType.DC, 0, [MotorCommand(MotorCommandKind.SPVAL, sv)],
                           rq_ack=True)
        get = CGtMtIq.group(MotorType.DC, 0, [GetMotorStatus.DATA])
    # a motor that is not active refuses: ABORT
    assert c.request(setm) == CStRp(RciCode.CStMt, CStRpStatus.ABORT)
    assert c.request(CStIq(RciCode.CStMt)) == CStRp(RciCode.CStMt, CStRpStatus.ABORT)
    ack_ok(c, act, RciCode.CAcMt)
    ack_ok(c, setm, RciCode.CStMt)
    assert gw.robot.speed[("dc_motor", 0)][0] is True
    assert gw.robot.speed[("dc_motor", 0)][1] == pytest.approx(-20.0, abs=0.05)
    rp = c.request(get)
    assert isinstance(rp, CGtMtRp) and rp.form == form and rp.sub_code == MotorType.DC
    assert rp.items[0] == (0, MotorData(sv, None))
    if form == Form.POLY:
        st = Statval.unpack(rp.items[1][1].statval)
        assert st.on and st.up and st.ok
    # without RQ_ACK: silent, status by inquiry
    c.send(CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL, 0)))
    assert c.request(CStIq(RciCode.CStMt)) == CStRp(RciCode.CStMt, CStRpStatus.IDLE)
    # invalid id: INVALID_ID, nothing changed
    assert c.request(CAcMt.one(MotorType.DC, 5, 1, rq_ack=True)) == \
        CStRp(RciCode.CAcMt, CStRpStatus.INVALID_ID)
    assert c.request(CGtMtIq.one(MotorType.DC, 5, GetMotorStatus.DATA)) == \
        CStRp(RciCode.CGtMtIq, CStRpStatus.INVALID_ID)
    assert c.request(CGtMtIq.one(MotorType.DC, 0, GetMotorStatus.TIME)) == \
        CStRp(RciCode.CGtMtIq, CStRpStatus.NO_SUPPORT)
    c.close()


def test_pservo_data_and_steering(gw):
    c = connect(gw)
    ack_ok(c, CAcMt.one(MotorType.PSERVO, 0, 1, rq_ack=True), RciCode.CAcMt)
    sv = speedval_pack(True, 30.0)
    ack_ok(c, CStMt.one(MotorType.PSERVO, 0, MotorCommand(MotorCommandKind.SPVAL, sv),
                        rq_ack=True), RciCode.CStMt)
    rp = c.request(CGtMtIq.one(MotorType.PSERVO, 0, GetMotorStatus.DATA))
    assert rp.items[0][1].speedval == sv and rp.items[0][1].mposval is not None
    c.close()


@pytest.mark.parametrize("form", [Form.GENERAL, Form.POLY, Form.GROUP])
def test_sensor_commands_every_form(gw, form):
    c = connect(gw)
    DATA, STATUS = GetSensorStatus.DATA, GetSensorStatus.STATUS
    if form == Form.GENERAL:
        ack_ok(c, CAcSn.one(SensorType.ULTRASONIC, 3, 1, rq_ack=True), RciCode.CAcSn)
        inq = CGtSnIq.one(SensorType.ULTRASONIC, 3, DATA)
        ids = [3]
    elif form == Form.POLY:
        ack_ok(c, CAcSn.poly(SensorType.ULTRASONIC, [(5, 1), (1, 1)], rq_ack=True),
               RciCode.CAcSn)
        inq = CGtSnIq.poly(SensorType.ULTRASONIC, [(5, DATA), (1, DATA), (5, STATUS)])
        ids = [5, 1, 5]
    else:
        ack_ok(c, CAcSn.group(SensorType.ULTRASONIC, 0, [1] * 12, rq_ack=True), RciCode.CAcSn)
        inq = CGtSnIq.group(SensorType.ULTRASONIC, 0, [DATA] * 12)
        ids = list(range(12))
    rp = c.request(inq)
    assert isinstance(rp, CGtSnRp) and rp.form == form
    assert [i for i, _ in rp.items] == ids
    for (i, s), (j, d) in zip(inq.items, rp.items):
        if s == DATA:
            assert d == UltrasonicData(gw.robot.delay_base + 100 * i)
        else:
            assert Statval.unpack(d.statval).on
    c.request(CStIq(RciCode.CStIq))     # the reply was delivered before this answer
    assert gw.robot.delivered_log[-1][0] == "ultrasonic"
    # encoders, absolute encoder, accelerometer
    ack_ok(c, CAcSn.one(SensorType.RELENCODER, 0, 1, rq_ack=True), RciCode.CAcSn)
    ack_ok(c, CStSn.one(SensorType.RELENCODER, 0,
                        SensorCommand(SensorCommandCode.RELENCODER_CLEAR), rq_ack=True),
           RciCode.CStSn)
    gw.robot.advance(5)
    r1 = c.request(CGtSnIq.one(SensorType.RELENCODER, 0, DATA))
    gw.robot.advance(3)
    r2 = c.request(CGtSnIq.one(SensorType.RELENCODER, 0, DATA))
    assert r1.items[0][1] == RelEncoderData(5, 5)
    assert r2.items[0][1] == RelEncoderData(3, 8)
    assert c.request(CGtSnIq.one(SensorType.ABSENCODER, 0, DATA)).items[0][1] == \
        AbsEncoderData(8)
    acc = c.request(CGtSnIq.one(SensorType.ACCEL, 0, DATA)).items[0][1]
    assert acc == AccelData(pytest.approx(0.25))
    # ultrasonic order/timing (our extension)
    ack_ok(c, CStSn.poly(SensorType.ULTRASONIC,
                         [(0, SensorCommand(SensorCommandCode.ULTRASONIC_ORDER, 2)),
                          (0, SensorCommand(SensorCommandCode.ULTRASONIC_TIMING, 125))],
                         rq_ack=True), RciCode.CStSn)
    assert gw.robot.calls[-1] == ("set_sonar_timing", [(0, 2, 125)])
    # failures answered with CStRp instead of the reply
    assert c.request(CGtSnIq.group(SensorType.ULTRASONIC, 10, [DATA] * 3)) == \
        CStRp(RciCode.CGtSnIq, CStRpStatus.INVALID_ID)
    assert c.request(CStIq(RciCode.CGtSnIq)) == CStRp(RciCode.CGtSnIq, CStRpStatus.INVALID_ID)
    assert c.request(CGtSnIq.one(SensorType.ULTRASONIC, 0, GetSensorStatus.TIME)) == \
        CStRp(RciCode.CGtSnIq, CStRpStatus.NO_SUPPORT)
    assert c.request(CAcSn.one(SensorType.RELENCODER, 3, 1, rq_ack=True)) == \
        CStRp(RciCode.CAcSn, CStRpStatus.INVALID_ID)
    c.close()


def test_homing_steering_aborts_while_others_proceed(gw):
    robot = gw.robot
    robot.home_release = gw.call(asyncio.Event)
    c = connect(gw)
    ack_ok(c, CAcMt.group(MotorType.DC, 0, [1], rq_ack=True), RciCode.CAcMt)
    c.send(CStMt.one(MotorType.PSERVO, 0, MotorCommand(MotorCommandKind.RESET)))  # no ack
    c.send(CStMt.one(MotorType.PSERVO, 0, MotorCommand(MotorCommandKind.RESET), rq_ack=True))
    assert c.recv() == CStRp(RciCode.CStMt, CStRpStatus.ABORT)     # second homing refused
    sv = speedval_pack(True, 10.0)
    assert c.request(CStMt.one(MotorType.PSERVO, 0, MotorCommand(MotorCommandKind.SPVAL, sv),
                               rq_ack=True)) == CStRp(RciCode.CStMt, CStRpStatus.ABORT)
    ack_ok(c, CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL, sv), rq_ack=True),
           RciCode.CStMt)
    assert c.request(CStIq(RciCode.CStMt)) == CStRp(RciCode.CStMt, CStRpStatus.BUSY)
    gw.call(robot.home_release.set)
    deadline = time.monotonic() + 10
    while c.request(CStIq(RciCode.CStMt)) != CStRp(RciCode.CStMt, CStRpStatus.IDLE):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert robot.homed
    # homing with RQ_ACK: CCnAc when it has finished
    robot.home_release = None
    ack_ok(c, CStMt.one(MotorType.PSERVO, 0, MotorCommand(MotorCommandKind.RESET), rq_ack=True),
           RciCode.CStMt)
    c.close()


def test_disconnect_during_homing_stops_motors(gw):
    robot = gw.robot
    robot.home_release = gw.call(asyncio.Event)
    c = connect(gw)
    ack_ok(c, CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
    ack_ok(c, CAcSn.group(SensorType.ULTRASONIC, 0, [1] * 12, rq_ack=True), RciCode.CAcSn)
    ack_ok(c, CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                      speedval_pack(True, 50.0)), rq_ack=True),
           RciCode.CStMt)
    c.send(CStMt.one(MotorType.PSERVO, 0, MotorCommand(MotorCommandKind.RESET), rq_ack=True))
    deadline = time.monotonic() + 10
    while not robot.homing:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    c.close()
    gw.wait_idle()
    assert robot.home_cancelled == 1 and not robot.homing
    assert not robot.speed
    # the homing switched the steering on: it is switched off again too
    assert robot.stop_calls[-1] == {"dc_motor": [0], "ultrasonic": list(range(12)),
                                    "pservo_motor": [0]}
    assert not robot.on["ultrasonic"] and not robot.on["dc_motor"]
    robot.home_release = None
    connect(gw).close()


def test_watchdog_stops_motors_of_silent_client_session_stays_open():
    gw = ServerThread(watchdog_s=0.3)
    try:
        c = connect(gw)
        drive(c, 40.0)
        with pytest.raises(TimeoutError):
            c.recv(timeout=1.2)                       # no CSvTm, no close
        assert not gw.robot.speed and gw.session_silence_stops() == 1
        assert c.request(CStIq(RciCode.CStMt)) == CStRp(RciCode.CStMt, CStRpStatus.ABORT)
        set_drive(c, 20.0)
        assert gw.robot.moving()
        c.close()
    finally:
        gw.stop()


def test_idle_limit_ends_silent_client():
    gw = ServerThread(idle_limit_s=0.3)
    try:
        c = connect(gw)
        drive(c, 40.0)
        assert c.wait_closed(timeout=10) == [CSvTm(TermCode.NOACK)]
        gw.wait_idle()
        assert not gw.robot.speed and gw.robot.stop_calls[-1] == {"dc_motor": [0]}
        connect(gw).close()
    finally:
        gw.stop()


class HeldMotorsPort(FakeRobotPort):
    """A fake robot whose set_motors waits for ``motor_release`` when set."""

    motor_release: asyncio.Event | None = None
    motor_held = False

    async def set_motors(self, device_class, settings):
        """As the fake's, once ``motor_release`` is set."""
        if self.motor_release is not None:
            self.motor_held = True
            await self.motor_release.wait()
        return await super().set_motors(device_class, settings)


def test_a_program_that_closed_is_not_taken_for_a_second_one():
    """A program sends, closes and logs in again at once while its old
    session is still handling what it sent (bytes of it unread): the new
    login waits for the old session to end and is served, however long
    that takes (here: until the test releases the robot), instead of being
    refused as a second program once a short grace has passed."""
    robot = HeldMotorsPort()
    gw = ServerThread(robot)
    try:
        c = connect(gw)
        ack_ok(c, CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
        robot.motor_release = gw.call(asyncio.Event)
        c.send(CStMt.one(MotorType.DC, 0, MotorCommand(
            MotorCommandKind.SPVAL, speedval_pack(True, 20.0)), rq_ack=True))
        wait_for(lambda: robot.motor_held, "the command did not reach the robot")
        c.send(CStIq(RciCode.CStIq))          # left unread by the busy session
        c.close()
        again = {}

        def login_again():
            try:
                again["client"] = connect(gw)
            except BaseException as exc:     # noqa: BLE001 - reported below
                again["error"] = exc
        t = threading.Thread(target=login_again, daemon=True)
        t.start()
        # the new login is held (not refused) for several times the grace
        # the server gives a session that does not look closed
        t.join(1.0)
        assert not again, again
        gw.call(robot.motor_release.set)
        t.join(20)
        assert "client" in again, again
        ack_ok(again["client"], CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
        again["client"].close()
    finally:
        gw.stop()


def test_watchdog_paused_while_acknowledged_homing_runs():
    """A CA waiting for the CCnAc of a homing is silent by the protocol: while
    the acknowledged homing runs, neither the silence watchdog (a drive motor
    of the session is running, so it would act) nor the idle limit acts;
    both would have, several times over, by the time the homing ends."""
    gw = ServerThread(watchdog_s=0.2, idle_limit_s=0.3)
    try:
        robot = gw.robot
        robot.home_release = gw.call(asyncio.Event)
        c = connect(gw)
        drive(c, 40.0)
        c.send(CStMt.one(MotorType.PSERVO, 0, MotorCommand(MotorCommandKind.RESET), rq_ack=True))
        wait_for(lambda: robot.homing, "the homing did not start")
        # silent, in the session's own clock, for five times the idle limit
        # (the watchdog looks every 0.05 s); each gw.call is a turn of the
        # server's loop, so the watchdog has had its turns too
        session = gw.server.session
        wait_for(lambda: gw.call(lambda: time.monotonic() - session.transport.last_rx) > 1.5,
                 "the session's clock did not move")
        for _ in range(3):
            gw.call(lambda: None)
        assert gw.server.session is session, session.end_reason   # no idle-limit end
        assert gw.call(lambda: session.silence_stops) == 0
        assert robot.speed[("dc_motor", 0)] == (True, pytest.approx(40.0, abs=0.05))
        gw.call(robot.home_release.set)
        assert c.recv(timeout=10) == CCnAc(RciCode.CStMt)   # the ack, not a CSvTm
        assert robot.homed
        c.close()
    finally:
        gw.stop()


def test_robot_gone_then_back():
    gw = ServerThread(hardware_gone_s=0.3)
    try:
        robot = gw.robot
        c = connect(gw)
        robot.available = False
        assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == \
            CStRp(RciCode.CAcMt, CStRpStatus.ABORT)
        assert c.request(CGtSnIq.one(SensorType.ULTRASONIC, 0, GetSensorStatus.DATA)) == \
            CStRp(RciCode.CGtSnIq, CStRpStatus.ABORT)
        time.sleep(0.4)    # let the outage outlast hardware_gone_s
        c.send(CRs(rq_ack=True))
        assert c.wait_closed() == [CSvTm(TermCode.ERROR)]
        gw.wait_idle()
        robot.available = True
        c2 = connect(gw)
        ack_ok(c2, CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
        c2.close()
    finally:
        gw.stop()


def test_robot_gone_never_ends_the_session_by_default():
    """hardware_gone_s 0 (the default): ABORT while the robot is unreachable,
    the same session works again when it is back (issue 22: Wi-Fi drop-outs)."""
    gw = ServerThread()
    assert gw.cfg.hardware_gone_s == 0.0
    try:
        robot = gw.robot
        c = connect(gw)
        robot.available = False
        for _ in range(3):
            assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == \
                CStRp(RciCode.CAcMt, CStRpStatus.ABORT)
            time.sleep(0.2)
        robot.available = True
        ack_ok(c, CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
        assert gw.server.sessions_served == 0
        c.close()
    finally:
        gw.stop()


def test_base_time_moves_and_is_resent():
    gw = ServerThread(base_time_span_ms=1000)
    try:
        c = RciClient("127.0.0.1", gw.port)
        _, _, first = c.handshake("demo", DEMO_KEY)
        time.sleep(1.0)
        c.send(CStIq(RciCode.CStIq))
        moved = c.recv()
        assert isinstance(moved, CBsTm) and moved.time.to_ns() > first.time.to_ns()
        assert c.recv() == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
        c.close()
    finally:
        gw.stop()


def test_little_endian_gateway():
    gw = ServerThread(byteorder="little")
    try:
        c = RciClient("127.0.0.1", gw.port, byteorder="little")
        c.handshake("demo", DEMO_KEY)
        rp = c.request(CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12))
        assert rp.items[11][1] == UltrasonicData(gw.robot.delay_base + 1100)
        c.close()
    finally:
        gw.stop()


# ------------------------------------------------------------------- bad input
BAD_CONTROL_INPUTS = {
    "unknown code": b"\x03\x33\x00\x00",
    "init packet in control phase": encode_rci(IIId(0, 3, b"demo", DEMO_KEY)),
    "IInCp in control phase": encode_rci(IInCp()),
    "zero count": b"\x82\x12\x83\x00\x00\x00\x04",
    "bad subcode": b"\x02\x12\x99\x00\x00\x04",
    "undefined activate byte": b"\x02\x10\x83\x00\x00\x07",
    "capability reply without inquiry": b"\x00\x13\x01\x02\x01\x23",
    "poly on a non-multi code": b"\x41\x04",
}


@pytest.mark.parametrize("what", sorted(BAD_CONTROL_INPUTS))
def test_bad_input_in_control_phase(gw, what, caplog):
    caplog.set_level(logging.WARNING, logger="bsal_ros.rci")
    c = connect(gw)
    drive(c, 20.0)
    c.send_raw(BAD_CONTROL_INPUTS[what])
    assert c.wait_closed() == [CSvTm(TermCode.ERROR)]
    gw.wait_idle()
    assert not gw.robot.speed                       # robot stopped
    bad_lines = [r for r in caplog.records if "bad input" in r.getMessage()]
    assert len(bad_lines) == 1
    connect(gw).close()                             # ready for the next client


def test_bad_input_in_initialization_phase(gw):
    c = RciClient("127.0.0.1", gw.port)
    c.send(CStIq(RciCode.CStIq))                    # control packet before IIId
    assert c.wait_closed() == [CSvTm(TermCode.ERROR)]
    c.close()
    gw.wait_idle()
    c = RciClient("127.0.0.1", gw.port)
    c.send(IIId(0, 3, b"demo", DEMO_KEY))
    assert isinstance(c.recv(), IIId)
    c.send(CRs())                                   # control packet before IInCp
    assert c.wait_closed() == [CSvTm(TermCode.ERROR)]
    gw.wait_idle()
    connect(gw).close()


def test_silent_client_in_initialization_phase():
    gw = ServerThread(init_timeout_s=0.3)
    try:
        c = RciClient("127.0.0.1", gw.port)
        assert c.wait_closed() == [CSvTm(TermCode.NOACK)]
        connect(gw).close()
    finally:
        gw.stop()


def _valid_packets():
    DATA = GetSensorStatus.DATA
    return [
        encode_rci(CGtSnIq.group(SensorType.ULTRASONIC, 0, [DATA] * 12)),
        encode_rci(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)),
        encode_rci(CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL, 0x8100))),
        encode_rci(CStSn.one(SensorType.RELENCODER, 0,
                             SensorCommand(SensorCommandCode.RELENCODER_CLEAR))),
        encode_rci(CGtMtIq.poly(MotorType.PSERVO, [(0, GetMotorStatus.DATA)])),
        encode_rci(CStIq(RciCode.CStMt)),
        encode_rci(CBsTmIq()),
        encode_rci(CRs(rq_ack=True)),
    ]


def _ended_by_the_server(sock, timeout: float) -> bool:
    """Read until the server closes the connection (EOF or a reset: closing
    with our bytes unread sends one); False if it is still open at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if not sock.recv(65536):
                return True
        except ConnectionResetError:
            return True
        except TimeoutError:
            break
    return False


def test_fuzzing_socket_gateway_survives():
    """Bounded: 150 connections with random or mutated bytes, half of them after
    a valid handshake. Each must end (the gateway answers what it can decode
    and closes the connection: bad input, or the initialization or idle
    limit for a packet cut short) and the gateway must then serve a normal
    client."""
    gw = ServerThread(idle_limit_s=0.3, init_timeout_s=0.3, linger_s=0.05)
    rng = random.Random(20001021)
    valid = _valid_packets()
    try:
        for n in range(150):
            c = RciClient("127.0.0.1", gw.port, timeout=20)
            try:
                if n % 2:
                    c.handshake("demo", DEMO_KEY)       # a failure here fails the test
                kind = rng.random()
                if kind < 0.3:
                    data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
                elif kind < 0.8:
                    data = bytearray(rng.choice(valid))
                    for _ in range(rng.randrange(1, 4)):
                        data[rng.randrange(len(data))] = rng.randrange(256)
                    if rng.random() < 0.3:
                        data = data[:rng.randrange(1, len(data) + 1)]
                    data = bytes(data)
                else:
                    data = b"".join(rng.choice(valid) for _ in range(rng.randrange(1, 6)))
                    cut = rng.randrange(len(data))
                    data = data[:cut] + bytes([rng.randrange(256)]) + data[cut + 1:]
                try:
                    c.send_raw(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass        # closed already, on an earlier byte of the same packet
                assert _ended_by_the_server(c.sock, 20), \
                    f"connection {n} left open after {data.hex(' ')}"
            finally:
                c.close()
            gw.wait_idle(15)
        c = connect(gw)
        ack_ok(c, CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
        c.close()
        assert gw.thread.is_alive()
    finally:
        gw.stop()


def test_session_logic_imports_no_ros():
    import subprocess
    import sys
    code = ("import sys, bsal_ros.rci, bsal_ros.rci.session, bsal_ros.rci.server, "
            "bsal_ros.rci.client, bsal_ros.rci.fake, bsal_ros.rci.users\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('rclpy', 'rosidl_runtime_py', 'bsal_interfaces', 'std_msgs')]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_client_that_does_not_read_is_throttled_not_buffered():
    """A CA that floods inquiries without reading: the gateway stops reading it
    while its answers are pending (bounded buffer) and answers everything, in
    order, once it reads."""
    import socket as so
    gw = ServerThread(max_write_buffer=4096, watchdog_s=30.0)
    try:
        c = RciClient("127.0.0.1", gw.port)
        c.sock.setsockopt(so.SOL_SOCKET, so.SO_RCVBUF, 4096)
        c.handshake("demo", DEMO_KEY)
        inq = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)
        n = 20000
        data = encode_rci(inq) * n
        # a slow link: the gateway's kernel buffer holds a few answers only
        # (loopback's would otherwise take every answer of the flood)
        gw.call(lambda: gw.server.session.transport.writer.get_extra_info("socket").setsockopt(
            so.SOL_SOCKET, so.SO_SNDBUF, 4096))
        sender = threading.Thread(target=c.sock.sendall, args=(data,), daemon=True)
        sender.start()
        # until the flood has filled every buffer on the way (the gateway's
        # socket no longer takes its answers and it holds some itself), the
        # gateway's own buffer stays within one answer of the limit
        session = gw.server.session
        reply = encode_rci(CGtSnRp(SensorType.ULTRASONIC, [
            (i, UltrasonicData(gw.robot.delay_base + 100 * i)) for i in range(12)], Form.GROUP))
        peak = 0
        deadline = time.monotonic() + 60
        while peak < 4096 - len(reply):
            assert time.monotonic() < deadline, f"the gateway's buffer never filled: {peak}"
            peak = max(peak, gw.call(session.transport.buffered))
            assert peak <= 4096 + len(reply), peak
            time.sleep(0.001)
        want = len(reply) * n
        buf = bytearray()
        c.sock.settimeout(20)
        while len(buf) < want:
            chunk = c.sock.recv(1 << 20)
            assert chunk
            buf += chunk
        assert bytes(buf) == reply * n             # every answer, in order
        sender.join(20)
        assert c.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
        c.close()
    finally:
        gw.stop()


def test_refused_safety_stop_is_retried_until_accepted():
    """The fault campaign's C3 case: the CA leaves while the drive board does
    not answer; the stop is retried until the robot takes it."""
    gw = ServerThread()
    robot = gw.robot
    try:
        leave_driving_with_the_stop_refused(gw)
        assert ("dc_motor", 0) in robot.speed            # refused: still running
        assert gw.server.stopper.pending == {"dc_motor"}
        robot.refuse_stop = set()                        # the board answers again
        deadline = time.monotonic() + 10
        while gw.server.stopper.pending:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert not robot.speed
    finally:
        gw.stop()


def test_new_session_command_is_not_overwritten_by_a_retry():
    gw = ServerThread()
    robot = gw.robot
    try:
        leave_driving_with_the_stop_refused(gw)
        c2 = connect(gw)
        ack_ok(c2, CAcMt.one(MotorType.DC, 0, 1, rq_ack=True), RciCode.CAcMt)
        assert gw.server.stopper.pending == set()        # the new session took over
        robot.refuse_stop = set()
        set_drive(c2, 15.0)
        # until the retrier has ended (nothing pending: its loop ends after
        # the period it was sleeping), a late retry could still come
        stopper = gw.server.stopper
        wait_for(lambda: gw.call(lambda: stopper._task is None or stopper._task.done()),
                 "the stop retrier did not end")
        assert robot.speed[("dc_motor", 0)][1] == pytest.approx(15.0, abs=0.05)
        c2.close()
    finally:
        gw.stop()
