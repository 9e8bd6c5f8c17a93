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

"""The bit-packed value types of seed 001 and their conversions to SI units.

Packets carry these as raw wire integers (``statval``: guint32, ``speedval``:
guint16, ``mposval``: guint32); the helpers here convert them to and from SI
units (seconds, percent, rad/s, rad, m). Every conversion

* rounds half away from zero (as the legacy C++ library's ``lround``);
* round-trips exactly where the wire allows: ``pack(unpack(raw)) == raw`` for
  every raw value whose reserved bits are zero;
* clamps out-of-range inputs to the nearest representable value, never wraps;
* rejects NaN with :class:`ProtocolError` (a ``ValueError``).

statval (001 4.7.3/5.9.2)::

    bit 0 on, bit 1 up, bit 2 ok, bits 3..7 reserved (0), bits 8..31 ms since base time

speedval (001 4.7.4)::

    bit 15 type (1 = duty cycle, 0 = angular speed), bits 14..12 reserved,
    bit 11 sign (1 = negative / MOTOR_BACKWARD), bits 10..0 magnitude 0..2047
    duty: magnitude 2047 = 100 %;  angular: magnitude x 0.001 rad/s

mposval (001 4.7.1)::

    bit 30 type (0 angular, 1 linear), bit 28 unit, bit 23 sign, bits 22..0 magnitude
    (23-bit fixed point; whole bits: radian 2, degree 8, metric(mm) 19, standard(0.1 in) 16)

timeval: two gint32, seconds and microseconds; microseconds are rounded half
away from zero like every other value here.

Besides the SI conversions, the host-integer helpers the hardware layer uses
(:func:`statval_pack`, :func:`statval_fields`, :func:`speedval_sign`,
:func:`mposval_pack_rad`, :func:`mposval_unpack_rad`) live here too, so each
value type has one implementation and one rounding rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
import math
from typing import NamedTuple

from .constants import MposType
from .errors import ProtocolError

__all__ = [
    "Statval", "STATVAL_MS_MAX", "speedval_pack", "speedval_unpack", "SPEEDVAL_MAG_MAX",
    "AngularUnit", "LinearUnit", "mposval_pack", "mposval_unpack", "mposval_pack_native",
    "mposval_unpack_native", "mposval_resolution", "MPOSVAL_MAG_MAX", "Timeval",
    "STAT_ON", "STAT_UP", "STAT_OK", "statval_pack", "statval_fields", "SPEEDVAL_DUTY",
    "SPEEDVAL_SIGN", "SPEEDVAL_ZERO", "SPEEDVAL_RAD_MAX", "speedval_sign", "mposval_pack_rad",
    "mposval_unpack_rad",
]

STATVAL_MS_MAX = (1 << 24) - 1
SPEEDVAL_MAG_MAX = (1 << 11) - 1
MPOSVAL_MAG_MAX = (1 << 23) - 1
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1

STAT_ON, STAT_UP, STAT_OK = 0x01, 0x02, 0x04
SPEEDVAL_DUTY = 0x8000          # bit 15: the value is a duty cycle
SPEEDVAL_SIGN = 0x0800          # bit 11: negative / MOTOR_BACKWARD
SPEEDVAL_ZERO = SPEEDVAL_DUTY   # 0 % duty: the stop every motor understands
SPEEDVAL_RAD_MAX = SPEEDVAL_MAG_MAX / 1000.0   # rad/s, thousandths of a rad/s per count


def _check_number(value: float, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ProtocolError(f"{what}: not a number: {value!r}") from exc
    if math.isnan(v):
        raise ProtocolError(f"{what}: NaN")
    return v


def _negative(v: float, mag: int) -> bool:
    """Sign bit: set for negative values that are not rounded to zero (as the
    legacy C++ encoder does), and for an exact -0.0 so that a received
    "negative zero" round-trips."""
    if v < 0:
        return mag != 0
    return v == 0.0 and math.copysign(1.0, v) < 0


# ----------------------------------------------------------------- statval
@dataclass(slots=True)
class Statval:
    """Status bits and a 24-bit elapsed time in milliseconds since base time."""

    on: bool = False
    up: bool = False
    ok: bool = False
    ms: int = 0

    def pack(self) -> int:
        """The wire value (guint32).

        :returns: the statval; ``ms`` is clamped to 0..16777215.
        """
        ms = self.ms
        if ms < 0:
            ms = 0
        elif ms > STATVAL_MS_MAX:
            ms = STATVAL_MS_MAX
        return ((int(ms) << 8) | (4 if self.ok else 0) | (2 if self.up else 0)
                | (1 if self.on else 0))

    @classmethod
    def unpack(cls, raw: int) -> "Statval":
        """The fields of a wire value.

        :param raw: a statval (guint32); reserved bits 3..7 are ignored.
        :returns: the Statval.
        """
        return cls(bool(raw & 1), bool(raw & 2), bool(raw & 4), (raw >> 8) & STATVAL_MS_MAX)

    @property
    def seconds(self) -> float:
        """Elapsed time since the base time, in seconds."""
        return self.ms / 1000.0

    @classmethod
    def at(cls, elapsed_s: float, on: bool = True, up: bool = True, ok: bool = True) -> "Statval":
        """A Statval from an elapsed time.

        :param elapsed_s: seconds since the base time, rounded to ms and
            clamped to 0..16777215 ms.
        :param on: the on bit.
        :param up: the up bit.
        :param ok: the ok bit.
        :returns: the Statval.
        :raises ProtocolError: ``elapsed_s`` is not a number, or NaN.
        """
        e = _check_number(elapsed_s, "statval time")
        ms = math.floor(e * 1000.0 + 0.5) if abs(e) < 1e12 else (STATVAL_MS_MAX if e > 0 else 0)
        return cls(on, up, ok, min(max(ms, 0), STATVAL_MS_MAX))


def statval_pack(on: bool, up: bool, ok: bool, ms: int) -> int:
    """A statval as a host integer.

    :param on: the on bit.
    :param up: the up bit.
    :param ok: the ok bit.
    :param ms: milliseconds since the base time, clamped to 0..16777215.
    :returns: the statval.
    """
    return Statval(bool(on), bool(up), bool(ok), int(ms)).pack()


def statval_fields(raw: int) -> tuple[bool, bool, bool, int]:
    """The fields of a statval.

    :param raw: a statval; bits above 31 are ignored.
    :returns: (on, up, ok, elapsed_ms).
    """
    s = Statval.unpack(raw & 0xFFFFFFFF)
    return s.on, s.up, s.ok, s.ms


# ---------------------------------------------------------------- speedval
def speedval_pack(is_duty: bool, value: float) -> int:
    """Pack a signed speed into a speedval.

    :param is_duty: ``value`` is a duty cycle in percent (-100..100), else an
        angular speed in rad/s (-2.047..2.047).
    :param value: the speed; magnitudes clamp at 2047, its sign (-0.0 too)
        sets bit 11.
    :returns: the speedval (guint16).
    :raises ProtocolError: ``value`` is not a number, or NaN.
    """
    v = _check_number(value, "speedval")
    a = abs(v)
    if is_duty:
        mag = a * SPEEDVAL_MAG_MAX / 100.0
    else:
        mag = a * 1000.0
    mag = SPEEDVAL_MAG_MAX if mag >= SPEEDVAL_MAG_MAX else int(mag + 0.5)
    return (0x8000 if is_duty else 0) | (0x0800 if _negative(v, mag) else 0) | mag


def speedval_unpack(raw: int) -> tuple[bool, float]:
    """The speed a speedval carries.

    :param raw: a speedval; reserved bits are ignored.
    :returns: (is_duty, signed value in percent or rad/s).
    """
    mag = raw & SPEEDVAL_MAG_MAX
    is_duty = bool(raw & 0x8000)
    v = mag * 100.0 / SPEEDVAL_MAG_MAX if is_duty else mag / 1000.0
    return is_duty, (-v if raw & 0x0800 else v)


def speedval_sign(raw: int) -> int:
    """The direction a speedval commands.

    :param raw: a speedval.
    :returns: -1, 0 (a zero magnitude) or +1.
    """
    if raw & SPEEDVAL_MAG_MAX == 0:
        return 0
    return -1 if raw & SPEEDVAL_SIGN else 1


# ----------------------------------------------------------------- mposval
class AngularUnit(IntEnum):
    """Unit bit of an angular mposval."""

    RADIAN = 0
    DEGREE = 1


class LinearUnit(IntEnum):
    """Unit bit of a linear mposval."""

    METRIC = 0     # millimetres on the wire (001 section 3.1.2)
    STANDARD = 1   # tenths of an inch on the wire


# (type, unit) -> (fraction bits, SI metres-or-radians per native unit)
_MPOS_FRAC = {(0, 0): 21, (0, 1): 15, (1, 0): 4, (1, 1): 7}
_MPOS_SI = {(0, 0): 1.0, (0, 1): math.pi / 180.0, (1, 0): 0.001, (1, 1): 0.00254}


def mposval_resolution(kind: int, unit: int) -> float:
    """The resolution of an mposval (the table of 001 4.7.1).

    :param kind: :class:`MposType` (0 angular, 1 linear).
    :param unit: :class:`AngularUnit` or :class:`LinearUnit`.
    :returns: one step, in native units.
    :raises KeyError: ``kind`` or ``unit`` is not 0 or 1.
    """
    return 2.0 ** -_MPOS_FRAC[(int(kind), int(unit))]


def _mpos_key(kind, unit):
    key = (int(kind), int(unit))
    if key not in _MPOS_FRAC:
        raise ProtocolError(f"mposval: bad type/unit {kind!r}/{unit!r}")
    return key


def mposval_pack_native(kind: int, unit: int, value: float) -> int:
    """Pack a displacement given in native units.

    :param kind: :class:`MposType` (0 angular, 1 linear).
    :param unit: :class:`AngularUnit` or :class:`LinearUnit`.
    :param value: rad, deg, mm or 0.1 in; the magnitude clamps.
    :returns: the mposval (guint32).
    :raises ProtocolError: a bad type/unit, or ``value`` is not a number or NaN.
    """
    key = _mpos_key(kind, unit)
    v = _check_number(value, "mposval")
    mag = abs(v) * (1 << _MPOS_FRAC[key])
    mag = MPOSVAL_MAG_MAX if mag >= MPOSVAL_MAG_MAX else int(mag + 0.5)
    return (key[0] << 30) | (key[1] << 28) | (0x800000 if _negative(v, mag) else 0) | mag


def mposval_unpack_native(raw: int) -> tuple[MposType, IntEnum, float]:
    """The displacement an mposval carries, in its native unit.

    :param raw: an mposval; reserved bits are ignored.
    :returns: (type, unit, displacement in native units).
    """
    kind = (raw >> 30) & 1
    unit = (raw >> 28) & 1
    v = (raw & MPOSVAL_MAG_MAX) / (1 << _MPOS_FRAC[(kind, unit)])
    if raw & 0x800000:
        v = -v
    return MposType(kind), (LinearUnit(unit) if kind else AngularUnit(unit)), v


def mposval_pack(kind: int, unit: int, value: float) -> int:
    """Pack a displacement given in SI units.

    :param kind: :class:`MposType` (0 angular, 1 linear).
    :param unit: the unit the wire carries (:class:`AngularUnit` or :class:`LinearUnit`).
    :param value: rad (angular) or m (linear).
    :returns: the mposval (guint32).
    :raises ProtocolError: a bad type/unit, or ``value`` is not a number or NaN.
    """
    key = _mpos_key(kind, unit)
    v = _check_number(value, "mposval")
    return mposval_pack_native(kind, unit, v / _MPOS_SI[key] if v else v)


def mposval_unpack(raw: int) -> tuple[MposType, IntEnum, float]:
    """The displacement an mposval carries, in SI units.

    :param raw: an mposval; reserved bits are ignored.
    :returns: (type, unit, displacement in rad or m).
    """
    kind, unit, v = mposval_unpack_native(raw)
    return kind, unit, v * _MPOS_SI[(int(kind), int(unit))]


def mposval_pack_rad(angle: float) -> int:
    """An angular mposval in radians (what the steering board takes and reports).

    :param angle: rad; -0.0 is sent as 0 (a steering angle of zero has no
        direction).
    :returns: the mposval (guint32).
    :raises ProtocolError: ``angle`` is NaN.
    :raises ValueError: ``angle`` is a string that is not a number.
    :raises TypeError: ``angle`` is neither a number nor a string.
    """
    return mposval_pack_native(0, 0, float(angle) + 0.0)


def mposval_unpack_rad(raw: int) -> float:
    """The displacement of an mposval in the native unit its flags name.

    :param raw: an mposval (radians for the steering board's); bits above 31
        are ignored.
    :returns: the displacement.
    """
    return mposval_unpack_native(raw & 0xFFFFFFFF)[2]


# ----------------------------------------------------------------- timeval
class Timeval(NamedTuple):
    """``struct timeval``: two gint32 on the wire, seconds and microseconds."""

    sec: int = 0
    usec: int = 0

    @classmethod
    def from_seconds(cls, t: float) -> "Timeval":
        """A Timeval from float seconds.

        :param t: seconds since the epoch, rounded half away from zero to us
            and clamped to gint32 seconds.
        :returns: the Timeval.
        :raises ProtocolError: ``t`` is not a number, or NaN.
        """
        v = _check_number(t, "timeval")
        if v >= _INT32_MAX + 1:
            return cls(_INT32_MAX, 999_999)
        if v < _INT32_MIN:
            return cls(_INT32_MIN, 0)
        sec = math.floor(v)
        frac_us = (v - sec) * 1e6
        # half away from zero on the whole time: up for a positive time,
        # down (towards the earlier second) for a negative one
        usec = math.floor(frac_us + 0.5) if v >= 0 else math.ceil(frac_us - 0.5)
        if usec >= 1_000_000:
            sec, usec = sec + 1, usec - 1_000_000
            if sec > _INT32_MAX:
                return cls(_INT32_MAX, 999_999)
        return cls(int(sec), int(usec))

    @classmethod
    def from_ns(cls, ns: int) -> "Timeval":
        """A Timeval from integer nanoseconds.

        :param ns: nanoseconds since the epoch (floored to the microsecond,
            clamped to gint32 seconds).
        :returns: the Timeval.
        """
        us = int(ns) // 1000
        sec, usec = divmod(us, 1_000_000)
        if sec > _INT32_MAX:
            return cls(_INT32_MAX, 999_999)
        if sec < _INT32_MIN:
            return cls(_INT32_MIN, 0)
        return cls(sec, usec)

    def to_seconds(self) -> float:
        """The time in float seconds.

        :returns: ``sec + usec / 1e6``.
        """
        return self.sec + self.usec / 1e6

    def to_ns(self) -> int:
        """The time in integer nanoseconds.

        :returns: ``sec * 10**9 + usec * 1000``.
        """
        return self.sec * 1_000_000_000 + self.usec * 1000

    def clamped(self) -> "Timeval":
        """What the encoder sends.

        :returns: a Timeval with both fields clamped into the gint32 range.
        """
        return Timeval(min(max(int(self.sec), _INT32_MIN), _INT32_MAX),
                       min(max(int(self.usec), _INT32_MIN), _INT32_MAX))
