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

"""What Foxglove clients publish: Brak's ``cmd_vel``, and nothing else.

A client advertises a channel, then sends messages on it. The channel is
accepted when its topic is in ``client_publish`` (and driving is allowed at
all: :mod:`bsal_ros.foxglove.access`), its encoding is ``cdr`` and its schema
is the type the robot subscribes with; each message is then deserialized
before it is published, so a truncated or foreign one is refused, never
half-commanded. While nobody on the robot subscribes to the topic (or its
subscribers disagree on the type) the type is not decided: the channel waits,
its messages are refused, and each one looks at the graph again, so the
channel is accepted (or refused) as soon as a subscriber is there. The
gateway holds one ROS publisher per topic and type. A refusal is one log line
and one status per channel and kind of refusal (its details, such as a CDR
error's text, left out of the key), however many messages follow. A client
that withdraws its channel or leaves while its last message asked the robot
to move has a zero message published for it at once: the hardware node's
``cmd_vel_timeout`` (0.5 s) would stop the robot anyway, this stops it now.
Everything here runs in the executor's thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message

COMMAND_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


@dataclass
class ClientPublisher:
    """One channel a client advertised, and whether its messages are accepted."""

    client: int
    topic: str
    schema: str = ""             # the client's schema name, as it gave it
    type_name: str = ""          # the same, canonical (pkg/msg/Type)
    pending: bool = False        # the robot's type not decided yet: looked at per message
    refusal: str = ""            # why its messages are refused ("" : accepted)
    kind: str = ""               # the refusal's kind: the key of "logged once"
    msg_class: type | None = None
    publisher: object = None
    moving: bool = False         # its last message asked the robot to move
    said: set = field(default_factory=set)   # the kinds of refusal logged once already


def moves(msg) -> bool:
    """A twist (or a stamped one) that asks for motion; any other message is taken as one."""
    twist = getattr(msg, "twist", msg)
    lin, ang = getattr(twist, "linear", None), getattr(twist, "angular", None)
    if lin is None or ang is None:
        return True
    return any(v != 0.0 for v in (lin.x, lin.y, lin.z, ang.x, ang.y, ang.z))


class ClientPublishing:
    """The channels clients advertised, their ROS publishers, and the stop on leaving."""

    def __init__(self, gateway):
        self.gw = gateway
        self.channels: dict[tuple[int, int], ClientPublisher] = {}
        self._publishers: dict[tuple[str, str], object] = {}   # (topic, type) -> publisher
        self.published = 0
        self.refused = 0

    def advertised(self, client: int, channel: int, topic: str, encoding: str,
                   schema_name: str) -> None:
        """A client announced a channel: accept it if it may publish there, or let
        it wait while the robot's type is not decided."""
        from bsal_ros.nodes.ros_types import canonical_type
        gw = self.gw
        pub = self.channels[(client, channel)] = ClientPublisher(client, topic, schema_name)
        if not gw.access.may_publish(topic):
            pub.kind, pub.refusal = "not allowed", (
                gw.access.control_off_reason()
                or f"publishing on {topic} is not allowed (client_publish)")
        elif encoding != "cdr":
            pub.kind, pub.refusal = "encoding", (f"{topic}: message encoding {encoding!r} "
                                                 "refused, cdr expected")
        else:
            try:
                pub.type_name = canonical_type(schema_name)
            except (ValueError, LookupError):
                pub.kind, pub.refusal = "schema", (f"{topic}: schema name {schema_name!r} is "
                                                   "not a ROS message type (pkg/msg/Type)")
        if pub.refusal:
            return self._refuse(pub, pub.kind, pub.refusal)
        self._decide(pub)

    def _decide(self, pub: ClientPublisher) -> None:
        """Accept or refuse ``pub`` by the type the robot subscribes with; while no
        single type is subscribed, leave it waiting (``pending``)."""
        from bsal_ros.nodes.ros_types import interface_class
        wanted = self._subscribed_type(pub.topic)
        pub.pending = wanted is None
        if pub.pending:
            return
        if pub.type_name != wanted:
            pub.kind, pub.refusal = "type", (f"{pub.topic}: type {pub.schema} refused, the "
                                             f"robot takes {wanted}")
            return self._refuse(pub, pub.kind, pub.refusal)
        pub.msg_class = interface_class(wanted)
        if pub.msg_class is None:
            pub.kind, pub.refusal = "importable", (f"{pub.topic}: type {wanted} is not "
                                                   "importable here")
            return self._refuse(pub, pub.kind, pub.refusal)
        key = (pub.topic, wanted)
        if key not in self._publishers:
            try:
                self._publishers[key] = self.gw.create_publisher(pub.msg_class, pub.topic,
                                                                 COMMAND_QOS)
            except Exception as exc:   # noqa: BLE001 - rclpy/DDS refusing a second type
                pub.kind, pub.refusal = "publisher", (f"{pub.topic}: no publisher of {wanted} "
                                                      f"({exc})")
                return self._refuse(pub, pub.kind, pub.refusal)
        pub.publisher = self._publishers[key]
        self.gw.get_logger().info(f"Foxglove gateway: client {pub.client} publishes "
                                  f"{wanted} on {pub.topic}")

    def topics(self) -> set[str]:
        """The topics the gateway publishes on for clients."""
        return {topic for topic, _ in self._publishers}

    def _subscribed_type(self, topic: str) -> str | None:
        """The one type the robot's subscribers of ``topic`` take (None: nobody
        subscribes, or they take more than one)."""
        from bsal_ros.nodes.ros_types import canonical_type
        gw = self.gw
        types = set()
        for info in gw.get_subscriptions_info_by_topic(topic):
            if info.node_name != gw.get_name():
                try:
                    types.add(canonical_type(info.topic_type))
                except ValueError:
                    return None
        return types.pop() if len(types) == 1 else None

    def _refuse(self, pub: ClientPublisher, kind: str, why: str) -> None:
        """Count a refused message; say ``why`` once per channel and ``kind``."""
        self.refused += 1
        if kind not in pub.said:
            pub.said.add(kind)
            self.gw.tell(f"client {pub.client}: {why}; nothing is published",
                         key=f"publish-{pub.client}-{pub.topic}")

    def message(self, client: int, channel: int, data: bytes) -> None:
        """A client's message: published when its channel is accepted and it decodes."""
        pub = self.channels.get((client, channel))
        if pub is None:
            self.refused += 1
            return
        if pub.pending:
            self._decide(pub)             # a refusal it decides is said and counted there
            if pub.pending:
                return self._refuse(pub, "pending", f"{pub.topic}: nobody subscribes yet with "
                                                    "one type, the channel waits for it")
        elif pub.refusal:
            return self._refuse(pub, pub.kind, pub.refusal)
        if pub.refusal:
            return
        try:
            msg = deserialize_message(data, pub.msg_class)
        except Exception as exc:   # noqa: BLE001 - truncated or foreign CDR: rclpy's own error
            return self._refuse(pub, "cdr", f"a message on {pub.topic} is not a valid CDR "
                                            f"{pub.msg_class.__name__} ({exc})")
        pub.publisher.publish(msg)
        pub.moving = moves(msg)
        self.published += 1

    def unadvertised(self, client: int, channel: int) -> None:
        """A client withdrew a channel or left: stop what it was driving."""
        self.stop((client, channel), f"client {client} stopped publishing")
        self.channels.pop((client, channel), None)

    def stop(self, key, why: str) -> None:
        """Publish a zero message for the channel ``key`` if it left the robot moving."""
        pub = self.channels.get(key)
        if pub is None or not pub.moving or pub.publisher is None:
            return
        pub.publisher.publish(pub.msg_class())
        pub.moving = False
        self.gw.get_logger().info(f"Foxglove gateway: {why} on {pub.topic} while the robot "
                                  "moved: zero sent")

    def stop_all(self, why: str) -> None:
        """Stop every robot a client left moving (the gateway stops)."""
        for key in list(self.channels):
            self.stop(key, why)
