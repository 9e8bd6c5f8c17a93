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

"""What ``brak_markers`` draws, without ROS: a sonar's cone and the odometry trail.

Foxglove's and Lichtblick's 3D panels draw neither ``sensor_msgs/Range`` nor
``nav_msgs/Odometry``; both (and rviz) draw ``visualization_msgs/MarkerArray``
and ``nav_msgs/Path``. :mod:`bsal_ros.nodes.markers` turns the ranges and the
odometry into those with the geometry here:

* :func:`cone_length`: how long a sonar's cone is drawn, or None when it heard
  no echo (``+inf``, NaN, beyond ``max_range``: no cone at all);
* :func:`cone_fan`: the cone as a fan of triangles in the sonar's own frame
  (x along its axis, as the URDF's ``sonar_NN_link``);
* :class:`Trail`: the odometry poses kept for the path, one when the robot
  moved or turned enough since the last one kept, the newest ``size`` only.
"""

from __future__ import annotations

from collections import deque
import math

#: sonar topics ``sonar_00`` .. ``sonar_11``: Brak's twelve
SONAR_COUNT = 12
#: triangles of a cone's fan (its arc drawn in 8 straight pieces)
FAN_SEGMENTS = 8
#: a pose joins the trail when the robot moved more than this (m) ...
TRAIL_STEP_M = 0.05
#: ... or turned more than this (rad, 5 degrees) since the last one kept
TRAIL_TURN_RAD = math.radians(5.0)
#: poses the trail keeps (the oldest go first)
TRAIL_SIZE = 1000


def sonar_topic(ident: int) -> str:
    """The Range topic of sonar ``ident`` (the ultrasonic kind's ``sonar_{id:02d}``)."""
    return f"sonar_{ident:02d}"


def cone_length(range_m: float, min_range: float, max_range: float) -> float | None:
    """The length to draw a sonar's cone for a Range reading, or None: no echo.

    A reading in [min_range, max_range] is its own length. ``+inf`` (REP 117: no
    echo), NaN and anything beyond ``max_range`` are no echo: no cone. ``-inf``
    (REP 117: closer than it can measure) and readings under ``min_range`` draw
    the shortest cone, ``min_range``. With ``sonar_no_return: max_range`` the node
    reports no echo as ``max_range`` itself, which draws the full cone.
    """
    if math.isnan(range_m) or range_m > max_range:
        return None
    return max(range_m, min_range)


def cone_fan(length: float, field_of_view: float,
             segments: int = FAN_SEGMENTS) -> list[tuple[float, float, float]]:
    """A cone of ``length`` (m) and full opening ``field_of_view`` (rad) as a triangle
    list in the sonar's frame: ``segments`` triangles, each (apex, arc point, next arc
    point), the apex at the origin and the arc at ``length`` from it, about +x."""
    if length <= 0.0 or not math.isfinite(length):
        raise ValueError(f"cone length {length!r}: must be finite and positive")
    if not 0.0 < field_of_view < math.pi:
        raise ValueError(f"field of view {field_of_view!r} rad: must be in (0, pi)")
    if segments < 1:
        raise ValueError(f"{segments} segments: at least one")
    half = field_of_view / 2.0
    arc = [(length * math.cos(a), length * math.sin(a), 0.0)
           for a in (-half + field_of_view * k / segments for k in range(segments + 1))]
    points = []
    for k in range(segments):
        points += [(0.0, 0.0, 0.0), arc[k], arc[k + 1]]
    return points


class Trail:
    """The odometry poses a path shows: bounded, one every few cm or degrees.

    Poses are ``(x, y, yaw, item)``; ``item`` is whatever the caller keeps
    with each (the node: the pose as a PoseStamped, built only for a pose kept)."""

    def __init__(self, size: int = TRAIL_SIZE, step_m: float = TRAIL_STEP_M,
                 turn_rad: float = TRAIL_TURN_RAD):
        if size < 1:
            raise ValueError(f"trail size {size}: at least one pose")
        self.poses: deque = deque(maxlen=size)
        self.step_m = step_m
        self.turn_rad = turn_rad
        #: poses ever kept (the deque holds the newest ``size`` of them)
        self.kept = 0

    def wants(self, x: float, y: float, yaw: float) -> bool:
        """True when the pose would be kept: the first one, or the robot moved more
        than ``step_m`` or turned more than ``turn_rad`` since the last one kept."""
        if not self.poses:
            return True
        lx, ly, lyaw, _ = self.poses[-1]
        turned = abs(math.remainder(yaw - lyaw, math.tau))
        return math.hypot(x - lx, y - ly) > self.step_m or turned > self.turn_rad

    def offer(self, x: float, y: float, yaw: float, item=None) -> bool:
        """Keep the pose, with ``item`` beside it, if :meth:`wants` it; True when kept."""
        if not self.wants(x, y, yaw):
            return False
        self.poses.append((x, y, yaw, item))
        self.kept += 1
        return True

    def clear(self) -> None:
        """Forget every pose (the odometry was reset or changed frame)."""
        self.poses.clear()

    def __len__(self) -> int:
        """The number of poses held."""
        return len(self.poses)
