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
"""Device kinds as plugins (bsal_ros.kinds.plugins, issue 30): every process
loads the entry-point group ``bsal_ros.device_kinds``, Brak's own kinds
included; a plugin that fails is left out with one error naming it and the
process goes on; removing a plugin's entry point removes its kind from every
surface of the bridge (tried in fresh interpreters, with and without it)."""

import importlib.metadata
import json
import logging
import os
from pathlib import Path
import subprocess
import sys
import textwrap

import pytest

from bsal_ros.core.device_classes import ALL_CLASSES
from bsal_ros.kinds import (board_types, device_classes, GROUP, load_plugins, loaded_plugins,
                            plugin_errors, registry_problems, unregister)
from bsal_ros.kinds import plugins
import bumper_kind

BUILTIN = {"ultrasonic", "dc_motor", "pservo_motor", "accelerometer"}


def test_brak_s_own_kinds_come_through_the_entry_point_group():
    dist = importlib.metadata.distribution("bsal_ros")
    ours = {ep.name: ep.value for ep in dist.entry_points if ep.group == GROUP}
    assert set(ours) == BUILTIN and all(v.startswith("bsal_ros.kinds.") for v in ours.values())
    assert {n: loaded_plugins()[n] for n in BUILTIN} == ours
    assert registry_problems() == []


def test_the_bumper_package_is_installed_with_its_entry_point():
    eps = {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUP)}
    assert eps["bumper"].value == "bsal_bumper" and eps["bumper"].dist.name == "bsal-bumper"
    assert bumper_kind.INSTALLED and "bumper" in device_classes()


def _ep(name, value):
    return importlib.metadata.EntryPoint(name=name, value=value, group=GROUP)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A folder on sys.path for plugin modules; the registry and the loader's
    records are restored afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_loaded", dict(plugins._loaded))
    monkeypatch.setattr(plugins, "_errors", dict(plugins._errors))
    kinds_before, types_before = set(device_classes()), set(board_types())
    yield tmp_path
    for name in (set(device_classes()) - kinds_before) | (set(board_types()) - types_before):
        unregister(name)


def test_a_plugin_that_fails_is_named_once_and_the_others_load(scratch, caplog):
    (scratch / "half_kind.py").write_text(textwrap.dedent("""
        import dataclasses
        from bsal_ros.kinds import board_type, kind, register_board_type, register_kind
        register_board_type(dataclasses.replace(board_type("accelerometer"), name="half",
                                                carries=("half",)))
        register_kind(dataclasses.replace(kind("accelerometer"), name="half", rci=None))
        """), encoding="utf-8")
    (scratch / "fine_kind.py").write_text(textwrap.dedent("""
        import dataclasses
        from bsal_ros.kinds import board_type, kind, register_board_type, register_kind
        register_board_type(dataclasses.replace(board_type("dc_motor"), name="fine",
                                                carries=("fine",)))
        register_kind(dataclasses.replace(kind("dc_motor"), name="fine"))
        """), encoding="utf-8")
    with caplog.at_level(logging.ERROR, logger="bsal_ros.kinds"):
        loaded = load_plugins([_ep("missing", "no_such_kind_module"), _ep("half", "half_kind"),
                               _ep("fine", "fine_kind")])
    assert "fine" in loaded and "fine" in device_classes()
    errors = plugin_errors()
    assert errors["missing"].startswith("device-kind plugin 'missing' (no_such_kind_module) "
                                        "not loaded: ModuleNotFoundError")
    # a sensor kind without its RCI item: refused, and the board type it had
    # registered first is taken back (no board type carries a kind that never came)
    assert "'half' (half_kind) not loaded: KindError" in errors["half"]
    assert "rci is None" in errors["half"]
    assert "half" not in board_types() and "half" not in device_classes()
    assert [r.getMessage() for r in caplog.records] == [errors["missing"], errors["half"]]
    load_plugins([_ep("missing", "no_such_kind_module")])      # not tried (nor logged) again
    assert len(caplog.records) == 2


def _surfaces(drop_bumper: bool, env_extra=None, keep="True") -> dict:
    """Every surface of a fresh interpreter, its bumper entry point left out or
    not (``keep``: which entry points it sees, an expression of ``e``)."""
    code = textwrap.dedent(f"""
        import importlib.metadata as md, json
        real = md.entry_points
        md.entry_points = lambda **kw: [e for e in real(**kw) if {keep}
                                        and not ({drop_bumper!r} and e.name == "bumper")]
        from bsal_ros.kinds import device_classes, board_types, RCI_SENSOR_CLASS, rdi_kind
        from bsal_ros.kinds.diagnostics_config import analyzers_yaml
        from bsal_ros.protocol import RdiDecoder
        from bsal_ros.protocol.constants import RdiCode
        from bsal_ros.protocol.errors import ProtocolError
        from bsal_ros.tools.wire_replay import readings
        from bsal_ros.hardware.description import load_description, DescriptionError
        from bsal_ros.kinds import KindError
        out = {{"classes": list(device_classes()), "board_types": list(board_types()),
               "rci_subs": sorted(RCI_SENSOR_CLASS),
               "rdi": rdi_kind(RdiCode.Sn, 0x10) is not None,
               "analyzers": analyzers_yaml(), "readings": sorted(readings())}}
        desc = {{"register_maps": {{"bumper": {{"who_am_i_value": 0x42}}}},
                "boards": {{"bumper": {{"type": "bumper", "address": 0x40, "update_hz": 25.0,
                                       "poll_hz": 20.0}}}},
                "devices": {{"bumper": {{"front_bumper": {{"id": 0, "board": "bumper",
                                                          "channel": 0}}}}}}}}
        try:
            load_description(overrides={{"robot": desc}})
            out["description"] = "ok"
        except (DescriptionError, KindError) as exc:
            out["description"] = str(exc)
        print(json.dumps(out))
        """)
    env = dict(os.environ, **(env_extra or {}))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env, cwd=Path(__file__).resolve().parents[1])
    assert run.returncode == 0, run.stderr
    return {**json.loads(run.stdout.strip().splitlines()[-1]), "stderr": run.stderr}


def test_removing_the_entry_point_removes_the_kind_from_every_surface():
    on, off = _surfaces(False), _surfaces(True)
    # Brak's six first, then the plugins' (the bumper among them, wherever
    # other installed plugins put it)
    assert on["classes"][:6] == list(ALL_CLASSES) and "bumper" in on["classes"][6:]
    assert "bumper" not in off["classes"]
    assert "bumper" in on["board_types"] and "bumper" not in off["board_types"]
    assert 0x10 in on["rci_subs"] and 0x10 not in off["rci_subs"]
    assert on["rdi"] and not off["rdi"]
    assert "path: Bumpers\n      contains: [': bumper']" in on["analyzers"]
    assert "bumper" not in off["analyzers"]
    assert {"BumperData", "BumperReading"} <= set(on["readings"])
    assert not {"BumperData", "BumperReading"} & set(off["readings"])
    assert on["description"] == "ok"
    assert "bumper" in off["description"] and "ultrasonic" in off["description"]
    assert on["stderr"] == off["stderr"] == ""


def test_a_broken_plugin_installed_beside_the_others_is_one_error_line(tmp_path):
    """An installed distribution (its dist-info on the path) whose kind module fails."""
    info = tmp_path / "broken_kind-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-kind\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\nbroken = broken_kind\n",
                                           encoding="utf-8")
    (tmp_path / "broken_kind.py").write_text("raise RuntimeError('no register map here')\n",
                                             encoding="utf-8")
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    out = _surfaces(False, {"PYTHONPATH": path})
    assert "bumper" in out["classes"] and out["description"] == "ok"
    assert out["stderr"].splitlines() == [
        "device-kind plugin 'broken' (broken_kind) not loaded: RuntimeError: no register map "
        "here"]


def test_a_source_tree_without_bsal_ros_s_entry_points_still_has_brak_s_kinds():
    """bsal_ros used without its metadata (no entry point of its own): Brak's
    kinds are imported from the package; a plugin's still come by entry point."""
    out = _surfaces(False, keep="not e.value.startswith('bsal_ros.')")
    assert out["classes"][:6] == ["ultrasonic", "relative_encoder", "absolute_encoder",
                                  "accelerometer", "dc_motor", "pservo_motor"]
    assert "bumper" in out["classes"][6:]
    assert out["description"] == "ok" and out["stderr"] == ""
