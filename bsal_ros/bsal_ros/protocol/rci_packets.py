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

"""RCI packets and item data types (seed 001 chapter 4). Plain data: which
code each packet has and which side may receive it is declared in
:mod:`.rci_commands`, encoding is :mod:`.rci_encode`, decoding
:mod:`.rci_decode`; :mod:`.rci` is the public face of them all."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple, Union

# _items and _stream are private to this package: its codecs share them
from ._items import IdPacketForms
from .constants import (CStRpStatus, Form, RCI_VERSION_MAJOR, RCI_VERSION_MINOR, RciCode,
                        SensorCommandCode, TermCode)
from .values import Timeval

#: id_code flag bits (001 4.3): acknowledge requested, poly form, group form
FLAG_RQ_ACK, FLAG_POLY, FLAG_GROUP = 0x0800, 0x4000, 0x8000
FLAGS = FLAG_RQ_ACK | FLAG_POLY | FLAG_GROUP
FORM_FLAG = {Form.GENERAL: 0, Form.POLY: FLAG_POLY, Form.GROUP: FLAG_GROUP}
#: bytes of an RCI-IIId packet
IIID_SIZE = 60

# ===================================================================== data types


class VersionReply(NamedTuple):
    """RCI-ICaRp item data answering an RCI_ICAIQ_VERSION inquiry."""

    vers_major: int
    vers_minor: int


class MotorCommandKind(IntEnum):
    """What a CStMt item does; the wire byte depends on the motor subcode."""

    SPVAL = 1     # RCI_MOTOR_DC_SPVAL (0xd0) or RCI_MOTOR_PSERVO_SPVAL (0xd1) + speedval
    RESET = 2     # RCI_MOTOR_PSERVO_RESET (0xd2), PSERVO only, no payload


class MotorCommand(NamedTuple):
    """CStMt item data. ``speedval`` is the raw guint16 (ignored for RESET)."""

    kind: MotorCommandKind
    speedval: int = 0


SensorCommandKind = SensorCommandCode


class SensorCommand(NamedTuple):
    """CStSn item data.

    ``kind``: RELENCODER_CLEAR (no payload), ULTRASONIC_ORDER (``value`` =
    guint8 firing slot), ULTRASONIC_TIMING (``value`` = guint16 interval ms).
    """

    kind: SensorCommandCode
    value: int = 0


class StatusData(NamedTuple):
    """Reply item data for a STATUS inquiry: raw statval (guint32)."""

    statval: int


class MotorData(NamedTuple):
    """CGtMtRp DATA item: raw speedval; raw mposval for PSERVO, ``None`` for DC."""

    speedval: int
    mposval: int | None = None


class UltrasonicData(NamedTuple):
    """CGtSnRp DATA item of an ultrasonic sensor."""

    delay: int          # guint16, microseconds (round trip)


class RelEncoderData(NamedTuple):
    """CGtSnRp DATA item of a relative encoder."""

    d_count: int        # gint16
    count: int          # gint16


class AbsEncoderData(NamedTuple):
    """CGtSnRp DATA item of an absolute encoder."""

    count: int          # gint16


class AccelData(NamedTuple):
    """CGtSnRp DATA item of an accelerometer."""

    accel: float        # IEEE single, gravities


# ======================================================================= packets
@dataclass(slots=True)
class IIId:
    """Identification (0x0010), 60 bytes. ``user_id`` is NUL-padded to 16 on the
    wire and returned with trailing NULs stripped. ``repr()`` leaves the key
    out, so a packet that lands in a log line does not carry it there."""

    vers_major: int = RCI_VERSION_MAJOR
    vers_minor: int = RCI_VERSION_MINOR
    user_id: bytes = b""
    auth_key: bytes = field(default=bytes(16), repr=False)
    reserved: bytes = bytes(24)


@dataclass(slots=True)
class IInCp:
    """Initialization Completed (0x0011)."""


@dataclass(slots=True)
class ICaIq:
    """Capability Inquiry (0x0012): items = [(control_id, inq_type)], 0..255."""

    items: list = field(default_factory=list)


@dataclass(slots=True)
class ICaRp:
    """Capability Reply (0x0013): items = [(control_id, reply)], 1..255; reply is
    an int (:class:`CapReply`) for ACCESS/SUPPORT, a :class:`VersionReply` for VERSION."""

    items: list = field(default_factory=list)


@dataclass(slots=True)
class CStIq:
    """Status Inquiry (0x0100)."""

    control_id: int = RciCode.CStIq
    rq_ack: bool = False


@dataclass(slots=True)
class CStRp:
    """Status Reply (0x0101); ``control_id`` is a base code."""

    control_id: int = RciCode.CStIq
    status: int = CStRpStatus.IDLE
    rq_ack: bool = False


@dataclass(slots=True)
class CSvTm:
    """Server Termination (0x0102), ``term_code`` is a guint16."""

    term_code: int = TermCode.ERROR
    rq_ack: bool = False


@dataclass(slots=True)
class CCnAc:
    """Control Acknowledge (0x0103); ``control_id`` is the acknowledged base code."""

    control_id: int = 0
    rq_ack: bool = False


@dataclass(slots=True)
class CRs:
    """Reset (0x0104)."""

    rq_ack: bool = False


@dataclass(slots=True)
class CBsTmIq:
    """Base Time Inquiry (0x0106)."""

    rq_ack: bool = False


@dataclass(slots=True)
class CBsTm:
    """Base Time (0x0107): timeval (gint32 seconds, gint32 microseconds)."""

    time: Timeval = Timeval(0, 0)
    rq_ack: bool = False


@dataclass(slots=True)
class _IdPacket(IdPacketForms):
    """The shape of the id-carrying control packets (see :mod:`.rci`)."""

    sub_code: int
    items: list
    form: Form = Form.GENERAL
    rq_ack: bool = False


#: the base of an id-carrying packet class a new command declares (docs/EXTENDING.md)
IdPacket = _IdPacket


@dataclass(slots=True)
class CAcMt(_IdPacket):
    """Activate Motor (0x0200). Item data: 0 or 1."""


@dataclass(slots=True)
class CStMt(_IdPacket):
    """Set Motor (0x0201). Item data: :class:`MotorCommand`."""


@dataclass(slots=True)
class CGtMtIq(_IdPacket):
    """Get Motor Inquiry (0x0202). Item data: status code (GetMotorStatus)."""


@dataclass(slots=True)
class CGtMtRp(_IdPacket):
    """Get Motor Reply (0x0203). Item data: StatusData or MotorData."""


@dataclass(slots=True)
class CAcSn(_IdPacket):
    """Activate Sensor (0x0210, also spelled CAtSn). Item data: 0 or 1."""


CAtSn = CAcSn


@dataclass(slots=True)
class CStSn(_IdPacket):
    """Set Sensor (0x0211). Item data: :class:`SensorCommand`."""


@dataclass(slots=True)
class CGtSnIq(_IdPacket):
    """Get Sensor Inquiry (0x0212). Item data: status code (GetSensorStatus)."""


@dataclass(slots=True)
class CGtSnRp(_IdPacket):
    """Get Sensor Reply (0x0213). Item data: StatusData or sensor data tuple."""


RciPacket = Union[IIId, IInCp, ICaIq, ICaRp, CStIq, CStRp, CSvTm, CCnAc, CRs, CBsTmIq, CBsTm,
                  CAcMt, CStMt, CGtMtIq, CGtMtRp, CAcSn, CStSn, CGtSnIq, CGtSnRp]
