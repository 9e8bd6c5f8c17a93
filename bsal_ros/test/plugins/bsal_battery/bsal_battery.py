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
"""A battery monitor board: the third worked example of docs/EXTENDING.md, not part of Brak.

One board (I2C, WHO_AM_I 0x45) watching the robot's battery pack; its data
block is STATUS, SEQ, the pack voltage (guint16, mV) and its temperature
(gint16, 0.1 degC). Its board entries say how many cells the pack has in
series (the description key ``battery_cells``), and the hardware node
parameter ``battery_low_volts_per_cell`` (changeable at run time) says
below which voltage per cell the pack is low: the kind's ``health`` turns
both into the device's /diagnostics level, WARN with the values in the
message, read at each update. This module and its ``pyproject.toml``
entry point are all the bridge needs.

The kind keeps the wire's units (mV, 0.1 degC) in its state, as the bridge's
RCI and RDI items carry them; its topic (sensor_msgs/BatteryState, in V and
degC), its /diagnostics values and its viewer line convert them.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import struct
from typing import NamedTuple

from bsal_ros.core.params import param, ParamRecord
from bsal_ros.hardware import registers as regs
from bsal_ros.hardware.boards import Board
from bsal_ros.hardware.devices import Device
from bsal_ros.hardware.sim_boards import VirtualBoard
from bsal_ros.kinds import (Health, Level, PolledBoardType, RciSensor, RdiItem,
                            register_board_type, register_kind, RosTopic, SensorKind)
from bsal_ros.kinds.convert import clamp_i16, u16, u32
from bsal_ros.protocol._items import Layout
from bsal_ros.protocol.constants import RdiCode

WHO_AM_I = 0x45
RCI_SUB = 0x12          # RCI_SENSOR_BATTERY (free in the book; the cliff sensor has 0x11)
RDI_SUB = 0x12          # RDI_SENSOR_BATTERY
BLOCK = struct.Struct(">BBHh")   # status seq pack_mv temperature_dc
#: a simulated cell's voltage (mV) until a test sets the pack's
NOMINAL_CELL_MV = 3700
#: what the robot description adds for a battery board at 0x42 with a 4-cell pack
DESCRIPTION = {
    "register_maps": {"battery": {"who_am_i_value": WHO_AM_I}},
    "boards": {"battery": {"type": "battery", "address": 0x42, "update_hz": 10.0,
                           "poll_hz": 5.0, "battery_cells": 4}},
    "devices": {"battery": {"pack": {"id": 0, "board": "battery", "channel": 0}}},
}


@dataclass(frozen=True)
class BatteryBoardKeys(ParamRecord):
    """The keys a board entry of type ``battery`` may carry beyond the common ones."""

    battery_cells: int = param(4, "cells in series in the battery pack the board watches",
                               1, 16)


@dataclass(frozen=True)
class BatteryNodeParams(ParamRecord):
    """The hardware node parameters the battery kind brings."""

    battery_low_volts_per_cell: float = param(
        3.3, "pack voltage per cell (V) below which the battery's /diagnostics status is "
        "WARN (read at each update)", 2.5, 4.5, dynamic=True)


class BatteryData(NamedTuple):
    """RCI CGtSnRp DATA item of a battery: pack voltage (mV), temperature (0.1 degC), cells."""

    pack_mv: int
    temperature_dc: int
    cells: int


class BatteryReading(NamedTuple):
    """RDI-Sn BATTERY item: pack voltage (mV), temperature (0.1 degC), cells and statval."""

    pack_mv: int
    temperature_dc: int
    cells: int
    status: int


class BatteryBoard(Board):
    """Polls the battery board: one block read of STATUS, SEQ, voltage, temperature."""

    type = "battery"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.cells = BatteryBoardKeys.of(self.cfg).battery_cells
        self.reset_cache()

    def data_len(self):
        """STATUS, SEQ, voltage, temperature."""
        return BLOCK.size

    def decode(self, data, mono):
        """Cache the pack voltage (mV) and temperature (0.1 degC) as the wire gives them."""
        self.pack_mv, self.temperature_dc = BLOCK.unpack(bytes(data))[2:]

    def reset_cache(self):
        """Nothing read after a reset."""
        self.pack_mv = 0
        self.temperature_dc = 0


class VirtualBatteryBoard(VirtualBoard):
    """The simulated battery board: ``pack_mv`` (its cells at 3.7 V) and
    ``temperature_dc`` (25.0 degC) are set by a test."""

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.pack_mv = BatteryBoardKeys.of(board).battery_cells * NOMINAL_CELL_MV
        self.temperature_dc = 250

    def data_block(self):
        """STATUS, SEQ, the voltage and temperature while enabled (0: off)."""
        dk = self._ticks()
        self.seq = (self.seq + dk) & 0xFF
        on = self.enable & 0x01
        return list(BLOCK.pack(regs.ST_READY | self.status_extra, self.seq,
                               u16(self.pack_mv) if on else 0,
                               clamp_i16(self.temperature_dc) if on else 0))


class BatteryMonitor(Device):
    """The battery device: the extra values ``pack_mv``, ``temperature_dc``
    and its board's ``cells``."""

    device_class = "battery"

    def snapshot(self, base_time, robot):
        """Status bits, the voltage, the temperature and the cell count."""
        s = self.base(base_time)
        s.extra["pack_mv"] = self.board.pack_mv
        s.extra["temperature_dc"] = self.board.temperature_dc
        s.extra["cells"] = self.board.cells
        return s


class BatteryBoardType(PolledBoardType):
    """A battery board: polled, with its own ``battery_cells`` key."""

    keys = BatteryBoardKeys


def volts(state) -> tuple[float, int]:
    """The pack voltage (V) and cell count of ``state``."""
    return float(state.extra.get("pack_mv", 0)) / 1000.0, int(state.extra.get("cells", 0))


class BatteryKind(SensorKind):
    """A battery monitor: what the bridge shows of it, and when it is low."""

    params = BatteryNodeParams

    def diagnostics(self, state) -> dict:
        """The pack voltage (V), the voltage per cell, the temperature (degC), the cells."""
        pack, cells = volts(state)
        return {"pack_v": f"{pack:.2f}", "cell_v": f"{pack / max(cells, 1):.3f}",
                "temperature_c": f"{float(state.extra.get('temperature_dc', 0)) / 10.0:.1f}",
                "cells": cells}

    def health(self, state, ctx) -> Health | None:
        """WARN below ``cells`` x ``battery_low_volts_per_cell`` (the parameter
        as it is now), OK above it, both with the values; nothing while off."""
        if not state.on:
            return None
        pack, cells = volts(state)
        low = float(ctx.params["battery_low_volts_per_cell"])
        per_cell = pack / max(cells, 1)
        if pack < cells * low:
            return Health(Level.WARN, f"battery low: pack {pack:.2f} V below {cells} x "
                                      f"{low:.2f} V = {cells * low:.2f} V "
                                      f"({per_cell:.3f} V per cell)")
        return Health(Level.OK, f"pack {pack:.2f} V, {per_cell:.3f} V per cell "
                                f"(low below {low:.2f} V)")

    def rdi_reading(self, state) -> BatteryReading:
        """The voltage, the temperature, the cells and statval."""
        return BatteryReading(u16(state.extra.get("pack_mv", 0)),
                              clamp_i16(state.extra.get("temperature_dc", 0)),
                              int(state.extra.get("cells", 0)) & 0xFF, u32(state.statval))

    def fill(self, msg, state, ctx) -> None:
        """A sensor_msgs/BatteryState: the voltage (V) and temperature (degC);
        its cells' voltages unknown (NaN each), as are current and charge."""
        pack, cells = volts(state)
        msg.header.stamp = ctx.stamp
        msg.header.frame_id = ctx.frame
        msg.voltage = pack
        msg.temperature = float(state.extra.get("temperature_dc", 0)) / 10.0
        msg.current = msg.charge = msg.capacity = msg.design_capacity = math.nan
        msg.percentage = math.nan
        msg.present = True
        msg.cell_voltage = [math.nan] * cells
        msg.cell_temperature = [math.nan] * cells

    def viewer_text(self, reading) -> str:
        """The voltage, the temperature and the cells."""
        return (f"pack={reading.pack_mv}mV temp={reading.temperature_dc / 10:.1f}C "
                f"cells={reading.cells}")

    def viewer_line(self, index: int, reading) -> str:
        """The voltage and the temperature of battery ``index``."""
        return (f"battery {index}: {reading.pack_mv / 1000:.2f} V "
                f"{reading.temperature_dc / 10:.1f} C")


register_board_type(BatteryBoardType(
    name="battery", board=BatteryBoard, sim_board=VirtualBatteryBoard, carries=("battery",),
    motor=False))

register_kind(BatteryKind(
    name="battery",
    device=BatteryMonitor,
    fields=(),
    extra_fields=("pack_mv", "temperature_dc", "cells"),
    data_fields=("pack_mv", "temperature_dc", "cells"),
    status_fields=("statval",),
    rci=RciSensor(sub=RCI_SUB, layout=Layout("HhB", "named", BatteryData),
                  fields=(("pack_mv", u16), ("temperature_dc", clamp_i16), ("cells", int))),
    rdi=RdiItem(code=RdiCode.Sn, sub=RDI_SUB, layout=Layout("HhBI", "named", BatteryReading)),
    diagnostics_group="Batteries",
    topic=RosTopic(name="battery_{id:02d}", msg="sensor_msgs.msg:BatteryState", qos="reliable"),
    viewer_label="battery"))
