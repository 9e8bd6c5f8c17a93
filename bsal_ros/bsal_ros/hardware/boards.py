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

from dataclasses import dataclass
import errno as _errno

from . import registers as regs
from .bus import BusUnavailable


def errno_name(code: int | None) -> str:
    """errno code -> its symbolic name (EIO, ENXIO...), or 'errno N'."""
    return _errno.errorcode.get(code or 0, f"errno {code}")


class BoardError(Exception):
    """A board transfer failed after its retries (or the board is known down)."""

    def __init__(self, board: "Board", code: int | None, message: str,
                 bus_unavailable: bool = False):
        super().__init__(message)
        self.board = board
        self.errno = code
        self.bus_unavailable = bus_unavailable   # the bus itself is not open


@dataclass
class BoardEvent:
    """One state change worth one log line."""

    board: str
    level: str        # "info" | "warn" | "error"
    message: str


class Board:
    """One board at one I2C address: polled, cached, marked down and up by itself."""

    type = "base"

    def __init__(self, name: str, cfg: dict, bus, regmap: regs.RegisterMap, retries: int = 2,
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
        """How often the board makes new data (Hz)."""
        return float(self.cfg["update_hz"])

    def poll_period(self) -> float:
        """Seconds between two polls of the board."""
        return 1.0 / float(self.cfg["poll_hz"])

    def data_len(self) -> int:  # pragma: no cover - abstract
        """Bytes of the data block read per poll."""
        raise NotImplementedError

    @property
    def hardware_id(self) -> str:
        """``<bus>:<address>`` for diagnostics."""
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
            except BusUnavailable as exc:   # no adapter: retrying now cannot help
                raise BoardError(self, exc.errno, exc.strerror, bus_unavailable=True) from None
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
        # a bus that cannot be opened is logged once by the bus, not once per board
        if (was_up or self.fault != msg) and not err.bus_unavailable:
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
        """Write the ENABLE mask (which channels or devices run)."""
        self.write(self.rm.enable, [mask & 0xFF])
        self.enable_mask = mask & 0xFF

    def command(self, cmd: int) -> None:
        """Write one COMMAND register value (reset, clear, home...)."""
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
        """Cache the values of a fresh data block."""
        raise NotImplementedError

    def reset_cache(self) -> None:
        """Forget what was read (after a reset)."""
        pass


class UltrasonicBoard(Board):
    """Up to N sonar channels fired in slots; one echo delay per channel."""

    type = "ultrasonic"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.channels = int(self.cfg["channels"])
        self.slots = [int(s) for s in self.cfg["slots"]]
        self.interval_ms = int(self.cfg["interval_ms"])
        self.margin = float(self.cfg.get("poll_margin", 1.04))
        self.delays = [0] * self.channels

    def update_hz(self) -> float:
        """One full round of the firing slots per interval: rounds per second."""
        return 1000.0 / (self.interval_ms * (max(self.slots) + 1))

    def poll_period(self) -> float:
        """A little longer than a round, so every poll finds new echoes."""
        return self.margin / self.update_hz()

    def data_len(self) -> int:
        """Status, SEQ and one 16-bit delay per channel."""
        return regs.ultrasonic_block_len(self.channels)

    def decode(self, data, mono):
        """Cache the echo delays (us) of every channel."""
        _, _, delays = regs.unpack_ultrasonic(data, self.channels)
        self.delays = delays

    def write_timing(self, slots: list[int], interval_ms: int) -> None:
        """Write the firing slots and the firing interval (only what changed)."""
        if interval_ms != self.interval_ms:
            self.write(self.rm.interval, regs.u16(interval_ms))
        if slots != self.slots:
            self.write(self.rm.slots, list(slots))
        self.slots, self.interval_ms = list(slots), int(interval_ms)

    def reset_cache(self):
        """A reset board fires with the described slots and interval again."""
        self.slots = [int(s) for s in self.cfg["slots"]]
        self.interval_ms = int(self.cfg["interval_ms"])


class AccelBoard(Board):
    """The one-axis accelerometer board (milli-g)."""

    type = "accelerometer"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.accel_g = 0.0

    def data_len(self):
        """Bytes of the accelerometer's data block."""
        return regs.ACCEL_BLOCK.size

    def decode(self, data, mono):
        """Cache the acceleration (milli-g on the wire) in g."""
        _, _, mg = regs.ACCEL_BLOCK.unpack(bytes(data))
        self.accel_g = mg / 1000.0

    def reset_cache(self):
        """Forget the last acceleration (reset, or start-up)."""
        self.accel_g = 0.0
