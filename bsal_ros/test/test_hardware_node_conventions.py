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

"""ROS conventions of the hardware node: cmd_vel as TwistStamped (a
parameter), stamps on the node clock (use_sim_time), actuator safety at
start-up (auto_home follows the backend unless set), and cmd_vel holding the
wheel of an unhomed steering with a diagnostics WARN."""
import math

import pytest

pytest.importorskip("rclpy")

from bsal_interfaces.action import HomeSteering  # noqa: E402, I100
from bsal_interfaces.msg import DeviceStateArray  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import TwistStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Range  # noqa: E402

from bsal_ros.nodes.hardware_node import HardwareNode  # noqa: E402

from hardware_node_helpers import Probe, RosEnv, wait_for  # noqa: E402

pytestmark = pytest.mark.ros
FAST = {"rate_scale": 2.0, "diagnostics_period": 0.2, "robot": {"sim": {"homing_speed": 4.0}}}


def status_of(arr, name):
    for s in arr.status:
        if s.name == name:
            return s
    return None


def test_cmd_vel_stamped_holds_the_wheel_until_homed_then_drives():
    ns = "hw_stamped_test"
    env = RosEnv()
    try:
        node = env.add(HardwareNode(namespace=ns, context=env.context, auto_home=False,
                                    cmd_vel_stamped=True, **FAST))
        p = env.add(Probe(env, namespace=ns))
        p.listen(Odometry, "ground_truth")
        p.listen(DiagnosticArray, "/diagnostics")
        assert wait_for(lambda: "geometry_msgs/msg/TwistStamped"
                        in dict(node.get_topic_names_and_types()).get(f"/{ns}/cmd_vel", []))
        pub = p.create_publisher(TwistStamped, "cmd_vel", 10)
        tw = TwistStamped()
        tw.header.stamp = p.get_clock().now().to_msg()
        tw.twist.linear.x = 0.15
        diag = f"/{ns}/hardware_node: dc_motor 0"

        def held(arr):
            pub.publish(tw)
            s = status_of(arr, diag)
            return s is not None and s.level[0] == 1 and "holds the wheel" in s.message
        assert p.wait_msg("/diagnostics", held) is not None
        start = p.wait_msg("ground_truth").pose.pose.position
        assert abs(p.last("ground_truth").twist.twist.linear.x) < 1e-3   # nothing moved
        cli = p.action_client(HomeSteering, "home_steering")
        gh = p.wait_future(cli.send_goal_async(HomeSteering.Goal(id=0, timeout_s=20.0)))
        assert gh.accepted and p.wait_future(gh.get_result_async()).result.result.code == 0

        def moved():
            pub.publish(tw)
            pos = p.last("ground_truth").pose.pose.position
            return math.hypot(pos.x - start.x, pos.y - start.y) > 0.2
        assert wait_for(moved, step=0.05)
    finally:
        env.close()


def test_stamps_follow_the_node_clock_with_use_sim_time():
    ns = "hw_simtime_test"
    env = RosEnv()
    try:
        env.add(HardwareNode(namespace=ns, context=env.context, auto_home=False,
                             use_sim_time=True, **FAST))
        p = env.add(Probe(env, namespace=ns))
        p.listen(Range, "sonar_00", "sensor")
        p.listen(Odometry, "odom")
        p.listen(DeviceStateArray, "device_states")
        clock_pub = p.create_publisher(Clock, "/clock", 10)
        sim_t = Clock()
        sim_t.clock.sec = 1000

        def at_sim_time(topic):
            def check():
                clock_pub.publish(sim_t)
                m = p.last(topic)
                return m is not None and 990 <= m.header.stamp.sec <= 1000
            return check
        assert wait_for(at_sim_time("sonar_00"), step=0.05)
        assert wait_for(at_sim_time("odom"), step=0.05)
        # a DeviceState keeps the wall time its board was read at (statval counts from it)
        states = p.wait_msg("device_states", lambda a: any(s.header.stamp.sec > 1e9
                                                           for s in a.states))
        assert states is not None
    finally:
        env.close()


def test_auto_home_follows_the_backend_unless_set(empty_smbus2):
    env = RosEnv()
    try:
        real = env.add(HardwareNode(namespace="hw_autohome_real", context=env.context,
                                    bus_backend="smbus2", i2c_bus=7, start=False))
        sim = env.add(HardwareNode(namespace="hw_autohome_sim", context=env.context,
                                   start=False))
        told = env.add(HardwareNode(namespace="hw_autohome_told", context=env.context,
                                    bus_backend="smbus2", i2c_bus=7, auto_home=True,
                                    start=False))
        assert real.get_parameter("auto_home").value is False
        assert sim.get_parameter("auto_home").value is True
        assert told.get_parameter("auto_home").value is True
    finally:
        env.close()


def test_a_parameter_of_the_wrong_type_is_refused_with_the_reason():
    env = RosEnv()
    try:
        with pytest.raises(ValueError, match="auto_home must be of type bool"):
            HardwareNode(namespace="hw_badtype_test", context=env.context, auto_home="yes",
                         start=False)
    finally:
        env.close()
