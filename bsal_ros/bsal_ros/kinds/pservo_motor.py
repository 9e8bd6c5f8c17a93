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

from .convert import check_rates, clamp_i16, scale_poll_rates, u32, wrap_i16
from .dc_motor import motor_diagnostics, MOTOR_FIELDS
from .registry import (BoardType, DeviceKind, RciSensor, RdiItem, register_board_type,
                       register_kind, ViewerSpec)
from ..protocol.constants import RdiCode, RdiSensorType, SensorType
from ..protocol.rci_tables import SENSOR_DATA
from ..protocol.rdi import AbsEncoderReading
from ..protocol.wire_kinds import rdi_item_layout

register_board_type(BoardType(
    name="pservo_motor",
    board="bsal_ros.hardware.motor_boards:PservoBoard",
    sim_board="bsal_ros.hardware.sim_motors:VirtualPservoBoard",
    carries=("pservo_motor", "absolute_encoder"),
    motor=True,
    validate=check_rates,
    rates=scale_poll_rates))

register_kind(DeviceKind(
    name="absolute_encoder",
    device="bsal_ros.hardware.devices:AbsoluteEncoder",
    motor=False,
    fields=("count", "position"),
    extra_fields=(),
    data_fields=("count", "position"),
    status_fields=("statval",),
    rci=RciSensor(sub=SensorType.ABSENCODER, layout=SENSOR_DATA[SensorType.ABSENCODER],
                  fields=(("count", wrap_i16),)),
    rdi=RdiItem(code=RdiCode.Sn, sub=RdiSensorType.ABSENCODER,
                layout=rdi_item_layout(RdiCode.Sn, RdiSensorType.ABSENCODER),
                reading=lambda d: AbsEncoderReading(clamp_i16(d.count), u32(d.statval))),
    diagnostics=lambda s: {"count": s.count, "position_rad": f"{s.position:.4f}"},
    diagnostics_group="Encoders",
    topic=None,        # on encoders with its board's motor (nodes.hardware_publishers)
    viewer=ViewerSpec(label="absenc", text=lambda d: f"count={d.count}",
                      line=lambda i, d: f"abs enc {i}: {d.count}")))

register_kind(DeviceKind(
    name="pservo_motor",
    device="bsal_ros.hardware.devices:PservoMotor",
    motor=True,
    fields=MOTOR_FIELDS + ("mposval", "motor_position", "homed", "homing", "phase"),
    extra_fields=(),
    data_fields=("speedval", "mposval", "motor_position"),
    status_fields=("statval",),
    rci=None,          # motors answer CGtMtIq (rci.handlers_motor)
    rdi=None,          # RDI-Mt DC (offset ids) and RDI-Ac STEER, built by rdi.state
    diagnostics=lambda s: {**motor_diagnostics(s), "homed": s.homed, "homing": s.homing,
                           "phase": s.phase},
    diagnostics_group="Motors",
    topic=None,        # motor_states, joint_states (nodes.hardware_publishers)
    viewer=None))      # the viewer's motor and steering rows
