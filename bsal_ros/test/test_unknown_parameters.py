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
"""A key that no parameter reads is an error, not silence (issue 24).

For each node a params file with a misspelt parameter stops the start with
one line naming the key and the closest valid name; so does a misspelt key of
the hardware node's ``robot:`` section (in a params file or as a ``robot.*``
override). A parameter of another of our nodes still passes (brak_bringup
gives a ``-p`` to all three).
"""
import pytest
import yaml

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros


def context_with(tmp_path, sections: dict):
    """An initialised rclpy Context whose arguments carry a params file with ``sections``."""
    import rclpy
    import rclpy.context
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({f"/**/{node}": {"ros__parameters": values}
                                    for node, values in sections.items()}))
    context = rclpy.context.Context()
    rclpy.init(args=["--ros-args", "--params-file", str(path)], context=context)
    return context


def build(node: str, context):
    if node == "hardware_node":
        from bsal_ros.nodes.hardware_node import HardwareNode
        return HardwareNode(context=context, start=False, auto_home=False)
    if node == "rci_gateway":
        from bsal_ros.nodes.rci_gateway import RciGatewayNode
        return RciGatewayNode(context=context)
    from bsal_ros.nodes.rdi_gateway import RdiGatewayNode
    return RdiGatewayNode(context=context)


@pytest.mark.parametrize("node,key,value,message", [
    ("hardware_node", "rate_scal", 2.0,
     "parameter rate_scal: the hardware node has no such parameter (did you mean rate_scale?)"),
    ("hardware_node", "odom_heading_noise", 0.1, "(did you mean odom_heading_noise_per_rad?)"),
    ("rci_gateway", "prot", 7650,
     "parameter prot: the RCI gateway has no such parameter (did you mean port?)"),
    ("rdi_gateway", "realtime_rate", 5.0,
     "parameter realtime_rate: the RDI gateway has no such parameter "
     "(did you mean realtime_rate_hz?)"),
])
def test_a_params_file_key_no_parameter_reads_stops_the_start(tmp_path, node, key, value,
                                                              message):
    import rclpy
    context = context_with(tmp_path, {node: {key: value}})
    try:
        with pytest.raises(ValueError) as err:
            build(node, context)
        assert message in str(err.value)
        assert "\n" not in str(err.value)
    finally:
        rclpy.shutdown(context=context)


@pytest.mark.parametrize("robot,message", [
    ({"geometry": {"wheel_radus": 0.1}},
     "robot.geometry.wheel_radus: no such key in the robot description "
     "(did you mean robot.geometry.wheel_radius?)"),
    ({"boards": {"drive": {"pol_hz": 10.0}}},
     "robot.boards.drive.pol_hz: no such key in the robot description "
     "(did you mean robot.boards.drive.poll_hz?)"),
    ({"sim": {"sead": 3}}, "robot.sim.sead: no such key in the robot description "
     "(did you mean robot.sim.seed?)"),
    ({"register_maps": {"dc_motor": {"keep_alive": 0x4C}}},
     "(did you mean robot.register_maps.dc_motor.keepalive?)"),
    ({"devices": {"ultrasonic": {"sonar_00": {"frme": "x"}}}},
     "(did you mean robot.devices.ultrasonic.sonar_00.frame?)"),
])
def test_a_robot_key_nothing_reads_stops_the_start(tmp_path, robot, message):
    import rclpy
    context = context_with(tmp_path, {"hardware_node": {"robot": robot}})
    try:
        with pytest.raises(ValueError, match="robot description") as err:
            build("hardware_node", context)
        assert message in str(err.value)
    finally:
        rclpy.shutdown(context=context)


def test_a_robot_override_key_nothing_reads_is_refused(ros_context):
    from bsal_ros.nodes.hardware_node import HardwareNode
    with pytest.raises(ValueError, match=r"robot\.bus\.retrys: .*did you mean robot\.bus\.retries"):
        HardwareNode(context=ros_context, start=False, auto_home=False,
                     robot={"bus": {"retrys": 1}})


def test_a_parameter_of_another_of_our_nodes_passes(tmp_path):
    """brak_bringup's ``-p port:=...`` reaches every node of the process."""
    import rclpy
    context = context_with(tmp_path, {"hardware_node": {"port": 7650, "rate_scale": 2.0},
                                      "rdi_gateway": {"bus_backend": "sim", "port": 0}})
    try:
        hw = build("hardware_node", context)
        assert hw.p["rate_scale"] == 2.0
        hw.close()
        hw.destroy_node()
        rdi = build("rdi_gateway", context)
        assert rdi.p.realtime_port == 7651
        rdi.destroy_node()
    finally:
        rclpy.shutdown(context=context)
