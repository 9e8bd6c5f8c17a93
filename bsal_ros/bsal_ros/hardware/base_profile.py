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

"""A base profile: which ROS 2 topic serves each of Brak's devices (no ROS here).

One YAML file per robot, one entry per device of the robot description
(docs/BASES.md has the format)::

    name: twist_range
    devices:
      drive_motor: {topic: cmd_vel, type: geometry_msgs/msg/Twist, full_speed: 0.5}
      steering_motor: {topic: cmd_vel, type: geometry_msgs/msg/Twist}
      drive_encoder: {topic: odom, type: nav_msgs/msg/Odometry, timeout: 0.5}
      steering_encoder: {type: virtual}
      sonar_00: {topic: sonar_00, type: sensor_msgs/msg/Range, timeout: 0.5}
      accelerometer: {topic: imu, type: sensor_msgs/msg/Imu, timeout: 0.5}

:func:`load_profile` checks it against the description: an unknown key, a
device the description lacks or leaves unmapped, a type its class cannot
take: :class:`ProfileError` (a ValueError: the node refuses to start, exit 2)
with one line naming it. :func:`graph_conflicts` checks the types against a
graph's ``(topic, [types])`` list, which the ROS side reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..core.params import closest

TWIST = "geometry_msgs/msg/Twist"
TWIST_STAMPED = "geometry_msgs/msg/TwistStamped"
ODOMETRY = "nav_msgs/msg/Odometry"
JOINT_STATE = "sensor_msgs/msg/JointState"
RANGE = "sensor_msgs/msg/Range"
LASER_SCAN = "sensor_msgs/msg/LaserScan"
IMU = "sensor_msgs/msg/Imu"
#: the steering model of the bridge itself, no topic (docs/BASES.md)
VIRTUAL = "virtual"

COMMAND_TYPES = (TWIST, TWIST_STAMPED)
DEFAULT_TIMEOUT_S = 0.5
DEFAULT_RATE_HZ = 20.0

#: device class -> message type -> the keys an entry of that type may hold
#: (``type`` always; ``topic`` for every type but virtual)
KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "dc_motor": {TWIST: ("full_speed", "rate_hz"), TWIST_STAMPED: ("full_speed", "rate_hz")},
    "pservo_motor": {TWIST: ("full_rate",), TWIST_STAMPED: ("full_rate",)},
    "relative_encoder": {ODOMETRY: ("timeout",),
                         JOINT_STATE: ("timeout", "joint", "wheel_radius")},
    "absolute_encoder": {VIRTUAL: ()},
    "ultrasonic": {RANGE: ("timeout",), LASER_SCAN: ("timeout", "scanner_pose")},
    "accelerometer": {IMU: ("timeout",)},
}
REQUIRED = {"joint": (JOINT_STATE,), "wheel_radius": (JOINT_STATE,)}
TOP_KEYS = ("name", "devices")


class ProfileError(ValueError):
    """A profile that cannot serve the robot; the message is one line naming the fault."""


@dataclass(frozen=True)
class Mapping:
    """One device's entry: where its data comes from (or its command goes)."""

    device: str                 # the description's name (sonar_03)
    device_class: str
    device_id: int
    type: str
    topic: str = ""
    timeout: float = DEFAULT_TIMEOUT_S
    options: dict = field(default_factory=dict)   # the type's own keys (full_speed, joint...)

    @property
    def is_input(self) -> bool:
        """The device reads a topic (so the topic's silence makes it not ready)."""
        return self.type not in COMMAND_TYPES and self.type != VIRTUAL


@dataclass(frozen=True)
class BaseProfile:
    """A checked profile: its name, file and one :class:`Mapping` per device."""

    name: str
    source: str
    mappings: dict[str, Mapping]

    def command(self) -> Mapping:
        """The drive motor's entry: the base's velocity command topic and type."""
        return next(m for m in self.mappings.values() if m.device_class == "dc_motor")

    def inputs(self) -> list[Mapping]:
        """Every entry that reads a topic."""
        return [m for m in self.mappings.values() if m.is_input]

    def of_device(self, device_class: str, device_id: int) -> Mapping | None:
        """The entry of a (class, id), or None."""
        for m in self.mappings.values():
            if m.device_class == device_class and m.device_id == device_id:
                return m
        return None

    def topics(self) -> dict[str, str]:
        """topic -> message type of every mapped topic (the command included)."""
        return {m.topic: m.type for m in self.mappings.values() if m.topic}


def _fail(source: str, where: str, why: str) -> ProfileError:
    return ProfileError(f"base profile {source}: {where}: {why}")


def _unknown(source: str, where: str, key: str, allowed) -> ProfileError:
    hint = closest(key, allowed)
    return _fail(source, where, f"unknown key {key!r}"
                 + (f" (did you mean {hint!r}?)" if hint else "")
                 + f"; keys: {', '.join(allowed) or 'none'}")


def _number(source: str, where: str, key: str, value, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(source, where, f"{key} must be a number, not {value!r}")
    if positive and not value > 0:
        raise _fail(source, where, f"{key} must be > 0, not {value!r}")
    return float(value)


def _mapping(source: str, name: str, cls: str, dev_id: int, entry) -> Mapping:
    where = f"devices.{name}"
    if not isinstance(entry, dict):
        raise _fail(source, where, "must be a map with a type (and a topic)")
    kinds = KEYS.get(cls)
    if kinds is None:
        raise _fail(source, where, f"device class {cls} cannot be served by a ROS 2 base")
    mtype = entry.get("type")
    if mtype not in kinds:
        raise _fail(source, where, f"type {mtype!r} cannot serve a {cls}; "
                    f"types: {', '.join(kinds)}")
    allowed = ("type",) + (() if mtype == VIRTUAL else ("topic",)) + kinds[mtype]
    for key in entry:
        if key not in allowed:
            raise _unknown(source, where, str(key), allowed)
    for key, types in REQUIRED.items():
        if mtype in types and key not in entry:
            raise _fail(source, where, f"{mtype} needs {key}")
    topic = ""
    if mtype != VIRTUAL:
        topic = entry.get("topic")
        if not isinstance(topic, str) or not topic.strip("/"):
            raise _fail(source, where, "needs a topic name")
    options = {k: v for k, v in entry.items() if k not in ("type", "topic", "timeout")}
    for key in ("full_speed", "full_rate", "rate_hz", "wheel_radius"):
        if key in options:
            options[key] = _number(source, where, key, options[key])
    if "joint" in options and not isinstance(options["joint"], str):
        raise _fail(source, where, "joint must be a joint name")
    if "scanner_pose" in options:
        pose = options["scanner_pose"]
        if not (isinstance(pose, list) and len(pose) == 3):
            raise _fail(source, where, "scanner_pose must be [x, y, yaw]")
        options["scanner_pose"] = [_number(source, where, "scanner_pose", v, False)
                                   for v in pose]
    timeout = _number(source, where, "timeout", entry.get("timeout", DEFAULT_TIMEOUT_S))
    return Mapping(name, cls, dev_id, mtype, topic, timeout, options)


def check_profile(data, description: dict, source: str = "<profile>") -> BaseProfile:
    """The profile ``data`` (parsed YAML) checked against the robot description.

    Raises :class:`ProfileError` (one line) on an unknown key, a device the
    description does not have, a described device left unmapped, a type the
    device's class cannot take, or drive and steering on different topics."""
    if not isinstance(data, dict):
        raise _fail(source, "top level", "must be a map with name and devices")
    for key in data:
        if key not in TOP_KEYS:
            raise _unknown(source, "top level", str(key), TOP_KEYS)
    devices = data.get("devices")
    if not isinstance(devices, dict) or not devices:
        raise _fail(source, "devices", "must map each device of the robot to a topic")
    described = {name: (cls, int(d["id"])) for cls, devs in description["devices"].items()
                 for name, d in (devs or {}).items()}
    for name in devices:
        if name not in described:
            hint = closest(str(name), described)
            raise _fail(source, f"devices.{name}", "no such device in the robot description"
                        + (f" (did you mean {hint!r}?)" if hint else ""))
    missing = [name for name in described if name not in devices]
    if missing:
        raise _fail(source, "devices", f"device {missing[0]} is not mapped"
                    + (f" (nor {', '.join(missing[1:])})" if len(missing) > 1 else ""))
    mappings = {name: _mapping(source, name, *described[name], devices[name])
                for name in described}
    commands = {(m.topic, m.type) for m in mappings.values() if m.type in COMMAND_TYPES}
    if len(commands) > 1:
        raise _fail(source, "devices", "drive and steering motors must share one velocity "
                    f"command topic and type, not {sorted(commands)}")
    if not any(m.device_class == "dc_motor" for m in mappings.values()):
        raise _fail(source, "devices", "no drive motor: nothing to command the base with")
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str) or not name:
        raise _fail(source, "name", "must be a non-empty string")
    return BaseProfile(name, source, mappings)


def load_profile(path: str | Path, description: dict) -> BaseProfile:
    """Read and check the profile file ``path`` (:func:`check_profile`); a file
    that cannot be read or parsed is a :class:`ProfileError` too."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"base profile {path}: cannot read it: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        at = f" (line {line + 1})" if line is not None else ""
        raise ProfileError(f"base profile {path}: not YAML{at}") from None
    return check_profile(data, description, str(path))


def graph_conflicts(profile: BaseProfile, graph: list[tuple[str, list[str]]],
                    namespace: str = "/") -> list[str]:
    """One line per mapped topic that ``graph`` carries with another type than
    the profile's; a topic not on the graph is no conflict (it is waited for).
    Relative topic names are resolved in ``namespace``."""
    on_graph = dict(graph)
    lines = []
    for topic, mtype in profile.topics().items():
        full = topic if topic.startswith("/") else namespace.rstrip("/") + "/" + topic
        types = on_graph.get(full)
        if types and mtype not in types:
            lines.append(f"base profile {profile.source}: topic {full} carries "
                         f"{', '.join(types)}, the profile says {mtype}")
    return lines
