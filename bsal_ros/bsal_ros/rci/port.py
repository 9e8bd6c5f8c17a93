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

"""The robot port: what the RCI session needs from the robot, nothing more.

The session (``bsal_ros.rci.session``) is written against this abstract
interface; the ROS node implements it with rclpy service/action clients and a
cache of the hardware node's state topics, and the tests implement it with a
fake robot.  No ROS import here.

Device classes are the strings of ``bsal_interfaces/DeviceState`` CLASS_*
(:mod:`bsal_ros.core.device_classes`); device states are
:class:`bsal_ros.core.DeviceState` records and results
:class:`bsal_ros.core.Result`. A port raises :class:`PortUnavailable` when
the robot side does not answer in time (hardware node gone).
"""

from __future__ import annotations

import abc
import asyncio
from dataclasses import dataclass
import time
from typing import Iterable, Sequence

from ..core.device_classes import (ABSOLUTE_ENCODER, ACCELEROMETER, DC_MOTOR,  # noqa: F401
                                   MOTOR_CLASSES, PSERVO_MOTOR, RELATIVE_ENCODER, SENSOR_CLASSES,
                                   ULTRASONIC)
from ..core.device_state import DeviceState
from ..core.result import Result


#: s between two looks at :meth:`RobotPort.waiting_for` in the default :meth:`RobotPort.ready`
READY_POLL_S = 0.02


class PortUnavailable(Exception):
    """The robot side did not answer (timeout, service gone)."""


@dataclass(slots=True)
class MotorSetting:
    """One Set Motor item in SI: ``duty`` True = percent (-100..100), else rad/s."""

    id: int
    duty: bool
    value: float


@dataclass(slots=True)
class SonarTiming:
    """One ultrasonic sensor's firing slot and interval (-1: leave unchanged)."""

    id: int
    firing_slot: int = -1      # -1 = unchanged
    interval_ms: int = -1      # -1 = unchanged


class RobotPort(abc.ABC):
    """Everything the RCI session asks of the robot."""

    # ---------------------------------------------------------- device list
    @abc.abstractmethod
    def device_ids(self, device_class: str) -> frozenset[int]:
        """The configured ids of a device class (empty set: class absent)."""

    # ----------------------------------------------------------- readiness
    def waiting_for(self) -> str:
        """What the robot side still lacks before a session may leave its
        initialization phase ("": nothing, the default), e.g. the hardware
        node's interfaces not discovered yet or its device list not received.
        Until it is empty a read or command would be answered ABORT for a
        device the robot has, so the session holds its IInCp (001 4.5.3)."""
        return ""

    async def ready(self) -> None:
        """Return once :meth:`waiting_for` is empty (the default polls it
        every :data:`READY_POLL_S`; a port that knows when it changes may
        override this). The caller bounds the wait."""
        while self.waiting_for():
            await asyncio.sleep(READY_POLL_S)

    # ----------------------------------------------------------- commands
    @abc.abstractmethod
    async def reset(self) -> Result:
        """Stop every motor and sensor, cancel homing (001 4.6.6)."""

    @abc.abstractmethod
    async def activate(self, device_class: str, ids: Sequence[int],
                       active: Sequence[bool]) -> Result:
        """Switch devices on/off; all or nothing."""

    @abc.abstractmethod
    async def set_motors(self, device_class: str, settings: Sequence[MotorSetting]) -> Result:
        """Set motor speeds; all or nothing (REFUSED when a protection applies)."""

    @abc.abstractmethod
    async def clear_encoders(self, ids: Sequence[int]) -> Result:
        """Zero relative encoder counts."""

    @abc.abstractmethod
    async def set_sonar_timing(self, timings: Sequence[SonarTiming]) -> Result:
        """Ultrasonic firing order/timing (our extension of 001 4.6.12)."""

    async def sim_teleport(self, sub_code: int, items) -> Result:
        """Move the simulated robot (CSmTp); a robot without a simulator says so."""
        return Result(Result.NOT_SUPPORTED, "no simulator behind this port")

    @abc.abstractmethod
    async def home_steering(self, motor_id: int) -> Result:
        """Home the steering; returns when the homing has ended (cancellable:
        cancelling the awaiting task cancels the homing)."""

    @abc.abstractmethod
    async def stop_motors(self, device_class: str) -> bool:
        """Every motor of the class to zero (one attempt). True when the robot
        accepted it (or the class has no motor). Must not raise."""

    async def stop_all(self, deactivate: dict[str, Iterable[int]],
                       reactivate: dict[str, Iterable[int]] | None = None) -> set[str]:
        """Safety stop: every motor to zero, the ``deactivate`` devices
        switched off and the ``reactivate`` ones back on (what the hardware had
        before the session), concurrently. Returns the motor classes that could
        not be stopped (the caller keeps retrying them). Must not raise."""
        classes = list(MOTOR_CLASSES)
        stops = [self.stop_motors(c) for c in classes]
        offs = [self._switch(c, list(ids), False) for c, ids in deactivate.items() if ids]
        ons = [self._switch(c, list(ids), True) for c, ids in (reactivate or {}).items() if ids]
        results = await asyncio.gather(*stops, *offs, *ons, return_exceptions=True)
        return {c for c, ok in zip(classes, results[:len(classes)]) if ok is not True}

    async def _switch(self, device_class: str, ids: list[int], on: bool) -> None:
        try:
            await self.activate(device_class, ids, [on] * len(ids))
        except Exception:   # noqa: BLE001 - best effort
            pass

    def base_time_ns(self) -> int | None:
        """The control process's base time (the hardware node's, ns since the
        epoch); None when the port has none (the session keeps its own)."""
        return None

    # ---------------------------------------------------------- state
    def now(self) -> float:
        """The clock of ``DeviceState.stamp``: seconds since the epoch."""
        return time.time()

    @abc.abstractmethod
    def cached(self, device_class: str, ids: Sequence[int]) -> list[DeviceState] | None:
        """Fresh cached states (no older than one board cycle) for every id,
        or None when any is missing or stale."""

    @abc.abstractmethod
    async def fetch(self, device_class: str, ids: Sequence[int]) -> list[DeviceState]:
        """States read from the robot side now (slow path)."""

    # ------------------------------------------------- control-application view
    def delivered(self, device_class: str, states: Sequence[DeviceState], what: str) -> None:
        """Called after a Get reply was written to the control application
        (``what`` = "data" or "status"); the node republishes it for the RDI
        control-application stream. Must be cheap; default: nothing."""

    def session_event(self, event: str, detail: str = "") -> None:
        """Session lifecycle notices (connected, closed ...); default: nothing."""
