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

"""Tricycle kinematics and odometry against the simulated ground truth."""
import math

from hypothesis import given, strategies as st
import pytest

from bsal_ros.hardware.kinematics import tricycle_fk, tricycle_ik, TricycleOdometry

from hardware_helpers import make_robot, run, run_until

L, R_, LIM, WMAX = 0.5, 0.1, 1.3, 2.047


@given(st.floats(-0.2, 0.2), st.floats(-0.3, 0.3))
def test_ik_then_fk_gives_back_the_twist_when_reachable(vx, wz):
    w, a = tricycle_ik(vx, wz, L, R_, LIM, WMAX)
    assert abs(a) <= LIM and abs(w) <= WMAX + 1e-9
    vx2, wz2 = tricycle_fk(w, a, L, R_)
    reachable = abs(vx) > 1e-3 and abs(math.atan(wz * L / vx)) < LIM and abs(
        vx / (R_ * math.cos(math.atan(wz * L / vx)))) <= WMAX
    if reachable:
        assert vx2 == pytest.approx(vx, abs=1e-9) and wz2 == pytest.approx(wz, abs=1e-9)
    if abs(vx) > 1e-3:
        # the path's curvature is kept even when the speed is scaled down
        assert abs(a) == LIM or wz2 * vx == pytest.approx(wz * vx2, abs=1e-9)


def test_ik_special_cases():
    assert tricycle_ik(0.0, 0.0, L, R_, LIM, WMAX) == (0.0, 0.0)
    w, a = tricycle_ik(0.0, 0.2, L, R_, LIM, WMAX)
    assert a == LIM and w > 0
    assert tricycle_ik(float("nan"), 0.1, L, R_, LIM, WMAX) == (0.0, 0.0)


def test_odometry_integrates_a_circle_and_grows_covariance():
    od = TricycleOdometry(L, R_, 0.02, 0.02)
    a = 0.4
    radius = L / math.tan(a)
    n = 1000
    total = 2 * math.pi * radius / math.cos(a) / R_       # wheel rad for one circle
    for _ in range(n):
        od.update(total / n, a, 0.01)
    assert od.odom.x == pytest.approx(0.0, abs=1e-3) and od.odom.y == pytest.approx(0.0, abs=1e-3)
    c = od.odom.cov6()
    assert c[0] > 0 and c[7] > 0 and c[35] > 0
    od.set_pose(1.0, 2.0, 0.5, [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.05]])
    od.update(1.0, 0.0, 0.01)
    assert od.pose.x == pytest.approx(1.0 + 0.1 * math.cos(0.5))
    assert od.pose.cov[0][0] > 0.1


def test_driving_a_known_arc_bounds_the_pose_error_against_ground_truth():
    robot, clock = make_robot()
    assert robot.start_homing(0).ok
    assert run_until(robot, clock, lambda: robot.homing_status(0)["done"])
    robot.homing_finished(0)
    robot.odometry.reset()
    gx, gy, gth = robot.bus.simulation.ground_truth()
    robot.odometry.set_pose(gx, gy, gth)
    # a left arc: 0.15 m/s, 0.2 rad/s for 12 s (about 1.8 m, 2.4 rad)
    run(robot, clock, 12.0, dt=0.01, each=lambda: robot.drive(0.15, 0.2))
    run(robot, clock, 1.5)   # cmd_vel timeout: stop
    x, y, th = robot.bus.simulation.ground_truth()
    p = robot.odometry.pose
    dist = robot.odometry.distance * math.cos(0)  # wheel travel
    assert dist > 1.5
    err = math.hypot(p.x - x, p.y - y)
    assert err < 0.02 * dist + 0.02, (err, dist)
    assert abs(math.remainder(p.th - th, 2 * math.pi)) < 0.03
    assert abs(th - gth) > 2.0    # it really turned
    # the reported covariance is of the right order (1-3 sigma of the error)
    sigma = math.sqrt(p.cov[0][0] + p.cov[1][1])
    assert sigma > 0.005


def test_odometry_with_wheel_slip_drifts_and_the_bound_catches_it():
    robot, clock = make_robot({"robot": {"sim": {"encoder_slip": 0.1, "initial_steering": 0.0}}})
    robot.start_homing(0)
    run_until(robot, clock, lambda: robot.homing_status(0)["done"])
    robot.odometry.reset()
    run(robot, clock, 8.0, each=lambda: robot.drive(0.15, 0.0))
    x, _, _ = robot.bus.simulation.ground_truth()
    assert robot.odometry.pose.x > x * 1.05     # slip: the encoder overestimates
