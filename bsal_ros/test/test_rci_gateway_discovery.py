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

"""The RCI gateway is ready for commands only once it has discovered every
service of the hardware node and its homing action, not list_devices alone.

DDS matches each service on its own; a hardware node process just started
may answer list_devices while activate_devices is still unseen by the
gateway (measured: the homing action or sim_control late in 6 of 10 starts).
A control application that connected on "device list received" then had its
first Activate Motor answered ABORT (CI of 007131e). Here a stand-in hardware
node offers every service but activate_devices and no action at first: the
gateway must not ask list_devices until the rest appears, and says once
what it is waiting for.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest

rclpy = pytest.importorskip("rclpy")

from bsal_interfaces.action import HomeSteering  # noqa: E402, I100 - after importorskip
from bsal_interfaces.msg import DeviceInfo  # noqa: E402
from bsal_interfaces.srv import (ActivateDevices, ClearEncoders, GetDeviceStates,  # noqa: E402
                                 ListDevices, RenewLease, Reset, SetMotors, SetSonarTiming,
                                 SimControl)
from rclpy.action import ActionServer  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from bsal_ros.nodes import rci_gateway  # noqa: E402
from bsal_ros.nodes.rci_gateway import RciGatewayNode  # noqa: E402

pytestmark = pytest.mark.ros

#: s the gateway is watched while a service is missing: its discovery loop
#: polls every 0.1 s, so without the gate it would have asked many times
WATCH_S = 1.5

SERVICES = {"reset": Reset, "set_motors": SetMotors, "clear_encoders": ClearEncoders,
            "set_sonar_timing": SetSonarTiming, "get_device_states": GetDeviceStates,
            "sim_control": SimControl, "renew_lease": RenewLease}


def wait(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_the_device_list_is_asked_only_once_every_service_is_discovered(
        ros_context, capfd, monkeypatch):
    monkeypatch.setattr(rci_gateway, "PARTIAL_WARN_S", 0.5)
    ns = "/disc_" + uuid.uuid4().hex[:8]
    asked = []

    def list_devices(req, resp):
        asked.append(time.monotonic())
        resp.devices = [DeviceInfo(device_class="dc_motor", id=0)]
        return resp

    # the stand-in hardware node, without activate_devices and home_steering
    partial = rclpy.create_node("partial_hardware", namespace=ns, context=ros_context)
    partial.create_service(ListDevices, "list_devices", list_devices)
    for name, srv in SERVICES.items():
        partial.create_service(srv, name, lambda req, resp: resp)
    gw = RciGatewayNode(context=ros_context, namespace=ns,
                        parameter_overrides=[Parameter("port", value=0)])
    ex = SingleThreadedExecutor(context=ros_context)
    ex.add_node(partial)
    ex.add_node(gw)
    spinner = threading.Thread(target=ex.spin, daemon=True)
    spinner.start()
    rest = None
    try:
        gw.start()
        wait(lambda: gw.robot.cli["list"].service_is_ready(), "list_devices discovered")
        wait(lambda: gw.robot.cli["reset"].service_is_ready(), "reset discovered")
        time.sleep(WATCH_S)
        assert not asked, "list_devices asked while activate_devices is not discovered"
        assert not gw.robot.device_list_known
        # named once, with what is missing, after PARTIAL_WARN_S
        warnings = [ln for ln in capfd.readouterr().err.splitlines() if "seen in part" in ln]
        assert len(warnings) == 1, warnings
        assert f"not discovered: {ns}/activate_devices, {ns}/home_steering " in warnings[0]

        # the rest of the hardware node, built whole before it is spun
        rest = rclpy.create_node("rest_of_hardware", namespace=ns, context=ros_context)
        rest.create_service(ActivateDevices, "activate_devices", lambda req, resp: resp)
        ActionServer(rest, HomeSteering, "home_steering", lambda handle: HomeSteering.Result())
        ex.add_node(rest)
        wait(lambda: gw.robot.device_list_known, "the device list")
        assert asked
        assert gw.robot.device_ids("dc_motor") == frozenset({0})
    finally:
        gw.stop_serving()
        ex.shutdown()
        spinner.join(5.0)
        gw.destroy_node()
        partial.destroy_node()
        if rest is not None:
            rest.destroy_node()
