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

"""Our register maps (the real Brak boards' maps are not in the seeds).

Every board answers a 7-bit address with a 256-byte register file:

=========  =====================================================================
register   meaning
=========  =====================================================================
0x00       WHO_AM_I: board type code (``who_am_i_value`` per type)
0x01..     DATA block, read in ONE block transfer per poll: STATUS, SEQ, data
0x40       ENABLE (write/read): bit mask of enabled channels/devices
0x41       COMMAND (write): 0x01 clear count, 0x02 home, 0x03 abort home,
           0x80 reset the board
0x42       SPEED (motor boards, 2 bytes): speedval
0x44       INTERVAL (ultrasonic, 2 bytes): firing interval, ms
0x46       TARGET (pservo, 4 bytes): mposval target angle (position mode)
0x48..     SLOTS (ultrasonic, 1 byte per channel): firing slot
0x4A       TIMEOUT (motor boards, 2 bytes): command timeout, ms (0 = off)
0x4C       KEEPALIVE (motor boards, write): feeds the command timeout
=========  =====================================================================

Motor boards stop their motor by themselves when no write arrived for
TIMEOUT ms (the command watchdog; docs/HARDWARE.md "Safety"), and set
ST_TIMEOUT until the next speed/target write.

Multi-byte fields are big-endian. The register numbers come from the robot
description (``register_maps``) so a different board revision is a config
change; the block layouts below are fixed per board type.
"""

from __future__ import annotations

from dataclasses import dataclass
import struct

from ..core.units import clamp_int

# STATUS register bits
ST_READY = 0x01
ST_FAULT = 0x02
ST_STALLED = 0x04
ST_HOMING = 0x08
ST_HOMED = 0x10
ST_REFUSED = 0x20
ST_POSITION_MODE = 0x40
ST_TIMEOUT = 0x80        # motor boards: the command watchdog stopped the motor

# COMMAND register values
CMD_CLEAR_COUNT = 0x01
CMD_HOME = 0x02
CMD_ABORT_HOME = 0x03
CMD_RESET = 0x80

# pservo PHASE values
PHASE_IDLE = 0
PHASE_SEEKING = 1
PHASE_BACKING_OFF = 2
PHASE_CENTERING = 3
PHASE_DONE = 4
PHASE_ABORTED = 5
PHASE_CANCELLED = 6
PHASE_NAMES = {PHASE_IDLE: "idle", PHASE_SEEKING: "seeking", PHASE_BACKING_OFF: "backing_off",
               PHASE_CENTERING: "centering", PHASE_DONE: "done", PHASE_ABORTED: "aborted",
               PHASE_CANCELLED: "cancelled"}

# ENABLE bits of the motor boards
EN_MOTOR = 0x01
EN_ENCODER = 0x02


@dataclass(frozen=True)
class RegisterMap:
    """Register numbers of one board type (from the robot description)."""

    who_am_i: int
    data: int
    enable: int
    command: int
    who_am_i_value: int
    speed: int = 0x42
    interval: int = 0x44
    target: int = 0x46
    slots: int = 0x48
    timeout: int = 0x4A      # motor boards: command timeout, ms (2 bytes)
    keepalive: int = 0x4C    # motor boards: any write feeds the command watchdog

    @classmethod
    def from_description(cls, maps: dict, board_type: str) -> "RegisterMap":
        """The map of a board type: common entries, then the type's own."""
        common = dict(maps.get("common", {}))
        common.update(maps.get(board_type, {}))
        fields = {k: int(v) for k, v in common.items() if k in cls.__dataclass_fields__}
        return cls(**fields)


# ---- data block layouts (after STATUS, SEQ) --------------------------------
def ultrasonic_block_len(channels: int) -> int:
    """Bytes of an ultrasonic data block with N channels."""
    return 2 + 2 * channels


DC_BLOCK = struct.Struct(">BBHHh")        # status seq speed_set speed_meas count
PSERVO_BLOCK = struct.Struct(">BBHIhB")   # status seq speed_set position count phase
ACCEL_BLOCK = struct.Struct(">BBh")       # status seq accel_mg


def pack_ultrasonic(status: int, seq: int, delays: list[int]) -> list[int]:
    """An ultrasonic data block (delays clamped to 16 bits)."""
    return list(struct.pack(f">BB{len(delays)}H", status & 0xFF, seq & 0xFF,
                            *[clamp_int(d, 0, 0xFFFF) for d in delays]))


def unpack_ultrasonic(data: list[int], channels: int) -> tuple[int, int, list[int]]:
    """(status, seq, delays) of an ultrasonic data block."""
    vals = struct.unpack(f">BB{channels}H", bytes(data))
    return vals[0], vals[1], list(vals[2:])


def u16(v: int) -> list[int]:
    """Big-endian bytes of a 16-bit register value."""
    return list(struct.pack(">H", v & 0xFFFF))


def u32(v: int) -> list[int]:
    """Big-endian bytes of a 32-bit register value."""
    return list(struct.pack(">I", v & 0xFFFFFFFF))


def from_u16(data: list[int]) -> int:
    """16-bit value of big-endian register bytes."""
    return struct.unpack(">H", bytes(data[:2]))[0]


def from_u32(data: list[int]) -> int:
    """32-bit value of big-endian register bytes."""
    return struct.unpack(">I", bytes(data[:4]))[0]


def to_i16(v: int) -> int:
    """Wrap an integer into the gint16 range (counters wrap on the board)."""
    v &= 0xFFFF
    return v - 0x10000 if v & 0x8000 else v
