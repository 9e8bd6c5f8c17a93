"""Simulated Brak: the virtual boards that answer on a SimBus.

The world they sense and drive is :class:`~.sim_world.SimWorld` (encoder
ticks and a one-axis accelerometer are read from it here). The virtual
boards implement the register maps of :mod:`.registers`; the board and
device objects of the hardware layer talk to them through
:class:`~.bus.SimBus` exactly as they talk to real boards through smbus2.
:func:`build_sim_bus` is the ``sim`` backend: the bus it returns owns the
world, reached through ``bus.simulation`` (:mod:`.simulation`).
"""

from __future__ import annotations

import math
from typing import Callable

from . import registers as regs
from .bus import SimBus
from .sim_world import SimWorld
from .simulation import SimControls
from ..core.units import (G, SPEED_OF_SOUND, angle_in_counts, angle_to_counts, clamp_int,
                          range_to_delay_us, wrap_angle)
from ..protocol.values import (mposval_pack_rad, mposval_unpack_rad, speedval_pack,
                               speedval_sign, speedval_unpack)

SOUND_SPEED = SPEED_OF_SOUND  # the simulated air; the node's parameter converts back


# ---- virtual boards ----------------------------------------------------------
class VirtualBoard:
    """Register file of one simulated board; subclasses fill the data block."""

    def __init__(self, world: SimWorld, board: dict, regmap: regs.RegisterMap):
        self.world = world
        self.board = board
        self.rm = regmap
        self.enable = 0
        self.seq = 0
        self.status_extra = 0
        self._tick = None

    def update_hz(self) -> float:
        """How often the board makes new data (Hz)."""
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
        """The data block as read now (STATUS, SEQ, data)."""
        raise NotImplementedError

    def control_regs(self) -> dict[int, int]:
        """Register number -> value of the control registers."""
        return {self.rm.enable: self.enable}

    def read(self, reg: int, length: int) -> list[int]:
        """Registers reg.. reg+length-1 (WHO_AM_I, data block, control registers)."""
        image = [0] * 256
        image[self.rm.who_am_i] = self.rm.who_am_i_value
        for r, v in self.control_regs().items():
            image[r] = v & 0xFF
        if reg <= self.rm.data < reg + length or reg == self.rm.data:
            block = self.data_block()
            image[self.rm.data:self.rm.data + len(block)] = block
        return image[reg:reg + length]

    def write(self, reg: int, data: list[int]) -> None:
        """A register write: ENABLE, COMMAND, or the board's own registers."""
        if reg == self.rm.enable:
            self.enable = data[0]
            self.on_enable()
        elif reg == self.rm.command:
            self.on_command(data[0])
        else:
            self.on_write(reg, data)

    def on_enable(self) -> None:
        """React to a new ENABLE mask."""
        pass

    def on_command(self, cmd: int) -> None:
        """React to a COMMAND (reset here; subclasses add theirs)."""
        if cmd == regs.CMD_RESET:
            self.enable = 0
            self.status_extra = 0
            self.on_enable()
            self.on_reset()

    def on_reset(self) -> None:
        """Back to power-on state."""
        pass

    def on_write(self, reg: int, data: list[int]) -> None:
        """React to a write of the board's own registers."""
        pass


class VirtualUltrasonicBoard(VirtualBoard):
    """Sonar channels fired in slots; delays ray-cast in the world."""
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
                    self.delays[ch] = range_to_delay_us(max(d, min_r), SOUND_SPEED)
            self.seq = (self.seq + 1) & 0xFF
        return regs.pack_ultrasonic(regs.ST_READY | self.status_extra, self.seq, self.delays)

    def control_regs(self):
        values = {self.rm.enable: self.enable}
        hi, lo = regs.u16(self.interval_ms)
        values[self.rm.interval], values[self.rm.interval + 1] = hi, lo
        for ch, s in enumerate(self.slots):
            values[self.rm.slots + ch] = s
        return values

    def on_write(self, reg, data):
        if reg == self.rm.interval and len(data) >= 2:
            self.interval_ms = max(5, regs.from_u16(data))
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
        """A write arrived: the command watchdog starts again."""
        self.fed_at = self.world.t

    def watchdog(self, t: float) -> None:
        """Stop the motor when no write came for the timeout (world clock)."""
        if self.fed_at is None:
            self.fed_at = t
            return
        if self.timeout_ms and t - self.fed_at > self.timeout_ms / 1000.0 + 1e-9:
            self.fed_at = t  # re-armed: expire() is idempotent anyway
            if self.expire():
                self.watchdog_trips += 1
                self.status_extra |= regs.ST_TIMEOUT

    def expire(self) -> bool:  # pragma: no cover - abstract
        """Stop the motor; True when it was driven (worth ST_TIMEOUT)."""
        raise NotImplementedError

    def control_regs(self):
        values = super().control_regs()
        values[self.rm.timeout], values[self.rm.timeout + 1] = regs.u16(self.timeout_ms)
        return values

    def write(self, reg, data):
        self.feed()
        if reg == self.rm.keepalive:
            return
        if reg == self.rm.timeout:
            if len(data) >= 2:
                self.timeout_ms = regs.from_u16(data)
            return
        super().write(reg, data)

    def on_command(self, cmd):
        super().on_command(cmd)
        if cmd == regs.CMD_RESET:
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
            self.world.drive_enabled = bool(self.enable & regs.EN_MOTOR)

    def on_command(self, cmd):
        super().on_command(cmd)
        if cmd == regs.CMD_CLEAR_COUNT:
            self.count_origin = self.world.phi
            self.count = 0

    def on_write(self, reg, data):
        if reg == self.rm.speed and len(data) >= 2:
            sv = regs.from_u16(data)
            cur = speedval_sign(self.speed_set)
            new = speedval_sign(sv)
            if cur and new and cur != new and abs(self._wheel()) > 0.02:
                self.status_extra |= regs.ST_REFUSED  # as the real boards: ignored
                return
            self.status_extra &= ~(regs.ST_REFUSED | regs.ST_TIMEOUT)
            self.speed_set = sv
            self._command(speedval_unpack(sv))

    def _wheel(self) -> float:
        """The motor's speed, rad/s."""
        if self.drives_world:
            return self.world.w
        if not self.enable & regs.EN_MOTOR:
            return 0.0
        duty, val = speedval_unpack(self.speed_set)
        return val / 100.0 * float(self.world.sim["drive_noload_speed"]) if duty else val

    def data_block(self):
        w = self.world
        dk = self._ticks()
        if dk:
            if self.enable & regs.EN_ENCODER and self.drives_world:
                self.count = math.floor(angle_in_counts(w.phi - self.count_origin, self.cpr))
            self.meas = self._wheel()
            self.seq = (self.seq + dk) & 0xFF
        stalled = self.drives_world and w.stalled["drive"]
        st = regs.ST_READY | self.status_extra | (regs.ST_STALLED if stalled else 0)
        return list(regs.DC_BLOCK.pack(st, self.seq, self.speed_set,
                                       speedval_pack(False, self.meas), regs.to_i16(self.count)))


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
            w.abort_homing(regs.PHASE_CANCELLED)
            self.speed_set = 0x8000
            return True
        if w.steer_mode == "position":
            moving = abs(w.steer_target - w.steer) > 1e-3 or abs(w.steer_rate) > 1e-3
            w.steer_target = w.steer
            return moving
        if speedval_unpack(self.speed_set)[1] == 0.0:
            return False
        self.speed_set = 0x8000
        w.steer_cmd = (True, 0.0)
        return True

    def on_reset(self):
        self.speed_set = 0x8000
        self.count = 0
        self.position = 0.0
        self.world.abort_homing(regs.PHASE_IDLE)
        self.world.steer_mode = "speed"
        self.world.steer_cmd = (True, 0.0)
        self.world.homing_phase = regs.PHASE_IDLE

    def on_enable(self):
        self.world.steer_enabled = bool(self.enable & regs.EN_MOTOR)
        if not self.world.steer_enabled:
            self.world.abort_homing(regs.PHASE_CANCELLED)

    def on_command(self, cmd):
        super().on_command(cmd)
        if cmd == regs.CMD_HOME:
            if self.enable & regs.EN_MOTOR:
                self.world.start_homing()
                self.status_extra &= ~regs.ST_REFUSED
            else:
                self.status_extra |= regs.ST_REFUSED
        elif cmd == regs.CMD_ABORT_HOME:
            self.world.abort_homing(regs.PHASE_CANCELLED)

    def on_write(self, reg, data):
        w = self.world
        if w.steer_mode == "homing" and reg in (self.rm.speed, self.rm.target):
            self.status_extra |= regs.ST_REFUSED
            return
        if reg == self.rm.speed and len(data) >= 2:
            sv = regs.from_u16(data)
            cur = speedval_sign(self.speed_set) if w.steer_mode == "speed" else 0
            new = speedval_sign(sv)
            if cur and new and cur != new and abs(w.steer_rate) > 0.02:
                self.status_extra |= regs.ST_REFUSED
                return
            self.status_extra &= ~(regs.ST_REFUSED | regs.ST_TIMEOUT)
            self.speed_set = sv
            w.steer_mode = "speed"
            w.steer_cmd = speedval_unpack(sv)
        elif reg == self.rm.target and len(data) >= 4:
            if not w.homed:
                self.status_extra |= regs.ST_REFUSED
                return
            self.status_extra &= ~(regs.ST_REFUSED | regs.ST_TIMEOUT)
            w.steer_target = max(-w.limit, min(w.limit, mposval_unpack_rad(regs.from_u32(data))))
            w.steer_mode = "position"

    def data_block(self):
        w = self.world
        dk = self._ticks()
        if dk:
            if self.enable & regs.EN_ENCODER:
                self.count = angle_to_counts(wrap_angle(w.steer), self.cpr)
            self.position = w.steer - w.motor_origin
            self.seq = (self.seq + dk) & 0xFF
        st = regs.ST_READY | self.status_extra
        if w.stalled["steering"]:
            st |= regs.ST_STALLED
        if w.steer_mode == "homing":
            st |= regs.ST_HOMING
        if w.homed:
            st |= regs.ST_HOMED
        if w.steer_mode == "position":
            st |= regs.ST_POSITION_MODE
        return list(regs.PSERVO_BLOCK.pack(st, self.seq, self.speed_set,
                                           mposval_pack_rad(self.position),
                                           regs.to_i16(self.count), w.homing_phase))


class VirtualAccelBoard(VirtualBoard):
    """One-axis accelerometer: the world's forward acceleration plus noise."""
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
                self.mg = clamp_int(round(g * 1000.0), -32768, 32767)
            self.seq = (self.seq + dk) & 0xFF
        return list(regs.ACCEL_BLOCK.pack(regs.ST_READY | self.status_extra, self.seq, self.mg))


VIRTUAL_BOARDS = {
    "ultrasonic": VirtualUltrasonicBoard,
    "dc_motor": VirtualDcMotorBoard,
    "pservo_motor": VirtualPservoBoard,
    "accelerometer": VirtualAccelBoard,
}


def build_sim_bus(robot: dict, clock: Callable[[], float], seed: int | None = None,
                  name: str = "sim") -> SimBus:
    """A SimBus with one virtual board per described board. The bus owns its
    world; ``bus.simulation`` (:class:`~.simulation.SimControls`) reaches it."""
    world = SimWorld(robot, seed=seed, clock=clock)
    bus = SimBus(name=name, seed=world.rng.randrange(1 << 30), before_access=world.sync)
    sonar_poses: dict[str, dict[int, list[float]]] = {}
    for d in (robot["devices"].get("ultrasonic") or {}).values():
        sonar_poses.setdefault(d["board"], {})[int(d["channel"])] = [float(v) for v in d["pose"]]
    for name_, b in robot["boards"].items():
        rm = regs.RegisterMap.from_description(robot["register_maps"], b["type"])
        if b["type"] == "ultrasonic":
            vb = VirtualUltrasonicBoard(world, b, rm, sonar_poses.get(name_, {}))
        else:
            vb = VIRTUAL_BOARDS[b["type"]](world, b, rm)
            if b["type"] == "dc_motor":
                vb.drives_world = not any(isinstance(o, VirtualDcMotorBoard)
                                          for o in bus.attached())
        bus.attach(int(b["address"]), vb)
    bus.simulation = SimControls(bus, world, robot["boards"])
    return bus
