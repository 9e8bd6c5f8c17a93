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

"""The RCI control commands on the robot: reset, activate, set motors, stop,
clear encoders, sonar timing. Each returns a :class:`~bsal_ros.core.Result`,
all-or-nothing where 001 says so.

:class:`RobotCommands` is one responsibility of :class:`~.robot.Robot`
(sharing its lock, boards and devices).
"""

from __future__ import annotations

import math
from typing import Iterable

from . import registers as regs
from .boards import BoardError
from .devices import Device
from .motor_boards import DcMotorBoard, PservoBoard
from ..core.device_classes import DC_MOTOR, PSERVO_MOTOR, RELATIVE_ENCODER, ULTRASONIC
from ..core.result import BAD_REQUEST, HARDWARE_FAULT, INVALID_ID, OK, REFUSED, Result
from ..kinds import device_classes
from ..protocol.values import speedval_pack, SPEEDVAL_RAD_MAX, speedval_sign, SPEEDVAL_ZERO

MODE_DUTY_CYCLE = 0
MODE_VELOCITY = 1


class RobotCommands:
    """Commands that change what the boards do."""

    def _resolve(self, cls: str, ids: Iterable[int]) -> tuple[Result | None, list[Device]]:
        if cls not in device_classes():
            return Result(BAD_REQUEST, f"unknown device class {cls!r}"), []
        devs, bad = [], []
        for i in ids:
            d = self.device(cls, i)
            (bad.append(i) if d is None else devs.append(d))
        if bad:
            return Result(INVALID_ID, f"no {cls} with id {bad}: nothing changed"), []
        return None, devs

    def _board_refusal(self, devs: Iterable[Device]) -> Result | None:
        for d in devs:
            why = d.board.refuse_reason()
            if why:
                return Result(HARDWARE_FAULT, f"{d.name}: {why}: nothing changed")
        return None

    def reset(self) -> Result:
        """RCI Reset: stop every motor and sensor, reinitialise state (best effort)."""
        with self.lock:
            self.release_drive()
            failures = []
            for b in self.boards.values():
                try:
                    b.command(regs.CMD_RESET)
                    b.enable_mask = 0
                except BoardError as err:
                    failures.append(str(err))
                b.reset_cache()
            for d in self.devices.values():
                d.on = False
            self.homing_start.clear()
            self.odometry.reset()
            self.leases.clear()
            self.lease_stopped.clear()
            if failures:
                return Result(HARDWARE_FAULT, "reset incomplete: " + "; ".join(failures))
            return Result(OK, f"reset: {len(self.boards)} boards stopped, devices off")

    def activate(self, cls: str, ids: list[int], active: list[bool]) -> Result:
        """Switch devices on or off (all or nothing; a failed write is rolled back)."""
        if len(ids) != len(active):
            return Result(BAD_REQUEST, f"{len(ids)} ids but {len(active)} active flags")
        if not ids:
            return Result(BAD_REQUEST, "no ids")
        with self.lock:
            err, devs = self._resolve(cls, ids)
            if err:
                return err
            for d, on in zip(devs, active):
                if not on and cls == PSERVO_MOTOR and d.board.homing:
                    return Result(REFUSED,
                                  f"{d.name}: steering homing in progress: nothing changed")
            masks: dict[str, int] = {}
            for d, on in zip(devs, active):
                m = masks.get(d.board.name, d.board.enable_mask)
                masks[d.board.name] = (m | d.enable_bit) if on else (m & ~d.enable_bit)
            changed = [self.boards[n] for n, m in masks.items() if m != self.boards[n].enable_mask]
            bad = self._board_refusal(d for d in devs if d.board in changed)
            if bad:
                return bad
            old = {b.name: b.enable_mask for b in changed}
            try:
                for b in changed:
                    if isinstance(b, DcMotorBoard) and not masks[b.name] & regs.EN_MOTOR:
                        b.set_speedval(SPEEDVAL_ZERO)
                    b.set_enable(masks[b.name])
            except BoardError as e:
                for b in changed:  # roll back what was written
                    try:
                        if b.enable_mask != old[b.name]:
                            b.set_enable(old[b.name])
                    except BoardError:
                        pass
                return Result(HARDWARE_FAULT, f"{e}: nothing changed")
            for d, on in zip(devs, active):
                d.on = bool(on)
                if not on and cls == DC_MOTOR:
                    self.release_drive()
                if not on:
                    self.drop_lease(d.key)
            n_on = sum(bool(a) for a in active)
            return Result(OK, f"{cls}: {n_on} on, {len(ids) - n_on} off")

    def set_motors(self, cls: str, commands: list[tuple[int, int, float]],
                   lease_s: float = 0.0) -> Result:
        """RCI Set Motor with speedval data: commands = [(id, mode, value)].

        ``lease_s`` > 0: every motor set to a non-zero speed is stopped (by
        :meth:`cycle`, through the stop path) unless a new command or a
        :meth:`renew_lease` for it comes within ``lease_s``; 0 clears the
        motors' leases (no time limit, the behaviour before leases)."""
        if cls not in (DC_MOTOR, PSERVO_MOTOR):
            return Result(BAD_REQUEST,
                          f"set_motors needs class dc_motor or pservo_motor, not {cls!r}")
        if not commands:
            return Result(BAD_REQUEST, "no commands")
        lease_s = float(lease_s)
        if not math.isfinite(lease_s) or lease_s < 0.0:
            return Result(BAD_REQUEST, f"lease_s {lease_s} must be 0 (no lease) or a "
                                       f"positive number of seconds")
        with self.lock:
            err, devs = self._resolve(cls, [c[0] for c in commands])
            if err:
                return err
            planned = []
            for d, (_, mode, value) in zip(devs, commands):
                if not math.isfinite(value):
                    return Result(BAD_REQUEST, f"{d.name}: value is not a number")
                if mode == MODE_DUTY_CYCLE:
                    if abs(value) > 100.0:
                        return Result(BAD_REQUEST,
                                      f"{d.name}: duty cycle {value} outside -100..100 %")
                    sv = speedval_pack(True, value)
                elif mode == MODE_VELOCITY:
                    if abs(value) > SPEEDVAL_RAD_MAX + 1e-9:
                        return Result(BAD_REQUEST,
                                      f"{d.name}: speed {value} rad/s outside +-{SPEEDVAL_RAD_MAX}")
                    sv = speedval_pack(False, value)
                else:
                    return Result(BAD_REQUEST, f"{d.name}: unknown mode {mode}")
                planned.append((d, sv))
            if all(not speedval_sign(sv) for _, sv in planned):
                for d, _ in planned:   # a stopped motor holds no lease
                    self.drop_lease(d.key)
                    self.lease_stopped.pop(d.key, None)
                return self._stop_motors(cls, planned)
            for d, sv in planned:
                if not d.on:
                    return Result(REFUSED, f"{d.name} is not active: nothing changed")
                if isinstance(d.board, PservoBoard) and d.board.homing:
                    return Result(REFUSED,
                                  f"{d.name}: steering homing in progress: nothing changed")
                cur = speedval_sign(d.board.speed_set)
                new = speedval_sign(sv)
                motion = d.motion_sign()
                if new and ((cur and cur != new) or (motion and motion != new)):
                    return Result(REFUSED, f"{d.name}: direction change while moving "
                                           f"(set {cur:+d}, turning {motion:+d}, asked {new:+d}); "
                                           f"stop first: nothing changed")
            bad = self._board_refusal(devs)
            if bad:
                return bad
            try:
                for d, sv in planned:
                    d.board.set_speedval(sv)
            except BoardError as e:
                return Result(HARDWARE_FAULT, str(e))
            self._motors_commanded(cls)
            now = self.clock()
            leased = []
            for d, sv in planned:
                self.lease_stopped.pop(d.key, None)
                if lease_s > 0.0 and speedval_sign(sv):
                    self.grant_lease(d.key, lease_s, now)
                    leased.append(d.name)
                else:
                    self.drop_lease(d.key)
            note = f", lease {lease_s:g} s: {', '.join(leased)}" if leased else ""
            return Result(OK, f"{cls}: {len(planned)} set{note}")

    def _stop_motors(self, cls: str, planned: list[tuple[Device, int]]) -> Result:
        """A stop is never refused: each motor is stopped on its own (one faulted
        board does not keep the others running); a motor whose board is down,
        stuck or fails the write gets the stop latched (re-sent when the board
        answers, before anything else) and its board's watchdog stops it anyway.
        A motor that is switched off is stopped too (its SPEED is zeroed).
        Caller holds the lock."""
        stopped, latched = [], []
        now = self.clock()
        for d, sv in planned:
            b = d.board
            why = b.refuse_reason()
            if why is None:
                try:
                    if isinstance(b, PservoBoard) and (b.homing or d.id in self.homing_start):
                        b.command(regs.CMD_ABORT_HOME)
                        b.homing = False
                        self.homing_start.pop(d.id, None)
                    b.set_speedval(sv)
                    stopped.append(d.name)
                    continue
                except BoardError as e:
                    why = str(e)
            b.latch_stop(sv, now)
            latched.append(f"{d.name}: {why}; stop latched: re-sent when the board answers; "
                           f"{b.watchdog_note()}")
        self._motors_commanded(cls)
        if not latched:
            return Result(OK, f"{cls}: {len(stopped)} stopped")
        done = f"; stopped: {', '.join(stopped)}" if stopped else ""
        return Result(HARDWARE_FAULT, "; ".join(latched) + done)

    def clear_encoders(self, ids: list[int]) -> Result:
        """Zero the relative encoders ``ids`` (empty: all of them)."""
        with self.lock:
            if not ids:
                ids = [d.id for d in self.devices_of(RELATIVE_ENCODER)]
            err, devs = self._resolve(RELATIVE_ENCODER, ids)
            if err:
                return err
            bad = self._board_refusal(devs)
            if bad:
                return bad
            try:
                for d in devs:
                    d.board.clear_count()
            except BoardError as e:
                return Result(HARDWARE_FAULT, str(e))
            return Result(OK, f"{len(devs)} encoders cleared")

    def set_sonar_timing(self, timings: list[tuple[int, int, int]]) -> Result:
        """timings = [(id, firing_slot or -1, interval_ms or -1)]."""
        if not timings:
            return Result(BAD_REQUEST, "no timings")
        with self.lock:
            err, devs = self._resolve(ULTRASONIC, [t[0] for t in timings])
            if err:
                return err
            plan: dict[str, tuple[list[int], int]] = {}
            asked: dict[str, int] = {}
            for d, (_, slot, interval) in zip(devs, timings):
                b = d.board
                slots, iv = plan.get(b.name, (list(b.slots), b.interval_ms))
                if slot != -1:
                    if not 0 <= slot < b.channels:
                        return Result(BAD_REQUEST,
                                      f"{d.name}: firing slot {slot} outside 0..{b.channels - 1}")
                    slots[d.channel] = int(slot)
                if interval != -1:
                    if not 5 <= interval <= 1000:
                        return Result(BAD_REQUEST,
                                      f"{d.name}: interval {interval} ms outside 5..1000")
                    if asked.get(b.name, interval) != interval:
                        return Result(BAD_REQUEST, f"{d.name}: one firing interval per board "
                                                   f"({b.name}): {asked[b.name]} vs {interval} ms")
                    asked[b.name] = iv = int(interval)
                plan[b.name] = (slots, iv)
            bad = self._board_refusal(devs)
            if bad:
                return bad
            try:
                for name, (slots, iv) in plan.items():
                    self.boards[name].write_timing(slots, iv)
            except BoardError as e:
                return Result(HARDWARE_FAULT, str(e))
            rates = ", ".join(f"{n} {self.boards[n].update_hz():.2f} Hz" for n in plan)
            return Result(OK, f"sonar timing set: {rates}")
