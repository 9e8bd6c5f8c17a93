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

"""The simulated world of Brak: room, obstacles, tricycle physics, sonar rays.

A rectangular room with circle and box obstacles, a tricycle (front steered
drive wheel; ``base_link`` at the middle of the rear axle, as in
ros2_controllers' tricycle_controller), motors with first-order lag, a
steering that homes (seek the index at the + limit, back off, centre) and
aborts when the motor stalls, sonar cones ray-cast with seeded noise.

Time: the world integrates with a fixed step up to the time of each bus
transaction (:meth:`SimWorld.advance_to`), using the clock it is given, so
tests can drive a fake clock and get bit-identical runs.
"""

from __future__ import annotations

import math
import random
from typing import Callable

from . import registers as regs
from ..core.units import wrap_angle


class SimWorld:
    """The physical state of the simulated robot and its room."""

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
        self.homing_phase = regs.PHASE_IDLE
        self.homing_swept = 0.0
        self.homing_expected = 1.0
        self.stall = {"drive": False, "steering": False}
        self.stalled = {"drive": False, "steering": False}
        self._still = {"drive": 0.0, "steering": 0.0}
        # the motor boards' own command watchdogs, run on the world's clock every step
        self.watchdogs: list[Callable[[float], None]] = []

    # ---- world editing (sim_control) -------------------------------------
    def add_obstacle(self, name: str, values) -> None:
        """Add a circle [x, y, r] or a box [x0, y0, x1, y1] by name."""
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
        """Remove an obstacle; False if there was none of that name."""
        return self.obstacles.pop(name, None) is not None

    def teleport(self, x: float, y: float, th: float) -> None:
        """Put the robot at (x, y, yaw)."""
        self.x, self.y, self.th = float(x), float(y), wrap_angle(float(th))

    def pose(self) -> tuple[float, float, float]:
        """(x, y, yaw) of base_link in the map frame."""
        return self.x, self.y, self.th

    def twist(self) -> tuple[float, float]:
        """(vx, wz) of base_link at the last step."""
        v = self.w * self.r * (1.0 - float(self.sim["encoder_slip"]))
        return v * math.cos(self.steer), v * math.sin(self.steer) / self.L

    # ---- time ------------------------------------------------------------
    def sync(self) -> None:
        """Advance the world to its clock's now."""
        if self.clock is not None:
            self.advance_to(self.clock())

    def advance_to(self, t: float) -> None:
        """Integrate in fixed steps up to time t."""
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
        self._step_drive(dt)
        self._step_steering(dt)
        self._step_chassis(dt)

    def _step_drive(self, dt: float) -> None:
        sim = self.sim
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

    def _step_steering(self, dt: float) -> None:
        """The steering motor: speed or position mode, or homing, between the limits."""
        sim = self.sim
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

    def _step_chassis(self, dt: float) -> None:
        """Tricycle motion, exact for constant v and steer over dt."""
        sim = self.sim
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
            self.homing_phase = regs.PHASE_ABORTED
            self.steer_mode = "speed"
            self.steer_cmd = (True, 0.0)
            self.steer_rate = 0.0

    # ---- homing --------------------------------------------------------------
    def start_homing(self) -> bool:
        """Start the homing sequence; False if the steering is off."""
        if self.steer_mode == "homing":
            return False
        self.steer_mode = "homing"
        self.homing_phase = regs.PHASE_SEEKING
        self.homing_swept = 0.0
        self.stalled["steering"] = False
        self._still["steering"] = 0.0
        backoff = float(self.sim["homing_backoff"])
        self.homing_expected = max(1e-6, (self.limit - self.steer) + backoff
                                   + (self.limit - backoff))
        return True

    def abort_homing(self, phase: int = regs.PHASE_CANCELLED) -> None:
        """Stop homing, ending in ``phase``."""
        if self.steer_mode == "homing":
            self.steer_mode = "speed"
            self.steer_cmd = (True, 0.0)
            self.steer_rate = 0.0
            self.homing_phase = phase

    def _homing_rate(self) -> float:
        sp = float(self.sim["homing_speed"])
        return sp if self.homing_phase == regs.PHASE_SEEKING else -sp

    def _homing_advance(self) -> None:
        backoff = float(self.sim["homing_backoff"])
        if self.homing_phase == regs.PHASE_SEEKING and self.steer >= self.limit:
            self.homing_phase = regs.PHASE_BACKING_OFF
        elif self.homing_phase == regs.PHASE_BACKING_OFF and self.steer <= self.limit - backoff:
            self.homing_phase = regs.PHASE_CENTERING
        elif self.homing_phase == regs.PHASE_CENTERING and self.steer <= 0.0:
            self.steer = 0.0
            self.steer_rate = 0.0
            self.homed = True
            self.motor_origin = 0.0
            self.homing_phase = regs.PHASE_DONE
            self.steer_mode = "speed"
            self.steer_cmd = (True, 0.0)

    def homing_progress(self) -> float:
        """0..1 of the homing sweep done."""
        if self.homing_phase == regs.PHASE_DONE:
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
