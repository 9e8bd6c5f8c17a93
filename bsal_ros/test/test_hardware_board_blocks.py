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

"""Every board's data block from docs/HARDWARE.md, as bytes typed by hand.

docs/HARDWARE.md section 4 gives each board type's data block (big-endian,
read from DATA in one block transfer): its layout, its size and what each
field means. Here each block is typed byte by byte from that table, read by
the driver's own board object through a bus that answers with those bytes
(``Board.poll``), and every value the board object keeps is compared with the
value the table gives those bytes. The fixtures' lengths and the document's
own example (the drive board's ``01 2a 03 e8 03 e5 01 f4``) are checked
against the document as it is now.
"""

from __future__ import annotations

import math
from pathlib import Path
import re

import pytest

from bsal_ros.hardware import registers as regs
from bsal_ros.hardware.boards import AccelBoard, UltrasonicBoard
from bsal_ros.hardware.motor_boards import DcMotorBoard, PservoBoard

HARDWARE_MD = Path(__file__).resolve().parents[2] / "docs" / "HARDWARE.md"
DATA_REG = 0x01


def h(text: str) -> list[int]:
    """Hex with spaces -> the byte list an smbus2 block read returns."""
    return list(bytes.fromhex(text.replace(" ", "")))


# ultrasonic, 6 channels: STATUS READY, SEQ 7, DELAY 1000, 0 (no echo), 4500,
# 65535, 100, 12000 us
ULTRASONIC = "01 07 03e8 0000 1194 ffff 0064 2ee0"
# dc_motor, HARDWARE.md's example: READY, SEQ 42, SPEED_SET 0x03e8 (1.000 rad/s
# forward), SPEED_MEAS 0x03e5 (0.997 rad/s), COUNT 500
DC_EXAMPLE = "01 2a 03 e8 03 e5 01 f4"
# then READY|STALLED|REFUSED, SEQ 43, SPEED_SET 0x8999 (duty, reverse, 409 of
# 2047 = 20 %), SPEED_MEAS 0x09f4 (-0.500 rad/s), COUNT 0xfe0c (-500)
DC_NEXT = "25 2b 8999 09f4 fe0c"
# pservo_motor: READY|HOMED|POSITION_MODE, SEQ 3, SPEED_SET 0, POSITION
# 0x00900000 (angular radians, sign bit 23, 0x100000 / 2**21 = 0.5: -0.5 rad),
# COUNT 0xfeba (-326 of 4096 per turn), PHASE 4 (done)
PSERVO = "51 03 0000 00900000 feba 04"
# accelerometer: READY, SEQ 9, ACCEL 0xfc18 (-1000 milli-g)
ACCEL = "01 09 fc18"


class BlockBus:
    """An I2C bus whose DATA block reads answer with the next typed block."""

    def __init__(self, *blocks: str):
        self.blocks = [h(b) for b in blocks]
        self.reads = []

    def read_i2c_block_data(self, address: int, register: int, length: int) -> list[int]:
        self.reads.append((address, register, length))
        block = self.blocks.pop(0)
        assert len(block) == length, (length, block)
        return block


def board(cls, bus, who: int, **cfg):
    rm = regs.RegisterMap(who_am_i=0x00, data=DATA_REG, enable=0x40, command=0x41,
                          who_am_i_value=who)
    return cls("b", {"address": 0x30, **cfg}, bus, rm)


def poll(b, mono: float = 1.0) -> None:
    assert b.poll(mono, 1000.0 + mono), b.fault


def test_ultrasonic_block():
    bus = BlockBus(ULTRASONIC)
    b = board(UltrasonicBoard, bus, 0x55, channels=6, slots=[0, 1, 2, 0, 1, 2],
              interval_ms=20)
    poll(b)
    assert bus.reads == [(0x30, DATA_REG, 14)]
    assert (b.status, b.seq) == (0x01, 7)
    assert b.delays == [1000, 0, 4500, 65535, 100, 12000]


def test_dc_motor_blocks():
    bus = BlockBus(DC_EXAMPLE, DC_NEXT)
    b = board(DcMotorBoard, bus, 0x44)
    poll(b, 1.0)
    assert bus.reads == [(0x30, DATA_REG, 8)]
    assert (b.status, b.seq, b.speed_set, b.count) == (0x01, 42, 0x03E8, 500)
    assert b.speed_meas == pytest.approx(0.997)
    assert not b.stalled and not b.refused
    poll(b, 2.0)
    assert (b.status, b.seq, b.speed_set, b.count) == (0x25, 43, 0x8999, -500)
    assert b.speed_meas == pytest.approx(-0.5)
    assert b.d_count == -1000 and b.stalled and b.refused


def test_pservo_motor_block():
    bus = BlockBus(PSERVO)
    b = board(PservoBoard, bus, 0x50)
    poll(b)
    assert bus.reads == [(0x30, DATA_REG, 11)]
    assert (b.status, b.seq, b.speed_set) == (0x51, 3, 0)
    assert b.mposval == 0x00900000 and b.position == -0.5
    assert b.count == -326 and b.phase == regs.PHASE_DONE == 4
    assert b.homed and b.position_mode and not b.homing and not b.stalled
    # 326 counts of 4096 per turn is the same angle, to one count
    assert abs(b.count * 2 * math.pi / 4096 - b.position) < 2 * math.pi / 4096


def test_accelerometer_block():
    bus = BlockBus(ACCEL)
    b = board(AccelBoard, bus, 0x41)
    poll(b)
    assert bus.reads == [(0x30, DATA_REG, 4)]
    assert (b.status, b.seq) == (0x01, 9)
    assert b.accel_g == -1.0


def test_fixtures_match_the_documents_table_and_example():
    text = HARDWARE_MD.read_text(encoding="utf-8")
    sizes = {m.group(1): (m.group(2), int(m.group(3))) for m in re.finditer(
        r"^\| (ultrasonic|dc_motor|pservo_motor|accelerometer) \| `(>[A-Za-z0-9]+)` \((\d+)",
        text, re.M)}
    assert sizes == {"ultrasonic": (">BB6H", 14), "dc_motor": (">BBHHh", 8),
                     "pservo_motor": (">BBHIhB", 11), "accelerometer": (">BBh", 4)}
    typed = {"ultrasonic": ULTRASONIC, "dc_motor": DC_EXAMPLE, "pservo_motor": PSERVO,
             "accelerometer": ACCEL}
    assert {k: len(h(v)) for k, v in typed.items()} == {k: n for k, (_, n) in sizes.items()}
    assert len(h(DC_NEXT)) == sizes["dc_motor"][1]
    assert f"the answer `{DC_EXAMPLE}` reads STATUS = READY, SEQ = 42" in " ".join(text.split())
