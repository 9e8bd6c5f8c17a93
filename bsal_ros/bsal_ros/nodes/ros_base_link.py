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

"""The ROS side of the ``ros_base`` backend: the base's topics <-> ``bus.base``.

:class:`RosBaseLink` lives on the hardware node. It subscribes to every topic
the profile maps (sensor-data QoS: it matches best-effort and reliable
publishers), decodes each message into numbers for
:class:`bsal_ros.hardware.base_world.BaseLink`, and publishes the velocity
command the motor boards ask for from a timer at the profile's ``rate_hz``
(``Twist``, or ``TwistStamped`` stamped with the node's clock). At start it
reads the graph: a mapped topic carried with another type refuses the start
(ValueError, one line: exit 2); a topic not there yet is waited for.
"""

from __future__ import annotations

import math
import time

from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Imu, JointState, LaserScan, Range

from bsal_ros.core.units import quaternion_to_yaw
from bsal_ros.hardware import base_profile as bp
from bsal_ros.paths import shipped

#: how long the start waits for the mapped topics to show on the graph before
#: it checks their types (discovery takes a moment, seconds on a loaded machine;
#: a topic still missing is waited for, and its type checked once it shows)
GRAPH_WAIT_S = 5.0
#: s between the later looks at the graph for a mapped topic of another type
GRAPH_RECHECK_S = 1.0


def profile_path(value: str) -> str:
    """A profile file, or the shipped ``config/base_<name>.yaml`` of a bare name."""
    if value and "/" not in value and not value.endswith((".yaml", ".yml")):
        return str(shipped("config", f"base_{value}.yaml"))
    return value


class RosBaseLink:
    """Subscriptions, the command publisher and its timer for one ``bus.base``.

    Built on the node's thread; its callbacks run in the node's executor."""

    def __init__(self, node, link, graph_wait_s: float = GRAPH_WAIT_S):
        self.node = node
        self.link = link
        self.profile = link.profile
        self._check_own_topics()
        self._check_graph(graph_wait_s)
        group = MutuallyExclusiveCallbackGroup()
        self._subs = []
        for topic, mtype in self.profile.topics().items():
            if mtype in bp.COMMAND_TYPES:
                continue
            msg_type, handler = self._input(topic, mtype)
            self._subs.append(node.create_subscription(msg_type, topic, handler,
                                                       qos_profile_sensor_data,
                                                       callback_group=group))
        cmd = self.profile.command()
        self.stamped = cmd.type == bp.TWIST_STAMPED
        self.pub = node.create_publisher(TwistStamped if self.stamped else Twist, cmd.topic, 10)
        rate = float(cmd.options.get("rate_hz", bp.DEFAULT_RATE_HZ))
        self.timer = node.create_timer(1.0 / rate, self._on_timer, callback_group=group)
        self._notes_timer = node.create_timer(0.2, self._log_notes, callback_group=group)
        self._told: set[str] = set()      # conflicts already logged
        self._graph_timer = node.create_timer(GRAPH_RECHECK_S, self._recheck_graph,
                                              callback_group=group)
        waiting = sorted({m.topic for m in self.profile.inputs()})
        node.get_logger().info(
            f"ros_base: profile {self.profile.name} ({self.profile.source}): velocity on "
            f"{cmd.topic} ({cmd.type.rsplit('/', 1)[-1]}, {rate:g} Hz while a speed is held); "
            f"devices not ready until their topics speak: {', '.join(waiting)}")

    # ---- start ------------------------------------------------------------------
    def _check_own_topics(self) -> None:
        """A mapped topic that is one of the node's own (its odom, imu, sonar_NN,
        cmd_vel...) would feed the bridge its own output: ValueError naming it."""
        own = {p.topic_name for p in self.node.publishers} | \
            {s.topic_name for s in self.node.subscriptions}
        for topic in self.profile.topics():
            full = self.node.resolve_topic_name(topic)
            if full in own:
                raise bp.ProfileError(
                    f"base profile {self.profile.source}: topic {full} is the hardware node's "
                    "own; run the bridge in a namespace of its own (--namespace brak) or map "
                    "the base's topics by their full names")

    def _check_graph(self, wait_s: float) -> None:
        """Wait up to ``wait_s`` for the mapped topics; a wrong type -> ValueError."""
        wanted = set(self.profile.topics())
        deadline = time.monotonic() + wait_s
        while True:
            graph = self.node.get_topic_names_and_types()
            conflicts = bp.graph_conflicts(self.profile, graph, self.node.get_namespace())
            if conflicts:
                raise bp.ProfileError(conflicts[0])
            seen = {self.node.resolve_topic_name(t) for t in wanted} <= {n for n, _ in graph}
            if seen or time.monotonic() >= deadline:
                return
            time.sleep(0.1)

    def _recheck_graph(self) -> None:
        """A topic that showed after the start with another type: one error line
        (its devices stay not ready: no message of the profile's type comes)."""
        for line in self._endpoint_conflicts():
            if line not in self._told:
                self._told.add(line)
                self.node.get_logger().error(line + "; its devices stay not ready")

    def _endpoint_conflicts(self) -> list[str]:
        """The graph's types of the other nodes' ends of each mapped topic (our own
        subscription or publisher carries the profile's type and is left out)."""
        me = (self.node.get_name(), self.node.get_namespace())
        graph = []
        for topic, mtype in self.profile.topics().items():
            full = self.node.resolve_topic_name(topic)
            ends = (self.node.get_subscriptions_info_by_topic(full) if mtype in bp.COMMAND_TYPES
                    else self.node.get_publishers_info_by_topic(full))
            types = sorted({e.topic_type for e in ends if (e.node_name, e.node_namespace) != me})
            if types:
                graph.append((full, types))
        return bp.graph_conflicts(self.profile, graph, self.node.get_namespace())

    def _input(self, topic: str, mtype: str):
        """(message class, callback) of an input topic."""
        link = self.link
        if mtype == bp.ODOMETRY:
            def on_odom(msg):
                p, q = msg.pose.pose.position, msg.pose.pose.orientation
                values = (p.x, p.y, msg.twist.twist.linear.x)
                if self._finite(topic, values):
                    link.on_odometry(topic, p.x, p.y, quaternion_to_yaw(q.x, q.y, q.z, q.w),
                                     msg.twist.twist.linear.x)
            return Odometry, on_odom
        if mtype == bp.JOINT_STATE:
            return JointState, lambda msg: link.on_joint_state(
                topic, list(msg.name), list(msg.position), list(msg.velocity))
        if mtype == bp.RANGE:
            return Range, lambda msg: link.on_range(topic, float(msg.range))
        if mtype == bp.LASER_SCAN:
            return LaserScan, lambda msg: link.on_scan(
                topic, msg.angle_min, msg.angle_increment, msg.ranges, msg.range_min,
                msg.range_max)
        if mtype == bp.IMU:
            def on_imu(msg):
                if self._finite(topic, (msg.linear_acceleration.x,)):
                    link.on_imu(topic, msg.linear_acceleration.x)
            return Imu, on_imu
        raise bp.ProfileError(f"base profile {self.profile.source}: {topic}: no reader for "
                              f"{mtype}")   # pragma: no cover - check_profile refuses it

    def _finite(self, topic: str, values) -> bool:
        if all(math.isfinite(v) for v in values):
            return True
        self.node.get_logger().warning(f"ros_base: a message on {topic} ignored: a value is "
                                       "not finite", throttle_duration_sec=5.0)
        return False

    # ---- timers ---------------------------------------------------------------------
    def _on_timer(self) -> None:
        cmd = self.link.velocity_command()
        if cmd is not None:
            self.publish(*cmd)

    def publish(self, vx: float, wz: float) -> None:
        """One velocity command on the base's topic (stamped with the node clock)."""
        if self.stamped:
            msg = TwistStamped()
            msg.header.stamp = self.node.get_clock().now().to_msg()
            twist = msg.twist
        else:
            msg = twist = Twist()
        twist.linear.x = float(vx)
        twist.angular.z = float(wz)
        self.pub.publish(msg)

    def _log_notes(self) -> None:
        log = self.node.get_logger()
        for line in self.link.take_notes():
            if "silent" in line:
                log.warning(line)
            else:
                log.info(line)

    def close(self) -> None:
        """Stop the timers and send one zero: the program that drove the base is gone."""
        for timer in (self.timer, self._notes_timer, self._graph_timer):
            timer.cancel()
        try:
            self.publish(0.0, 0.0)
        except Exception:   # noqa: BLE001 - the context may already be shut down
            pass


def attach(node, bus) -> RosBaseLink | None:
    """The node's :class:`RosBaseLink` when ``bus`` is a ros_base bus, else None."""
    link = getattr(bus, "base", None)
    return None if link is None else RosBaseLink(node, link)
