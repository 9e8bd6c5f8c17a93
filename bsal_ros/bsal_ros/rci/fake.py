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

"""An in-memory robot implementing RobotPort: for tests, benchmarks and a
ROS-free demo of the gateway. It keeps the same protections the hardware node
documents (bsal_interfaces/SetMotors.srv): a motor must be active to be set,
the steering cannot be set while homing, invalid ids change nothing.
"""

from __future__ import annotations

import asyncio
import time
from typing import Iterable, Sequence

from .port import PortUnavailable, RobotPort
from ..core.device_classes import (ABSOLUTE_ENCODER, ACCELEROMETER, DC_MOTOR, MOTOR_CLASSES,
                                   PSERVO_MOTOR, RELATIVE_ENCODER, ULTRASONIC)
from ..core.device_state import DeviceState
from ..core.result import Result, SUCCESS
from ..protocol.values import mposval_pack, speedval_pack


class FakeRobotPort(RobotPort):
    """A robot in memory: twelve sonars, one of every other device class."""

    def __init__(self, n_sonars: int = 12, home_duration_s: float = 0.2):
        self.ids = {ULTRASONIC: frozenset(range(n_sonars)), RELATIVE_ENCODER: frozenset({0}),
                    ABSOLUTE_ENCODER: frozenset({0}), ACCELEROMETER: frozenset({0}),
                    DC_MOTOR: frozenset({0}), PSERVO_MOTOR: frozenset({0})}
        self.home_duration_s = home_duration_s
        self.available = True
        self.stale = False
        self.on: dict[str, set[int]] = {c: set() for c in self.ids}
        self.speed: dict[tuple[str, int], tuple[bool, float]] = {}
        self.count = 0
        self.d_count = 0             # change at the last "board reading" (advance)
        self.delay_base = 5000
        self.homing = False
        self.homed = False
        self.home_cancelled = 0
        self.home_release: asyncio.Event | None = None   # tests may hold a homing open
        self.calls: list[tuple] = []
        self.stop_calls: list[dict] = []
        self.delivered_log: list[tuple] = []
        #: the states of the latest delivery per (class, "data"/"status")
        self.last_delivered: dict[tuple[str, str], list[DeviceState]] = {}
        self.events: list[tuple[str, str]] = []
        self.steer_angle = 0.0
        self.refuse_stop: set[str] = set()    # motor classes whose stop is refused

    # ---------------------------------------------------------------- helpers
    def _check(self):
        if not self.available:
            raise PortUnavailable("fake robot switched off")

    def moving(self) -> bool:
        """True while any motor has a non-zero speed."""
        return any(v for _, v in self.speed.values())

    def device_ids(self, device_class: str) -> frozenset[int]:
        """The configured ids of a class."""
        return self.ids.get(device_class, frozenset())

    # --------------------------------------------------------------- commands
    async def reset(self) -> Result:
        """Everything off, every speed zero."""
        self._check()
        self.calls.append(("reset",))
        for s in self.on.values():
            s.clear()
        self.speed.clear()
        return SUCCESS

    async def activate(self, device_class, ids, active) -> Result:
        """Switch devices on or off (INVALID_ID for an unknown id)."""
        self._check()
        self.calls.append(("activate", device_class, list(ids), list(active)))
        if any(i not in self.ids[device_class] for i in ids):
            return Result(Result.INVALID_ID, "bad id")
        for i, a in zip(ids, active):
            (self.on[device_class].add if a else self.on[device_class].discard)(i)
            if not a:
                self.speed.pop((device_class, i), None)
        return SUCCESS

    async def set_motors(self, device_class, settings) -> Result:
        """Set speeds of active motors (REFUSED while homing or when off)."""
        self._check()
        self.calls.append(("set_motors", device_class, [(s.id, s.duty, s.value) for s in settings]))
        if device_class == PSERVO_MOTOR and self.homing:
            return Result(Result.REFUSED, "steering homing in progress")
        for s in settings:
            if s.id not in self.on[device_class]:
                return Result(Result.REFUSED, f"motor {s.id} not active")
        for s in settings:
            self.speed[(device_class, s.id)] = (s.duty, s.value)
        return SUCCESS

    async def clear_encoders(self, ids) -> Result:
        """Zero the encoder count."""
        self._check()
        self.calls.append(("clear_encoders", list(ids)))
        self.count = 0
        self.d_count = 0
        return SUCCESS

    async def set_sonar_timing(self, timings) -> Result:
        """Record the timing (nothing else changes)."""
        self._check()
        self.calls.append(("set_sonar_timing", [(t.id, t.firing_slot, t.interval_ms)
                                                for t in timings]))
        return SUCCESS

    async def home_steering(self, motor_id: int) -> Result:
        """Home for ``home_duration_s`` (or until ``home_release`` is set)."""
        self._check()
        self.calls.append(("home", motor_id))
        if self.homing:
            return Result(Result.BUSY, "homing already running")
        self.homing = True
        try:
            if self.home_release is not None:
                await self.home_release.wait()
            else:
                await asyncio.sleep(self.home_duration_s)
            self._check()
            self.homed = True
            self.steer_angle = 0.0
            return SUCCESS
        except asyncio.CancelledError:
            self.home_cancelled += 1
            raise
        finally:
            self.homing = False

    async def stop_motors(self, device_class: str) -> bool:
        """Zero the class's speeds unless its stop is refused."""
        if not self.available or device_class in self.refuse_stop:
            return False
        for key in [k for k in self.speed if k[0] == device_class]:
            del self.speed[key]
        return True

    async def stop_all(self, deactivate: dict[str, Iterable[int]],
                       reactivate: dict[str, Iterable[int]] | None = None) -> set[str]:
        """Record the stop; stop motors, switch the given devices off / on."""
        self.stop_calls.append({k: list(v) for k, v in deactivate.items()})
        failed = set()
        for cls in MOTOR_CLASSES:
            if not await self.stop_motors(cls):
                failed.add(cls)
        for cls, ids in deactivate.items():
            for i in ids:
                self.on[cls].discard(i)
        for cls, ids in (reactivate or {}).items():
            self.on[cls].update(ids)
        return failed

    # ------------------------------------------------------------------ state
    def advance(self, counts: int = 7) -> None:
        """Move the fake robot a bit: encoder counts and sonar delays change."""
        self.count = (self.count + counts) & 0xFFFF
        self.d_count = counts
        self.delay_base += 10 * counts

    def snapshot(self, cls: str, i: int) -> DeviceState:
        """The state of one device now, as the hardware node would report it."""
        s = DeviceState(device_class=cls, id=i, on=i in self.on[cls], up=True, ok=True,
                        stamp=time.time())
        if cls == ULTRASONIC:
            s.delay_us = (self.delay_base + 100 * i) & 0xFFFF
        elif cls in (RELATIVE_ENCODER, ABSOLUTE_ENCODER):
            c = self.count
            s.count = c - 0x10000 if c & 0x8000 else c
            if cls == RELATIVE_ENCODER:
                s.d_count = self.d_count
        elif cls == ACCELEROMETER:
            s.accel_g = 0.25
        else:
            duty, value = self.speed.get((cls, i), (True, 0.0))
            s.speedval = speedval_pack(duty, value)
            if cls == PSERVO_MOTOR:
                s.mposval = mposval_pack(0, 0, self.steer_angle)
                s.homing = self.homing
                s.homed = self.homed
        return s

    def cached(self, device_class: str, ids: Sequence[int]):
        """States now, or None while ``stale`` or switched off."""
        if self.stale or not self.available:
            return None
        return [self.snapshot(device_class, i) for i in ids]

    async def fetch(self, device_class: str, ids: Sequence[int]):
        """States now."""
        self._check()
        return [self.snapshot(device_class, i) for i in ids]

    def delivered(self, device_class, states, what) -> None:
        """Record what the control application was told."""
        self.delivered_log.append((device_class, [s.id for s in states], what))
        self.last_delivered[(device_class, what)] = list(states)
        if len(self.delivered_log) > 1000:
            del self.delivered_log[:500]

    def session_event(self, event: str, detail: str = "") -> None:
        """Record a session notice."""
        self.events.append((event, detail))
