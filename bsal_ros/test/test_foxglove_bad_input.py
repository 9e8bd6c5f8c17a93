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

"""Bad input to the Foxglove gateway, each its own test (issue 50, item 3).

One ``brak_bringup`` for the module; a well-behaved Node client (Foxglove's
own libraries, test/foxglove_js/client.js) watches ``/joint_states`` all
along, and an rclpy node counts what reaches the robot (``cmd_vel``,
``set_pose``) and reads the drive's commanded speed. Each bad client comes
from a loopback address of its own (127.0.0.N), as another laptop would, and
repeats its bad input 20 times. For each: the client gets a clear status
(the SDK's own for protocol errors, the gateway's broadcast status naming the
client for refusals), the bridge logs one line however many times it came,
nothing reaches the robot, and the bridge and the well-behaved client go on:
the well-behaved client gets every ``/joint_states`` message rclpy gets.
The module's bridge also lets clients publish on ``/fg_free``, which nobody on
the robot subscribes to: a channel there waits for a subscriber.
"""

from __future__ import annotations

import base64
import os
import re
import time

import pytest

from foxglove_agent import NodeClient, StalledClient, stamp_of
from test_bringup import Bridge
from test_foxglove_client import drive, foxglove_url

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(300)]

#: how many times each bad client repeats its bad input
REPEATS = 20
#: a topic clients may publish on (the module's bridge adds it) that nobody on the robot takes
FREE = "/fg_free"


@pytest.fixture(scope="module")
def bridge():
    b = Bridge("--duration", "900", "--ros-args",
               "-p", f"foxglove_gateway:client_publish:=cmd_vel,{FREE}")
    b.url = foxglove_url(b)
    b.port = int(b.url.rsplit(":", 1)[1])
    yield b
    b.stop()


@pytest.fixture(scope="module")
def ros(bridge):
    from bsal_interfaces.msg import DeviceStateArray
    from geometry_msgs.msg import PoseWithCovarianceStamped, Twist
    from sensor_msgs.msg import JointState

    from foxglove_agent import RosSide
    side = RosSide([("/cmd_vel", Twist, 50), ("/set_pose", PoseWithCovarianceStamped, 50),
                    ("/joint_states", JointState, 50), ("/motor_states", DeviceStateArray, 50)])
    side.wait_message("/joint_states", timeout=30)
    yield side
    side.close()


@pytest.fixture(scope="module")
def watcher(bridge):
    """The well-behaved client: it watches /joint_states for the whole module."""
    with NodeClient("well-behaved") as client:
        client.connect(bridge.url, localAddress="127.0.0.2")
        client.send("subscribe", topics=["/joint_states"])
        client.wait("message", lambda e: e["topic"] == "/joint_states")
        yield client


class Check:
    """What a bad input must leave as it was: taken before it, checked after."""

    def __init__(self, bridge, ros, watcher):
        self.bridge, self.ros, self.watcher = bridge, ros, watcher
        bridge.recent()
        self.log_mark = len(bridge.lines)
        self.counts = {t: ros.counts[t] for t in ("/cmd_vel", "/set_pose")}
        self.since = time.monotonic()

    def log(self, *words) -> list[str]:
        """The bridge's lines since the bad input holding every one of ``words``."""
        self.bridge.recent()
        return [ln for ln in self.bridge.lines[self.log_mark:] if all(w in ln for w in words)]

    def nothing_commanded(self) -> None:
        """No cmd_vel or set_pose reached the robot; the drive was never commanded."""
        assert {t: self.ros.counts[t] for t in self.counts} == self.counts
        speeds = {drive(m).speed for m in self.ros.messages("/motor_states", self.since)
                  if drive(m)}
        assert speeds <= {0.0}, speeds

    def bridge_goes_on(self) -> None:
        """The bridge runs, and the well-behaved client gets every /joint_states
        message rclpy gets in a window after the bad input (20 Hz: 10 of them)."""
        assert self.bridge.proc.poll() is None, self.bridge.recent()
        start = time.monotonic()
        self.ros.wait("ten /joint_states messages",
                      lambda: len([1 for at, _ in self.ros.kept["/joint_states"]
                                   if at >= start]) >= 10, timeout=30)
        wanted = {stamp_of({"header": {"stamp": {"sec": m.header.stamp.sec,
                                                 "nanosec": m.header.stamp.nanosec}}})
                  for m in self.ros.messages("/joint_states", start)}
        last = max(wanted)
        self.watcher.wait("message", lambda e: e["topic"] == "/joint_states"
                          and stamp_of(e["value"]) >= last, timeout=30)
        got = {stamp_of(e["value"]) for e in self.watcher.select(
            "message", lambda e: e["topic"] == "/joint_states")}
        assert wanted <= got, f"the well-behaved client missed {sorted(wanted - got)}"

    def done(self) -> None:
        """Both checks."""
        self.nothing_commanded()
        self.bridge_goes_on()


@pytest.fixture
def check(bridge, ros, watcher):
    return Check(bridge, ros, watcher)


def bad_client(bridge, address: str) -> NodeClient:
    """A client from loopback ``address``, connected."""
    client = NodeClient(f"bad client {address}")
    client.connect(bridge.url, localAddress=address)
    return client


def handled(client: NodeClient) -> None:
    """Return once the gateway has handled everything ``client`` sent so far: the
    SDK hands a client's frames to the gateway in order and the gateway works
    through them in order, so the refusal of one more channel (on
    ``/initialpose``, not allowed) comes after them."""
    mark = client.mark()
    client.send("advertise", topic="/initialpose")
    client.wait("status", lambda e: "publishing on /initialpose is not allowed" in e["message"],
                since=mark)


def statuses(client: NodeClient, pattern: str, n: int) -> list[str]:
    """Wait for ``n`` statuses matching ``pattern``; their texts."""
    client.wait("status", lambda e: len(client.select(
        "status", lambda s: re.search(pattern, s["message"]))) >= n)
    return [s["message"] for s in client.select("status",
                                                lambda s: re.search(pattern, s["message"]))]


# --------------------------------------------------------------- protocol errors
def test_malformed_json(bridge, check):
    with bad_client(bridge, "127.0.0.11") as bad:
        for i in range(REPEATS):
            bad.send("raw", text=f'{{"op": "subscribe", {i}')
        said = statuses(bad, r"^Invalid message: ", REPEATS)
    assert len(said) == REPEATS, said
    assert len(check.log("Invalid message from 127.0.0.11")) == 1, check.log("127.0.0.11")
    check.done()


def test_an_unknown_operation(bridge, check):
    with bad_client(bridge, "127.0.0.12") as bad:
        for _ in range(REPEATS):
            bad.send("raw", text='{"op": "launchMissiles", "target": "/cmd_vel"}')
        said = statuses(bad, r"unknown variant `launchMissiles`", REPEATS)
    assert len(said) == REPEATS, said
    assert len(check.log("Invalid message from 127.0.0.12", "launchMissiles")) == 1
    check.done()


def test_a_subscription_to_a_channel_that_does_not_exist(bridge, check):
    with bad_client(bridge, "127.0.0.13") as bad:
        for _ in range(REPEATS):
            bad.send("subscribeId", channelId=987654)
        said = statuses(bad, r"Unknown channel ID: 987654", REPEATS)
    assert len(said) == REPEATS, said
    assert len(check.log("127.0.0.13", "unknown channel")) == 1, check.log("127.0.0.13")
    check.done()


# ------------------------------------------------------------- the gateway's refusals
def test_a_publish_on_a_topic_not_allowed(bridge, check):
    with bad_client(bridge, "127.0.0.14") as bad:
        bad.send("advertise", topic="/set_pose")
        bad.wait("advertised")
        pose = {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": "map"},
                "pose": {"pose": {"position": {"x": 5.0, "y": 0.0, "z": 0.0},
                                  "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}},
                         "covariance": [0.0] * 36}}
        for _ in range(REPEATS):
            bad.send("publish", topic="/set_pose", message=pose)
        handled(bad)
        said = statuses(bad, r"publishing on /set_pose is not allowed", 1)
    assert len(said) == 1 and re.match(r"client \d+: publishing on /set_pose is not allowed "
                                       r"\(client_publish\); nothing is published", said[0]), said
    assert len(check.log("publishing on /set_pose is not allowed")) == 1
    check.done()


def test_a_message_of_the_wrong_type(bridge, check):
    with bad_client(bridge, "127.0.0.15") as bad:
        bad.send("advertise", topic="/cmd_vel", schemaName="std_msgs/msg/String",
                 schema="string data")
        bad.wait("advertised")
        for _ in range(REPEATS):
            bad.send("publish", topic="/cmd_vel", message={"data": "forward"})
        handled(bad)
        said = statuses(bad, r"/cmd_vel: type std_msgs/msg/String refused", 1)
    assert re.match(r"client \d+: /cmd_vel: type std_msgs/msg/String refused, the robot takes "
                    r"geometry_msgs/msg/Twist; nothing is published", said[0]), said
    assert len(said) == 1, said
    assert len(check.log("type std_msgs/msg/String refused")) == 1
    check.done()


def test_truncated_cdr(bridge, check):
    with bad_client(bridge, "127.0.0.16") as bad:
        bad.send("advertise", topic="/cmd_vel")
        bad.wait("advertised")
        # a CDR header and the first half of linear.x: 6 bytes of the 52 a Twist takes
        cut = base64.b64encode(bytes([0, 1, 0, 0, 0x9a, 0x99])).decode()
        for _ in range(REPEATS):
            bad.send("publish", topic="/cmd_vel", bytes=cut)
        handled(bad)
        said = statuses(bad, r"a message on /cmd_vel is not a valid CDR Twist", 1)
    assert re.match(r"client \d+: a message on /cmd_vel is not a valid CDR Twist \(", said[0])
    assert len(said) == 1, said
    assert len(check.log("is not a valid CDR Twist")) == 1
    check.done()


def test_a_channel_nobody_subscribes_to_waits_for_a_subscriber(bridge, ros, check):
    """Its messages are refused (one line, one status) until the robot subscribes;
    then the gateway publishes them with the subscriber's type."""
    from std_msgs.msg import String
    got = []
    with bad_client(bridge, "127.0.0.20") as bad:
        bad.send("advertise", topic=FREE, schemaName="std_msgs/msg/String",
                 schema="string data")
        bad.wait("advertised")
        for i in range(REPEATS):
            bad.send("publish", topic=FREE, message={"data": f"early {i}"})
        handled(bad)
        said = statuses(bad, r"nobody subscribes yet", 1)
        sub = ros.node.create_subscription(String, FREE, lambda m: got.append(m.data), 10)
        try:
            deadline = time.monotonic() + 30
            while not got:      # until the gateway sees the subscriber and DDS matches it
                assert time.monotonic() < deadline, bridge.recent()
                bad.send("publish", topic=FREE, message={"data": "now"})
                time.sleep(0.1)
            # the topic, published and subscribed, is served to the clients too
            bad.wait("advertise", lambda e: any(c["topic"] == FREE for c in e["channels"]),
                     timeout=10)
        finally:
            mark = bad.mark()
            ros.node.destroy_subscription(sub)
        # the robot's subscriber left: the topic is in the graph only through the
        # gateway's own publisher, withdrawn once and not advertised again each look
        gone = bad.wait("unadvertise", lambda e: FREE in e["topics"], since=mark, timeout=10)
        time.sleep(6 * 0.5)     # six looks at the graph (graph_period_s 0.5)
        again = [e for e in bad.select("advertise", lambda e: any(
            c["topic"] == FREE for c in e["channels"])) if e["_at"] > gone["_at"]]
        assert not again, f"{FREE} advertised again {len(again)} times after it was withdrawn"
    assert re.match(rf"client \d+: {FREE}: nobody subscribes yet with one type, the channel "
                    r"waits for it; nothing is published", said[0]), said
    assert len(said) == 1, said
    assert set(got) == {"now"}, got
    assert len(check.log(f"{FREE}: nobody subscribes yet")) == 1
    assert len(check.log(f"publishes std_msgs/msg/String on {FREE}")) == 1
    check.done()


def test_a_service_call_with_a_bad_request(bridge, check):
    with bad_client(bridge, "127.0.0.17") as bad:
        bad.wait_service("/set_motors")
        garbage = base64.b64encode(bytes([0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f, 1])).decode()
        for call in range(REPEATS):
            bad.send("call", service="/set_motors", callId=call, bytes=garbage)
        failures = [bad.wait("serviceFailure", lambda e, c=call: e["callId"] == c)["message"]
                    for call in range(REPEATS)]
        # well-formed CDR the hardware node refuses: answered with its reason
        bad.send("call", service="/set_motors", callId=REPEATS, request={
            "device_class": "warp_drive", "lease_s": 0.0,
            "commands": [{"id": 0, "mode": 0, "value": 100.0}]})
        answer = bad.wait("serviceResponse", lambda e: e["callId"] == REPEATS)
    bad_cdr = re.compile(r"/set_motors: the request is not a valid CDR "
                         r"bsal_interfaces/srv/SetMotors request \(9 bytes: ")
    assert all(bad_cdr.search(f) for f in failures), failures
    assert answer["value"]["result"]["code"] == 6, answer      # BAD_REQUEST
    assert "warp_drive" in answer["value"]["result"]["message"], answer
    assert len(check.log("called /set_motors: the request is not a valid CDR")) == 1
    check.done()


# ------------------------------------------------------------------------- load
def test_a_thousand_connects_and_disconnects(bridge, check):
    with NodeClient("churn") as churn:
        churn.send("churn", url=bridge.url, count=1000, localAddress="127.0.0.18")
        done = churn.wait("churned", timeout=240)
    assert done["ok"] == 1000, done
    lines = check.log("127.0.0.18")
    kinds = [re.sub(r"127\.0\.0\.18:\d+.*", "", ln.split("foxglove-sdk: ", 1)[-1])
             for ln in lines]
    assert len(kinds) == len(set(kinds)), lines        # one line per kind, not per client
    check.done()


def test_a_client_that_never_reads(bridge, ros, check):
    """Subscribed to every channel and never reading: it loses messages, the others
    do not. A bulk topic (16 kB at 100 Hz) fills the kernel's buffers and then the
    SDK's queue for it within seconds."""
    from std_msgs.msg import String
    bulk = f"/fg_bulk_{os.getpid()}"
    pub = ros.node.create_publisher(String, bulk, 10)
    stalled = None
    try:
        payload = String(data="x" * 16384)
        check.watcher.wait("advertise", lambda e: any(c["topic"] == bulk for c in e["channels"]),
                           timeout=20)
        ids = [c["id"] for c in check.watcher.channels().values()]
        stalled = StalledClient(bridge.port, ids, source="127.0.0.19")
        deadline = time.monotonic() + 120
        while not check.log("outbox for client 127.0.0.19"):
            assert time.monotonic() < deadline, "the stalled client's queue never filled"
            for _ in range(10):
                pub.publish(payload)
                time.sleep(0.01)
        check.bridge_goes_on()          # while it is stalled
    finally:
        if stalled is not None:
            stalled.close()
        ros.node.destroy_publisher(pub)
    assert len(check.log("outbox for client 127.0.0.19")) == 1, check.log("127.0.0.19")
    check.done()
