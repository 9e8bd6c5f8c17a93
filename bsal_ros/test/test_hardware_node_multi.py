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

"""Two simulated robots in one ROS graph under namespaces: no collisions, and
a smbus2-backed node on a faked bus answers sim_control with NOT_SUPPORTED."""
import math

import pytest

pytest.importorskip("rclpy")

from bsal_interfaces.msg import Result  # noqa: E402, I100 - after importorskip / the fixtures above
from bsal_interfaces.srv import ListDevices, SimControl  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import Range  # noqa: E402

from bsal_ros.nodes.hardware_node import HardwareNode  # noqa: E402

from hardware_node_helpers import Probe, RosEnv, wait_for  # noqa: E402

pytestmark = pytest.mark.ros


def test_two_namespaced_robots_do_not_collide():
    env = RosEnv()
    try:
        r1 = env.add(HardwareNode(namespace="brak1", context=env.context, auto_home=False,
                                  frame_prefix="brak1/", diagnostics_period=0.2))
        r2 = env.add(HardwareNode(namespace="brak2", context=env.context, auto_home=False,
                                  frame_prefix="brak2/", diagnostics_period=0.2,
                                  robot={"sim": {"initial_pose": [1.0, -1.0, 0.5]}}))
        p = env.add(Probe(env))
        for ns in ("brak1", "brak2"):
            p.listen(Range, f"/{ns}/sonar_00", "sensor")
            p.listen(Odometry, f"/{ns}/ground_truth")
        p.listen(DiagnosticArray, "/diagnostics", keep=200)
        m1 = p.wait_msg("/brak1/sonar_00")
        m2 = p.wait_msg("/brak2/sonar_00")
        assert m1.header.frame_id == "brak1/sonar_00_link"
        assert m2.header.frame_id == "brak2/sonar_00_link"
        g2 = p.wait_msg("/brak2/ground_truth").pose.pose.position
        assert (g2.x, g2.y) == pytest.approx((1.0, -1.0), abs=1e-6)
        r = p.call(SimControl, "/brak1/sim_control",
                   SimControl.Request(command="teleport", values=[-2.0, 0.0, math.pi / 2]))
        assert r.result.code == Result.OK
        assert p.wait_msg("/brak1/ground_truth", lambda m: abs(m.pose.pose.position.x + 2.0) < 1e-6)
        g2 = p.wait_msg("/brak2/ground_truth").pose.pose.position
        assert (g2.x, g2.y) == pytest.approx((1.0, -1.0), abs=1e-6)   # untouched
        for ns in ("brak1", "brak2"):
            resp = p.call(ListDevices, f"/{ns}/list_devices", ListDevices.Request())
            assert len(resp.devices) == 17 and resp.devices[0].frame_id.startswith(ns + "/")
        names = set()

        def both():
            for a in p.msgs["/diagnostics"]:
                names.update(s.name.split(":")[0] for s in a.status)
            return {"/brak1/hardware_node", "/brak2/hardware_node"} <= names
        assert wait_for(both)
        topics = dict(r1.get_topic_names_and_types())
        assert "/brak1/cmd_vel" in topics and "/brak2/cmd_vel" in topics
        assert "/cmd_vel" not in topics
        assert r1.robot.bus.simulation.world is not r2.robot.bus.simulation.world
    finally:
        env.close()


def test_smbus2_backend_node_on_a_fake_bus(empty_smbus2):
    """The node starts on the smbus2 backend (a faked SMBus with no boards):
    every board is down with ENXIO, the node keeps running and answers."""
    env = RosEnv()
    try:
        node = env.add(HardwareNode(namespace="hw_smbus_test", context=env.context,
                                    bus_backend="smbus2", i2c_bus=7, diagnostics_period=0.2))
        p = env.add(Probe(env, namespace="hw_smbus_test"))
        r = p.call(SimControl, "sim_control", SimControl.Request(command="teleport",
                                                                 values=[0.0, 0.0, 0.0]))
        assert r.result.code == Result.NOT_SUPPORTED
        resp = p.call(ListDevices, "list_devices", ListDevices.Request())
        assert resp.devices[0].bus == "i2c-7"
        assert all(not d.up and "ENXIO" in d.fault for d in resp.devices)
        assert node.poller.running
    finally:
        env.close()
