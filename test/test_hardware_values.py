"""statval / speedval / mposval integers: exact round trips, clamping, never wrapping."""
import math

from hypothesis import given, strategies as st

from bsal_ros.hardware import values as V


def test_statval_bits_and_time_field():
    s = V.statval(True, False, True, 1234)
    assert s & 0xFF == V.STAT_ON | V.STAT_OK
    assert V.statval_fields(s) == (True, False, True, 1234)
    # the 24-bit ms field clamps, never wraps
    assert V.statval_fields(V.statval(True, True, True, 1 << 30))[3] == V.STATVAL_MS_MAX
    assert V.statval_fields(V.statval(False, False, False, -5))[3] == 0


@given(st.integers(min_value=0, max_value=2047), st.booleans(), st.booleans())
def test_speedval_round_trip_is_exact(mag, neg, duty):
    raw = (V.SPEED_DUTY if duty else 0) | (V.SPEED_SIGN if neg and mag else 0) | mag
    is_duty, value = V.speedval_decode(raw)
    assert is_duty == duty
    again = V.speedval_from_duty(value) if duty else V.speedval_from_rad_s(value)
    assert again == raw


def test_speedval_examples_and_clamping():
    assert V.speedval_from_duty(100.0) == 0x8000 | 2047
    assert V.speedval_from_duty(-50.0) == 0x8000 | 0x0800 | 1024
    assert V.speedval_from_duty(250.0) == 0x8000 | 2047            # clamped
    assert V.speedval_from_rad_s(1.5) == 1500
    assert V.speedval_from_rad_s(-9.0) == 0x0800 | 2047            # clamped
    assert V.speedval_decode(0x0800 | 1500) == (False, -1.5)
    assert V.speedval_sign(0x0800) == 0                            # -0 is no direction
    assert V.speedval_sign(0x0801) == -1 and V.speedval_sign(1) == 1


@given(st.floats(min_value=-3.1, max_value=3.1))
def test_mposval_angular_radians_resolution(a):
    raw = V.mposval_encode(a)
    assert raw & V.MPOS_LINEAR == 0
    assert abs(V.mposval_decode(raw) - a) <= 2 ** -22 + 1e-12


def test_mposval_units_and_clamp():
    assert V.mposval_decode(V.mposval_encode(-180.0, standard_units=True)) == -180.0
    raw = V.mposval_encode(1e9, linear=True)
    assert raw & V.MPOS_DISP == V.MPOS_DISP                         # clamped
    assert V.mposval_decode(V.mposval_encode(1234.5625, linear=True)) == 1234.5625
    assert math.isclose(V.wrap_angle(3 * math.pi), -math.pi)
