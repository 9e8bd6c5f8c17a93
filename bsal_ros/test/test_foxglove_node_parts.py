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

"""The Foxglove gateway's node-side parts (nodes/foxglove_publish.py,
foxglove_parameters.py, foxglove_services.py) with a stand-in gateway: no ROS
node, no server, no executor (work handed to it runs at once), so a client's
bad input can be fed to each part exactly as the SDK's listener hands it over,
and what the part tells, publishes and raises is read back.

The end-to-end counterparts (a real gateway, Foxglove's own client) are in
test_foxglove_bad_input.py and test_foxglove_client.py.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from rclpy.serialization import serialize_message

#: the gateway's node name, whose own subscriptions the parts leave out
GATEWAY = "foxglove_gateway"


class Publisher:
    """A ROS publisher of one type; like rclpy's, it refuses a message of another."""

    def __init__(self, msg_class, topic):
        self.msg_class, self.topic, self.sent = msg_class, topic, []

    def publish(self, msg):
        if not isinstance(msg, self.msg_class):
            raise TypeError(f"{self.topic}: expected {self.msg_class.__name__}")
        self.sent.append(msg)


class Gateway:
    """What the parts read and call of a FoxgloveGatewayNode."""

    def __init__(self, allowed=("/cmd_vel", "/free"), **params):
        import foxglove
        self._fg = foxglove
        self.p = {"service_timeout_s": 1.0, **params}
        self.access = SimpleNamespace(
            may_publish=lambda topic: topic in allowed, may_set=lambda name: True,
            may_call=lambda name: True, control_off_reason=lambda: "")
        self.subscribers: dict[str, list[str]] = {}      # topic -> the robot's types
        self.publishers: list[Publisher] = []
        self.told: list[str] = []
        self.lines: list[str] = []
        self.handed: list = []
        self.server = None

    def get_name(self):
        return GATEWAY

    def get_subscriptions_info_by_topic(self, topic):
        return [SimpleNamespace(node_name="hardware_node", topic_type=t)
                for t in self.subscribers.get(topic, [])]

    def create_publisher(self, msg_class, topic, qos):
        self.publishers.append(Publisher(msg_class, topic))
        return self.publishers[-1]

    def tell(self, message, level="warning", key=None):
        self.told.append(message)

    def get_logger(self):
        return SimpleNamespace(info=self.lines.append, warning=self.lines.append,
                               error=self.lines.append)

    def in_executor(self, fn, *args, **kwargs):
        self.handed.append(fn)
        fn(*args)


def said(gw, *words) -> list[str]:
    """The statuses told holding every one of ``words``."""
    return [t for t in gw.told if all(w in t for w in words)]


# --------------------------------------------------------------- client publishing
@pytest.fixture
def publishing():
    from bsal_ros.nodes.foxglove_publish import ClientPublishing
    gw = Gateway()
    return gw, ClientPublishing(gw)


def string(text: str) -> bytes:
    from std_msgs.msg import String
    return serialize_message(String(data=text))


@pytest.mark.parametrize("schema", ["not a type", "", "a/b/c/d", "9pkg/Type"])
def test_a_bad_schema_name_is_refused_once_with_the_reason(publishing, schema):
    gw, pubs = publishing
    pubs.advertised(1, 10, "/free", "cdr", schema)      # nobody subscribes: nothing to compare
    for _ in range(20):
        pubs.message(1, 10, string("x"))
    gw.subscribers["/free"] = ["std_msgs/msg/String"]
    pubs.message(1, 10, string("x"))
    assert gw.told == [f"client 1: /free: schema name {schema!r} is not a ROS message type "
                       "(pkg/msg/Type); nothing is published"]
    assert gw.publishers == [] and pubs.published == 0 and pubs.refused == 22


def test_a_channel_nobody_subscribes_to_waits_for_a_subscriber(publishing):
    from std_msgs.msg import String
    gw, pubs = publishing
    pubs.advertised(1, 10, "/free", "cdr", "std_msgs/String")
    for i in range(20):
        pubs.message(1, 10, string(f"early {i}"))
    assert gw.publishers == [] and pubs.published == 0
    assert gw.told == ["client 1: /free: nobody subscribes yet with one type, the channel waits "
                       "for it; nothing is published"]
    gw.subscribers["/free"] = ["std_msgs/msg/String"]       # the robot's subscriber came
    pubs.message(1, 10, string("now"))
    assert [(p.topic, p.msg_class) for p in gw.publishers] == [("/free", String)]
    assert gw.publishers[0].sent == [String(data="now")] and pubs.published == 1
    assert len(gw.told) == 1 and pubs.refused == 20


def test_a_waiting_channel_of_another_type_is_refused_once_a_subscriber_decides(publishing):
    gw, pubs = publishing
    pubs.advertised(1, 10, "/free", "cdr", "std_msgs/msg/Int32")
    pubs.message(1, 10, b"\x00\x01\x00\x00\x07\x00\x00\x00")
    gw.subscribers["/free"] = ["std_msgs/msg/String"]
    for _ in range(5):
        pubs.message(1, 10, b"\x00\x01\x00\x00\x07\x00\x00\x00")
    assert said(gw, "nobody subscribes yet") and len(gw.told) == 2, gw.told
    assert said(gw, "type std_msgs/msg/Int32 refused, the robot takes std_msgs/msg/String")
    assert gw.publishers == [] and pubs.refused == 6


def test_publishers_are_kept_per_topic_and_type(publishing):
    """The robot's subscriber of /free is replaced by one of another type: a
    client then advertising that type gets a publisher of it, not the first
    client's publisher of the old type; both clients' messages go out."""
    from std_msgs.msg import Int32, String
    gw, pubs = publishing
    gw.subscribers["/free"] = ["std_msgs/msg/String"]
    pubs.advertised(1, 10, "/free", "cdr", "std_msgs/msg/String")
    gw.subscribers["/free"] = ["std_msgs/msg/Int32"]
    pubs.advertised(2, 20, "/free", "cdr", "std_msgs/msg/Int32")
    pubs.message(1, 10, string("one"))
    pubs.message(2, 20, serialize_message(Int32(data=2)))
    assert [(p.msg_class, p.sent) for p in gw.publishers] == [
        (String, [String(data="one")]), (Int32, [Int32(data=2)])]
    assert pubs.topics() == {"/free"} and gw.told == []


def test_a_flood_of_distinct_bad_messages_is_one_line_per_kind(publishing, monkeypatch):
    """Each bad message's error text differs (rclpy's own is the same for every
    truncation of one type, so a deserializer that names each is put in): still
    one line for the channel, and one for the other channel's kind."""
    from bsal_ros.nodes import foxglove_publish
    gw, pubs = publishing
    gw.subscribers["/cmd_vel"] = ["geometry_msgs/msg/Twist"]
    gw.subscribers["/free"] = ["std_msgs/msg/String"]
    pubs.advertised(1, 10, "/cmd_vel", "cdr", "geometry_msgs/msg/Twist")
    pubs.advertised(1, 11, "/free", "json", "std_msgs/msg/String")

    def deserialize(data, msg_class):
        raise ValueError(f"{len(data)} bytes: short by {52 - len(data)}")
    monkeypatch.setattr(foxglove_publish, "deserialize_message", deserialize)
    bad = [bytes(n) for n in range(40)]
    for data in bad:
        pubs.message(1, 10, data)
        pubs.message(1, 11, data)
    assert said(gw, "a message on /cmd_vel is not a valid CDR Twist (0 bytes: short by 52)")
    assert len(said(gw, "is not a valid CDR Twist")) == 1, gw.told
    assert len(said(gw, "message encoding 'json' refused")) == 1, gw.told
    assert len(gw.told) == 2 and pubs.published == 0 and pubs.refused == 2 * len(bad) + 1


# --------------------------------------------------------------------- parameters
@pytest.fixture
def mirror():
    from rcl_interfaces.msg import ParameterType, ParameterValue

    from bsal_ros.nodes.foxglove_parameters import ParameterMirror
    gw = Gateway()
    m = ParameterMirror(gw)
    m.active = True
    m.values["/hardware_node.speed"] = ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                      double_value=0.5)
    m._nodes["/hardware_node"] = {"set": SimpleNamespace(call_async=broken), "state": "loaded"}
    return gw, m


def broken(request):
    raise RuntimeError("the client was destroyed")


def values_of(answer) -> dict:
    return {p.name: p.get_value() for p in answer}


def test_a_write_that_raises_is_told_to_the_client_and_the_mirror_goes_on(mirror):
    gw, m = mirror
    answer = m.set(7, [gw._fg.Parameter("/hardware_node.speed", value=0.7)])
    assert values_of(answer) == {"/hardware_node.speed": 0.5}
    assert gw.told == ["client 7: parameter /hardware_node.speed not set: the write failed: "
                       "RuntimeError('the client was destroyed')"]


def test_write_refusals_are_said_once_per_client_and_kind_in_a_bounded_memory(mirror):
    from bsal_ros.nodes.foxglove_parameters import MAX_REFUSALS
    gw, m = mirror
    for i in range(50):              # one client, fifty parameters the mirror does not have
        m.set(7, [gw._fg.Parameter(f"/hardware_node.no_{i}", value=1.0)])
    assert gw.told == ["client 7: parameter /hardware_node.no_0 not set: no such parameter"]
    for client in range(MAX_REFUSALS + 50):      # clients come and go
        m.set(100 + client, [gw._fg.Parameter("/hardware_node.nothing", value=1.0)])
    assert len(m._refused) <= MAX_REFUSALS
    assert len(gw.told) == 1 + MAX_REFUSALS + 50


class WatchedLock:
    """A lock that records, on entering and leaving, what ``look`` reads."""

    def __init__(self, look):
        self.lock, self.look, self.seen = threading.Lock(), look, []

    def __enter__(self):
        self.lock.acquire()
        self.seen.append(("in", self.look()))

    def __exit__(self, *exc):
        self.seen.append(("out", self.look()))
        self.lock.release()


def test_the_first_question_is_decided_under_the_lock(mirror):
    """Two first questions at once must not both load: ``active`` is read and set
    while the lock is held, and the load is handed over once."""
    gw, m = mirror
    m.active = False
    m._lock = WatchedLock(lambda: m.active)
    m._start = lambda: m._loaded.set()
    m._activate()
    m._activate()
    assert m._lock.seen[:2] == [("in", False), ("out", True)], m._lock.seen
    assert len(gw.handed) == 1


# ----------------------------------------------------------------------- services
class Clock:
    """A clock the test moves."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Client:
    """A ROS service client that takes the clock's time and records its waits."""

    def __init__(self, clock, ready=False, call_async=None, remove=None):
        self.clock, self.ready, self.waits = clock, ready, []
        if call_async:
            self.call_async = call_async
        if remove:
            self.remove_pending_request = remove

    def service_is_ready(self):
        return self.ready

    def wait_for_service(self, timeout_sec):
        self.waits.append(timeout_sec)
        self.clock.now += timeout_sec
        return False


@pytest.fixture
def relay():
    from bsal_interfaces.srv import ListDevices

    from bsal_ros.nodes.foxglove_services import ServiceRelay
    gw = Gateway()
    r = ServiceRelay(gw)
    r.clock = Clock()
    r.advertised["/list_devices"] = ("bsal_interfaces/srv/ListDevices", None, ListDevices)
    request = SimpleNamespace(encoding="cdr", client_id=3,
                              payload=serialize_message(ListDevices.Request()))
    return gw, r, request


def test_one_deadline_covers_the_client_the_server_and_the_answer(relay):
    gw, r, request = relay
    client = Client(r.clock)

    def create_client(srv, name):
        r.clock.now += 0.6               # the executor took its time to make the client
        return client
    gw.create_client = create_client
    with pytest.raises(RuntimeError, match=r"no server of /list_devices within 1 s"):
        r.call("/list_devices", request)
    assert client.waits == [pytest.approx(0.4)]
    assert r.calls == {"answered": 0, "failed": 1}


def late(clock):
    """A call_async whose answer never comes, sent once the call's time ran out."""
    def call_async(message):
        clock.now += 2.0
        return SimpleNamespace(add_done_callback=lambda cb: None)
    return call_async


def cannot_remove(future):
    raise RuntimeError("the client is gone")


@pytest.mark.parametrize("broken_in, reason", [
    ("call_async", "the client was destroyed"),
    ("remove_pending_request", "the client is gone")])
def test_a_call_that_raises_on_the_way_is_a_service_failure(relay, broken_in, reason):
    gw, r, request = relay
    ways = ({"call_async": broken} if broken_in == "call_async"
            else {"call_async": late(r.clock), "remove": cannot_remove})
    type_name, _, srv = r.advertised["/list_devices"]
    r.advertised["/list_devices"] = (type_name, Client(r.clock, ready=True, **ways), srv)
    for _ in range(3):
        with pytest.raises(RuntimeError, match=rf"^/list_devices: the call failed "
                                               rf"\(RuntimeError: {reason}\)$"):
            r.call("/list_devices", request)
    assert r.calls == {"answered": 0, "failed": 3}
    assert len([ln for ln in gw.lines if "the call failed" in ln]) == 1, gw.lines
