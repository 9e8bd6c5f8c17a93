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
"""The wire codes of device-kind plugins (bsal_ros.kinds.codes, issue 41):
plugins take RCI and RDI sub-codes from 0x10-0x7f; of two plugins claiming
one code the first keeps it and the second is refused in one line naming
both and the code; a code outside the range is refused naming the range.
Every plugin here goes through the real loader (kinds.plugins), in this
process and, installed as distributions, in a fresh interpreter.

The wire tables keep a sub-code once a kind registered it (registry.unregister
leaves codes legal), so every test uses codes of its own."""

import importlib.metadata
import json
import logging
import os
from pathlib import Path
import subprocess
import sys
import textwrap

import pytest

from bsal_ros.kinds import (board_types, device_classes, GROUP, load_plugins, plugin_errors,
                            RCI_SENSOR_CLASS, rdi_kind, unregister)
from bsal_ros.kinds import codes, plugins
from bsal_ros.protocol.constants import RdiCode


def _ep(name, value):
    return importlib.metadata.EntryPoint(name=name, value=value, group=GROUP)


def plugin_module(kind: str, rci_sub: int, rdi_sub: int) -> str:
    """The source of a plugin module registering a board type and a sensor
    kind ``kind`` (the accelerometer's declaration with items of its own) with
    these RCI and RDI-Sn sub-codes."""
    return textwrap.dedent(f"""
        import dataclasses
        from typing import NamedTuple
        from bsal_ros.kinds import (board_type, kind, RciSensor, RdiItem,
                                    register_board_type, register_kind)
        from bsal_ros.protocol._items import Layout
        from bsal_ros.protocol.constants import RdiCode

        class Data(NamedTuple):
            value: int

        class Reading(NamedTuple):
            value: int
            status: int

        register_board_type(dataclasses.replace(board_type("accelerometer"), name={kind!r},
                                                carries=({kind!r},)))
        register_kind(dataclasses.replace(
            kind("accelerometer"), name={kind!r}, fields=(), extra_fields=("value",),
            data_fields=("value",),
            rci=RciSensor(sub={rci_sub}, layout=Layout("B", "named", Data),
                          fields=(("value", int),)),
            rdi=RdiItem(code=RdiCode.Sn, sub={rdi_sub}, layout=Layout("BI", "named", Reading))))
        """)


@pytest.fixture
def scratch(tmp_path, monkeypatch, caplog):
    """A folder on sys.path for plugin modules; the registry, the loader's
    records and the codes' holders are restored afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_loaded", dict(plugins._loaded))
    monkeypatch.setattr(plugins, "_errors", dict(plugins._errors))
    monkeypatch.setattr(codes, "_holders", dict(codes._holders))
    kinds_before, types_before = set(device_classes()), set(board_types())
    caplog.set_level(logging.ERROR, logger="bsal_ros.kinds")
    yield tmp_path
    for name in (set(device_classes()) - kinds_before) | (set(board_types()) - types_before):
        unregister(name)


def test_brak_s_own_kinds_hold_the_book_s_codes_outside_the_plugins_range():
    held = codes.holders()
    assert held[("RCI sensor", 0x83)] == ("ultrasonic", "bsal_ros.kinds.ultrasonic")
    assert held[("RDI-Sn", 0x01)] == ("ultrasonic", "bsal_ros.kinds.ultrasonic")
    assert 0x83 not in codes.PLUGIN_SUBS and 0x01 not in codes.PLUGIN_SUBS
    assert codes.PLUGIN_SUBS == range(0x10, 0x80)


#: the clashing protocol -> the first plugin's (RCI, RDI) codes, the second's
CLASHES = {"RCI sensor": ((0x7E, 0x7D), (0x7E, 0x7A)), "RDI-Sn": ((0x7C, 0x7B), (0x79, 0x7B))}


@pytest.mark.parametrize("clash", CLASHES)
def test_a_code_two_plugins_claim_stays_with_the_first_the_second_is_one_line(
        scratch, caplog, clash):
    (rci_1, rdi_1), (rci_2, rdi_2) = CLASHES[clash]
    code = rci_1 if clash == "RCI sensor" else rdi_1
    tag = "rci" if clash == "RCI sensor" else "rdi"
    one, two = f"first_{tag}", f"second_{tag}"       # kind, board type and module names
    (scratch / f"{one}.py").write_text(plugin_module(one, rci_1, rdi_1), encoding="utf-8")
    (scratch / f"{two}.py").write_text(plugin_module(two, rci_2, rdi_2), encoding="utf-8")
    loaded = load_plugins([_ep(f"p1_{tag}", one), _ep(f"p2_{tag}", two)])
    line = (f"device-kind plugin 'p2_{tag}' ({two}) not loaded: KindError: kind '{two}': "
            f"{clash} sub-code {code:#04x} is already held by device-kind plugin "
            f"'p1_{tag}' ({one}), which keeps it")
    assert plugin_errors()[f"p2_{tag}"] == line
    assert [r.getMessage() for r in caplog.records] == [line]
    # the first keeps its kind, its board type and both its codes
    assert f"p1_{tag}" in loaded and f"p2_{tag}" not in loaded
    assert one in device_classes() and one in board_types()
    assert RCI_SENSOR_CLASS[rci_1] == one and rdi_kind(RdiCode.Sn, rdi_1).name == one
    assert codes.holders()[(clash, code)] == (f"p1_{tag}", one)
    # the second is gone whole: no kind, no board type, neither of its codes
    assert two not in device_classes() and two not in board_types()
    assert RCI_SENSOR_CLASS.get(rci_2) != two
    assert getattr(rdi_kind(RdiCode.Sn, rdi_2), "name", None) != two


def test_a_code_outside_the_plugins_range_is_refused_naming_the_range(scratch, caplog):
    # 0x90: free as a sensor sub-code but in the book's block (its command codes)
    (scratch / "far_kind.py").write_text(plugin_module("far", 0x90, 0x78), encoding="utf-8")
    loaded = load_plugins([_ep("far", "far_kind")])
    line = ("device-kind plugin 'far' (far_kind) not loaded: KindError: kind 'far': "
            "RCI sensor sub-code 0x90 is outside the plugins' range 0x10-0x7f")
    assert "far" not in loaded and plugin_errors()["far"] == line
    assert [r.getMessage() for r in caplog.records] == [line]
    assert "far" not in device_classes() and "far" not in board_types()
    assert ("RCI sensor", 0x90) not in codes.holders()


def test_two_installed_plugins_claiming_one_code_are_one_error_line_in_a_fresh_process(
        tmp_path):
    """Two distributions (each a dist-info in a folder of the path), found by
    their entry points: they load after Brak's own kinds (theirs build on the
    accelerometer's) and by name, not in the path's order, so 'alpha' keeps
    the code; 'zeta' is refused in the one line the process prints."""
    folders = []
    for dist, kind in (("zeta", "zeta_kind"), ("alpha", "alpha_kind")):
        folder = tmp_path / dist
        info = folder / f"{kind}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {kind}\nVersion: 1.0\n",
                                       encoding="utf-8")
        (info / "entry_points.txt").write_text(f"[{GROUP}]\n{dist} = {kind}\n", encoding="utf-8")
        (folder / f"{kind}.py").write_text(plugin_module(dist, 0x77, 0x77), encoding="utf-8")
        folders.append(str(folder))
    code = textwrap.dedent("""
        import json
        from bsal_ros.kinds import device_classes, RCI_SENSOR_CLASS
        print(json.dumps({"classes": list(device_classes()), "rci": RCI_SENSOR_CLASS[0x77]}))
        """)
    path = os.pathsep.join(folders + [p for p in (os.environ.get("PYTHONPATH"),) if p])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, PYTHONPATH=path),
                         cwd=Path(__file__).resolve().parents[1])
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert run.stderr.splitlines() == [
        "device-kind plugin 'zeta' (zeta_kind) not loaded: KindError: kind 'zeta': RCI sensor "
        "sub-code 0x77 is already held by device-kind plugin 'alpha' (alpha_kind), which "
        "keeps it"]
    assert out["rci"] == "alpha" and "alpha" in out["classes"] and "zeta" not in out["classes"]
