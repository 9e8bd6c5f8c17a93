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

"""Build Brak's URDF from the robot description dictionary.

Frames (REP-103 axes, REP-105 names):

* ``base_link`` (the hardware node's ``base_frame``): the middle of the rear
  axle, at axle height, x forward, z up. This is where ros2_controllers'
  tricycle controller and our odometry put the robot's reference point.
* ``steering_joint`` (revolute about z, limited to +-``steering_limit``) at
  ``(wheelbase, 0, 0)``, carrying ``steering_link``; ``drive_wheel_joint``
  (continuous about y) carrying ``drive_wheel_link``. The joint names are the
  ``JointState`` names the hardware node publishes.
* one fixed link per ultrasonic, named as the ``frame_id`` of its ``Range``
  messages, at the configured ``pose`` ``[x, y, yaw]`` in ``base_link``
  (z = 0: the transducers sit at axle height), x along the cone's axis;
* one fixed link per other device, named as the ``frame_id`` of its
  messages (Imu, DeviceState): the accelerometer, and the motors and
  encoders where their boards sit;
* the two passive rear wheels as fixed links: nothing measures them, and a
  movable joint without a ``JointState`` would leave robot_state_publisher
  without their transforms.

The text is deterministic (fixed order, fixed number format) so a test can
compare the committed file byte for byte.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math
import re
from typing import Any, Mapping
from xml.sax.saxutils import quoteattr

# Names shared with the hardware node (bsal_ros/nodes/hardware_node.py).
STEERING_JOINT = "steering_joint"
DRIVE_WHEEL_JOINT = "drive_wheel_joint"
STEERING_LINK = "steering_link"
DRIVE_WHEEL_LINK = "drive_wheel_link"
REAR_WHEELS = (("rear_left_wheel", 1.0), ("rear_right_wheel", -1.0))

HALF_PI = math.pi / 2.0


def sonar_link_name(sonar_id: int, entry: Mapping[str, Any] | None = None) -> str:
    """The frame of ultrasonic ``sonar_id``: its Range ``frame_id`` without the prefix.

    As the hardware node names it: the entry's ``frame``, else ``sonar_NN_link``.
    """
    return (entry or {}).get("frame") or f"sonar_{int(sonar_id):02d}_link"


def device_link_name(name: str, entry: Mapping[str, Any]) -> str:
    """The frame of a non-sonar device (its DeviceState / Imu ``frame_id``):
    the entry's ``frame``, else ``<device name>_link``."""
    return entry.get("frame") or f"{name}_link"


@dataclass(frozen=True)
class Frames:
    """The frame and joint names of the URDF, without the node's ``frame_prefix``."""

    base: str
    sonars: dict[int, str] = field(default_factory=dict)
    # (device class, id) -> link, for every device but the ultrasonics
    devices: dict[tuple[str, int], str] = field(default_factory=dict)
    steering_joint: str = STEERING_JOINT
    drive_wheel_joint: str = DRIVE_WHEEL_JOINT

    def accelerometers(self) -> list[str]:
        """The accelerometers' link names, by id."""
        return [v for (cls, _i), v in sorted(self.devices.items()) if cls == "accelerometer"]


def _sections(desc: Mapping[str, Any]) -> tuple[dict, dict]:
    """(robot, hardware_node) of a full description, or of a bare ``robot`` section."""
    if "robot" in desc:
        return desc["robot"], desc.get("hardware_node") or {}
    return dict(desc), {}


def _devices(robot: Mapping[str, Any], cls: str) -> list[tuple[str, dict]]:
    """[(name, entry)] of a device class, sorted by id (the description maps names to entries)."""
    devs = (robot.get("devices") or {}).get(cls) or {}
    items = devs.items() if isinstance(devs, Mapping) else (
        (d.get("name") or f'{cls}_{int(d["id"]):02d}', d) for d in devs)
    return sorted(((str(n), dict(e)) for n, e in items), key=lambda ne: int(ne[1]["id"]))


def frames_of(desc: Mapping[str, Any]) -> Frames:
    """The frame names a robot description gives: base, sonars, other devices."""
    robot, node = _sections(desc)
    sonars = {int(e["id"]): sonar_link_name(e["id"], e) for _n, e in _devices(robot, "ultrasonic")}
    devices = {}
    for cls in sorted(robot.get("devices") or {}):
        if cls != "ultrasonic":
            for name, e in _devices(robot, cls):
                devices[(cls, int(e["id"]))] = device_link_name(name, e)
    return Frames(base=str(node.get("base_frame", "base_link")), sonars=sonars, devices=devices)


def _joint_of(link: str) -> str:
    return (link[:-len("_link")] if link.endswith("_link") else link) + "_joint"


def _num(v: float) -> str:
    s = format(round(float(v), 9), ".9g")
    return "0" if s in ("-0", "0") else s


def _vec(*vals: float) -> str:
    return " ".join(_num(v) for v in vals)


def _origin(xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0)) -> str:
    return f'<origin xyz="{_vec(*xyz)}" rpy="{_vec(*rpy)}"/>'


class _Writer:

    def __init__(self):
        self.lines: list[str] = []

    def add(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def visual(self, depth, geometry, xyz=(0, 0, 0), rpy=(0, 0, 0), material=None,
               collision=False):
        for tag in ("visual", "collision") if collision else ("visual",):
            self.add(depth, f"<{tag}>")
            self.add(depth + 1, _origin(xyz, rpy))
            self.add(depth + 1, f"<geometry>{geometry}</geometry>")
            if material and tag == "visual":
                self.add(depth + 1, f'<material name="{material}"/>')
            self.add(depth, f"</{tag}>")

    def link(self, name, visuals=()):
        if not visuals:
            self.add(1, f"<link name={quoteattr(name)}/>")
            return
        self.add(1, f"<link name={quoteattr(name)}>")
        for v in visuals:
            self.visual(2, **v)
        self.add(1, "</link>")

    def joint(self, name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None,
              limit=None):
        self.add(1, f'<joint name={quoteattr(name)} type="{kind}">')
        self.add(2, f"<parent link={quoteattr(parent)}/>")
        self.add(2, f"<child link={quoteattr(child)}/>")
        self.add(2, _origin(xyz, rpy))
        if axis is not None:
            self.add(2, f'<axis xyz="{_vec(*axis)}"/>')
        if limit is not None:
            attrs = " ".join(f'{k}="{_num(v)}"' for k, v in limit)
            self.add(2, f"<limit {attrs}/>")
        self.add(1, "</joint>")


def _cylinder(radius, length):
    return f'<cylinder radius="{_num(radius)}" length="{_num(length)}"/>'


def _box(x, y, z):
    return f'<box size="{_vec(x, y, z)}"/>'


def build_urdf(desc: Mapping[str, Any], source: str = "config/brak.yaml") -> str:
    """URDF text for the description ``desc`` (as returned by ``load_description``).

    ``source`` only names the input in the header comment.
    """
    robot, _node = _sections(desc)
    frames = frames_of(desc)
    geo = robot["geometry"]
    wheelbase = float(geo["wheelbase"])
    radius = float(geo["wheel_radius"])
    rear_radius = float(geo.get("rear_wheel_radius", radius))
    track = float(geo["rear_track"])
    steer_limit = float(geo["steering_limit"])
    sonars = [e for _n, e in _devices(robot, "ultrasonic")]
    poses = [[float(v) for v in e["pose"]] for e in sonars]

    # The body: a disc inside the sonar ring (or around the wheelbase without sonars).
    if poses:
        cx = sum(p[0] for p in poses) / len(poses)
        cy = sum(p[1] for p in poses) / len(poses)
        ring = max(math.hypot(p[0] - cx, p[1] - cy) for p in poses)
    else:
        cx, cy, ring = wheelbase / 2.0, 0.0, wheelbase / 2.0 + radius
    body_radius = max(round(ring - 0.015, 3), 0.05)
    body_height = 0.12

    w = _Writer()
    w.lines.append('<?xml version="1.0"?>')
    w.lines.append("<!-- Generated by `python -m bsal_ros.description` from "
                   f"{source}: do not edit; regenerate instead. -->")
    w.lines.append(f'<robot name={quoteattr(str(robot.get("name", "brak")))}>')
    for name, rgba in (("body", "0.55 0.57 0.6 1"), ("tyre", "0.1 0.1 0.1 1"),
                       ("fork", "0.35 0.35 0.38 1"), ("sonar", "0.85 0.65 0.1 1"),
                       ("accelerometer", "0.8 0.15 0.15 1")):
        w.add(1, f'<material name="{name}"><color rgba="{rgba}"/></material>')

    w.add(1, "<!-- base_link: middle of the rear axle at axle height (REP-105, as the "
             "tricycle controller assumes) -->")
    w.link(frames.base, [{"geometry": _cylinder(body_radius, body_height),
                          "xyz": (cx, cy, body_height / 2.0 - 0.03), "material": "body",
                          "collision": True}])

    w.add(1, "<!-- passive rear wheels: not measured, so fixed -->")
    for name, side in REAR_WHEELS:
        w.link(f"{name}_link", [{"geometry": _cylinder(rear_radius, 0.04),
                                 "rpy": (HALF_PI, 0, 0), "material": "tyre", "collision": True}])
        w.joint(f"{name}_joint", "fixed", frames.base, f"{name}_link",
                xyz=(0, side * track / 2.0, rear_radius - radius))

    w.add(1, "<!-- steered and driven front wheel -->")
    w.link(STEERING_LINK, [{"geometry": _box(0.06, 0.08, 0.04),
                            "xyz": (0, 0, radius + 0.02), "material": "fork"}])
    w.joint(frames.steering_joint, "revolute", frames.base, STEERING_LINK,
            xyz=(wheelbase, 0, 0), axis=(0, 0, 1),
            limit=(("lower", -steer_limit), ("upper", steer_limit), ("effort", 10),
                   ("velocity", float(geo.get("max_steering_rate", 1.0)))))
    w.link(DRIVE_WHEEL_LINK, [{"geometry": _cylinder(radius, 0.05), "rpy": (HALF_PI, 0, 0),
                               "material": "tyre", "collision": True}])
    w.joint(frames.drive_wheel_joint, "continuous", STEERING_LINK, DRIVE_WHEEL_LINK,
            axis=(0, 1, 0),
            limit=(("effort", 10), ("velocity", float(geo.get("max_drive_speed", 2.0)))))

    w.add(1, "<!-- ultrasonics: configured pose [x, y, yaw] in base_link, x along the cone -->")
    for e, (x, y, yaw) in zip(sonars, poses):
        name = frames.sonars[int(e["id"])]
        w.link(name, [{"geometry": _box(0.02, 0.045, 0.035), "xyz": (-0.01, 0, 0),
                       "material": "sonar"}])
        w.joint(_joint_of(name), "fixed", frames.base, name, xyz=(x, y, 0), rpy=(0, 0, yaw))

    # The other devices, where their boards sit: the drive motor and its encoder
    # turn with the steering fork (at the wheel's axle), the steering motor and
    # its encoder sit on the body above the steering axis, the accelerometer at
    # its configured pose [x, y, z, roll, pitch, yaw] or else at the body's centre.
    boards = robot.get("boards") or {}
    placed = {
        "dc_motor": (STEERING_LINK, (0, 0, 0), (0, 0, 0)),
        "pservo_motor": (frames.base, (wheelbase, 0, radius + 0.08), (0, 0, 0)),
    }
    w.add(1, "<!-- motors, encoders, accelerometer: the frame_id of their messages -->")
    for (cls, dev_id), name in sorted(frames.devices.items()):
        entry = next(e for _n, e in _devices(robot, cls) if int(e["id"]) == dev_id)
        btype = (boards.get(entry.get("board")) or {}).get("type", cls)
        if "pose" in entry:
            pose = ([float(v) for v in entry["pose"]] + [0.0] * 6)[:6]
            parent, xyz, rpy = frames.base, pose[:3], pose[3:]
        elif btype in placed:
            parent, xyz, rpy = placed[btype]
        else:
            parent, xyz, rpy = frames.base, (cx, cy, 0), (0, 0, 0)
        visuals = []
        if cls == "accelerometer":
            visuals = [{"geometry": _box(0.03, 0.03, 0.01), "material": "accelerometer"}]
        w.link(name, visuals)
        w.joint(_joint_of(name), "fixed", parent, name, xyz=xyz, rpy=rpy)
    w.lines.append("</robot>")
    text = "\n".join(w.lines) + "\n"
    _check_unique(text)
    return text


def _check_unique(text: str) -> None:
    for tag in ("link", "joint"):
        names = re.findall(rf'<{tag} name="([^"]*)"', text)
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"robot description gives two {tag}s the same name: {dup}")
