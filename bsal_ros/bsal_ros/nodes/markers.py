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

"""``brak_markers``: the sonar cones and the odometry path as the 3D viewers draw them.

Foxglove's and Lichtblick's 3D panels draw no ``sensor_msgs/Range`` and no
``nav_msgs/Odometry``; they, and rviz, draw ``visualization_msgs/MarkerArray``
and ``nav_msgs/Path``. This node publishes

* ``sonar_cones`` (MarkerArray): per sonar one TRIANGLE_LIST fan (ns ``sonar``,
  id = the sonar's id) in the Range's frame and with its stamp, as long as its
  range and as wide as its field of view; a sonar that heard no echo (``+inf``,
  beyond ``max_range``) or sent nothing for ``STALE_S`` gets a DELETE: no cone;
* ``odom_path`` (Path, latched, in the odometry's ``header.frame_id``): a pose
  every ``TRAIL_STEP_M`` moved or ``TRAIL_TURN_RAD`` turned, the newest
  ``TRAIL_SIZE`` (:class:`bsal_ros.scene.Trail`).

Each at most every ``PERIOD_S``, and only while something subscribes to it;
the inputs too are subscribed only then (the twelve sonars while
``sonar_cones`` has a subscriber, ``odom`` while ``odom_path`` has one), so an
idle bridge pays for nothing but a 5 Hz look at two subscription counts. The
trail therefore starts when the first viewer comes; when the last one leaves
it is forgotten and an empty path is latched in its place (a later viewer
never gets an old trail). The geometry is :mod:`bsal_ros.scene`.
"""

from __future__ import annotations

import time

from geometry_msgs.msg import Point, PoseStamped
from nav_msgs.msg import Odometry, Path
from rclpy.node import Node
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, qos_profile_sensor_data, QoSProfile,
                       ReliabilityPolicy)
from sensor_msgs.msg import Range
from visualization_msgs.msg import Marker, MarkerArray

from bsal_ros.core.units import quaternion_to_yaw
from bsal_ros.nodes.ros_entities import destroy
from bsal_ros.scene import cone_fan, cone_length, SONAR_COUNT, sonar_topic, Trail, TRAIL_SIZE

#: seconds between two publications of a topic at most (5 Hz)
PERIOD_S = 0.2
#: a sonar whose last Range came longer ago than this (s) loses its cone
STALE_S = 2.0
#: the cones' colour (RGBA), see-through so the model shows behind them
CONE_COLOR = (1.0, 0.55, 0.0, 0.35)
RELIABLE = QoSProfile(depth=5, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
ODOM = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                  reliability=ReliabilityPolicy.RELIABLE)


class Markers(Node):
    """``sonar_cones`` from the twelve ``sonar_NN``, ``odom_path`` from ``odom``."""

    def __init__(self, node_name: str = "brak_markers", trail_size: int = TRAIL_SIZE,
                 **kwargs):
        super().__init__(node_name, **kwargs)
        self._cones = self.create_publisher(MarkerArray, "sonar_cones", RELIABLE)
        self._path = self.create_publisher(Path, "odom_path", LATCHED)
        self._odom_sub = None
        self.trail = Trail(trail_size)
        self._frame = None               # the odometry's frame, the path's
        self._path_dirty = False
        self._sonar_subs = []
        #: sonar id -> (its newest Range, time.monotonic() of its arrival)
        self._ranges: dict[int, tuple[Range, float]] = {}
        self._cones_dirty = False
        #: sonars whose Range could not be drawn (said once each)
        self.refused: set[int] = set()
        #: messages published per topic for its watchers (the empty path latched when the
        #: last one leaves is not counted), and the timer's ticks (the tests read them)
        self.published = {"sonar_cones": 0, "odom_path": 0}
        self.ticks = 0
        self.create_timer(PERIOD_S, self._tick)
        self.get_logger().info(
            f"brak_markers: sonar_cones ({SONAR_COUNT} sonars) and odom_path (the newest "
            f"{trail_size} poses) at most every {PERIOD_S:g} s, only while watched")

    # ---- inputs -------------------------------------------------------------
    def _on_odom(self, msg: Odometry) -> None:
        frame = msg.header.frame_id
        if frame != self._frame:         # first message, or another odometry frame
            self.trail.clear()
            self._frame = frame
        o = msg.pose.pose.orientation
        p = msg.pose.pose.position
        yaw = quaternion_to_yaw(o.x, o.y, o.z, o.w)
        if self.trail.wants(p.x, p.y, yaw):     # the message is built for a kept pose only
            self.trail.offer(p.x, p.y, yaw, PoseStamped(header=msg.header, pose=msg.pose.pose))
            self._path_dirty = True

    def _on_range(self, ident: int, msg: Range) -> None:
        self._ranges[ident] = (msg, time.monotonic())
        self._cones_dirty = True

    def _watch_odom(self, on: bool) -> None:
        """Subscribe the odometry (``on``), or drop it, forget the trail and latch an
        empty path."""
        if on and self._odom_sub is None:
            self._odom_sub = self.create_subscription(Odometry, "odom", self._on_odom, ODOM)
            self.get_logger().info("odom_path watched: odom subscribed")
        elif not on and self._odom_sub is not None:
            destroy(self, self._odom_sub)
            self._odom_sub = None
            self.trail.clear()
            self._path_dirty = False
            self._path.publish(self.path())
            self._frame = None
            self.get_logger().info("odom_path no longer watched: odom subscription dropped, "
                                   "trail forgotten")

    def _watch_sonars(self, on: bool) -> None:
        """Subscribe the sonars (``on``) or drop their subscriptions."""
        if on and not self._sonar_subs:
            self._sonar_subs = [
                self.create_subscription(Range, sonar_topic(i),
                                         lambda m, i=i: self._on_range(i, m),
                                         qos_profile_sensor_data)
                for i in range(SONAR_COUNT)]
            self.get_logger().info(f"sonar_cones watched: {SONAR_COUNT} sonars subscribed")
        elif not on and self._sonar_subs:
            for sub in self._sonar_subs:
                destroy(self, sub)
            self._sonar_subs = []
            self._ranges.clear()
            self._cones_dirty = False
            self.get_logger().info("sonar_cones no longer watched: sonar subscriptions dropped")

    # ---- outputs ------------------------------------------------------------
    def _tick(self) -> None:
        self.ticks += 1
        watched = self._cones.get_subscription_count() > 0
        path_watched = self._path.get_subscription_count() > 0
        self._watch_sonars(watched)
        self._watch_odom(path_watched)
        now = time.monotonic()
        if watched and (self._cones_dirty or self._expired(now)):
            self._cones.publish(self.cones(now))
            self._cones_dirty = False
            self.published["sonar_cones"] += 1
        if path_watched and self._path_dirty:
            self._path.publish(self.path())
            self._path_dirty = False
            self.published["odom_path"] += 1

    def _expired(self, now: float) -> bool:
        return any(now - at > STALE_S for _, at in self._ranges.values())

    def cones(self, now: float) -> MarkerArray:
        """One marker per sonar heard from: its cone, or a DELETE (no echo, a Range
        that draws no cone, or silent for ``STALE_S``); a silent sonar is forgotten
        once its DELETE is built."""
        markers = []
        for ident, (msg, at) in sorted(self._ranges.items()):
            if now - at > STALE_S:
                del self._ranges[ident]
                markers.append(self._cone(ident, msg, None))
            else:
                markers.append(self._cone(ident, msg, cone_length(
                    msg.range, msg.min_range, msg.max_range)))
        return MarkerArray(markers=markers)

    def _cone(self, ident: int, msg: Range, length: float | None) -> Marker:
        m = Marker(header=msg.header, ns="sonar", id=ident)
        m.action = Marker.DELETE
        if length is None:
            return m
        try:
            points = cone_fan(length, msg.field_of_view)
        except ValueError as exc:        # a Range no cone can be drawn of: none, said once
            if ident not in self.refused:
                self.refused.add(ident)
                self.get_logger().warning(f"{sonar_topic(ident)}: no cone drawn: {exc}")
            return m
        m.type, m.action = Marker.TRIANGLE_LIST, Marker.ADD
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = 1.0
        m.color.r, m.color.g, m.color.b, m.color.a = CONE_COLOR
        m.points = [Point(x=x, y=y, z=z) for x, y, z in points]
        return m

    def path(self) -> Path:
        """The trail as a Path in the odometry's frame, stamped with its newest pose."""
        poses = [item for _, _, _, item in self.trail.poses]
        out = Path(poses=poses)
        out.header.frame_id = self._frame or ""
        if poses:
            out.header.stamp = poses[-1].header.stamp
        return out


def main(args=None, hard_exit: bool = True, stop=None) -> int:
    """Run ``brak_markers`` until SIGINT/SIGTERM; exit code 0. Start-up and the clean
    stop: :mod:`bsal_ros.nodes.runtime`."""
    from bsal_ros.nodes.runtime import run

    def build(nodes) -> None:
        nodes.add(Markers(context=nodes.context))

    return run("brak_markers", build, args=args, hard_exit=hard_exit, stop=stop)


if __name__ == "__main__":
    raise SystemExit(main())
