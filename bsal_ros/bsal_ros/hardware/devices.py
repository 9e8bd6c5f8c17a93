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

"""Device objects: the "user" view (001 2.5) - one ultrasonic, one motor.

A device maps a (class, id) to a board and channel (from the robot
description) and reads the board's cache; it never touches the bus. Its
:meth:`Device.snapshot` is a :class:`bsal_ros.core.DeviceState` in SI units
with the raw BSAL values beside them.
"""

from __future__ import annotations

from . import registers as regs
from ..core.device_classes import (ABSOLUTE_ENCODER, ACCELEROMETER, DC_MOTOR,  # noqa: F401
                                   MOTOR_CLASSES, PSERVO_MOTOR, RELATIVE_ENCODER, SENSOR_CLASSES,
                                   ULTRASONIC)
from ..core.device_state import DeviceState
from ..core.units import counts_to_angle, delay_to_range
from ..protocol.values import speedval_sign, speedval_unpack, statval_pack


def _ms_since(stamp: float | None, base_time: float) -> int:
    """Milliseconds from the base time to a wall-time stamp (0: never read)."""
    return 0 if stamp is None else int((stamp - base_time) * 1000.0)


class Device:
    """One BSAL device: a (class, id) on a board channel, read from the board's cache."""

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
        """(device_class, id)."""
        return self.device_class, self.id

    @property
    def name(self) -> str:
        """``<class>_<id>`` as used in log lines and results."""
        return f"{self.device_class}_{self.id:02d}"

    def ok(self) -> bool:
        """The board behind the device answers and its data is good."""
        return self.board.up and self.board.ok

    def base(self, base_time: float) -> DeviceState:
        """The fields every device class has: status bits, statval, fault, stamp."""
        b = self.board
        fault = b.fault
        s = DeviceState(self.device_class, self.id, on=self.on, up=b.up, ok=b.ok,
                        stamp=b.stamp, statval=statval_pack(self.on, b.up, b.ok,
                                                            _ms_since(b.stamp, base_time)))
        if self.device_class in MOTOR_CLASSES:
            s.stop_pending = bool(b.stop_pending)
            s.watchdog_stopped = bool(b.timed_out)
            if s.stop_pending:
                note = "stop latched: re-sent when the board answers"
                fault = f"{fault}; {note}" if fault else note
            elif s.watchdog_stopped and not fault:
                fault = (f"stopped by the board's command watchdog "
                         f"({b.command_timeout_ms} ms without a command)")
        # a bus whose devices have a readiness of their own (ros_base: a silent topic)
        own = getattr(b.bus, "device_fault", None)
        why = own(self.device_class, self.id) if own is not None else None
        if why:
            s.ok = False
            s.statval = statval_pack(self.on, b.up, False, _ms_since(b.stamp, base_time))
            fault = f"{fault}; {why}" if fault and not b.ok else why
        # a fault string is only news while the board is not healthy or a stop is in play
        if not s.ok or not b.up or s.stop_pending or s.watchdog_stopped:
            s.fault = fault
        return s

    def snapshot(self, base_time: float, robot) -> DeviceState:
        """This device's state; ``robot`` supplies the unit parameters."""
        return self.base(base_time)


class Ultrasonic(Device):
    """One sonar channel of an ultrasonic board: echo delay and range."""

    device_class = ULTRASONIC

    @property
    def enable_bit(self):
        """Each sonar has its own ENABLE bit: its channel."""
        return 1 << self.channel

    def snapshot(self, base_time, robot):
        """Echo delay and range."""
        s = self.base(base_time)
        s.delay_us = self.board.delays[self.channel]
        s.range_m = delay_to_range(s.delay_us, robot.speed_of_sound)
        return s


class EncoderDevice(Device):
    """An encoder: the raw count as the wire carries it (gint16) and an angle."""

    enable_bit = regs.EN_ENCODER

    def snapshot(self, base_time, robot):
        """Count and the class's own fields."""
        b = self.board
        s = self.base(base_time)
        s.count = regs.to_i16(b.count or 0)
        self.fill(s, b, base_time, robot)
        return s

    def fill(self, s: DeviceState, b, base_time: float, robot) -> None:  # pragma: no cover
        """The class's own fields from its board's cache."""
        raise NotImplementedError


class RelativeEncoder(EncoderDevice):
    """The drive wheel's encoder on the dc_motor board: counts since the last read."""

    device_class = RELATIVE_ENCODER

    def fill(self, s, b, base_time, robot):
        """Counts since the last read, angle since the last clear, their statval."""
        s.d_count = b.d_count
        s.position = counts_to_angle(b.total, robot.drive_cpr)
        s.d_statval = statval_pack(self.on, b.up, s.ok, _ms_since(b.prev_stamp, base_time))
        s.measured_speed = b.speed_meas


class AbsoluteEncoder(EncoderDevice):
    """The steering angle encoder on the pservo board."""

    device_class = ABSOLUTE_ENCODER

    def fill(self, s, b, base_time, robot):
        """The steering angle."""
        s.position = counts_to_angle(s.count, robot.steer_cpr)


class Accelerometer(Device):
    """The one-axis accelerometer (g along base_link x)."""

    device_class = ACCELEROMETER

    def snapshot(self, base_time, robot):
        """Acceleration in g."""
        s = self.base(base_time)
        s.accel_g = self.board.accel_g
        return s


class MotorDevice(Device):
    """A motor: commanded speedval and its meaning, stall; subclasses add the rest."""

    enable_bit = regs.EN_MOTOR

    def snapshot(self, base_time, robot):
        """Speedval, its meaning, stall, and the class's own fields."""
        b = self.board
        s = self.base(base_time)
        s.speedval = b.speed_set
        s.duty_mode, s.speed = speedval_unpack(b.speed_set)
        s.stalled = b.stalled
        self.fill(s, b)
        return s

    def fill(self, s: DeviceState, b) -> None:  # pragma: no cover - abstract
        """The class's own fields from its board's cache."""
        raise NotImplementedError


class DcMotor(MotorDevice):
    """The drive motor: commanded speedval, measured speed, stall."""

    device_class = DC_MOTOR

    def fill(self, s, b):
        """Measured wheel speed."""
        s.measured_speed = b.speed_meas

    def moving(self) -> bool:
        """The wheel turns (measured speed above the noise)."""
        return abs(self.board.speed_meas) > 0.02

    def motion_sign(self) -> int:
        """-1, 0 or +1: the direction the wheel turns now."""
        m = self.board.speed_meas
        return 0 if abs(m) <= 0.02 else (1 if m > 0 else -1)


class PservoMotor(MotorDevice):
    """The steering pseudo-servo: speed or position mode, homing."""

    device_class = PSERVO_MOTOR

    def fill(self, s, b):
        """Position, homing state and phase."""
        s.mposval = b.mposval
        s.motor_position = b.position
        s.homed = b.homed
        s.homing = b.homing
        s.phase = regs.PHASE_NAMES.get(b.phase, str(b.phase))

    def moving(self) -> bool:
        """The steering turns (its encoder count changed at the last read)."""
        return self.board.turning

    def motion_sign(self) -> int:
        """-1, 0 or +1: the direction the steering turns now."""
        return speedval_sign(self.board.speed_set) if self.board.turning else 0
