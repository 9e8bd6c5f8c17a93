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

"""The main job, as `make run` starts it: the whole bridge in one process.

Starts `brak_bringup` as a subprocess on free ports, drives it with the legacy
C++ example control application over RCI, watches both RDI streams, then
stops it with SIGTERM and checks that it shut down cleanly.
"""
import os
from pathlib import Path
import re
import select
import signal
import socket
import subprocess
import sys
import time

import pytest

from bsal_ros.protocol import RdiBaseTime, RdiDecoder, RdiOrientEgo, RdiSensor

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/, bench/ beside the packages
CLIENT_APP = REPO / "legacy" / "build" / "client-app"
UP = re.compile(r"Brak is up: .*RCI 127\.0\.0\.1:(\d+), "
                r"RDI 127\.0\.0\.1 \(realtime :(\d+), ca :(\d+)\)")


class Bridge:
    """brak_bringup in a subprocess, its output (stdout and stderr) read line by line."""

    def __init__(self, *extra):
        cmd = [sys.executable, "-m", "bsal_ros.nodes.bringup", "--rci-port", "0",
               "--rdi-realtime-port", "0", "--rdi-ca-port", "0", "--foxglove-port", "0",
               "--page-port", "0",
               "--duration", "120", *extra]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=os.environ.copy())
        self.lines = []
        self._partial = b""
        self._complete: list[str] = []
        self.ports = self.wait_for(UP, timeout=60).groups()

    def read_available(self, timeout):
        """The next line, or None when none came within ``timeout``. The pipe is
        read raw and split here: a buffered readline() after select() keeps the
        lines that came in the same chunk where select() no longer sees them
        (they were lost: a wait_for missed them, communicate() never got them)."""
        if not self._complete:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            data = self._partial + chunk
            *done, self._partial = data.split(b"\n")
            if not chunk and self._partial:       # EOF: the last line has no newline
                done, self._partial = [*done, self._partial], b""
            self._complete += [d.decode(errors="replace") for d in done]
            if not self._complete:
                return None
        line = self._complete.pop(0)
        self.lines.append(line)
        return line + "\n"

    def wait_for(self, pattern, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.read_available(0.2)
            if line:
                m = pattern.search(line)
                if m:
                    return m
            assert self.proc.poll() is None or line, "bringup exited:\n" + "\n".join(self.lines)
        raise AssertionError(f"{pattern.pattern!r} not logged in {timeout} s:\n"
                             + "\n".join(self.lines))

    def recent(self, n=40):
        """The last ``n`` lines, with every line the bridge has written so far
        read first: a failure message names what the bridge said about it."""
        while self.read_available(0):
            pass
        return "\n".join(self.lines[-n:])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, _ = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        rest = (self._partial + out).decode(errors="replace")
        self.lines += self._complete + rest.splitlines()
        self._complete, self._partial = [], b""
        return self.proc.returncode


@pytest.fixture
def bridge():
    b = Bridge()
    yield b
    b.stop()


def read_rdi(port, seconds):
    """Packets decoded from one RDI stream during `seconds`."""
    decoder = RdiDecoder()
    packets = []
    with socket.create_connection(("127.0.0.1", int(port)), timeout=5) as s:
        s.settimeout(0.5)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            packets += decoder.feed(data)
    return packets


def test_legacy_client_drives_the_bridge_and_rdi_streams_it(bridge):
    rci_port, rt_port, ca_port = bridge.ports
    assert any("bus sim, EventsExecutor" in ln for ln in bridge.lines)   # auto on sim
    realtime = read_rdi(rt_port, 1.5)
    assert any(isinstance(p, RdiBaseTime) for p in realtime), "no base time on connect"
    assert any(isinstance(p, RdiSensor) for p in realtime), "no sensor data on the real-time stream"

    if not CLIENT_APP.exists():
        pytest.skip("legacy/build/client-app is not built "
                    "(make setup builds it; a colcon build does not)")
    app = subprocess.run([str(CLIENT_APP), "127.0.0.1", rci_port], capture_output=True,
                         text=True, timeout=120)
    out = app.stdout
    assert app.returncode == 0, out + app.stderr
    assert "done status=ok failures=0" in out, out
    assert "rc call=connectToServer code=0" in out, out
    delays = {int(d) for d in re.findall(r"ultra read=\d+ id=\d+ delay_us=(\d+)", out)}
    counts = [int(c) for c in re.findall(r"encoder read=\d+ id=0 count=(-?\d+)", out)]
    assert len(delays) > 1, "ultrasonic readings never changed while driving"
    assert len(set(counts)) > 1, "encoder count never changed while driving"
    # Driving in reverse (the example's MOTOR_REVERSE at 20 %): counts fall.
    assert counts[-1] < counts[0], counts


def test_brak_drive_sends_a_zero_twist_on_ctrl_c():
    """SIGINT mid-drive: the tool still sends its zero Twist and exits 0."""
    proc = subprocess.Popen([sys.executable, "-m", "bsal_ros.tools.drive", "0.3", "0.0",
                             "--seconds", "30", "--namespace", "drive_sigint"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    from geometry_msgs.msg import Twist
    import rclpy
    import rclpy.executors
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("drive_listener", namespace="drive_sigint", context=context)
    got = []
    node.create_subscription(Twist, "cmd_vel", lambda m: got.append(m.linear.x), 10)
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        deadline = time.monotonic() + 30
        while 0.3 not in got and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        assert 0.3 in got, "no cmd_vel from brak_drive"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        deadline = time.monotonic() + 5
        while got[-1] != 0.0 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        assert proc.returncode == 0, out
        assert "stopped (zero Twist sent)" in out and "Traceback" not in out, out
        assert got[-1] == 0.0, got[-5:]
    finally:
        if proc.poll() is None:
            proc.kill()
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)


def last_pose(port):
    poses = [p for p in read_rdi(port, 1.0) if isinstance(p, RdiOrientEgo)]
    assert poses, "no ego-centric orientation on the real-time stream"
    return poses[-1]


def test_brak_drive_moves_the_robot_through_cmd_vel(bridge):
    """brak_drive at 0.3 m/s moves the robot 0.2 m (waited for, up to a
    deadline for a loaded machine); Ctrl-C then ends it with a zero Twist."""
    _, rt_port, _ = bridge.ports
    bridge.wait_for(re.compile(r"auto-home done"), timeout=60)   # cmd_vel steers once homed
    before = last_pose(rt_port)
    drive = subprocess.Popen([sys.executable, "-m", "bsal_ros.tools.drive", "0.3", "0.0",
                              "--seconds", "300"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            after = last_pose(rt_port)
            travelled = ((after.xpos - before.xpos) ** 2 + (after.ypos - before.ypos) ** 2) ** 0.5
            if travelled > 0.2:
                break
            assert drive.poll() is None, drive.communicate()[0]
            assert time.monotonic() < deadline, (before, after)
        drive.send_signal(signal.SIGINT)
        out, _ = drive.communicate(timeout=30)
    finally:
        if drive.poll() is None:
            drive.kill()
            drive.wait(10)
    assert drive.returncode == 0, out
    assert "stopped (zero Twist sent) on SIGINT" in out, out


def test_sigterm_with_a_driving_client_stops_through_the_gateway(bridge):
    """The gateway's safety stop is answered during shutdown (the executor
    keeps serving the hardware node while the gateways close)."""
    from bsal_ros.protocol import (CAcMt, CCnAc, CStMt, MotorCommand, MotorCommandKind, MotorType,
                                   RciCode, speedval_pack)
    from bsal_ros.rci.client import RciClient
    from bsal_ros.rci.users import DEMO_KEY
    bridge.wait_for(re.compile(r"device list received"), timeout=60)
    client = RciClient("127.0.0.1", int(bridge.ports[0]), timeout=10)
    client.handshake("demo", DEMO_KEY)
    assert client.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
    thirty = MotorCommand(MotorCommandKind.SPVAL, speedval_pack(True, 30.0))
    assert client.request(CStMt.one(MotorType.DC, 0, thirty, rq_ack=True)) == CCnAc(RciCode.CStMt)
    rc = bridge.stop()
    client.close()
    log = "\n".join(bridge.lines)
    assert rc == 0, log
    assert "session ends" in log, log
    assert "safety stop" not in log, log        # every stop answered, none refused or lost
    assert "Traceback" not in log, log


def test_sigterm_stops_the_robot_and_exits_cleanly():
    bridge = Bridge("--executor", "multi")     # 1.0's option: accepted, said to be ignored
    rc = bridge.stop()
    log = "\n".join(bridge.lines)
    assert rc == 0, log
    assert "stopping: motors off, sockets closed" in log
    assert "EventsExecutor" in log
    assert "--executor multi is deprecated and ignored" in log
    assert "Traceback" not in log, log
