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

"""The joints of a URDF and the transform each gives, as robot_state_publisher
computes them: a fixed joint's is its origin; a revolute or continuous
joint's is its origin, then a rotation of the joint's position about its
axis; a prismatic joint's, its origin, then a shift along its axis. No ROS
here: quaternions are (x, y, z, w) tuples."""

from __future__ import annotations

from dataclasses import dataclass
import math
import xml.etree.ElementTree as ET

Vec = tuple[float, float, float]
Quat = tuple[float, float, float, float]


def quaternion_from_rpy(roll: float, pitch: float, yaw: float) -> Quat:
    """URDF's fixed-axis roll, pitch, yaw as a quaternion (x, y, z, w)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


def quaternion_multiply(a: Quat, b: Quat) -> Quat:
    """The rotation ``a`` then ``b`` (in ``a``'s frame): the Hamilton product a * b."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


def rotate(q: Quat, v: Vec) -> Vec:
    """``v`` rotated by the unit quaternion ``q``."""
    x, y, z, w = quaternion_multiply(quaternion_multiply(q, (*v, 0.0)),
                                     (-q[0], -q[1], -q[2], q[3]))
    return (x, y, z)


@dataclass(frozen=True)
class Joint:
    """One URDF joint: its kind, the links it joins, its origin and axis."""

    name: str
    kind: str
    parent: str
    child: str
    xyz: Vec = (0.0, 0.0, 0.0)
    rotation: Quat = (0.0, 0.0, 0.0, 1.0)
    axis: Vec = (1.0, 0.0, 0.0)

    @property
    def fixed(self) -> bool:
        """The joint never moves (its transform is static)."""
        return self.kind == "fixed"

    def transform(self, position: float = 0.0) -> tuple[Vec, Quat]:
        """(translation, rotation) of the child link in the parent's frame at ``position``."""
        if self.kind in ("revolute", "continuous"):
            half = position / 2.0
            n = math.sqrt(sum(c * c for c in self.axis)) or 1.0
            turn = tuple(c / n * math.sin(half) for c in self.axis) + (math.cos(half),)
            return self.xyz, quaternion_multiply(self.rotation, turn)
        if self.kind == "prismatic":
            shift = rotate(self.rotation, tuple(c * position for c in self.axis))
            return tuple(a + b for a, b in zip(self.xyz, shift)), self.rotation
        return self.xyz, self.rotation


def _floats(text: str | None, default: Vec) -> Vec:
    return tuple(float(v) for v in text.split()) if text else default


def joints_of(urdf: str) -> list[Joint]:
    """Every joint of the URDF text, in document order."""
    out = []
    for j in ET.fromstring(urdf).iter("joint"):
        origin, axis = j.find("origin"), j.find("axis")
        rpy = _floats(origin.get("rpy") if origin is not None else None, (0.0, 0.0, 0.0))
        out.append(Joint(
            name=j.get("name"), kind=j.get("type"), parent=j.find("parent").get("link"),
            child=j.find("child").get("link"),
            xyz=_floats(origin.get("xyz") if origin is not None else None, (0.0, 0.0, 0.0)),
            rotation=quaternion_from_rpy(*rpy),
            axis=_floats(axis.get("xyz") if axis is not None else None, (1.0, 0.0, 0.0))))
    return out
