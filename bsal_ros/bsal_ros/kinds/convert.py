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
"""Small conversions the kind declarations share: wire widths and the
board-entry checks of the robot description. No ROS, no hardware imports."""

from __future__ import annotations

import math

from ..protocol.values import Statval


def u16(v) -> int:
    """Clamp into guint16 (never wraps)."""
    return _u(v, 16)


def u32(v) -> int:
    """Clamp into guint32 (never wraps)."""
    return _u(v, 32)


def _u(v, bits) -> int:
    v = int(v)
    m = (1 << bits) - 1
    return 0 if v < 0 else (m if v > m else v)


def low16(v) -> int:
    """The low 16 bits (an echo delay as RCI carries it)."""
    return int(v) & 0xFFFF


def wrap_i16(v) -> int:
    """Wrap into gint16: encoder counts and their differences wrap on the wire
    as on the board (a clamp would freeze a count passing 32767)."""
    v = int(v) & 0xFFFF
    return v - 0x10000 if v & 0x8000 else v


def clamp_i16(v) -> int:
    """Clamp into gint16 (RDI carries the count the hardware node reported)."""
    v = int(v)
    return -32768 if v < -32768 else (32767 if v > 32767 else v)


def f32(v) -> float:
    """A float a 32-bit float can carry (NaN stays NaN)."""
    v = float(v)
    if math.isnan(v):
        return v
    return max(-3.4e38, min(3.4e38, v))


def fmt_statval(raw: int) -> str:
    """A statval as on,up,ok@ms for a person."""
    s = Statval.unpack(raw)
    flags = ",".join(n for n, v in (("on", s.on), ("up", s.up), ("ok", s.ok)) if v) or "-"
    return f"{flags}@{s.ms}ms"


def scale_poll_rates(board: dict, rate_scale: float, all_boards_hz: float) -> None:
    """A board polled at ``poll_hz`` (its own data at ``update_hz``): both fixed
    when ``all_boards_hz`` > 0 (update a little faster than the poll), else
    multiplied by ``rate_scale``."""
    if all_boards_hz > 0:
        board["poll_hz"] = float(all_boards_hz)
        board["update_hz"] = float(all_boards_hz) * 1.25
    elif rate_scale != 1.0:
        board["poll_hz"] = float(board["poll_hz"]) * rate_scale
        board["update_hz"] = float(board["update_hz"]) * rate_scale


def check_rates(name: str, board: dict) -> None:
    """A polled board's entry: ``update_hz`` and ``poll_hz`` > 0 (ValueError)."""
    if float(board.get("update_hz", 0)) <= 0 or float(board.get("poll_hz", 0)) <= 0:
        raise ValueError("update_hz and poll_hz must be > 0")
