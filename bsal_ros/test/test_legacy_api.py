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

"""The C++ rci-client library's values and return codes (issue 13 item 6),
with legacy/build/api-check against the gateway logic (fake robot, no ROS) or
a scripted control process written here:

* encoderData.position is millimetres of wheel travel (the book's LINEAR
  METRIC), from counts with the drive's geometry (defaults = config/brak.yaml);
* a read takes data and time from ONE reply (one round trip); a refused read
  returns the CP's status and changes nothing;
* start/stop/clear/read encoders cover every relative encoder the CP has;
* resetRobot/homeRobot return the CP's ABORT as ABORT;
* connectToServer(id, key, NULL) compiles and means this machine.
"""

from __future__ import annotations

import math
from pathlib import Path
import re
import socket
import subprocess
import threading

import pytest
import yaml

from bsal_ros.protocol.constants import CStRpStatus, Form, GetSensorStatus, RciCode, SensorType
from bsal_ros.protocol.rci import (CBsTm, CCnAc, CGtSnIq, CGtSnRp, CRs, CStMt, CStRp, encode_rci,
                                   IIId, IInCp, RciDecoder, RelEncoderData, StatusData,
                                   UltrasonicData)
from bsal_ros.protocol.values import Statval, Timeval
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.port import RELATIVE_ENCODER
from bsal_ros.rci.users import DEMO_KEY
from conftest import build_legacy, run_legacy

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/, bench/ beside the packages
LEGACY = REPO / "legacy"
API_CHECK = LEGACY / "build" / "api-check"
BASE = Timeval(1_000_000_000, 0)        # the base time the scripted CP announces


@pytest.fixture(scope="module")
def api_check():
    build_legacy()
    return API_CHECK


def run(app, port, *commands, host=None, env=None):
    """Run api-check; returns (exit code, [(kind, {key: value})])."""
    target = host if host is not None else f"127.0.0.1:{port}"
    return run_legacy([app, target, "demo", DEMO_KEY.hex(), *commands], env)


def calls(rows):
    return [(r["call"], r["name"]) for k, r in rows if k == "rc"]


def readings(rows, kind):
    """The reading rows of each read call, in order: [[row, ...], ...]."""
    out = []
    for k, r in rows:
        if k == "rc" and r["call"] in ("readEncoders", "readUltrasonics"):
            out.append([])
        elif k == kind:
            out[-1].append(r)
    return [x for x in out if x]


# ----------------------------------------------------- scripted control process
class ScriptedCP:
    """A control process on 127.0.0.1 for one client: answers the handshake
    (IIId, IInCp, then a Base Time), then hands each control packet to
    `answer(pkt)`, which returns the packets to send back. Every control
    packet received is kept in `received`."""

    def __init__(self, answer):
        self.answer = answer
        self.received = []
        self.errors = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.sock.settimeout(30)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        conn.settimeout(30)
        dec = RciDecoder(role="server")
        phase = "init"
        try:
            with conn:
                while True:
                    data = conn.recv(4096)
                    if not data:
                        return
                    for pkt in dec.feed(data):
                        if phase == "init":
                            if isinstance(pkt, IIId):
                                conn.sendall(encode_rci(IIId(0, 3, b"", bytes(16))))
                            elif isinstance(pkt, IInCp):
                                conn.sendall(encode_rci(IInCp()) + encode_rci(CBsTm(BASE)))
                                phase = "control"
                            continue
                        self.received.append(pkt)
                        for out in self.answer(pkt):
                            conn.sendall(encode_rci(out))
        except Exception as exc:    # noqa: BLE001 - reported by close()
            self.errors.append(exc)

    def close(self):
        self.sock.close()
        self.thread.join(10)
        assert not self.errors, self.errors

    def inquiries(self):
        return [p for p in self.received if isinstance(p, CGtSnIq)]


def statval_ms(ms, ok=True):
    return Statval(on=True, up=True, ok=ok, ms=ms).pack()


class SensorRobot:
    """Answers Get Sensor inquiries item by item: reading number n (one per
    inquiry) gives ultrasonic delay 1000 + n, encoder count `counts[n]`, and
    statval 100 * n ms, so a reading and its time can be matched. Relative
    encoders: `encoder_ids`; ultrasonics 0..11."""

    def __init__(self, encoder_ids=(0,), counts=None):
        self.encoder_ids = set(encoder_ids)
        self.counts = counts
        self.n = 0
        self.refuse: dict[int, int] = {}      # inquiry number -> CStRp status
        self.reset_status = None              # None: CCnAc
        self.home_status = None

    def __call__(self, pkt):
        if isinstance(pkt, CGtSnIq):
            self.n += 1
            if self.n in self.refuse:
                return [CStRp(RciCode.CGtSnIq, self.refuse[self.n])]
            valid = self.encoder_ids if pkt.sub_code == SensorType.RELENCODER else set(range(12))
            if any(i not in valid for i, _ in pkt.items):
                return [CStRp(RciCode.CGtSnIq, CStRpStatus.INVALID_ID)]
            items = []
            for i, status in pkt.items:
                if status == GetSensorStatus.STATUS:
                    items.append((i, StatusData(statval_ms(100 * self.n))))
                elif pkt.sub_code == SensorType.RELENCODER:
                    count = self.counts[self.n] if self.counts else self.n
                    items.append((i, RelEncoderData(0, count)))
                else:
                    items.append((i, UltrasonicData(1000 + self.n)))
            return [CGtSnRp(pkt.sub_code, items, pkt.form)]
        if isinstance(pkt, CRs):
            if not pkt.rq_ack:
                return []
            st = self.reset_status
            return [CCnAc(RciCode.CRs) if st is None else CStRp(RciCode.CRs, st)]
        if getattr(pkt, "rq_ack", False):
            code = {CStMt: RciCode.CStMt}.get(type(pkt))
            if code == RciCode.CStMt and self.home_status is not None:
                return [CStRp(RciCode.CStMt, self.home_status)]
            from bsal_ros.protocol.rci import CODE_OF
            return [CCnAc(CODE_OF[type(pkt)])]
        return []


@pytest.fixture
def robot_cp():
    cps = []

    def make(robot):
        cp = ScriptedCP(robot)
        cps.append(cp)
        return cp
    yield make
    for cp in cps:
        cp.close()


# --------------------------------------------------------- one round trip
def test_a_reading_and_its_time_come_from_one_reply(api_check, robot_cp):
    robot = SensorRobot()
    cp = robot_cp(robot)
    code, rows = run(api_check, cp.port, "readultra", "readultra", "readultra:3,7,11",
                     "readenc", "readenc")
    assert code == 0, rows
    assert all(name == "RCI_CSTRP_IDLE" for _, name in calls(rows)[1:]), calls(rows)
    ultra = readings(rows, "ultra")
    enc = readings(rows, "enc")
    # the encoder list was probed first (ids 0, then 1: INVALID_ID), then one
    # inquiry per read: 3 ultrasonic reads + 2 probes + 2 encoder reads
    iqs = cp.inquiries()
    assert len(iqs) == 7, iqs
    assert [len(r) for r in ultra] == [12, 12, 3] and [len(r) for r in enc] == [1, 1]
    for read in ultra + enc:
        for r in read:
            # time = base + 100 ms x reading number; data = 1000 + reading number
            n = int(r["delay"]) - 1000 if "delay" in r else int(r["count"])
            ms = (int(r["sec"]) - BASE.sec) * 1000 + int(r["usec"]) // 1000
            assert ms == 100 * n, r
            assert int(r["status"]) == 0b111          # on, up, ok of the same reading
    # each read asked DATA and STATUS of every id in one poly inquiry
    read_iqs = [q for q in iqs if len(q.items) > 1 or q.items[0][1] == GetSensorStatus.DATA]
    for q in read_iqs:
        assert q.form == Form.POLY
        ids = [i for i, _ in q.items]
        assert ids[0::2] == ids[1::2]
        assert [s for _, s in q.items] == [GetSensorStatus.DATA, GetSensorStatus.STATUS] * (
            len(ids) // 2)
    assert [i for i, _ in read_iqs[2].items][0::2] == [3, 7, 11]


@pytest.mark.parametrize("status", [CStRpStatus.NO_SUPPORT, CStRpStatus.ABORT,
                                    CStRpStatus.BUSY])
def test_a_refused_read_returns_the_status_and_changes_nothing(api_check, robot_cp, status):
    robot = SensorRobot()
    robot.refuse[2] = status                  # the second inquiry is refused
    cp = robot_cp(robot)
    code, rows = run(api_check, cp.port, "readultra:0,1", "readultra", "readultra")
    assert code == 0, rows
    assert [name for _, name in calls(rows)[1:]] == [
        "RCI_CSTRP_IDLE", "RCI_CSTRP_" + status.name, "RCI_CSTRP_IDLE"]
    first, refused, third = [r for k, r in rows if k == "ultra"][0:2], \
        [r for k, r in rows if k == "ultra"][2:4], [r for k, r in rows if k == "ultra"][4:6]
    assert refused == first                   # neither delay nor time changed
    assert third[0]["delay"] == "1003" and third[0]["sec"] != "0"


# ------------------------------------------------------------ encoders in mm
def mm_per_count(radius_m=0.1, cpr=2048):
    return 2 * math.pi * radius_m * 1000 / cpr


def test_encoder_geometry_defaults_equal_brak_yaml():
    doc = yaml.safe_load((ROOT / "config" / "brak.yaml").read_text())
    geo = doc["/**/hardware_node"]["ros__parameters"]["robot"]["geometry"]
    header = (LEGACY / "include" / "rci-client.h").read_text()
    radius = float(re.search(r"#define RCI_DEFAULT_WHEEL_RADIUS_M\s+(\S+)", header).group(1))
    cpr = int(re.search(r"#define RCI_DEFAULT_ENCODER_CPR\s+(\S+)", header).group(1))
    assert radius == geo["wheel_radius"] and cpr == geo["drive_encoder_cpr"]


def test_encoder_position_is_millimetres_unwrapped_and_cleared(api_check, robot_cp):
    # reading n gives count counts[n]: past +32767 the gint16 wraps
    counts = [0, 0, 0, 1000, 32000, -32000, -31000, 0, 200]
    robot = SensorRobot(counts=counts)
    cp = robot_cp(robot)
    # inquiries: 1 probe id 0, 2 probe id 1, 3..6 reads, clear, 7 read, geometry, 8 read
    code, rows = run(api_check, cp.port, "startenc", "readenc", "readenc", "readenc",
                     "readenc", "clearenc", "readenc", "geometry:0.05:1000", "readenc")
    assert code == 0, rows
    assert all(name in ("RCI_CSTRP_IDLE", "NO_ERROR") for _, name in calls(rows)), calls(rows)
    enc = [r for k, r in rows if k == "enc"]
    assert all(r["type"] == "1" and r["unit"] == "0" for r in enc)     # LINEAR, METRIC
    travelled = [1000, 32000, 32000 + 1536, 32000 + 1536 + 1000, 0]
    for r, counts_travelled in zip(enc[:5], travelled):
        assert float(r["pos_mm"]) == pytest.approx(counts_travelled * mm_per_count(), rel=1e-6)
    # after the clear the count restarts at 0 (here 0, then 200), new geometry
    assert float(enc[5]["pos_mm"]) == pytest.approx(200 * mm_per_count(0.05, 1000), rel=1e-6)


def test_geometry_arguments_are_checked(api_check, robot_cp):
    cp = robot_cp(SensorRobot())
    code, rows = run(api_check, cp.port, "geometry:0:2048", "geometry:-1:2048",
                     "geometry:0.1:0", "geometry:nan:2048", "geometry:0.1:2048:0")
    assert code == 0
    assert [n for _, n in calls(rows)[1:]] == ["ERR_BAD_ARGUMENT"] * 4 + ["NO_ERROR"]


# ------------------------------------------------------------ all encoders
def test_start_stop_clear_read_cover_every_relative_encoder(api_check):
    from test_rci_gateway import ServerThread
    robot = FakeRobotPort()
    robot.ids[RELATIVE_ENCODER] = frozenset({0, 1, 2})
    gw = ServerThread(robot)
    try:
        code, rows = run(api_check, gw.port, "startenc", "clearenc", "readenc", "stopenc")
        assert code == 0, rows
        assert [n for _, n in calls(rows)[1:]] == ["RCI_CSTRP_IDLE"] * 4, calls(rows)
        assert [r["id"] for k, r in rows if k == "enc"] == ["0", "1", "2"]
        enc_calls = [c for c in robot.calls if RELATIVE_ENCODER in c or c[0] == "clear_encoders"]
        assert ("activate", RELATIVE_ENCODER, [0, 1, 2], [1, 1, 1]) in enc_calls
        assert ("clear_encoders", [0, 1, 2]) in enc_calls
        # stopenc deactivates them in the session's own view; the hardware keeps
        # them running for ROS until the session ends (issue 21, INTERFACES.md)
        assert ("activate", RELATIVE_ENCODER, [0, 1, 2], [0, 0, 0]) not in enc_calls
    finally:
        gw.stop()


def test_a_robot_without_relative_encoders_answers_invalid_id(api_check, robot_cp):
    cp = robot_cp(SensorRobot(encoder_ids=()))
    code, rows = run(api_check, cp.port, "startenc", "clearenc", "readenc", "stopenc")
    assert code == 0
    assert [n for _, n in calls(rows)[1:]] == ["RCI_CSTRP_INVALID_ID"] * 4
    assert len(cp.inquiries()) == 1            # probed once (id 0), then remembered


def test_a_failed_probe_is_reported_and_asked_again(api_check, robot_cp):
    robot = SensorRobot()
    robot.refuse[1] = CStRpStatus.ABORT        # the robot side was gone for the first probe
    cp = robot_cp(robot)
    code, rows = run(api_check, cp.port, "startenc", "startenc")
    assert code == 0
    assert [n for _, n in calls(rows)[1:]] == ["RCI_CSTRP_ABORT", "RCI_CSTRP_IDLE"]


# ------------------------------------------------------------ reset / home
@pytest.mark.parametrize("status", [CStRpStatus.ABORT, CStRpStatus.NO_SUPPORT,
                                    CStRpStatus.INVALID_ID])
def test_reset_and_home_return_the_cps_status(api_check, robot_cp, status):
    robot = SensorRobot()
    robot.reset_status = status
    robot.home_status = status
    cp = robot_cp(robot)
    code, rows = run(api_check, cp.port, "reset:1", "home:1", "reset:0", "home:0")
    assert code == 0
    assert [n for _, n in calls(rows)[1:]] == ["RCI_CSTRP_" + status.name] * 2 + [
        "RCI_CSTRP_BUSY"] * 2


def test_reset_and_home_acknowledged(api_check, robot_cp):
    cp = robot_cp(SensorRobot())
    code, rows = run(api_check, cp.port, "reset:1", "home:1")
    assert [n for _, n in calls(rows)[1:]] == ["RCI_CSTRP_IDLE"] * 2
    assert isinstance(cp.received[0], CRs) and cp.received[0].rq_ack


# --------------------------------------------------------------- NULL host
def test_null_host_compiles_and_means_this_machine(api_check, robot_cp):
    cp = robot_cp(SensorRobot())
    code, rows = run(api_check, cp.port, "readultra:0", host="NULL",
                     env={"BSAL_RCI_PORT": str(cp.port)})
    assert code == 0, rows
    assert calls(rows) == [("connectToServer", "NO_ERROR"), ("readUltrasonics", "RCI_CSTRP_IDLE")]


@pytest.mark.parametrize("std,extra", [("c++98", []), ("c++17", ["-DRCI_HOST_CHECK_NULLPTR"])])
def test_every_host_argument_resolves_to_one_overload(std, extra):
    flags = subprocess.run(["pkg-config", "--cflags", "glib-2.0"], check=True,
                           capture_output=True, text=True).stdout.split()
    r = subprocess.run(["g++", f"-std={std}", "-fsyntax-only", "-Wall", "-Werror", *extra,
                        "-I", str(LEGACY / "include"), *flags,
                        str(LEGACY / "tests" / "host-overloads.cc")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ------------------------------------------------- what the book leaves open
def test_library_return_codes_do_not_overlap_the_status_codes():
    """The book names NO_ERROR .. ERR_BAD_ARGUMENT without values; the same
    calls also return RCI_CSTRP_* (0x08..0x0d), so ours must differ."""
    header = (LEGACY / "include" / "rci-client.h").read_text()
    ours = {n: int(v, 16) for n, v in re.findall(
        r"#define (NO_ERROR|ERR_\w+)\s+(0x[0-9a-fA-F]+)", header)}
    assert set(ours) == {"NO_ERROR", "ERR_CONNECT_FAILED", "ERR_SERVER_TERMINATE",
                         "ERR_UNKNOWN_CAPABILITY", "ERR_BAD_ARGUMENT"}
    assert len(set(ours.values())) == 5
    assert not set(ours.values()) & {int(s) for s in CStRpStatus}


def test_set_motor_arguments_are_checked_before_sending(api_check, robot_cp):
    cp = robot_cp(SensorRobot())
    code, rows = run(api_check, cp.port, "drive:150", "drive:-100.5", "drive:-20", "drive:0")
    assert code == 0
    assert [n for _, n in calls(rows)[1:]] == ["ERR_BAD_ARGUMENT"] * 2 + ["RCI_CSTRP_IDLE"] * 2
    sets = [p for p in cp.received if isinstance(p, CStMt)]
    # -20 %: duty bit, sign bit (MOTOR_REVERSE), 409 of 2047; then a plain 0 %
    assert [p.items[0][1].speedval for p in sets] == [0x8000 | 0x0800 | 409, 0x8000]


def test_a_silent_cp_is_a_server_termination_with_error(api_check, robot_cp):
    """Every wait is bounded (BSAL_RCI_TIMEOUT_MS); the book has no timeout."""
    cp = robot_cp(lambda pkt: [])              # never answers anything
    code, rows = run(api_check, cp.port, "reset:1", "readultra:0", "term",
                     env={"BSAL_RCI_TIMEOUT_MS": "300"})
    assert code == 0
    assert [n for _, n in calls(rows)[1:]] == ["ERR_SERVER_TERMINATE"] * 2
    assert [r["name"] for k, r in rows if k == "term"] == ["RCI_CSVTM_ERROR"]


def test_readme_differences_name_existing_tests():
    """Every test named in legacy/README.md "Where we differ from the book"
    exists (so the table cannot point at a renamed or deleted test)."""
    from difference_tables import assert_named_tests_exist
    assert assert_named_tests_exist(LEGACY / "README.md", programs_allowed=True) >= 10
