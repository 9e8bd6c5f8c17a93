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

"""Fault injection through the node: diagnostics levels with the errno, a
refused command with the reason, recovery by itself, the node keeps running."""
import errno

import pytest

pytest.importorskip("rclpy")

from bsal_interfaces.msg import DeviceStateArray, MotorCommand, Result  # noqa: E402, I100
from bsal_interfaces.srv import SetMotors, SimControl  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from sensor_msgs.msg import Range  # noqa: E402

from hardware_node_helpers import wait_for  # noqa: E402

pytestmark = pytest.mark.ros
NS = "hw_faults_test"


LISTEN = [(DiagnosticArray, "/diagnostics", {}), (DeviceStateArray, "device_states", {"keep": 200}),
          (Range, "sonar_06", {"qos": "sensor"})]


@pytest.fixture(scope="module")
def env(hardware_node_env):
    """The module's hardware node and probe (conftest: hardware node fixtures)."""
    return hardware_node_env


MISSING = DiagnosticStatus(level=b"\xff", name="missing")


def level_of(arr, name):
    """Our node's status ending in name (arrays of other nodes: MISSING)."""
    for s in arr.status:
        if s.name.startswith(f"/{NS}/") and s.name.endswith(name):
            return s
    return MISSING


def sim(p, **kw):
    return p.call(SimControl, "sim_control", SimControl.Request(**kw)).result


def test_missing_board_error_refusal_and_recovery(env):
    p = env.probe
    assert p.wait_msg("/diagnostics",
                      lambda a: level_of(a, "dc_motor 0").level == DiagnosticStatus.OK)
    assert sim(p, command="set_fault", target="drive", fault="missing").code == Result.OK
    p.clear("/diagnostics")
    p.clear("device_states")
    arr = p.wait_msg("/diagnostics",
                     lambda a: level_of(a, "dc_motor 0").level == DiagnosticStatus.ERROR)
    st = level_of(arr, "dc_motor 0")
    assert "ENXIO" in st.message
    assert {kv.key: kv.value for kv in st.values}["errno"] == str(errno.ENXIO)
    assert level_of(arr, "relative_encoder 0").level == DiagnosticStatus.ERROR
    assert level_of(arr, "ultrasonic 0").level == DiagnosticStatus.OK   # other boards fine
    bus = level_of(arr, ": bus")
    assert bus.level == DiagnosticStatus.WARN and "4/5 boards ok" in bus.message
    # device_states carry the cleared ok/up bits and the reason
    ds = p.wait_msg("device_states", lambda a: any(s.device_class == "dc_motor" and not s.up
                                                   for s in a.states))
    s = [s for s in ds.states if s.device_class == "dc_motor"][0]
    assert not s.ok and s.statval & 0x06 == 0 and "ENXIO" in s.fault
    r = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[MotorCommand(id=0, mode=1, value=0.5)])).result
    assert r.code == Result.HARDWARE_FAULT and "ENXIO" in r.message
    assert sim(p, command="clear_faults", target="drive").code == Result.OK
    p.clear("/diagnostics")
    assert p.wait_msg("/diagnostics",
                      lambda a: level_of(a, "dc_motor 0").level == DiagnosticStatus.OK)
    r = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[MotorCommand(id=0, mode=1, value=0.0)])).result
    assert r.code == Result.OK


def test_stuck_board_goes_error_then_recovers(env):
    p = env.probe
    assert sim(p, command="set_fault", target="sonar_b", fault="stuck").code == Result.OK
    p.clear("/diagnostics")
    arr = p.wait_msg("/diagnostics",
                     lambda a: level_of(a, "ultrasonic 6").level == DiagnosticStatus.ERROR)
    assert "stuck" in level_of(arr, "ultrasonic 6").message
    assert sim(p, command="clear_faults", target="").code == Result.OK
    p.clear("/diagnostics")
    assert p.wait_msg("/diagnostics",
                      lambda a: level_of(a, "ultrasonic 6").level == DiagnosticStatus.OK)
    p.clear("sonar_06")
    assert p.wait_msg("sonar_06") is not None          # data flows again


def test_error_rate_keeps_data_flowing(env):
    p = env.probe
    assert sim(p, command="set_fault", target="sonar_b", fault="error_rate",
               values=[0.3]).code == Result.OK
    p.clear("sonar_06")
    assert wait_for(lambda: len(p.msgs["sonar_06"]) >= 5)
    assert env.node.robot.boards["sonar_b"].transfers_retried > 0
    sim(p, command="clear_faults", target="sonar_b")


def test_stale_when_polling_stops(env):
    p = env.probe
    env.node.poller.stop()
    p.clear("/diagnostics")
    try:
        arr = p.wait_msg("/diagnostics",
                         lambda a: level_of(a, "accelerometer 0").level == DiagnosticStatus.STALE)
        assert "no data" in level_of(arr, "accelerometer 0").message
    finally:
        env.node.poller.start()
        p.clear("/diagnostics")
    assert p.wait_msg("/diagnostics",
                      lambda a: level_of(a, "accelerometer 0").level == DiagnosticStatus.OK)
