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

"""RCI wire tables (seed 001 4.6-4.8): the sub-code domains, the item
layouts of commands, inquiries and replies, and the command bytes. Which
packet uses which is declared per code in :mod:`.rci_commands`."""

from __future__ import annotations

from typing import NamedTuple

# _items and _stream are private to this package: its codecs share them
from ._items import Layout
from .constants import (CapInquiry, CapReply, CStRpStatus, GetMotorStatus, GetSensorStatus,
                        MotorCommandCode, MotorType, RciCode, SensorCommandCode, SensorType,
                        TermCode)
from .rci_packets import (AbsEncoderData, AccelData, MotorCommand, MotorCommandKind, MotorData,
                          RelEncoderData, SensorCommand, StatusData, UltrasonicData)

# =============================================================== value domains
MOTOR_SUBS = {int(m): m for m in MotorType}
SENSOR_SUBS = {int(s): s for s in SensorType}
SET_SENSOR_SUBS = {int(SensorType.ULTRASONIC): SensorType.ULTRASONIC,
                   int(SensorType.RELENCODER): SensorType.RELENCODER}
CSTRP_STATUS = {int(s): s for s in CStRpStatus}
TERM_CODES = {int(t): t for t in TermCode}
INQ_TYPES = {int(c): c for c in CapInquiry}
CAP_REPLIES = {int(c): c for c in CapReply}

L_ACTIVATE = Layout("B", allowed=(0, 1))
L_MOTOR_INQUIRY = Layout("B", allowed=tuple(int(s) for s in GetMotorStatus))
L_SENSOR_INQUIRY = Layout("B", allowed=tuple(int(s) for s in GetSensorStatus))
L_STATUS = Layout("I", "named", StatusData)
L_MOTOR_DC = Layout("H", "named_pad", MotorData)
L_MOTOR_PSERVO = Layout("HI", "named", MotorData)
SENSOR_DATA = {SensorType.ULTRASONIC: Layout("H", "named", UltrasonicData),
               SensorType.RELENCODER: Layout("hh", "named", RelEncoderData),
               SensorType.ABSENCODER: Layout("h", "named", AbsEncoderData),
               SensorType.ACCEL: Layout("f", "named", AccelData)}
SENSOR_DATA_TYPE = {lay.cls: s for s, lay in SENSOR_DATA.items()}

# (sub, status) -> Layout of reply items
MOTOR_REPLY = {}
SENSOR_REPLY = {}
for _m in MotorType:
    MOTOR_REPLY[(_m, GetMotorStatus.STATUS)] = L_STATUS
    MOTOR_REPLY[(_m, GetMotorStatus.DATA)] = L_MOTOR_DC if _m == MotorType.DC else L_MOTOR_PSERVO
for _s in SensorType:
    SENSOR_REPLY[(_s, GetSensorStatus.STATUS)] = L_STATUS
    SENSOR_REPLY[(_s, GetSensorStatus.DATA)] = SENSOR_DATA[_s]
#: the reply codes and their (sub, status) -> Layout tables (a kind registered
#: later adds its rows: wire_kinds.register_rci_sensor)
REPLY_LAYOUTS = {RciCode.CGtMtRp: MOTOR_REPLY, RciCode.CGtSnRp: SENSOR_REPLY}


class CommandItems(NamedTuple):
    """How the items of a Set packet (CStMt, CStSn) go on the wire: a command
    byte, then a payload of struct format ``fmt`` ("" for none)."""

    what: str            # "motor" or "sensor", for error messages
    item_type: type      # MotorCommand or SensorCommand (kind, payload value)
    by_kind: dict        # (sub-code, kind) -> (command byte, fmt)
    by_byte: dict        # (sub-code, command byte) -> (kind, fmt)


def _command_items(what: str, item_type: type, table: dict) -> CommandItems:
    by_byte = {(int(sub), int(byte)): (kind, fmt) for (sub, kind), (byte, fmt) in table.items()}
    return CommandItems(what, item_type, table, by_byte)


#: command items of CStMt (001 4.6.8)
MOTOR_COMMANDS = _command_items("motor", MotorCommand, {
    (MotorType.DC, MotorCommandKind.SPVAL): (MotorCommandCode.DC_SPVAL, "H"),
    (MotorType.PSERVO, MotorCommandKind.SPVAL): (MotorCommandCode.PSERVO_SPVAL, "H"),
    (MotorType.PSERVO, MotorCommandKind.RESET): (MotorCommandCode.PSERVO_RESET, "")})
#: command items of CStSn (001 4.6.12; ORDER and TIMING payloads are ours)
SENSOR_COMMANDS = _command_items("sensor", SensorCommand, {
    (SensorType.RELENCODER, SensorCommandCode.RELENCODER_CLEAR):
        (SensorCommandCode.RELENCODER_CLEAR, ""),
    (SensorType.ULTRASONIC, SensorCommandCode.ULTRASONIC_ORDER):
        (SensorCommandCode.ULTRASONIC_ORDER, "B"),
    (SensorType.ULTRASONIC, SensorCommandCode.ULTRASONIC_TIMING):
        (SensorCommandCode.ULTRASONIC_TIMING, "H")})
