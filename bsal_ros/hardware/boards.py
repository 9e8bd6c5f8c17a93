"""Board objects: the "system" view of the hardware (001 2.5).

A board owns one I2C address. It is polled on a timer slightly slower than
the board's own update rate with ONE block read of its data block (001 2.6),
and caches what it read; device objects read the cache. Bus faults
(``OSError``) are retried a bounded number of times; then the board is marked
down (statval ``up`` and ``ok`` cleared) with the errno in ``fault``, and it
recovers by itself on the next good poll. A board whose SEQ register stops
moving is "stuck": up, but not ok.
"""

from __future__ import annotations

import errno as _errno
import math
from dataclasses import dataclass

from . import registers as R
from .values import mposval_decode, mposval_encode, speedval_decode
from .values import speedval_sign as R_speed_sign


def errno_name(code: int | None) -> str:
    return _errno.errorcode.get(code or 0, f"errno {code}")


class BoardError(Exception):
    """A board transfer failed after its retries (or the board is known down)."""

    def __init__(self, board: "Board", code: int | None, message: str):
        super().__init__(message)
        self.board = board
        self.errno = code


@dataclass
class BoardEvent:
    """One state change worth one log line."""
    board: str
    level: str        # "info" | "warn" | "error"
    message: str


class Board:
    type = "base"

    def __init__(self, name: str, cfg: dict, bus, regmap: R.RegisterMap, retries: int = 2,
                 stuck_polls: int = 4):
        self.name = name
        self.cfg = cfg
        self.bus = bus
        self.rm = regmap
        self.address = int(cfg["address"])
        self.retries = int(retries)
        self.stuck_polls = int(stuck_polls)
        self.enable_mask = 0
        self.up = False
        self.ok = False
        self.fault = "not polled yet"
        self.errno: int | None = None
        self.status = 0
        self.seq: int | None = None
        self._same_seq = 0
        self.stamp: float | None = None      # wall time of the last good data
        self.mono: float | None = None       # clock time of the last good data
        self.prev_stamp: float | None = None
        self.rate_hz = 0.0                   # measured rate of new data (EMA)
        self.fresh_reads = 0
        self.next_due = 0.0
        self.polls = 0
        self.poll_failures = 0
        self.transfers_retried = 0
        self.events: list[BoardEvent] = []

    # ---- rates ---------------------------------------------------------
    def update_hz(self) -> float:
        return float(self.cfg["update_hz"])

    def poll_period(self) -> float:
        return 1.0 / float(self.cfg["poll_hz"])

    def data_len(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def hardware_id(self) -> str:
        return f"{self.bus.name}:{self.address:#04x}"

    # ---- I/O with bounded retries --------------------------------------
    def _io(self, fn, *args):
        last: OSError | None = None
        for attempt in range(self.retries + 1):
            try:
                out = fn(*args)
                if attempt:
                    self.transfers_retried += 1
                return out
            except OSError as exc:
                last = exc
        code = last.errno if last is not None else None
        raise BoardError(self, code, f"{errno_name(code)} after {self.retries} retries")

    def _mark_down(self, err: BoardError) -> None:
        was_up = self.up or self.fault == "not polled yet"
        self.up = False
        self.ok = False
        self.errno = err.errno
        msg = f"board {self.name} ({self.hardware_id}) not answering: {err}"
        if was_up or self.fault != msg:
            self.events.append(BoardEvent(self.name, "error", msg))
        self.fault = msg

    def _mark_good(self) -> None:
        if not (self.up and self.ok) and self.fault not in ("not polled yet", ""):
            self.events.append(BoardEvent(self.name, "info",
                                          f"board {self.name} ({self.hardware_id}) recovered"))
        self.up = True
        self.ok = True
        self.errno = None
        self.fault = ""

    def refuse_reason(self) -> str | None:
        """Why a command to this board cannot be carried out now (None: it can)."""
        if not self.up:
            return self.fault or f"board {self.name} ({self.hardware_id}) not answering"
        if not self.ok:
            return self.fault or f"board {self.name} not ok"
        return None

    def write(self, reg: int, data: list[int]) -> None:
        """Write registers; raises BoardError (and marks the board down) on failure."""
        try:
            if len(data) == 1:
                self._io(self.bus.write_byte_data, self.address, reg, data[0])
            else:
                self._io(self.bus.write_i2c_block_data, self.address, reg, list(data))
        except BoardError as err:
            self._mark_down(err)
            raise BoardError(self, err.errno, self.fault) from None

    def probe(self) -> bool:
        """Read WHO_AM_I; marks the board up or down."""
        try:
            who = self._io(self.bus.read_byte_data, self.address, self.rm.who_am_i)
        except BoardError as err:
            self._mark_down(err)
            return False
        if who != self.rm.who_am_i_value:
            self.up, self.ok = True, False
            self.fault = (f"board {self.name} ({self.hardware_id}): WHO_AM_I {who:#04x}, "
                          f"expected {self.rm.who_am_i_value:#04x}")
            self.events.append(BoardEvent(self.name, "error", self.fault))
            return False
        self._mark_good()
        return True

    def set_enable(self, mask: int) -> None:
        self.write(self.rm.enable, [mask & 0xFF])
        self.enable_mask = mask & 0xFF

    def command(self, cmd: int) -> None:
        self.write(self.rm.command, [cmd])

    # ---- polling ---------------------------------------------------------
    def poll(self, mono: float, wall: float) -> bool:
        """One block read of the data block. True when new data was cached."""
        self.polls += 1
        try:
            data = self._io(self.bus.read_i2c_block_data, self.address, self.rm.data,
                            self.data_len())
        except BoardError as err:
            self.poll_failures += 1
            self._mark_down(err)
            return False
        status, seq = data[0], data[1]
        self.status = status
        if self.seq is not None and seq == self.seq:
            self._same_seq += 1
            if self._same_seq >= self.stuck_polls:
                msg = (f"board {self.name} ({self.hardware_id}) stuck: sequence counter "
                       f"frozen at {seq} for {self._same_seq} polls")
                stuck_prefix = f"board {self.name} ({self.hardware_id}) stuck"
                if self.ok or not self.fault.startswith(stuck_prefix):
                    self.events.append(BoardEvent(self.name, "error", msg))
                self.up, self.ok, self.fault = True, False, msg
            else:
                self.up = True
            return False
        self._same_seq = 0
        self.seq = seq
        self._mark_good()
        if self.mono is not None and mono > self.mono:
            inst = 1.0 / (mono - self.mono)
            self.rate_hz = inst if self.fresh_reads < 2 else 0.8 * self.rate_hz + 0.2 * inst
        self.fresh_reads += 1
        self.prev_stamp = self.stamp
        self.stamp, self.mono = wall, mono
        self.decode(data, mono)
        return True

    def decode(self, data: list[int], mono: float) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def reset_cache(self) -> None:
        pass


class UltrasonicBoard(Board):
    type = "ultrasonic"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.channels = int(self.cfg["channels"])
        self.slots = [int(s) for s in self.cfg["slots"]]
        self.interval_ms = int(self.cfg["interval_ms"])
        self.margin = float(self.cfg.get("poll_margin", 1.04))
        self.delays = [0] * self.channels

    def update_hz(self) -> float:
        return 1000.0 / (self.interval_ms * (max(self.slots) + 1))

    def poll_period(self) -> float:
        return self.margin / self.update_hz()

    def data_len(self) -> int:
        return R.ultrasonic_block_len(self.channels)

    def decode(self, data, mono):
        _, _, delays = R.unpack_ultrasonic(data, self.channels)
        self.delays = delays

    def write_timing(self, slots: list[int], interval_ms: int) -> None:
        if interval_ms != self.interval_ms:
            self.write(self.rm.interval, R.u16(interval_ms))
        if slots != self.slots:
            self.write(self.rm.slots, list(slots))
        self.slots, self.interval_ms = list(slots), int(interval_ms)

    def reset_cache(self):
        self.slots = [int(s) for s in self.cfg["slots"]]
        self.interval_ms = int(self.cfg["interval_ms"])


ZERO_SPEED = 0x8000   # speedval: 0 % duty


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

    # ---- watchdog ----------------------------------------------------------
    def write_timeout(self) -> None:
        self.write(self.rm.timeout, R.u16(self.command_timeout_ms))
        self.timeout_written = True

    def command(self, cmd: int) -> None:
        super().command(cmd)
        if cmd == R.CMD_RESET:
            self.timeout_written = False   # the board is back to its own default

    def keepalive(self) -> None:
        self.write(self.rm.keepalive, [self.keepalives & 0xFF])
        self.keepalives += 1

    def watchdog_note(self) -> str:
        if self.command_timeout_ms:
            return (f"the board's own watchdog stops the motor within "
                    f"{self.command_timeout_ms} ms")
        return "the board's watchdog is off (command_timeout_ms 0)"

    # ---- the latched stop ----------------------------------------------------
    def latch_stop(self, speedval: int, now: float) -> None:
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
        Board.write(self, self.rm.speed, R.u16(sv))
        self.speed_set = sv

    def write(self, reg: int, data: list[int]) -> None:
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
        return not R_speed_sign(self.speed_set)

    def after_decode(self, status: int) -> None:
        timed_out = bool(status & R.ST_TIMEOUT)
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

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.reset_cache()

    def reset_cache(self):
        self.speed_set = 0x8000
        self.speed_meas = 0.0
        self.count: int | None = None
        self.d_count = 0
        self.total = 0       # unwrapped counts since the last clear
        self.stalled = False
        self.refused = False

    def data_len(self):
        return R.DC_BLOCK.size

    def decode(self, data, mono):
        st, _, sset, smeas, count = R.DC_BLOCK.unpack(bytes(data))
        self.speed_set = sset
        self.speed_meas = speedval_decode(smeas)[1]
        if self.count is None:
            self.d_count = 0
        else:
            self.d_count = R.to_i16(count - self.count)
        self.total += self.d_count
        self.count = count
        self.stalled = bool(st & R.ST_STALLED)
        self.refused = bool(st & R.ST_REFUSED)
        self.after_decode(st)

    def set_speedval(self, sv: int) -> None:
        self.write(self.rm.speed, R.u16(sv))
        self.speed_set = sv
        if R_speed_sign(sv):
            self.cancel_stop()      # a new command supersedes the latched stop

    def clear_count(self) -> None:
        self.command(R.CMD_CLEAR_COUNT)
        self.count = None
        self.total = 0
        self.d_count = 0


class PservoBoard(MotorBoard):
    """Steering pseudo-servo motor and the absolute steering encoder."""
    type = "pservo_motor"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.reset_cache()

    def reset_cache(self):
        self.speed_set = 0x8000
        self.position = 0.0
        self.mposval = 0
        self.count = 0
        self.phase = R.PHASE_IDLE
        self.homed = False
        self.homing = False
        self.stalled = False
        self.refused = False
        self.position_mode = False
        self.turning = False

    def data_len(self):
        return R.PSERVO_BLOCK.size

    def decode(self, data, mono):
        st, _, sset, mpos, count, phase = R.PSERVO_BLOCK.unpack(bytes(data))
        self.speed_set = sset
        self.mposval = mpos
        self.position = mposval_decode(mpos)
        self.turning = count != self.count
        self.count = count
        self.phase = phase
        self.homed = bool(st & R.ST_HOMED)
        self.homing = bool(st & R.ST_HOMING)
        self.stalled = bool(st & R.ST_STALLED)
        self.refused = bool(st & R.ST_REFUSED)
        self.position_mode = bool(st & R.ST_POSITION_MODE)
        self.after_decode(st)

    def stop_confirmed(self) -> bool:
        return not R_speed_sign(self.speed_set) and not self.position_mode and not self.homing

    def _write_stop(self, sv: int) -> None:
        if self.homing or self.phase in (R.PHASE_SEEKING, R.PHASE_BACKING_OFF,
                                         R.PHASE_CENTERING):
            Board.write(self, self.rm.command, [R.CMD_ABORT_HOME])
        Board.write(self, self.rm.speed, R.u16(sv))
        self.speed_set = sv
        self.position_mode = False

    def set_speedval(self, sv: int) -> None:
        self.write(self.rm.speed, R.u16(sv))
        self.speed_set = sv
        self.position_mode = False
        if R_speed_sign(sv):
            self.cancel_stop()

    def set_target(self, angle: float) -> None:
        self.write(self.rm.target, R.u32(mposval_encode(angle)))
        self.position_mode = True
        self.cancel_stop()


class AccelBoard(Board):
    type = "accelerometer"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.accel_g = 0.0

    def data_len(self):
        return R.ACCEL_BLOCK.size

    def decode(self, data, mono):
        _, _, mg = R.ACCEL_BLOCK.unpack(bytes(data))
        self.accel_g = mg / 1000.0

    def reset_cache(self):
        self.accel_g = 0.0


BOARD_CLASSES = {
    "ultrasonic": UltrasonicBoard,
    "dc_motor": DcMotorBoard,
    "pservo_motor": PservoBoard,
    "accelerometer": AccelBoard,
}


def angle_from_count(count: int, cpr: int) -> float:
    return count * 2.0 * math.pi / cpr
