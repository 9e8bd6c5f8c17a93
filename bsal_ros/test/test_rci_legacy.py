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

"""The C++ rci-client library (legacy/) against the gateway logic with a fake
robot (no ROS): return codes of the book's example, termination codes seen by
connectToServer and mid-session, guests, little-endian. The same example on
the simulated robot through ROS is in test_rci_node.py."""

from __future__ import annotations

import math
from pathlib import Path
import subprocess

import pytest

from bsal_ros.rci.client import RciClient
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.users import DEMO_KEY
from conftest import build_legacy, run_legacy
from test_rci_gateway import ServerThread

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/, bench/ beside the packages
APP = REPO / "legacy" / "build" / "client-app"


@pytest.fixture(scope="module")
def app():
    build_legacy()
    selftest = subprocess.run([str(REPO / "legacy" / "build" / "wire-selftest")],
                              capture_output=True, text=True)
    assert selftest.returncode == 0, selftest.stdout
    return APP


class MovingRobot(FakeRobotPort):
    """Each cache read moves the fake robot, so readings change."""

    def cached(self, cls, ids):
        self.advance(3)
        return super().cached(cls, ids)


def run(app, port, *args, env=None):
    """Run client-app; returns (exit code, [(kind, {key: value})])."""
    return run_legacy([app, "127.0.0.1", port, *args], env)


def rcs(rows):
    return [(r["call"], r["name"]) for k, r in rows if k == "rc"]


def term(rows):
    return next(r["name"] for k, r in rows if k == "term")


def test_example_against_fake_robot(app):
    gw = ServerThread(MovingRobot())
    try:
        code, rows = run(app, gw.port)
        assert code == 0, rows
        calls = rcs(rows)
        assert calls[0] == ("connectToServer", "NO_ERROR")
        assert ("resetRobot", "RCI_CSTRP_BUSY") in calls
        assert ("homeRobot", "RCI_CSTRP_BUSY") in calls
        assert all(name in ("NO_ERROR", "RCI_CSTRP_BUSY", "RCI_CSTRP_IDLE") for _, name in calls)
        counts = [int(r["count"]) for k, r in rows if k == "encoder"]
        assert len(counts) == 10 and len(set(counts)) == 10
        # position: mm of wheel travel with config/brak.yaml's drive geometry
        # (0.1 m wheel, 2048 counts per revolution); counts here never wrap
        mm = [float(r["position_mm"]) for k, r in rows if k == "encoder"]
        assert mm == pytest.approx([c * 2 * math.pi * 100.0 / 2048 for c in counts], abs=1e-3)
        delays = [int(r["delay_us"]) for k, r in rows if k == "ultra" and r["id"] == "0"]
        assert len(delays) == 10 and len(set(delays)) > 1
        kinds = [c[0] for c in gw.robot.calls]
        assert kinds[:2] == ["reset", "activate"] and "home" in kinds
        gw.wait_idle()
        assert gw.robot.stop_calls       # the library closed: safety stop ran
    finally:
        gw.stop()


@pytest.mark.parametrize("user,key,name", [
    ("demo", "ffffffffffffffffffffffffffffffff", "RCI_CSVTM_AUTHENTICATE"),
    ("nobody", DEMO_KEY.hex(), "RCI_CSVTM_USER"),
])
def test_connect_refused(app, user, key, name):
    gw = ServerThread()
    try:
        code, rows = run(app, gw.port, user, key)
        assert code == 3
        assert rcs(rows) == [("connectToServer", "ERR_SERVER_TERMINATE")]
        assert term(rows) == name
    finally:
        gw.stop()


def test_second_control_application_refused(app):
    gw = ServerThread()
    try:
        first = RciClient("127.0.0.1", gw.port)
        first.handshake("demo", DEMO_KEY)
        code, rows = run(app, gw.port)
        assert code == 3 and term(rows) == "RCI_CSVTM_ACCESS"
        first.close()
    finally:
        gw.stop()


def test_connection_refused_without_server(app):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    code, rows = run(app, port)
    assert code == 2 and rcs(rows) == [("connectToServer", "ERR_CONNECT_FAILED")]


def test_server_termination_mid_session(app):
    """The example sleeps 1 s after homeRobot; a 0.3 s idle limit ends the session
    meanwhile: the next call sees the CSvTm."""
    gw = ServerThread(idle_limit_s=0.3)
    try:
        code, rows = run(app, gw.port)
        assert code == 3
        assert rcs(rows)[-1] == ("startEncoders", "ERR_SERVER_TERMINATE")
        assert term(rows) == "RCI_CSVTM_NOACK"
    finally:
        gw.stop()


def test_guest_reads_but_may_not_drive(app):
    gw = ServerThread(MovingRobot())
    try:
        code, rows = run(app, gw.port, "guest", "00000000000000000000000000000000")
        calls = dict(rcs(rows))
        assert code == 1                      # the write calls did not do what the book says
        assert calls["connectToServer"] == "NO_ERROR"
        assert calls["resetRobot"] == "RCI_CSTRP_NO_SUPPORT"   # refused locally, never sent
        assert calls["setDriveMotor"] == "RCI_CSTRP_NO_SUPPORT"
        assert calls["readUltrasonics"] == "RCI_CSTRP_IDLE"
        assert not [c for c in gw.robot.calls if c[0] != "home"] and not gw.robot.speed
    finally:
        gw.stop()


def test_little_endian(app):
    gw = ServerThread(MovingRobot(), byteorder="little")
    try:
        code, rows = run(app, gw.port, env={"BSAL_RCI_BYTEORDER": "little"})
        assert code == 0, rows
    finally:
        gw.stop()
