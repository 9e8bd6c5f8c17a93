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

"""Bus backends: the simulated bus at register level, fault injection, and the
smbus2 backend against a fake SMBus (smbus2 itself is not needed)."""
import errno

import pytest

from bsal_ros.hardware import registers as regs
from bsal_ros.hardware.bus import i2c_wire_bits, i2c_wire_time, SimBus, Smbus2Bus
from bsal_ros.hardware.description import load_description
from bsal_ros.hardware.sim import build_sim_bus

from hardware_helpers import FakeClock


class Echo:

    def __init__(self):
        self.regs = [0] * 256

    def read(self, reg, n):
        return self.regs[reg:reg + n]

    def write(self, reg, data):
        self.regs[reg:reg + len(data)] = data


def test_wire_time_floor():
    assert i2c_wire_bits(2) == 48 and i2c_wire_bits(32) == 318
    assert i2c_wire_time(2) == pytest.approx(0.48e-3)
    assert i2c_wire_time(32) == pytest.approx(3.18e-3)


def test_sim_bus_reads_and_writes_registers_and_counts():
    bus = SimBus(seed=1)
    bus.attach(0x20, Echo())
    bus.write_i2c_block_data(0x20, 0x10, [1, 2, 3])
    bus.write_byte_data(0x20, 0x13, 4)
    assert bus.read_i2c_block_data(0x20, 0x10, 4) == [1, 2, 3, 4]
    assert bus.read_byte_data(0x20, 0x12) == 3
    assert bus.stats.transactions == 4 and bus.stats.bytes_read == 5
    assert bus.stats.bytes_written == 4


def test_sim_bus_missing_and_stuck_and_error_rate():
    bus = SimBus(seed=3)
    dev = Echo()
    bus.attach(0x21, dev)
    with pytest.raises(OSError) as e:
        bus.read_byte_data(0x22, 0)
    assert e.value.errno == errno.ENXIO
    bus.set_fault(0x21, "missing")
    with pytest.raises(OSError) as e:
        bus.read_byte_data(0x21, 0)
    assert e.value.errno == errno.ENXIO
    bus.clear_faults(0x21)
    dev.regs[5] = 7
    bus.set_fault(0x21, "stuck")
    assert bus.read_byte_data(0x21, 5) == 7
    dev.regs[5] = 9
    bus.write_byte_data(0x21, 6, 1)          # acknowledged, lost
    assert bus.read_byte_data(0x21, 5) == 7  # frozen image
    assert dev.regs[6] == 0
    bus.clear_faults()
    assert bus.read_byte_data(0x21, 5) == 9
    bus.set_fault(0x21, "error_rate", 0.5)
    codes, ok = set(), 0
    for _ in range(200):
        try:
            bus.read_byte_data(0x21, 5)
            ok += 1
        except OSError as exc:
            codes.add(exc.errno)
    assert 40 < ok < 160
    assert codes <= {errno.EIO, errno.EREMOTEIO, errno.ETIMEDOUT} and len(codes) >= 2
    with pytest.raises(ValueError):
        bus.set_fault(0x21, "error_rate", 1.5)


def test_bus_rejects_bad_addresses_and_lengths():
    bus = SimBus()
    with pytest.raises(ValueError):
        bus.attach(0x80, Echo())
    bus.attach(0x30, Echo())
    with pytest.raises(ValueError):
        bus.read_i2c_block_data(0x30, 0, 33)


class FakeSMBus:
    """Stands in for smbus2.SMBus: same method names, kernel-style OSErrors."""

    def __init__(self, bus):
        self.bus = bus
        self.regs = {0x20: [0] * 256}
        self.fail = []
        self.closed = False

    def _dev(self, addr):
        if self.fail:
            raise OSError(self.fail.pop(0), "injected")
        if addr not in self.regs:
            raise OSError(errno.ENXIO, "No such device or address")
        return self.regs[addr]

    def read_byte_data(self, addr, reg):
        return self._dev(addr)[reg]

    def write_byte_data(self, addr, reg, value):
        self._dev(addr)[reg] = value

    def read_i2c_block_data(self, addr, reg, length):
        return self._dev(addr)[reg:reg + length]

    def write_i2c_block_data(self, addr, reg, data):
        self._dev(addr)[reg:reg + len(data)] = data

    def close(self):
        self.closed = True


def test_smbus2_backend_with_a_fake_smbus():
    made = []

    def factory(n):
        made.append(FakeSMBus(n))
        return made[-1]

    bus = Smbus2Bus(3, smbus_factory=factory)
    assert bus.name == "i2c-3" and made[0].bus == 3
    bus.write_i2c_block_data(0x20, 0x40, [1, 2])
    assert bus.read_i2c_block_data(0x20, 0x40, 2) == [1, 2]
    made[0].fail = [errno.EREMOTEIO]
    with pytest.raises(OSError) as e:
        bus.read_byte_data(0x20, 0)
    assert e.value.errno == errno.EREMOTEIO
    assert bus.stats.errors == 1 and bus.stats.transactions == 3
    bus.close()
    assert made[0].closed


def test_smbus2_backend_without_smbus2_says_what_to_install(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "smbus2", None)
    with pytest.raises(RuntimeError, match="smbus2"):
        Smbus2Bus(1)


def test_virtual_boards_answer_who_am_i_and_data_blocks():
    desc = load_description()["robot"]
    clock = FakeClock()
    bus = build_sim_bus(desc, clock)
    world = bus.simulation.world
    for name, b in desc["boards"].items():
        rm = regs.RegisterMap.from_description(desc["register_maps"], b["type"])
        assert bus.read_byte_data(b["address"], 0x00) == rm.who_am_i_value
    # ultrasonic: enable channel 0 of sonar_a, a firing happens, delay appears
    bus.write_byte_data(0x20, 0x40, 0x01)
    clock.t += 0.5
    block = bus.read_i2c_block_data(0x20, 0x01, regs.ultrasonic_block_len(6))
    status, seq, delays = regs.unpack_ultrasonic(block, 6)
    assert status & regs.ST_READY and delays[0] > 0 and delays[1:] == [0] * 5
    # sonar 0 looks along +x from x=0.53 to the wall at x=5: ~4.47 m
    assert abs(delays[0] * 1e-6 * 343 / 2 - 4.47) < 0.1
    # drive board: speed register read back in the data block
    bus.write_byte_data(0x30, 0x40, regs.EN_MOTOR | regs.EN_ENCODER)
    bus.write_i2c_block_data(0x30, 0x4A, regs.u16(0))  # command watchdog off: no keep-alives here
    bus.write_i2c_block_data(0x30, 0x42, regs.u16(1000))  # 1.0 rad/s
    clock.t += 1.0
    block = bytes(bus.read_i2c_block_data(0x30, 0x01, 8))
    st, seq, sset, smeas, count = regs.DC_BLOCK.unpack(block)
    assert sset == 1000 and 900 < smeas <= 1000 and count > 0
    assert world.w > 0.9
