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
"""The installed device-kind plugins that are not Brak's own, as the tests see
them, with no plugin named (issue 41: a plugin added under test/plugins is
covered with no edit here).

* :func:`installed_plugins`: each one's entry point, its module's
  ``DESCRIPTION`` (the robot-description entries of its boards and devices),
  and the device kinds and board types it registered;
* :func:`merged_description`: their descriptions in one robot description,
  :func:`config_with`: a params file holding it.
"""

from __future__ import annotations

import copy
import importlib
import importlib.metadata
from pathlib import Path
from typing import NamedTuple

from bsal_ros.kinds import (all_kinds, board_type, board_types, GROUP, loaded_plugins,
                            plugin_errors)
from bsal_ros.kinds.codes import BUILTIN_PREFIX

TEST_DIR = Path(__file__).resolve().parent
#: the owner of Brak's own kinds, board types and parameters
BRAK = "bsal_ros"
#: what no plugin declared
NOBODY = "?"


class Plugin(NamedTuple):
    """One installed plugin: entry-point name, module, DESCRIPTION, and the
    declarations (:class:`~bsal_ros.kinds.DeviceKind`,
    :class:`~bsal_ros.kinds.BoardType`) it registered."""

    name: str
    module: str
    description: dict
    kinds: tuple
    board_types: tuple


def _module_of(ref) -> str:
    return ref.partition(":")[0] if isinstance(ref, str) else ref.__module__


def owner_of(ref, loaded: dict | None = None) -> str:
    """Who declared the class ``ref`` (a class or ``"module:Class"``): the
    entry-point name of the plugin whose module (or package) holds it,
    :data:`BRAK` for Brak's own, :data:`NOBODY` else."""
    module = _module_of(ref)
    if module.startswith(BUILTIN_PREFIX):
        return BRAK
    for name, value in (loaded_plugins() if loaded is None else loaded).items():
        own = value.partition(":")[0]
        if module == own or module.startswith(own + "."):
            return name
    return NOBODY


def installed_plugins() -> list[Plugin]:
    """Every entry point of the group ``bsal_ros.device_kinds`` that is not
    Brak's own, in name order.

    :raises AssertionError: a plugin that failed to load, or whose module has
        no ``DESCRIPTION`` dict (the tests need its boards and devices).
    """
    assert not plugin_errors(), f"device-kind plugins not loaded: {plugin_errors()}"
    eps = sorted((ep for ep in importlib.metadata.entry_points(group=GROUP)
                  if not ep.value.startswith(BUILTIN_PREFIX)), key=lambda ep: ep.name)
    out = []
    for ep in eps:
        module = importlib.import_module(ep.value.partition(":")[0])
        desc = getattr(module, "DESCRIPTION", None)
        assert isinstance(desc, dict), (
            f"device-kind plugin {ep.name!r} ({ep.value}): its module has no DESCRIPTION dict "
            f"(the robot-description entries of its boards and devices, docs/EXTENDING.md)")
        kinds = tuple(k for k in all_kinds() if owner_of(k.device) == ep.name)
        types = tuple(board_type(b) for b in board_types()
                      if owner_of(board_type(b).board) == ep.name)
        out.append(Plugin(ep.name, module.__name__, desc, kinds, types))
    return out


def at_least_two(plugins: list[Plugin]) -> None:
    """:raises AssertionError: fewer than two plugins, so no two-plugin proof."""
    assert len(plugins) >= 2, (
        f"the two-plugin proof needs at least two device-kind plugins installed beside Brak's "
        f"own kinds; found {len(plugins)}: {[p.name for p in plugins]} (make setup installs "
        f"every package under test/plugins/)")


def merged_description(plugins: list[Plugin]) -> dict:
    """One robot description holding every plugin's ``DESCRIPTION`` entries.

    :raises AssertionError: two plugins give the same entry (naming both).
    """
    merged: dict = {}
    given_by: dict = {}
    for p in plugins:
        for section, entries in p.description.items():
            for name, entry in entries.items():
                first = given_by.setdefault((section, name), p.name)
                assert first == p.name, (f"robot.{section}.{name} is given by the plugins "
                                         f"{first!r} and {p.name!r}: they cannot share a robot")
                merged.setdefault(section, {})[name] = copy.deepcopy(entry)
    return merged


def config_with(tmp_path: Path, description: dict, name: str = "brak_plugins.yaml") -> Path:
    """config/brak.yaml with ``description``'s entries added to its ``robot``
    section, written to ``tmp_path / name``; its path."""
    import yaml
    doc = yaml.safe_load((TEST_DIR.parent / "config" / "brak.yaml").read_text(encoding="utf-8"))
    robot = doc["/**/hardware_node"]["ros__parameters"]["robot"]
    for key, entries in description.items():
        robot.setdefault(key, {}).update(copy.deepcopy(entries))

    class Dumper(yaml.SafeDumper):
        """Quotes the strings ROS would read as floats (sonar_no_return: "inf")."""

    Dumper.add_representer(str, lambda d, v: d.represent_scalar(
        "tag:yaml.org,2002:str", v, style='"' if v.lower() in ("inf", "-inf", "nan") else None))
    path = tmp_path / name
    path.write_text(yaml.dump(doc, Dumper=Dumper), encoding="utf-8")
    return path
