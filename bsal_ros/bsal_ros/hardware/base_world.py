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

"""The ``ros_base`` backend: Brak's boards, whose world is another robot (no ROS here).

The bus is a :class:`~.bus.SimBus` with the simulated Brak's virtual boards,
so the board and device objects, RCI, RDI and ``/diagnostics`` run the code
they run on the ``sim`` backend. Only the world differs: :class:`BaseWorld`
takes the drive wheel's travel, the sonar ranges and the acceleration from
what a ROS 2 base publishes, and turns the motor boards' commands into the
base's velocity. The steering is the bridge's own model (the simulated
pseudo-servo: rate, limits, homing); its angle reaches the base as the
Twist's angular velocity ``v sin(delta) / L`` (``v_base tan(delta) / L``).

The ROS side (``bsal_ros.nodes.ros_base_link``) feeds :class:`BaseLink`, the
plain interface the bus carries as ``bus.base``, and publishes what
:meth:`BaseLink.velocity_command` returns. A mapped topic silent past its
timeout makes its device not ready (``bus.device_fault``, read by every
device snapshot) and stops the motors, as a motor board's watchdog would.
"""

from __future__ import annotations

import copy
import math
from typing import Callable

from . import registers as regs
from .base_profile import BaseProfile, JOINT_STATE, LASER_SCAN
from .bus import SimBus
from .sim_boards import VirtualAccelBoard, VirtualUltrasonicBoard
from .sim_motors import VirtualDcMotorBoard, VirtualPservoBoard
from .sim_world import SimWorld
from ..core.units import G, range_to_delay_us, SPEED_OF_SOUND, wrap_angle

#: after a stop, zero is sent this many more times, then the base is left to others
ZERO_REPEATS = 5


class BaseWorld(SimWorld):
    """The world of the ``ros_base`` backend: the steering is modelled, the rest is
    measured on the base (fed by :class:`BaseLink`) and the drive is commanded."""

    def __init__(self, robot: dict, profile: BaseProfile, clock: Callable[[], float]):
        robot = copy.deepcopy(robot)
        steering = next((m for m in profile.mappings.values()
                         if m.device_class == "pservo_motor"), None)
        if steering is not None and "full_rate" in steering.options:
            robot["sim"]["steering_noload_rate"] = steering.options["full_rate"]
        super().__init__(robot, clock=clock)
        self.profile = profile
        self.full_speed = float(profile.command().options.get("full_speed", 0.5))
        self.measured_phi = 0.0       # drive wheel angle from the base's travel, rad
        self.measured_w = 0.0         # drive wheel speed from the base's speed, rad/s
        self.accel_g = 0.0
        self.sonar_m: dict[str, float] = {}    # device name -> range (inf: no return)
        self.motor_stops: list[Callable[[], bool]] = []   # the motor boards' expire()
        self.inputs_stale = True

    def _step(self, dt: float) -> None:
        self._step_steering(dt)
        self.phi = self.measured_phi
        self.w = self.measured_w

    def command(self) -> tuple[float, float]:
        """(vx, wz) of base_link the motor boards ask for now (zero while off or stale)."""
        if not self.drive_enabled or self.inputs_stale:
            return 0.0, 0.0
        duty, val = self.drive_cmd
        v = val / 100.0 * self.full_speed if duty else val * self.r
        return v * math.cos(self.steer), v * math.sin(self.steer) / self.L

    def sonar_delay(self, name: str) -> int:
        """The echo delay (us) of the sonar's last range; 0 = no echo."""
        d = self.sonar_m.get(name, math.inf)
        if math.isnan(d) or d > float(self.geo["sonar_max_range"]):
            return 0
        return range_to_delay_us(max(d, float(self.geo["sonar_min_range"])), SPEED_OF_SOUND)


class BaseUltrasonicBoard(VirtualUltrasonicBoard):
    """A sonar board whose channels read the base's ranges, at the board's rate."""

    @classmethod
    def from_description(cls, world, name, board, regmap, robot, bus):
        """The board ``name``; each channel knows its sonar's device name."""
        vb = super().from_description(world, name, board, regmap, robot, bus)
        vb.names = {int(d["channel"]): dname
                    for dname, d in (robot["devices"].get("ultrasonic") or {}).items()
                    if d["board"] == name}
        return vb

    def data_block(self):
        """Status, SEQ and the delays of the enabled channels' latest ranges."""
        dk = self._ticks()
        if dk:
            for ch, name in self.names.items():
                if self.enable & (1 << ch):
                    self.delays[ch] = self.world.sonar_delay(name)
            self.seq = (self.seq + dk) & 0xFF
        return regs.pack_ultrasonic(regs.ST_READY | self.status_extra, self.seq, self.delays)


class BaseAccelBoard(VirtualAccelBoard):
    """The accelerometer board reading the base's IMU."""

    def data_block(self):
        """Status, SEQ and the IMU's forward acceleration in milli-g, when enabled."""
        dk = self._ticks()
        if dk:
            if self.enable & 0x01:
                self.mg = max(-32768, min(32767, round(self.world.accel_g * 1000.0)))
            self.seq = (self.seq + dk) & 0xFF
        return list(regs.ACCEL_BLOCK.pack(regs.ST_READY | self.status_extra, self.seq, self.mg))


#: board type -> the virtual board of the ros_base backend
BOARDS = {"ultrasonic": BaseUltrasonicBoard, "accelerometer": BaseAccelBoard,
          "dc_motor": VirtualDcMotorBoard, "pservo_motor": VirtualPservoBoard}


class BaseLink:
    """What the ROS side feeds and reads; every method is thread-safe (the bus's lock).

    Feeds (``on_*``) are called from ROS callbacks with decoded numbers;
    :meth:`velocity_command` from the command timer; :meth:`take_notes` gives
    the log lines of topics going silent and coming back."""

    def __init__(self, bus: SimBus, world: BaseWorld, clock: Callable[[], float],
                 sonar_poses: dict[str, list[float]]):
        self.bus = bus
        self.world = world
        self.profile = world.profile
        self.clock = clock
        self.heard: dict[str, float] = {}      # topic -> clock time of its last message
        self.silent: set[str] = {m.topic for m in self.profile.inputs()}
        self.notes: list[str] = []
        self._odom_prev: tuple[float, float] | None = None
        self._distance = 0.0
        self._zeros_left = 0
        self.sent = 0
        self._scan_cones = self._cones(sonar_poses)

    # ---- feeds -------------------------------------------------------------
    def _heard(self, topic: str) -> None:
        self.heard[topic] = self.clock()

    def on_odometry(self, topic: str, x: float, y: float, yaw: float, vx: float) -> None:
        """An Odometry message: the signed distance travelled drives the encoder."""
        with self.bus.lock:
            if self._odom_prev is not None:
                dx, dy = x - self._odom_prev[0], y - self._odom_prev[1]
                forward = dx * math.cos(yaw) + dy * math.sin(yaw)
                self._distance += math.copysign(math.hypot(dx, dy), forward)
            self._odom_prev = (x, y)
            r = self.world.r
            self.world.measured_phi = self._distance / r
            self.world.measured_w = vx / r
            self._heard(topic)

    def on_joint_state(self, topic: str, names: list[str], positions: list[float],
                       velocities: list[float]) -> None:
        """A JointState message: the mapped wheel joint drives the encoder."""
        with self.bus.lock:
            for m in self.profile.inputs():
                if m.topic != topic or m.type != JOINT_STATE or m.options["joint"] not in names:
                    continue
                i = names.index(m.options["joint"])
                scale = m.options["wheel_radius"] / self.world.r
                if i < len(positions):
                    self.world.measured_phi = positions[i] * scale
                self.world.measured_w = velocities[i] * scale if i < len(velocities) else 0.0
                self._heard(topic)

    def on_range(self, topic: str, range_m: float) -> None:
        """A Range message of every sonar mapped to ``topic`` (+inf: no return, REP-117)."""
        with self.bus.lock:
            for m in self.profile.inputs():
                if m.topic == topic:
                    self.world.sonar_m[m.device] = -math.inf if range_m == -math.inf else range_m
            self._heard(topic)

    def on_scan(self, topic: str, angle_min: float, angle_increment: float, ranges,
                range_min: float, range_max: float) -> None:
        """A LaserScan: each sonar mapped to it reads the nearest return in its cone.

        Each sonar looks only at the rays that can reach its cone
        (:func:`rays_toward_cone`): all of them against all twelve cones
        (4,320 points for a 360-ray scan, at the lidar's rate) made a Python
        loop fall behind the scans on a loaded robot."""
        cones = self._scan_cones.get(topic, {})
        nearest = {name: math.inf for name in cones}
        n = len(ranges)
        for name, (pose, scanner, half) in cones.items():
            sx, sy, syaw = scanner
            for i in rays_toward_cone(pose, half, scanner, angle_min, angle_increment, n):
                r = ranges[i]
                if not range_min <= r <= range_max:
                    continue           # no return, or not a valid one
                a = syaw + angle_min + i * angle_increment
                dx, dy = sx + r * math.cos(a) - pose[0], sy + r * math.sin(a) - pose[1]
                if abs(wrap_angle(math.atan2(dy, dx) - pose[2])) <= half:
                    nearest[name] = min(nearest[name], math.hypot(dx, dy))
        with self.bus.lock:
            self.world.sonar_m.update(nearest)
            self._heard(topic)

    def on_imu(self, topic: str, accel_x: float) -> None:
        """An Imu message: the forward acceleration (m/s^2) in g."""
        with self.bus.lock:
            self.world.accel_g = accel_x / G
            self._heard(topic)

    def _cones(self, sonars: dict[str, list[float]]) -> dict[str, dict[str, tuple]]:
        """topic -> sonar -> (its pose, the scanner's pose, half its cone) of LaserScan maps."""
        half = float(self.world.geo["sonar_field_of_view"]) / 2.0
        out: dict[str, dict[str, tuple]] = {}
        for m in self.profile.inputs():
            if m.type == LASER_SCAN:
                scanner = tuple(m.options.get("scanner_pose", (0.0, 0.0, 0.0)))
                out.setdefault(m.topic, {})[m.device] = (sonars[m.device], scanner, half)
        return out

    # ---- staleness -------------------------------------------------------------
    def _age(self, topic: str, now: float) -> float | None:
        t = self.heard.get(topic)
        return None if t is None else now - t

    def check_inputs(self) -> None:
        """Mark silent topics (and back ones), stop the motors when one goes silent;
        run before every bus transaction, under the bus's lock."""
        now = self.clock()
        for m in self.profile.inputs():
            age = self._age(m.topic, now)
            silent = age is None or age > m.timeout
            if silent and m.topic not in self.silent:
                self.silent.add(m.topic)
                self.notes.append(f"base: topic {m.topic} silent for more than {m.timeout:g} s: "
                                  f"{self._devices_of(m.topic)} not ready, base commanded to zero")
            elif not silent and m.topic in self.silent:
                self.silent.discard(m.topic)
                self.notes.append(f"base: topic {m.topic} back: {self._devices_of(m.topic)} ready")
                if not self.silent:       # the line a person (or a script) waits for
                    heard = len({i.topic for i in self.profile.inputs()})
                    self.notes.append(f"base: every mapped input topic heard ({heard}): "
                                      f"every device ready")
        stale = bool(self.silent)
        if stale and not self.world.inputs_stale:
            for stop in self.world.motor_stops:
                stop()
        self.world.inputs_stale = stale

    def _devices_of(self, topic: str) -> str:
        return ", ".join(m.device for m in self.profile.inputs() if m.topic == topic)

    def device_fault(self, device_class: str, device_id: int) -> str | None:
        """Why the device is not ready (its topic is silent), or None."""
        m = self.profile.of_device(device_class, device_id)
        if m is None or not m.is_input:
            return None
        with self.bus.lock:
            age = self._age(m.topic, self.clock())
        if age is None:
            return f"waiting for topic {m.topic} ({m.type})"
        if age > m.timeout:
            return f"topic {m.topic} silent for {age:.1f} s (timeout {m.timeout:g} s)"
        return None

    def driver_of(self, device_class: str, device_id: int) -> str | None:
        """What serves the device: the profile and its topic (Player's driver name)."""
        m = self.profile.of_device(device_class, device_id)
        if m is None:
            return None
        source = "the bridge's steering model" if not m.topic else f"{m.topic} ({m.type})"
        return f"profile {self.profile.name}: {source}"

    # ---- out -----------------------------------------------------------------
    def velocity_command(self) -> tuple[float, float] | None:
        """(vx, wz) to publish now, or None: nothing to send (stopped, zero sent).

        Brings the world up to now first (the motor boards' watchdogs run), so
        a stalled poller still ends in zero."""
        with self.bus.lock:
            self.check_inputs()
            self.world.sync()
            vx, wz = self.world.command()
        if vx or wz:
            self._zeros_left = ZERO_REPEATS
        elif self._zeros_left > 0:
            self._zeros_left -= 1
        else:
            return None
        self.sent += 1
        return vx, wz

    def take_notes(self) -> list[str]:
        """The log lines since the last call."""
        with self.bus.lock:
            notes, self.notes = self.notes, []
        return notes


def rays_toward_cone(pose, half: float, scanner, angle_min: float, increment: float,
                     n: int) -> range | list[int]:
    """The indices of the scan's rays that can meet a sonar's cone (a superset).

    The cone is the wedge from the sonar's position, ``half`` either side of
    its axis. Seen from the scanner, a point ``apex + t u`` of it (t >= 0, u
    inside the wedge) lies between the apex's direction and u's, so the
    wedge's directions are the arc holding the apex's direction and both
    edges. An arc of half a turn or more (the scanner inside or behind the
    cone): every ray."""
    sx, sy, syaw = scanner
    axis = pose[2]
    to_apex = wrap_angle(math.atan2(pose[1] - sy, pose[0] - sx) - axis)
    lo, hi = min(-half, to_apex), max(half, to_apex)
    if hi - lo >= math.pi or increment <= 0.0:
        return range(n)
    # ray i points at syaw + angle_min + i increment (base_link); one ray of margin
    start = (axis + lo - syaw - angle_min) % (2.0 * math.pi)
    out: list[int] = []
    for s in (start, start - 2.0 * math.pi):
        first = max(0, math.ceil(s / increment) - 1)
        last = min(n - 1, math.floor((s + hi - lo) / increment) + 1)
        out.extend(range(first, last + 1))
    return out


def build_base_bus(robot: dict, clock: Callable[[], float], profile: BaseProfile) -> SimBus:
    """A SimBus named ``ros_base:<profile>`` whose virtual boards live in a
    :class:`BaseWorld`; ``bus.base`` is its :class:`BaseLink`,
    ``bus.device_fault`` the per-device readiness, ``bus.driver_of`` what
    serves each device (both read by the device and diagnostics code)."""
    world = BaseWorld(robot, profile, clock)
    bus = SimBus(name=f"ros_base:{profile.name}", seed=world.rng.randrange(1 << 30))
    poses = {sonar: [float(v) for v in d.get("pose", (0.0, 0.0, 0.0))]
             for sonar, d in (robot["devices"].get("ultrasonic") or {}).items()}
    link = BaseLink(bus, world, clock, poses)

    def before_access() -> None:
        link.check_inputs()
        world.sync()

    bus.before_access = before_access
    for bname, b in robot["boards"].items():
        rm = regs.RegisterMap.from_description(robot["register_maps"], b["type"])
        vcls = BOARDS[b["type"]]
        if hasattr(vcls, "from_description"):
            vb = vcls.from_description(world, bname, b, rm, robot, bus)
        else:
            vb = vcls(world, b, rm)
        if isinstance(vb, (VirtualDcMotorBoard, VirtualPservoBoard)):
            world.motor_stops.append(vb.expire)
        bus.attach(int(b["address"]), vb)
    bus.base = link
    bus.device_fault = link.device_fault
    bus.driver_of = link.driver_of
    return bus
