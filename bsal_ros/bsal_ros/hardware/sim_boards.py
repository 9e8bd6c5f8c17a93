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

"""The simulated boards' common register file and the two sensor boards
(sonar ring, accelerometer); the motor boards are in :mod:`.sim_motors`.

Each virtual board implements its register map of :mod:`.registers` and reads
the :class:`~.sim_world.SimWorld` it senses; :mod:`.sim` attaches them to a
:class:`~.bus.SimBus`.
"""

from __future__ import annotations

import math

from . import registers as regs
from .sim_world import SimWorld
from ..core.units import clamp_int, G, range_to_delay_us, SPEED_OF_SOUND

SOUND_SPEED = SPEED_OF_SOUND  # the simulated air; the node's parameter converts back


# ---- virtual boards ----------------------------------------------------------
class VirtualBoard:
    """Register file of one simulated board; subclasses fill the data block."""

    def __init__(self, world: SimWorld, board: dict, regmap: regs.RegisterMap):
        self.world = world
        self.board = board
        self.rm = regmap
        self.enable = 0
        self.seq = 0
        self.status_extra = 0
        self._tick = None

    def update_hz(self) -> float:
        """How often the board makes new data (Hz)."""
        return float(self.board["update_hz"])

    def _ticks(self) -> int:
        """Number of board updates since the previous read (0 if none)."""
        k = int(math.floor(self.world.t * self.update_hz() + 1e-9))
        if self._tick is None:
            self._tick = k
            return 1
        dk = k - self._tick
        self._tick = k
        return max(0, dk)

    def data_block(self) -> list[int]:  # pragma: no cover - abstract
        """The data block as read now (STATUS, SEQ, data)."""
        raise NotImplementedError

    def control_regs(self) -> dict[int, int]:
        """Register number -> value of the control registers."""
        return {self.rm.enable: self.enable}

    def read(self, reg: int, length: int) -> list[int]:
        """Registers reg.. reg+length-1 (WHO_AM_I, data block, control registers)."""
        image = [0] * 256
        image[self.rm.who_am_i] = self.rm.who_am_i_value
        for r, v in self.control_regs().items():
            image[r] = v & 0xFF
        if reg <= self.rm.data < reg + length or reg == self.rm.data:
            block = self.data_block()
            image[self.rm.data:self.rm.data + len(block)] = block
        return image[reg:reg + length]

    def write(self, reg: int, data: list[int]) -> None:
        """A register write: ENABLE, COMMAND, or the board's own registers."""
        if reg == self.rm.enable:
            self.enable = data[0]
            self.on_enable()
        elif reg == self.rm.command:
            self.on_command(data[0])
        else:
            self.on_write(reg, data)

    def on_enable(self) -> None:
        """React to a new ENABLE mask."""
        pass

    def on_command(self, cmd: int) -> None:
        """React to a COMMAND (reset here; subclasses add theirs)."""
        if cmd == regs.CMD_RESET:
            self.enable = 0
            self.status_extra = 0
            self.on_enable()
            self.on_reset()

    def on_reset(self) -> None:
        """Back to power-on state."""
        pass

    def on_write(self, reg: int, data: list[int]) -> None:
        """React to a write of the board's own registers."""
        pass


class VirtualUltrasonicBoard(VirtualBoard):
    """Sonar channels fired in slots; delays ray-cast in the world."""

    def __init__(self, world, board, regmap, channel_poses: dict[int, list[float]]):
        super().__init__(world, board, regmap)
        self.channels = int(board["channels"])
        self.poses = channel_poses
        self.default_slots = [int(s) for s in board["slots"]]
        self.default_interval = int(board["interval_ms"])
        self.on_reset()

    @classmethod
    def from_description(cls, world, name, board, regmap, robot, bus):
        """The board ``name`` with the poses of the sonars on its channels."""
        poses = {int(d["channel"]): [float(v) for v in d["pose"]]
                 for d in (robot["devices"].get("ultrasonic") or {}).values()
                 if d["board"] == name}
        return cls(world, board, regmap, poses)

    def on_reset(self):
        """Power-on state: described slots and interval, no echoes yet."""
        self.slots = list(self.default_slots)
        self.interval_ms = self.default_interval
        self.delays = [0] * self.channels
        self._k = None

    def update_hz(self) -> float:
        """Rounds of the firing slots per second."""
        return 1000.0 / (self.interval_ms * (max(self.slots) + 1))

    def data_block(self):
        """Fire the slots due since the last read (ray-cast in the world); status, SEQ, delays."""
        w = self.world
        nslots = max(self.slots) + 1
        k = int(math.floor(w.t * 1000.0 / self.interval_ms + 1e-9))
        if self._k is None:
            self._k = k - nslots
        firings = range(max(self._k + 1, k - nslots + 1), k + 1)
        self._k = k
        max_r = float(w.geo["sonar_max_range"])
        min_r = float(w.geo["sonar_min_range"])
        for f in firings:
            slot = f % nslots
            for ch in range(self.channels):
                if self.slots[ch] != slot or not self.enable & (1 << ch) or ch not in self.poses:
                    continue
                d = w.sonar_range(self.poses[ch])
                if d > max_r:
                    self.delays[ch] = 0  # no echo within the listening window
                else:
                    self.delays[ch] = range_to_delay_us(max(d, min_r), SOUND_SPEED)
            self.seq = (self.seq + 1) & 0xFF
        return regs.pack_ultrasonic(regs.ST_READY | self.status_extra, self.seq, self.delays)

    def control_regs(self):
        """Enable bits, firing interval and slots, as the registers read back."""
        values = {self.rm.enable: self.enable}
        hi, lo = regs.u16(self.interval_ms)
        values[self.rm.interval], values[self.rm.interval + 1] = hi, lo
        for ch, s in enumerate(self.slots):
            values[self.rm.slots + ch] = s
        return values

    def on_write(self, reg, data):
        """Firing interval (at least 5 ms) and firing slots."""
        if reg == self.rm.interval and len(data) >= 2:
            self.interval_ms = max(5, regs.from_u16(data))
        elif self.rm.slots <= reg < self.rm.slots + self.channels:
            for i, v in enumerate(data):
                if reg - self.rm.slots + i < self.channels:
                    self.slots[reg - self.rm.slots + i] = min(int(v), self.channels - 1)


class VirtualAccelBoard(VirtualBoard):
    """One-axis accelerometer: the world's forward acceleration plus noise."""

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.mg = 0

    def on_reset(self):
        """Power-on state: no acceleration read yet."""
        self.mg = 0

    def data_block(self):
        """The world's forward acceleration plus noise, in milli-g, when enabled."""
        w = self.world
        dk = self._ticks()
        if dk:
            if self.enable & 0x01:
                g = w.accel / G + w.rng.gauss(0.0, float(w.sim["accel_noise_g"]))
                self.mg = clamp_int(round(g * 1000.0), -32768, 32767)
            self.seq = (self.seq + dk) & 0xFF
        return list(regs.ACCEL_BLOCK.pack(regs.ST_READY | self.status_extra, self.seq, self.mg))
