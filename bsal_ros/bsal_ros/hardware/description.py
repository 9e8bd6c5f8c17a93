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

"""The robot description: BSAL's ``config.robot`` (001 2.4) as YAML.

``config/brak.yaml`` has two top-level sections:

* ``robot``         - boards (type, bus address, register map, rates),
  devices (class + id mapped to board + channel, sonar poses), geometry and
  the simulated world;
* ``hardware_node`` - the hardware node's ROS parameters (their defaults are
  declared once, in :mod:`.node_params`; the file may leave any of them out).

:data:`DEFAULT_DESCRIPTION` is the built-in description (config/brak.yaml's
``robot`` section equals it, a test keeps them equal), so the hardware layer
works without the file. A key of a ``robot`` section that nothing reads is a
:class:`DescriptionError` naming it and the closest valid key
(:mod:`.description_keys`).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import yaml

from .description_keys import unknown_keys
from .node_params import HardwareNodeParams
from ..kinds import board_type, board_types, device_classes, kind, KindError

# Board types, which device kinds each may carry and which of them drive a
# motor are declared once, by the kinds (bsal_ros/kinds, docs/EXTENDING.md).


def _sonar_ring(n=12, cx=0.25, cy=0.0, radius=0.28):
    out = {}
    for i in range(n):
        yaw = 2.0 * math.pi * i / n
        yaw = math.atan2(math.sin(yaw), math.cos(yaw))
        out[f"sonar_{i:02d}"] = {
            "id": i,
            "board": "sonar_a" if i < 6 else "sonar_b",
            "channel": i % 6,
            "pose": [round(cx + radius * math.cos(yaw), 4) + 0.0,
                     round(cy + radius * math.sin(yaw), 4) + 0.0, round(yaw, 6) + 0.0],
        }
    return out


DEFAULT_DESCRIPTION: dict[str, Any] = {
    "robot": {
        "name": "brak",
        "bus": {"retries": 2, "clock_hz": 100000},
        "register_maps": {
            # every board: WHO_AM_I, then the data block read in one transfer
            "common": {"who_am_i": 0x00, "data": 0x01, "enable": 0x40, "command": 0x41},
            "ultrasonic": {"who_am_i_value": 0x55, "interval": 0x44, "slots": 0x48},
            "dc_motor": {"who_am_i_value": 0x44, "speed": 0x42, "timeout": 0x4A,
                         "keepalive": 0x4C},
            "pservo_motor": {"who_am_i_value": 0x50, "speed": 0x42, "target": 0x46,
                             "timeout": 0x4A, "keepalive": 0x4C},
            "accelerometer": {"who_am_i_value": 0x41},
        },
        "boards": {
            "sonar_a": {"type": "ultrasonic", "address": 0x20, "channels": 6,
                        "interval_ms": 40, "slots": [0, 1, 2, 0, 1, 2], "poll_margin": 1.04},
            "sonar_b": {"type": "ultrasonic", "address": 0x21, "channels": 6,
                        "interval_ms": 40, "slots": [0, 1, 2, 0, 1, 2], "poll_margin": 1.04},
            # motor boards: command_timeout_ms = the board's own watchdog (0 = off)
            "drive": {"type": "dc_motor", "address": 0x30, "update_hz": 25.0, "poll_hz": 20.0,
                      "command_timeout_ms": 500},
            "steering": {"type": "pservo_motor", "address": 0x31, "update_hz": 25.0,
                         "poll_hz": 20.0, "command_timeout_ms": 500},
            "accel": {"type": "accelerometer", "address": 0x38, "update_hz": 25.0,
                      "poll_hz": 20.0},
        },
        "devices": {
            "ultrasonic": _sonar_ring(),
            "dc_motor": {"drive_motor": {"id": 0, "board": "drive", "channel": 0}},
            "relative_encoder": {"drive_encoder": {"id": 0, "board": "drive", "channel": 0}},
            "pservo_motor": {"steering_motor": {"id": 0, "board": "steering", "channel": 0}},
            "absolute_encoder": {"steering_encoder": {"id": 0, "board": "steering", "channel": 0}},
            "accelerometer": {"accelerometer": {"id": 0, "board": "accel", "channel": 0}},
        },
        "geometry": {
            "wheelbase": 0.50,             # front (drive/steer) wheel to rear axle, m
            "rear_track": 0.45,            # m (for display only)
            "wheel_radius": 0.10,          # drive wheel, m
            "drive_encoder_cpr": 2048,     # counts per drive-wheel revolution
            "steering_encoder_cpr": 4096,  # counts per steering revolution
            "steering_limit": 1.30,        # rad, each side
            "max_drive_speed": 2.047,      # drive wheel rad/s (speedval range)
            "max_steering_rate": 1.0,      # rad/s in position mode
            "sonar_min_range": 0.15,       # m
            "sonar_max_range": 5.0,        # m
            "sonar_field_of_view": 0.35,   # rad, full cone
            "accel_axis": "x",             # the single accelerometer axis
        },
        "sim": {
            "seed": 42,
            "room": [-5.0, -4.0, 5.0, 4.0],
            "obstacles": {
                "pillar": {"circle": [2.0, 1.0, 0.3]},
                "crate": {"box": [-3.0, -3.0, -2.2, -2.2]},
            },
            "initial_pose": [0.0, 0.0, 0.0],
            "initial_steering": 0.1,       # rad; the steering is not homed at power-on
            "motor_time_constant": 0.15,   # s, first-order lag of both motors
            "drive_noload_speed": 3.0,     # drive wheel rad/s at 100 % duty
            "steering_noload_rate": 1.0,   # rad/s at 100 % duty
            "homing_speed": 0.8,           # rad/s
            "homing_backoff": 0.1,         # rad
            "stall_time": 0.3,             # s without motion while driven = stall
            "sonar_noise": 0.01,           # m, standard deviation
            "sonar_rays": 5,               # rays per cone
            "accel_noise_g": 0.005,
            "encoder_slip": 0.0,           # relative slip of the drive wheel
            "physics_dt": 0.005,           # s
        },
    },
    # the hardware node's parameters: declared once, in node_params (defaults, ranges)
    "hardware_node": HardwareNodeParams.static_defaults(),
}


def deep_merge(base: dict, over: dict) -> dict:
    """Recursively merge ``over`` into a copy of ``base``; lists are replaced."""
    out = copy.deepcopy(base)
    for k, v in (over or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


class DescriptionError(ValueError):
    """The robot description is not valid (the message says where and why)."""

    pass


NODE_KEYS = ("/**", "/**/hardware_node", "hardware_node", "/hardware_node")


def params_section(data: dict, node_keys=NODE_KEYS) -> dict:
    """The merged ``ros__parameters`` of a ROS 2 params file that apply to the
    hardware node (``/**`` first, then the node-specific sections)."""
    out: dict = {}
    for key in node_keys:
        sec = data.get(key)
        if isinstance(sec, dict) and isinstance(sec.get("ros__parameters"), dict):
            out = deep_merge(out, sec["ros__parameters"])
    return out


def unflatten(flat: dict, prefix: str = "robot.") -> dict:
    """ROS parameter names ``robot.a.b`` -> nested ``{"a": {"b": ...}}``."""
    out: dict = {}
    for name, value in flat.items():
        if not name.startswith(prefix):
            continue
        parts = name[len(prefix):].split(".")
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return out


def load_description(path: str | None = None, overrides: dict | str | None = None) -> dict:
    """The description ``{"robot": ..., "hardware_node": ...}``: built-in
    defaults, then the file, then ``overrides``.

    The file is a ROS 2 params file (``config/brak.yaml``): the ``robot``
    subtree of the hardware node's ``ros__parameters`` is the robot
    description, the other keys are node parameters. ``overrides`` is a dict or
    YAML string shaped like the result, e.g. ``"robot: {sim: {homing_speed: 5.0}}"``.
    """
    desc = copy.deepcopy(DEFAULT_DESCRIPTION)
    if path:
        try:
            with open(path, "r", encoding="utf-8") as fh:
                data = yaml.safe_load(fh) or {}
        except OSError as exc:
            raise DescriptionError(f"cannot read {path}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            at = f" at line {where.line + 1}" if where else ""
            raise DescriptionError(f"{path} is not valid YAML{at}: "
                                   f"{getattr(exc, 'problem', exc)}") from None
        if not isinstance(data, dict):
            raise DescriptionError(f"{path}: top level must be a mapping")
        params = params_section(data)
        robot = params.pop("robot", {}) or {}
        desc = deep_merge(desc, {"robot": robot, "hardware_node": params})
    if overrides:
        if isinstance(overrides, str):
            overrides = yaml.safe_load(overrides) or {}
        desc = deep_merge(desc, overrides)
    validate(desc["robot"])
    return desc


#: the poll (= keep-alive) period must be at most this share of the command timeout,
#: so one lost keep-alive (a failed transfer and its retries) never trips the watchdog
WATCHDOG_REFRESH_SHARE = 0.5


def command_timeout_ms(board: dict) -> int:
    """A motor board's command timeout in ms (0 = watchdog off); 500 when not given."""
    return int(board.get("command_timeout_ms", 500))


def check_motor_watchdogs(robot: dict) -> None:
    """Refuse a motor board whose keep-alive (one per poll) would not beat its timeout."""
    for name, b in (robot.get("boards") or {}).items():
        if b.get("type") not in board_types() or not board_type(b["type"]).motor:
            continue
        raw = b.get("command_timeout_ms", 500)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw != int(raw) \
                or not 0 <= int(raw) <= 0xFFFF:
            raise DescriptionError(f"board {name}: command_timeout_ms {raw!r} must be an "
                                   f"integer 0..65535 (0 = watchdog off)")
        timeout = int(raw)
        poll_hz = float(b.get("poll_hz", 0) or 0)
        if timeout == 0 or poll_hz <= 0:
            continue
        period_ms = 1000.0 / poll_hz
        if period_ms > WATCHDOG_REFRESH_SHARE * timeout:
            raise DescriptionError(
                f"board {name}: polled at {poll_hz:g} Hz the keep-alive comes every "
                f"{period_ms:.0f} ms, which does not beat command_timeout_ms {timeout} "
                f"(the poll period must be at most {WATCHDOG_REFRESH_SHARE:g} x the timeout, "
                f"i.e. poll_hz >= {1000.0 / (WATCHDOG_REFRESH_SHARE * timeout):g}): raise "
                f"poll_hz, raise command_timeout_ms, or set it to 0 to switch the watchdog off")


def validate(robot: dict) -> None:
    """Raise :class:`DescriptionError` with a precise reason on a bad description."""
    unknown = unknown_keys(robot, DEFAULT_DESCRIPTION["robot"], board_types())
    if unknown:
        raise DescriptionError(unknown[0])
    boards = robot.get("boards") or {}
    addrs = {}
    for name, b in boards.items():
        t = b.get("type")
        try:
            bt = board_type(t)
        except KindError:
            raise DescriptionError(f"board {name}: unknown type {t!r} "
                                   f"(one of {', '.join(board_types())})") from None
        a = b.get("address")
        if not isinstance(a, int) or not 0x03 <= a <= 0x77:
            raise DescriptionError(f"board {name}: address {a!r} is not a 7-bit I2C address")
        if a in addrs:
            raise DescriptionError(f"board {name}: address {a:#04x} also used by {addrs[a]}")
        addrs[a] = name
        try:
            bt.validate(name, b)
        except (ValueError, TypeError) as exc:
            raise DescriptionError(f"board {name}: {exc}") from None
        why = bt.keys.refusal(b) if bt.keys is not None else ""
        if why:
            raise DescriptionError(f"board {name}: {why}")
    check_motor_watchdogs(robot)
    seen_channels = {}
    for cls, devs in (robot.get("devices") or {}).items():
        if cls not in device_classes():
            raise DescriptionError(f"unknown device class {cls!r} "
                                   f"(registered: {', '.join(device_classes())})")
        ids = set()
        if not isinstance(devs, dict):
            raise DescriptionError(f"devices.{cls} must map device names to entries")
        for dname, d in devs.items():
            i = d.get("id")
            if not isinstance(i, int) or not 0 <= i <= 0xFFFF:
                raise DescriptionError(f"{cls}: bad id {i!r}")
            if i in ids:
                raise DescriptionError(f"{cls} {i}: duplicate id")
            ids.add(i)
            bname = d.get("board")
            if bname not in boards:
                raise DescriptionError(f"{cls} {i}: unknown board {bname!r}")
            btype = boards[bname]["type"]
            if cls not in board_type(btype).carries:
                raise DescriptionError(f"{cls} {i}: board {bname} ({btype}) cannot carry it")
            ch = int(d.get("channel", 0))
            if "channels" in boards[bname] and not 0 <= ch < int(boards[bname]["channels"]):
                raise DescriptionError(f"{cls} {i}: channel {ch} not on board {bname}")
            key = (bname, cls, ch)
            if key in seen_channels:
                raise DescriptionError(f"{cls} {i}: channel {ch} of {bname} already used")
            seen_channels[key] = i
            own = kind(cls).keys
            why = own.refusal(d) if own is not None else ""
            if why:
                raise DescriptionError(f"{cls} {i} ({dname}): {why}")
            if cls == "ultrasonic" and len(d.get("pose", [])) != 3:
                raise DescriptionError(f"ultrasonic {i} ({dname}): pose must be [x, y, yaw]")
