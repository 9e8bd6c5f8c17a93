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

"""bsal_ros.nodes.odom_tf: odom -> base_link through tf2_ros when it exists, else a no-op.

tf2_ros is not on PyPI, so the broadcasting path runs against a stand-in
``tf2_ros`` module that records what it is asked to send.
"""
import sys
import types

from nav_msgs.msg import Odometry
import pytest

from bsal_ros.nodes.odom_tf import make_odom_tf_publisher


class FakeLogger:

    def __init__(self):
        self.lines = []

    def info(self, text):
        self.lines.append(text)

    warning = warn = info


class FakeNode:

    def __init__(self):
        self.logger = FakeLogger()

    def get_logger(self):
        return self.logger


def odometry():
    msg = Odometry()
    msg.header.frame_id = "odom"
    msg.header.stamp.sec, msg.header.stamp.nanosec = 12, 345
    msg.child_frame_id = "base_link"
    msg.pose.pose.position.x, msg.pose.pose.position.y, msg.pose.pose.position.z = 1.5, -0.25, 0.0
    q = msg.pose.pose.orientation
    q.x, q.y, q.z, q.w = 0.0, 0.0, 0.6, 0.8
    return msg


@pytest.fixture
def fake_tf2(monkeypatch):
    sent = []

    class TransformBroadcaster:

        def __init__(self, node):
            self.node = node

        def sendTransform(self, t):  # noqa: N802 (tf2_ros's spelling)
            sent.append(t)

    monkeypatch.setitem(sys.modules, "tf2_ros",
                        types.SimpleNamespace(TransformBroadcaster=TransformBroadcaster))
    return sent


def test_broadcasts_the_odometry_pose_when_tf2_ros_is_importable(fake_tf2):
    node = FakeNode()
    pub = make_odom_tf_publisher(node, enabled=True)
    assert pub.active
    pub.publish(odometry())
    pub.publish(odometry())
    assert len(fake_tf2) == 2 and pub.sent == 2
    t = fake_tf2[0]
    assert (t.header.frame_id, t.child_frame_id) == ("odom", "base_link")
    assert (t.header.stamp.sec, t.header.stamp.nanosec) == (12, 345)
    tr = t.transform.translation
    assert (tr.x, tr.y, tr.z) == (1.5, -0.25, 0.0)
    r = t.transform.rotation
    assert (r.x, r.y, r.z, r.w) == (0.0, 0.0, 0.6, 0.8)
    assert node.logger.lines == []


def test_no_tf2_ros_is_a_noop_with_one_log_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "tf2_ros", None)  # import raises ImportError
    node = FakeNode()
    pub = make_odom_tf_publisher(node, enabled=True)
    assert not pub.active and "tf2_ros" in pub.reason
    for _ in range(3):
        pub.publish(odometry())
    assert len(node.logger.lines) == 1 and "tf2_ros" in node.logger.lines[0]


def test_disabled_sends_nothing_even_with_tf2_ros(fake_tf2):
    node = FakeNode()
    pub = make_odom_tf_publisher(node, enabled=False)
    pub.publish(odometry())
    assert not pub.active and fake_tf2 == []
    assert len(node.logger.lines) == 1


@pytest.mark.ros
def test_a_real_node_gets_what_this_install_offers(ros_context):
    """pip-only venv: no tf2_ros, the no-op; a ROS 2 distribution: the real broadcaster."""
    import importlib.util

    import rclpy
    has_tf2 = importlib.util.find_spec("tf2_ros") is not None
    node = rclpy.create_node("odom_tf_probe", context=ros_context)
    try:
        pub = make_odom_tf_publisher(node, enabled=True)
        pub.publish(odometry())
        assert pub.active == has_tf2
    finally:
        node.destroy_node()
