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

"""brak_bringup's state publisher (bsal_ros/nodes/state_publisher.py), read by a
real tf2_ros Buffer + TransformListener in another participant, as rviz and
Foxglove's 3D panel read robot_state_publisher's: each sonar's frame sits at
the pose the robot description gives it, the steering joint turns with the
hardware node's ``joint_states``, and ``robot_description`` reaches a
subscriber that comes later (latched).

Needs the real tf2_ros and tf2_msgs (``../shared/ros2-tools``, installed by
``make setup`` beside the clone, or a ROS 2 distribution); skipped without it.
"""
import math

import pytest
import rclpy
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import String

pytestmark = pytest.mark.ros
tf2_ros = pytest.importorskip("tf2_ros", reason="tf2_ros not installed (../shared/ros2-tools)")

from bsal_ros.description.config import description_of  # noqa: E402
from bsal_ros.description.urdf import build_urdf  # noqa: E402
from bsal_ros.nodes.state_publisher import StatePublisher  # noqa: E402
from bsal_ros.paths import shipped  # noqa: E402
from hardware_node_helpers import RosEnv, wait_for  # noqa: E402

NS = "/state_pub"
PREFIX = "sp/"


def yaw(q):
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


@pytest.fixture
def rig():
    env = RosEnv()
    listener = None
    try:
        env.desc = description_of(shipped("config", "brak.yaml"))
        env.urdf = build_urdf(env.desc)
        env.node = env.add(StatePublisher(env.urdf, PREFIX, namespace=NS, context=env.context))
        env.states = env.node.create_publisher(JointState, "joint_states", 10)
        rclpy.init()
        env.tf_node = rclpy.create_node("tf_listener", namespace=NS)
        env.buffer = tf2_ros.Buffer()
        listener = tf2_ros.TransformListener(env.buffer, env.tf_node, spin_thread=True)
        yield env
    finally:
        if listener is not None:
            listener.unregister()
            listener.executor.shutdown()      # before rclpy.shutdown (ros2-tools README)
        if getattr(env, "tf_node", None) is not None:
            env.tf_node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
        env.close()


def test_each_sonar_frame_is_where_the_description_puts_it(rig):
    base = PREFIX + "base_link"
    sonars = rig.desc["robot"]["devices"]["ultrasonic"]
    assert len(sonars) == 12
    for name, entry in sonars.items():
        frame = PREFIX + (entry.get("frame") or f"sonar_{int(entry['id']):02d}_link")
        assert wait_for(lambda f=frame: rig.buffer.can_transform(base, f, Time()), 10), frame
        t = rig.buffer.lookup_transform(base, frame, Time()).transform
        x, y, heading = entry["pose"]
        assert (t.translation.x, t.translation.y, t.translation.z) == pytest.approx(
            (x, y, 0.0), abs=1e-6), name
        assert yaw(t.rotation) == pytest.approx(math.atan2(math.sin(heading),
                                                           math.cos(heading)), abs=1e-6), name


def test_the_steering_joint_follows_joint_states(rig):
    base, steer = PREFIX + "base_link", PREFIX + "steering_link"
    for angle in (0.4, -0.7):
        msg = JointState(name=["steering_joint", "drive_wheel_joint"], position=[angle, 3.0])
        msg.header.stamp = rig.node.get_clock().now().to_msg()

        def turned(a=angle, m=msg):
            rig.states.publish(m)
            if not rig.buffer.can_transform(base, steer, Time.from_msg(m.header.stamp)):
                return False
            t = rig.buffer.lookup_transform(base, steer, Time.from_msg(m.header.stamp),
                                            timeout=Duration(seconds=1.0))
            return abs(yaw(t.transform.rotation) - a) < 1e-6
        assert wait_for(turned, 10), f"steering_link never at {angle} rad"
    assert rig.node.transforms_sent >= 2


def test_robot_description_reaches_a_late_subscriber(rig):
    got = []
    late = rig.add(rclpy.create_node("late", namespace=NS, context=rig.context))
    late.create_subscription(String, "robot_description", lambda m: got.append(m.data),
                             QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    assert wait_for(lambda: got, 10)
    assert got[0] == rig.urdf and "<robot name=" in got[0]
