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

"""Units and conversions, each written once: sound, encoder counts, angles, yaw.

Pure Python (no ROS). The hardware layer, its simulator and the hardware node
all convert through these functions, so a change of convention is one edit.
"""

from __future__ import annotations

import math

G = 9.80665                  # m/s^2 per g (standard gravity)
SPEED_OF_SOUND = 343.0       # m/s in dry air at 20 C


def clamp_int(value, lo: int, hi: int) -> int:
    """An integer clamped into lo..hi: out-of-range values saturate, never wrap."""
    v = int(value)
    return lo if v < lo else (hi if v > hi else v)


def delay_to_range(delay_us: int, speed_of_sound: float = SPEED_OF_SOUND) -> float:
    """Round-trip echo delay in microseconds -> range in m; 0 (no echo) -> +inf."""
    if delay_us <= 0:
        return math.inf
    return delay_us * 1e-6 * speed_of_sound / 2.0


def range_to_delay_us(range_m: float, speed_of_sound: float = SPEED_OF_SOUND) -> int:
    """Range in m -> round-trip echo delay in whole microseconds (half up)."""
    return int(math.floor(2.0 * range_m / speed_of_sound * 1e6 + 0.5))


def counts_to_angle(count: float, counts_per_rev: int) -> float:
    """Encoder counts -> angle in rad."""
    return count * 2.0 * math.pi / counts_per_rev


def angle_in_counts(angle: float, counts_per_rev: int) -> float:
    """Angle in rad -> encoder counts, not yet whole."""
    return angle * counts_per_rev / (2.0 * math.pi)


def angle_to_counts(angle: float, counts_per_rev: int) -> int:
    """Angle in rad -> the nearest whole encoder count."""
    return int(round(angle_in_counts(angle, counts_per_rev)))


def wrap_angle(a: float) -> float:
    """Angle into [-pi, pi)."""
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def yaw_to_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """Yaw about z -> quaternion (x, y, z, w)."""
    return 0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)


def quaternion_to_yaw(x: float, y: float, z: float, w: float) -> float:
    """Quaternion (x, y, z, w) -> yaw about z (roll and pitch ignored)."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
