"""Bit-packed value types: statval, speedval, mposval, timeval (001 4.7, DESIGN.md 4)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bsal_ros.protocol import (AngularUnit, LinearUnit, MposType, ProtocolError, Statval,
                               Timeval, mposval_pack, mposval_pack_native, mposval_resolution,
                               mposval_unpack, mposval_unpack_native, speedval_pack,
                               speedval_unpack)

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
