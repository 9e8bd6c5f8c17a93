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
"""The DC drive-motor board and its two device kinds: the motor and the
drive wheel's relative encoder."""

from __future__ import annotations

from .convert import check_rates, clamp_i16, fmt_statval, scale_poll_rates, u32, wrap_i16
from .registry import (BoardType, DeviceKind, RciSensor, RdiItem, register_board_type,
                       register_kind, ViewerSpec)
from ..protocol.constants import RdiCode, RdiSensorType, SensorType
from ..protocol.rci_tables import SENSOR_DATA
from ..protocol.rdi import RelEncoderReading
from ..protocol.wire_kinds import rdi_item_layout

#: the state fields every motor kind fills
MOTOR_FIELDS = ("speedval", "duty_mode", "speed", "stalled", "stop_pending", "watchdog_stopped")


def motor_diagnostics(s) -> dict:
    """The speed a motor was commanded, raw and in its unit."""
    return {"speedval": f"{s.speedval:#06x}",
            "speed": f"{s.speed:.3f}" + (" %" if s.duty_mode else " rad/s")}


register_board_type(BoardType(
    name="dc_motor",
    board="bsal_ros.hardware.motor_boards:DcMotorBoard",
    sim_board="bsal_ros.hardware.sim_motors:VirtualDcMotorBoard",
    carries=("dc_motor", "relative_encoder"),
    motor=True,
    validate=check_rates,
    rates=scale_poll_rates))

register_kind(DeviceKind(
    name="relative_encoder",
    device="bsal_ros.hardware.devices:RelativeEncoder",
    motor=False,
    fields=("d_count", "d_statval", "count", "position", "measured_speed"),
    extra_fields=(),
    data_fields=("d_count", "count", "position"),
    status_fields=("statval", "d_statval"),
    rci=RciSensor(sub=SensorType.RELENCODER, layout=SENSOR_DATA[SensorType.RELENCODER],
                  fields=(("d_count", wrap_i16), ("count", wrap_i16))),
    rdi=RdiItem(code=RdiCode.Sn, sub=RdiSensorType.RELENCODER,
                layout=rdi_item_layout(RdiCode.Sn, RdiSensorType.RELENCODER),
                reading=lambda d: RelEncoderReading(clamp_i16(d.d_count), u32(d.d_statval),
                                                    clamp_i16(d.count), u32(d.statval))),
    diagnostics=lambda s: {"count": s.count, "position_rad": f"{s.position:.4f}"},
    diagnostics_group="Encoders",
    topic=None,        # on encoders with its board's motor (nodes.hardware_publishers)
    viewer=ViewerSpec(label="relenc",
                      text=lambda d: (f"d_count={d.d_count} d_st={fmt_statval(d.d_status)} "
                                      f"count={d.count}"),
                      line=lambda i, d: f"rel enc {i}: {d.count} (d {d.d_count})")))

register_kind(DeviceKind(
    name="dc_motor",
    device="bsal_ros.hardware.devices:DcMotor",
    motor=True,
    fields=MOTOR_FIELDS + ("measured_speed",),
    extra_fields=(),
    data_fields=("speedval",),
    status_fields=("statval",),
    rci=None,          # motors answer CGtMtIq (rci.handlers_motor)
    rdi=None,          # RDI-Mt DC, built by rdi.state with the pseudo-servo ids
    diagnostics=motor_diagnostics,
    diagnostics_group="Motors",
    topic=None,        # motor_states, joint_states, odom (nodes.hardware_publishers)
    viewer=None))      # the viewer's motor rows
