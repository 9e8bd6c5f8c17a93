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

"""Which ROS topics become Foxglove channels, and who watches each one.

:class:`TopicFilter` picks the robot's topics out of the ROS graph: every
topic in the robot's namespace (every topic when that is ``/``) and the
shared ones a robot publishes outside it (``/tf``, ``/tf_static``,
``/diagnostics``, ``/rosout``). :class:`Watchers` counts the clients of each
channel, so the ROS subscription lives only while one watches, and keeps the
last messages of a latched topic for the clients that come later.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
import threading

#: topics every robot shares, advertised whatever the namespace
SHARED_TOPICS = ("/tf", "/tf_static", "/diagnostics", "/rosout")


@dataclass(frozen=True)
class TopicFilter:
    """The topics of one robot's graph."""

    namespace: str = "/"
    shared: tuple[str, ...] = SHARED_TOPICS

    def wants(self, topic: str) -> bool:
        """``topic`` (absolute) is the robot's. Hidden topics (a name part that
        starts with ``_``: an action's feedback and status) are not, as
        ``ros2 topic list`` hides them."""
        if any(part.startswith("_") for part in topic.split("/")):
            return False
        ns = "/" + self.namespace.strip("/")
        if topic in self.shared or ns == "/":
            return True
        return topic.startswith(ns + "/")

    def pick(self, graph) -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
        """({topic: type} of the robot's topics, [(topic, types)] left out for
        having more than one type). ``graph``: (name, [types]) pairs, as rclpy's
        ``get_topic_names_and_types`` gives them."""
        picked, mixed = {}, []
        for name, types in graph:
            if not self.wants(name):
                continue
            if len(types) != 1:
                mixed.append((name, list(types)))
                continue
            picked[name] = types[0]
        return picked, mixed


def changes(current: dict[str, str], wanted: dict[str, str]) -> tuple[dict, list[str]]:
    """(topics to advertise {name: type}, topics to withdraw): a topic whose
    type changed is withdrawn and advertised again."""
    gone = [t for t, kind in current.items() if wanted.get(t) != kind]
    new = {t: kind for t, kind in wanted.items() if current.get(t) != kind}
    return new, gone


@dataclass
class Watched:
    """One channel's clients and, for a latched topic, its last messages."""

    clients: set[int] = field(default_factory=set)
    latched: deque | None = None


class Watchers:
    """Clients per channel, safe to use from the SDK's threads and the executor's."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_channel: dict[int, Watched] = {}

    def add(self, channel: int, client: int) -> bool:
        """Count ``client`` on ``channel``; True when it is the first one."""
        with self._lock:
            w = self._by_channel.setdefault(channel, Watched())
            first = not w.clients
            w.clients.add(client)
            return first

    def remove(self, channel: int, client: int) -> bool:
        """Forget ``client`` on ``channel``; True when none is left."""
        with self._lock:
            w = self._by_channel.get(channel)
            if w is None or client not in w.clients:
                return False
            w.clients.discard(client)
            return not w.clients

    def count(self, channel: int) -> int:
        """How many clients watch ``channel``."""
        with self._lock:
            w = self._by_channel.get(channel)
            return len(w.clients) if w else 0

    def drop(self, channel: int) -> None:
        """Forget a withdrawn channel."""
        with self._lock:
            self._by_channel.pop(channel, None)

    def keep_latched(self, channel: int, depth: int) -> None:
        """Keep the last ``depth`` messages of ``channel`` (a latched topic)."""
        with self._lock:
            w = self._by_channel.setdefault(channel, Watched())
            if w.latched is None or w.latched.maxlen != depth:
                w.latched = deque(w.latched or (), maxlen=max(1, depth))

    def remember(self, channel: int, data: bytes, log_time: int) -> None:
        """Note a message of a latched channel (no-op for the others)."""
        with self._lock:
            w = self._by_channel.get(channel)
            if w is not None and w.latched is not None:
                w.latched.append((data, log_time))

    def latched(self, channel: int) -> list[tuple[bytes, int]]:
        """The kept messages of ``channel``, oldest first."""
        with self._lock:
            w = self._by_channel.get(channel)
            return list(w.latched) if w is not None and w.latched is not None else []
