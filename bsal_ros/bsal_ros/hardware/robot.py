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

"""The robot: BSAL's control process core without ROS (001 chapter 2).

:class:`Robot` opens the bus (a backend by name, :mod:`.backends`), builds the
board objects and the device objects from the robot description, polls the
boards when they are due (:meth:`Robot.cycle`), integrates odometry and
reports device states (:class:`bsal_ros.core.DeviceState`). Its other
responsibilities live in their own modules and are mixed in, sharing the
one lock and the one device table:

* :mod:`.commands` - the RCI control commands (reset, activate, set motors...);
* :mod:`.leases`   - command leases on motors;
* :mod:`.homing`   - the steering's homing run;
* :mod:`.drive`    - the cmd_vel follower.

All public methods are thread-safe (one re-entrant lock); the ROS node calls
commands from executor threads while a :class:`~.poller.Poller` thread runs
:meth:`cycle`. The simulator's own controls are not here: a simulated bus
carries them (``robot.bus.simulation``, :mod:`.simulation`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
import math
import threading
import time
from typing import Callable, Iterable

from . import registers as regs
from .backends import BusOptions, open_bus
from .boards import Board, BoardError, BoardEvent
from .commands import RobotCommands
from .description import check_motor_watchdogs
from .devices import Device
from .drive import DriveFollower
from .homing import SteeringHoming
from .kinematics import TricycleOdometry
from .leases import LeaseKeeping
from .motor_boards import DcMotorBoard, MotorBoard
from ..core.device_classes import ABSOLUTE_ENCODER
from ..core.device_state import DeviceState
from ..core.result import BAD_REQUEST, INVALID_ID, OK, Result
from ..core.units import counts_to_angle, SPEED_OF_SOUND
from ..kinds import board_type, device_classes, kind, resolve
from ..protocol.values import STATVAL_MS_MAX

# the Board subclass of a board type and the Device subclass of a device
# kind are declared by the kind (bsal_ros/kinds); an unknown one is a KindError


@dataclass
class CycleUpdate:
    """What one board poll produced."""

    board: Board
    fresh: bool
    snapshots: list[DeviceState] = field(default_factory=list)


def scale_rates(robot: dict, rate_scale: float = 1.0, all_boards_hz: float = 0.0) -> dict:
    """A copy of the robot description with every board rate scaled or fixed.

    ``all_boards_hz`` > 0 polls every board at that rate (its own update rate
    set slightly faster); otherwise rates are multiplied by ``rate_scale``.
    """
    robot = copy.deepcopy(robot)
    for b in robot["boards"].values():
        # each board type says how (kinds: an ultrasonic board's slots, a polled board's Hz)
        board_type(b["type"]).scale_rates(b, float(rate_scale), float(all_boards_hz))
    return robot


class Robot(RobotCommands, LeaseKeeping, SteeringHoming, DriveFollower):
    """The robot's boards and devices, polled and commanded (see the module text)."""

    def __init__(self, robot: dict, backend: str = "sim", i2c_bus: int = 1,
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, seed: int | None = None,
                 speed_of_sound: float = SPEED_OF_SOUND, cmd_timeout: float = 0.5,
                 smbus_factory=None, odom_noise=(0.02, 0.02), stuck_polls: int = 4,
                 base_time_rollover_s: float = 14400.0, base_profile: str = ""):
        check_motor_watchdogs(robot)   # refuse a keep-alive that would not beat the timeout
        self.desc = robot
        self.clock = clock
        self.wall = wall
        self.lock = threading.RLock()
        self.speed_of_sound = float(speed_of_sound)
        self.backend = backend
        geo = robot["geometry"]
        self.geo = geo
        self.drive_cpr = int(geo["drive_encoder_cpr"])
        self.steer_cpr = int(geo["steering_encoder_cpr"])
        self.bus = open_bus(backend, robot, BusOptions(clock=clock, seed=seed, i2c_bus=i2c_bus,
                                                       smbus_factory=smbus_factory,
                                                       base_profile=base_profile))
        self._build(robot, stuck_polls)
        self.odometry = TricycleOdometry(float(geo["wheelbase"]), float(geo["wheel_radius"]),
                                         *odom_noise)
        self._odom_mono: float | None = None
        self.base_time = math.floor(wall())
        self.base_time_rollover_s = min(float(base_time_rollover_s), STATVAL_MS_MAX / 1000.0 - 60)
        self.events: list[BoardEvent] = []
        self.cycles = 0
        self.started = False
        self._start_pending = False       # start-up waits for the bus to open
        self._activate_on_start = False
        self._init_drive(cmd_timeout)
        self._init_homing()
        self._init_leases()

    def _build(self, robot: dict, stuck_polls: int) -> None:
        """One board object per described board, one device object per device."""
        retries = int(robot.get("bus", {}).get("retries", 2))
        self.boards: dict[str, Board] = {}
        for name, b in robot["boards"].items():
            rm = regs.RegisterMap.from_description(robot["register_maps"], b["type"])
            board_cls = resolve(board_type(b["type"]).board)
            self.boards[name] = board_cls(name, b, self.bus, rm, retries=retries,
                                          stuck_polls=stuck_polls)
        self.devices: dict[tuple[str, int], Device] = {}
        self.by_board: dict[str, list[Device]] = {n: [] for n in self.boards}
        for cls, devs in robot["devices"].items():
            for dname, d in (devs or {}).items():
                dev = resolve(kind(cls).device)(d["id"], self.boards[d["board"]],
                                                d.get("channel", 0), dict(d, name=dname))
                self.devices[dev.key] = dev
                self.by_board[d["board"]].append(dev)

    # ---- helpers -----------------------------------------------------------
    def devices_of(self, cls: str) -> list[Device]:
        """The devices of one class, by id."""
        return sorted((d for d in self.devices.values() if d.device_class == cls),
                      key=lambda d: d.id)

    def device(self, cls: str, dev_id: int) -> Device | None:
        """The device of that class and id (None: there is none)."""
        return self.devices.get((cls, int(dev_id)))

    def _event(self, level: str, message: str, board: str = "") -> None:
        self.events.append(BoardEvent(board, level, message))

    def report(self, level: str, message: str) -> None:
        """Queue one log line ("info", "warn", "error") for whoever drains the events."""
        with self.lock:
            self._event(level, message)

    def has_events(self) -> bool:
        """Log lines are waiting (:meth:`drain_events`)."""
        return bool(self.events or getattr(self.bus, "events", None)
                    or any(b.events for b in self.boards.values()))

    def drain_events(self) -> list[BoardEvent]:
        """Every queued log line of the robot, its bus and its boards, oldest first."""
        with self.lock:
            out = [BoardEvent(*e) for e in getattr(self.bus, "events", ())]
            if out:
                self.bus.events.clear()
            out += self.events
            self.events.clear()
            for b in self.boards.values():
                out.extend(b.events)
                b.events.clear()
            return out

    def maybe_roll_base_time(self, wall_now: float | None = None) -> bool:
        """Move the base time forward before the 24-bit ms field of statval wraps."""
        now = self.wall() if wall_now is None else wall_now
        with self.lock:
            if now - self.base_time >= self.base_time_rollover_s:
                self.base_time = math.floor(now)
                return True
            return False

    # ---- start-up, polling -------------------------------------------------------
    def start(self, activate: bool = False) -> None:
        """Probe and reset every board, optionally switch every device on, read once.

        On a bus that cannot be opened yet (no ``/dev/i2c-N``) the boards stay
        down and :meth:`cycle` runs this start-up again once the bus opens."""
        self._activate_on_start = bool(activate)
        self._start_boards(activate)

    def _start_boards(self, activate: bool) -> None:
        with self.lock:
            now = self.clock()
            for b in self.boards.values():
                if b.probe():
                    try:
                        b.command(regs.CMD_RESET)
                        if isinstance(b, MotorBoard):
                            b.write_timeout()
                    except BoardError:
                        pass
                b.next_due = now
            self.started = True
        if activate:
            for cls in device_classes():
                ids = [d.id for d in self.devices_of(cls)]
                if ids:
                    self.activate(cls, ids, [True] * len(ids))
        with self.lock:  # one first read so the caches hold real values
            now, wall = self.clock(), self.wall()
            for b in self.boards.values():
                if b.up:
                    b.poll(now, wall)
                b.next_due = now + b.poll_period()
            self._start_pending = not getattr(self.bus, "is_open", True)

    def next_due(self) -> float:
        """When :meth:`cycle` has work: the next board poll or lease deadline."""
        with self.lock:
            due = min((b.next_due for b in self.boards.values()), default=self.clock() + 1.0)
            return min([due] + [ls.deadline for ls in self.leases.values()])

    def cycle(self, now: float | None = None) -> list[CycleUpdate]:
        """Poll every board that is due; returns one update per polled board.

        The lock is taken per board, so a command waits for at most one board
        transfer (with its retries), not for a whole cycle.
        """
        now = self.clock() if now is None else now
        if self.leases:
            with self.lock:
                self.lease_tick(now)
        out = []
        for b in list(self.boards.values()):
            with self.lock:
                if b.next_due > now + 1e-9:
                    continue
                period = b.poll_period()
                b.next_due += period
                if b.next_due <= now:  # fell behind: skip, never burst
                    b.next_due = now + period
                fresh = b.poll(now, self.wall())
                if isinstance(b, MotorBoard):
                    b.refresh()   # latched stop first, else the watchdog keep-alive
                if fresh and isinstance(b, DcMotorBoard):
                    self._integrate_odometry(b, now)
                if isinstance(b, DcMotorBoard):
                    self.drive_tick(now)
                out.append(CycleUpdate(b, fresh, [d.snapshot(self.base_time, self)
                                                  for d in self.by_board[b.name]]))
        self.cycles += 1
        if self._start_pending and getattr(self.bus, "is_open", True):
            self._event("info", f"bus {self.bus.name} open: starting the boards")
            self._start_boards(self._activate_on_start)
        return out

    def _steer_angle_unlocked(self) -> float:
        enc = self.devices_of(ABSOLUTE_ENCODER)
        return counts_to_angle(enc[0].board.count, self.steer_cpr) if enc else 0.0

    def steer_angle(self) -> float:
        """The steering angle (rad) from the absolute encoder's last reading."""
        with self.lock:
            return self._steer_angle_unlocked()

    def wheel_angle(self) -> float:
        """The drive wheel's angle (rad) since the last clear, from its encoder."""
        with self.lock:
            drive = [b for b in self.boards.values() if isinstance(b, DcMotorBoard)]
            return counts_to_angle(drive[0].total, self.drive_cpr) if drive else 0.0

    def _integrate_odometry(self, b: DcMotorBoard, now: float) -> None:
        dt = 0.0 if self._odom_mono is None else now - self._odom_mono
        self._odom_mono = now
        self.odometry.update(counts_to_angle(b.d_count, self.drive_cpr),
                             self._steer_angle_unlocked(), dt)

    def odometry_snapshot(self):
        """(odom, pose) read together: odom = (x, y, yaw, cov6, vx, wz) in the odom
        frame, pose = (x, y, yaw, cov6) the pose estimate."""
        with self.lock:
            od = self.odometry
            return ((od.odom.x, od.odom.y, od.odom.th, od.odom.cov6(), od.vx, od.wz),
                    (od.pose.x, od.pose.y, od.pose.th, od.pose.cov6()))

    def set_pose(self, x: float, y: float, yaw: float, cov3) -> None:
        """Set the pose estimate (initialpose / set_pose)."""
        with self.lock:
            self.odometry.set_pose(x, y, yaw, cov3)

    # ---- snapshots ----------------------------------------------------------------
    def snapshot(self, dev: Device) -> DeviceState:
        """One device's state now."""
        with self.lock:
            return dev.snapshot(self.base_time, self)

    def after_command(self, device_class: str = "", ids: Iterable[int] = ()) -> list[DeviceState]:
        """The states of every device on the boards a command just changed
        (``device_class`` "" = every board; no ids = every device of the
        class), stamped now: what those boards hold is current as of the
        command, so these states are newer than any reading taken before it
        (published at once, they supersede such a reading wherever it is
        still on its way)."""
        ids = set(ids)
        with self.lock:
            if not device_class:
                boards = list(self.boards.values())
            else:
                boards = []
                for d in self.devices_of(device_class):
                    if (not ids or d.id in ids) and d.board not in boards:
                        boards.append(d.board)
            wall = self.wall()
            out = []
            for b in boards:
                if b.stamp is not None and b.stamp < wall:
                    b.stamp = wall
                out += [d.snapshot(self.base_time, self) for d in self.by_board[b.name]]
            return out

    def get_states(self, device_class: str = "",
                   ids: Iterable[int] = ()) -> tuple[Result, list[DeviceState]]:
        """States of all devices, one class, or some ids of one class."""
        ids = list(ids)
        with self.lock:
            if device_class and device_class not in device_classes():
                return Result(BAD_REQUEST, f"unknown device class {device_class!r}"), []
            if not device_class:
                if ids:
                    return Result(BAD_REQUEST, "ids need a device_class"), []
                devs = [d for c in device_classes() for d in self.devices_of(c)]
            elif not ids:
                devs = self.devices_of(device_class)
            else:
                bad = [i for i in ids if self.device(device_class, i) is None]
                if bad:
                    return Result(INVALID_ID, f"no {device_class} with id {bad}"), []
                devs = [self.device(device_class, i) for i in ids]
            snaps = [d.snapshot(self.base_time, self) for d in devs]
            return Result(OK, f"{len(devs)} devices"), snaps

    def list_devices(self) -> list[dict]:
        """Where every device is: board, bus (on ros_base ``ros_base:<profile>``,
        the driver that serves it), address, channel, and its status."""
        own = getattr(self.bus, "device_fault", None)   # ros_base: a silent topic
        with self.lock:
            out = []
            for c in device_classes():
                for d in self.devices_of(c):
                    why = own(c, d.id) if own is not None else None
                    out.append({"device_class": c, "id": d.id, "board": d.board.name,
                                "bus": self.bus.name, "address": d.board.address,
                                "channel": d.channel, "on": d.on, "up": d.board.up,
                                "ok": d.board.ok and not why, "fault": why or d.board.fault})
            return out

    def close(self) -> None:
        """Reset every board that answers (motors stop) and close the bus."""
        with self.lock:
            try:
                for b in self.boards.values():
                    if b.up:
                        try:
                            b.command(regs.CMD_RESET)
                        except BoardError:
                            pass
            finally:
                self.bus.close()
