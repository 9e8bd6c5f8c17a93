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
"""A device kind a plugin brought that no board of the robot description
carries says so at the hardware node's start (issue 52): one line per kind
naming it, its package and entry point, and the params-file YAML of a board,
nested as ``--config`` reads it (``/**/hardware_node: ros__parameters:
robot:``). Shown for every installed plugin, none named here (its module's
``DESCRIPTION`` gives the entries; without one, the declarations give a
skeleton); Brak's own kinds have no hint. The line in a live bridge:
test_kind_battery.py."""

import copy
import importlib.metadata

import pytest
import yaml

from bsal_ros.hardware.description import load_description
from bsal_ros.kinds import GROUP
from bsal_ros.kinds.board_hint import hint, hints, NODE_KEY, unboarded
from bsal_ros.kinds.plugins import plugin_of
from plugin_kinds import installed_plugins

PLUGIN_KINDS = [(p, k) for p in installed_plugins() for k in p.kinds]


def package_of(ep_name: str) -> str:
    (ep,) = [ep for ep in importlib.metadata.entry_points(group=GROUP) if ep.name == ep_name]
    return ep.dist.name


def yaml_of(line: str) -> dict:
    """The params-file YAML at the end of a hint line, read."""
    return yaml.safe_load(line[line.index(NODE_KEY):])


def test_every_plugin_kind_without_a_board_has_one_line_and_brak_s_have_none():
    assert PLUGIN_KINDS, "make setup installs the plugins under test/plugins"
    shipped = load_description()["robot"]
    assert sorted(k.name for k in unboarded(shipped)) == sorted(k.name for _, k in PLUGIN_KINDS)
    lines = hints(shipped)
    assert len(lines) == len(PLUGIN_KINDS) and all("\n" not in ln for ln in lines)
    # a robot that leaves one of Brak's own kinds out does so on purpose
    robot = copy.deepcopy(shipped)
    del robot["devices"]["accelerometer"]
    assert hints(robot) == lines


@pytest.mark.parametrize("plugin,k", PLUGIN_KINDS, ids=[k.name for _, k in PLUGIN_KINDS])
def test_the_line_names_the_kind_its_package_and_yaml_that_adds_a_board(plugin, k):
    line = hint(k)
    assert line.startswith(f"device kind {k.name!r} (package {package_of(plugin.name)}, "
                           f"entry point {plugin.name!r}: {plugin.module})"), line
    assert plugin_of(k.name)[0] == plugin.name
    doc = yaml_of(line)
    assert list(doc) == [NODE_KEY] and list(doc[NODE_KEY]) == ["ros__parameters"]
    robot = doc[NODE_KEY]["ros__parameters"]["robot"]
    assert robot["devices"] == {k.name: plugin.description["devices"][k.name]}
    # the YAML is a board of it: the description takes it, and the hint goes
    desc = load_description(overrides={"robot": robot})["robot"]
    assert desc["devices"][k.name] and k.name not in [u.name for u in unboarded(desc)]


def test_without_a_description_the_declarations_give_a_skeleton(monkeypatch):
    plugin, k = PLUGIN_KINDS[0]
    module = importlib.import_module(plugin.module)
    monkeypatch.delattr(module, "DESCRIPTION")
    robot = yaml_of(hint(k))[NODE_KEY]["ros__parameters"]["robot"]
    (board_name, board), = robot["boards"].items()
    assert k.name in plugin.board_types[0].carries and board["type"] == board_name
    assert board["address"] == "I2C_ADDRESS"
    assert robot["register_maps"] == {board_name: {"who_am_i_value": "WHO_AM_I"}}
    device = {"id": 0, "board": board_name, "channel": 0}
    assert robot["devices"] == {k.name: {f"{k.name}_0": device}}
    keys = plugin.board_types[0].keys
    assert keys is None or keys.static_defaults().items() <= board.items()


def test_a_plugin_whose_hint_fails_gets_a_line_saying_so_and_the_others_theirs(monkeypatch):
    plugin, k = PLUGIN_KINDS[0]
    module = importlib.import_module(plugin.module)
    monkeypatch.setattr(module, "DESCRIPTION", {"devices": {k.name: {"x": {}}}, "boards": 7})
    shipped = load_description()["robot"]
    lines = hints(shipped)
    assert len(lines) == len(PLUGIN_KINDS)
    (broken,) = [ln for ln in lines if ln.startswith(f"device kind {k.name!r} is loaded")]
    assert "no example board: AttributeError" in broken and "docs/EXTENDING.md" in broken
