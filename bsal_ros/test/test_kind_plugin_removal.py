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
"""Removing either plugin's entry point removes only that one from every
surface (issue 41), for every installed device-kind plugin, none named here.

A fresh interpreter sees the group's entry points less the one left out (as
if its package were not installed; test/plugin_kinds.py) and lists every
surface the registries build, each item with the plugin that owns it: device
kinds, board types, RCI sensor and RDI sub-codes, aggregator groups, the wire
tools' reading types, topics, hardware_node parameters, description keys,
the INTERFACES.md rows generated from them, the dissector's sub-code names,
the C++ header's sensor constants. Leaving one plugin out must give exactly
the full lists less that plugin's items (Brak's and every other plugin's
kept, nothing of it left behind), and its DESCRIPTION is then refused while
every other's still loads.
"""

import pytest

from plugin_kinds import at_least_two, installed_plugins, run_surfaces

pytestmark = pytest.mark.timeout(300)

#: surfaces every sensor-kind plugin reaches (topics and configuration: when it declares them)
EVERY_PLUGIN_ON = ("device kinds", "board types", "RCI sensor sub-codes", "RDI sub-codes",
                   "aggregator groups", "reading types", "dissector sub-code names",
                   "C++ sensor constants")


@pytest.fixture(scope="module")
def plugins():
    """Every installed plugin, at least two, and their descriptions by name."""
    found = installed_plugins()
    at_least_two(found)
    return found, {p.name: p.description for p in found}


@pytest.fixture(scope="module")
def everything(plugins):
    """The surfaces with every installed plugin."""
    return run_surfaces([], plugins[1])


def owned(surface: dict, name: str) -> set:
    """The items of ``surface`` that plugin ``name`` owns."""
    return {item for item, owner in surface.items() if owner == name}


def test_with_every_plugin_installed_each_is_on_every_surface(plugins, everything):
    got = everything["surfaces"]
    assert everything["stderr"] == ""
    for p in plugins[0]:
        for surface in EVERY_PLUGIN_ON:
            assert owned(got[surface], p.name), f"plugin {p.name!r}: nothing on {surface}"
        assert owned(got["device kinds"], p.name) == {k.name for k in p.kinds}
        assert owned(got["board types"], p.name) == {bt.name for bt in p.board_types}
        assert owned(got["topics"], p.name) == {k.topic.name for k in p.kinds if k.topic}
        # its configuration: a generated INTERFACES.md row for each parameter and key it declares
        declared = {f"parameter {n}" for n in owned(got["hardware_node parameters"], p.name)} | \
            {f"key {n}" for n in owned(got["description keys"], p.name)}
        assert owned(got["INTERFACES.md rows"], p.name) == declared, p.name
        assert everything["descriptions"][p.name] == "ok", p.name


def test_leaving_out_one_plugin_removes_exactly_its_items_from_every_surface(plugins,
                                                                             everything):
    full = everything["surfaces"]
    for p in plugins[0]:
        without = run_surfaces([p.name], plugins[1])
        assert without["stderr"] == "", (p.name, without["stderr"])
        for surface, items in full.items():
            kept = {item: owner for item, owner in items.items() if owner != p.name}
            assert without["surfaces"][surface] == kept, (
                f"{p.name!r} left out: {surface} differ from the full list less its items")
        refused = without["descriptions"].pop(p.name)
        assert refused != "ok" and any(bt.name in refused for bt in p.board_types), refused
        assert set(without["descriptions"].values()) == {"ok"}, without["descriptions"]
