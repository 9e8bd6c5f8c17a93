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
"""The one-axis accelerometer board and its device kind (g along base_link x)."""

from __future__ import annotations

from .base import PolledBoardType, RciSensor, RdiItem, RosTopic, SensorKind
from .convert import f32, u32
from .registry import register_board_type, register_kind
from ..core.units import G
from ..protocol.constants import RdiCode, RdiSensorType, SensorType
from ..protocol.rci_tables import SENSOR_DATA
from ..protocol.rdi import AccelReading
from ..protocol.wire_kinds import rdi_item_layout


class AccelerometerKind(SensorKind):
    """The one-axis accelerometer: g along base_link x, a sensor_msgs/Imu."""

    def diagnostics(self, state) -> dict:
        """The acceleration in g."""
        return {"accel_g": f"{state.accel_g:.3f}"}

    def rdi_reading(self, state) -> AccelReading:
        """The acceleration (float32) and statval."""
        return AccelReading(f32(state.accel_g), u32(state.statval))

    def fill(self, msg, state, ctx) -> None:
        """A sensor_msgs/Imu: x acceleration only (no orientation, no gyro; y
        and z unmeasured), its variance the simulator's noise."""
        msg.header.stamp = ctx.stamp
        msg.header.frame_id = ctx.frame
        msg.orientation_covariance[0] = -1.0       # no orientation
        msg.angular_velocity_covariance[0] = -1.0  # no gyro
        msg.linear_acceleration.x = float(state.accel_g) * G
        noise = float(ctx.desc["sim"]["accel_noise_g"]) * G
        cov = [0.0] * 9
        cov[0], cov[4], cov[8] = max(noise * noise, 1e-6), 1e6, 1e6  # y, z not measured
        msg.linear_acceleration_covariance = cov

    def viewer_text(self, reading) -> str:
        """The acceleration in g."""
        return f"accel={reading.accel:.4f}g"

    def viewer_line(self, index: int, reading) -> str:
        """The acceleration in g."""
        return f"accel {index}: {reading.accel:+.3f} g"


register_board_type(PolledBoardType(
    name="accelerometer",
    board="bsal_ros.hardware.boards:AccelBoard",
    sim_board="bsal_ros.hardware.sim_boards:VirtualAccelBoard",
    carries=("accelerometer",),
    motor=False))

register_kind(AccelerometerKind(
    name="accelerometer",
    device="bsal_ros.hardware.devices:Accelerometer",
    fields=("accel_g",),
    extra_fields=(),
    data_fields=("accel_g",),
    status_fields=("statval",),
    rci=RciSensor(sub=SensorType.ACCEL, layout=SENSOR_DATA[SensorType.ACCEL],
                  fields=(("accel_g", float),)),
    rdi=RdiItem(code=RdiCode.Sn, sub=RdiSensorType.ACCEL,
                layout=rdi_item_layout(RdiCode.Sn, RdiSensorType.ACCEL)),
    diagnostics_group="Accelerometer",
    topic=RosTopic(name="imu", msg="sensor_msgs.msg:Imu", qos="sensor"),
    viewer_label="accel"))
