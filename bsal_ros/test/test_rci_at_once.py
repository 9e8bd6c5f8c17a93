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

"""Inquiries answered in the loop's read callback (issue 31): an inquiry the
cache answers goes out without the session's task; anything else keeps its
turn; a port that fails there is answered as in the task; the last reply to
a request is sent again only while its states and the CA's view are the
same; the socket is no longer read while many packets wait."""

from __future__ import annotations

import asyncio
import time

import pytest

from bsal_ros.core.device_classes import ULTRASONIC
from bsal_ros.protocol.constants import (CStRpStatus, GetSensorStatus, MotorType, RciCode,
                                         SensorType)
from bsal_ros.protocol.rci import (CAcMt, CAcSn, CCnAc, CGtSnIq, CGtSnRp, CStMt, CStRp, encode_rci,
                                   MotorCommand, MotorCommandKind)
from bsal_ros.protocol.values import speedval_pack, Statval
from bsal_ros.rci.client import RciClient
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.port import PortUnavailable
from bsal_ros.rci.transport import HOLD_QUEUED, PacketReader, RciTransport, RELEASE_QUEUED
from bsal_ros.rci.users import DEMO_KEY

from conftest import RciServerThread

pytestmark = pytest.mark.timeout(120)

USERS_YAML = """
users:
  - {name: demo, role: operator, key: "0123456789abcdef0123456789abcdef"}
"""

SONARS = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)


class WatchedPort(FakeRobotPort):
    """A fake robot that notes, for every cache read, whether it ran in a
    task (the session's) or in a plain callback (the read callback), and
    that can hold its Set Motor and hide its device list."""

    def __init__(self):
        super().__init__()
        self.cached_in_task: list[bool] = []
        self.motor_release: asyncio.Event | None = None
        self.motor_held = False
        self.device_list_known = True

    def device_ids(self, device_class):
        if not self.device_list_known:
            raise PortUnavailable("device list not known yet (hardware node not seen)")
        return super().device_ids(device_class)

    def cached(self, device_class, ids):
        self.cached_in_task.append(asyncio.current_task() is not None)
        return super().cached(device_class, ids)

    async def set_motors(self, device_class, settings):
        if self.motor_release is not None:
            self.motor_held = True
            await self.motor_release.wait()
        return await super().set_motors(device_class, settings)


class SameObjectsPort(FakeRobotPort):
    """A fake robot whose cache hands out the same state objects until
    :meth:`new_reading`, as the gateway's StateCache does."""

    def __init__(self):
        super().__init__()
        self.kept: dict = {}

    def new_reading(self):
        self.kept.clear()

    def cached(self, device_class, ids):
        out = []
        for i in ids:
            key = (device_class, i)
            if key not in self.kept:
                self.kept[key] = self.snapshot(device_class, i)
            out.append(self.kept[key])
        return out


@pytest.fixture
def server():
    made = []

    def start(robot):
        s = RciServerThread(USERS_YAML, robot, linger_s=0.2)
        made.append(s)
        return s
    yield start
    for s in made:
        s.stop()


def wait_for(condition, what, timeout=20.0):
    """Wait until ``condition()`` is true (a bound for a loaded machine, not
    a figure under test); fail with ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def connect(gw):
    c = RciClient("127.0.0.1", gw.port)
    c.handshake("demo", DEMO_KEY)
    return c


def switch_on():
    return CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)


def set_motor(rq_ack=True):
    return CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                   speedval_pack(True, 0.0)), rq_ack=rq_ack)


def test_a_cached_inquiry_is_answered_without_the_sessions_task(server):
    robot = WatchedPort()
    gw = server(robot)
    with connect(gw) as c:
        # the first may come before the control phase began to wait (then
        # the task answers it); each later one is sent after the answer to
        # the one before, when the session is waiting
        assert isinstance(c.request(SONARS), CGtSnRp)
        robot.cached_in_task.clear()
        for _ in range(5):
            assert isinstance(c.request(SONARS), CGtSnRp)
    # answered in the read callback, where no task runs
    assert robot.cached_in_task and not any(robot.cached_in_task), robot.cached_in_task


def test_an_inquiry_behind_a_command_keeps_its_turn(server):
    robot = WatchedPort()
    gw = server(robot)
    with connect(gw) as c:
        assert c.request(switch_on()) == CCnAc(RciCode.CAcMt)
        release = gw.call(asyncio.Event)
        robot.motor_release = release
        robot.cached_in_task.clear()
        # the inquiry arrives while the command waits for the robot: sent once
        # the command is held, released once the inquiry is queued
        c.send(set_motor())
        wait_for(lambda: robot.motor_held, "the Set Motor reaches the port")
        c.send(SONARS)
        wait_for(lambda: gw.call(lambda: gw.server.session.transport.queued) == 1,
                 "the inquiry is queued behind the command")
        gw.loop.call_soon_threadsafe(release.set)
        assert c.recv(10) == CCnAc(RciCode.CStMt)
        assert isinstance(c.recv(10), CGtSnRp)
        # answered by the session's task, after the command
        assert robot.cached_in_task == [True]
        # and the next one, sent while the session waits, at once again
        assert isinstance(c.request(SONARS), CGtSnRp)
        assert robot.cached_in_task == [True, False]


def test_an_unknown_device_list_in_the_read_callback_is_an_abort_not_an_end(server):
    robot = WatchedPort()
    gw = server(robot)
    with connect(gw) as c:
        robot.device_list_known = False
        assert c.request(SONARS) == CStRp(RciCode.CGtSnIq, CStRpStatus.ABORT)
        robot.device_list_known = True
        assert isinstance(c.request(SONARS), CGtSnRp)
        assert c.request(switch_on()) == CCnAc(RciCode.CAcMt)


def status_of_sonar_0(c) -> Statval:
    rp = c.request(CGtSnIq.one(SensorType.ULTRASONIC, 0, GetSensorStatus.STATUS))
    assert isinstance(rp, CGtSnRp), rp
    return Statval.unpack(rp.items[0][1].statval)


def test_a_repeated_reply_follows_new_readings_and_the_cas_view(server, monkeypatch):
    robot = SameObjectsPort()
    gw = server(robot)
    encoded = []
    encode = RciTransport.encode

    def counting(self, pkt):
        encoded.append(type(pkt))
        return encode(self, pkt)
    monkeypatch.setattr(RciTransport, "encode", counting)
    with connect(gw) as c:
        first = c.request(SONARS)
        assert c.request(SONARS) == first
        assert encoded.count(CGtSnRp) == 1          # the same states: sent again
        robot.delay_base += 1000
        robot.new_reading()
        newer = c.request(SONARS)
        assert encoded.count(CGtSnRp) == 2
        assert newer.items[0][1].delay == first.items[0][1].delay + 1000
        # the on-bit of STATUS is this CA's own view: activating sonar 0
        # changes the reply though no reading changed
        assert not status_of_sonar_0(c).on
        assert c.request(CAcSn.one(SensorType.ULTRASONIC, 0, 1, rq_ack=True)) == \
            CCnAc(RciCode.CAcSn)
        assert (ULTRASONIC, 0) in robot.kept       # the same state object as before
        assert status_of_sonar_0(c).on


class FakeSocketTransport(asyncio.Transport):
    """Counts pause_reading / resume_reading."""

    def __init__(self):
        super().__init__()
        self.paused = 0
        self.resumed = 0

    def pause_reading(self):
        self.paused += 1

    def resume_reading(self):
        self.resumed += 1

    def is_closing(self):
        return False

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default


class FakeWriter:
    """An asyncio StreamWriter's part the transport uses."""

    def __init__(self):
        self.transport = FakeSocketTransport()
        self.data = bytearray()

    def write(self, data):
        self.data += data

    def get_extra_info(self, name, default=None):
        return self.transport.get_extra_info(name, default)


def diverted(answer):
    """A logged-in connection's transport over a fake socket, its packets
    offered to ``answer``: (transport, reader, writer). Inside a running loop."""
    reader = PacketReader()
    writer = FakeWriter()
    reader.set_transport(writer.transport)
    t = RciTransport(reader, writer)
    t.order_known = True
    t.logged_in()
    t.answer_at_once(answer)
    return t, reader, writer


def test_the_socket_is_not_read_while_many_packets_wait():
    async def run():
        # nothing answers at once: every packet waits for the session
        t, reader, writer = diverted(lambda pkt: False)
        one = encode_rci(SONARS)
        reader.feed_data(one * (HOLD_QUEUED + 10))
        assert t.queued == HOLD_QUEUED + 10
        assert writer.transport.paused == 1 and writer.transport.resumed == 0
        for _ in range(HOLD_QUEUED + 10 - RELEASE_QUEUED - 1):
            await t.next()
        assert writer.transport.resumed == 0
        await t.next()
        assert t.queued == RELEASE_QUEUED
        assert writer.transport.resumed == 1
        # the stream's end reaches a session waiting for a packet
        while t.queued:
            await t.next()
        waiting = asyncio.ensure_future(t.next())
        await asyncio.sleep(0)
        reader.feed_eof()
        with pytest.raises(Exception, match="closed the connection"):
            await waiting
    asyncio.run(run())


def test_an_answer_that_raises_ends_the_session_through_next():
    async def run():
        def broken(pkt):
            raise RuntimeError("handler bug")
        t, reader, _ = diverted(broken)
        waiting = asyncio.ensure_future(t.next())
        await asyncio.sleep(0)
        reader.feed_data(encode_rci(SONARS))        # must not raise into the protocol
        with pytest.raises(RuntimeError, match="handler bug"):
            await waiting
    asyncio.run(run())
