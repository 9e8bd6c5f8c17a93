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

"""Brak's RCI commands: one declaration per code of the book's table 4.8.1
(seed 001 chapter 4), registered in :mod:`.rci_registry`.

Each declaration is the one place its code's facts live: the codecs'
dispatch, the sub-code domains, which side may receive it, whether a guest may
send it (``writes``), whether CStIq reports its status (``tracked``) and the
robot-port methods its handler calls (names, checked by the ``rci`` layer).
A new command is one more
declaration here (docs/EXTENDING.md); ``test/test_rci_commands.py`` checks
every code of table 4.8.1 is declared, the C++ header and docs/PROTOCOL.md
agree, and that leaving out any field fails.

Which handler runs each code the session dispatches is the ``rci`` layer's
one table (``rci/handlers.py``, code -> handler object). Initialization
packets (0x00xx) are answered by the handshake, never dispatched; packets
only the control process sends have no handler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ._items import Layout
from .constants import RciCode
from .rci_packets import (CAcMt, CAcSn, CBsTm, CBsTmIq, CCnAc, CGtMtIq, CGtMtRp, CGtSnIq, CGtSnRp,
                          CRs, CStIq, CStMt, CStRp, CStSn, CSvTm, ICaIq, ICaRp, IdPacket, IIId,
                          IInCp)
from .rci_registry import BOTH, RciCommandSpec, register_command, TO_CLIENT, TO_SERVER, Wire
from .rci_tables import (L_ACTIVATE, L_MOTOR_INQUIRY, L_SENSOR_INQUIRY, MOTOR_COMMANDS,
                         MOTOR_SUBS, SENSOR_COMMANDS, SENSOR_SUBS, SET_SENSOR_SUBS)

# ------------------------------------------------------------ initialization
register_command(RciCommandSpec(
    code=RciCode.IIId, name="IIId", title="Identification",
    direction=BOTH, packet=IIId, sub_codes=None,
    wire=Wire("iiid"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.IInCp, name="IInCp", title="Initialization Completed",
    direction=BOTH, packet=IInCp, sub_codes=None,
    wire=Wire("bare"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.ICaIq, name="ICaIq", title="Capability Inquiry",
    direction=BOTH, packet=ICaIq, sub_codes=None,
    wire=Wire("icaiq"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.ICaRp, name="ICaRp", title="Capability Reply",
    direction=BOTH, packet=ICaRp, sub_codes=None,
    wire=Wire("icarp"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
# ------------------------------------------------------- control, session-wide
register_command(RciCommandSpec(
    code=RciCode.CStIq, name="CStIq", title="Status Inquiry",
    direction=BOTH, packet=CStIq, sub_codes=None,
    wire=Wire("control_id"),
    writes=False, tracked=True,
    port_methods=(), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CStRp, name="CStRp", title="Status Reply",
    direction=BOTH, packet=CStRp, sub_codes=None,
    wire=Wire("cstrp"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CSvTm, name="CSvTm", title="Server Termination",
    direction=TO_CLIENT, packet=CSvTm, sub_codes=None,
    wire=Wire("csvtm"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CCnAc, name="CCnAc", title="Control Acknowledge",
    direction=BOTH, packet=CCnAc, sub_codes=None,
    wire=Wire("control_id"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CRs, name="CRs", title="Reset",
    direction=TO_SERVER, packet=CRs, sub_codes=None,
    wire=Wire("bare"),
    writes=True, tracked=True,
    port_methods=("reset", "activate", "device_ids", "cached", "fetch"), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CBsTmIq, name="CBsTmIq", title="Base Time Inquiry",
    direction=TO_SERVER, packet=CBsTmIq, sub_codes=None,
    wire=Wire("bare"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CBsTm, name="CBsTm", title="Base Time",
    direction=TO_CLIENT, packet=CBsTm, sub_codes=None,
    wire=Wire("cbstm"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
# ------------------------------------------------------------------- motors
register_command(RciCommandSpec(
    code=RciCode.CAcMt, name="CAcMt", title="Activate Motor",
    direction=TO_SERVER, packet=CAcMt, sub_codes=MOTOR_SUBS,
    wire=Wire("items", L_ACTIVATE),
    writes=True, tracked=True,
    port_methods=("device_ids", "activate", "cached", "fetch"), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CStMt, name="CStMt", title="Set Motor",
    direction=TO_SERVER, packet=CStMt, sub_codes=MOTOR_SUBS,
    wire=Wire("commands", commands=MOTOR_COMMANDS),
    writes=True, tracked=True,
    port_methods=("device_ids", "set_motors", "activate", "home_steering"), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CGtMtIq, name="CGtMtIq", title="Get Motor Inquiry",
    direction=TO_SERVER, packet=CGtMtIq, sub_codes=MOTOR_SUBS,
    wire=Wire("items", L_MOTOR_INQUIRY),
    writes=False, tracked=True,
    port_methods=("device_ids", "cached", "fetch", "delivered"), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CGtMtRp, name="CGtMtRp", title="Get Motor Reply",
    direction=TO_CLIENT, packet=CGtMtRp, sub_codes=MOTOR_SUBS,
    wire=Wire("reply"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))
# ------------------------------------------------------------------ sensors
register_command(RciCommandSpec(
    code=RciCode.CAcSn, name="CAcSn", title="Activate Sensor",
    direction=TO_SERVER, packet=CAcSn, sub_codes=SENSOR_SUBS,
    wire=Wire("items", L_ACTIVATE),
    writes=True, tracked=True,
    port_methods=("device_ids", "activate", "cached", "fetch"), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CStSn, name="CStSn", title="Set Sensor",
    direction=TO_SERVER, packet=CStSn, sub_codes=SET_SENSOR_SUBS,
    wire=Wire("commands", commands=SENSOR_COMMANDS),
    writes=True, tracked=True,
    port_methods=("device_ids", "clear_encoders", "set_sonar_timing"), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CGtSnIq, name="CGtSnIq", title="Get Sensor Inquiry",
    direction=TO_SERVER, packet=CGtSnIq, sub_codes=SENSOR_SUBS,
    wire=Wire("items", L_SENSOR_INQUIRY),
    writes=False, tracked=True,
    port_methods=("device_ids", "cached", "fetch", "delivered"), unsupported=None))
register_command(RciCommandSpec(
    code=RciCode.CGtSnRp, name="CGtSnRp", title="Get Sensor Reply",
    direction=TO_CLIENT, packet=CGtSnRp, sub_codes=SENSOR_SUBS,
    wire=Wire("reply"),
    writes=False, tracked=False,
    port_methods=(), unsupported=None))

# ------------------------------------------ a project extension (not in the book)
SIM_ROBOT = 0xF0     # sub-code: the simulated robot (id 0)
CSMTP_CODE = 0x0230


class SimPose(NamedTuple):
    """CSmTp item data: where the simulated robot is put (mm, mm, mrad)."""

    x_mm: int
    y_mm: int
    yaw_mrad: int


@dataclass(slots=True)
class CSmTp(IdPacket):
    """Simulator Teleport (0x0230): move the simulated robot (BSAL's SCC did it)."""


register_command(RciCommandSpec(
    code=CSMTP_CODE, name="CSmTp", title="Simulator Teleport",
    direction=TO_SERVER, packet=CSmTp, sub_codes={SIM_ROBOT: SIM_ROBOT},
    wire=Wire("items", Layout("iii", "named", SimPose)),
    writes=True, tracked=True,
    port_methods=("sim_teleport",), unsupported=None))
