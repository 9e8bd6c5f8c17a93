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

"""Motor boards: the drive (dc_motor) and the steering (pservo_motor).

Both share the command watchdog, its keep-alive and the latched stop
(:class:`MotorBoard`); the drive board carries the relative encoder, the
steering board the absolute encoder and the homing sequence.
"""

from __future__ import annotations

from . import registers as regs
from .boards import Board, BoardError, BoardEvent
from ..protocol.values import (mposval_pack_rad, mposval_unpack_rad, speedval_sign, speedval_unpack,
                               SPEEDVAL_ZERO)

ZERO_SPEED = SPEEDVAL_ZERO   # speedval: 0 % duty


class MotorBoard(Board):
    """A board with a motor: command watchdog, keep-alive and the latched stop.

    The board stops its motor by itself when no write arrived for
    ``command_timeout_ms`` (register TIMEOUT, written at start-up); the poller
    sends a KEEPALIVE on every poll of a healthy board (:meth:`refresh`).

    A stop that cannot be written (the board is down, stuck, or the write
    fails) is latched: :meth:`write` sends it before anything else written to
    the board, :meth:`refresh` re-sends it on every poll that the board
    answers, and it is cleared when a fresh reading, after the stop was
    written to the healthy board, shows the motor commanded to zero (or a new
    command supersedes it). So the first write to a board that comes back is
    always the stop, even when its own watchdog already stopped the motor.
    """

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.command_timeout_ms = int(self.cfg.get("command_timeout_ms", 500))
        self.stop_pending = False
        self.stop_speedval = ZERO_SPEED
        self.stop_latched_at: float | None = None   # clock time the stop was latched
        self.stop_resends = 0
        self.stops_latched = 0
        self.keepalives = 0
        self.timed_out = False    # ST_TIMEOUT: the board's watchdog stopped the motor
        self._flushing = False
        self._stop_sent_ok = False   # the stop was written while the board was healthy
        self.timeout_written = False  # TIMEOUT holds our command_timeout_ms
        self.reset_cache()

    def reset_cache(self):
        """Forget what was read: the motor commanded to zero, no stall, no refusal."""
        self.speed_set = ZERO_SPEED
        self.stalled = False
        self.refused = False

    # ---- watchdog ----------------------------------------------------------
    def write_timeout(self) -> None:
        """Write our command timeout into the board's watchdog register."""
        self.write(self.rm.timeout, regs.u16(self.command_timeout_ms))
        self.timeout_written = True

    def command(self, cmd: int) -> None:
        """Write a COMMAND; after a reset the watchdog register is the board's own again."""
        super().command(cmd)
        if cmd == regs.CMD_RESET:
            self.timeout_written = False   # the board is back to its own default

    def keepalive(self) -> None:
        """Feed the board's command watchdog."""
        self.write(self.rm.keepalive, [self.keepalives & 0xFF])
        self.keepalives += 1

    def watchdog_note(self) -> str:
        """One phrase on what the board's watchdog does, for log lines."""
        if self.command_timeout_ms:
            return (f"the board's own watchdog stops the motor within "
                    f"{self.command_timeout_ms} ms")
        return "the board's watchdog is off (command_timeout_ms 0)"

    # ---- the latched stop ----------------------------------------------------
    def latch_stop(self, speedval: int, now: float) -> None:
        """Latch a stop that could not be written (logged once per latch)."""
        if not self.stop_pending:
            self.stop_latched_at = now
            self.stops_latched += 1
            self.events.append(BoardEvent(
                self.name, "warn", f"board {self.name}: stop latched ({self.fault or 'not ok'}): "
                                   f"re-sent when the board answers; {self.watchdog_note()}"))
        self.stop_pending = True
        self.stop_speedval = speedval
        self._stop_sent_ok = False

    def cancel_stop(self) -> None:
        """Drop the latched stop (confirmed, or superseded by a command)."""
        self.stop_pending = False
        self.stop_latched_at = None

    def send_stop(self) -> None:
        """Write the latched stop now (raises BoardError); it stays latched until confirmed."""
        self._flushing = True
        try:
            self._write_stop(self.stop_speedval)
            self.stop_resends += 1
            # a write to a stuck board is not trusted: only one to a healthy board counts
            self._stop_sent_ok = self.up and self.ok
        finally:
            self._flushing = False

    def _write_stop(self, sv: int) -> None:
        Board.write(self, self.rm.speed, regs.u16(sv))
        self.speed_set = sv

    def write(self, reg: int, data: list[int]) -> None:
        """Write registers; a latched stop goes first."""
        if self.stop_pending and not self._flushing:
            self.send_stop()           # the stop goes first, whatever else is written
        super().write(reg, data)

    def refresh(self) -> None:
        """After a poll: re-send a latched stop to a board that answers, else feed
        the watchdog of a healthy board. Errors are left to the next poll."""
        try:
            if self.stop_pending:
                if self.up:
                    self.send_stop()
            elif self.up and self.ok:
                if not self.timeout_written:   # down at start-up, or reset since
                    self.write_timeout()
                elif self.command_timeout_ms:
                    self.keepalive()
        except BoardError:
            pass

    def stop_confirmed(self) -> bool:
        """The board reports its motor commanded to zero."""
        return not speedval_sign(self.speed_set)

    def after_decode(self, status: int) -> None:
        """Watchdog and latched-stop bookkeeping after a fresh read."""
        timed_out = bool(status & regs.ST_TIMEOUT)
        if timed_out and not self.timed_out:
            self.events.append(BoardEvent(
                self.name, "warn", f"board {self.name}: its command watchdog stopped the motor "
                                   f"(no write for {self.command_timeout_ms} ms)"))
        self.timed_out = timed_out
        if self.stop_pending and self.ok and self._stop_sent_ok and self.stop_confirmed():
            self.events.append(BoardEvent(
                self.name, "info", f"board {self.name}: latched stop applied "
                                   f"(re-sent {self.stop_resends} times)"))
            self.cancel_stop()
            self.stop_resends = 0


class DcMotorBoard(MotorBoard):
    """Drive motor (channel 0) and the relative encoder on the drive wheel."""

    type = "dc_motor"

    def reset_cache(self):
        """Forget what was read (reset, or start-up)."""
        super().reset_cache()
        self.speed_meas = 0.0
        self.count: int | None = None
        self.d_count = 0
        self.total = 0       # unwrapped counts since the last clear

    def data_len(self):
        """Bytes of the drive board's data block."""
        return regs.DC_BLOCK.size

    def decode(self, data, mono):
        """Speeds, encoder count (unwrapped into total), status bits."""
        st, _, sset, smeas, count = regs.DC_BLOCK.unpack(bytes(data))
        self.speed_set = sset
        self.speed_meas = speedval_unpack(smeas)[1]
        if self.count is None:
            self.d_count = 0
        else:
            self.d_count = regs.to_i16(count - self.count)
        self.total += self.d_count
        self.count = count
        self.stalled = bool(st & regs.ST_STALLED)
        self.refused = bool(st & regs.ST_REFUSED)
        self.after_decode(st)

    def set_speedval(self, sv: int) -> None:
        """Command a speed (a non-zero one supersedes a latched stop)."""
        self.write(self.rm.speed, regs.u16(sv))
        self.speed_set = sv
        if speedval_sign(sv):
            self.cancel_stop()      # a new command supersedes the latched stop

    def clear_count(self) -> None:
        """Zero the encoder on the board and here."""
        self.command(regs.CMD_CLEAR_COUNT)
        self.count = None
        self.total = 0
        self.d_count = 0


class PservoBoard(MotorBoard):
    """Steering pseudo-servo motor and the absolute steering encoder."""

    type = "pservo_motor"

    def reset_cache(self):
        """Forget what was read (reset, or start-up)."""
        super().reset_cache()
        self.position = 0.0
        self.mposval = 0
        self.count = 0
        self.phase = regs.PHASE_IDLE
        self.homed = False
        self.homing = False
        self.position_mode = False
        self.turning = False

    def data_len(self):
        """Bytes of the steering board's data block."""
        return regs.PSERVO_BLOCK.size

    def decode(self, data, mono):
        """Speed, position, encoder count, homing phase, status bits."""
        st, _, sset, mpos, count, phase = regs.PSERVO_BLOCK.unpack(bytes(data))
        self.speed_set = sset
        self.mposval = mpos
        self.position = mposval_unpack_rad(mpos)
        self.turning = count != self.count
        self.count = count
        self.phase = phase
        self.homed = bool(st & regs.ST_HOMED)
        self.homing = bool(st & regs.ST_HOMING)
        self.stalled = bool(st & regs.ST_STALLED)
        self.refused = bool(st & regs.ST_REFUSED)
        self.position_mode = bool(st & regs.ST_POSITION_MODE)
        self.after_decode(st)

    def stop_confirmed(self) -> bool:
        """Stopped: zero speed, not in position mode, not homing."""
        return not speedval_sign(self.speed_set) and not self.position_mode and not self.homing

    def _write_stop(self, sv: int) -> None:
        if self.homing or self.phase in (regs.PHASE_SEEKING, regs.PHASE_BACKING_OFF,
                                         regs.PHASE_CENTERING):
            Board.write(self, self.rm.command, [regs.CMD_ABORT_HOME])
        Board.write(self, self.rm.speed, regs.u16(sv))
        self.speed_set = sv
        self.position_mode = False

    def set_speedval(self, sv: int) -> None:
        """Command a speed (speed mode)."""
        self.write(self.rm.speed, regs.u16(sv))
        self.speed_set = sv
        self.position_mode = False
        if speedval_sign(sv):
            self.cancel_stop()

    def set_target(self, angle: float) -> None:
        """Command a steering angle in rad (position mode)."""
        self.write(self.rm.target, regs.u32(mposval_pack_rad(angle)))
        self.position_mode = True
        self.cancel_stop()
