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

from .base import Health, Level, MotorKind, NoTopic, PolledBoardType, RciSensor, RdiItem, \
    SensorKind
from .convert import clamp_i16, fmt_statval, u32, wrap_i16
from .registry import register_board_type, register_kind
from ..protocol.constants import RdiCode, RdiSensorType, SensorType
from ..protocol.rci_tables import SENSOR_DATA
from ..protocol.rdi import RelEncoderReading
from ..protocol.wire_kinds import rdi_item_layout

#: the state fields every motor kind fills
MOTOR_FIELDS = ("speedval", "duty_mode", "speed", "stalled", "stop_pending", "watchdog_stopped")


class DriveMotorKind(MotorKind):
    """A motor commanded by speedval (the DC drive motor; the pseudo-servo's base)."""

    def diagnostics(self, state) -> dict:
        """The speed a motor was commanded, raw and in its unit."""
        return {"speedval": f"{state.speedval:#06x}",
                "speed": f"{state.speed:.3f}" + (" %" if state.duty_mode else " rad/s")}


class DcMotorKind(DriveMotorKind):
    """The drive motor: the one cmd_vel drives."""

    def health(self, state, ctx) -> Health | None:
        """A motor's warnings, then WARN while it is on and cmd_vel holds the
        wheel (the steering not homed, or homing)."""
        own = super().health(state, ctx)
        if own is None and state.on and ctx.drive_held:
            return Health(Level.WARN, f"cmd_vel holds the wheel: {ctx.drive_held}")
        return own


class RelativeEncoderKind(NoTopic, SensorKind):
    """The drive wheel's relative encoder (on ``encoders`` with its board's
    motor: nodes.hardware_publishers, no topic of its own)."""

    def diagnostics(self, state) -> dict:
        """The count and the position."""
        return {"count": state.count, "position_rad": f"{state.position:.4f}"}

    def rdi_reading(self, state) -> RelEncoderReading:
        """The count difference, its statval, the count and statval."""
        return RelEncoderReading(clamp_i16(state.d_count), u32(state.d_statval),
                                 clamp_i16(state.count), u32(state.statval))

    def viewer_text(self, reading) -> str:
        """The count difference, its statval and the count."""
        return (f"d_count={reading.d_count} d_st={fmt_statval(reading.d_status)} "
                f"count={reading.count}")

    def viewer_line(self, index: int, reading) -> str:
        """The count and its difference."""
        return f"rel enc {index}: {reading.count} (d {reading.d_count})"


register_board_type(PolledBoardType(
    name="dc_motor",
    board="bsal_ros.hardware.motor_boards:DcMotorBoard",
    sim_board="bsal_ros.hardware.sim_motors:VirtualDcMotorBoard",
    carries=("dc_motor", "relative_encoder"),
    motor=True))

register_kind(RelativeEncoderKind(
    name="relative_encoder",
    device="bsal_ros.hardware.devices:RelativeEncoder",
    fields=("d_count", "d_statval", "count", "position", "measured_speed"),
    extra_fields=(),
    data_fields=("d_count", "count", "position"),
    status_fields=("statval", "d_statval"),
    rci=RciSensor(sub=SensorType.RELENCODER, layout=SENSOR_DATA[SensorType.RELENCODER],
                  fields=(("d_count", wrap_i16), ("count", wrap_i16))),
    rdi=RdiItem(code=RdiCode.Sn, sub=RdiSensorType.RELENCODER,
                layout=rdi_item_layout(RdiCode.Sn, RdiSensorType.RELENCODER)),
    diagnostics_group="Encoders",
    topic=None,
    viewer_label="relenc"))

register_kind(DcMotorKind(
    name="dc_motor",
    device="bsal_ros.hardware.devices:DcMotor",
    fields=MOTOR_FIELDS + ("measured_speed",),
    extra_fields=(),
    data_fields=("speedval",),
    status_fields=("statval",),
    rci=None,          # motors answer CGtMtIq (rci.handlers_motor)
    rdi=None,          # RDI-Mt DC, built by rdi.state with the pseudo-servo ids
    diagnostics_group="Motors",
    topic=None,        # motor_states, joint_states, odom (nodes.hardware_publishers)
    viewer_label=None))      # the viewer's motor rows
