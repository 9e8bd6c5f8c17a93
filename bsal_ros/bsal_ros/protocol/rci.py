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

"""RCI (Robot Control Interface, seed 001 chapter 4): packets, encoder, decoder.

Packets are dataclasses named after the spec's acronyms (``IIId``, ``CStMt``
...). The id-carrying control packets (``CAcMt``, ``CStMt``, ``CGtMtIq``,
``CGtMtRp``, ``CAcSn``, ``CStSn``, ``CGtSnIq``, ``CGtSnRp``) share one shape::

    CStMt(sub_code=MotorType.DC,
          items=[(0, MotorCommand(MotorCommandKind.SPVAL, speedval))],
          form=Form.GENERAL,          # or Form.POLY / Form.GROUP
          rq_ack=False)

``items`` is a list of ``(id, data)``; the general form carries exactly one
item, poly/group 1..255 items (group: consecutive ids). Item data per packet:

==========  =================================================================
CAcMt       int 0 (deactivate) or 1 (activate)
CAcSn       int 0 or 1
CStMt       :class:`MotorCommand` (kind SPVAL + speedval, or RESET for PSERVO)
CStSn       :class:`SensorCommand` (RELENCODER_CLEAR, ULTRASONIC_ORDER + slot,
            ULTRASONIC_TIMING + interval ms)
CGtMtIq     int status code (:class:`GetMotorStatus`)
CGtSnIq     int status code (:class:`GetSensorStatus`)
CGtMtRp     :class:`StatusData` (STATUS inquiry) or :class:`MotorData`
            (DATA: speedval, and mposval for PSERVO, ``None`` for DC)
CGtSnRp     :class:`StatusData`, or :class:`UltrasonicData` (delay),
            :class:`RelEncoderData` (d_count, count), :class:`AbsEncoderData`
            (count), :class:`AccelData` (accel) for DATA inquiries
==========  =================================================================

Bit-packed values (statval, speedval, mposval) are carried as raw wire ints;
convert them with :mod:`bsal_ros.protocol.values`.

Encoding: ``encode_rci(packet, byteorder="big") -> bytes``.

Modules: packets and item types in :mod:`.rci_packets`, one declaration per
code in :mod:`.rci_commands` (the registry: :mod:`.rci_registry`), wire tables
in :mod:`.rci_tables`, the encoder in :mod:`.rci_encode`, the decoder in
:mod:`.rci_decode` with reply matching in :mod:`.rci_replies`; this module
re-exports the public names.

Decoding: ``RciDecoder(byteorder="big", role="server"|"client"|"any")``;
``feed(data) -> list[packet]``. ``role`` is the side that *receives*: a server
decoder accepts what a control application may send, a client decoder what a
control process may send. Replies whose length depends on the question
(RCI-ICaRp, RCI-CGtMtRp, RCI-CGtSnRp) are decoded against the inquiry, which
the caller registers with ``decoder.expect_reply(inquiry)`` when sending it.
A pending inquiry is consumed by its reply, or by an ``RCI-CStRp`` whose
``control_id`` is the inquiry's base code (the control process answers an
inquiry it cannot serve with CStRp instead of the reply); pending capability
inquiries are dropped when the first control-phase packet arrives (an entity
may leave ACCESS inquiries unanswered; its IInCp may precede its ICaRp).
"""

from __future__ import annotations

from .rci_decode import RciDecoder
from .rci_encode import encode_rci
from .rci_packets import (AbsEncoderData, AccelData, CAcMt, CAcSn, CAtSn, CBsTm,  # noqa: F401
                          CBsTmIq, CCnAc, CGtMtIq, CGtMtRp, CGtSnIq, CGtSnRp, CRs, CStIq, CStMt,
                          CStRp, CStSn, CSvTm, ICaIq, ICaRp, IIId, IIID_SIZE, IInCp, MotorCommand,
                          MotorCommandKind, MotorData, RciPacket, RelEncoderData, SensorCommand,
                          SensorCommandKind, StatusData, UltrasonicData, VersionReply)
from .rci_registry import CLASS_OF, CODE_OF  # noqa: F401

__all__ = [
    "IIId", "IInCp", "ICaIq", "ICaRp", "CStIq", "CStRp", "CSvTm", "CCnAc", "CRs", "CBsTmIq",
    "CBsTm", "CAcMt", "CStMt", "CGtMtIq", "CGtMtRp", "CAcSn", "CAtSn", "CStSn", "CGtSnIq",
    "CGtSnRp", "VersionReply", "MotorCommandKind", "MotorCommand", "SensorCommandKind",
    "SensorCommand", "StatusData", "MotorData", "UltrasonicData", "RelEncoderData",
    "AbsEncoderData", "AccelData", "RciPacket", "encode_rci", "decode_rci", "RciDecoder",
    "IIID_SIZE",
]


def decode_rci(data: bytes, byteorder: str = "big", role: str = "any",
               expect=()) -> list:
    """Decode a complete byte string.

    :param data: whole RCI packets.
    :param byteorder: ``"big"`` or ``"little"``.
    :param role: the side that receives them (see :class:`RciDecoder`).
    :param expect: the inquiries whose replies ``data`` may hold, in order.
    :returns: the packets.
    :raises ProtocolError: bad bytes, a packet ``role`` does not receive, or
        bytes left over after the last packet.
    :raises ValueError: an unknown ``byteorder`` or ``role``.
    :raises TypeError: ``expect`` holds a packet that is no inquiry.
    """
    dec = RciDecoder(byteorder, role)
    for q in expect:
        dec.expect_reply(q)
    out = dec.feed(data)
    dec.feed_eof()
    return out
