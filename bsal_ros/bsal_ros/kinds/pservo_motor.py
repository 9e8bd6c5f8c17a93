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
"""The steering pseudo-servo board and its two device kinds: the motor
(speed or position mode, homing) and the steering's absolute encoder."""

from __future__ import annotations

from .base import NoTopic, PolledBoardType, RciSensor, RdiItem, SensorKind
from .convert import clamp_i16, u32, wrap_i16
from .dc_motor import DriveMotorKind, MOTOR_FIELDS
from .registry import register_board_type, register_kind
from ..protocol.constants import RdiCode, RdiSensorType, SensorType
from ..protocol.rci_tables import SENSOR_DATA
from ..protocol.rdi import AbsEncoderReading
from ..protocol.wire_kinds import rdi_item_layout


class PservoMotorKind(DriveMotorKind):
    """The steering motor: speed or position mode, homing."""

    def diagnostics(self, state) -> dict:
        """The commanded speed, and whether it is homed or homing, and its phase."""
        return {**super().diagnostics(state), "homed": state.homed, "homing": state.homing,
                "phase": state.phase}


class AbsoluteEncoderKind(NoTopic, SensorKind):
    """The steering's absolute encoder (on ``encoders`` with its board's
    motor: nodes.hardware_publishers, no topic of its own)."""

    def diagnostics(self, state) -> dict:
        """The count and the position."""
        return {"count": state.count, "position_rad": f"{state.position:.4f}"}

    def rdi_reading(self, state) -> AbsEncoderReading:
        """The count and statval."""
        return AbsEncoderReading(clamp_i16(state.count), u32(state.statval))

    def viewer_text(self, reading) -> str:
        """The count."""
        return f"count={reading.count}"

    def viewer_line(self, index: int, reading) -> str:
        """The count."""
        return f"abs enc {index}: {reading.count}"


register_board_type(PolledBoardType(
    name="pservo_motor",
    board="bsal_ros.hardware.motor_boards:PservoBoard",
    sim_board="bsal_ros.hardware.sim_motors:VirtualPservoBoard",
    carries=("pservo_motor", "absolute_encoder"),
    motor=True))

register_kind(AbsoluteEncoderKind(
    name="absolute_encoder",
    device="bsal_ros.hardware.devices:AbsoluteEncoder",
    fields=("count", "position"),
    extra_fields=(),
    data_fields=("count", "position"),
    status_fields=("statval",),
    rci=RciSensor(sub=SensorType.ABSENCODER, layout=SENSOR_DATA[SensorType.ABSENCODER],
                  fields=(("count", wrap_i16),)),
    rdi=RdiItem(code=RdiCode.Sn, sub=RdiSensorType.ABSENCODER,
                layout=rdi_item_layout(RdiCode.Sn, RdiSensorType.ABSENCODER)),
    diagnostics_group="Encoders",
    topic=None,
    viewer_label="absenc"))

register_kind(PservoMotorKind(
    name="pservo_motor",
    device="bsal_ros.hardware.devices:PservoMotor",
    fields=MOTOR_FIELDS + ("mposval", "motor_position", "homed", "homing", "phase"),
    extra_fields=(),
    data_fields=("speedval", "mposval", "motor_position"),
    status_fields=("statval",),
    rci=None,          # motors answer CGtMtIq (rci.handlers_motor)
    rdi=None,          # RDI-Mt DC (offset ids) and RDI-Ac STEER, built by rdi.state
    diagnostics_group="Motors",
    topic=None,        # motor_states, joint_states (nodes.hardware_publishers)
    viewer_label=None))      # the viewer's motor and steering rows
