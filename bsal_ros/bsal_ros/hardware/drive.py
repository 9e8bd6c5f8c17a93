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

"""The cmd_vel follower: a body twist becomes a drive speed and a steering angle.

:class:`DriveFollower` is one responsibility of :class:`~.robot.Robot`
(sharing its lock and devices): :meth:`DriveFollower.drive` takes a twist,
the robot's ``cycle`` calls :meth:`DriveFollower.drive_tick` after each drive
board poll, which writes the wheel speed and the steering target and stops
the drive when no twist came for ``cmd_timeout``.
"""

from __future__ import annotations

import math

from .boards import BoardError
from .kinematics import steering_error_scale, tricycle_ik
from ..core.device_classes import DC_MOTOR, PSERVO_MOTOR
from ..protocol.values import speedval_pack, speedval_sign


class DriveFollower:
    """Follows the last twist until it times out; gives way to explicit commands."""

    def _init_drive(self, cmd_timeout: float) -> None:
        self.cmd_timeout = float(cmd_timeout)
        self._bad_twist_reported = False
        self._drive_target: tuple[float, float | None] | None = None
        self._drive_stamp = 0.0
        self._drive_timed_out = True
        self._warned: set[str] = set()
        self._steer_target_sent = 1e9     # the last steering target cmd_vel wrote
        self.drive_held = ""              # why cmd_vel holds the wheel ("" : it does not)

    def drive(self, vx: float, wz: float) -> tuple[float, float]:
        """Follow a body twist until cmd_timeout passes without a new one.
        A twist that is not finite is taken as a stop (the safe reading)."""
        finite = math.isfinite(vx) and math.isfinite(wz)
        if not finite:
            if not self._bad_twist_reported:     # one line per episode, not per message
                self._event("warn", f"cmd_vel ({vx}, {wz}) is not finite: stopping")
            vx = wz = 0.0
        self._bad_twist_reported = not finite
        g = self.geo
        w, a = tricycle_ik(vx, wz, float(g["wheelbase"]), float(g["wheel_radius"]),
                           float(g["steering_limit"]), float(g["max_drive_speed"]))
        with self.lock:
            self._drive_target = (w, a)
            self._drive_stamp = self.clock()
            dcs = self.devices_of(DC_MOTOR)
            if dcs:   # cmd_vel owns the drive now: its own timeout applies
                self.drop_lease(dcs[0].key)
            if self._drive_timed_out:
                self._drive_timed_out = False
                self._warned.discard("timeout")
        return w, a

    def stop_drive(self) -> None:
        """Stop the wheel now (the steering keeps its angle)."""
        with self.lock:
            self._drive_target = (0.0, None)
            self._drive_stamp = self.clock()

    def release_drive(self) -> None:
        """An explicit command or a switch-off takes the drive from cmd_vel."""
        self._drive_target = None
        self.drive_held = ""           # cmd_vel holds nothing any more

    def release_steering(self) -> None:
        """An explicit steering command or homing takes the steering from cmd_vel."""
        if self._drive_target is not None:
            self._drive_target = (self._drive_target[0], None)

    def _motors_commanded(self, cls: str) -> None:
        if cls == DC_MOTOR:
            self.release_drive()   # an explicit command overrides cmd_vel
        else:
            self.release_steering()

    def _warn_once(self, key: str, level: str, msg: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self._event(level, msg)

    def _wheel_hold_reason(self) -> str:
        """Why cmd_vel may not turn the wheel now ("" : it may): a steering that
        is not homed, or is homing, points nowhere known."""
        sts = self.devices_of(PSERVO_MOTOR)
        if not sts:
            return ""
        b = sts[0].board
        if b.homing:
            return "steering homing"
        if not b.homed:
            return "steering not homed (run home_steering)"
        return ""

    def drive_tick(self, now: float) -> None:
        """Write what the last twist asks for (caller holds the lock).

        The wheel waits while the steering is not homed or homing (logged once
        per episode, ``drive_held`` says why), and its speed is scaled down by
        the steering's distance from the angle asked for."""
        if self._drive_target is None:
            return
        w, a = self._drive_target
        if now - self._drive_stamp > self.cmd_timeout and not self._drive_timed_out:
            self._drive_timed_out = True
            self._event("warn", f"cmd_vel timeout ({self.cmd_timeout:.2f} s): stopping the drive")
            self._drive_target = (0.0, None)
            w, a = 0.0, None
        hold = self._wheel_hold_reason() if w else ""
        if hold:
            self._warn_once("wheel_held", "warn", f"cmd_vel: the drive wheel waits: {hold}")
            w = 0.0
        else:
            self._warned.discard("wheel_held")
            if w and a is not None:
                w *= steering_error_scale(abs(a - self._steer_angle_unlocked()))
        self.drive_held = hold
        self._drive_wheel(w)
        self._drive_steering(a)

    def _drive_wheel(self, w: float) -> None:
        dcs = self.devices_of(DC_MOTOR)
        if dcs:
            d = dcs[0]
            if not d.on:
                self._warn_once("drive_off", "warn", "cmd_vel ignored: dc_motor 0 is not active")
            elif d.board.refuse_reason() is None:
                sv = speedval_pack(False, w)
                new, motion = speedval_sign(sv), d.motion_sign()
                if new and motion and motion != new:
                    sv = speedval_pack(False, 0.0)  # the board refuses reversing while moving
                    self._warn_once("reverse", "info", "cmd_vel reverses the drive: stopping first")
                if sv != d.board.speed_set:
                    try:
                        d.board.set_speedval(sv)
                        self._warned.discard("reverse")
                    except BoardError:
                        pass

    def _drive_steering(self, a: float | None) -> None:
        sts = self.devices_of(PSERVO_MOTOR)
        if sts and a is not None:
            s = sts[0]
            b = s.board
            if not s.on:
                self._warn_once("steer_off", "warn",
                                "cmd_vel steering ignored: pservo_motor 0 is not active")
            elif b.homing:
                pass
            elif not b.homed:
                self._warn_once("not_homed", "warn",
                                "cmd_vel steering ignored: steering not homed (run home_steering)")
            elif b.refuse_reason() is None:
                if abs(a - self._steer_target_sent) > 1e-4 or not b.position_mode:
                    try:
                        b.set_target(a)
                        self._steer_target_sent = a
                        self.drop_lease(s.key)   # position mode: cmd_vel's now
                    except BoardError:
                        pass
