"""RCI wire tables (seed 001 4.6-4.8): the sub-codes each packet accepts,
the item layouts of commands, inquiries and replies, and the command bytes.
Spec tables shared by the encoder and the decoder."""

from __future__ import annotations

from ._items import Layout
from .constants import (CapInquiry, CapReply, CStRpStatus, GetMotorStatus, GetSensorStatus,
                        MotorCommandCode, MotorType, RciCode, SensorCommandCode, SensorType,
                        TermCode)
from .rci_packets import (AbsEncoderData, AccelData, MotorCommandKind, MotorData,
                          RelEncoderData, StatusData, UltrasonicData)

# =============================================================== value domains
MOTOR_SUBS = {int(m): m for m in MotorType}
SENSOR_SUBS = {int(s): s for s in SensorType}
SET_SENSOR_SUBS = {int(SensorType.ULTRASONIC): SensorType.ULTRASONIC,
                int(SensorType.RELENCODER): SensorType.RELENCODER}
SUB_CODES = {RciCode.CAcMt: MOTOR_SUBS, RciCode.CStMt: MOTOR_SUBS, RciCode.CGtMtIq: MOTOR_SUBS,
         RciCode.CGtMtRp: MOTOR_SUBS, RciCode.CAcSn: SENSOR_SUBS, RciCode.CStSn: SET_SENSOR_SUBS,
         RciCode.CGtSnIq: SENSOR_SUBS, RciCode.CGtSnRp: SENSOR_SUBS}
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

MOTOR_CMD_BYTE = {(MotorType.DC, MotorCommandKind.SPVAL): MotorCommandCode.DC_SPVAL,
                   (MotorType.PSERVO, MotorCommandKind.SPVAL): MotorCommandCode.PSERVO_SPVAL,
                   (MotorType.PSERVO, MotorCommandKind.RESET): MotorCommandCode.PSERVO_RESET}
MOTOR_CMD_KIND = {(int(m), int(b)): k for (m, k), b in MOTOR_CMD_BYTE.items()}
SENSOR_CMD = {(SensorType.RELENCODER, SensorCommandCode.RELENCODER_CLEAR): "",
               (SensorType.ULTRASONIC, SensorCommandCode.ULTRASONIC_ORDER): "B",
               (SensorType.ULTRASONIC, SensorCommandCode.ULTRASONIC_TIMING): "H"}
SENSOR_CMD_BY_BYTE = {(int(s), int(c)): (c, f) for (s, c), f in SENSOR_CMD.items()}
