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

"""Every constant of seed 001 sections 4.8 (RCI) and 5.10 (RDI).

Two spellings are provided for each constant:

* enums (``RciCode.CStMt``, ``CStRpStatus.ABORT`` ...), convenient in code and
  readable in ``repr``;
* flat module constants with the spec's own names (``RCI_CSTMT``,
  ``RCI_CSTRP_ABORT``, ``RDI_SENSOR_ULTRASONIC`` ...), for grepping against
  the book and the legacy C++ sources.

Known slips of the book are resolved with aliases that carry the same value:

* Activate Sensor 0x0210 is written both ``RCI-CAcSn`` and ``RCI-CAtSn``:
  ``RciCode.CAcSn`` and ``RciCode.CAtSn`` (and ``RCI_CACSN``/``RCI_CATSN``).
* Get Motor status codes are written both ``RCI_CGTMTST_*`` and
  ``RCI_CGTMSTST_*`` (and ``RCI_CGTMST_*``): all three spellings exist.
* The example program uses ``MOTOR_REVERSE`` where the API text says
  ``MOTOR_BACKWARD``: ``Direction.MOTOR_REVERSE`` is an alias.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag

__all__ = [
    "Form", "RciCode", "RciFlag", "GetMotorStatus", "GetSensorStatus", "CStRpStatus",
    "TermCode", "CapInquiry", "CapReply", "SensorType", "SensorCommandCode", "MotorType",
    "MotorCommandCode", "RdiCode", "RdiFlag", "RdiSensorType", "RdiMotorType",
    "RdiActuatorType", "RdiOrientType", "RdiMiscType", "Direction", "MposType", "MposUnit",
    "RCI_VERSION_MAJOR", "RCI_VERSION_MINOR",
]

#: RCI protocol version spoken by this implementation (docs/PROTOCOL.md).
RCI_VERSION_MAJOR = 0
RCI_VERSION_MINOR = 3


class Form(IntEnum):
    """Packet form of the id-carrying packets (001 sections 4.4 and 5.3)."""

    GENERAL = 0
    POLY = 1
    GROUP = 2


# --------------------------------------------------------------------- RCI 4.8.1
class RciCode(IntEnum):
    """RCI packet codes (base codes, flag bits cleared)."""

    IIId = 0x0010     # Identification
    IInCp = 0x0011    # Initialization Completed (printed "RCI-IIInCp" in 4.8.1)
    ICaIq = 0x0012    # Capability Inquiry
    ICaRp = 0x0013    # Capability Reply
    CStIq = 0x0100    # Status Inquiry
    CStRp = 0x0101    # Status Reply
    CSvTm = 0x0102    # Server Termination
    CCnAc = 0x0103    # Control Acknowledge
    CRs = 0x0104      # Reset
    CBsTmIq = 0x0106  # Base Time Inquiry
    CBsTm = 0x0107    # Base Time
    CAcMt = 0x0200    # Activate Motor
    CStMt = 0x0201    # Set Motor
    CGtMtIq = 0x0202  # Get Motor Inquiry
    CGtMtRp = 0x0203  # Get Motor Reply
    CAcSn = 0x0210    # Activate Sensor
    CAtSn = 0x0210    # alias: the book's other spelling of Activate Sensor
    CStSn = 0x0211    # Set Sensor
    CGtSnIq = 0x0212  # Get Sensor Inquiry
    CGtSnRp = 0x0213  # Get Sensor Reply


class RciFlag(IntFlag):
    """Bits of the RCI ``id_code`` field."""

    MULTI = 0x0200    # part of the base code: the command may be poly/group
    RQ_ACK = 0x0800
    POLY = 0x4000
    GROUP = 0x8000


# --------------------------------------------------------------------- RCI 4.8.2
class GetMotorStatus(IntEnum):
    """``status_code`` of RCI-CGtMtIq (RCI_CGTMTST_*)."""

    DATA = 0x01
    STATUS = 0x02
    TIME = 0x03       # listed, never described: answered with CStRp NO_SUPPORT


class GetSensorStatus(IntEnum):
    """``status_code`` of RCI-CGtSnIq (RCI_CGTSNST_*)."""

    DATA = 0x04
    STATUS = 0x05
    TIME = 0x06       # listed, never described: answered with CStRp NO_SUPPORT


class CStRpStatus(IntEnum):
    """``status_resp`` of RCI-CStRp (RCI_CSTRP_*)."""

    UNDEFINED = 0x08
    ABORT = 0x09
    BUSY = 0x0A
    IDLE = 0x0B
    INVALID_ID = 0x0C
    NO_SUPPORT = 0x0D


class TermCode(IntEnum):
    """``term_code`` of RCI-CSvTm (RCI_CSVTM_*)."""

    ACCESS = 0x10
    AUTHENTICATE = 0x11
    EMERGENCY = 0x12
    ERROR = 0x13
    NOACK = 0x14
    USER = 0x15


class CapInquiry(IntEnum):
    """``inq_type`` of RCI-ICaIq (RCI_ICAIQ_*)."""

    ACCESS = 0x18
    SUPPORT = 0x19    # listed, never described: one-byte reply like ACCESS
    VERSION = 0x1A


class CapReply(IntEnum):
    """``reply`` of RCI-ICaRp for ACCESS/SUPPORT inquiries (RCI_ICARP_*)."""

    ERROR = 0x20
    NO_PERMISSION = 0x21
    NO_SUPPORT = 0x22
    PERMISSION = 0x23


class SensorType(IntEnum):
    """RCI sensor subcodes (RCI_SENSOR_*)."""

    ABSENCODER = 0x80
    ACCEL = 0x81
    RELENCODER = 0x82
    ULTRASONIC = 0x83


class SensorCommandCode(IntEnum):
    """Command bytes of RCI-CStSn data."""

    RELENCODER_CLEAR = 0x90
    ULTRASONIC_ORDER = 0x91    # + guint8 firing slot (our extension)
    ULTRASONIC_TIMING = 0x92   # + guint16 firing interval in ms (our extension)


class MotorType(IntEnum):
    """RCI motor subcodes (RCI_MOTOR_*)."""

    DC = 0xC0
    PSERVO = 0xC1


class MotorCommandCode(IntEnum):
    """Command bytes of RCI-CStMt data."""

    DC_SPVAL = 0xD0
    PSERVO_SPVAL = 0xD1
    PSERVO_RESET = 0xD2


# --------------------------------------------------------------------- RDI 5.10
class RdiCode(IntEnum):
    """RDI packet codes (base codes, flag bits cleared)."""

    Sn = 0x0010      # Sensor
    Mt = 0x0020      # Motor
    Ac = 0x0030      # Actuator
    RbOr = 0x0040    # Robot orientation
    Ms = 0x0800      # Misc (written "RDI-Ms" and "RDI-MS" in the book)
    MS = 0x0800      # alias


class RdiFlag(IntFlag):
    """Bits of the RDI ``id_code`` field."""

    POLY = 0x4000
    GROUP = 0x8000


class RdiSensorType(IntEnum):
    """RDI-Sn subcodes."""

    ULTRASONIC = 0x01
    RELENCODER = 0x02
    ABSENCODER = 0x03
    ACCEL = 0x04


class RdiMotorType(IntEnum):
    """RDI-Mt subcodes (the only motor subclass is DC)."""

    DC = 0x01


class RdiActuatorType(IntEnum):
    """RDI-Ac subcodes."""

    STEER = 0x01
    DRIVE = 0x02


class RdiOrientType(IntEnum):
    """RDI-RbOr subcodes (ego-centric and omni-centric orientation)."""

    EGO = 0x01
    OMNI = 0x02


class RdiMiscType(IntEnum):
    """RDI-Ms subcodes."""

    BASETIME = 0x01


# ----------------------------------------------------------- value-type enums
class Direction(IntEnum):
    """Motor direction of the rci-client API (001 section 3.2.5/3.2.6).

    FORWARD = positive rotation (speedval sign bit 0), BACKWARD = negative
    (sign bit 1). ``MOTOR_REVERSE`` (used by the book's example program) is an
    alias of ``MOTOR_BACKWARD``.
    """

    MOTOR_FORWARD = 1
    MOTOR_BACKWARD = -1
    MOTOR_REVERSE = -1


class MposType(IntEnum):
    """mposval type bit (bit 30)."""

    ANGULAR = 0
    LINEAR = 1


class MposUnit(IntEnum):
    """mposval units bit (bit 28): meaning depends on the type."""

    RADIAN = 0      # angular
    DEGREE = 1      # angular
    METRIC = 0      # linear: millimetres
    STANDARD = 1    # linear: tenths of an inch


# Flat spec-spelled constants -------------------------------------------------
RCI_IIID = RciCode.IIId
RCI_IINCP = RciCode.IInCp
RCI_IIINCP = RciCode.IInCp
RCI_ICAIQ = RciCode.ICaIq
RCI_ICARP = RciCode.ICaRp
RCI_CSTIQ = RciCode.CStIq
RCI_CSTRP = RciCode.CStRp
RCI_CSVTM = RciCode.CSvTm
RCI_CCNAC = RciCode.CCnAc
RCI_CRS = RciCode.CRs
RCI_CBSTMIQ = RciCode.CBsTmIq
RCI_CBSTM = RciCode.CBsTm
RCI_CACMT = RciCode.CAcMt
RCI_CSTMT = RciCode.CStMt
RCI_CGTMTIQ = RciCode.CGtMtIq
RCI_CGTMTRP = RciCode.CGtMtRp
RCI_CACSN = RciCode.CAcSn
RCI_CATSN = RciCode.CAcSn
RCI_CSTSN = RciCode.CStSn
RCI_CGTSNIQ = RciCode.CGtSnIq
RCI_CGTSNRP = RciCode.CGtSnRp
RCI_MULTI = 0x0200
RCI_RQ_ACK = 0x0800
RCI_GROUP = 0x8000
RCI_POLY = 0x4000

RCI_CGTMTST_DATA = RCI_CGTMSTST_DATA = RCI_CGTMST_DATA = GetMotorStatus.DATA
RCI_CGTMTST_STATUS = RCI_CGTMSTST_STATUS = RCI_CGTMST_STATUS = GetMotorStatus.STATUS
RCI_CGTMTST_TIME = RCI_CGTMSTST_TIME = RCI_CGTMST_TIME = GetMotorStatus.TIME
RCI_CGTSNST_DATA = GetSensorStatus.DATA
RCI_CGTSNST_STATUS = GetSensorStatus.STATUS
RCI_CGTSNST_TIME = GetSensorStatus.TIME
RCI_CSTRP_UNDEFINED = CStRpStatus.UNDEFINED
RCI_CSTRP_ABORT = CStRpStatus.ABORT
RCI_CSTRP_BUSY = CStRpStatus.BUSY
RCI_CSTRP_IDLE = CStRpStatus.IDLE
RCI_CSTRP_INVALID_ID = CStRpStatus.INVALID_ID
RCI_CSTRP_NO_SUPPORT = CStRpStatus.NO_SUPPORT
RCI_CSVTM_ACCESS = TermCode.ACCESS
RCI_CSVTM_AUTHENTICATE = TermCode.AUTHENTICATE
RCI_CSVTM_EMERGENCY = TermCode.EMERGENCY
RCI_CSVTM_ERROR = TermCode.ERROR
RCI_CSVTM_NOACK = TermCode.NOACK
RCI_CSVTM_USER = TermCode.USER
RCI_ICAIQ_ACCESS = CapInquiry.ACCESS
RCI_ICAIQ_SUPPORT = CapInquiry.SUPPORT
RCI_ICAIQ_VERSION = CapInquiry.VERSION
RCI_ICARP_ERROR = CapReply.ERROR
RCI_ICARP_NO_PERMISSION = CapReply.NO_PERMISSION
RCI_ICARP_NO_SUPPORT = CapReply.NO_SUPPORT
RCI_ICARP_PERMISSION = CapReply.PERMISSION
RCI_SENSOR_ABSENCODER = SensorType.ABSENCODER
RCI_SENSOR_ACCEL = SensorType.ACCEL
RCI_SENSOR_RELENCODER = SensorType.RELENCODER
RCI_SENSOR_ULTRASONIC = SensorType.ULTRASONIC
RCI_SENSOR_RELENCODER_CLEAR = SensorCommandCode.RELENCODER_CLEAR
RCI_SENSOR_ULTRASONIC_ORDER = SensorCommandCode.ULTRASONIC_ORDER
RCI_SENSOR_ULTRASONIC_TIMING = SensorCommandCode.ULTRASONIC_TIMING
RCI_MOTOR_DC = MotorType.DC
RCI_MOTOR_PSERVO = MotorType.PSERVO
RCI_MOTOR_DC_SPVAL = MotorCommandCode.DC_SPVAL
RCI_MOTOR_PSERVO_SPVAL = MotorCommandCode.PSERVO_SPVAL
RCI_MOTOR_PSERVO_RESET = MotorCommandCode.PSERVO_RESET

RDI_SN = RdiCode.Sn
RDI_MT = RdiCode.Mt
RDI_AC = RdiCode.Ac
RDI_RBOR = RdiCode.RbOr
RDI_MS = RdiCode.Ms
RDI_POLY = 0x4000
RDI_GROUP = 0x8000
RDI_SENSOR_ULTRASONIC = RdiSensorType.ULTRASONIC
RDI_SENSOR_RELENCODER = RdiSensorType.RELENCODER
RDI_SENSOR_ABSENCODER = RdiSensorType.ABSENCODER
RDI_SENSOR_ACCEL = RdiSensorType.ACCEL
RDI_MOTOR_DC = RdiMotorType.DC
RDI_ACTUATOR_STEER = RdiActuatorType.STEER
RDI_ACTUATOR_DRIVE = RdiActuatorType.DRIVE
RDI_ORIENT_EGO = RdiOrientType.EGO
RDI_ORIENT_OMNI = RdiOrientType.OMNI
RDI_MISC_BASETIME = RdiMiscType.BASETIME

MOTOR_FORWARD = Direction.MOTOR_FORWARD
MOTOR_BACKWARD = Direction.MOTOR_BACKWARD
MOTOR_REVERSE = Direction.MOTOR_BACKWARD

__all__ += [n for n in list(globals())
            if n.isupper() and (n.startswith(("RCI_", "RDI_", "MOTOR_")))]
