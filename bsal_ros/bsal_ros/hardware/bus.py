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

"""One I2C bus interface, interchangeable backends (python-can style).

Backends:

* ``sim``    - :class:`SimBus`: virtual boards answer the same register reads
  and writes as the real ones; fault injection per address (error rate,
  stuck, missing).
* ``smbus2`` - :class:`Smbus2Bus`: ``/dev/i2c-N`` through smbus2 (imported
  lazily, so the simulation works without it). One ``SMBus`` per bus behind a
  lock.

Both raise ``OSError`` with a kernel errno (EIO, EREMOTEIO, ENXIO, ETIMEDOUT)
on a bus fault, exactly as smbus2 does, so board code handles one error type.
Every backend counts transactions and bytes (:class:`BusStats`) for the
benchmark and diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass
import errno
import os
import random
import threading
import time
from typing import Callable, Protocol

I2C_BLOCK_MAX = 32  # SMBus/I2C block transfer limit of the kernel interface


def i2c_wire_bits(n_bytes: int, write: bool = False) -> int:
    """Bit times an N-byte register block transfer takes on the wire.

    A read is START, address+W, register, repeated START, address+R, N data
    bytes, STOP: about 30 + 9N bit times. A write needs no repeated start:
    about 20 + 9N.
    """
    return (20 if write else 30) + 9 * n_bytes


def i2c_wire_time(n_bytes: int, write: bool = False, clock_hz: float = 100e3) -> float:
    """Seconds an N-byte block transfer takes at ``clock_hz``."""
    return i2c_wire_bits(n_bytes, write) / clock_hz


@dataclass
class BusStats:
    """Transfer counters of one bus (for the benchmark and diagnostics)."""

    transactions: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    errors: int = 0
    wire_bits: int = 0

    def snapshot(self) -> "BusStats":
        """A copy of the counters now."""
        return BusStats(self.transactions, self.bytes_read, self.bytes_written,
                        self.errors, self.wire_bits)


class I2CBus(Protocol):
    """What boards need from a bus. Addresses are 7-bit."""

    name: str
    stats: BusStats

    def read_byte_data(self, addr: int, reg: int) -> int:
        """One register byte."""

    def write_byte_data(self, addr: int, reg: int, value: int) -> None:
        """Write one register byte."""

    def read_i2c_block_data(self, addr: int, reg: int, length: int) -> list[int]:
        """A block of registers in one transfer."""

    def write_i2c_block_data(self, addr: int, reg: int, data: list[int]) -> None:
        """Write a block of registers in one transfer."""

    def close(self) -> None:
        """Release the bus."""


def _check(addr: int, reg: int, length: int = 1) -> None:
    if not 0x03 <= addr <= 0x77:
        raise ValueError(f"7-bit I2C address out of range: {addr:#x}")
    if not 0 <= reg <= 0xFF:
        raise ValueError(f"register out of range: {reg:#x}")
    if not 0 < length <= I2C_BLOCK_MAX:
        raise ValueError(f"block length {length} outside 1..{I2C_BLOCK_MAX}")


OPEN_RETRY_S = 2.0   # how often a bus that cannot be opened is tried again


class BusUnavailable(OSError):
    """The bus device itself cannot be opened (missing, forbidden): no board can
    answer. Its message says what, why and what to do."""


def open_failure_text(path: str, exc: OSError) -> str:
    """One line for a bus that cannot be opened: what, why, what to do."""
    why = exc.strerror or str(exc)
    if isinstance(exc, PermissionError):
        todo = "add the user to the i2c group (then log in again), or check the device's mode"
    else:
        todo = "check i2c_bus, load the i2c-dev module (modprobe i2c-dev), enable the I2C adapter"
    return f"cannot open {path}: {why}; {todo}; retrying every {OPEN_RETRY_S:g} s"


class Smbus2Bus:
    """``/dev/i2c-N`` through smbus2; one SMBus object behind a lock.

    The device is opened on first use and, while it cannot be opened (no
    ``/dev/i2c-N``, no permission), again at most every ``retry_s`` seconds:
    every transfer meanwhile fails at once with :class:`BusUnavailable`, so
    the boards are down with the reason and the node keeps running; the bus
    is picked up when the device appears. One event per episode goes to
    ``events`` (not one per transfer)."""

    def __init__(self, bus: int, smbus_factory: Callable[[int], object] | None = None,
                 name: str | None = None, clock: Callable[[], float] = time.monotonic,
                 retry_s: float = OPEN_RETRY_S):
        if smbus_factory is None:
            try:
                from smbus2 import SMBus  # lazy: the sim must not need smbus2
            except ImportError as exc:  # pragma: no cover - depends on install
                raise RuntimeError(
                    "bus_backend 'smbus2' needs the smbus2 package (pip install smbus2)"
                ) from exc
            smbus_factory = SMBus
        self.name = name or f"i2c-{bus}"
        self.path = f"/dev/i2c-{bus}"
        self.number = int(bus)
        self.stats = BusStats()
        self.events: list = []       # BoardEvent-like (board, level, message) tuples
        self.open_error = ""         # why the device is not open ("" once open)
        self.open_attempts = 0
        self._factory = smbus_factory
        self._clock = clock
        self._retry_s = float(retry_s)
        self._next_open = 0.0
        self._lock = threading.Lock()
        self._bus = None
        with self._lock:
            self._try_open()

    @property
    def is_open(self) -> bool:
        """The device is open (transfers reach the adapter)."""
        return self._bus is not None

    def _try_open(self) -> None:
        """Open the device unless a retry is not due yet (caller holds the lock)."""
        now = self._clock()
        if self._bus is not None or now < self._next_open:
            return
        self.open_attempts += 1
        try:
            self._bus = self._factory(self.number)
        except OSError as exc:
            self._next_open = now + self._retry_s
            text = open_failure_text(self.path, exc)
            if text != self.open_error:      # once per episode (and per new reason)
                self.events.append(("", "error", text))
            self.open_error = text
            return
        if self.open_error:
            self.events.append(("", "info", f"opened {self.path} after {self.open_attempts} "
                                            f"attempts"))
        self.open_error = ""

    def _run(self, fn, n_read: int, n_written: int, wire_bits: int):
        with self._lock:
            self._try_open()
            if self._bus is None:
                raise BusUnavailable(errno.ENODEV, self.open_error)
            self.stats.transactions += 1
            self.stats.wire_bits += wire_bits
            try:
                out = fn()
            except OSError:
                self.stats.errors += 1
                raise
            self.stats.bytes_read += n_read
            self.stats.bytes_written += n_written
            return out

    def read_byte_data(self, addr, reg):
        """One register byte."""
        _check(addr, reg)
        return self._run(lambda: self._bus.read_byte_data(addr, reg), 1, 0, i2c_wire_bits(1))

    def write_byte_data(self, addr, reg, value):
        """Write one register byte."""
        _check(addr, reg)
        self._run(lambda: self._bus.write_byte_data(addr, reg, value & 0xFF), 0, 1,
                  i2c_wire_bits(1, True))

    def read_i2c_block_data(self, addr, reg, length):
        """A block of ``length`` registers in one transfer."""
        _check(addr, reg, length)
        return list(self._run(lambda: self._bus.read_i2c_block_data(addr, reg, length),
                              length, 0, i2c_wire_bits(length)))

    def write_i2c_block_data(self, addr, reg, data):
        """Write a block of registers in one transfer."""
        data = [b & 0xFF for b in data]
        _check(addr, reg, len(data))
        self._run(lambda: self._bus.write_i2c_block_data(addr, reg, data), 0, len(data),
                  i2c_wire_bits(len(data), True))

    def close(self):
        """Close the device (if it was ever opened)."""
        with self._lock:
            close = getattr(self._bus, "close", None)
            if close:
                close()


class VirtualDevice(Protocol):
    """A simulated board on a :class:`SimBus`: a register file with behaviour."""

    def read(self, reg: int, length: int) -> list[int]:
        """Registers reg.. reg+length-1."""

    def write(self, reg: int, data: list[int]) -> None:
        """Write registers from reg on."""


FAULT_KINDS = ("error_rate", "stuck", "missing", "stall")
_RANDOM_ERRNOS = (errno.EIO, errno.EREMOTEIO, errno.ETIMEDOUT)


@dataclass
class AddressFault:
    """The faults injected at one address."""

    error_rate: float = 0.0
    stuck: bool = False
    missing: bool = False
    frozen: dict | None = None  # register image served while stuck


def bus_error(code: int, what: str = "") -> OSError:
    """An OSError with a kernel errno, as smbus2 raises it."""
    return OSError(code, f"{os.strerror(code)}{': ' + what if what else ''}")


class SimBus:
    """A simulated I2C bus (python-can's ``virtual`` bus is the model).

    Virtual boards attach at an address; transactions go to their register
    handlers. Faults per address:

    * ``error_rate`` r: each transaction fails with probability r with EIO,
      EREMOTEIO or ETIMEDOUT (seeded RNG);
    * ``missing``: nothing acknowledges the address: ENXIO every time;
    * ``stuck``: the board answers but its registers are frozen (reads return
      the image taken when the fault was set; writes are acknowledged and lost).
    """

    def __init__(self, name: str = "sim", seed: int = 0,
                 before_access: Callable[[], None] | None = None):
        self.name = name
        self.stats = BusStats()
        self._devices: dict[int, VirtualDevice] = {}
        self._faults: dict[int, AddressFault] = {}
        self._rng = random.Random(seed ^ 0x5EED)
        # re-entrant: the simulator's controls edit the world under it and then
        # set faults, which take it again
        self.lock = threading.RLock()
        self.simulation = None   # the sim-only controls, set by the sim backend
        self.before_access = before_access  # e.g. advance the simulated world
        self.sim_cpu_s = 0.0  # thread CPU spent simulating (world + virtual boards)

    def attach(self, addr: int, device: VirtualDevice) -> None:
        """Put a virtual board at an address."""
        _check(addr, 0)
        if addr in self._devices:
            raise ValueError(f"address {addr:#04x} already taken on {self.name}")
        self._devices[addr] = device

    def device(self, addr: int) -> VirtualDevice | None:
        """The virtual board at an address (None: nothing attached)."""
        return self._devices.get(addr)

    def attached(self) -> list[VirtualDevice]:
        """Every virtual board on the bus."""
        return list(self._devices.values())

    # ---- fault injection -------------------------------------------------
    def set_fault(self, addr: int, kind: str, rate: float = 1.0) -> None:
        """Inject a fault at an address: error_rate, missing or stuck."""
        with self.lock:
            f = self._faults.setdefault(addr, AddressFault())
            if kind == "error_rate":
                if not 0.0 <= rate <= 1.0:
                    raise ValueError("error rate must be within 0..1")
                f.error_rate = rate
            elif kind == "missing":
                f.missing = True
            elif kind == "stuck":
                f.stuck = True
                f.frozen = None  # captured on the next read
            else:
                raise ValueError(f"unknown bus fault {kind!r}")

    def clear_faults(self, addr: int | None = None) -> None:
        """Remove the faults of one address (None: all)."""
        with self.lock:
            if addr is None:
                self._faults.clear()
            else:
                self._faults.pop(addr, None)

    def faults(self, addr: int) -> AddressFault:
        """The faults of an address (none: a default AddressFault)."""
        return self._faults.get(addr, AddressFault())

    # ---- transactions ----------------------------------------------------
    def _transact(self, addr: int, wire_bits: int):
        self.stats.transactions += 1
        self.stats.wire_bits += wire_bits
        f = self._faults.get(addr)
        dev = self._devices.get(addr)
        if dev is None or (f is not None and f.missing):
            self.stats.errors += 1
            raise bus_error(errno.ENXIO, f"no device at {addr:#04x} on {self.name}")
        if f is not None and f.error_rate > 0.0 and self._rng.random() < f.error_rate:
            self.stats.errors += 1
            raise bus_error(self._rng.choice(_RANDOM_ERRNOS), f"{addr:#04x} on {self.name}")
        return dev, f

    def _simulate(self, fn, *args):
        t0 = time.thread_time()
        try:
            if self.before_access is not None:
                self.before_access()
            return fn(*args)
        finally:
            self.sim_cpu_s += time.thread_time() - t0

    def read_i2c_block_data(self, addr, reg, length):
        """A block of registers in one transfer (faults applied)."""
        _check(addr, reg, length)
        with self.lock:
            dev, f = self._transact(addr, i2c_wire_bits(length))
            if f is not None and f.stuck:
                if f.frozen is None:
                    f.frozen = {}
                key = (reg, length)
                if key not in f.frozen:
                    f.frozen[key] = list(self._simulate(dev.read, reg, length))
                out = list(f.frozen[key])
            else:
                out = list(self._simulate(dev.read, reg, length))
            self.stats.bytes_read += length
            return out

    def read_byte_data(self, addr, reg):
        """One register byte."""
        return self.read_i2c_block_data(addr, reg, 1)[0]

    def write_i2c_block_data(self, addr, reg, data):
        """Write a block of registers (lost while the address is stuck)."""
        data = [b & 0xFF for b in data]
        _check(addr, reg, len(data))
        with self.lock:
            dev, f = self._transact(addr, i2c_wire_bits(len(data), True))
            self.stats.bytes_written += len(data)
            if f is not None and f.stuck:
                return
            self._simulate(dev.write, reg, data)

    def write_byte_data(self, addr, reg, value):
        """Write one register byte."""
        self.write_i2c_block_data(addr, reg, [value])

    def close(self):
        """Nothing to release."""
        pass
