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

"""Issue 38, "a start is clean": a control application that logs in the
moment a fresh bridge's RCI port accepts gets every read answered as it
would be a minute later, never ABORT for a device the robot has.

The gateway listens at once, but the robot is known only once the hardware
node's interfaces are discovered and its device list received; the session
now stays in its initialization phase until then (our IInCp held, 001
4.5.3), at most ``hardware_wait_s``, then the CP refuses service (IInCp,
CSvTm ERROR). The first tests drive the session logic with a robot that is
known late (no ROS); the last ones start real processes: fresh
``brak_bringup`` processes, and the three-process layout of
``brak.launch.py`` (hardware_node, rci_gateway apart), a client connecting
the moment the port accepts.
"""
import logging
import os
import re
import subprocess
import sys
import time

import pytest

from bsal_ros.protocol.constants import CStRpStatus, RciCode, TermCode
from bsal_ros.protocol.rci import (CBsTm, CGtSnRp, CStRp, CSvTm, ICaIq, ICaRp,
                                   IIId, IInCp)
from bsal_ros.rci.client import all_access_inquiries, RciClient
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.port import PortUnavailable
from bsal_ros.rci.users import DEMO_KEY

from child_process import stopped
from conftest import build_legacy, RciServerThread
from start_race import READS
from test_bringup import Bridge, ROOT
from test_rci_gateway import USERS_YAML

pytestmark = pytest.mark.timeout(600)

#: fresh bridges per layout (each start is a new race)
FRESH_BRIDGES = 4
#: longest a client waits for a packet: the gateway's hardware_wait_s and a margin
CLIENT_TIMEOUT_S = 40.0


class LateRobot(FakeRobotPort):
    """A fake robot whose device list is not known until ``known`` is set
    (as RosRobotPort before list_devices has answered)."""

    def __init__(self):
        super().__init__()
        self.known = False

    def waiting_for(self) -> str:
        return "" if self.known else "its device list (a test's late robot)"

    def device_ids(self, device_class: str) -> frozenset[int]:
        if not self.known:
            raise PortUnavailable("device list not known yet (hardware node not seen)")
        return super().device_ids(device_class)


class Lines(logging.Handler):
    """The messages logged on ``bsal_ros.rci`` while installed."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []
        self.logger = logging.getLogger("bsal_ros.rci")

    def emit(self, record):
        self.messages.append(record.getMessage())

    def __enter__(self):
        self.logger.addHandler(self)
        self.old_level = self.logger.level
        self.logger.setLevel(logging.DEBUG)
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self)
        self.logger.setLevel(self.old_level)

    def having(self, text: str) -> list[str]:
        return [m for m in self.messages if text in m]

    def wait_for(self, text: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.having(text):
            assert time.monotonic() < deadline, f"{text!r} never logged: {self.messages}"
            time.sleep(0.01)


def read_all(client: RciClient) -> list:
    """The replies to :data:`READS`, in order."""
    return [client.request(pkt, CLIENT_TIMEOUT_S) for pkt in READS]


def assert_answered(replies: list, where: str) -> None:
    """Each reply is the read's own reply with every item, none a CStRp."""
    aborts = [r for r in replies if isinstance(r, CStRp)]
    assert not aborts, f"{where}: {aborts}"
    assert [type(r) for r in replies] == [CGtSnRp, CGtSnRp], f"{where}: {replies}"
    assert [len(r.items) for r in replies] == [12, 1], f"{where}: {replies}"


# ------------------------------------------------------------ the session (no ROS)
def test_the_init_phase_waits_for_the_robot_and_answers_capabilities_meanwhile():
    robot = LateRobot()
    gw = RciServerThread(USERS_YAML, robot, linger_s=0.2, init_quiet_s=0.05)
    try:
        with Lines() as lines, RciClient("127.0.0.1", gw.port, timeout=CLIENT_TIMEOUT_S) as c:
            c.send(IIId(0, 3, b"demo", DEMO_KEY))
            assert isinstance(c.recv(), IIId)
            lines.wait_for("waiting for the hardware node: its device list")
            c.send(ICaIq(all_access_inquiries()))
            assert isinstance(c.recv(), ICaRp)     # answered while the robot is not known
            # the CA's IInCp and its first read, at once: the read must wait for the robot
            c.send(IInCp())
            c.send(READS[0])
            gw.call(lambda: setattr(robot, "known", True))
            assert isinstance(c.recv(), IInCp)
            assert isinstance(c.recv(), CBsTm)
            reply = c.recv()
            assert isinstance(reply, CGtSnRp), reply
            assert len(lines.having("waiting for the hardware node")) == 1, lines.messages
            assert not lines.having("answered ABORT"), lines.messages
    finally:
        gw.stop()


def test_a_robot_not_known_in_time_is_the_cps_refusal_of_service_with_one_line():
    gw = RciServerThread(USERS_YAML, LateRobot(), linger_s=0.2, hardware_wait_s=0.2,
                         init_quiet_s=0.05)
    try:
        with Lines() as lines, RciClient("127.0.0.1", gw.port, timeout=CLIENT_TIMEOUT_S) as c:
            c.send(IIId(0, 3, b"demo", DEMO_KEY))
            assert isinstance(c.recv(), IIId)
            c.send(IInCp())
            # 001 4.5: the CP's refusal of service is IInCp, then CSvTm
            assert c.wait_closed(CLIENT_TIMEOUT_S) == [IInCp(), CSvTm(TermCode.ERROR)]
            gw.wait_idle()
            why = lines.having("not known after 0.2 s (hardware_wait_s)")
            assert len(why) == 1 and "its device list" in why[0], lines.messages
    finally:
        gw.stop()


def test_a_refused_read_is_logged_with_its_reason_once_not_per_packet():
    robot = FakeRobotPort()
    gw = RciServerThread(USERS_YAML, robot, linger_s=0.2)
    try:
        with Lines() as lines, RciClient("127.0.0.1", gw.port, timeout=CLIENT_TIMEOUT_S) as c:
            c.handshake("demo", DEMO_KEY)
            gw.call(lambda: setattr(robot, "available", False))
            for _ in range(5):
                assert c.request(READS[1]) == CStRp(RciCode.CGtSnIq, CStRpStatus.ABORT)
            why = lines.having("CGtSnIq answered ABORT")
            assert len(why) == 1, lines.messages
            assert "robot not answering: fake robot switched off" in why[0], why
    finally:
        gw.stop()


# -------------------------------------------------------------- real processes
def connect_and_read(port: int, where: str) -> None:
    """Log in at once and read every sensor; assert none is refused."""
    with RciClient("127.0.0.1", port, timeout=CLIENT_TIMEOUT_S) as c:
        server_id, _, base = c.handshake("demo", DEMO_KEY)
        assert isinstance(server_id, IIId), f"{where}: {server_id}"
        assert isinstance(base, CBsTm), f"{where}: {base}"
        assert_answered(read_all(c), where)


def check_log(lines: list[str], where: str) -> None:
    """At most one waiting line per session, and no refusal logged."""
    text = "\n".join(lines)
    assert len(re.findall("waiting for the hardware node", text)) <= 1, f"{where}:\n{text}"
    assert "answered ABORT" not in text, f"{where}:\n{text}"


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("run", range(FRESH_BRIDGES))
def test_a_fresh_bringup_answers_every_read_at_once(run):
    bridge = Bridge("--namespace", f"start_race_{os.getpid()}_{run}")
    try:
        connect_and_read(int(bridge.ports[0]), f"fresh bringup {run}")
    finally:
        assert bridge.stop() == 0, "\n".join(bridge.lines)
    check_log(bridge.lines, f"fresh bringup {run}")


@pytest.mark.ros
@pytest.mark.slow
def test_a_fresh_bringup_drives_the_legacy_client_app_without_an_abort():
    """The C++ library's sample application (001 3.3) at once on a fresh bridge."""
    app = build_legacy() / "client-app"
    bridge = Bridge("--namespace", f"start_race_{os.getpid()}_app")
    try:
        run = subprocess.run([str(app), "127.0.0.1", bridge.ports[0]], capture_output=True,
                             text=True, timeout=180)
    finally:
        assert bridge.stop() == 0, "\n".join(bridge.lines)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ABORT" not in run.stdout, run.stdout
    check_log(bridge.lines, "client-app")


READY = re.compile(r"RCI gateway ready on 127\.0\.0\.1:(\d+)")


def node(module: str, ns: str, *params: str) -> subprocess.Popen:
    """One node of the launch file's layout, in its own process."""
    args = [a for p in params for a in ("-p", p)]
    return subprocess.Popen([sys.executable, "-m", module, "--ros-args", "-r", f"__ns:={ns}",
                             *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=os.environ.copy())


@pytest.mark.ros
@pytest.mark.slow
def test_the_three_process_layout_answers_every_read_at_once():
    """rci_gateway started first, the hardware node beside it (as a launch
    file may order them): the client logs in as soon as the port accepts."""
    ns = f"/start_race_{os.getpid()}_3p"
    gateway = node("bsal_ros.nodes.rci_gateway", ns, "port:=0")
    hardware = None
    out = ""
    try:
        port = None
        for line in gateway.stdout:
            out += line
            m = READY.search(line)
            if m:
                port = int(m.group(1))
                break
        assert port, out
        hardware = node("bsal_ros.nodes.hardware_node", ns, "auto_home:=false")
        connect_and_read(port, "3-process layout")
    finally:
        hw_out = stopped(hardware) if hardware is not None else ""
        out += stopped(gateway)
    assert gateway.returncode == 0, out
    assert hardware.returncode == 0, hw_out
    check_log(out.splitlines(), "3-process layout")
    assert "waiting for the hardware node" in out, out     # it was started after the login
