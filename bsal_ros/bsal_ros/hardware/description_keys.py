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
"""Which keys a robot description may carry: a key nothing reads is an error.

A misspelt key of a ``robot`` section (``robot.geometry.wheel_radus``, in a
params file, a ``robot_description_file`` or a ``robot.*`` override) would
otherwise be silence: the built-in value stays. :func:`unknown_keys` names
every key no part of the hardware layer reads, with the closest valid key.
The valid keys are those of the built-in description, the optional ones
below (read with a default), the registered board types (register maps),
the register names of :class:`~.registers.RegisterMap`, and the keys a board
type or device kind declares for its entries (its ``keys`` record).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from .registers import RegisterMap
from ..core.params import closest
from ..kinds import board_type, kind, KindError

#: keys of the fixed sections read with a default, so the built-in description may omit them
OPTIONAL = {"geometry": ("rear_wheel_radius",)}
#: what a board entry may say (its type's own checks say what it must say)
BOARD_KEYS = ("type", "address", "channels", "interval_ms", "slots", "poll_margin",
              "update_hz", "poll_hz", "command_timeout_ms", "name")
#: what a device entry may say
DEVICE_KEYS = ("id", "board", "channel", "pose", "frame", "name")
OBSTACLE_KEYS = ("circle", "box")
REGISTER_NAMES = tuple(f.name for f in dataclasses.fields(RegisterMap))


def declared_keys(lookup, name) -> tuple[str, ...]:
    """The keys the board type or device kind ``lookup(name)`` declares for
    its entries (() : none, or no such one: refused elsewhere)."""
    try:
        rec = lookup(name).keys
    except (KindError, TypeError):
        return ()
    return tuple(f.name for f in dataclasses.fields(rec)) if rec is not None else ()


def _check(out: list, path: str, given, valid: Iterable[str]) -> None:
    if not isinstance(given, dict):
        return
    valid = tuple(valid)
    for key in given:
        if key not in valid:
            near = closest(str(key), valid)
            out.append(f"{path}.{key}: no such key in the robot description"
                       + (f" (did you mean {path}.{near}?)" if near else
                          f" (valid: {', '.join(valid)})"))


def unknown_keys(robot: dict, builtin: dict, board_types: Iterable[str]) -> list[str]:
    """One line per key of ``robot`` that nothing reads ([]: none); ``builtin``
    is the built-in description's ``robot`` section."""
    out: list[str] = []
    _check(out, "robot", robot, builtin)
    for section in ("bus", "geometry", "sim"):
        _check(out, f"robot.{section}", robot.get(section),
               tuple(builtin[section]) + OPTIONAL.get(section, ()))
    obstacles = (robot.get("sim") or {}).get("obstacles") if isinstance(robot.get("sim"),
                                                                        dict) else None
    for name, entry in (obstacles or {}).items() if isinstance(obstacles, dict) else ():
        _check(out, f"robot.sim.obstacles.{name}", entry, OBSTACLE_KEYS)
    maps = robot.get("register_maps")
    _check(out, "robot.register_maps", maps, ("common",) + tuple(board_types))
    for name, entry in (maps.items() if isinstance(maps, dict) else ()):
        _check(out, f"robot.register_maps.{name}", entry, REGISTER_NAMES)
    boards = robot.get("boards")
    for name, entry in (boards.items() if isinstance(boards, dict) else ()):
        own = declared_keys(board_type, entry.get("type")) if isinstance(entry, dict) else ()
        _check(out, f"robot.boards.{name}", entry, BOARD_KEYS + own)
    devices = robot.get("devices")
    for cls, devs in (devices.items() if isinstance(devices, dict) else ()):
        for name, entry in (devs.items() if isinstance(devs, dict) else ()):
            _check(out, f"robot.devices.{cls}.{name}", entry,
                   DEVICE_KEYS + declared_keys(kind, cls))
    return out
