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
"""A device kind's own configuration (issue 41): the description keys and
node parameters a board type or device kind declares (its ``keys`` and
``params`` records) are validated, refused in one line, listed in
INTERFACES.md's generated tables and changed at run time exactly as the
package's own. The kind here is declared at test time (a tilt board that
borrows the accelerometer's classes); the installed cliff plugin shows the
same through real processes (test_kind_cliff.py)."""

import dataclasses
from dataclasses import dataclass
import logging
from types import SimpleNamespace
from typing import NamedTuple

import pytest

from bsal_ros.core.params import param, ParamRecord
from bsal_ros.hardware.description import DescriptionError, load_description
from bsal_ros.kinds import (board_type, is_builtin, kind, KindError, PolledBoardType,
                            register_board_type, register_kind, registry, unregister)
from bsal_ros.kinds.registry import declared_keys, declared_params
from bsal_ros.nodes.hardware_params import assemble
from bsal_ros.nodes.records import HardwareNodeParams, with_kind_params
from bsal_ros.protocol._items import Layout
from bsal_ros.tools import gen_docs
from param_consistency import DOC, doc_problems


@dataclass(frozen=True)
class TiltBoardKeys(ParamRecord):
    """Keys of a tilt board's entry."""

    tilt_limit_deg: float = param(30.0, "tilt (deg) beyond which the board flags a tip-over",
                                  1.0, 90.0)


@dataclass(frozen=True)
class TiltDeviceKeys(ParamRecord):
    """Keys of a tilt device's entry."""

    axis: str = param("x", "the axis the sensor measures", choices=("x", "y"))


@dataclass(frozen=True)
class TiltParams(ParamRecord):
    """Hardware node parameters of the tilt kind."""

    tilt_gain: float = param(1.0, "multiplies every tilt published", 0.0, 10.0, dynamic=True)


class TiltBoardType(PolledBoardType):
    """A polled board with a key of its own."""

    keys = TiltBoardKeys


def tilt_kind_class(**own):
    """The accelerometer's kind class with ``own`` class attributes (keys, params)."""
    return type("TiltKind", (type(kind("accelerometer")),), own)


TILT = {
    "register_maps": {"tilt": {"who_am_i_value": 0x44}},
    "boards": {"tilt": {"type": "tilt", "address": 0x44, "update_hz": 25.0, "poll_hz": 20.0,
                        "tilt_limit_deg": 45.0}},
    "devices": {"tilt": {"tilt_0": {"id": 0, "board": "tilt", "channel": 0, "axis": "y"}}},
}


#: sub-code -> (RCI layout, RDI layout): wire codes stay registered once made
LAYOUTS = {}


def layouts(sub):
    """The tilt's RCI DATA and RDI item layouts under sub-code ``sub``."""
    if sub not in LAYOUTS:
        data = NamedTuple(f"TiltData{sub:x}", [("tilt", float)])
        reading = NamedTuple(f"TiltReading{sub:x}", [("tilt", float), ("status", int)])
        LAYOUTS[sub] = (Layout("f", "named", data), Layout("fI", "named", reading))
    return LAYOUTS[sub]


def declare(name="tilt", params=TiltParams, keys=TiltDeviceKeys, sub=0x7E):
    """Register the tilt board type and kind (RCI and RDI sub-code ``sub``)."""
    acc = kind("accelerometer")
    register_board_type(TiltBoardType(name=name, board=board_type("accelerometer").board,
                                      sim_board=board_type("accelerometer").sim_board,
                                      carries=(name,), motor=False))
    rci_layout, rdi_layout = layouts(sub)
    fields = {f.name: getattr(acc, f.name) for f in dataclasses.fields(acc)}
    return register_kind(tilt_kind_class(keys=keys, params=params)(**{
        **fields, "name": name,
        "rci": dataclasses.replace(acc.rci, sub=sub, layout=rci_layout),
        "rdi": dataclasses.replace(acc.rdi, sub=sub, layout=rdi_layout)}))


@pytest.fixture
def builtin_only(monkeypatch):
    """The registry with Brak's own board types and kinds only (installed
    plugins set aside for one test)."""
    monkeypatch.setattr(registry, "_KINDS", {n: k for n, k in registry._KINDS.items()
                                             if is_builtin(k)})
    monkeypatch.setattr(registry, "_BOARD_TYPES", {
        n: bt for n, bt in registry._BOARD_TYPES.items()
        if (bt.board if isinstance(bt.board, str) else bt.board.__module__).startswith(
            "bsal_ros.")})


@pytest.fixture
def tilt():
    """The tilt board type and kind registered for one test."""
    try:
        yield declare()
    finally:
        unregister("tilt")


def test_a_kind_s_parameters_join_the_hardware_node_s_record(tilt):
    rec = with_kind_params()
    assert rec.__name__ == "HardwareNodeParams" and issubclass(rec, HardwareNodeParams)
    default, spec = rec.specs()["tilt_gain"]
    assert default == 1.0 and (spec.low, spec.high, spec.dynamic) == (0.0, 10.0, True)
    assert "tilt_gain" in rec.dynamic_names()
    assert ("device kind", "tilt", TiltParams) in declared_params()
    assert ("board type", "tilt", TiltBoardKeys) in declared_keys()
    # a run-time change as `ros2 param set` makes it: accepted in range, refused outside
    assert rec.check_change([SimpleNamespace(name="tilt_gain", value=2.5)]) == (
        "", {"tilt_gain": 2.5})
    assert rec.check_change([SimpleNamespace(name="tilt_gain", value=20.0)]) == (
        "tilt_gain must be in 0..10, not 20.0", {})


def test_without_a_kind_s_parameters_the_record_is_the_package_s_own(builtin_only):
    assert declared_params() == ()
    assert with_kind_params() is HardwareNodeParams


def test_its_description_keys_are_read_with_their_defaults_and_checked(tilt):
    robot = load_description(overrides={"robot": TILT})["robot"]
    assert TiltBoardKeys.of(robot["boards"]["tilt"]).tilt_limit_deg == 45.0
    assert TiltBoardKeys.of({}).tilt_limit_deg == 30.0
    assert TiltDeviceKeys.of(robot["devices"]["tilt"]["tilt_0"]).axis == "y"
    wrong = {**TILT, "boards": {"tilt": {**TILT["boards"]["tilt"], "tilt_limit_deg": 120.0}}}
    with pytest.raises(DescriptionError) as err:
        load_description(overrides={"robot": wrong})
    assert str(err.value) == "board tilt: tilt_limit_deg must be in 1..90, not 120.0"
    devices = {"tilt": {"tilt_0": {**TILT["devices"]["tilt"]["tilt_0"], "axis": "z"}}}
    with pytest.raises(DescriptionError) as err:
        load_description(overrides={"robot": {**TILT, "devices": devices}})
    assert str(err.value) == "tilt 0 (tilt_0): axis must be one of x, y, not 'z'"


def test_a_misspelt_key_of_its_own_is_named_with_the_closest(tilt):
    typo = {**TILT, "boards": {"tilt": {**TILT["boards"]["tilt"], "tilt_limit_dg": 45.0}}}
    with pytest.raises(DescriptionError, match=r"^robot\.boards\.tilt\.tilt_limit_dg: no such "
                       r"key in the robot description \(did you mean "
                       r"robot\.boards\.tilt\.tilt_limit_deg\?\)$"):
        load_description(overrides={"robot": typo})
    # another board type's entry may not carry it
    other = {"boards": {"front": {"tilt_limit_deg": 45.0}}}
    with pytest.raises(DescriptionError, match="robot.boards.front.tilt_limit_deg: no such key"):
        load_description(overrides={"robot": other})


def test_the_node_s_start_refuses_a_wrong_key_in_one_line(tilt):
    p = {"robot_description_file": "", "rate_scale": 1.0, "all_boards_hz": 0.0}
    flat = {"robot.boards.tilt.tilt_limit_deg": 0.5}
    robot = _flatten(TILT, "robot.")
    with pytest.raises(ValueError) as err:
        assemble(p, {**robot, **flat})
    assert str(err.value) == ("robot description: board tilt: tilt_limit_deg must be in "
                              "1..90, not 0.5")
    assert assemble(p, robot)["boards"]["tilt"]["tilt_limit_deg"] == 45.0


def _flatten(tree, prefix=""):
    out = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def test_its_rows_are_generated_into_interfaces_md_and_checked(tilt):
    rows = gen_docs.kind_parameters()
    assert ("| `tilt_gain` | 1.0 | 0..10, **run time** | multiplies every tilt published "
            "(device kind `tilt`) |") in rows.splitlines()
    keys = gen_docs.kind_description_keys().splitlines()
    assert ("| `robot.boards.<tilt board>` | `tilt_limit_deg` | 30.0 | 1..90 | tilt (deg) "
            "beyond which the board flags a tip-over |") in keys
    assert ("| `robot.devices.tilt.<name>` | `axis` | `x` | `x` / `y` | the axis the sensor "
            "measures |") in keys
    recs = {"hardware_node": with_kind_params()}
    shipped = DOC.read_text(encoding="utf-8")
    rendered = gen_docs.render(shipped, DOC.name)
    assert doc_problems(recs, rendered) == []
    # the shipped file (generated without it) has no row: named as for the package's own
    assert "docs/INTERFACES.md: hardware_node parameter `tilt_gain` has no row" in \
        doc_problems(recs, shipped)


def test_the_shipped_tables_name_no_kind_s_configuration(builtin_only):
    assert gen_docs.kind_parameters().startswith("(none:")
    assert gen_docs.kind_description_keys().startswith("(none:")


@dataclass(frozen=True)
class Undescribed(ParamRecord):
    """A parameter without a meaning."""

    tilt_gain: float = param(1.0, "", 0.0, 10.0)


def test_an_incomplete_record_is_refused_naming_the_kind_and_the_parameter():
    try:
        with pytest.raises(KindError) as err:
            declare(params=Undescribed)
    finally:
        unregister("tilt")
    assert str(err.value) == "device kind 'tilt': params: Undescribed.tilt_gain: no description"


def test_two_kinds_bringing_one_parameter_the_second_is_refused_naming_both(tilt):
    try:
        with pytest.raises(KindError) as err:
            declare(name="tilt2", sub=0x7D)
    finally:
        unregister("tilt2")
    assert str(err.value) == ("device kind 'tilt2': parameter 'tilt_gain' is already declared "
                              "by device kind 'tilt'")
    assert kind("tilt").params is TiltParams


@dataclass(frozen=True)
class Clashing(ParamRecord):
    """A parameter named as one of the hardware node's own."""

    rate_scale: float = param(1.0, "the tilt's rate", 0.0, 10.0)


def test_a_parameter_named_as_the_node_s_own_is_left_out_with_one_error(caplog):
    try:
        declare(params=Clashing)
        with caplog.at_level(logging.ERROR, logger="bsal_ros.kinds"):
            rec = with_kind_params()
    finally:
        unregister("tilt")
    assert rec.specs()["rate_scale"] == HardwareNodeParams.specs()["rate_scale"]
    assert [r.getMessage() for r in caplog.records] == [
        "device kind 'tilt': parameter 'rate_scale' left out: it is one of "
        "HardwareNodeParams's own"]
