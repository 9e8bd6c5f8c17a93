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

"""The shared record and result, and their one converter to the ROS message."""
import math

import pytest

from bsal_ros.core import DeviceState, Result, result as core_result


def test_result_ok_and_reason():
    assert Result().ok and str(Result()) == "OK"
    r = Result(Result.REFUSED, "steering homing")
    assert not r.ok and str(r) == "REFUSED: steering homing"


def test_core_imports_nothing_from_ros():
    import os
    import subprocess
    import sys
    code = ("import sys, bsal_ros.core; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('rclpy', 'bsal_interfaces', 'socket', 'asyncio')]; print(bad)")
    # without make test's coverage.py, which imports socket itself
    env = {k: v for k, v in os.environ.items()
           if k not in ("COVERAGE_PROCESS_START", "BSAL_COVERAGE_RCFILE")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)
    assert out.stdout.strip() == "[]"


@pytest.mark.ros
def test_result_codes_equal_the_message_constants():
    from bsal_interfaces.msg import Result as ResultMsg
    for code, name in core_result.CODE_NAMES.items():
        assert getattr(ResultMsg, name) == code


@pytest.mark.ros
def test_state_round_trips_through_the_message():
    from bsal_ros.nodes.device_state_msg import from_msg, to_msg
    s = DeviceState("pservo_motor", 0, on=True, up=True, ok=False, fault="EIO after 3 retries",
                    stamp=1234.5, statval=0x1234507, delay_us=5000, range_m=0.8575,
                    d_count=-12, d_statval=0x1200007, count=-300, position=-1.25,
                    accel_g=0.5, speedval=0x8123, duty_mode=True, speed=-12.5,
                    mposval=0x00812345, motor_position=0.36, homed=True, homing=False)
    back = from_msg(to_msg(s, "steer_link"))
    assert back == s


@pytest.mark.ros
def test_out_of_range_values_clamp_never_wrap():
    from bsal_ros.nodes.device_state_msg import to_msg
    m = to_msg(DeviceState("relative_encoder", 70000, d_count=40000, count=-40000,
                           delay_us=-5, statval=1 << 40))
    assert (m.id, m.d_count, m.count, m.delay_us, m.statval) == (0xFFFF, 32767, -32768, 0,
                                                                 0xFFFFFFFF)


@pytest.mark.ros
def test_never_read_is_the_zero_stamp():
    from bsal_ros.nodes.device_state_msg import from_msg, to_msg
    m = to_msg(DeviceState("ultrasonic", 3))
    assert (m.header.stamp.sec, m.header.stamp.nanosec) == (0, 0)
    assert from_msg(m).stamp is None
    assert math.isinf(from_msg(m).range_m)


def test_units_are_written_once_and_agree():
    from bsal_ros.core import units as U
    assert U.delay_to_range(0) == math.inf and U.delay_to_range(-3) == math.inf
    assert U.delay_to_range(2000) == pytest.approx(0.343)
    for r in (0.05, 0.343, 1.0, 4.47, 10.0):
        assert U.delay_to_range(U.range_to_delay_us(r)) == pytest.approx(r, abs=2e-4)
    assert U.counts_to_angle(1024, 4096) == pytest.approx(math.pi / 2)
    assert U.angle_to_counts(math.pi / 2, 4096) == 1024
    assert U.wrap_angle(3 * math.pi) == pytest.approx(-math.pi)
    for yaw in (-3.0, -0.5, 0.0, 0.5, 3.0):
        assert U.quaternion_to_yaw(*U.yaw_to_quaternion(yaw)) == pytest.approx(yaw)
