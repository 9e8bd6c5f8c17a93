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

"""What the hardware node publishes after each poll cycle, and how it is built.

:class:`HardwarePublishers` owns the node's publishers (relative names;
``/diagnostics`` absolute) and turns one cycle's
:class:`~bsal_ros.hardware.robot.CycleUpdate` list into messages: Range per
sonar, Imu, JointState, Odometry, the pose estimate, the ground truth of a
simulated bus, each device kind's own topic (declared by the kind,
:class:`bsal_ros.kinds.RosTopic`: Range per sonar, Imu, a plugin's), and
the DeviceState arrays (through the one converter,
:mod:`bsal_ros.nodes.device_state_msg`). It runs on the poller thread.

Stamps: a standard message (Range, Imu, JointState, Odometry, pose, ground
truth) carries the time its data was read from the board on the node's
clock: the board's wall time as it is, or, with ``use_sim_time``, the node's
clock minus the reading's age. A DeviceState keeps the board's wall time,
because its statval is counted from the wall-time base time.
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from bsal_interfaces.msg import DeviceStateArray
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, qos_profile_sensor_data, QoSProfile,
                       ReliabilityPolicy)
from sensor_msgs.msg import JointState

from bsal_ros.core.units import counts_to_angle, yaw_to_quaternion
from bsal_ros.kinds import kind, resolve
from bsal_ros.nodes.device_state_msg import time_msg, to_msg

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE)
# odometry twist covariance: vx and wz measured, the rest unknown
ODOM_TWIST_COVARIANCE = [0.0] * 36
for _i, _v in zip((0, 7, 14, 21, 28, 35), (1e-3, 1e-6, 1e6, 1e6, 1e6, 1e-3)):
    ODOM_TWIST_COVARIANCE[_i] = _v


def fill_pose(pwc, x: float, y: float, yaw: float, cov) -> None:
    """Fill a PoseWithCovariance from a planar pose and its 6x6 covariance."""
    pwc.pose.position.x = float(x)
    pwc.pose.position.y = float(y)
    o = pwc.pose.orientation
    o.x, o.y, o.z, o.w = yaw_to_quaternion(yaw)
    pwc.covariance = [float(c) for c in cov]


class HardwarePublishers:
    """The hardware node's topics and the message building behind them."""

    def __init__(self, node, robot, simulation, params: dict, frames: dict):
        self.node = node
        self.robot = robot
        self.sim = simulation
        self.p = params
        self.frame = frames
        self._make_kind_topics()
        self.pub_states = node.create_publisher(DeviceStateArray, "device_states", 50)
        self.pub_encoders = node.create_publisher(DeviceStateArray, "encoders", RELIABLE)
        self.pub_motors = node.create_publisher(DeviceStateArray, "motor_states", RELIABLE)
        self.pub_joints = node.create_publisher(JointState, "joint_states", RELIABLE)
        self.pub_odom = node.create_publisher(Odometry, "odom", RELIABLE)
        self.pub_pose = node.create_publisher(PoseWithCovarianceStamped, "pose", RELIABLE)
        self.pub_base_time = node.create_publisher(Time, "base_time", LATCHED)
        self.pub_diag = node.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE)
        self.pub_truth = None
        if simulation is not None and params["publish_ground_truth"]:
            self.pub_truth = node.create_publisher(Odometry, "ground_truth", RELIABLE)
        from bsal_ros.nodes.odom_tf import make_odom_tf_publisher
        self.odom_tf = make_odom_tf_publisher(node, enabled=bool(params["publish_tf"]))
        self._steer_prev: tuple[float, float] | None = None
        self._steer_rate = 0.0
        self.cycles_published = 0
        #: newest stamp published per device on device_states, and the lock
        #: that keeps the poller's and the services' arrays in order
        self._state_stamp: dict[tuple[str, int], float] = {}
        self._states_lock = threading.Lock()
        #: states of answered commands for the next cycle's device_states,
        #: the newest per device
        self._answered: dict = {}
        self._answered_lock = threading.Lock()

    def _make_kind_topics(self) -> None:
        """One publisher per topic a device kind declares (per device when its
        name has the device's fields): (class, id) -> (publisher, message
        class, its kind's fill). A per-device topic's ``_link`` is the
        device's default frame (``sonar_03_link``)."""
        qos = {"sensor": qos_profile_sensor_data, "reliable": RELIABLE}
        fp = self.p["frame_prefix"]
        by_name = {}
        self.kind_topics = {}
        self.frames = {}
        for d in sorted(self.robot.devices.values(), key=lambda d: d.key):
            k = kind(d.device_class)
            topic = k.topic
            if topic is None:
                continue
            name = topic.name.format(id=d.id, name=d.label)
            if name not in by_name:
                msg = resolve(topic.msg)
                by_name[name] = (self.node.create_publisher(msg, name, qos[topic.qos]), msg,
                                 k.fill)
            self.kind_topics[d.key] = by_name[name]
            if name != topic.name:
                self.frames[d.key] = fp + (d.cfg.get("frame") or f"{name}_link")

    # ---- stamps and frames ---------------------------------------------------
    def stamp_of(self, wall_t: float | None) -> Time:
        """When data read at wall time ``wall_t`` was read, on the node's clock."""
        clock = self.node.get_clock()
        if not getattr(clock, "ros_time_is_active", False):
            return time_msg(wall_t)
        age_ns = 0 if wall_t is None else max(0, int((time.time() - wall_t) * 1e9))
        ns = max(0, clock.now().nanoseconds - age_ns)
        return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)

    def frame_of(self, dev) -> str:
        """The frame id of a device (its sonar link, or its configured frame)."""
        return self.frames.get(dev.key) or self.p["frame_prefix"] + dev.frame

    def publish_base_time(self) -> None:
        """The statval base time (latched)."""
        self.pub_base_time.publish(time_msg(self.robot.base_time))

    # ---- one poll cycle ---------------------------------------------------------
    def on_cycle(self, updates) -> None:
        """Publish what one cycle read (poller thread)."""
        r = self.robot
        with self._answered_lock:
            states, self._answered = list(self._answered.values()), {}
        for u in updates:
            b = u.board
            devs = r.by_board[b.name]
            msgs = [to_msg(s, self.frame_of(d)) for d, s in zip(devs, u.snapshots)]
            states += zip(u.snapshots, msgs)
            if not u.fresh:
                continue
            self._publish_kind_topics(devs, u.snapshots)
            if b.type == "dc_motor":
                self._publish_drive(u, msgs)
            elif b.type == "pservo_motor":
                self._publish_steering(u, msgs)
        self._publish_state_array(states)
        self.cycles_published += 1

    def command_states(self, snapshots) -> list:
        """Messages of the states a command just changed, for its answer
        (issue 31: the gateway serves its next reads from them). They go out
        on ``device_states`` with the next poll cycle's array (poller thread),
        not at once: a message right after the answer would have the
        gateways' subscription callbacks contend, for the GIL, with the
        gateway thread that is sending the acknowledgement."""
        r = self.robot
        pairs = [(s, to_msg(s, self.frame_of(r.device(s.device_class, s.id))))
                 for s in snapshots]
        with self._answered_lock:
            for s, m in pairs:
                self._answered[(s.device_class, s.id)] = (s, m)
        return [m for _, m in pairs]

    def _publish_state_array(self, pairs) -> None:
        """One device_states array of (state, message) pairs; a state older
        than one already published for its device (a poll read before a
        command whose result went out first) is left out."""
        with self._states_lock:
            last = self._state_stamp
            msgs = []
            for s, m in pairs:
                key = (s.device_class, s.id)
                stamp = s.stamp or 0.0
                if stamp < last.get(key, 0.0):
                    continue
                last[key] = stamp
                msgs.append(m)
            if msgs:
                arr = DeviceStateArray()
                arr.header.stamp = self.node.get_clock().now().to_msg()
                arr.states = msgs
                self.pub_states.publish(arr)

    def _publish_kind_topics(self, devs, snaps) -> None:
        """Each device that is on, on its kind's topic (the kind fills the message)."""
        for d, s in zip(devs, snaps):
            pub = self.kind_topics.get(d.key)
            if pub is None or not s.on:
                continue
            publisher, msg_cls, fill = pub
            m = msg_cls()
            fill(m, s, SimpleNamespace(frame=self.frame_of(d), stamp=self.stamp_of(s.stamp),
                                       desc=self.robot.desc, params=self.p))
            publisher.publish(m)

    def _split(self, u, msgs) -> Time:
        """Encoders and motors of one board on their own topics; returns the stamp."""
        enc = [m for m in msgs if m.device_class.endswith("encoder")]
        mot = [m for m in msgs if m.device_class.endswith("motor")]
        stamp = time_msg(u.board.stamp)
        for arr_msgs, pub in ((enc, self.pub_encoders), (mot, self.pub_motors)):
            if arr_msgs:
                arr = DeviceStateArray(states=arr_msgs)
                arr.header.stamp = stamp
                pub.publish(arr)
        return self.stamp_of(u.board.stamp)

    def _publish_steering(self, u, msgs) -> None:
        self._split(u, msgs)
        b = u.board
        angle = counts_to_angle(b.count, self.robot.steer_cpr)
        if self._steer_prev is not None and b.mono is not None and b.mono > self._steer_prev[1]:
            self._steer_rate = (angle - self._steer_prev[0]) / (b.mono - self._steer_prev[1])
        self._steer_prev = (angle, b.mono)

    def _publish_drive(self, u, msgs) -> None:
        stamp = self._split(u, msgs)
        r = self.robot
        steer, wheel = r.steer_angle(), r.wheel_angle()
        odom_est, pose_est = r.odometry_snapshot()
        js = JointState()
        js.header.stamp = stamp
        js.name = ["steering_joint", "drive_wheel_joint"]
        js.position = [float(steer), float(wheel)]
        js.velocity = [float(self._steer_rate), float(u.board.speed_meas)]
        self.pub_joints.publish(js)

        x, y, yaw, cov, vx, wz = odom_est
        odom = Odometry()
        odom.header.stamp = stamp
        odom.header.frame_id = self.frame["odom"]
        odom.child_frame_id = self.frame["base"]
        fill_pose(odom.pose, x, y, yaw, cov)
        odom.twist.twist.linear.x = float(vx)
        odom.twist.twist.angular.z = float(wz)
        odom.twist.covariance = list(ODOM_TWIST_COVARIANCE)
        self.pub_odom.publish(odom)
        self.odom_tf.publish(odom)

        pose = PoseWithCovarianceStamped()
        pose.header.stamp = stamp
        pose.header.frame_id = self.frame["map"]
        fill_pose(pose.pose, *pose_est)
        self.pub_pose.publish(pose)

        if self.pub_truth is not None:
            (tx, ty, tyaw), (tvx, twz) = self.sim.last_pose_and_twist()
            gt = Odometry()
            gt.header.stamp = stamp
            gt.header.frame_id = self.frame["map"]
            gt.child_frame_id = self.frame["base"]
            fill_pose(gt.pose, tx, ty, tyaw, [0.0] * 36)
            gt.twist.twist.linear.x, gt.twist.twist.angular.z = tvx, twz
            self.pub_truth.publish(gt)
