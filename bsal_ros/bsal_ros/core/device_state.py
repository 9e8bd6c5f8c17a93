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

"""One device's state: the single record a reading travels in.

The hardware layer produces a :class:`DeviceState` for every device it polls;
the hardware node turns it into ``bsal_interfaces/DeviceState`` (one converter,
``bsal_ros.nodes.device_state_msg``); the gateways turn the message back into
a :class:`DeviceState` and the RCI session and the RDI streams read it. The
fields are the message's, so no layer renames or reconverts a value: SI units
beside the raw BSAL values the legacy protocols carry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math


@dataclass(slots=True)
class DeviceState:
    """The state of one device (class, id) as last read from its board.

    ``stamp`` is when the data was read, in seconds on the producer's clock
    (the hardware layer: ``time.time()``; from a message: its header stamp);
    ``None`` means never read. Only ages and order are computed from it.
    Fields that do not apply to a device class keep their defaults.
    """

    device_class: str
    id: int
    on: bool = False
    up: bool = True
    ok: bool = True
    fault: str = ""              # why ok/up is false, or a latched stop; else ""
    stamp: float | None = None
    statval: int = 0             # raw statval (001 4.7.3), ms since base time << 8
    # ultrasonic
    delay_us: int = 0
    range_m: float = math.inf
    # encoders: d_count since the previous reading (relative), count on the wire
    d_count: int = 0
    d_statval: int = 0
    count: int = 0
    position: float = 0.0        # rad
    # accelerometer
    accel_g: float = 0.0
    # motors
    speedval: int = 0            # raw speedval (001 4.7.4)
    duty_mode: bool = False      # True: speed in percent; False: rad/s
    speed: float = 0.0
    measured_speed: float = 0.0  # rad/s, hardware only (not in the message)
    stalled: bool = False        # hardware only
    stop_pending: bool = False   # a stop is latched until the board answers
    watchdog_stopped: bool = False  # the board's command watchdog stopped it
    # pservo
    mposval: int = 0             # raw mposval (001 4.7.1)
    motor_position: float = 0.0  # rad
    homed: bool = False
    homing: bool = False
    phase: str = ""              # homing phase name, hardware only
    # a device kind's own values beyond these fields (bsal_ros.kinds, extra_fields)
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        """(device_class, id): how devices are looked up everywhere."""
        return self.device_class, self.id
