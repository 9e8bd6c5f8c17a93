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

"""brak_record's node: the robot's topics, as raw CDR, into a :class:`Recording`.

The topics are the Foxglove gateway's (:class:`bsal_ros.foxglove.topics.TopicFilter`:
the robot's namespace, ``/tf``, ``/tf_static``, ``/diagnostics``,
``/rosout``), or the ``topics`` named; the graph is looked at every
``graph_period_s``, and a topic that appears is recorded from then on. Each
is subscribed raw (the bytes as they came, never decoded) with the QoS that
matches every publisher (the gateway's :func:`publisher_qos`: a latched
``robot_description`` or ``/tf_static`` arrives at once), and each message
is logged at its arrival time; each subscription keeps up to :data:`DEPTH`
messages while the recorder is busy. The channel's metadata holds the publishers'
QoS and the type's hash, as rosbag2 writes them (:mod:`bsal_ros.foxglove.rosbag2`).
"""

from __future__ import annotations

import time

from rclpy.node import Node

from bsal_ros.foxglove import rosbag2
from bsal_ros.foxglove.definitions import DefinitionNotFound
from bsal_ros.foxglove.topics import TopicFilter
from bsal_ros.nodes.ros_types import interface_class, message_definitions, publisher_qos

#: s between looks at the graph (the Foxglove gateway's default)
GRAPH_PERIOD_S = 0.5
#: messages kept per topic while the recorder's thread is busy (a live viewer keeps 10:
#: at 20 Hz this rides out a 5 s stall without a loss)
DEPTH = 100


def resolve(name: str, namespace: str) -> str:
    """A topic name as the graph lists it: ``odom`` in ``/brak2`` -> ``/brak2/odom``."""
    if name.startswith("/"):
        return name
    return "/" + "/".join(p for p in (namespace.strip("/"), name.strip("/")) if p)


def type_hash_of(infos) -> str:
    """The REP-2011 hash (``RIHS01_...``) the publishers announce, or ""."""
    for info in infos:
        value = getattr(info, "topic_type_hash", None)
        text = str(value) if value is not None else ""
        if text.startswith("RIHS"):
            return text
    return ""


class RecorderNode(Node):
    """Subscribes to the robot's topics and logs each message to ``recording``.

    :param recording: the :class:`bsal_ros.foxglove.recording.Recording`.
    :param namespace: the robot's namespace (its topics are recorded).
    :param topics: only these topics (names resolved in ``namespace``); empty: all.
    :param kwargs: the Node's (``context``).
    """

    def __init__(self, recording, namespace: str = "/", topics=(),
                 graph_period_s: float = GRAPH_PERIOD_S, **kwargs):
        super().__init__("brak_record", namespace=namespace or "/", **kwargs)
        self.recording = recording
        ns = self.get_namespace()
        self.filter = TopicFilter(ns)
        self.only = {resolve(t, ns) for t in topics}
        self.definitions = message_definitions()
        self.recorded: dict[str, str] = {}         # topic -> type
        self.subscriptions_raw: list = []
        self._said: set[str] = set()
        self.look_at_graph()
        self._timer = self.create_timer(graph_period_s, self.look_at_graph)

    def wanted(self, graph) -> dict[str, str]:
        """{topic: type} to record out of ``graph`` ((name, [types]) pairs)."""
        if self.only:
            picked = {}
            for name, types in graph:
                if name in self.only:
                    if len(types) == 1:
                        picked[name] = types[0]
                    else:
                        self._once(name, f"topic {name} not recorded: more than one type "
                                         f"({', '.join(types)})")
            return picked
        picked, mixed = self.filter.pick(graph)
        for name, types in mixed:
            self._once(name, f"topic {name} not recorded: more than one type "
                             f"({', '.join(types)})")
        return picked

    def look_at_graph(self) -> None:
        """Record every wanted topic not recorded yet (timer)."""
        for topic, type_name in sorted(self.wanted(self.get_topic_names_and_types()).items()):
            known = self.recorded.get(topic)
            if known is None:
                self._record(topic, type_name)
            elif known != type_name:
                self._once(f"{topic} {type_name}", f"topic {topic} not recorded as "
                           f"{type_name}: it is recorded as {known} already")

    def _once(self, key: str, line: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.get_logger().warning(line)

    def _record(self, topic: str, type_name: str) -> None:
        msg_class = interface_class(type_name)
        if msg_class is None:
            return self._once(topic, f"topic {topic} not recorded: its type {type_name} is "
                                     "not importable here")
        try:
            definition = self.definitions.full_text(type_name)
        except (DefinitionNotFound, ValueError) as exc:
            return self._once(topic, f"topic {topic} not recorded: no message definition: {exc}")
        infos = self.get_publishers_info_by_topic(topic)
        if not infos:
            return          # a subscriber only: recorded once someone publishes
        qos, latched = publisher_qos(infos, depth_default=DEPTH)
        counted = self.recording.ros_channel(
            topic, type_name, definition, [rosbag2.qos_profile(i.qos_profile) for i in infos],
            type_hash_of(infos))
        recording = self.recording

        def arrived(data: bytes) -> None:
            recording.log(counted, data, time.time_ns())

        subscription = self.create_subscription(msg_class, topic, arrived, qos, raw=True)
        self.subscriptions_raw.append(subscription)
        self.recorded[topic] = type_name
        self.get_logger().info(
            f"recording {topic} ({type_name}, {qos.reliability.name.lower()}, "
            f"{'transient local' if latched else 'volatile'}, {len(infos)} publisher"
            f"{'s' if len(infos) != 1 else ''})")

    def missing(self) -> list[str]:
        """The topics named with ``topics`` that are not recorded yet."""
        return sorted(self.only - set(self.recorded))
