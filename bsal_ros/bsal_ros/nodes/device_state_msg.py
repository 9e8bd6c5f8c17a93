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

"""The one converter between :class:`bsal_ros.core.DeviceState` and
``bsal_interfaces/DeviceState``: the hardware node packs, the gateways unpack.

Values are clamped to the message's field widths (never wrapped), so a state
that round-trips through the message keeps every value the wire can carry.
"""

from __future__ import annotations

import math

from bsal_interfaces.msg import DeviceState as DeviceStateMsg
from builtin_interfaces.msg import Time

from bsal_ros.core import DeviceState
from bsal_ros.core.units import clamp_int


def time_msg(t: float | None) -> Time:
    """Seconds (None or negative: never) -> builtin_interfaces/Time."""
    if t is None or not math.isfinite(t) or t < 0:
        return Time()
    sec = int(math.floor(t))
    nsec = int(round((t - sec) * 1e9))
    if nsec >= 1_000_000_000:
        sec, nsec = sec + 1, nsec - 1_000_000_000
    return Time(sec=sec, nanosec=nsec)


def time_seconds(t: Time) -> float | None:
    """builtin_interfaces/Time -> seconds; the zero time means never (None)."""
    if t.sec == 0 and t.nanosec == 0:
        return None
    return t.sec + t.nanosec * 1e-9


def to_msg(s: DeviceState, frame_id: str = "") -> DeviceStateMsg:
    """Pack one record into a message (hardware-only fields are left out)."""
    m = DeviceStateMsg()
    m.header.stamp = time_msg(s.stamp)
    m.header.frame_id = frame_id
    m.device_class = s.device_class
    m.id = clamp_int(s.id, 0, 0xFFFF)
    m.on, m.up, m.ok = bool(s.on), bool(s.up), bool(s.ok)
    m.statval = clamp_int(s.statval, 0, 0xFFFFFFFF)
    m.fault = s.fault
    m.delay_us = clamp_int(s.delay_us, 0, 0xFFFF)
    m.range_m = float(s.range_m)
    m.d_count = clamp_int(s.d_count, -32768, 32767)
    m.d_statval = clamp_int(s.d_statval, 0, 0xFFFFFFFF)
    m.count = clamp_int(s.count, -32768, 32767)
    m.position = float(s.position)
    m.accel_g = float(s.accel_g)
    m.speedval = clamp_int(s.speedval, 0, 0xFFFF)
    m.duty_mode = bool(s.duty_mode)
    m.speed = float(s.speed)
    m.mposval = clamp_int(s.mposval, 0, 0xFFFFFFFF)
    m.motor_position = float(s.motor_position)
    m.homed = bool(s.homed)
    m.homing = bool(s.homing)
    return m


def from_msg(m: DeviceStateMsg) -> DeviceState:
    """Unpack a message into a record (hardware-only fields keep defaults)."""
    return DeviceState(
        device_class=m.device_class, id=m.id, on=m.on, up=m.up, ok=m.ok, fault=m.fault,
        stamp=time_seconds(m.header.stamp), statval=m.statval, delay_us=m.delay_us,
        range_m=m.range_m, d_count=m.d_count, d_statval=m.d_statval, count=m.count,
        position=m.position, accel_g=m.accel_g, speedval=m.speedval, duty_mode=m.duty_mode,
        speed=m.speed, mposval=m.mposval, motor_position=m.motor_position, homed=m.homed,
        homing=m.homing)
