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

r"""bsal_ros.protocol - the RCI and RDI wire formats of seed 001, in pure Python.

No ROS, no sockets (a test enforces it). Byte order is selectable per call or
per decoder (``"big"``, the default, or ``"little"``); everything else follows
seed 001 chapters 4 and 5 and the decisions in docs/PROTOCOL.md.

Quick tour::

    from bsal_ros.protocol import *

    # RCI: a control application sets the drive motor to -20 % duty cycle
    pkt = CStMt.one(MotorType.DC, 1, MotorCommand(MotorCommandKind.SPVAL,
                                                  speedval_pack(True, -20.0)))
    wire = encode_rci(pkt)                      # b'\x02\x01\xc0\x00\x01\xd0\x89\x99'

    dec = RciDecoder(role="server")             # gateway side
    assert dec.feed(wire) == [pkt]

    # replies are decoded against the inquiry the client sent
    client = RciDecoder(role="client")
    q = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)
    client.expect_reply(q)
    packets = client.feed(reply_bytes)

    # RDI
    frame = encode_rdi_frame([RdiBaseTime(Timeval(1000, 0)),
                              RdiSensor.group(RdiSensorType.ULTRASONIC, 0, [UltrasonicReading(
                                  5831, Statval(True, True, True, 40).pack())] * 12)])
    packets = RdiDecoder().feed(frame)

Modules: :mod:`.constants` (every constant of 001 4.8 and 5.10), :mod:`.values`
(statval, speedval, mposval, timeval and SI conversions), :mod:`.rci`,
:mod:`.rdi`, :mod:`.errors` (:class:`ProtocolError`, the only exception the
decoders raise).
"""

from .constants import *  # noqa: F401,F403
from .constants import __all__ as _c_all
from .errors import ProtocolError
from .rci import *  # noqa: F401,F403
from .rci import __all__ as _rci_all
from .rdi import *  # noqa: F401,F403
from .rdi import __all__ as _rdi_all
from .values import *  # noqa: F401,F403
from .values import __all__ as _v_all

__all__ = ["ProtocolError", *_c_all, *_v_all, *_rci_all, *_rdi_all]
