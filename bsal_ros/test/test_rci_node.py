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

"""The RCI gateway node on the simulated robot (hardware node, sim backend):
the book's C++ example application end to end, Get inquiries from the topic
cache, the control-application view topic, disconnect during homing, and the
hardware node gone and back. ROS_DOMAIN_ID and ROS_AUTOMATIC_DISCOVERY_RANGE
come from the environment (conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import threading
import time
import uuid

import pytest

from conftest import build_legacy

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

rclpy = pytest.importorskip("rclpy")

from bsal_interfaces.msg import DeviceStateArray  # noqa: E402,I100
from rclpy.parameter import Parameter  # noqa: E402

from bsal_ros.nodes.hardware_node import HardwareNode  # noqa: E402
from bsal_ros.nodes.rci_gateway import RciGatewayNode  # noqa: E402
from bsal_ros.nodes.runtime import make_executor  # noqa: E402
from bsal_ros.protocol.constants import (CStRpStatus, GetSensorStatus, MotorType,  # noqa: E402
                                         RciCode, SensorType, TermCode)
from bsal_ros.protocol.rci import (CAcMt, CBsTm, CCnAc, CGtSnIq, CGtSnRp,  # noqa: E402
                                   CStMt, CStRp, CSvTm, MotorCommand, MotorCommandKind)
from bsal_ros.protocol.values import speedval_pack  # noqa: E402
from bsal_ros.rci.client import RciClient  # noqa: E402
from bsal_ros.rci.users import DEMO_KEY  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/, bench/ beside the packages
CLIENT_APP = REPO / "legacy" / "build" / "client-app"


def test_environment_is_local():
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert os.environ.get("ROS_DOMAIN_ID")


class Rig:
    """hardware node (sim) + RCI gateway in one context, executor in a thread."""

    def __init__(self, context, **gw_params):
        self.context = context
        self.ns = "/rci_" + uuid.uuid4().hex[:8]
        self.executor = make_executor(context)     # the executables' executor
        self.hw = None
        self.start_hardware()
        params = {"port": 0, "watchdog_s": 5.0, "hardware_gone_s": 2.0,
                  "service_timeout_s": 1.0, **gw_params}
        self.gw = RciGatewayNode(context=context, namespace=self.ns,
                                 parameter_overrides=[Parameter(k, value=v)
                                                      for k, v in params.items()])
        self.executor.add_node(self.gw)
        self._spin = threading.Thread(target=self._spin_loop, daemon=True)
        self._stop = False
        self._spin.start()
        self.port = self.gw.start()
        self.wait(lambda: self.gw.robot.device_list_known, what="device list")

    def _spin_loop(self):
        while not self._stop and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def start_hardware(self, **kw):
        self.hw = HardwareNode(context=self.context, namespace=self.ns, auto_home=False, **kw)
        self.executor.add_node(self.hw)

    def stop_hardware(self):
        hw, self.hw = self.hw, None
        self.executor.remove_node(hw)
        hw.destroy_node()

    def wait(self, cond, timeout=30.0, what="condition"):
        deadline = time.monotonic() + timeout
        while not cond():
            assert time.monotonic() < deadline, \
                f"timed out waiting for {what() if callable(what) else what}"
            time.sleep(0.02)

    def client(self):
        c = RciClient("127.0.0.1", self.port, timeout=10)
        c.handshake("demo", DEMO_KEY)
        return c

    def close(self):
        self.gw.stop()
        self._stop = True
        self._spin.join(5)
        self.executor.remove_node(self.gw)
        self.gw.destroy_node()
        if self.hw is not None:
            self.stop_hardware()
        self.executor.shutdown()


@pytest.fixture
def rig(ros_context):
    r = Rig(ros_context)
    yield r
    r.close()


def _parse(out: str) -> list[dict]:
    rows = []
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        row = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
        row["_kind"] = kind
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def client_app():
    if not CLIENT_APP.exists():
        build_legacy()
    return CLIENT_APP


def test_book_example_drives_the_simulated_robot(rig, client_app):
    rig.wait(lambda: rig.gw.robot.cached("ultrasonic", list(range(12))) is not None,
             what="sonar cache")
    proc = subprocess.run([str(client_app), "127.0.0.1", str(rig.port)], capture_output=True,
                          text=True, timeout=120)
    rows = _parse(proc.stdout)
    rcs = [(r["call"], r["name"]) for r in rows if r["_kind"] == "rc"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert rcs[:8] == [("connectToServer", "NO_ERROR"), ("resetRobot", "RCI_CSTRP_BUSY"),
                       ("homeRobot", "RCI_CSTRP_BUSY"), ("startEncoders", "RCI_CSTRP_IDLE"),
                       ("clearEncoders", "RCI_CSTRP_IDLE"),
                       ("startUltrasonics", "RCI_CSTRP_IDLE"),
                       ("setDriveMotor", "RCI_CSTRP_IDLE"), ("getDriveMotor", "RCI_CSTRP_IDLE")]
    reads = [name for call, name in rcs if call in ("readUltrasonics", "readEncoders")]
    assert reads == ["RCI_CSTRP_IDLE"] * 20
    assert rcs[-2:] == [("stopUltrasonics", "RCI_CSTRP_IDLE"), ("setDriveMotor", "RCI_CSTRP_IDLE")]
    drive = next(r for r in rows if r["_kind"] == "drive")
    assert drive["mode"] == "1" and drive["dir"] == "-1"
    assert abs(float(drive["duty"]) - 20.0) < 0.1
    # readings change as the robot reverses
    enc = [int(r["count"]) for r in rows if r["_kind"] == "encoder"]
    assert len(enc) == 10 and enc[-1] != enc[0]
    assert enc[-1] < 0            # backwards
    ultra = {}
    for r in rows:
        if r["_kind"] == "ultra":
            ultra.setdefault(r["id"], []).append(int(r["delay_us"]))
    assert sorted(ultra, key=int) == [str(i) for i in range(12)]
    assert any(len(set(v)) > 1 for v in ultra.values())
    times = [(int(r["sec"]), int(r["usec"])) for r in rows if r["_kind"] == "encoder"]
    assert times[-1] > times[0]
    assert rows[-1] == {"_kind": "done", "status": "ok", "failures": "0"}


def test_get_inquiries_come_from_the_topic_cache(rig):
    robot = rig.gw.robot
    calls = []
    original = robot.fetch

    async def counting_fetch(cls, ids):
        calls.append(cls)
        return await original(cls, ids)
    robot.fetch = counting_fetch
    received = []
    sub = rig.gw.create_subscription(DeviceStateArray, "rci/ca_states",
                                     lambda m: received.append(m), 10)
    rig.wait(lambda: robot.cached("ultrasonic", list(range(12))) is not None, what="cache")
    c = rig.client()
    inq = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)
    for _ in range(20):
        rp = c.request(inq)
        assert isinstance(rp, CGtSnRp) and len(rp.items) == 12
    assert calls.count("ultrasonic") <= 1
    rig.wait(lambda: received, what="rci/ca_states")
    assert received[-1].header.frame_id == "data" and len(received[-1].states) == 12
    c.close()
    rig.gw.destroy_subscription(sub)


def test_disconnect_during_homing_stops_motors(rig):
    c = rig.client()
    assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
    assert c.request(CStMt.one(MotorType.DC, 0, MotorCommand(
        MotorCommandKind.SPVAL, speedval_pack(True, 30.0)), rq_ack=True)) == CCnAc(RciCode.CStMt)
    c.send(CStMt.one(MotorType.PSERVO, 0, MotorCommand(MotorCommandKind.RESET), rq_ack=True))
    r = rig.hw.robot

    def homing():
        return r.homing_status(0).get("phase") not in ("", None) and not r.homing_status(0)["done"]
    rig.wait(lambda: r.device("pservo_motor", 0).board.homing, what="homing to start")
    c.close()
    rig.wait(lambda: rig.gw.server.session is None, what="session end")
    rig.wait(lambda: not r.device("pservo_motor", 0).board.homing, what="homing cancelled")
    res, snaps = r.get_states("dc_motor", [0])
    assert res.ok and snaps[0].speedval & 0x7FF == 0


def test_hardware_node_gone_and_back(rig):
    c = rig.client()
    assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
    rig.stop_hardware()
    rig.wait(lambda: not rig.gw.robot.cli["set_motors"].service_is_ready(), what="service gone")
    reply = c.request(CStMt.one(MotorType.DC, 0, MotorCommand(
        MotorCommandKind.SPVAL, speedval_pack(True, 10.0)), rq_ack=True))
    assert reply == CStRp(RciCode.CStMt, CStRpStatus.ABORT)
    time.sleep(2.2)                                  # outlast hardware_gone_s
    c.send(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True))
    # the session ends with ERROR. A CBsTm may come first: a session that
    # logs in before the gateway has the hardware node's base time (a latched
    # topic the executor delivers) takes its own, and sends the hardware's
    # once it arrives (001 4.6.16; CI: login 23 ms after the rig was up)
    closing = c.wait_closed()
    assert closing[-1:] == [CSvTm(TermCode.ERROR)], closing
    assert all(isinstance(x, CBsTm) for x in closing[:-1]), closing
    rig.wait(lambda: rig.gw.server.session is None, what="session end")
    rig.start_hardware()
    rig.wait(lambda: rig.gw.robot.cli["set_motors"].service_is_ready(), what="service back")
    c2 = rig.client()
    assert c2.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
    c2.close()


def test_a_late_answer_to_a_stop_is_still_an_ack(ros_context):
    """Issue 28: the hardware node answers set_motors after service_timeout_s
    (as over a lossy DDS link): a stop waits stop_timeout_s and is acked, a
    drive command is answered ABORT at service_timeout_s. The robot stopped."""
    rig = Rig(ros_context, service_timeout_s=0.5, stop_timeout_s=5.0)
    try:
        c = rig.client()
        assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
        assert c.request(CStMt.one(MotorType.DC, 0, MotorCommand(
            MotorCommandKind.SPVAL, speedval_pack(True, 20.0)), rq_ack=True)) == CCnAc(
                RciCode.CStMt)
        robot = rig.hw.robot
        answered = robot.set_motors

        def late(*args, **kw):      # in the service callback: the answer leaves 1.5 s late
            time.sleep(1.5)
            return answered(*args, **kw)
        robot.set_motors = late
        stop = c.request(CStMt.one(MotorType.DC, 0, MotorCommand(
            MotorCommandKind.SPVAL, speedval_pack(True, 0.0)), rq_ack=True))
        assert stop == CCnAc(RciCode.CStMt)
        res, snaps = robot.get_states("dc_motor", [0])
        assert res.ok and snaps[0].speedval & 0x7FF == 0
        drive = c.request(CStMt.one(MotorType.DC, 0, MotorCommand(
            MotorCommandKind.SPVAL, speedval_pack(True, 20.0)), rq_ack=True))
        assert drive == CStRp(RciCode.CStMt, CStRpStatus.ABORT)
        robot.set_motors = answered
        c.close()
    finally:
        rig.close()


def test_a_second_hardware_node_in_the_namespace_is_named_and_homing_refused(rig, capfd):
    """Two hardware nodes in one domain and namespace (two robots on one
    ROS_DOMAIN_ID): both would accept a homing goal with one id, and rclpy's
    action client then raises in the executor, which ended the bridge's
    process. The gateway names what is served twice, answers the homing
    ABORT, and the session goes on."""
    first = rig.hw
    rig.start_hardware()
    second = rig.hw
    try:
        robot = rig.gw.robot
        rig.wait(lambda: robot.home_name in robot.duplicated(), what="the second action server")
        c = rig.client()
        reset = MotorCommand(MotorCommandKind.RESET)
        assert c.request(CStMt.one(MotorType.PSERVO, 0, reset, rq_ack=True)) \
            == CStRp(RciCode.CStMt, CStRpStatus.ABORT)
        for hw in (first, second):
            assert not hw.robot.device("pservo_motor", 0).board.homing
        assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
        # the gateway warns each time the doubled set changes: while discovery
        # is still bringing the second node's interfaces, a first line names only
        # some (seen beside two CPU burners), a later one names them all
        err = []

        def warnings():
            err.append(capfd.readouterr().err)
            return [ln for ln in "".join(err).splitlines() if "more than one server offers" in ln]
        rig.wait(lambda: any(f"{rig.ns}/set_motors" in ln and f"{rig.ns}/home_steering" in ln
                             for ln in warnings()),
                 what=lambda: f"a warning naming set_motors and home_steering: {warnings()}")
        c.close()
    finally:
        rig.stop_hardware()
        rig.hw = first
