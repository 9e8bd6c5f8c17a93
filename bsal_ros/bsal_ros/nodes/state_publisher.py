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

"""robot_state_publisher's job in ``brak_bringup``, where there is none.

On a ROS install ``brak.launch.py`` starts robot_state_publisher (C++). A
pip-only machine has none, so ``brak_bringup`` runs this node instead: it
publishes the URDF the hardware node's description gives on
``robot_description`` (latched), every fixed joint's transform once on
``/tf_static`` (latched) and, from ``joint_states``, the steering and drive
wheel joints' transforms on ``/tf``, frames prefixed as the hardware node's
(``frame_prefix``). Foxglove's 3D panel and rviz then draw the model and
the sonar frames. Without ``tf2_msgs`` (the PyPI wheels have none; the ROS
tools of the test machines bring it) only ``robot_description`` is published,
and one line says so.
"""

from __future__ import annotations

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from bsal_ros.description.joints import joints_of

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
STATES = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


class StatePublisher(Node):
    """The robot's model and joint transforms (robot_state_publisher's topics)."""

    def __init__(self, urdf: str, frame_prefix: str = "",
                 node_name: str = "brak_state_publisher", **kwargs):
        super().__init__(node_name, **kwargs)
        self.prefix = frame_prefix
        self.joints = joints_of(urdf)
        self.moving = {j.name: j for j in self.joints if not j.fixed}
        self.create_publisher(String, "robot_description", LATCHED).publish(String(data=urdf))
        self.transforms_sent = 0
        try:
            from geometry_msgs.msg import TransformStamped
            from tf2_msgs.msg import TFMessage
        except ImportError as exc:
            self.get_logger().info(f"robot_description published; no /tf_static, /tf of the "
                                   f"joints: tf2_msgs is not importable ({exc})")
            return
        self._tf_types = (TFMessage, TransformStamped)
        static = self.create_publisher(TFMessage, "/tf_static", LATCHED)
        stamp = self.get_clock().now().to_msg()
        static.publish(TFMessage(transforms=[self._transform(j, 0.0, stamp)
                                             for j in self.joints if j.fixed]))
        self._tf = self.create_publisher(TFMessage, "/tf", 10)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, STATES)
        fixed = len(self.joints) - len(self.moving)
        self.get_logger().info(f"robot_description, /tf_static ({fixed} fixed joints) and /tf "
                               f"of {len(self.moving)} joints published")

    def _transform(self, joint, position: float, stamp):
        t = self._tf_types[1]()
        t.header.stamp = stamp
        t.header.frame_id = self.prefix + joint.parent
        t.child_frame_id = self.prefix + joint.child
        xyz, q = joint.transform(position)
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
        r = t.transform.rotation
        r.x, r.y, r.z, r.w = q
        return t

    def _on_joint_states(self, msg: JointState) -> None:
        transforms = [self._transform(self.moving[name], float(pos), msg.header.stamp)
                      for name, pos in zip(msg.name, msg.position) if name in self.moving]
        if transforms:
            self._tf.publish(self._tf_types[0](transforms=transforms))
            self.transforms_sent += len(transforms)
