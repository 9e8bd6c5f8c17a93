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
"""odom -> base_link on /tf as rviz consumes it: the simulated hardware node
drives, and a real tf2_ros Buffer + TransformListener (another node, its own
spin thread, as rviz and robot nodes use it) answers lookup_transform with
exactly the pose of each ``odom`` message at that message's stamp.

Needs the real tf2_ros (``../shared/ros2-tools``, installed by ``make setup``
beside the clone, or a ROS 2 distribution); skipped without it. The no-tf2
path is tested against a stand-in in test_odom_tf.py.
"""
import math
import time

from nav_msgs.msg import Odometry
import pytest
import rclpy

pytestmark = pytest.mark.ros
tf2_ros = pytest.importorskip("tf2_ros", reason="tf2_ros not installed (../shared/ros2-tools)")

from rclpy.duration import Duration  # noqa: E402
from rclpy.time import Time  # noqa: E402

from bsal_ros.nodes.hardware_node import HardwareNode  # noqa: E402
from hardware_node_helpers import Probe, RosEnv, wait_for  # noqa: E402

NS = "/tf_real"


def yaw(q):
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


@pytest.fixture
def rig():
    env = RosEnv()
    listener = None
    try:
        env.node = env.add(HardwareNode(namespace=NS, context=env.context, auto_home=False,
                                        frame_prefix="brak_tf/"))
        env.probe = env.add(Probe(env, namespace=NS))
        env.probe.listen(Odometry, "odom")
        # the consumer, as rviz: another participant (rclpy's default context;
        # TransformListener's spin thread builds its executor there) subscribing
        # /tf and /tf_static (absolute names)
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


def test_lookup_transform_is_the_odometry_as_the_robot_drives(rig):
    assert rig.node.out.odom_tf.active, rig.node.out.odom_tf.reason
    # The listener's /tf and the probe's odom subscriptions are matched each on
    # its own (a starved run: /tf 3 s later): compare only odometry published
    # once the buffer holds transforms
    assert wait_for(lambda: rig.buffer.can_transform("brak_tf/odom", "brak_tf/base_link",
                                                     Time()), 10)
    # messages are told apart by stamp, not by count: the probe keeps only the
    # newest 50, and a slow /tf match (above) can fill them before the command
    start = rig.node.get_clock().now()
    res = rig.node.robot.set_motors("dc_motor", [(0, 0, 40.0)])      # duty cycle 40 %
    assert res.ok, res
    try:
        moved = rig.probe.wait_msg("odom", lambda m: abs(m.pose.pose.position.x) > 0.05)
    finally:
        rig.node.robot.set_motors("dc_motor", [(0, 0, 0.0)])
    assert moved is not None
    assert (moved.header.frame_id, moved.child_frame_id) == ("brak_tf/odom", "brak_tf/base_link")

    def since_start():
        return [m for m in rig.probe.kept("odom") if Time.from_msg(m.header.stamp) > start]
    # a poll delayed on a loaded machine integrates its whole gap in one step:
    # the move can show in the first message after the command; odometry goes
    # on at the poll rate, so wait for the messages to compare
    assert wait_for(lambda: len(since_start()) >= 6, 10)
    checked = 0
    for msg in since_start()[1:][-10:]:
        stamp = Time.from_msg(msg.header.stamp)
        t = rig.buffer.lookup_transform("brak_tf/odom", "brak_tf/base_link", stamp,
                                        timeout=Duration(seconds=5.0))
        assert (t.header.frame_id, t.child_frame_id) == ("brak_tf/odom", "brak_tf/base_link")
        assert t.header.stamp == msg.header.stamp
        p, tr = msg.pose.pose, t.transform
        assert (tr.translation.x, tr.translation.y) == pytest.approx(
            (p.position.x, p.position.y), abs=1e-9)
        assert yaw(tr.rotation) == pytest.approx(yaw(p.orientation), abs=1e-9)
        checked += 1
    assert checked >= 5
    # the latest transform follows the latest odometry
    last = rig.probe.last("odom")
    latest = rig.buffer.lookup_transform("brak_tf/odom", "brak_tf/base_link", Time())
    assert Time.from_msg(latest.header.stamp) >= Time.from_msg(moved.header.stamp)
    assert math.dist((latest.transform.translation.x, latest.transform.translation.y),
                     (last.pose.pose.position.x, last.pose.pose.position.y)) < 0.05


def test_transform_stamps_are_the_board_read_times(rig):
    """rviz places each pose at its odometry stamp: never in the future, fresh."""
    assert wait_for(lambda: rig.buffer.can_transform("brak_tf/odom", "brak_tf/base_link",
                                                     Time()), 10)
    t = rig.buffer.lookup_transform("brak_tf/odom", "brak_tf/base_link", Time())
    age = time.time() - (t.header.stamp.sec + t.header.stamp.nanosec * 1e-9)
    assert -0.01 < age < 1.0, age
