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

"""What the hardware node really publishes, read once per test process.

Not a test module. ``capture()`` starts the hardware node in-process on the
simulated bus with ``config/brak.yaml`` (as the launch file does), in a
private rclpy Context (like conftest's ``ros_context``), listens until every
sonar, the joint states, the IMU, the device states, the odometry and a full
``/diagnostics`` array have arrived (generous deadline, no timed assertion),
notes the node's publishers and subscriptions with their QoS (and the
publishers of ``brak_markers``, started beside it: ``sonar_cones``,
``odom_path``), and shuts everything down. The result is cached: the description, rviz and analyzer
tests share one start of the node.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import functools
from pathlib import Path
import threading
import time

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "brak.yaml"
DEADLINE = 60.0


@dataclass
class Published:
    range_frames: dict = field(default_factory=dict)       # topic -> frame_id
    joint_names: set = field(default_factory=set)
    imu_frames: set = field(default_factory=set)
    device_frames: dict = field(default_factory=dict)      # (class, id) -> frame_id
    odom_frames: tuple = ("", "")                          # (frame_id, child_frame_id)
    diagnostic_names: set = field(default_factory=set)
    publishers: dict = field(default_factory=dict)         # absolute topic -> (types, reliability)
    durability: dict = field(default_factory=dict)         # absolute topic -> publisher's
    subscriptions: dict = field(default_factory=dict)      # absolute topic -> types
    node_name: str = ""


@functools.lru_cache(maxsize=1)
def capture() -> Published:
    from bsal_interfaces.msg import DeviceStateArray
    from diagnostic_msgs.msg import DiagnosticArray
    from nav_msgs.msg import Odometry
    import rclpy
    import rclpy.context
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Imu, JointState, Range

    from bsal_ros.hardware.description import load_description
    from bsal_ros.nodes.hardware_node import HardwareNode
    from bsal_ros.nodes.markers import Markers

    desc = load_description(str(CONFIG))
    n_sonars = len(desc["robot"]["devices"]["ultrasonic"])
    n_devices = sum(len(v) for v in desc["robot"]["devices"].values())

    out = Published()
    lock = threading.Lock()
    context = rclpy.context.Context()
    rclpy.init(context=context)
    executor = MultiThreadedExecutor(num_threads=2, context=context)
    stop = threading.Event()
    hw = probe = markers = None
    try:
        hw = HardwareNode(context=context, robot_description_file=str(CONFIG),
                          auto_home=False, rate_scale=2.0, diagnostics_period=0.25)
        probe = rclpy.create_node("visualization_probe", context=context)
        markers = Markers(context=context)
        out.node_name = hw.get_fully_qualified_name()

        def on_range(msg, topic):
            with lock:
                out.range_frames[topic] = msg.header.frame_id

        def on_joints(msg):
            with lock:
                out.joint_names.update(msg.name)

        def on_imu(msg):
            with lock:
                out.imu_frames.add(msg.header.frame_id)

        def on_states(msg):
            with lock:
                for s in msg.states:
                    out.device_frames[(s.device_class, s.id)] = s.header.frame_id

        def on_odom(msg):
            with lock:
                out.odom_frames = (msg.header.frame_id, msg.child_frame_id)

        def on_diag(msg):
            with lock:
                out.diagnostic_names.update(s.name for s in msg.status)

        sonar_pubs = {id(p): p for (c, _), (p, _, _) in hw.out.kind_topics.items()
                      if c == "ultrasonic"}
        for pub in sonar_pubs.values():
            probe.create_subscription(Range, pub.topic_name,
                                      lambda m, t=pub.topic_name: on_range(m, t),
                                      qos_profile_sensor_data)
        probe.create_subscription(JointState, "joint_states", on_joints, 10)
        probe.create_subscription(Imu, "imu", on_imu, qos_profile_sensor_data)
        probe.create_subscription(DeviceStateArray, "device_states", on_states, 50)
        probe.create_subscription(Odometry, "odom", on_odom, 10)
        probe.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 10)
        executor.add_node(hw)
        executor.add_node(probe)
        executor.add_node(markers)

        def spin():
            while not stop.is_set() and context.ok():
                executor.spin_once(timeout_sec=0.05)
        thread = threading.Thread(target=spin, daemon=True)
        thread.start()

        def complete():
            with lock:
                return (len(out.range_frames) == n_sonars and out.joint_names and out.imu_frames
                        and len(out.device_frames) == n_devices and out.odom_frames[0]
                        and len(out.diagnostic_names) >= n_devices)
        end = time.monotonic() + DEADLINE
        while not complete() and time.monotonic() < end:
            time.sleep(0.05)

        for node in (hw, markers):
            name, ns = node.get_name(), node.get_namespace()
            for topic, types in hw.get_publisher_names_and_types_by_node(name, ns):
                infos = [i for i in hw.get_publishers_info_by_topic(topic)
                         if i.node_name == name]
                rel = infos[0].qos_profile.reliability.name if infos else ""
                out.publishers[topic] = (tuple(types), rel)
                out.durability[topic] = infos[0].qos_profile.durability.name if infos else ""
        name, ns = hw.get_name(), hw.get_namespace()
        for topic, types in hw.get_subscriber_names_and_types_by_node(name, ns):
            out.subscriptions[topic] = tuple(types)
        stop.set()
        thread.join(5)
    finally:
        stop.set()
        for node in (markers, probe, hw):
            if node is not None:
                executor.remove_node(node)
                node.destroy_node()
        executor.shutdown()
        if context.ok():
            rclpy.shutdown(context=context)
    return out
