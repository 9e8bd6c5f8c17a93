"""The robot: BSAL's control process core without ROS (001 chapter 2).

:class:`Robot` builds the bus (``sim`` or ``smbus2``), the board objects and
the device objects from the robot description, polls the boards when they
are due (:meth:`Robot.cycle`), integrates odometry, follows a drive target
(cmd_vel) with a timeout, and carries out every RCI control command with a
:class:`Result` (success or a reason), all-or-nothing where 001 says so.

All public methods are thread-safe (one re-entrant lock); the ROS node calls
commands from executor threads while a :class:`~.poller.Poller` thread runs
:meth:`cycle`.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from . import registers as R
from .boards import (BOARD_CLASSES, Board, BoardError, BoardEvent, DcMotorBoard, MotorBoard,
                     PservoBoard)
from .bus import SimBus, Smbus2Bus
from .description import DEVICE_CLASSES as CLASS_NAMES
from .description import check_motor_watchdogs
from .devices import (ABSOLUTE_ENCODER, DC_MOTOR, DEVICE_CLASSES, PSERVO_MOTOR,
                      RELATIVE_ENCODER, ULTRASONIC, Device, DeviceSnapshot)
from .kinematics import TricycleOdometry, tricycle_ik
from .values import (SPEED_RAD_MAX, STATVAL_MS_MAX, speedval_from_duty, speedval_from_rad_s,
                     speedval_sign)

# Result codes (bsal_interfaces/Result)
OK = 0
INVALID_ID = 1
REFUSED = 2
NOT_SUPPORTED = 3
HARDWARE_FAULT = 4
BUSY = 5
BAD_REQUEST = 6
CODE_NAMES = {OK: "OK", INVALID_ID: "INVALID_ID", REFUSED: "REFUSED",
              NOT_SUPPORTED: "NOT_SUPPORTED", HARDWARE_FAULT: "HARDWARE_FAULT", BUSY: "BUSY",
              BAD_REQUEST: "BAD_REQUEST"}

MODE_DUTY_CYCLE = 0
MODE_VELOCITY = 1


@dataclass
class Result:
    code: int = OK
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.code == OK


@dataclass
class Lease:
    """A command lease on one motor (SetMotors.lease_s): the motor is stopped
    when ``deadline`` (robot clock) passes without a renewal."""
    lease_s: float
    deadline: float
    granted: float           # clock time of the command that took the lease
    renewals: int = 0


@dataclass
class CycleUpdate:
    """What one board poll produced."""
    board: Board
    fresh: bool
    snapshots: list[DeviceSnapshot] = field(default_factory=list)


def scale_rates(robot: dict, rate_scale: float = 1.0, all_boards_hz: float = 0.0) -> dict:
    """A copy of the robot description with every board rate scaled or fixed.

    ``all_boards_hz`` > 0 polls every board at that rate (its own update rate
    set slightly faster); otherwise rates are multiplied by ``rate_scale``.
    """
    robot = copy.deepcopy(robot)
    for b in robot["boards"].values():
        if b["type"] == "ultrasonic":
            nslots = max(b["slots"]) + 1
            if all_boards_hz > 0:
                interval = max(5, int(1000.0 / (all_boards_hz * nslots)))
                b["interval_ms"] = interval
                b["poll_margin"] = max(1.0, (1000.0 / all_boards_hz) / (interval * nslots))
            elif rate_scale != 1.0:
                b["interval_ms"] = max(5, int(round(b["interval_ms"] / rate_scale)))
        else:
            if all_boards_hz > 0:
                b["poll_hz"] = float(all_boards_hz)
                b["update_hz"] = float(all_boards_hz) * 1.25
            elif rate_scale != 1.0:
                b["poll_hz"] = float(b["poll_hz"]) * rate_scale
                b["update_hz"] = float(b["update_hz"]) * rate_scale
    return robot


class Robot:
    def __init__(self, robot: dict, backend: str = "sim", i2c_bus: int = 1,
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, seed: int | None = None,
                 speed_of_sound: float = 343.0, cmd_timeout: float = 0.5,
                 smbus_factory=None, odom_noise=(0.02, 0.02), stuck_polls: int = 4,
                 base_time_rollover_s: float = 14400.0):
        check_motor_watchdogs(robot)   # refuse a keep-alive that would not beat the timeout
        self.desc = robot
        self.clock = clock
        self.wall = wall
        self.lock = threading.RLock()
        self._bad_twist_reported = False
        self.speed_of_sound = float(speed_of_sound)
        self.cmd_timeout = float(cmd_timeout)
        self.backend = backend
        geo = robot["geometry"]
        self.geo = geo
        self.drive_cpr = int(geo["drive_encoder_cpr"])
        self.steer_cpr = int(geo["steering_encoder_cpr"])
        self.world = None
        if backend == "sim":
            from .sim import build_sim_bus
            self.bus, self.world = build_sim_bus(robot, clock, seed=seed)
        elif backend == "smbus2":
            self.bus = Smbus2Bus(int(i2c_bus), smbus_factory=smbus_factory)
        else:
            raise ValueError(f"unknown bus backend {backend!r} (sim or smbus2)")
        retries = int(robot.get("bus", {}).get("retries", 2))
        self.boards: dict[str, Board] = {}
        for name, b in robot["boards"].items():
            rm = R.RegisterMap.from_description(robot["register_maps"], b["type"])
            self.boards[name] = BOARD_CLASSES[b["type"]](name, b, self.bus, rm, retries=retries,
                                                         stuck_polls=stuck_polls)
        self.devices: dict[tuple[str, int], Device] = {}
        self.by_board: dict[str, list[Device]] = {n: [] for n in self.boards}
        for cls, devs in robot["devices"].items():
            for dname, d in (devs or {}).items():
                dev = DEVICE_CLASSES[cls](d["id"], self.boards[d["board"]], d.get("channel", 0),
                                          dict(d, name=dname))
                self.devices[dev.key] = dev
                self.by_board[d["board"]].append(dev)
        self.odometry = TricycleOdometry(float(geo["wheelbase"]), float(geo["wheel_radius"]),
                                         *odom_noise)
        self._odom_mono: float | None = None
        self.base_time = math.floor(wall())
        self.base_time_rollover_s = min(float(base_time_rollover_s), STATVAL_MS_MAX / 1000.0 - 60)
        self.events: list[BoardEvent] = []
        self._drive_target: tuple[float, float] | None = None
        self._drive_stamp = 0.0
        self._drive_timed_out = True
        self._warned: set[str] = set()
        self.cycles = 0
        self.homing_start: dict[int, float] = {}
        self.started = False
        # command leases (docs/HARDWARE.md section 14): (class, id) -> Lease
        self.leases: dict[tuple[str, int], Lease] = {}
        # motors a lease stopped, until their next command: (class, id) -> (lease_s, late_s, t)
        self.lease_stopped: dict[tuple[str, int], tuple[float, float, float]] = {}
        self.lease_expiries = 0

    # ---- helpers -----------------------------------------------------------
    def delay_to_range(self, delay_us: int) -> float:
        """Round-trip echo delay -> range in m; 0 (no echo) -> +inf."""
        if delay_us <= 0:
            return math.inf
        return delay_us * 1e-6 * self.speed_of_sound / 2.0

    def devices_of(self, cls: str) -> list[Device]:
        return sorted((d for d in self.devices.values() if d.device_class == cls),
                      key=lambda d: d.id)

    def device(self, cls: str, dev_id: int) -> Device | None:
        return self.devices.get((cls, int(dev_id)))

    def _event(self, level: str, message: str, board: str = "") -> None:
        self.events.append(BoardEvent(board, level, message))

    def drain_events(self) -> list[BoardEvent]:
        with self.lock:
            out = list(self.events)
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
        with self.lock:
            now = self.clock()
            for b in self.boards.values():
                if b.probe():
                    try:
                        b.command(R.CMD_RESET)
                        if isinstance(b, MotorBoard):
                            b.write_timeout()
                    except BoardError:
                        pass
                b.next_due = now
            self.started = True
        if activate:
            for cls in CLASS_NAMES:
                ids = [d.id for d in self.devices_of(cls)]
                if ids:
                    self.activate(cls, ids, [True] * len(ids))
        with self.lock:  # one first read so the caches hold real values
            now, wall = self.clock(), self.wall()
            for b in self.boards.values():
                if b.up:
                    b.poll(now, wall)
                b.next_due = now + b.poll_period()

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
                self._lease_tick(now)
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
                    self._drive_tick(now)
                out.append(CycleUpdate(b, fresh, [d.snapshot(self.base_time, self)
                                                  for d in self.by_board[b.name]]))
        self.cycles += 1
        return out

    def _steer_angle(self) -> float:
        enc = self.devices_of(ABSOLUTE_ENCODER)
        if enc:
            return enc[0].board.count * 2.0 * math.pi / self.steer_cpr
        return 0.0

    def _integrate_odometry(self, b: DcMotorBoard, now: float) -> None:
        dt = 0.0 if self._odom_mono is None else now - self._odom_mono
        self._odom_mono = now
        d_wheel = b.d_count * 2.0 * math.pi / self.drive_cpr
        self.odometry.update(d_wheel, self._steer_angle(), dt)

    # ---- snapshots ----------------------------------------------------------------
    def snapshot(self, dev: Device) -> DeviceSnapshot:
        with self.lock:
            return dev.snapshot(self.base_time, self)

    def get_states(self, device_class: str = "",
                   ids: Iterable[int] = ()) -> tuple[Result, list[DeviceSnapshot]]:
        ids = list(ids)
        with self.lock:
            if device_class and device_class not in CLASS_NAMES:
                return Result(BAD_REQUEST, f"unknown device class {device_class!r}"), []
            if not device_class:
                if ids:
                    return Result(BAD_REQUEST, "ids need a device_class"), []
                devs = [d for c in CLASS_NAMES for d in self.devices_of(c)]
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
        with self.lock:
            out = []
            for c in CLASS_NAMES:
                for d in self.devices_of(c):
                    out.append({"device_class": c, "id": d.id, "board": d.board.name,
                                "bus": self.bus.name, "address": d.board.address,
                                "channel": d.channel, "on": d.on, "up": d.board.up,
                                "ok": d.board.ok, "fault": d.board.fault})
            return out

    # ---- commands ----------------------------------------------------------------
    def _resolve(self, cls: str, ids: Iterable[int]) -> tuple[Result | None, list[Device]]:
        if cls not in CLASS_NAMES:
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
            self._drive_target = None
            failures = []
            for b in self.boards.values():
                try:
                    b.command(R.CMD_RESET)
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
                    if isinstance(b, DcMotorBoard) and not masks[b.name] & R.EN_MOTOR:
                        b.set_speedval(0x8000)
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
                    self._drive_target = None
                if not on:
                    self.leases.pop(d.key, None)
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
                    sv = speedval_from_duty(value)
                elif mode == MODE_VELOCITY:
                    if abs(value) > SPEED_RAD_MAX + 1e-9:
                        return Result(BAD_REQUEST,
                                      f"{d.name}: speed {value} rad/s outside +-{SPEED_RAD_MAX}")
                    sv = speedval_from_rad_s(value)
                else:
                    return Result(BAD_REQUEST, f"{d.name}: unknown mode {mode}")
                planned.append((d, sv))
            if all(not speedval_sign(sv) for _, sv in planned):
                for d, _ in planned:   # a stopped motor holds no lease
                    self.leases.pop(d.key, None)
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
                    old = self.leases.get(d.key)
                    self.leases[d.key] = Lease(lease_s, now + lease_s, now,
                                               old.renewals + 1 if old else 0)
                    leased.append(d.name)
                else:
                    self.leases.pop(d.key, None)
            note = f", lease {lease_s:g} s: {', '.join(leased)}" if leased else ""
            return Result(OK, f"{cls}: {len(planned)} set{note}")

    # ---- command leases (docs/HARDWARE.md section 14) ------------------------------
    def renew_lease(self, cls: str, ids: list[int],
                    lease_s: float = 0.0) -> tuple[Result, list[int]]:
        """Push the lease deadline of running leased motors to now + lease_s
        (0: each motor's own lease length). Never writes a speed and never
        restarts a motor (a lease already run out is stopped first): ids
        holding no lease are returned (REFUSED)."""
        if cls not in (DC_MOTOR, PSERVO_MOTOR):
            return Result(BAD_REQUEST,
                          f"renew_lease needs class dc_motor or pservo_motor, not {cls!r}"), []
        if not ids:
            return Result(BAD_REQUEST, "no ids"), []
        lease_s = float(lease_s)
        if not math.isfinite(lease_s) or lease_s < 0.0:
            return Result(BAD_REQUEST, f"lease_s {lease_s} must be 0 (keep each motor's "
                                       f"lease) or a positive number of seconds"), []
        with self.lock:
            err, devs = self._resolve(cls, ids)
            if err:
                return err, []
            now = self.clock()
            self._lease_tick(now)      # a lease that has run out is stopped, not renewed
            renewed, missing, why = [], [], []
            for d in devs:
                ls = self.leases.get(d.key)
                if ls is None:
                    missing.append(d.id)
                    st = self.lease_stopped.get(d.key)
                    why.append(f"{d.name}: lease of {st[0]:g} s ran out {now - st[2]:.3f} s "
                               f"ago, motor stopped" if st else f"{d.name}: holds no lease")
                    continue
                if lease_s > 0.0:
                    ls.lease_s = lease_s
                ls.deadline = now + ls.lease_s
                ls.renewals += 1
                renewed.append(d.name)
            if missing:
                done = f"; renewed: {', '.join(renewed)}" if renewed else ""
                return Result(REFUSED, "; ".join(why) + " (a renewal never restarts a "
                                       "motor: send set_motors)" + done), missing
            return Result(OK, f"{cls}: {len(renewed)} leases renewed"), []

    def lease_state(self, key: tuple[str, int], now: float | None = None) -> dict:
        """For diagnostics: lease length, time left, or the stop a lease made."""
        now = self.clock() if now is None else now
        with self.lock:
            ls = self.leases.get(key)
            out = {"lease": "none", "lease_stopped": "", "lease_expiries": self.lease_expiries}
            if ls is not None:
                out["lease"] = (f"{ls.lease_s:.3f} s, {max(0.0, ls.deadline - now):.3f} s left, "
                                f"{ls.renewals} renewals")
            st = self.lease_stopped.get(key)
            if st is not None:
                out["lease_stopped"] = (f"stopped: its command lease of {st[0]:g} s ran out "
                                        f"(no set_motors or renew_lease; commander gone?)")
            return out

    def _lease_tick(self, now: float) -> None:
        """Stop every motor whose lease has run out (caller holds the lock)."""
        for key, ls in list(self.leases.items()):
            if now < ls.deadline:
                continue
            del self.leases[key]
            d = self.devices.get(key)
            if d is None:
                continue
            late = now - ls.deadline
            res = self._stop_motors(d.device_class, [(d, speedval_from_duty(0.0))])
            self.lease_expiries += 1
            self.lease_stopped[key] = (ls.lease_s, late, now)
            self._event("warn", f"{d.name}: command lease of {ls.lease_s:g} s ran out "
                                f"{late * 1000.0:.0f} ms ago (last command or renewal "
                                f"{now - ls.deadline + ls.lease_s:.3f} s ago, {ls.renewals} "
                                f"renewals): stopping it: {res.message}", d.board.name)

    def _motors_commanded(self, cls: str) -> None:
        if cls == DC_MOTOR:
            self._drive_target = None  # an explicit command overrides cmd_vel
        elif self._drive_target is not None:
            self._drive_target = (self._drive_target[0], None)  # steering: no longer cmd_vel's

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
                        b.command(R.CMD_ABORT_HOME)
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

    # ---- steering homing -----------------------------------------------------------
    def start_homing(self, dev_id: int) -> Result:
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
                d.board.command(R.CMD_HOME)
            except BoardError as e:
                return Result(HARDWARE_FAULT, str(e))
            self.homing_start[dev_id] = self._steer_angle()
            self.leases.pop(d.key, None)
            d.board.homing = True
            d.board.phase = R.PHASE_SEEKING
            d.board.homed = False
            if self._drive_target is not None:
                self._drive_target = (self._drive_target[0], None)
            return Result(OK, f"{d.name}: homing started at {self._steer_angle():.3f} rad")

    def abort_homing(self, dev_id: int) -> Result:
        with self.lock:
            d = self.device(PSERVO_MOTOR, dev_id)
            if d is None:
                return Result(INVALID_ID, f"no pservo_motor with id {dev_id}")
            self.homing_start.pop(dev_id, None)
            try:
                d.board.command(R.CMD_ABORT_HOME)
            except BoardError as e:
                return Result(HARDWARE_FAULT, str(e))
            d.board.homing = False
            return Result(OK, f"{d.name}: homing aborted")

    def homing_status(self, dev_id: int) -> dict:
        """phase (name), angle (rad), progress (0..1), done / failed flags, reason."""
        with self.lock:
            d = self.device(PSERVO_MOTOR, dev_id)
            b = d.board
            angle = self._steer_angle()
            start = self.homing_start.get(dev_id, angle)
            limit = float(self.geo["steering_limit"])
            total = max(1e-6, (limit - start) + limit)
            if b.phase == R.PHASE_SEEKING:
                swept = max(0.0, min(angle, limit) - start)
            elif b.phase in (R.PHASE_BACKING_OFF, R.PHASE_CENTERING):
                swept = (limit - start) + max(0.0, limit - angle)
            else:
                swept = total if b.phase == R.PHASE_DONE else 0.0
            phase = R.PHASE_NAMES.get(b.phase, str(b.phase))
            done = b.phase == R.PHASE_DONE and b.homed and not b.homing
            failed = b.phase in (R.PHASE_ABORTED, R.PHASE_CANCELLED) or not b.up
            reason = ""
            if b.phase == R.PHASE_ABORTED:
                reason = f"steering stalled during homing at {angle:.3f} rad"
            elif not b.up:
                reason = b.fault
            return {"phase": phase, "angle": angle, "progress": min(1.0, swept / total),
                    "done": done, "failed": failed, "reason": reason, "up": b.up,
                    "fresh_stamp": b.mono}

    def homing_finished(self, dev_id: int) -> None:
        with self.lock:
            self.homing_start.pop(dev_id, None)

    # ---- cmd_vel ------------------------------------------------------------------
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
                self.leases.pop(dcs[0].key, None)
            if self._drive_timed_out:
                self._drive_timed_out = False
                self._warned.discard("timeout")
        return w, a

    def stop_drive(self) -> None:
        with self.lock:
            self._drive_target = (0.0, None)
            self._drive_stamp = self.clock()

    def _warn_once(self, key: str, level: str, msg: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self._event(level, msg)

    def _drive_tick(self, now: float) -> None:
        if self._drive_target is None:
            return
        w, a = self._drive_target
        if now - self._drive_stamp > self.cmd_timeout and not self._drive_timed_out:
            self._drive_timed_out = True
            self._event("warn", f"cmd_vel timeout ({self.cmd_timeout:.2f} s): stopping the drive")
            self._drive_target = (0.0, None)
            w, a = 0.0, None
        dcs = self.devices_of(DC_MOTOR)
        if dcs:
            d = dcs[0]
            if not d.on:
                self._warn_once("drive_off", "warn", "cmd_vel ignored: dc_motor 0 is not active")
            elif d.board.refuse_reason() is None:
                sv = speedval_from_rad_s(w)
                new, motion = speedval_sign(sv), d.motion_sign()
                if new and motion and motion != new:
                    sv = speedval_from_rad_s(0.0)  # the board refuses reversing while moving
                    self._warn_once("reverse", "info", "cmd_vel reverses the drive: stopping first")
                if sv != d.board.speed_set:
                    try:
                        d.board.set_speedval(sv)
                        self._warned.discard("reverse")
                    except BoardError:
                        pass
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
                if abs(a - getattr(b, "_last_target", 1e9)) > 1e-4 or not b.position_mode:
                    try:
                        b.set_target(a)
                        b._last_target = a
                        self.leases.pop(s.key, None)   # position mode: cmd_vel's now
                    except BoardError:
                        pass

    # ---- simulator control (SCC) ---------------------------------------------------
    def sim_control(self, command: str, target: str = "", fault: str = "",
                    values: list[float] = ()) -> Result:
        if self.world is None:
            return Result(NOT_SUPPORTED,
                          f"sim_control needs the sim backend (bus is {self.backend})")
        values = [float(v) for v in values]
        with self.lock:
            w, bus = self.world, self.bus
            assert isinstance(bus, SimBus)
            if command == "teleport":
                if len(values) != 3:
                    return Result(BAD_REQUEST, "teleport needs values [x, y, yaw]")
                w.sync()
                w.teleport(*values)
                return Result(OK,
                              f"teleported to ({values[0]:.3f}, {values[1]:.3f}, {values[2]:.3f})")
            if command == "add_obstacle":
                if not target:
                    return Result(BAD_REQUEST, "add_obstacle needs a target name")
                try:
                    w.add_obstacle(target, values)
                except ValueError as e:
                    return Result(BAD_REQUEST, str(e))
                return Result(OK, f"obstacle {target} added")
            if command == "remove_obstacle":
                if not w.remove_obstacle(target):
                    return Result(INVALID_ID, f"no obstacle named {target!r}")
                return Result(OK, f"obstacle {target} removed")
            if command in ("set_fault", "clear_faults"):
                if target and target not in self.boards:
                    return Result(INVALID_ID, f"no board named {target!r} "
                                              f"(boards: {', '.join(self.boards)})")
                if command == "clear_faults":
                    names = [target] if target else list(self.boards)
                    for n in names:
                        bus.clear_faults(self.boards[n].address)
                        key = "drive" if self.boards[n].type == "dc_motor" else "steering"
                        if self.boards[n].type in ("dc_motor", "pservo_motor"):
                            w.stall[key] = False
                    return Result(OK, f"faults cleared on {', '.join(names)}")
                if not target:
                    return Result(BAD_REQUEST, "set_fault needs a target board")
                b = self.boards[target]
                if fault == "stall":
                    if b.type not in ("dc_motor", "pservo_motor"):
                        return Result(BAD_REQUEST,
                                      f"stall needs a motor board, {target} is {b.type}")
                    w.sync()
                    w.stall["drive" if b.type == "dc_motor" else "steering"] = True
                    return Result(OK, f"{target}: motor stalled")
                if fault == "error_rate":
                    if len(values) != 1 or not 0.0 <= values[0] <= 1.0:
                        return Result(BAD_REQUEST,
                                      "error_rate needs values [rate] with 0 <= rate <= 1")
                    bus.set_fault(b.address, "error_rate", values[0])
                    return Result(OK, f"{target}: error rate {values[0]:.3f}")
                if fault in ("stuck", "missing"):
                    bus.set_fault(b.address, fault)
                    return Result(OK, f"{target}: {fault}")
                return Result(BAD_REQUEST,
                              f"unknown fault {fault!r} (error_rate, stuck, missing, stall)")
            return Result(BAD_REQUEST, f"unknown sim command {command!r}")

    def ground_truth(self) -> tuple[float, float, float] | None:
        if self.world is None:
            return None
        with self.lock:
            self.world.sync()
            return self.world.pose()

    def close(self) -> None:
        with self.lock:
            try:
                for b in self.boards.values():
                    if b.up:
                        try:
                            b.command(R.CMD_RESET)
                        except BoardError:
                            pass
            finally:
                self.bus.close()
