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

"""The plain double of a ROS 2 base: unstamped Twist in; odometry, IMU and twelve
Range topics out, in namespace /base (the ``twist_range`` profile's topics); no
tests here.

It runs in the test's process in an rclpy context of its own, with its
executor in a thread: it drives a point robot in a square room with the last
Twist it was given (no staleness of its own: a plain base; the walls stop
it), and each sonar ranges the room's walls along its axis. ``silent`` names topics it stops
publishing; ``commands`` records every Twist with its arrival time.
"""

from __future__ import annotations

import math
import threading
import time

from bsal_ros.hardware import load_description
from spun_node import SpunNode

ROOM_HALF_M = 3.0        # the room: x and y in [-3, 3] m
MAX_RANGE_M = 5.0
PERIOD_S = 0.05          # 20 Hz


class TwistRangeDouble(SpunNode):
    """The double node, spinning in its own thread until :meth:`close`."""

    def __init__(self, namespace: str = "/base"):
        import rclpy
        from geometry_msgs.msg import Twist
        from nav_msgs.msg import Odometry
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import Imu, Range
        self.start_context()
        self.node = rclpy.create_node("twist_range_double", namespace=namespace,
                                      context=self.context)
        sonars = load_description()["robot"]["devices"]["ultrasonic"]
        self.poses = {name: d["pose"] for name, d in sonars.items()}
        self.lock = threading.Lock()
        self.x = self.y = self.yaw = 0.0
        self.vx = self.wz = 0.0
        self.commands: list[tuple[float, float, float]] = []   # (monotonic, vx, wz)
        self.silent: set[str] = set()
        self._types = (Odometry, Imu, Range)
        self.node.create_subscription(Twist, "cmd_vel", self._on_twist, 10)
        self.pub_odom = self.node.create_publisher(Odometry, "odom", 10)
        self.pub_imu = self.node.create_publisher(Imu, "imu", qos_profile_sensor_data)
        self.pub_range = {name: self.node.create_publisher(Range, name, qos_profile_sensor_data)
                          for name in self.poses}
        self.node.create_timer(PERIOD_S, self._on_timer)
        self.spin()

    def _on_twist(self, msg) -> None:
        with self.lock:
            self.vx, self.wz = float(msg.linear.x), float(msg.angular.z)
            self.commands.append((time.monotonic(), self.vx, self.wz))

    def sonar_range(self, name: str) -> float:
        """The distance from the sonar along its axis to the room's wall (inf past max)."""
        sx, sy, syaw = self.poses[name]
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        ox, oy = self.x + c * sx - s * sy, self.y + s * sx + c * sy
        a = self.yaw + syaw
        dx, dy = math.cos(a), math.sin(a)
        hits = [(ROOM_HALF_M * math.copysign(1, d) - o) / d
                for o, d in ((ox, dx), (oy, dy)) if abs(d) > 1e-9]
        d = min((t for t in hits if t >= 0), default=math.inf)
        return d if d <= MAX_RANGE_M else math.inf

    def _on_timer(self) -> None:
        odometry_cls, imu_cls, range_cls = self._types
        with self.lock:
            self.yaw += self.wz * PERIOD_S
            # the walls stop it (a sonar's origin never leaves the room)
            inside = ROOM_HALF_M - 0.6
            self.x = max(-inside, min(inside, self.x + self.vx * math.cos(self.yaw) * PERIOD_S))
            self.y = max(-inside, min(inside, self.y + self.vx * math.sin(self.yaw) * PERIOD_S))
            ranges = {name: self.sonar_range(name) for name in self.poses}
            pose = (self.x, self.y, self.yaw, self.vx, self.wz)
            silent = set(self.silent)
        stamp = self.node.get_clock().now().to_msg()
        if "odom" not in silent:
            odom = odometry_cls()
            odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, "odom", \
                "base_link"
            odom.pose.pose.position.x, odom.pose.pose.position.y = pose[0], pose[1]
            odom.pose.pose.orientation.z = math.sin(pose[2] / 2)
            odom.pose.pose.orientation.w = math.cos(pose[2] / 2)
            odom.twist.twist.linear.x, odom.twist.twist.angular.z = pose[3], pose[4]
            self.pub_odom.publish(odom)
        if "imu" not in silent:
            imu = imu_cls()
            imu.header.stamp, imu.header.frame_id = stamp, "base_link"
            imu.linear_acceleration.z = 9.80665
            self.pub_imu.publish(imu)
        for name, r in ranges.items():
            if name in silent:
                continue
            msg = range_cls()
            msg.header.stamp, msg.header.frame_id = stamp, f"{name}_link"
            msg.radiation_type = range_cls.ULTRASOUND
            msg.field_of_view, msg.min_range, msg.max_range = 0.35, 0.15, MAX_RANGE_M
            msg.range = r
            self.pub_range[name].publish(msg)

    def travelled(self) -> tuple[float, float]:
        """(x, y) of the double now."""
        with self.lock:
            return self.x, self.y
