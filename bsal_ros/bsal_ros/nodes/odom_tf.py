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

"""The ``odom`` -> ``base_link`` transform, broadcast from the odometry messages.

    self._odom_tf = make_odom_tf_publisher(self, enabled=self.get_parameter("publish_tf").value)
    ...
    self._odom_pub.publish(odom)
    self._odom_tf.publish(odom)

On a ROS 2 distribution ``tf2_ros`` is importable and every ``publish(odom)``
sends one ``TransformStamped`` on ``/tf`` with the odometry's stamp, its
``header.frame_id`` as parent and its ``child_frame_id`` as child. The PyPI
wheels this project installs have no ``tf2_ros``: there the publisher is a
no-op that says so once in the log. ``enabled=False`` (another node owns the
transform, e.g. a localisation filter or ros2_controllers) is a no-op too.
"""
from __future__ import annotations


class NoOdomTf:
    """Broadcasts nothing; ``reason`` says why."""

    active = False

    def __init__(self, reason: str):
        self.reason = reason

    def publish(self, odom_msg) -> None:
        """Nothing to send."""
        pass


class OdomTfBroadcaster:
    """Sends each odometry pose as the transform ``header.frame_id`` -> ``child_frame_id``."""

    active = True
    reason = ""

    def __init__(self, broadcaster, transform_type):
        self._broadcaster = broadcaster
        self._transform_type = transform_type
        self.sent = 0

    def publish(self, odom_msg) -> None:
        """Send the odometry's pose as a transform."""
        t = self._transform_type()
        t.header.stamp = odom_msg.header.stamp
        t.header.frame_id = odom_msg.header.frame_id
        t.child_frame_id = odom_msg.child_frame_id
        p = odom_msg.pose.pose.position
        t.transform.translation.x = p.x
        t.transform.translation.y = p.y
        t.transform.translation.z = p.z
        t.transform.rotation = odom_msg.pose.pose.orientation
        self._broadcaster.sendTransform(t)
        self.sent += 1


def make_odom_tf_publisher(node, enabled: bool):
    """An object with ``publish(odom_msg)``: a tf2 broadcaster, or a no-op (logged once)."""
    log = node.get_logger()
    if not enabled:
        log.info("odom -> base_link transform not published (publish_tf is false)")
        return NoOdomTf("disabled by parameter")
    try:
        from geometry_msgs.msg import TransformStamped
        from tf2_ros import TransformBroadcaster
    except ImportError as exc:
        log.info(f"odom -> base_link transform not published: tf2_ros is not importable "
                 f"({exc}); pip-only installs have no TF, a ROS 2 distribution has")
        return NoOdomTf(f"tf2_ros not importable: {exc}")
    return OdomTfBroadcaster(TransformBroadcaster(node), TransformStamped)
