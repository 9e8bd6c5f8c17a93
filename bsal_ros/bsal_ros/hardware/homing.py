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

"""Steering homing: start, abort, progress and outcome of the homing run.

:class:`SteeringHoming` is one responsibility of :class:`~.robot.Robot`
(sharing its lock and devices); the node's homing supervision polls
:meth:`SteeringHoming.homing_status`.
"""

from __future__ import annotations

from . import registers as regs
from .boards import BoardError
from ..core.device_classes import PSERVO_MOTOR
from ..core.result import BUSY, HARDWARE_FAULT, INVALID_ID, OK, REFUSED, Result


class SteeringHoming:
    """The steering's homing run, as the robot's commands see it."""

    def _init_homing(self) -> None:
        self.homing_start: dict[int, float] = {}   # pservo id -> angle at the start

    def start_homing(self, dev_id: int) -> Result:
        """Start homing steering ``dev_id`` (it must be on, not already homing)."""
        with self.lock:
            d = self.device(PSERVO_MOTOR, dev_id)
            if d is None:
                return Result(INVALID_ID, f"no pservo_motor with id {dev_id}")
            if d.board.homing or dev_id in self.homing_start:
                return Result(BUSY, f"{d.name}: homing already running")
            if not d.on:
                return Result(REFUSED, f"{d.name} is not active")
            why = d.board.refuse_reason()
            if why:
                return Result(HARDWARE_FAULT, f"{d.name}: {why}")
            try:
                d.board.command(regs.CMD_HOME)
            except BoardError as e:
                return Result(HARDWARE_FAULT, str(e))
            self.homing_start[dev_id] = self._steer_angle_unlocked()
            self.drop_lease(d.key)
            d.board.homing = True
            d.board.phase = regs.PHASE_SEEKING
            d.board.homed = False
            self.release_steering()
            return Result(OK, f"{d.name}: homing started at "
                              f"{self._steer_angle_unlocked():.3f} rad")

    def abort_homing(self, dev_id: int) -> Result:
        """Abort a homing run (the steering stops where it is, unhomed)."""
        with self.lock:
            d = self.device(PSERVO_MOTOR, dev_id)
            if d is None:
                return Result(INVALID_ID, f"no pservo_motor with id {dev_id}")
            self.homing_start.pop(dev_id, None)
            try:
                d.board.command(regs.CMD_ABORT_HOME)
            except BoardError as e:
                return Result(HARDWARE_FAULT, str(e))
            d.board.homing = False
            return Result(OK, f"{d.name}: homing aborted")

    def homing_status(self, dev_id: int) -> dict:
        """phase (name), angle (rad), progress (0..1), done / failed flags, reason."""
        with self.lock:
            d = self.device(PSERVO_MOTOR, dev_id)
            b = d.board
            angle = self._steer_angle_unlocked()
            start = self.homing_start.get(dev_id, angle)
            limit = float(self.geo["steering_limit"])
            total = max(1e-6, (limit - start) + limit)
            if b.phase == regs.PHASE_SEEKING:
                swept = max(0.0, min(angle, limit) - start)
            elif b.phase in (regs.PHASE_BACKING_OFF, regs.PHASE_CENTERING):
                swept = (limit - start) + max(0.0, limit - angle)
            else:
                swept = total if b.phase == regs.PHASE_DONE else 0.0
            phase = regs.PHASE_NAMES.get(b.phase, str(b.phase))
            done = b.phase == regs.PHASE_DONE and b.homed and not b.homing
            failed = b.phase in (regs.PHASE_ABORTED, regs.PHASE_CANCELLED) or not b.up
            reason = ""
            if b.phase == regs.PHASE_ABORTED:
                reason = f"steering stalled during homing at {angle:.3f} rad"
            elif not b.up:
                reason = b.fault
            return {"phase": phase, "angle": angle, "progress": min(1.0, swept / total),
                    "done": done, "failed": failed, "reason": reason, "up": b.up,
                    "fresh_stamp": b.mono}

    def homing_finished(self, dev_id: int) -> None:
        """The supervisor is done with this run: forget its start angle."""
        with self.lock:
            self.homing_start.pop(dev_id, None)
