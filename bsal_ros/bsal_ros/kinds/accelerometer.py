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

from .convert import check_rates, f32, scale_poll_rates, u32
from .registry import (BoardType, DeviceKind, RciSensor, RdiItem, register_board_type,
                       register_kind, RosTopic, ViewerSpec)
from ..core.units import G
from ..protocol.constants import RdiCode, RdiSensorType, SensorType
from ..protocol.rci_tables import SENSOR_DATA
from ..protocol.rdi import AccelReading
from ..protocol.wire_kinds import rdi_item_layout


def fill_imu(m, s, ctx) -> None:
    """A sensor_msgs/Imu of the accelerometer: x acceleration only (no
    orientation, no gyro; y and z unmeasured), its variance the simulator's noise."""
    m.header.stamp = ctx.stamp
    m.header.frame_id = ctx.frame
    m.orientation_covariance[0] = -1.0       # no orientation
    m.angular_velocity_covariance[0] = -1.0  # no gyro
    m.linear_acceleration.x = float(s.accel_g) * G
    noise = float(ctx.desc["sim"]["accel_noise_g"]) * G
    cov = [0.0] * 9
    cov[0], cov[4], cov[8] = max(noise * noise, 1e-6), 1e6, 1e6  # y, z not measured
    m.linear_acceleration_covariance = cov


register_board_type(BoardType(
    name="accelerometer",
    board="bsal_ros.hardware.boards:AccelBoard",
    sim_board="bsal_ros.hardware.sim_boards:VirtualAccelBoard",
    carries=("accelerometer",),
    motor=False,
    validate=check_rates,
    rates=scale_poll_rates))

register_kind(DeviceKind(
    name="accelerometer",
    device="bsal_ros.hardware.devices:Accelerometer",
    motor=False,
    fields=("accel_g",),
    extra_fields=(),
    data_fields=("accel_g",),
    status_fields=("statval",),
    rci=RciSensor(sub=SensorType.ACCEL, layout=SENSOR_DATA[SensorType.ACCEL],
                  fields=(("accel_g", float),)),
    rdi=RdiItem(code=RdiCode.Sn, sub=RdiSensorType.ACCEL,
                layout=rdi_item_layout(RdiCode.Sn, RdiSensorType.ACCEL),
                reading=lambda d: AccelReading(f32(d.accel_g), u32(d.statval))),
    diagnostics=lambda s: {"accel_g": f"{s.accel_g:.3f}"},
    diagnostics_group="Accelerometer",
    topic=RosTopic(name="imu", msg="sensor_msgs.msg:Imu", qos="sensor", fill=fill_imu),
    viewer=ViewerSpec(label="accel", text=lambda d: f"accel={d.accel:.4f}g",
                      line=lambda i, d: f"accel {i}: {d.accel:+.3f} g")))
