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

"""The simulated motor boards: the drive motor with its relative encoder and
the steering pseudo-servo with its absolute encoder, each with the command
watchdog real motor controllers have. The common register file is
:class:`~.sim_boards.VirtualBoard`.
"""

from __future__ import annotations

import math

from . import registers as regs
from .sim_boards import VirtualBoard
from ..core.units import angle_in_counts, angle_to_counts, wrap_angle
from ..protocol.values import (mposval_pack_rad, mposval_unpack_rad, speedval_pack, speedval_sign,
                               speedval_unpack)


class VirtualMotorBoard(VirtualBoard):
    """A motor board with its own command watchdog, as real motor controllers have.

    TIMEOUT (2 bytes, ms; 0 = off; power-on / reset default = the board's
    ``command_timeout_ms``) and KEEPALIVE (write anything). Every write that
    reaches the board feeds the watchdog; when none came for TIMEOUT ms the
    board stops its motor by itself (:meth:`expire`) and sets ST_TIMEOUT until
    the next speed/target write. The check runs on the board's own clock (the
    world's time, every physics step), not on the node's: it stops the motor
    when the node is killed, the bus is lost, or the writes are lost.
    """

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.default_timeout_ms = int(board.get("command_timeout_ms", 500))
        self.timeout_ms = self.default_timeout_ms
        self.fed_at: float | None = None      # world time of the last write
        self.watchdog_trips = 0
        world.watchdogs.append(self.watchdog)

    def feed(self) -> None:
        """A write arrived: the command watchdog starts again."""
        self.fed_at = self.world.t

    def watchdog(self, t: float) -> None:
        """Stop the motor when no write came for the timeout (world clock)."""
        if self.fed_at is None:
            self.fed_at = t
            return
        if self.timeout_ms and t - self.fed_at > self.timeout_ms / 1000.0 + 1e-9:
            self.fed_at = t  # re-armed: expire() is idempotent anyway
            if self.expire():
                self.watchdog_trips += 1
                self.status_extra |= regs.ST_TIMEOUT

    def expire(self) -> bool:  # pragma: no cover - abstract
        """Stop the motor; True when it was driven (worth ST_TIMEOUT)."""
        raise NotImplementedError

    def control_regs(self):
        """The common registers and the command watchdog's TIMEOUT."""
        values = super().control_regs()
        values[self.rm.timeout], values[self.rm.timeout + 1] = regs.u16(self.timeout_ms)
        return values

    def write(self, reg, data):
        """Every write feeds the watchdog; KEEPALIVE does nothing else, TIMEOUT sets it."""
        self.feed()
        if reg == self.rm.keepalive:
            return
        if reg == self.rm.timeout:
            if len(data) >= 2:
                self.timeout_ms = regs.from_u16(data)
            return
        super().write(reg, data)

    def on_command(self, cmd):
        """A reset also restores the power-on watchdog timeout."""
        super().on_command(cmd)
        if cmd == regs.CMD_RESET:
            self.timeout_ms = self.default_timeout_ms


class VirtualDcMotorBoard(VirtualMotorBoard):
    """Drive motor + relative encoder."""

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.cpr = int(world.geo["drive_encoder_cpr"])
        self.on_reset()

    #: only the first DC motor board drives the world's wheel; any other one is a
    #: spare motor on the bench (its speed follows its command, no encoder ticks)
    drives_world = True

    @classmethod
    def from_description(cls, world, name, board, regmap, robot, bus):
        """The board; it drives the world's wheel unless another DC board on ``bus`` does."""
        vb = cls(world, board, regmap)
        vb.drives_world = not any(isinstance(o, cls) for o in bus.attached())
        return vb

    def expire(self) -> bool:
        """Command zero speed; True when the wheel was being driven."""
        if not speedval_sign(self.speed_set):
            return False
        self.speed_set = 0x8000
        self._command((True, 0.0))
        return True

    def _command(self, cmd) -> None:
        if self.drives_world:
            self.world.drive_cmd = cmd

    def on_reset(self):
        """Power-on state: zero speed, encoder counting from here."""
        self.speed_set = 0x8000  # 0 % duty
        self.count_origin = self.world.phi
        self.count = 0
        self.meas = 0.0
        self._command((True, 0.0))

    def on_enable(self):
        """Only the board that drives the world's wheel switches it."""
        if self.drives_world:
            self.world.drive_enabled = bool(self.enable & regs.EN_MOTOR)

    def on_command(self, cmd):
        """CLEAR_COUNT zeroes the encoder."""
        super().on_command(cmd)
        if cmd == regs.CMD_CLEAR_COUNT:
            self.count_origin = self.world.phi
            self.count = 0

    def on_write(self, reg, data):
        """A speed; a reversal while the wheel still turns is refused, as the real board does."""
        if reg == self.rm.speed and len(data) >= 2:
            sv = regs.from_u16(data)
            cur = speedval_sign(self.speed_set)
            new = speedval_sign(sv)
            if cur and new and cur != new and abs(self._wheel()) > 0.02:
                self.status_extra |= regs.ST_REFUSED  # as the real boards: ignored
                return
            self.status_extra &= ~(regs.ST_REFUSED | regs.ST_TIMEOUT)
            self.speed_set = sv
            self._command(speedval_unpack(sv))

    def _wheel(self) -> float:
        """The motor's speed, rad/s."""
        if self.drives_world:
            return self.world.w
        if not self.enable & regs.EN_MOTOR:
            return 0.0
        duty, val = speedval_unpack(self.speed_set)
        return val / 100.0 * float(self.world.sim["drive_noload_speed"]) if duty else val

    def data_block(self):
        """Status, SEQ, commanded and measured speed, encoder count."""
        w = self.world
        dk = self._ticks()
        if dk:
            if self.enable & regs.EN_ENCODER and self.drives_world:
                self.count = math.floor(angle_in_counts(w.phi - self.count_origin, self.cpr))
            self.meas = self._wheel()
            self.seq = (self.seq + dk) & 0xFF
        stalled = self.drives_world and w.stalled["drive"]
        st = regs.ST_READY | self.status_extra | (regs.ST_STALLED if stalled else 0)
        return list(regs.DC_BLOCK.pack(st, self.seq, self.speed_set,
                                       speedval_pack(False, self.meas), regs.to_i16(self.count)))


class VirtualPservoBoard(VirtualMotorBoard):
    """Steering pseudo-servo motor + absolute steering encoder."""

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.cpr = int(world.geo["steering_encoder_cpr"])
        self.on_reset()

    def expire(self) -> bool:
        """Speed mode: speed 0; position mode: hold where it is; homing: abort."""
        w = self.world
        if w.steer_mode == "homing":
            w.abort_homing(regs.PHASE_CANCELLED)
            self.speed_set = 0x8000
            return True
        if w.steer_mode == "position":
            moving = abs(w.steer_target - w.steer) > 1e-3 or abs(w.steer_rate) > 1e-3
            w.steer_target = w.steer
            return moving
        if speedval_unpack(self.speed_set)[1] == 0.0:
            return False
        self.speed_set = 0x8000
        w.steer_cmd = (True, 0.0)
        return True

    def on_reset(self):
        """Power-on state: zero speed, homing aborted, speed mode."""
        self.speed_set = 0x8000
        self.count = 0
        self.position = 0.0
        self.world.abort_homing(regs.PHASE_IDLE)
        self.world.steer_mode = "speed"
        self.world.steer_cmd = (True, 0.0)
        self.world.homing_phase = regs.PHASE_IDLE

    def on_enable(self):
        """Switch the steering motor; switching it off cancels a homing."""
        self.world.steer_enabled = bool(self.enable & regs.EN_MOTOR)
        if not self.world.steer_enabled:
            self.world.abort_homing(regs.PHASE_CANCELLED)

    def on_command(self, cmd):
        """HOME (refused while the motor is off) and ABORT_HOME."""
        super().on_command(cmd)
        if cmd == regs.CMD_HOME:
            if self.enable & regs.EN_MOTOR:
                self.world.start_homing()
                self.status_extra &= ~regs.ST_REFUSED
            else:
                self.status_extra |= regs.ST_REFUSED
        elif cmd == regs.CMD_ABORT_HOME:
            self.world.abort_homing(regs.PHASE_CANCELLED)

    def on_write(self, reg, data):
        """A speed, or a target position once homed; refused while homing or for a reversal
        while the steering turns."""
        w = self.world
        if w.steer_mode == "homing" and reg in (self.rm.speed, self.rm.target):
            self.status_extra |= regs.ST_REFUSED
            return
        if reg == self.rm.speed and len(data) >= 2:
            sv = regs.from_u16(data)
            cur = speedval_sign(self.speed_set) if w.steer_mode == "speed" else 0
            new = speedval_sign(sv)
            if cur and new and cur != new and abs(w.steer_rate) > 0.02:
                self.status_extra |= regs.ST_REFUSED
                return
            self.status_extra &= ~(regs.ST_REFUSED | regs.ST_TIMEOUT)
            self.speed_set = sv
            w.steer_mode = "speed"
            w.steer_cmd = speedval_unpack(sv)
        elif reg == self.rm.target and len(data) >= 4:
            if not w.homed:
                self.status_extra |= regs.ST_REFUSED
                return
            self.status_extra &= ~(regs.ST_REFUSED | regs.ST_TIMEOUT)
            w.steer_target = max(-w.limit, min(w.limit, mposval_unpack_rad(regs.from_u32(data))))
            w.steer_mode = "position"

    def data_block(self):
        """Status, SEQ, commanded speed, motor position, encoder count, homing phase."""
        w = self.world
        dk = self._ticks()
        if dk:
            if self.enable & regs.EN_ENCODER:
                self.count = angle_to_counts(wrap_angle(w.steer), self.cpr)
            self.position = w.steer - w.motor_origin
            self.seq = (self.seq + dk) & 0xFF
        st = regs.ST_READY | self.status_extra
        if w.stalled["steering"]:
            st |= regs.ST_STALLED
        if w.steer_mode == "homing":
            st |= regs.ST_HOMING
        if w.homed:
            st |= regs.ST_HOMED
        if w.steer_mode == "position":
            st |= regs.ST_POSITION_MODE
        return list(regs.PSERVO_BLOCK.pack(st, self.seq, self.speed_set,
                                           mposval_pack_rad(self.position),
                                           regs.to_i16(self.count), w.homing_phase))
