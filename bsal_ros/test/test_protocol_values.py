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

"""Bit-packed value types: statval, speedval, mposval, timeval (001 4.7)."""

import math

from hypothesis import given, settings, strategies as st
import pytest

from bsal_ros.protocol import (AngularUnit, LinearUnit, MposType, mposval_pack, mposval_pack_native,
                               mposval_resolution, mposval_unpack, mposval_unpack_native,
                               ProtocolError, speedval_pack, speedval_unpack, Statval, Timeval)
from bsal_ros.protocol.values import MPOSVAL_MAG_MAX, STATVAL_MS_MAX

FAST = settings(max_examples=150, deadline=2000)


# ------------------------------------------------------------------ statval
def test_statval_bits_by_hand():
    # on + ok, 300 ms: 0x00012c05
    assert Statval(True, False, True, 300).pack() == 0x00012C05
    assert Statval.unpack(0x00012C05) == Statval(True, False, True, 300)
    assert Statval.unpack(0x00000002) == Statval(False, True, False, 0)
    assert Statval.unpack(0xFFFFFF07).ms == 0xFFFFFF


def test_statval_reserved_bits_ignored():
    assert Statval.unpack(0x000001F8) == Statval(False, False, False, 1)


def test_statval_clamps_never_wraps():
    assert Statval(ms=1 << 24).pack() >> 8 == 0xFFFFFF
    assert Statval(ms=10 ** 12).pack() >> 8 == 0xFFFFFF
    assert Statval(ms=-5).pack() == 0
    assert Statval.at(-1.0).ms == 0
    assert Statval.at(1e9).ms == 0xFFFFFF
    assert Statval.at(1.2345).ms == 1234 or Statval.at(1.2345).ms == 1235
    assert Statval.at(2.5, on=True, up=False, ok=True).seconds == 2.5


def test_statval_nan_rejected():
    with pytest.raises(ProtocolError):
        Statval.at(float("nan"))


@FAST
@given(st.integers(0, 0xFFFFFF), st.booleans(), st.booleans(), st.booleans())
def test_statval_round_trip(ms, on, up, ok):
    raw = (ms << 8) | (ok << 2) | (up << 1) | on
    s = Statval.unpack(raw)
    assert (s.on, s.up, s.ok, s.ms) == (on, up, ok, ms)
    assert s.pack() == raw
    assert Statval.at(s.seconds, on, up, ok) == s


# ----------------------------------------------------------------- speedval
def test_speedval_by_hand():
    assert speedval_pack(True, 100.0) == 0x87FF
    assert speedval_pack(True, -100.0) == 0x8FFF
    assert speedval_pack(True, 0.0) == 0x8000
    assert speedval_pack(True, 20.0) == 0x8199      # 409.4 -> 409
    assert speedval_pack(False, 2.047) == 0x07FF
    assert speedval_pack(False, -0.1) == 0x0864
    assert speedval_unpack(0x0864) == (False, -0.1)
    assert speedval_unpack(0x87FF) == (True, 100.0)
    is_duty, v = speedval_unpack(0x8199)
    assert is_duty and v == pytest.approx(19.98, abs=0.01)


def test_speedval_rounding_matches_legacy_cpp():
    # legacy/src/rci-client.cc: lround (half away from zero), no sign on a zero magnitude
    assert speedval_pack(False, 1.0225) == 0x03FF
    assert speedval_pack(True, -0.001) == 0x8000
    assert speedval_pack(True, -0.0) == 0x8800       # an exact -0.0 keeps its sign
    assert speedval_unpack(0x8800) == (True, -0.0)


def test_speedval_clamps():
    assert speedval_pack(True, 250.0) == 0x87FF
    assert speedval_pack(True, -1e9) == 0x8FFF
    assert speedval_pack(False, 3.0) == 0x07FF
    assert speedval_pack(False, float("inf")) == 0x07FF
    assert speedval_pack(False, float("-inf")) == 0x0FFF
    with pytest.raises(ProtocolError):
        speedval_pack(False, float("nan"))


def test_speedval_reserved_bits_ignored():
    assert speedval_unpack(0x7064) == (False, 0.1)


def test_speedval_round_trip_exhaustive():
    for is_duty in (False, True):
        for sign in (0, 0x800):
            for mag in range(2048):
                raw = (0x8000 if is_duty else 0) | sign | mag
                d, v = speedval_unpack(raw)
                assert d is is_duty
                assert speedval_pack(d, v) == raw


# ------------------------------------------------------------------ mposval
def test_mposval_resolution_table():
    # 001 section 4.7.1
    assert mposval_resolution(0, 0) == pytest.approx(4.7683716e-7)
    assert mposval_resolution(0, 1) == pytest.approx(3.0517578e-5)
    assert mposval_resolution(1, 0) == pytest.approx(6.25e-2)
    assert mposval_resolution(1, 1) == pytest.approx(7.8125e-3)


def test_mposval_by_hand():
    assert mposval_pack(MposType.ANGULAR, AngularUnit.RADIAN, 1.0) == 0x00200000
    assert mposval_pack(MposType.ANGULAR, AngularUnit.DEGREE, -math.pi / 2) == 0x10AD0000
    assert mposval_pack(MposType.LINEAR, LinearUnit.METRIC, 1.0) == 0x40003E80
    assert mposval_pack(MposType.LINEAR, LinearUnit.STANDARD, 0.254) == 0x50003200
    assert mposval_unpack(0x00200000) == (MposType.ANGULAR, AngularUnit.RADIAN, 1.0)
    k, u, v = mposval_unpack(0x10AD0000)
    assert (k, u) == (MposType.ANGULAR, AngularUnit.DEGREE) and v == pytest.approx(-math.pi / 2)
    assert mposval_unpack_native(0x10AD0000)[2] == -90.0
    k, u, v = mposval_unpack(0x40003E80)
    assert (k, u, v) == (MposType.LINEAR, LinearUnit.METRIC, 1.0)
    assert mposval_unpack_native(0x50003200) == (MposType.LINEAR, LinearUnit.STANDARD, 100.0)
    assert mposval_pack_native(1, 1, 100.0) == 0x50003200


def test_mposval_clamps_and_ignores_reserved():
    assert mposval_pack(0, 0, 100.0) == 0x007FFFFF
    assert mposval_pack(0, 0, -100.0) == 0x00FFFFFF
    assert mposval_pack(1, 0, 1e9) == 0x407FFFFF
    assert mposval_unpack(0x8F200000) == mposval_unpack(0x00200000)
    with pytest.raises(ProtocolError):
        mposval_pack(0, 0, float("nan"))
    with pytest.raises(ProtocolError):
        mposval_pack(2, 0, 1.0)


@FAST
@given(st.integers(0, 1), st.integers(0, 1), st.booleans(), st.integers(0, (1 << 23) - 1))
def test_mposval_round_trip(kind, unit, neg, mag):
    raw = (kind << 30) | (unit << 28) | (0x800000 if neg else 0) | mag
    k, u, v = mposval_unpack(raw)
    assert mposval_pack(k, u, v) == raw
    k, u, v = mposval_unpack_native(raw)
    assert mposval_pack_native(k, u, v) == raw


# ------------------------------------------------------------------ timeval
def test_timeval():
    assert Timeval.from_seconds(1.5) == Timeval(1, 500000)
    assert Timeval.from_seconds(-0.25) == Timeval(-1, 750000)
    assert Timeval.from_seconds(1e20) == Timeval(2 ** 31 - 1, 999999)
    assert Timeval.from_seconds(-1e20) == Timeval(-2 ** 31, 0)
    assert Timeval.from_ns(1_700_000_000_123_456_789) == Timeval(1_700_000_000, 123456)
    assert Timeval(5, 250000).to_seconds() == 5.25
    assert Timeval(2 ** 40, 0).clamped() == Timeval(2 ** 31 - 1, 0)
    with pytest.raises(ProtocolError):
        Timeval.from_seconds(float("nan"))


@FAST
@given(st.integers(-(2 ** 31), 2 ** 31 - 1), st.integers(0, 999999))
def test_timeval_round_trip(sec, usec):
    tv = Timeval(sec, usec)
    assert Timeval.from_ns(tv.to_ns()) == tv


# ---- one rounding rule per value type: half away from zero ----------------------
def _half_away(x) -> int:
    """The reference rule (Decimal's ROUND_HALF_UP rounds ties away from zero)."""
    from decimal import Decimal, ROUND_HALF_UP
    return int(Decimal(x).to_integral_value(rounding=ROUND_HALF_UP))


def test_timeval_rounds_half_away_from_zero_at_exact_halves():
    # 2**-7 s is exactly 7812.5 us: half-to-even would give 7812
    assert Timeval.from_seconds(2.0 ** -7) == Timeval(0, 7813)
    assert Timeval.from_seconds(5 + 2.0 ** -7) == Timeval(5, 7813)
    # negative: -7812.5 us -> -7813 us, i.e. one second back plus 992187 us
    assert Timeval.from_seconds(-(2.0 ** -7)) == Timeval(-1, 1_000_000 - 7813)
    # the top of the microsecond range carries into the next second
    assert Timeval.from_seconds(1.9999996) == Timeval(2, 0)


def test_timeval_rounding_on_a_grid_equals_the_reference():
    # a dyadic grid: every product with 1e6 is exact in binary, ties included
    from decimal import Decimal
    ties = 0
    for k in range(-20000, 20001):
        t = k * 2.0 ** -13
        exact = Decimal(t) * 1_000_000
        ties += exact % 1 in (Decimal("0.5"), Decimal("-0.5"))
        tv = Timeval.from_seconds(t)
        assert tv.sec * 1_000_000 + tv.usec == _half_away(exact), t
    assert ties > 100


def test_mposval_rounds_half_away_from_zero_at_exact_halves():
    res = mposval_resolution(0, 0)        # radians: 2**-21 per count
    for mag in (0, 1, 2, 1000, MPOSVAL_MAG_MAX - 1):
        for sign in (1, -1):
            raw = mposval_pack_native(0, 0, sign * (mag + 0.5) * res)
            assert raw & MPOSVAL_MAG_MAX == mag + 1, (mag, sign)   # even or odd: up in size
            assert bool(raw & 0x800000) == (sign < 0)


def test_host_integer_helpers_of_the_hardware_layer():
    from bsal_ros.protocol.values import (mposval_pack_rad, mposval_unpack_rad, speedval_sign,
                                          statval_fields, statval_pack)
    s = statval_pack(True, False, True, 1234)
    assert s & 0xFF == 0x05 and statval_fields(s) == (True, False, True, 1234)
    assert statval_fields(statval_pack(True, True, True, 1 << 30))[3] == STATVAL_MS_MAX
    assert statval_fields(statval_pack(False, False, False, -5))[3] == 0
    assert speedval_sign(0x0800) == 0 and speedval_sign(0x0801) == -1 and speedval_sign(1) == 1
    assert mposval_pack_rad(-0.0) == 0                     # no sign on a steering of -0.0
    assert mposval_pack_rad(-0.5) == 0x800000 | (1 << 20)
    assert mposval_unpack_rad(mposval_pack_rad(1.25)) == 1.25
    # the hardware layer's old encoder rounded half to even; this one never does
    assert mposval_pack_rad(2.5 * 2.0 ** -21) & MPOSVAL_MAG_MAX == 3
