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
"""A bumper board: the worked example of docs/EXTENDING.md, not part of Brak.

One board (I2C, WHO_AM_I 0x42) with four contacts; its data block is STATUS,
SEQ, CONTACTS (bit i = contact i pressed, while the board is enabled). This
one module is everything the bridge needs to know about it: the Board that
polls it, the virtual board of the sim backend, the Device that reads it, its
RCI sensor sub-code and DATA item, its RDI-Sn sub-code and reading, its
/diagnostics values and aggregator group, its ROS topic and its viewer line.
Importing it registers it; its package's entry point (pyproject.toml, group
``bsal_ros.device_kinds``) makes every process of the bridge import it.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from bsal_ros.hardware import registers as regs
from bsal_ros.hardware.boards import Board
from bsal_ros.hardware.devices import Device
from bsal_ros.hardware.sim_boards import VirtualBoard
from bsal_ros.kinds import (PolledBoardType, RciSensor, RdiItem, register_board_type,
                            register_kind, RosTopic, SensorKind)
from bsal_ros.kinds.convert import u32
from bsal_ros.protocol._items import Layout
from bsal_ros.protocol.constants import RdiCode

WHO_AM_I = 0x42
RCI_SUB = 0x10          # RCI_SENSOR_BUMPER (a sub-code the book leaves free)
RDI_SUB = 0x10          # RDI_SENSOR_BUMPER
BLOCK = struct.Struct(">BBB")   # status seq contacts
#: what the robot description adds for a bumper board at 0x40
DESCRIPTION = {
    "register_maps": {"bumper": {"who_am_i_value": WHO_AM_I}},
    "boards": {"bumper": {"type": "bumper", "address": 0x40, "update_hz": 25.0,
                          "poll_hz": 20.0}},
    "devices": {"bumper": {"front_bumper": {"id": 0, "board": "bumper", "channel": 0}}},
}


class BumperData(NamedTuple):
    """RCI CGtSnRp DATA item of a bumper: the contact bits."""

    contacts: int


class BumperReading(NamedTuple):
    """RDI-Sn BUMPER item: the contact bits and statval."""

    contacts: int
    status: int


class BumperBoard(Board):
    """Polls the bumper board: one block read of STATUS, SEQ, CONTACTS."""

    type = "bumper"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.contacts = 0

    def data_len(self):
        """STATUS, SEQ, CONTACTS."""
        return BLOCK.size

    def decode(self, data, mono):
        """Cache the four contact bits."""
        self.contacts = BLOCK.unpack(bytes(data))[2] & 0x0F

    def reset_cache(self):
        """Nothing pressed after a reset."""
        self.contacts = 0


class VirtualBumperBoard(VirtualBoard):
    """The simulated bumper: ``pressed`` is set by a test (or a world model)."""

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.pressed = 0

    def data_block(self):
        """STATUS, SEQ, the pressed contacts while enabled."""
        dk = self._ticks()
        self.seq = (self.seq + dk) & 0xFF
        contacts = self.pressed & 0x0F if self.enable & 0x01 else 0
        return list(BLOCK.pack(regs.ST_READY | self.status_extra, self.seq, contacts))


class Bumper(Device):
    """The bumper device: its contacts as the kind's extra value ``contacts``."""

    device_class = "bumper"

    def snapshot(self, base_time, robot):
        """Status bits and the contact mask."""
        s = self.base(base_time)
        s.extra["contacts"] = self.board.contacts
        return s


class BumperKind(SensorKind):
    """The bumper's device kind: what the bridge shows of its contacts."""

    def diagnostics(self, state) -> dict:
        """The contact bits, e.g. ``0110``."""
        return {"contacts": f"{int(state.extra.get('contacts', 0)):04b}"}

    def rdi_reading(self, state) -> BumperReading:
        """The contact bits and statval."""
        return BumperReading(int(state.extra.get("contacts", 0)) & 0x0F, u32(state.statval))

    def fill(self, msg, state, ctx) -> None:
        """A std_msgs/UInt8 of the contact bits."""
        msg.data = int(state.extra.get("contacts", 0)) & 0x0F

    def viewer_text(self, reading) -> str:
        """The contact bits."""
        return f"contacts={reading.contacts:04b}"

    def viewer_line(self, index: int, reading) -> str:
        """The contact bits of bumper ``index``."""
        return f"bumper {index}: {reading.contacts:04b}"


BUMPER_BOARD = register_board_type(PolledBoardType(
    name="bumper", board=BumperBoard, sim_board=VirtualBumperBoard, carries=("bumper",),
    motor=False))

BUMPER = register_kind(BumperKind(
    name="bumper",
    device=Bumper,
    fields=(),
    extra_fields=("contacts",),
    data_fields=("contacts",),
    status_fields=("statval",),
    rci=RciSensor(sub=RCI_SUB, layout=Layout("B", "named", BumperData),
                  fields=(("contacts", int),)),
    rdi=RdiItem(code=RdiCode.Sn, sub=RDI_SUB, layout=Layout("BI", "named", BumperReading)),
    diagnostics_group="Bumpers",
    topic=RosTopic(name="bumper_{id:02d}", msg="std_msgs.msg:UInt8", qos="reliable"),
    viewer_label="bumper"))
