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
* :func:`merged_description`: their descriptions in one robot description;
* :func:`run_surfaces`: every surface of the bridge's registries in a fresh
  interpreter that leaves chosen plugins' entry points out, each item with the
  plugin that owns it (:func:`surfaces`, what that interpreter prints).
"""

from __future__ import annotations

import copy
import importlib
import importlib.metadata
import json
import os
from pathlib import Path
import re
import subprocess
import sys
from typing import NamedTuple

from bsal_ros.kinds import (all_kinds, board_type, board_types, GROUP, loaded_plugins,
                            plugin_errors)
from bsal_ros.kinds.codes import BUILTIN_PREFIX

TEST_DIR = Path(__file__).resolve().parent
#: the owner of Brak's own kinds, board types and parameters
BRAK = "bsal_ros"
#: an item no registered declaration owns (a book code, a motor reading)
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


# ---------------------------------------------------------------- surfaces
def _rows(table: str, pattern: str) -> list[str]:
    return [m.group(1) for m in re.finditer(pattern, table, re.MULTILINE)]


def surfaces(descriptions: dict) -> dict:
    """Every surface of this process's registries: surface -> {item: owner}
    (entry-point name, :data:`BRAK` or :data:`NOBODY`), and under
    ``"descriptions"`` plugin name -> "ok" or why ``descriptions[name]`` (its
    DESCRIPTION) is refused. Imports the generators; no ROS is started."""
    from bsal_ros.hardware.description import DescriptionError, load_description
    from bsal_ros.kinds import KindError, RCI_SENSOR_CLASS, rdi_kind
    from bsal_ros.kinds.diagnostics_config import groups
    from bsal_ros.kinds.registry import declared_keys, declared_params
    from bsal_ros.nodes.records import NODE_RECORDS
    from bsal_ros.protocol import rci_tables
    from bsal_ros.protocol.wire_kinds import rdi_item_layouts
    from bsal_ros.tools import gen_cpp, gen_docs
    from bsal_ros.tools.wire_replay import readings
    from bsal_ros.wireshark import gen_lua

    loaded = loaded_plugins()
    kinds = {k.name: owner_of(k.device, loaded) for k in all_kinds()}
    types = {b: owner_of(board_type(b).board, loaded) for b in board_types()}
    upper = {name.upper(): owner for name, owner in kinds.items()}
    readers = {item.layout.cls.__name__: kinds[k.name] for k in all_kinds()
               for item in (k.rci, k.rdi) if item is not None and item.layout.cls is not None}
    decl_owner = {"board type": types, "device kind": kinds}
    params = {f: decl_owner[what][name] for what, name, rec in declared_params()
              for f in rec.specs()}
    keys = {f: decl_owner[what][name] for what, name, rec in declared_keys() for f in rec.specs()}
    rows = {**{f"parameter {n}": params.get(n, NOBODY)
               for n in _rows(gen_docs.kind_parameters(), r"^\| `([^`]+)` \|")},
            **{f"key {n}": keys.get(n, NOBODY)
               for n in _rows(gen_docs.kind_description_keys(), r"^\| `[^`]+` \| `([^`]+)` \|")}}
    out = {
        "device kinds": kinds,
        "board types": types,
        "RCI sensor sub-codes": {f"{s:#04x}": kinds.get(RCI_SENSOR_CLASS.get(s), NOBODY)
                                 for s in rci_tables.SENSOR_SUBS},
        "RDI sub-codes": {f"{c:#06x}/{s:#04x}": kinds.get(getattr(rdi_kind(c, s), "name", ""),
                                                          NOBODY)
                          for c, s in rdi_item_layouts()},
        "aggregator groups": {g: kinds[names[0]] for g, names in groups().items()},
        "reading types": {n: readers.get(n, NOBODY) for n in readings()},
        "topics": {k.topic.name: kinds[k.name] for k in all_kinds() if k.topic is not None},
        "hardware_node parameters": {n: params.get(n, BRAK)
                                     for n in NODE_RECORDS["hardware_node"].specs()},
        "description keys": keys,
        "INTERFACES.md rows": rows,
        "dissector sub-code names": {n: upper.get(n, NOBODY) for n in set(
            re.findall(r'= "([A-Z][A-Z0-9_]*)"', gen_lua.tables()))},
        "C++ sensor constants": {n: upper.get(n, NOBODY) for n in re.findall(
            r"#define RCI_SENSOR_(\w+)", gen_cpp.protocols_block())},
    }
    refused = {}
    for name, desc in descriptions.items():
        try:
            load_description(overrides={"robot": desc})
            refused[name] = "ok"
        except (DescriptionError, KindError) as exc:
            refused[name] = str(exc)
    return {"surfaces": out, "descriptions": refused}


#: run by :func:`run_surfaces`: the group's entry points, less those left out,
#: are all the loader sees (as if those packages were not installed)
_CHILD = """
import importlib.metadata as md, json, sys
args = json.loads(sys.argv[1])
real = md.entry_points
def entry_points(**kw):
    eps = real(**kw)
    if kw.get("group") != args["group"]:
        return eps
    return [ep for ep in eps if ep.name not in args["leave_out"]]
md.entry_points = entry_points
import plugin_kinds
print(json.dumps(plugin_kinds.surfaces(args["descriptions"])))
"""


def run_surfaces(leave_out: list[str], descriptions: dict) -> dict:
    """:func:`surfaces` of a fresh interpreter whose entry points of the group
    lack ``leave_out``; its stderr under ``"stderr"``.

    :raises AssertionError: the interpreter failed (its stderr).
    """
    args = json.dumps({"group": GROUP, "leave_out": list(leave_out),
                       "descriptions": descriptions})
    env = {k: v for k, v in os.environ.items() if k != "BSAL_ROS_KIND_PLUGINS"}
    run = subprocess.run([sys.executable, "-c", _CHILD, args], capture_output=True, text=True,
                         timeout=120, env=env, cwd=TEST_DIR)
    assert run.returncode == 0, run.stderr
    return {**json.loads(run.stdout.strip().splitlines()[-1]), "stderr": run.stderr}


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
