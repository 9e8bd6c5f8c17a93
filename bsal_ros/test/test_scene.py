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

"""bsal_ros/scene.py, the geometry brak_markers draws, without ROS: a sonar's cone
(its length for a Range reading, its fan of triangles) and the odometry trail."""

import math
import subprocess
import sys

import pytest

from bsal_ros.scene import (cone_fan, cone_length, FAN_SEGMENTS, sonar_topic, Trail,
                            TRAIL_STEP_M, TRAIL_TURN_RAD)

MIN, MAX = 0.15, 5.0


# ------------------------------------------------------------------ cone length
@pytest.mark.parametrize("reading,length", [
    (1.234, 1.234), (MIN, MIN), (MAX, MAX),          # measured: its own length
    (0.05, MIN), (-math.inf, MIN),                   # too close (REP 117 -inf): the shortest
    (math.inf, None), (math.nan, None), (MAX + 0.01, None),   # no echo: no cone
])
def test_a_reading_draws_its_own_length_and_no_echo_draws_none(reading, length):
    assert cone_length(reading, MIN, MAX) == length


def test_sonar_topics_are_the_ultrasonic_kind_s_names():
    from bsal_ros.kinds import kind
    assert kind("ultrasonic").topic.name.format(id=3) == sonar_topic(3) == "sonar_03"
    assert sonar_topic(11) == "sonar_11"


# -------------------------------------------------------------------- the fan
def test_the_fan_is_triangles_from_the_apex_to_an_arc_at_the_length():
    length, fov = 2.5, 0.35
    points = cone_fan(length, fov)
    assert len(points) == 3 * FAN_SEGMENTS
    triangles = [points[i:i + 3] for i in range(0, len(points), 3)]
    arc = []
    for apex, a, b in triangles:
        assert apex == (0.0, 0.0, 0.0)
        for x, y, z in (a, b):
            assert z == 0.0 and x > 0.0                      # in front of the sonar
            assert math.hypot(x, y) == pytest.approx(length, abs=1e-12)
        arc.append(math.atan2(a[1], a[0]))
        # neighbouring triangles share their edge: the fan has no gap
        assert math.atan2(b[1], b[0]) == pytest.approx(arc[-1] + fov / FAN_SEGMENTS)
    angles = arc + [math.atan2(triangles[-1][2][1], triangles[-1][2][0])]
    # symmetric about +x, as wide as the field of view
    assert angles[0] == pytest.approx(-fov / 2) and angles[-1] == pytest.approx(fov / 2)
    assert angles == sorted(angles)


def test_the_fan_scales_with_the_length_and_widens_with_the_field_of_view():
    short, long_ = cone_fan(1.0, 0.35), cone_fan(3.0, 0.35)
    for (xs, ys, _), (xl, yl, _) in zip(short, long_):
        assert (xl, yl) == pytest.approx((3.0 * xs, 3.0 * ys))
    narrow, wide = cone_fan(1.0, 0.2), cone_fan(1.0, 0.8)
    assert max(abs(y) for _, y, _ in wide) > max(abs(y) for _, y, _ in narrow)
    assert len(cone_fan(1.0, 0.35, segments=3)) == 9


@pytest.mark.parametrize("length,fov,segments", [
    (0.0, 0.35, 8), (-1.0, 0.35, 8), (math.inf, 0.35, 8), (math.nan, 0.35, 8),
    (1.0, 0.0, 8), (1.0, math.pi, 8), (1.0, math.nan, 8), (1.0, 0.35, 0)])
def test_a_fan_that_cannot_be_drawn_is_refused_with_the_reason(length, fov, segments):
    with pytest.raises(ValueError, match="cone length|field of view|segments"):
        cone_fan(length, fov, segments)


# ------------------------------------------------------------------ the trail
def test_the_trail_keeps_a_pose_every_few_cm_or_degrees():
    trail = Trail()
    assert trail.offer(0.0, 0.0, 0.0, "first")                      # the first always
    assert not trail.wants(TRAIL_STEP_M * 0.9, 0.0, 0.0)
    assert not trail.offer(TRAIL_STEP_M * 0.9, 0.0, 0.0)             # too close
    assert not trail.offer(0.0, 0.0, TRAIL_TURN_RAD * 0.9)           # turned too little
    assert trail.wants(0.0, TRAIL_STEP_M * 1.1, 0.0)                 # any direction
    assert trail.offer(TRAIL_STEP_M * 1.1, 0.0, 0.0, "moved")
    assert trail.offer(TRAIL_STEP_M * 1.1, 0.0, TRAIL_TURN_RAD * 1.1, "turned")
    assert [p[3] for p in trail.poses] == ["first", "moved", "turned"]
    assert len(trail) == 3 == trail.kept


def test_a_turn_across_pi_counts_as_the_small_turn_it_is():
    trail = Trail()
    trail.offer(0.0, 0.0, math.pi - 0.01)
    assert not trail.offer(0.0, 0.0, -math.pi + 0.01)                # 0.02 rad, not 2 pi


def test_the_trail_is_bounded_and_keeps_the_newest():
    trail = Trail(size=5)
    for i in range(12):
        assert trail.offer(i * 1.0, 0.0, 0.0, i)
    assert [p[3] for p in trail.poses] == [7, 8, 9, 10, 11]
    assert len(trail) == 5 and trail.kept == 12
    trail.clear()
    assert len(trail) == 0
    assert trail.offer(100.0, 0.0, 0.0)                               # first again


def test_a_trail_of_no_pose_is_refused():
    with pytest.raises(ValueError, match="at least one pose"):
        Trail(size=0)


def test_the_module_imports_no_ros():
    code = ("import sys, bsal_ros.scene; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('rclpy', 'visualization_msgs', "
            "'nav_msgs', 'sensor_msgs', 'geometry_msgs', 'std_msgs')]; print(bad); "
            "sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
