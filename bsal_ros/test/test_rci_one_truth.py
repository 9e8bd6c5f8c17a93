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
"""Issue 21, "one robot, one truth", tested as a client that knows only the
bytes of seed 001 (a raw socket and ``struct``; neither the project's codec
nor the C++ library):

* a read issued right after a CCnAc (or a CStIq IDLE) returns the state after
  the command: clear, reset, activate, set motor; with late topic messages
  forced here, and 1,000 times in a row on the simulated bus and 300 on the
  smbus2 backend in test_rci_one_truth_rounds.py;
* one base time: CBsTm of every session is the hardware node's, and a
  reading's base + ms is the same instant on RCI, RDI and its ROS stamp;
* byte order per connection (``00 10`` / ``10 00``), both at once;
* every session starts from the same robot: a program that forgets CAcSn
  sees the ultrasonics deactivated whatever ran before, and the ROS side's
  sonars keep publishing after any legacy session (the book's listing too);
* a program that logs in again at once is served;
* CStIq answers with the base code.
"""

from __future__ import annotations

import os
from pathlib import Path
import re
import socket
import struct
import subprocess
import threading
import time
import uuid

import pytest

from stall_watch import StallWatch

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
BOOK_APP = REPO / "legacy" / "build" / "book-3.3"
DEMO_KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")

# ---- seed 001 chapter 4 codes, as printed (4.8) and DESIGN.md 3 ------------------
IIID, IINCP, ICAIQ, ICARP = 0x0010, 0x0011, 0x0012, 0x0013
CSTIQ, CSTRP, CSVTM, CCNAC, CRS, CBSTMIQ, CBSTM = (0x0100, 0x0101, 0x0102, 0x0103, 0x0104,
                                                   0x0106, 0x0107)
CACMT, CSTMT, CGTMTIQ, CGTMTRP = 0x0200, 0x0201, 0x0202, 0x0203
CACSN, CSTSN, CGTSNIQ, CGTSNRP = 0x0210, 0x0211, 0x0212, 0x0213
RQ_ACK, POLY, GROUP = 0x0800, 0x4000, 0x8000
IDLE = 0x0B
MOTOR_DC, SENSOR_US, SENSOR_REL = 0xC0, 0x83, 0x82
DATA, STATUS = 0x01, 0x02             # RCI_CGTMTST_*
SN_DATA, SN_STATUS = 0x04, 0x05       # RCI_CGTSNST_*
SPVAL, RELENC_CLEAR = 0xD0, 0x90      # RCI_MOTOR_DC_SPVAL, RCI_SENSOR_RELENCODER_CLEAR


class RawCA:
    """A control application from the book's bytes: login, control phase."""

    def __init__(self, port: int, order: str = ">", user: str = "demo", key: bytes = DEMO_KEY):
        self.o = order
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.base = None
        iiid = struct.pack(self.o + "HBB", IIID, 0, 3) + user.encode().ljust(16, b"\0") + key
        self.s.sendall(iiid + bytes(24))
        code = self.u16(self.read(2))
        assert code == IIID, hex(code)
        self.read(58)
        self.s.sendall(struct.pack(self.o + "H", IINCP))
        # the CP's IInCp and CBsTm (in either order with nothing else between)
        got = set()
        while got != {IINCP, CBSTM}:
            code = self.u16(self.read(2))
            if code == CBSTM:
                self.base = struct.unpack(self.o + "ii", self.read(8))
            elif code == ICAIQ:
                n = self.read(1)[0]
                self.read(3 * n)
                continue
            assert code in (IINCP, CBSTM), hex(code)
            got.add(code)

    def u16(self, b):
        return struct.unpack(self.o + "H", b)[0]

    def read(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            assert d, "connection closed"
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, *parts):
        self.s.sendall(b"".join(parts))

    def pk(self, fmt, *v):
        return struct.pack(self.o + fmt, *v)

    def next_code(self):
        """The next packet's code; CBsTm packets in between are taken (base kept)."""
        while True:
            code = self.u16(self.read(2))
            if code != CBSTM:
                return code
            self.base = struct.unpack(self.o + "ii", self.read(8))

    def expect_ack(self, cid):
        code = self.next_code()
        assert code == CCNAC, hex(code)
        assert self.u16(self.read(2)) == cid

    def close(self):
        self.s.close()

    # ---- commands (general form, or poly for many ids) ------------------------------
    def ids_packet(self, code, sub, items, fmt):
        """Poly packet of (id, value) items (one id: general form)."""
        if len(items) == 1:
            i, v = items[0]
            return self.pk("HBH" + fmt, code, sub, i, v)
        body = b"".join(self.pk("H" + fmt, i, v) for i, v in items)
        return self.pk("HBB", code | POLY, sub, len(items)) + body

    def activate_sonars(self, on: bool, ack=True):
        self.send(self.ids_packet(CACSN | (RQ_ACK if ack else 0), SENSOR_US,
                                  [(i, int(on)) for i in range(12)], "B"))
        if ack:
            self.expect_ack(CACSN)

    def sonar_status(self, ids=range(12)):
        """statvals of the ultrasonics (one poly STATUS inquiry)."""
        self.send(self.ids_packet(CGTSNIQ, SENSOR_US, [(i, SN_STATUS) for i in ids], "B"))
        return self._sensor_reply(SENSOR_US, len(list(ids)), "I")

    def _sensor_reply(self, sub, n, fmt):
        code = self.next_code()
        assert code & ~(POLY | GROUP) == CGTSNRP, hex(code)
        assert self.read(1)[0] == sub
        if n == 1 and not code & POLY:
            self.read(2)
            return [struct.unpack(self.o + fmt, self.read(struct.calcsize(fmt)))]
        cnt = self.read(1)[0]
        out = []
        for _ in range(cnt):
            self.read(2)
            out.append(struct.unpack(self.o + fmt, self.read(struct.calcsize(self.o + fmt))))
        return out

    def encoder_data(self):
        """(d_count, count) of relative encoder 0."""
        self.send(self.pk("HBHB", CGTSNIQ, SENSOR_REL, 0, SN_DATA))
        return self._sensor_reply(SENSOR_REL, 1, "hh")[0]

    def encoder_status(self):
        self.send(self.pk("HBHB", CGTSNIQ, SENSOR_REL, 0, SN_STATUS))
        return self._sensor_reply(SENSOR_REL, 1, "I")[0][0]

    def motor_data(self):
        """speedval of DC motor 0 (Get Motor DATA, general form)."""
        self.send(self.pk("HBHB", CGTMTIQ, MOTOR_DC, 0, DATA))
        code = self.next_code()
        assert code == CGTMTRP, hex(code)
        assert self.read(1)[0] == MOTOR_DC
        self.read(2)
        return self.u16(self.read(2))

    def motor_status(self):
        self.send(self.pk("HBHB", CGTMTIQ, MOTOR_DC, 0, STATUS))
        code = self.next_code()
        assert code == CGTMTRP, hex(code)
        self.read(3)
        return struct.unpack(self.o + "I", self.read(4))[0]

    def command(self, pkt, cid):
        self.send(pkt)
        self.expect_ack(cid)

    def activate_motor(self, on=True):
        self.command(self.pk("HBHB", CACMT | RQ_ACK, MOTOR_DC, 0, int(on)), CACMT)

    def set_motor(self, speedval):
        self.command(self.pk("HBHBH", CSTMT | RQ_ACK, MOTOR_DC, 0, SPVAL, speedval), CSTMT)

    def reset(self):
        self.command(self.pk("H", CRS | RQ_ACK), CRS)

    def clear(self):
        self.command(self.pk("HBHB", CSTSN | RQ_ACK, SENSOR_REL, 0, RELENC_CLEAR), CSTSN)


def ms_of(statval):
    return statval >> 8


# ---- the bring-up in-process: hardware node + gateways, one private context -------
class Robot:
    """Hardware node (sim or smbus2 on a fake bus), RCI and RDI gateways."""

    def __init__(self, context, backend="sim", monkeypatch=None, executor=None, **hw_overrides):
        from rclpy.parameter import Parameter

        from bsal_ros.nodes.hardware_node import HardwareNode
        from bsal_ros.nodes.rci_gateway import RciGatewayNode
        from bsal_ros.nodes.rdi_gateway import RdiGatewayNode
        from bsal_ros.nodes.runtime import make_executor
        if backend == "smbus2":
            from bsal_ros.hardware import backends
            from bsal_ros.hardware.bus import Smbus2Bus
            from bsal_ros.hardware.sim import build_sim_bus

            def fake_smbus2(robot, opts):
                # the smbus2 backend's own code (Smbus2Bus) over a fake SMBus:
                # virtual boards with the smbus2 method names
                return Smbus2Bus(int(opts.i2c_bus), clock=opts.clock,
                                 smbus_factory=lambda n: build_sim_bus(robot, opts.clock))
            monkeypatch.setitem(backends.BACKENDS, "smbus2", fake_smbus2)
        self.context = context
        ns = "/one_" + uuid.uuid4().hex[:8]
        self.executor = executor or make_executor(context)    # the executables' executor
        self.hw = HardwareNode(context=context, namespace=ns, auto_home=False,
                               bus_backend=backend, **hw_overrides)
        self.rci = RciGatewayNode(context=context, namespace=ns, parameter_overrides=[
            Parameter("port", value=0), Parameter("watchdog_s", value=30.0)])
        self.rdi = RdiGatewayNode(context=context, namespace=ns, parameter_overrides=[
            Parameter("realtime_port", value=0), Parameter("ca_port", value=0),
            Parameter("realtime_rate_hz", value=50.0)])
        for n in (self.hw, self.rci, self.rdi):
            self.executor.add_node(n)
        self._stop = False
        self._spin = threading.Thread(target=self._loop, daemon=True)
        self._spin.start()
        self.port = self.rci.start()
        self.rdi_ports = self.rdi.start()
        deadline = time.monotonic() + 30
        while not (self.rci.robot.device_list_known and self.rci.robot.base_time_ns()):
            assert time.monotonic() < deadline, "gateway never saw the hardware node"
            time.sleep(0.02)
        self.ns = ns

    def _loop(self):
        while not self._stop and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def close(self):
        self.rci.stop()
        self.rdi.stop()
        self._stop = True
        self._spin.join(5)
        for n in (self.rci, self.rdi, self.hw):
            self.executor.remove_node(n)
            n.destroy_node()
        self.executor.shutdown()


@pytest.fixture
def robot(ros_context):
    r = Robot(ros_context)
    yield r
    r.close()


# ================================================================== tests
def test_cstiq_echoes_the_base_code(robot):
    ca = RawCA(robot.port)
    try:
        ca.send(ca.pk("HH", CSTIQ, CSTMT | RQ_ACK))
        assert ca.next_code() == CSTRP
        assert ca.read(3) == ca.pk("HB", CSTMT, IDLE)
    finally:
        ca.close()


def read_after_command_loop(ca: RawCA, n: int) -> None:
    """Activate, set motor, clear, reset: every read right after the CCnAc
    (sent in the same write as the command) shows the new state."""
    on_speed = 0x0800 | 409        # duty 20 %, forward
    moved = 0
    for k in range(n):
        # activate -> status on-bit; set motor -> speedval (read at once)
        ca.activate_motor(True)
        assert ca.motor_status() & 1, k
        ca.set_motor(on_speed)
        assert ca.motor_data() == on_speed, k
        # the wheel turns a little: clear with RQ_ACK, read in the same write. The
        # count is read until it moved (up to 2 s): how soon a read shows the
        # motion depends on when polls arrive, not on the guarantee under test
        time.sleep(0.06)
        before = ca.encoder_data()[1]
        turning = time.monotonic() + 2.0
        while abs(before) <= 3 and time.monotonic() < turning:
            time.sleep(0.01)
            before = ca.encoder_data()[1]
        ca.send(ca.pk("HBHB", CSTSN | RQ_ACK, SENSOR_REL, 0, RELENC_CLEAR),
                ca.pk("HBHB", CGTSNIQ, SENSOR_REL, 0, SN_DATA))
        ca.expect_ack(CSTSN)
        assert ca.next_code() == CGTSNRP
        ca.read(3)
        _, c = struct.unpack(ca.o + "hh", ca.read(4))
        moved += abs(before) > 3
        # counts since the clear (a poll may have come between), never the ones before
        # it: the count only grows while the wheel turns one way, so the next read can
        # never show less than this one; a stale (pre-clear) first read would, since the
        # clear restarted the count (no timing in this check: a loaded machine passes)
        after = ca.encoder_data()[1]
        assert abs(after) >= abs(c) - 3, (k, before, c, after)
        # reset with RQ_ACK, Get Motor DATA and STATUS in the same write
        ca.send(ca.pk("H", CRS | RQ_ACK), ca.pk("HBHB", CGTMTIQ, MOTOR_DC, 0, DATA))
        ca.expect_ack(CRS)
        assert ca.next_code() == CGTMTRP
        ca.read(3)
        assert ca.u16(ca.read(2)) & 0x07FF == 0, k
        assert not ca.motor_status() & 1, k
        # activate sonars without RQ_ACK, CStIq IDLE, then read: on-bits
        ca.activate_sonars(k % 2 == 0, ack=False)
        ca.send(ca.pk("HH", CSTIQ, CACSN))
        assert ca.next_code() == CSTRP and ca.read(3) == ca.pk("HB", CACSN, IDLE)
        assert all((s[0] & 1) == (k % 2 == 0) for s in ca.sonar_status()), k
    # the clear was tested against a moving count most of the time
    assert moved >= n // 2, (moved, n)


def watched_rounds(ca: RawCA, n: int, stacks: Path) -> None:
    """``read_after_command_loop`` under a :class:`StallWatch`: a failed round
    says whether the test process stalled meanwhile, and in which calls."""
    with StallWatch(stacks, limit=0.5) as watch:
        try:
            read_after_command_loop(ca, n)
        except Exception as exc:    # noqa: BLE001 - re-raised with the stall report
            raise AssertionError(f"{exc!r}\n{watch.report()}") from exc
    print(watch.report())


@pytest.mark.timeout(900)
def test_late_topic_messages_never_take_a_read_back_in_time(ros_context, monkeypatch):
    """What a loaded multi-threaded executor does now and then (the smbus2 rounds
    failed once in about 150 in CI before the fix): a ``device_states`` message
    handled after a ``get_device_states`` answer whose content is newer. Here the
    hardware node answers ``get_device_states`` 120 ms late (more than two polls of
    the drive board) and the gateway gets every ``device_states`` message 250 ms
    late, so the first read after each command is answered from a state newer than
    the polls still on their way; the following read must never show an older
    count than it (the wheel turns one way: the count only grows)."""
    from bsal_ros.nodes import hardware_node, rci_ros_port
    on_states = rci_ros_port.RosRobotPort._on_states
    get_states = hardware_node.HardwareNode._srv_get_states

    def late_states(self, msg):
        threading.Timer(0.05, on_states, (self, msg)).start()

    def slow_get_states(self, req, res):
        time.sleep(0.12)
        return get_states(self, req, res)
    monkeypatch.setattr(rci_ros_port.RosRobotPort, "_on_states", late_states)
    monkeypatch.setattr(hardware_node.HardwareNode, "_srv_get_states", slow_get_states)
    from rclpy.executors import MultiThreadedExecutor
    r = Robot(ros_context, executor=MultiThreadedExecutor(num_threads=4, context=ros_context))
    ca = None
    try:
        ca = RawCA(r.port)
        read_after_command_loop(ca, int(os.environ.get("BSAL_ONE_TRUTH_N_LATE", "50")))
    finally:
        if ca is not None:
            ca.close()
        # let the last slow answer and the late messages land before the nodes go
        time.sleep(0.4)
        r.close()


def rdi_packets(port: int, seconds: float):
    """(base (sec, usec), [(delay, statval) of sonar 0]) from the real-time RDI stream:
    the base-time packet (RDI-Ms 0x0800 BASETIME 0x01, timeval) comes first,
    then each frame starts with the sonars' group packet (0x8010, ULTRASONIC 0x01)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        buf = b""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            buf += s.recv(65536)
    # frames sent before the gateway heard the hardware node's base time carry none;
    # the base-time packet precedes every frame after it
    start = buf.find(struct.pack(">HB", 0x0800, 0x01))
    assert start >= 0, buf[:16].hex()
    buf = buf[start:]
    code, sub, sec, usec = struct.unpack(">HBii", buf[:11])
    assert (code, sub) == (0x0800, 0x01)
    readings = []
    for m in re.finditer(re.escape(struct.pack(">HBBH", 0x8010, 0x01, 12, 0)), buf):
        item = buf[m.end():m.end() + 6]
        if len(item) == 6:
            readings.append(struct.unpack(">HI", item))
    return (sec, usec), readings


def test_one_base_time_on_rci_and_rdi(robot):
    hw_ns = robot.rci.robot.base_time_ns()
    ca = RawCA(robot.port)
    try:
        # CBsTm of the session is the hardware node's base time
        assert ca.base == (hw_ns // 10**9, (hw_ns // 1000) % 10**6)
        ca.activate_sonars(True)
        rci = []
        got = {}

        def collect():
            try:
                got["r"] = rdi_packets(robot.rdi_ports["realtime"], 1.5)
            except Exception as exc:     # shown by the assertion below
                got["error"] = repr(exc)
        t = threading.Thread(target=collect)
        t.start()
        for _ in range(20):
            ca.send(ca.ids_packet(CGTSNIQ, SENSOR_US, [(0, SN_DATA), (0, SN_STATUS)], "B"))
            code = ca.next_code()
            assert code == CGTSNRP | POLY
            ca.read(2)
            ca.read(2)
            delay = ca.u16(ca.read(2))
            ca.read(2)
            rci.append((delay, struct.unpack(">I", ca.read(4))[0]))
            time.sleep(0.05)
        t.join()
        assert "r" in got, got
        base, rdi = got["r"]
        assert base == ca.base
        # the same reading (same ms) carries the same delay and time on both
        by_ms = {ms_of(sv): d for d, sv in rdi}
        same = [(d, sv) for d, sv in rci if ms_of(sv) in by_ms]
        assert same, (rci[:3], rdi[:3])
        assert all(by_ms[ms_of(sv)] == d for d, sv in same)
    finally:
        ca.close()


def test_both_byte_orders_are_served(robot):
    le = RawCA(robot.port, order="<")
    try:
        le.activate_motor(True)
        assert le.motor_status() & 1
        # a big-endian program meanwhile is refused in its own order
        s = socket.create_connection(("127.0.0.1", robot.port), timeout=10)
        s.sendall(struct.pack(">HBB", IIID, 0, 3) + b"demo".ljust(16, b"\0") + DEMO_KEY
                  + bytes(24))
        got = b""
        while len(got) < 6:
            d = s.recv(64)
            if not d:
                break
            got += d
        s.close()
        assert got[:6] == struct.pack(">HHH", IINCP, CSVTM, 0x0002) or \
            got[:2] == struct.pack(">H", IINCP), got.hex()
        assert le.motor_status() & 1
    finally:
        le.close()
    be = RawCA(robot.port, order=">")
    try:
        assert not be.motor_status() & 1    # a new session: deactivated for it
    finally:
        be.close()


def test_a_program_that_logs_in_again_at_once_is_served(robot):
    for k in range(20):
        ca = RawCA(robot.port, order="<" if k % 2 else ">")
        ca.activate_sonars(True)
        ca.close()          # and at once the next login


def every_sonar_publishes(robot, n: int = 5, timeout: float = 60.0) -> dict:
    """Wait until each sonar_NN topic has carried ``n`` Range messages since
    now (a volatile subscription: nothing published before is replayed);
    returns the counts. A sonar that stays silent fails at ``timeout``, a
    deadline for a loaded machine, not a rate."""
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Range
    node = rclpy.create_node("sonar_watch_" + uuid.uuid4().hex[:6], context=robot.context,
                             namespace=robot.ns)
    counts = dict.fromkeys(range(12), 0)

    def cb(i):
        def f(_msg):
            counts[i] += 1
        return f
    subs = [node.create_subscription(Range, f"sonar_{i:02d}", cb(i), qos_profile_sensor_data)
            for i in range(12)]
    robot.executor.add_node(node)
    try:
        deadline = time.monotonic() + timeout
        while min(counts.values()) < n:
            assert time.monotonic() < deadline, f"sonars that stopped publishing: {counts}"
            time.sleep(0.05)
        return dict(counts)
    finally:
        robot.executor.remove_node(node)
        for s in subs:
            node.destroy_subscription(s)
        node.destroy_node()


def test_sessions_never_switch_the_ros_robot_off_and_start_alike(robot):
    # a program that forgets CAcSn, on a fresh bring-up
    ca = RawCA(robot.port)
    fresh = [s[0] & 1 for s in ca.sonar_status()]
    ca.close()
    # programs that activate, deactivate, reset, and leave (or are killed)
    for how in ("deactivate", "reset", "leave"):
        ca = RawCA(robot.port)
        ca.activate_sonars(True)
        ca.activate_motor(True)
        if how == "deactivate":
            ca.activate_sonars(False)
            ca.activate_motor(False)
        elif how == "reset":
            ca.reset()
        ca.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        ca.close()          # RST, like a killed program
    ca = RawCA(robot.port)
    after = [s[0] & 1 for s in ca.sonar_status()]
    ca.close()
    assert fresh == after == [0] * 12       # deactivated for every new program
    every_sonar_publishes(robot)                            # for ROS, whatever the programs did


@pytest.mark.skipif(not BOOK_APP.exists(), reason="legacy/build/book-3.3 not built")
def test_book_listing_then_every_sonar_still_publishes(robot):
    r = subprocess.run([str(BOOK_APP), f"127.0.0.1:{robot.port}"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    deadline = time.monotonic() + 10
    while robot.rci.server.session is not None:      # its session closing
        assert time.monotonic() < deadline
        time.sleep(0.05)
    every_sonar_publishes(robot)


def test_the_ros_stamp_of_a_reading_is_its_rci_time(robot, ros_context):
    """base + ms of a sonar reading on RCI is its Range header stamp, to the ms."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Range
    probe = rclpy.create_node("stamp_probe", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(probe)
    ranges = []
    probe.create_subscription(
        Range, f"{robot.ns}/sonar_00",
        lambda m: ranges.append((m.header.stamp.sec * 10**9 + m.header.stamp.nanosec, m.range)),
        qos_profile_sensor_data)
    ca = RawCA(robot.port)
    try:
        ca.activate_sonars(True)
        rci = []
        for _ in range(30):
            ca.send(ca.ids_packet(CGTSNIQ, SENSOR_US, [(0, SN_DATA), (0, SN_STATUS)], "B"))
            assert ca.next_code() == CGTSNRP | POLY
            ca.read(4)
            delay = ca.u16(ca.read(2))
            ca.read(2)
            statval = struct.unpack(">I", ca.read(4))[0]
            base_ns = ca.base[0] * 10**9 + ca.base[1] * 1000
            rci.append((base_ns + ms_of(statval) * 10**6, delay))
            executor.spin_once(timeout_sec=0.05)
        for _ in range(10):
            executor.spin_once(timeout_sec=0.05)
    finally:
        ca.close()
        executor.shutdown()
        probe.destroy_node()
    matched = 0
    for t_rci, delay in set(rci):
        same = [(t, r) for t, r in ranges if abs(t - t_rci) < 10**6]
        if not same:
            continue
        matched += 1
        # the same reading: its range is its delay at 343 m/s, there and back
        assert any(abs(r - delay * 1e-6 * 343.0 / 2) < 1e-3 for _, r in same), (delay, same)
    assert matched >= 5, (len(set(rci)), len(ranges), rci[:3], ranges[:3])


def test_a_base_time_rollover_sends_cbstm_to_the_session(ros_context):
    """4.7.3: when the statval window moves, the session hears CBsTm with the new base."""
    r = Robot(ros_context, base_time_rollover_s=2.0)
    ca = None
    try:
        ca = RawCA(r.port)
        first = ca.base
        deadline = time.monotonic() + 10
        while ca.base == first:
            assert time.monotonic() < deadline, "no CBsTm after the base time moved"
            ca.send(ca.pk("HH", CSTIQ, CSTMT))       # any packet: next_code takes CBsTm
            assert ca.next_code() == CSTRP
            ca.read(3)
            time.sleep(0.2)
        assert ca.base > first
        hw_ns = r.rci.robot.base_time_ns()
        assert ca.base == (hw_ns // 10**9, (hw_ns // 1000) % 10**6)
    finally:
        if ca is not None:
            ca.close()
        r.close()
