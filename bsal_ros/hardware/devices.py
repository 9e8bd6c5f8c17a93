"""Device objects: the "user" view (001 2.5) - one ultrasonic, one motor.

A device maps a (class, id) to a board and channel (from the robot
description) and reads the board's cache; it never touches the bus. Its
:meth:`snapshot` is a :class:`DeviceSnapshot` in SI units with the raw BSAL
values beside them (the fields of ``bsal_interfaces/DeviceState``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import registers as R
from .boards import angle_from_count
from .values import speedval_decode, speedval_sign, statval

from bsal_ros.core.device_classes import (ABSOLUTE_ENCODER, ACCELEROMETER, DC_MOTOR,  # noqa: F401
                                     MOTOR_CLASSES, PSERVO_MOTOR, RELATIVE_ENCODER,
                                     SENSOR_CLASSES, ULTRASONIC)


@dataclass
class DeviceSnapshot:
    device_class: str
    id: int
    on: bool
    up: bool
    ok: bool
    fault: str
    stamp: float | None          # wall time the data was read (None: never)
    statval: int = 0
    delay_us: int = 0
    range_m: float = math.inf
    d_count: int = 0
    d_statval: int = 0
    count: int = 0
    position: float = 0.0
    accel_g: float = 0.0
    speedval: int = 0
    duty_mode: bool = False
    speed: float = 0.0
    measured_speed: float = 0.0
    mposval: int = 0
    motor_position: float = 0.0
    homed: bool = False
    homing: bool = False
    stalled: bool = False
    extra: dict = field(default_factory=dict)


class Device:
    device_class = ""
    enable_bit = 0x01

    def __init__(self, dev_id: int, board, channel: int, cfg: dict):
        self.id = int(dev_id)
        self.board = board
        self.channel = int(channel)
        self.cfg = cfg
        self.on = False
        self.label = cfg.get("name") or f"{self.device_class}_{self.id:02d}"
        self.frame = cfg.get("frame") or f"{self.label}_link"

    @property
    def key(self) -> tuple[str, int]:
        return self.device_class, self.id

    @property
    def name(self) -> str:
        return f"{self.device_class}_{self.id:02d}"

    def ok(self) -> bool:
        return self.board.up and self.board.ok

    def base(self, base_time: float) -> DeviceSnapshot:
        b = self.board
        ms = 0 if b.stamp is None else int((b.stamp - base_time) * 1000.0)
        fault = b.fault
        if self.device_class in MOTOR_CLASSES:
            if getattr(b, "stop_pending", False):
                note = "stop latched: re-sent when the board answers"
                fault = f"{fault}; {note}" if fault else note
            elif getattr(b, "timed_out", False) and not fault:
                fault = (f"stopped by the board's command watchdog "
                         f"({b.command_timeout_ms} ms without a command)")
        s = DeviceSnapshot(self.device_class, self.id, self.on, b.up, b.ok, fault,
                           b.stamp, statval(self.on, b.up, b.ok, ms))
        if self.device_class in MOTOR_CLASSES:
            s.extra["stop_pending"] = bool(getattr(b, "stop_pending", False))
            s.extra["watchdog_stopped"] = bool(getattr(b, "timed_out", False))
        return s

    def snapshot(self, base_time: float, robot) -> DeviceSnapshot:
        return self.base(base_time)


class Ultrasonic(Device):
    device_class = ULTRASONIC

    @property
    def enable_bit(self):
        return 1 << self.channel

    def snapshot(self, base_time, robot):
        s = self.base(base_time)
        s.delay_us = self.board.delays[self.channel]
        s.range_m = robot.delay_to_range(s.delay_us)
        return s


class RelativeEncoder(Device):
    device_class = RELATIVE_ENCODER
    enable_bit = R.EN_ENCODER

    def snapshot(self, base_time, robot):
        b = self.board
        s = self.base(base_time)
        s.d_count = b.d_count
        s.count = R.to_i16(b.count or 0)
        s.position = angle_from_count(b.total, robot.drive_cpr)
        ms = 0 if b.prev_stamp is None else int((b.prev_stamp - base_time) * 1000.0)
        s.d_statval = statval(self.on, b.up, b.ok, ms)
        s.measured_speed = b.speed_meas
        return s


class AbsoluteEncoder(Device):
    device_class = ABSOLUTE_ENCODER
    enable_bit = R.EN_ENCODER

    def snapshot(self, base_time, robot):
        b = self.board
        s = self.base(base_time)
        s.count = R.to_i16(b.count)
        s.position = angle_from_count(s.count, robot.steer_cpr)
        return s


class Accelerometer(Device):
    device_class = ACCELEROMETER

    def snapshot(self, base_time, robot):
        s = self.base(base_time)
        s.accel_g = self.board.accel_g
        return s


class DcMotor(Device):
    device_class = DC_MOTOR
    enable_bit = R.EN_MOTOR

    def snapshot(self, base_time, robot):
        b = self.board
        s = self.base(base_time)
        s.speedval = b.speed_set
        s.duty_mode, s.speed = speedval_decode(b.speed_set)
        s.measured_speed = b.speed_meas
        s.stalled = b.stalled
        return s

    def moving(self) -> bool:
        return abs(self.board.speed_meas) > 0.02

    def motion_sign(self) -> int:
        m = self.board.speed_meas
        return 0 if abs(m) <= 0.02 else (1 if m > 0 else -1)


class PservoMotor(Device):
    device_class = PSERVO_MOTOR
    enable_bit = R.EN_MOTOR

    def snapshot(self, base_time, robot):
        b = self.board
        s = self.base(base_time)
        s.speedval = b.speed_set
        s.duty_mode, s.speed = speedval_decode(b.speed_set)
        s.mposval = b.mposval
        s.motor_position = b.position
        s.homed = b.homed
        s.homing = b.homing
        s.stalled = b.stalled
        s.extra["phase"] = R.PHASE_NAMES.get(b.phase, str(b.phase))
        return s

    def moving(self) -> bool:
        return self.board.turning

    def motion_sign(self) -> int:
        return speedval_sign(self.board.speed_set) if self.board.turning else 0


DEVICE_CLASSES = {
    ULTRASONIC: Ultrasonic,
    RELATIVE_ENCODER: RelativeEncoder,
    ABSOLUTE_ENCODER: AbsoluteEncoder,
    ACCELEROMETER: Accelerometer,
    DC_MOTOR: DcMotor,
    PSERVO_MOTOR: PservoMotor,
}
