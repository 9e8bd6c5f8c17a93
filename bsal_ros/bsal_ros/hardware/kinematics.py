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

"""Tricycle kinematics and odometry (pure Python, SI units).

Convention as ros2_controllers' tricycle_controller: one front wheel that is
both steered (angle ``a``) and driven (angular speed ``w``, radius ``r``);
``base_link`` at the middle of the rear axle, ``L`` = wheelbase:

    v = w r;   x' = v cos(a) cos(th);   y' = v cos(a) sin(th);   th' = v sin(a) / L
"""

from __future__ import annotations

import math

from ..core.units import wrap_angle


def tricycle_ik(vx: float, wz: float, wheelbase: float, wheel_radius: float,
                steer_limit: float, max_wheel_speed: float) -> tuple[float, float]:
    """Body twist (vx m/s, wz rad/s) -> (drive wheel rad/s, steering angle rad).

    The steering angle is clamped to +-steer_limit; the wheel speed is scaled
    down to max_wheel_speed keeping the steering angle (so the path's
    curvature is kept, the robot only goes slower).
    """
    if not (math.isfinite(vx) and math.isfinite(wz)):
        return 0.0, 0.0
    if abs(vx) < 1e-9 and abs(wz) < 1e-9:
        return 0.0, 0.0
    if abs(vx) < 1e-9:
        a = math.copysign(steer_limit, wz)
        w = abs(wz) * wheelbase / (wheel_radius * math.sin(abs(a)))
    else:
        a = math.atan(wz * wheelbase / vx)
        a = max(-steer_limit, min(steer_limit, a))
        w = vx / (wheel_radius * math.cos(a))
    if abs(w) > max_wheel_speed:
        w = math.copysign(max_wheel_speed, w)
    return w, a


def steering_error_scale(error: float) -> float:
    """Factor on the wheel speed while the steering is ``error`` rad away from
    its target, as ros2_controllers' tricycle_controller does: full speed
    within 30 degrees, cos(error) up to 90 degrees, 1 % beyond."""
    error = abs(error)
    if error < math.pi / 6.0:
        return 1.0
    if error > math.pi / 2.0:
        return 0.01
    return math.cos(error)


def tricycle_fk(w: float, a: float, wheelbase: float, wheel_radius: float) -> tuple[float, float]:
    """(drive wheel rad/s, steering rad) -> body twist (vx, wz)."""
    v = w * wheel_radius
    return v * math.cos(a), v * math.sin(a) / wheelbase


def _mat_mul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def _transpose(A):
    return [[A[j][i] for j in range(3)] for i in range(3)]


class PoseCov:
    """A planar pose with a 3x3 covariance (x, y, yaw)."""

    def __init__(self, x=0.0, y=0.0, th=0.0, cov=None):
        self.x, self.y, self.th = x, y, th
        self.cov = [row[:] for row in cov] if cov else [[0.0] * 3 for _ in range(3)]

    def step(self, ds: float, dth: float, k_d: float, k_th: float) -> None:
        """Advance by ds along the heading and dth in yaw, and grow the covariance.

        Variance grows with distance: var(ds) = (k_d^2) |ds|, var(dth) =
        (k_th^2) |dth| + (k_d^2 / L-ish) folded into k_d by the caller.
        """
        mid = self.th + 0.5 * dth
        c, s = math.cos(mid), math.sin(mid)
        self.x += ds * c
        self.y += ds * s
        self.th = wrap_angle(self.th + dth)
        F = [[1.0, 0.0, -ds * s], [0.0, 1.0, ds * c], [0.0, 0.0, 1.0]]
        G = [[c, -0.5 * ds * s], [s, 0.5 * ds * c], [0.0, 1.0]]
        q_d = k_d * k_d * abs(ds)
        q_t = k_th * k_th * abs(dth) + 0.25 * k_d * k_d * abs(ds)
        P = _mat_mul(_mat_mul(F, self.cov), _transpose(F))
        for i in range(3):
            for j in range(3):
                P[i][j] += G[i][0] * q_d * G[j][0] + G[i][1] * q_t * G[j][1]
        self.cov = P

    def cov6(self) -> list[float]:
        """The 6x6 row-major covariance of ROS messages (x y z roll pitch yaw)."""
        out = [0.0] * 36
        idx = (0, 1, 5)
        for i in range(3):
            for j in range(3):
                out[idx[i] * 6 + idx[j]] = self.cov[i][j]
        # z, roll, pitch are not estimated (planar robot): large variance
        for k in (2, 3, 4):
            out[k * 6 + k] = 1e6
        return out


class TricycleOdometry:
    """Dead reckoning from drive-wheel angle increments and the steering angle.

    Keeps two estimates: ``odom`` (continuous, never jumps: REP-105 odom
    frame) and ``pose`` (the pose estimate in the map frame, which can be set
    from outside, seed 002; it then moves with the same increments).
    """

    def __init__(self, wheelbase: float, wheel_radius: float, k_d: float = 0.02,
                 k_th: float = 0.02):
        self.L = wheelbase
        self.r = wheel_radius
        self.k_d = k_d
        self.k_th = k_th
        self.odom = PoseCov()
        self.pose = PoseCov()
        self.vx = 0.0
        self.wz = 0.0
        self.distance = 0.0

    def update(self, d_wheel: float, steer: float, dt: float) -> None:
        """d_wheel: drive wheel rotation (rad) since the last update; dt: s."""
        s = d_wheel * self.r
        ds = s * math.cos(steer)
        dth = s * math.sin(steer) / self.L
        self.odom.step(ds, dth, self.k_d, self.k_th)
        self.pose.step(ds, dth, self.k_d, self.k_th)
        self.distance += abs(s)
        if dt > 0:
            self.vx, self.wz = ds / dt, dth / dt

    def set_pose(self, x: float, y: float, th: float, cov3=None) -> None:
        """Set the pose estimate (the odometry frame is not moved)."""
        self.pose = PoseCov(x, y, wrap_angle(th), cov3)

    def reset(self) -> None:
        """Back to the origin, velocities zero."""
        self.odom = PoseCov()
        self.pose = PoseCov()
        self.vx = self.wz = 0.0
        self.distance = 0.0
