"""BSAL bit-packed values as the boards and the hardware node use them.

statval (001 4.7.3), speedval (4.7.4) and mposval (4.7.1), encoded and decoded
in host integers. The protocol layer owns the byte order on the wire; these
functions only build and take apart the integers. Out-of-range values are
clamped, never wrapped.
"""

from __future__ import annotations

import math

from ..protocol.values import speedval_pack, speedval_unpack

# statval bits
STAT_ON = 0x01
STAT_UP = 0x02
STAT_OK = 0x04
STATVAL_MS_MAX = (1 << 24) - 1  # 24-bit millisecond field: about 4.66 h

# speedval fields
SPEED_DUTY = 0x8000
SPEED_SIGN = 0x0800
SPEED_MAG = 0x07FF
SPEED_MAG_MAX = 2047
SPEED_RAD_MAX = 2.047  # rad/s, thousandths of a rad/s per count

# mposval fields
MPOS_LINEAR = 1 << 30
MPOS_UNITS = 1 << 28
MPOS_SIGN = 1 << 23
MPOS_DISP = (1 << 23) - 1
# (type_linear, units) -> fractional bits of the 23-bit displacement
_MPOS_FRAC = {(False, False): 21, (False, True): 15, (True, False): 4, (True, True): 7}


def statval(on: bool, up: bool, ok: bool, elapsed_ms: int) -> int:
    """Pack the status bits and the milliseconds since the base time."""
    ms = max(0, min(int(elapsed_ms), STATVAL_MS_MAX))
    return (ms << 8) | (STAT_ON if on else 0) | (STAT_UP if up else 0) | (STAT_OK if ok else 0)


def statval_fields(value: int) -> tuple[bool, bool, bool, int]:
    """(on, up, ok, elapsed_ms) of a statval."""
    value &= 0xFFFFFFFF
    return bool(value & STAT_ON), bool(value & STAT_UP), bool(value & STAT_OK), value >> 8


# speedval encoding lives in the protocol layer (one implementation, one
# rounding rule); the hardware layer names it by what it means here.
def speedval_from_duty(percent: float) -> int:
    """Signed duty cycle in percent (-100..100, clamped) -> speedval."""
    return speedval_pack(True, percent)


def speedval_from_rad_s(rad_s: float) -> int:
    """Signed rad/s (|v| <= 2.047, clamped) -> speedval."""
    return speedval_pack(False, rad_s)


def speedval_decode(value: int) -> tuple[bool, float]:
    """speedval -> (duty_mode, signed value in percent or rad/s)."""
    return speedval_unpack(value & 0xFFFF)


def speedval_sign(value: int) -> int:
    """-1, 0 or +1: the direction a speedval commands."""
    if value & SPEED_MAG == 0:
        return 0
    return -1 if value & SPEED_SIGN else 1


def mposval_encode(disp: float, linear: bool = False, standard_units: bool = False) -> int:
    """Displacement (rad, deg, mm or 0.1 in per the flags) -> mposval; clamped."""
    frac = _MPOS_FRAC[(linear, standard_units)]
    raw = int(round(abs(disp) * (1 << frac)))
    raw = min(raw, MPOS_DISP)
    out = raw | (MPOS_SIGN if disp < 0 and raw else 0)
    if linear:
        out |= MPOS_LINEAR
    if standard_units:
        out |= MPOS_UNITS
    return out


def mposval_decode(value: int) -> float:
    """mposval -> displacement in the units its flags name."""
    value &= 0xFFFFFFFF
    linear = bool(value & MPOS_LINEAR)
    units = bool(value & MPOS_UNITS)
    frac = _MPOS_FRAC[(linear, units)]
    disp = (value & MPOS_DISP) / float(1 << frac)
    return -disp if value & MPOS_SIGN else disp


def wrap_angle(a: float) -> float:
    """Angle into [-pi, pi)."""
    return (a + math.pi) % (2.0 * math.pi) - math.pi
