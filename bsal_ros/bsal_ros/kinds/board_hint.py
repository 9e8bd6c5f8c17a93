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
"""The start-up hint of a device kind a plugin brought that no board of the
robot description carries: one line naming the kind, its package and the
YAML a board of it needs, nested as a params file gives it to the hardware
node (``brak_bringup --config``, ``ros2 launch ... config:=``,
``--params-file``), so a newcomer who installed a plugin and sees no device
of it learns why and what to add.

The entries come from the plugin module's ``DESCRIPTION`` when it has one
(the robot-description entries of its boards, docs/EXTENDING.md), else from
the declarations, with the values only the board knows left for the reader
to fill in (``WHO_AM_I``, ``I2C_ADDRESS``). Brak's own kinds have no hint: a
robot that leaves one out does so on purpose. No ROS, no hardware imports here.
"""

from __future__ import annotations

import importlib

import yaml

from . import registry
from .base import DeviceKind
from .plugins import plugin_of

#: where a params file holds the hardware node's robot description
NODE_KEY = "/**/hardware_node"
#: integers written in hex, as the shipped description writes them
HEX_KEYS = frozenset({"address", "who_am_i_value"})


def unboarded(desc: dict) -> tuple[DeviceKind, ...]:
    """The device kinds of loaded plugins (not Brak's own) of which the robot
    description ``desc`` (its ``robot`` section) has no device."""
    devices = desc.get("devices") or {}
    return tuple(k for k in registry.all_kinds()
                 if not registry.is_builtin(k) and plugin_of(k.name) is not None
                 and not devices.get(k.name))


def _carriers(k: DeviceKind) -> list[str]:
    return [bt for bt in registry.board_types() if k.name in registry.board_type(bt).carries]


def board_entries(k: DeviceKind) -> dict:
    """The robot-description entries a board of ``k`` needs: its plugin
    module's ``DESCRIPTION`` narrowed to ``k`` (the register maps and boards of
    the types that carry it, its devices), else one board of the first type
    that carries it, its keys at their defaults."""
    _, value, _ = plugin_of(k.name)
    module = importlib.import_module(value.partition(":")[0])
    given = getattr(module, "DESCRIPTION", None)
    carriers = _carriers(k)
    if isinstance(given, dict) and (given.get("devices") or {}).get(k.name):
        boards = {n: b for n, b in (given.get("boards") or {}).items()
                  if b.get("type") in carriers}
        maps = {t: m for t, m in (given.get("register_maps") or {}).items() if t in carriers}
        return {"register_maps": maps, "boards": boards,
                "devices": {k.name: given["devices"][k.name]}}
    bt = carriers[0]
    keys = registry.board_type(bt).keys
    board = {"type": bt, "address": "I2C_ADDRESS",
             **(keys.static_defaults() if keys is not None else {})}
    return {"register_maps": {bt: {"who_am_i_value": "WHO_AM_I"}},
            "boards": {bt: board},
            "devices": {k.name: {f"{k.name}_0": {"id": 0, "board": bt, "channel": 0}}}}


def params_yaml(entries: dict) -> str:
    """``entries`` as one line of YAML under the hardware node's ``robot``
    parameter: ``/**/hardware_node: {ros__parameters: {robot: {...}}}``."""
    return f"{NODE_KEY}: {_flow({'ros__parameters': {'robot': entries}})}"


def _flow(value, key: str = "") -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v, str(k))}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if key in HEX_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:#04x}"
    # a scalar as YAML writes it (quoted when it would read back otherwise)
    return yaml.safe_dump([value], default_flow_style=True, width=1 << 16).strip()[1:-1]


def hint(k: DeviceKind) -> str:
    """The one line for ``k``: the kind, its package, the YAML of a board."""
    ep_name, value, package = plugin_of(k.name)
    source = f"package {package}, " if package else ""
    return (f"device kind {k.name!r} ({source}entry point {ep_name!r}: {value}) is loaded but "
            f"no board of the robot description carries it; a board of it in a params file "
            f"(brak_bringup --config FILE, ros2 launch bsal_ros brak.launch.py config:=FILE, "
            f"hardware_node --ros-args --params-file FILE): "
            f"{params_yaml(board_entries(k))}")


def hints(desc: dict) -> list[str]:
    """One line per kind of :func:`unboarded` (``desc``: the robot section).

    A plugin whose hint cannot be made (its module fails to import again, its
    ``DESCRIPTION`` is malformed, no board type carries the kind) gets a line
    saying so: a hint is help, never a reason for the node not to start.
    """
    lines = []
    for k in unboarded(desc):
        try:
            lines.append(hint(k))
        except Exception as exc:   # noqa: BLE001 - a plugin's own code, any failure
            lines.append(f"device kind {k.name!r} is loaded but no board of the robot "
                         f"description carries it (no example board: {type(exc).__name__}: "
                         f"{exc}; docs/EXTENDING.md says what a board needs)")
    return lines
