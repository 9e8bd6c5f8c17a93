"""Simulated Brak: the world and the virtual boards that answer on a SimBus.

The world is a rectangular room with circle and box obstacles, a tricycle
(front steered drive wheel; ``base_link`` at the middle of the rear axle, as
in ros2_controllers' tricycle_controller), motors with first-order lag, a
steering that homes (seek the index at the + limit, back off, centre) and
aborts when the motor stalls, sonar cones ray-cast with seeded noise, encoder
ticks and a one-axis accelerometer.

The virtual boards implement the register maps of :mod:`.registers`; the
board and device objects of the hardware layer talk to them through
:class:`~.bus.SimBus` exactly as they talk to real boards through smbus2.

Time: the world integrates with a fixed step up to the time of each bus
transaction (``SimWorld.advance_to``), using the clock it is given, so tests
can drive a fake clock and get bit-identical runs.
"""

from __future__ import annotations

import math
import random
from typing import Callable

from . import registers as R
from .bus import SimBus
from .values import (mposval_decode, mposval_encode, speedval_decode, speedval_from_rad_s,
                     speedval_sign, wrap_angle)

G = 9.80665
SOUND_SPEED = 343.0  # the simulated air; the node's parameter converts back


class SimWorld:
    def __init__(self, robot: dict, seed: int | None = None,
                 clock: Callable[[], float] | None = None):
        sim = robot["sim"]
        geo = robot["geometry"]
        self.sim = sim
        self.geo = geo
        self.rng = random.Random(sim["seed"] if seed is None or seed < 0 else seed)
        self.clock = clock
        self.t: float | None = None
        self.dt = float(sim["physics_dt"])
        x, y, th = sim["initial_pose"]
        self.x, self.y, self.th = float(x), float(y), float(th)
        self.steer = float(sim["initial_steering"])
        self.steer_rate = 0.0
        self.w = 0.0              # drive wheel rad/s
        self.phi = 0.0            # drive wheel angle, rad (total)
        self.v_base = 0.0         # base_link forward speed, m/s
        self.accel = 0.0          # base_link forward acceleration, m/s^2
        self.L = float(geo["wheelbase"])
        self.r = float(geo["wheel_radius"])
        self.limit = float(geo["steering_limit"])
        self.room = [float(v) for v in sim["room"]]
        self.obstacles: dict[str, dict] = {}
        for name, ob in (sim.get("obstacles") or {}).items():
            self.add_obstacle(name, ob.get("circle") or ob.get("box"))
        # motor commands (set by the virtual boards)
        self.drive_enabled = False
        self.drive_cmd = (True, 0.0)   # (duty_mode, value)
        self.steer_enabled = False
        self.steer_mode = "speed"      # speed | position | homing
        self.steer_cmd = (True, 0.0)
        self.steer_target = 0.0
        self.homed = False
        self.motor_origin = self.steer  # where the motor counter reads zero
        self.homing_phase = R.PHASE_IDLE
        self.homing_swept = 0.0
        self.homing_expected = 1.0
        self.stall = {"drive": False, "steering": False}
        self.stalled = {"drive": False, "steering": False}
        self._still = {"drive": 0.0, "steering": 0.0}
        # the motor boards' own command watchdogs, run on the world's clock every step
        self.watchdogs: list[Callable[[float], None]] = []

    # ---- world editing (sim_control) -------------------------------------
    def add_obstacle(self, name: str, values) -> None:
        v = [float(a) for a in values]
        if len(v) == 3:
            if v[2] <= 0:
                raise ValueError("circle radius must be > 0")
            self.obstacles[name] = {"circle": v}
        elif len(v) == 4:
            x0, y0, x1, y1 = min(v[0], v[2]), min(v[1], v[3]), max(v[0], v[2]), max(v[1], v[3])
            self.obstacles[name] = {"box": [x0, y0, x1, y1]}
        else:
            raise ValueError("obstacle needs [cx, cy, r] or [x0, y0, x1, y1]")

    def remove_obstacle(self, name: str) -> bool:
        return self.obstacles.pop(name, None) is not None

    def teleport(self, x: float, y: float, th: float) -> None:
        self.x, self.y, self.th = float(x), float(y), wrap_angle(float(th))

    def pose(self) -> tuple[float, float, float]:
        return self.x, self.y, self.th

    def twist(self) -> tuple[float, float]:
        v = self.w * self.r * (1.0 - float(self.sim["encoder_slip"]))
        return v * math.cos(self.steer), v * math.sin(self.steer) / self.L

    # ---- time ------------------------------------------------------------
    def sync(self) -> None:
        if self.clock is not None:
            self.advance_to(self.clock())

    def advance_to(self, t: float) -> None:
        if self.t is None:
            self.t = t
            return
        while self.t + self.dt <= t + 1e-12:
            for wd in self.watchdogs:
                wd(self.t)
            self._step(self.dt)
            self.t += self.dt

    # ---- physics -----------------------------------------------------------
    def _lag(self, cur: float, target: float, dt: float) -> float:
        tau = float(self.sim["motor_time_constant"])
        if tau <= 0:
            return target
        return cur + (target - cur) * (1.0 - math.exp(-dt / tau))

    def _step(self, dt: float) -> None:
        sim = self.sim
        # drive wheel
        if self.drive_enabled:
            duty, val = self.drive_cmd
            target = val / 100.0 * float(sim["drive_noload_speed"]) if duty else val
        else:
            target = 0.0
        if self.stall["drive"]:
            self.w = 0.0
        else:
            self.w = self._lag(self.w, target, dt)
        self._stall_check("drive", abs(target) > 1e-3 and self.drive_enabled, abs(self.w), dt)
        # steering
        rate_target = 0.0
        if self.steer_enabled:
            if self.steer_mode == "speed":
                duty, val = self.steer_cmd
                rate_target = val / 100.0 * float(sim["steering_noload_rate"]) if duty else val
            elif self.steer_mode == "position":
                mr = float(self.geo["max_steering_rate"])
                rate_target = max(-mr, min(mr, 4.0 * (self.steer_target - self.steer)))
            elif self.steer_mode == "homing":
                rate_target = self._homing_rate()
        if self.stall["steering"]:
            self.steer_rate = 0.0
        elif self.steer_mode == "homing":
            self.steer_rate = rate_target  # the board drives homing at a set rate
        else:
            self.steer_rate = self._lag(self.steer_rate, rate_target, dt)
        old = self.steer
        mech = self.limit + 0.05
        self.steer = max(-mech, min(mech, self.steer + self.steer_rate * dt))
        moved = abs(self.steer - old) / dt
        self._stall_check("steering", abs(rate_target) > 1e-3, moved, dt)
        if self.steer_mode == "homing":
            self.homing_swept += abs(self.steer - old)
            self._homing_advance()
        # chassis (tricycle, exact for constant v and steer over dt)
        self.phi += self.w * dt
        v = self.w * self.r * (1.0 - float(sim["encoder_slip"]))
        ds = v * math.cos(self.steer) * dt
        dth = v * math.sin(self.steer) / self.L * dt
        self.x += ds * math.cos(self.th + 0.5 * dth)
        self.y += ds * math.sin(self.th + 0.5 * dth)
        self.th = wrap_angle(self.th + dth)
        vb = v * math.cos(self.steer)
        self.accel = (vb - self.v_base) / dt
        self.v_base = vb

    def _stall_check(self, which: str, driven: bool, speed: float, dt: float) -> None:
        if driven and speed < 1e-3:
            self._still[which] += dt
            if self._still[which] >= float(self.sim["stall_time"]):
                self.stalled[which] = True
        else:
            self._still[which] = 0.0
            if speed >= 1e-3:
                self.stalled[which] = False
        if which == "steering" and self.stalled[which] and self.steer_mode == "homing":
            self.homing_phase = R.PHASE_ABORTED
            self.steer_mode = "speed"
            self.steer_cmd = (True, 0.0)
            self.steer_rate = 0.0

    # ---- homing --------------------------------------------------------------
    def start_homing(self) -> bool:
        if self.steer_mode == "homing":
            return False
        self.steer_mode = "homing"
        self.homing_phase = R.PHASE_SEEKING
        self.homing_swept = 0.0
        self.stalled["steering"] = False
        self._still["steering"] = 0.0
        backoff = float(self.sim["homing_backoff"])
        self.homing_expected = max(1e-6, (self.limit - self.steer) + backoff
                                   + (self.limit - backoff))
        return True

    def abort_homing(self, phase: int = R.PHASE_CANCELLED) -> None:
        if self.steer_mode == "homing":
            self.steer_mode = "speed"
            self.steer_cmd = (True, 0.0)
            self.steer_rate = 0.0
            self.homing_phase = phase

    def _homing_rate(self) -> float:
        sp = float(self.sim["homing_speed"])
        return sp if self.homing_phase == R.PHASE_SEEKING else -sp

    def _homing_advance(self) -> None:
        backoff = float(self.sim["homing_backoff"])
        if self.homing_phase == R.PHASE_SEEKING and self.steer >= self.limit:
            self.homing_phase = R.PHASE_BACKING_OFF
        elif self.homing_phase == R.PHASE_BACKING_OFF and self.steer <= self.limit - backoff:
            self.homing_phase = R.PHASE_CENTERING
        elif self.homing_phase == R.PHASE_CENTERING and self.steer <= 0.0:
            self.steer = 0.0
            self.steer_rate = 0.0
            self.homed = True
            self.motor_origin = 0.0
            self.homing_phase = R.PHASE_DONE
            self.steer_mode = "speed"
            self.steer_cmd = (True, 0.0)

    def homing_progress(self) -> float:
        if self.homing_phase == R.PHASE_DONE:
            return 1.0
        return max(0.0, min(1.0, self.homing_swept / self.homing_expected))

    # ---- sonar ---------------------------------------------------------------
    def ray(self, ox: float, oy: float, ang: float) -> float:
        """Distance from (ox, oy) along ang to the nearest surface (inf if none)."""
        dx, dy = math.cos(ang), math.sin(ang)
        best = math.inf
        x0, y0, x1, y1 = self.room
        segs = [(x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0)]
        for ob in self.obstacles.values():
            if "box" in ob:
                a, b, c, d = ob["box"]
                segs += [(a, b, c, b), (c, b, c, d), (c, d, a, d), (a, d, a, b)]
            else:
                cx, cy, r = ob["circle"]
                fx, fy = ox - cx, oy - cy
                bq = fx * dx + fy * dy
                cq = fx * fx + fy * fy - r * r
                disc = bq * bq - cq
                if disc >= 0:
                    s = math.sqrt(disc)
                    for t in (-bq - s, -bq + s):
                        if t >= 0:
                            best = min(best, t)
                            break
        for ax, ay, bx, by in segs:
            ex, ey = bx - ax, by - ay
            den = dx * ey - dy * ex
            if abs(den) < 1e-12:
                continue
            wx, wy = ax - ox, ay - oy
            t = (wx * ey - wy * ex) / den
            u = (wx * dy - wy * dx) / den
            if t >= 0 and 0 <= u <= 1:
                best = min(best, t)
        return best

    def sonar_range(self, pose) -> float:
        """One noisy ranging of a sonar at ``pose`` = [x, y, yaw] in base_link."""
        sx, sy, syaw = pose
        c, s = math.cos(self.th), math.sin(self.th)
        ox = self.x + c * sx - s * sy
        oy = self.y + s * sx + c * sy
        yaw = self.th + syaw
        n = max(1, int(self.sim["sonar_rays"]))
        fov = float(self.geo["sonar_field_of_view"])
        d = min(self.ray(ox, oy, yaw + (fov * (i / (n - 1) - 0.5) if n > 1 else 0.0))
                for i in range(n))
        if math.isinf(d):
            return d
        return max(0.0, d + self.rng.gauss(0.0, float(self.sim["sonar_noise"])))


# ---- virtual boards ----------------------------------------------------------
class VirtualBoard:
    """Register file of one simulated board; subclasses fill the data block."""

    def __init__(self, world: SimWorld, board: dict, regmap: R.RegisterMap):
        self.world = world
        self.board = board
        self.rm = regmap
        self.enable = 0
        self.seq = 0
        self.status_extra = 0
        self._tick = None

    def update_hz(self) -> float:
        return float(self.board["update_hz"])

    def _ticks(self) -> int:
        """Number of board updates since the previous read (0 if none)."""
        k = int(math.floor(self.world.t * self.update_hz() + 1e-9))
        if self._tick is None:
            self._tick = k
            return 1
        dk = k - self._tick
        self._tick = k
        return max(0, dk)

    def data_block(self) -> list[int]:  # pragma: no cover - abstract
        raise NotImplementedError

    def control_regs(self) -> dict[int, int]:
        return {self.rm.enable: self.enable}

    def read(self, reg: int, length: int) -> list[int]:
        image = [0] * 256
        image[self.rm.who_am_i] = self.rm.who_am_i_value
        for r, v in self.control_regs().items():
            image[r] = v & 0xFF
        if reg <= self.rm.data < reg + length or reg == self.rm.data:
            block = self.data_block()
            image[self.rm.data:self.rm.data + len(block)] = block
        return image[reg:reg + length]

    def write(self, reg: int, data: list[int]) -> None:
        if reg == self.rm.enable:
            self.enable = data[0]
            self.on_enable()
        elif reg == self.rm.command:
            self.on_command(data[0])
        else:
            self.on_write(reg, data)

    def on_enable(self) -> None:
        pass

    def on_command(self, cmd: int) -> None:
        if cmd == R.CMD_RESET:
            self.enable = 0
            self.status_extra = 0
            self.on_enable()
            self.on_reset()

    def on_reset(self) -> None:
        pass

    def on_write(self, reg: int, data: list[int]) -> None:
        pass


class VirtualUltrasonicBoard(VirtualBoard):
    def __init__(self, world, board, regmap, channel_poses: dict[int, list[float]]):
        super().__init__(world, board, regmap)
        self.channels = int(board["channels"])
        self.poses = channel_poses
        self.default_slots = [int(s) for s in board["slots"]]
        self.default_interval = int(board["interval_ms"])
        self.on_reset()

    def on_reset(self):
        self.slots = list(self.default_slots)
        self.interval_ms = self.default_interval
        self.delays = [0] * self.channels
        self._k = None

    def update_hz(self) -> float:
        return 1000.0 / (self.interval_ms * (max(self.slots) + 1))

    def data_block(self):
        w = self.world
        nslots = max(self.slots) + 1
        k = int(math.floor(w.t * 1000.0 / self.interval_ms + 1e-9))
        if self._k is None:
            self._k = k - nslots
        firings = range(max(self._k + 1, k - nslots + 1), k + 1)
        self._k = k
        max_r = float(w.geo["sonar_max_range"])
        min_r = float(w.geo["sonar_min_range"])
        for f in firings:
            slot = f % nslots
            for ch in range(self.channels):
                if self.slots[ch] != slot or not self.enable & (1 << ch) or ch not in self.poses:
                    continue
                d = w.sonar_range(self.poses[ch])
                if d > max_r:
                    self.delays[ch] = 0  # no echo within the listening window
                else:
                    self.delays[ch] = int(round(2.0 * max(d, min_r) / SOUND_SPEED * 1e6))
            self.seq = (self.seq + 1) & 0xFF
        return R.pack_ultrasonic(R.ST_READY | self.status_extra, self.seq, self.delays)

    def control_regs(self):
        regs = {self.rm.enable: self.enable}
        hi, lo = R.u16(self.interval_ms)
        regs[self.rm.interval], regs[self.rm.interval + 1] = hi, lo
        for ch, s in enumerate(self.slots):
            regs[self.rm.slots + ch] = s
        return regs

    def on_write(self, reg, data):
        if reg == self.rm.interval and len(data) >= 2:
            self.interval_ms = max(5, R.from_u16(data))
        elif self.rm.slots <= reg < self.rm.slots + self.channels:
            for i, v in enumerate(data):
                if reg - self.rm.slots + i < self.channels:
                    self.slots[reg - self.rm.slots + i] = min(int(v), self.channels - 1)


class VirtualMotorBoard(VirtualBoard):
    """A motor board with its own command watchdog, as real motor controllers have.

    TIMEOUT (2 bytes, ms; 0 = off; power-on / reset default = the board's
    ``command_timeout_ms``) and KEEPALIVE (write anything). Every write that
    reaches the board feeds the watchdog; when none came for TIMEOUT ms the
    board stops its motor by itself (:meth:`expire`) and sets ST_TIMEOUT until
    the next speed/target write. The check runs on the board's own clock (the
    world's time, every physics step), not on the node's: it stops the motor
    when the node is killed, the bus is lost, or the writes are lost.
    """

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.default_timeout_ms = int(board.get("command_timeout_ms", 500))
        self.timeout_ms = self.default_timeout_ms
        self.fed_at: float | None = None      # world time of the last write
        self.watchdog_trips = 0
        world.watchdogs.append(self.watchdog)

    def feed(self) -> None:
        self.fed_at = self.world.t

    def watchdog(self, t: float) -> None:
        if self.fed_at is None:
            self.fed_at = t
            return
        if self.timeout_ms and t - self.fed_at > self.timeout_ms / 1000.0 + 1e-9:
            self.fed_at = t  # re-armed: expire() is idempotent anyway
            if self.expire():
                self.watchdog_trips += 1
                self.status_extra |= R.ST_TIMEOUT

    def expire(self) -> bool:  # pragma: no cover - abstract
        """Stop the motor; True when it was driven (worth ST_TIMEOUT)."""
        raise NotImplementedError

    def control_regs(self):
        regs = super().control_regs()
        regs[self.rm.timeout], regs[self.rm.timeout + 1] = R.u16(self.timeout_ms)
        return regs

    def write(self, reg, data):
        self.feed()
        if reg == self.rm.keepalive:
            return
        if reg == self.rm.timeout:
            if len(data) >= 2:
                self.timeout_ms = R.from_u16(data)
            return
        super().write(reg, data)

    def on_command(self, cmd):
        super().on_command(cmd)
        if cmd == R.CMD_RESET:
            self.timeout_ms = self.default_timeout_ms


class VirtualDcMotorBoard(VirtualMotorBoard):
    """Drive motor + relative encoder."""

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.cpr = int(world.geo["drive_encoder_cpr"])
        self.on_reset()

    #: only the first DC motor board drives the world's wheel; any other one is a
    #: spare motor on the bench (its speed follows its command, no encoder ticks)
    drives_world = True

    def expire(self) -> bool:
        if not speedval_sign(self.speed_set):
            return False
        self.speed_set = 0x8000
        self._command((True, 0.0))
        return True

    def _command(self, cmd) -> None:
        if self.drives_world:
            self.world.drive_cmd = cmd

    def on_reset(self):
        self.speed_set = 0x8000  # 0 % duty
        self.count_origin = self.world.phi
        self.count = 0
        self.meas = 0.0
        self._command((True, 0.0))

    def on_enable(self):
        if self.drives_world:
            self.world.drive_enabled = bool(self.enable & R.EN_MOTOR)

    def on_command(self, cmd):
        super().on_command(cmd)
        if cmd == R.CMD_CLEAR_COUNT:
            self.count_origin = self.world.phi
            self.count = 0

    def on_write(self, reg, data):
        if reg == self.rm.speed and len(data) >= 2:
            sv = R.from_u16(data)
            cur = speedval_sign(self.speed_set)
            new = speedval_sign(sv)
            if cur and new and cur != new and abs(self._wheel()) > 0.02:
                self.status_extra |= R.ST_REFUSED  # as the real boards: ignored
                return
            self.status_extra &= ~(R.ST_REFUSED | R.ST_TIMEOUT)
            self.speed_set = sv
            self._command(speedval_decode(sv))

    def _wheel(self) -> float:
        """The motor's speed, rad/s."""
        if self.drives_world:
            return self.world.w
        if not self.enable & R.EN_MOTOR:
            return 0.0
        duty, val = speedval_decode(self.speed_set)
        return val / 100.0 * float(self.world.sim["drive_noload_speed"]) if duty else val

    def data_block(self):
        w = self.world
        dk = self._ticks()
        if dk:
            if self.enable & R.EN_ENCODER and self.drives_world:
                self.count = int(math.floor((w.phi - self.count_origin) * self.cpr / (2 * math.pi)))
            self.meas = self._wheel()
            self.seq = (self.seq + dk) & 0xFF
        stalled = self.drives_world and w.stalled["drive"]
        st = R.ST_READY | self.status_extra | (R.ST_STALLED if stalled else 0)
        return list(R.DC_BLOCK.pack(st, self.seq, self.speed_set, speedval_from_rad_s(self.meas),
                                    R.to_i16(self.count)))


class VirtualPservoBoard(VirtualMotorBoard):
    """Steering pseudo-servo motor + absolute steering encoder."""

    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.cpr = int(world.geo["steering_encoder_cpr"])
        self.on_reset()

    def expire(self) -> bool:
        """Speed mode: speed 0; position mode: hold where it is; homing: abort."""
        w = self.world
        if w.steer_mode == "homing":
            w.abort_homing(R.PHASE_CANCELLED)
            self.speed_set = 0x8000
            return True
        if w.steer_mode == "position":
            moving = abs(w.steer_target - w.steer) > 1e-3 or abs(w.steer_rate) > 1e-3
            w.steer_target = w.steer
            return moving
        if speedval_decode(self.speed_set)[1] == 0.0:
            return False
        self.speed_set = 0x8000
        w.steer_cmd = (True, 0.0)
        return True

    def on_reset(self):
        self.speed_set = 0x8000
        self.count = 0
        self.position = 0.0
        self.world.abort_homing(R.PHASE_IDLE)
        self.world.steer_mode = "speed"
        self.world.steer_cmd = (True, 0.0)
        self.world.homing_phase = R.PHASE_IDLE

    def on_enable(self):
        self.world.steer_enabled = bool(self.enable & R.EN_MOTOR)
        if not self.world.steer_enabled:
            self.world.abort_homing(R.PHASE_CANCELLED)

    def on_command(self, cmd):
        super().on_command(cmd)
        if cmd == R.CMD_HOME:
            if self.enable & R.EN_MOTOR:
                self.world.start_homing()
                self.status_extra &= ~R.ST_REFUSED
            else:
                self.status_extra |= R.ST_REFUSED
        elif cmd == R.CMD_ABORT_HOME:
            self.world.abort_homing(R.PHASE_CANCELLED)

    def on_write(self, reg, data):
        w = self.world
        if w.steer_mode == "homing" and reg in (self.rm.speed, self.rm.target):
            self.status_extra |= R.ST_REFUSED
            return
        if reg == self.rm.speed and len(data) >= 2:
            sv = R.from_u16(data)
            cur = speedval_sign(self.speed_set) if w.steer_mode == "speed" else 0
            new = speedval_sign(sv)
            if cur and new and cur != new and abs(w.steer_rate) > 0.02:
                self.status_extra |= R.ST_REFUSED
                return
            self.status_extra &= ~(R.ST_REFUSED | R.ST_TIMEOUT)
            self.speed_set = sv
            w.steer_mode = "speed"
            w.steer_cmd = speedval_decode(sv)
        elif reg == self.rm.target and len(data) >= 4:
            if not w.homed:
                self.status_extra |= R.ST_REFUSED
                return
            self.status_extra &= ~(R.ST_REFUSED | R.ST_TIMEOUT)
            w.steer_target = max(-w.limit, min(w.limit, mposval_decode(R.from_u32(data))))
            w.steer_mode = "position"

    def data_block(self):
        w = self.world
        dk = self._ticks()
        if dk:
            if self.enable & R.EN_ENCODER:
                self.count = int(round(wrap_angle(w.steer) * self.cpr / (2 * math.pi)))
            self.position = w.steer - w.motor_origin
            self.seq = (self.seq + dk) & 0xFF
        st = R.ST_READY | self.status_extra
        if w.stalled["steering"]:
            st |= R.ST_STALLED
        if w.steer_mode == "homing":
            st |= R.ST_HOMING
        if w.homed:
            st |= R.ST_HOMED
        if w.steer_mode == "position":
            st |= R.ST_POSITION_MODE
        return list(R.PSERVO_BLOCK.pack(st, self.seq, self.speed_set,
                                        mposval_encode(self.position), R.to_i16(self.count),
                                        w.homing_phase))


class VirtualAccelBoard(VirtualBoard):
    def __init__(self, world, board, regmap):
        super().__init__(world, board, regmap)
        self.mg = 0

    def on_reset(self):
        self.mg = 0

    def data_block(self):
        w = self.world
        dk = self._ticks()
        if dk:
            if self.enable & 0x01:
                g = w.accel / G + w.rng.gauss(0.0, float(w.sim["accel_noise_g"]))
                self.mg = max(-32768, min(32767, int(round(g * 1000.0))))
            self.seq = (self.seq + dk) & 0xFF
        return list(R.ACCEL_BLOCK.pack(R.ST_READY | self.status_extra, self.seq, self.mg))


VIRTUAL_BOARDS = {
    "ultrasonic": VirtualUltrasonicBoard,
    "dc_motor": VirtualDcMotorBoard,
    "pservo_motor": VirtualPservoBoard,
    "accelerometer": VirtualAccelBoard,
}


def build_sim_bus(robot: dict, clock: Callable[[], float], seed: int | None = None,
                  name: str = "sim") -> tuple[SimBus, SimWorld]:
    """A SimBus with one virtual board per described board, and its world."""
    world = SimWorld(robot, seed=seed, clock=clock)
    bus = SimBus(name=name, seed=world.rng.randrange(1 << 30), before_access=world.sync)
    sonar_poses: dict[str, dict[int, list[float]]] = {}
    for d in (robot["devices"].get("ultrasonic") or {}).values():
        sonar_poses.setdefault(d["board"], {})[int(d["channel"])] = [float(v) for v in d["pose"]]
    for name_, b in robot["boards"].items():
        rm = R.RegisterMap.from_description(robot["register_maps"], b["type"])
        if b["type"] == "ultrasonic":
            vb = VirtualUltrasonicBoard(world, b, rm, sonar_poses.get(name_, {}))
        else:
            vb = VIRTUAL_BOARDS[b["type"]](world, b, rm)
            if b["type"] == "dc_motor":
                vb.drives_world = not any(isinstance(o, VirtualDcMotorBoard)
                                          for o in bus._devices.values())
        bus.attach(int(b["address"]), vb)
    return bus, world
