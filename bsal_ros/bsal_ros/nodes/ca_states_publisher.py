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

"""The RCI gateway's view of its control applications for ROS: what each was
told is republished on ``rci/ca_states`` (the RDI control-application stream,
001 1.1) and session changes on ``rci/session``, from a worker thread so that
the asyncio thread never waits on a publish.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Sequence

from bsal_interfaces.msg import DeviceStateArray
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from bsal_ros.core.device_state import DeviceState
from bsal_ros.nodes.device_state_msg import to_msg

#: session notices waiting for the publisher thread, at most
_SESSION_QUEUE = 64


class CaStatesPublisher:
    """Republishes what the control application was told, from a worker thread.

    Newest wins per (class, kind): at most ``max_hz`` batches per second, so a
    control application polling at kHz rates costs the gateway nothing extra.
    """

    def __init__(self, node, max_hz: float):
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                              history=HistoryPolicy.KEEP_LAST)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.node = node
        self.pub_ca = node.create_publisher(DeviceStateArray, "rci/ca_states", reliable)
        self.pub_session = node.create_publisher(String, "rci/session", latched)
        self.period = 1.0 / max(max_hz, 0.1)
        self._events: collections.deque = collections.deque(maxlen=_SESSION_QUEUE)
        self._latest: dict = {}
        self._published: dict = {}
        self._wake = threading.Event()
        self._stop = False
        #: batches replaced by a newer one before they were published
        self.dropped = 0
        self._thread = threading.Thread(target=self._loop, name="rci-ca-publisher", daemon=True)
        self._thread.start()

    def delivered(self, device_class: str, states: Sequence[DeviceState], what: str) -> None:
        """Queue a batch of states (``what``: "data" or "status")."""
        key = (device_class, what)
        if key in self._latest:
            self.dropped += 1
        self._latest[key] = states
        self._wake.set()

    def session_event(self, event: str, detail: str = "") -> None:
        """Queue a notice for rci/session."""
        self._events.append(f"{event} {detail}".strip())
        self._wake.set()

    def close(self) -> None:
        """Stop the worker thread."""
        self._stop = True
        self._wake.set()
        self._thread.join(2.0)

    def _loop(self) -> None:
        last = 0.0
        while not self._stop:
            self._wake.wait(0.5)
            self._wake.clear()
            try:
                while self._events:
                    self.pub_session.publish(String(data=self._events.popleft()))
                if not self._latest:
                    continue
                wait = last + self.period - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                latest, self._latest = self._latest, {}
                last = time.monotonic()
                self._publish(latest)
            except Exception as exc:   # noqa: BLE001 - the thread must outlive one bad array
                if not self.node.context.ok():
                    return          # shutting down
                self.node.get_logger().error(f"rci/ca_states publisher: {exc!r}",
                                             throttle_duration_sec=10.0)

    def _publish(self, latest: dict) -> None:
        stamp = self.node.get_clock().now().to_msg()
        for (cls, what), states in latest.items():
            # the same readings delivered again change nothing in the view
            sig = tuple((x.id, x.stamp, x.speedval) for x in states)
            if self._published.get((cls, what)) == sig:
                continue
            self._published[(cls, what)] = sig
            arr = DeviceStateArray()
            arr.header.stamp = stamp
            arr.header.frame_id = what
            arr.states = [to_msg(x) for x in states]
            self.pub_ca.publish(arr)
