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
"""A cliff-sensor board: the second worked example of docs/EXTENDING.md, not part of Brak.

One board (I2C, WHO_AM_I 0x43) with three detectors looking at the floor;
its data block is STATUS, SEQ and three distances (guint16, mm); a detector
sees a cliff when its distance is beyond its board's ``threshold_mm``. It
brings its own configuration: that description key of its board entries,
and a hardware node parameter changeable at run time (``cliff_offset_mm``,
added to every distance its topic publishes). This module and its
``pyproject.toml`` entry point are all the bridge needs.
"""

from __future__ import annotations

from dataclasses import dataclass
import struct
from typing import NamedTuple

from bsal_ros.core.params import param, ParamRecord
from bsal_ros.hardware import registers as regs
from bsal_ros.hardware.boards import Board
from bsal_ros.hardware.devices import Device
from bsal_ros.hardware.sim_boards import VirtualBoard
from bsal_ros.kinds import (PolledBoardType, RciSensor, RdiItem, register_board_type,
                            register_kind, RosTopic, SensorKind)
from bsal_ros.kinds.convert import u16, u32
from bsal_ros.protocol._items import Layout
from bsal_ros.protocol.constants import RdiCode

WHO_AM_I = 0x43
RCI_SUB = 0x11          # RCI_SENSOR_CLIFF (free in the book; the bumper has 0x10)
RDI_SUB = 0x11          # RDI_SENSOR_CLIFF
DETECTORS = 3
BLOCK = struct.Struct(">BBHHH")   # status seq distance0..2
#: what the robot description adds for a cliff board at 0x41 with its three detectors
DESCRIPTION = {
    "register_maps": {"cliff": {"who_am_i_value": WHO_AM_I}},
    "boards": {"cliff": {"type": "cliff", "address": 0x41, "update_hz": 25.0, "poll_hz": 20.0,
                         "threshold_mm": 80}},
    "devices": {"cliff": {f"cliff_{i}": {"id": i, "board": "cliff", "channel": i}
                          for i in range(DETECTORS)}},
}


@dataclass(frozen=True)
class CliffBoardKeys(ParamRecord):
    """The keys a board entry of type ``cliff`` may carry beyond the common ones."""

    threshold_mm: int = param(60, "distance (mm) beyond which a detector sees a cliff (the "
                              "floor is about 30 mm away)", 10, 1000)


@dataclass(frozen=True)
class CliffNodeParams(ParamRecord):
    """The hardware node parameters the cliff kind brings."""

    cliff_offset_mm: int = param(0, "mm added to every cliff distance published on "
                                 "cliff_<id> (the detectors' mounting height)", -100, 100,
                                 dynamic=True)


class CliffData(NamedTuple):
    """RCI CGtSnRp DATA item of a detector: its distance (mm) and cliff flag."""

    distance_mm: int
    cliff: int


class CliffReading(NamedTuple):
    """RDI-Sn CLIFF item: distance (mm), cliff flag and statval."""

    distance_mm: int
    cliff: int
    status: int


class CliffBoard(Board):
    """Polls the cliff board: one block read of STATUS, SEQ, three distances."""

    type = "cliff"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.threshold_mm = CliffBoardKeys.of(self.cfg).threshold_mm
        self.reset_cache()

    def data_len(self):
        """STATUS, SEQ, three distances."""
        return BLOCK.size

    def decode(self, data, mono):
        """Cache each detector's distance, and whether it is beyond ``threshold_mm``."""
        self.distances = list(BLOCK.unpack(bytes(data))[2:])
        self.cliffs = [int(d > self.threshold_mm) for d in self.distances]

    def reset_cache(self):
        """Nothing read after a reset."""
        self.distances = [0] * DETECTORS
        self.cliffs = [0] * DETECTORS


class VirtualCliffBoard(VirtualBoard):
    """The simulated cliff board: ``distances`` (mm, the floor at 30) are set by a test."""

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.distances = [30] * DETECTORS

    def data_block(self):
        """STATUS, SEQ, the distances of the enabled detectors (0: off)."""
        dk = self._ticks()
        self.seq = (self.seq + dk) & 0xFF
        dist = [u16(d) if self.enable >> i & 1 else 0 for i, d in enumerate(self.distances)]
        return list(BLOCK.pack(regs.ST_READY | self.status_extra, self.seq, *dist))


class CliffDetector(Device):
    """One detector: its distance and cliff flag as the extra values
    ``distance_mm`` and ``cliff``."""

    device_class = "cliff"

    @property
    def enable_bit(self):
        """Each detector has its own ENABLE bit: its channel."""
        return 1 << self.channel

    def snapshot(self, base_time, robot):
        """Status bits, the distance and the cliff flag."""
        s = self.base(base_time)
        s.extra["distance_mm"] = self.board.distances[self.channel]
        s.extra["cliff"] = self.board.cliffs[self.channel]
        return s


class CliffBoardType(PolledBoardType):
    """A cliff board: polled, with its own ``threshold_mm`` key."""

    keys = CliffBoardKeys


class CliffKind(SensorKind):
    """A cliff detector: what the bridge shows of it."""

    params = CliffNodeParams

    def diagnostics(self, state) -> dict:
        """The distance and whether it sees a cliff."""
        return {"distance_mm": int(state.extra.get("distance_mm", 0)),
                "cliff": bool(state.extra.get("cliff", 0))}

    def rdi_reading(self, state) -> CliffReading:
        """The distance, the cliff flag and statval."""
        return CliffReading(u16(state.extra.get("distance_mm", 0)),
                            int(state.extra.get("cliff", 0)) & 1, u32(state.statval))

    def fill(self, msg, state, ctx) -> None:
        """A sensor_msgs/Range: the distance plus ``cliff_offset_mm``, in m
        (read at each message: ``ros2 param set`` applies at once)."""
        msg.header.stamp = ctx.stamp
        msg.header.frame_id = ctx.frame
        msg.radiation_type = type(msg).INFRARED
        msg.min_range, msg.max_range = 0.0, 0.5
        mm = float(state.extra.get("distance_mm", 0)) + ctx.params["cliff_offset_mm"]
        msg.range = mm / 1000.0

    def viewer_text(self, reading) -> str:
        """The distance and the flag."""
        return f"distance={reading.distance_mm}mm cliff={reading.cliff}"

    def viewer_line(self, index: int, reading) -> str:
        """The distance of detector ``index``, ``CLIFF`` when it sees one."""
        return f"cliff {index}: {reading.distance_mm} mm" + (" CLIFF" if reading.cliff else "")


register_board_type(CliffBoardType(
    name="cliff", board=CliffBoard, sim_board=VirtualCliffBoard, carries=("cliff",),
    motor=False))

register_kind(CliffKind(
    name="cliff",
    device=CliffDetector,
    fields=(),
    extra_fields=("distance_mm", "cliff"),
    data_fields=("distance_mm", "cliff"),
    status_fields=("statval",),
    rci=RciSensor(sub=RCI_SUB, layout=Layout("HB", "named", CliffData),
                  fields=(("distance_mm", u16), ("cliff", int))),
    rdi=RdiItem(code=RdiCode.Sn, sub=RDI_SUB, layout=Layout("HBI", "named", CliffReading)),
    diagnostics_group="Cliffs",
    topic=RosTopic(name="cliff_{id:02d}", msg="sensor_msgs.msg:Range", qos="sensor"),
    viewer_label="cliff"))
