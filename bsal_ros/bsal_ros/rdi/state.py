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

"""What one RDI stream knows about the robot, and the frames built from it.

Pure Python (no ROS, no sockets). The gateway node converts ROS messages into
:class:`bsal_ros.core.DeviceState` records and hands them to the stream's event loop; the stream
builds one frame per tick from the newest values (newest state wins: a value
is replaced as soon as a newer one arrives, and a frame is always built from
the latest values at the moment it is sent).

Mapping onto RDI packets (001 chapter 5):

========================  ==================================================
device / source           RDI packet
========================  ==================================================
ultrasonic n              RDI-Sn ULTRASONIC id n: delay (us), statval
relative_encoder n        RDI-Sn RELENCODER id n: d_count, d_statval, count, statval
absolute_encoder n        RDI-Sn ABSENCODER id n: count, statval
accelerometer n           RDI-Sn ACCEL id n: accel (g), statval
dc_motor n                RDI-Mt DC id n: speedval, statval
pservo_motor n            RDI-Mt DC id ``pservo_id_offset + n`` (RDI has one
                          motor subclass; offset 256 by default, and a real
                          DC motor's id always wins: see below), and RDI-Ac
                          STEER id n: angle (rad)
relative_encoder n        RDI-Ac DRIVE id n: wheel rotations (position / 2 pi)
pose estimate             RDI-RbOr EGO: x, y (m), heading (rad)
odometry twist            RDI-RbOr OMNI: direction of motion (rad), speed (m/s)
base time                 RDI-Ms BASETIME (sent by the fan-out, not in frames)
========================  ==================================================

Steering ids never collide with DC motor ids: pseudo-servo motors go out
as RDI-Mt DC ids in a high range (``pservo_id_offset`` + n, 256 by default,
far above the robot's DC motor ids) and, should a DC motor of the stream
have that very id (a description with DC ids >= 256), the DC motor is sent
and the pseudo-servo's RDI-Mt item is left out (it is still in RDI-Ac STEER).
``d_count``/``d_statval`` are the board's (change between its two latest
readings and the time of the earlier one), the same number RCI sends.

Several devices of one kind go out as one group packet when their ids are
consecutive, as one poly packet otherwise (both save bytes over general
packets), at most 255 items per packet.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ..core.device_classes import (ABSOLUTE_ENCODER, ACCELEROMETER, ALL_CLASSES,  # noqa: F401
                                   DC_MOTOR, PSERVO_MOTOR, RELATIVE_ENCODER, ULTRASONIC)
# ALL_CLASSES: the names this layer uses (test_device_classes checks every layer)
from ..core.device_state import DeviceState
from ..kinds import device_classes, rdi_sensor_kinds
from ..protocol import (DcMotorReading, DriveReading, Form,
                        RdiActuator, RdiActuatorType, RdiMotor, RdiMotorType, RdiOrientEgo,
                        RdiOrientOmni, RdiSensor, Statval, SteerReading, Timeval)

#: default RDI-Mt id of pseudo-servo motor 0 (docs/RDI.md "steering")
PSERVO_RDI_ID_OFFSET = 256

__all__ = ["StreamState", "id_packets", "PSERVO_RDI_ID_OFFSET", "ULTRASONIC",
           "RELATIVE_ENCODER",
           "ABSOLUTE_ENCODER", "ACCELEROMETER", "DC_MOTOR", "PSERVO_MOTOR"]

TWO_PI = 2.0 * math.pi


class Ego(NamedTuple):
    """The pose estimate for RDI-RbOr EGO."""

    x: float
    y: float
    heading: float
    stamp: float


class Omni(NamedTuple):
    """Direction of motion and speed for RDI-RbOr OMNI."""

    direction: float
    speed: float
    stamp: float


def _order(stamp: float | None) -> float:
    """A state's stamp for ordering updates; never read (None) sorts first."""
    return 0.0 if stamp is None else stamp


def id_packets(cls, sub, pairs):
    """``pairs`` = [(id, data)] -> packets in the cheapest form (group for
    consecutive ids, poly otherwise, general for one item), <= 255 items each."""
    pairs = sorted(pairs, key=lambda p: p[0])
    out = []
    for i in range(0, len(pairs), 255):
        chunk = pairs[i:i + 255]
        n = len(chunk)
        if n == 1:
            out.append(cls(sub, chunk, Form.GENERAL))
        elif chunk[-1][0] - chunk[0][0] == n - 1:
            out.append(cls(sub, chunk, Form.GROUP))
        else:
            out.append(cls(sub, chunk, Form.POLY))
    return out


def clamp_i16(v) -> int:
    """Clamp into gint16 (RDI carries the count the hardware node reported)."""
    v = int(v)
    return -32768 if v < -32768 else (32767 if v > 32767 else v)


def _u(v, bits) -> int:
    v = int(v)
    m = (1 << bits) - 1
    return 0 if v < 0 else (m if v > m else v)


def _f32(v) -> float:
    v = float(v)
    if math.isnan(v):
        return v
    return max(-3.4e38, min(3.4e38, v))


class StreamState:
    """Newest robot state of one RDI stream. Not thread-safe: mutate it from the
    stream's event loop only (the node uses ``loop.call_soon_threadsafe``)."""

    def __init__(self, pservo_id_offset: int = PSERVO_RDI_ID_OFFSET):
        self.pservo_id_offset = int(pservo_id_offset)
        self.devices: dict[tuple[str, int], DeviceState] = {}
        self.base_time: Timeval | None = None
        self.ego: Ego | None = None
        self.omni: Omni | None = None
        self.version = 0            # bumped on every change
        self.base_version = 0       # bumped when the base time moves

    # ------------------------------------------------------------- updates
    def clear(self) -> None:
        """Forget every device and the orientation (keeps the base time)."""
        self.devices.clear()
        self.ego = None
        self.omni = None
        self.version += 1

    def update_devices(self, devices) -> int:
        """Store newer device states; returns how many were taken."""
        taken = 0
        store = self.devices
        for d in devices:
            key = (d.device_class, d.id)
            old = store.get(key)
            if old is not None and _order(d.stamp) < _order(old.stamp):
                continue
            store[key] = d
            taken += 1
        if taken:
            self.version += 1
        return taken

    def merge_device(self, d: DeviceState, fields) -> None:
        """Update only ``fields`` of a device (creating it with defaults if new),
        e.g. the control-application view learns data and status separately."""
        key = (d.device_class, d.id)
        cur = self.devices.get(key)
        if cur is None:
            cur = self.devices[key] = DeviceState(d.device_class, d.id)
        for f in fields:
            setattr(cur, f, getattr(d, f))
        cur.stamp = max(_order(cur.stamp), _order(d.stamp))
        self.version += 1

    def set_base_time(self, tv: Timeval) -> bool:
        """Returns True when the base time moved."""
        tv = Timeval(int(tv[0]), int(tv[1]))
        if tv == self.base_time:
            return False
        self.base_time = tv
        self.base_version += 1
        self.version += 1
        return True

    def set_ego(self, x: float, y: float, heading: float, stamp: float) -> None:
        """Store the pose (x, y in m, heading in rad) unless older."""
        if self.ego is None or stamp >= self.ego.stamp:
            self.ego = Ego(float(x), float(y), float(heading), float(stamp))
            self.version += 1

    def set_omni_from_twist(self, heading: float, vx: float, stamp: float) -> None:
        """Direction of motion in the odometry frame and |speed|, from the body
        heading and the body-frame forward speed (a tricycle moves along its
        heading, backwards when vx < 0)."""
        if self.omni is not None and stamp < self.omni.stamp:
            return
        vx = float(vx)
        direction = heading if vx >= 0 else heading + math.pi
        direction = math.atan2(math.sin(direction), math.cos(direction))
        self.omni = Omni(direction, abs(vx), float(stamp))
        self.version += 1

    # -------------------------------------------------------------- frames
    def statval_at(self, stamp: float, on=True, up=True, ok=True) -> int:
        """statval for an absolute time (s since the epoch) against the base time."""
        if self.base_time is None:
            return Statval(on, up, ok, 0).pack()
        base = self.base_time.sec + self.base_time.usec / 1e6
        return Statval.at(stamp - base, on, up, ok).pack()

    def build_frame(self) -> list:
        """The packets of one frame, from the newest values."""
        by_class: dict[str, list[DeviceState]] = {c: [] for c in device_classes()}
        for d in self.devices.values():
            lst = by_class.get(d.device_class)
            if lst is not None:
                lst.append(d)
        out = []
        for k in rdi_sensor_kinds():       # RDI-Sn: each kind's reading (bsal_ros/kinds)
            ds = by_class.get(k.name)
            if ds:
                out += id_packets(RdiSensor, k.rdi.sub, [(d.id, k.rdi_reading(d)) for d in ds])
        rel = by_class[RELATIVE_ENCODER]
        ps = by_class[PSERVO_MOTOR]
        motors = [(d.id, DcMotorReading(_u(d.speedval, 16), _u(d.statval, 32)))
                  for d in by_class[DC_MOTOR]]
        dc_ids = {i for i, _ in motors}
        # a real DC motor's id wins: a steering motor never shadows one
        motors += [(i, DcMotorReading(_u(d.speedval, 16), _u(d.statval, 32)))
                   for d in ps if (i := self.pservo_id_offset + d.id) not in dc_ids]
        motors = [(i, r) for i, r in motors if 0 <= i <= 0xFFFF]
        if motors:
            out += id_packets(RdiMotor, RdiMotorType.DC, motors)
        if ps:
            out += id_packets(RdiActuator, RdiActuatorType.STEER,
                              [(d.id, SteerReading(_f32(d.motor_position), _u(d.statval, 32)))
                               for d in ps])
        if rel:
            out += id_packets(RdiActuator, RdiActuatorType.DRIVE,
                              [(d.id, DriveReading(_f32(d.position / TWO_PI), _u(d.statval, 32)))
                               for d in rel])
        if self.ego is not None:
            x, y, th, st = self.ego
            out.append(RdiOrientEgo(_f32(x), _f32(y), _f32(th), self.statval_at(st)))
        if self.omni is not None:
            direction, speed, st = self.omni
            out.append(RdiOrientOmni(_f32(direction), _f32(speed), self.statval_at(st)))
        return out
