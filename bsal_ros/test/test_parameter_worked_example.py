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
"""A new hardware-node parameter, end to end (docs/EXTENDING.md, "A new node parameter").

``tyre_wear`` is declared here, at test time, the way a new parameter is
declared in ``bsal_ros/hardware/node_params.py``: one field with its default,
range, description and read-only flag. Put in ``NODE_RECORDS`` (what the
node reads), it is declared by the node with its descriptor, validated,
read-only at run time, set from a params file and from a launch override; the
robot description's node defaults carry it; the wrong-value test generates
its cases; and the checks of docs/INTERFACES.md, the params files and the
launch file name it when its row is missing or a file names it wrongly. No
other file changes: config/brak.yaml need not list it.
"""
from dataclasses import dataclass
import importlib.util

import pytest
import yaml

from bsal_ros.core.params import param
from bsal_ros.hardware.node_params import HardwareNodeParams
from param_consistency import (DOC, doc_problems, LAUNCH, launch_problems, records,
                               shipped_params, yaml_problems)

pytest.importorskip("rclpy")
pytestmark = pytest.mark.ros


@dataclass(frozen=True)
class WithTyreWear(HardwareNodeParams):
    """The hardware node's record with the new parameter."""

    tyre_wear: float = param(0.0, "worn share of the drive tyre's tread (the worked example "
                             "of docs/EXTENDING.md)", 0.0, 0.5)


ROW = ("| `tyre_wear` | 0.0 | 0..0.5 | worn share of the drive tyre's tread |\n")


@pytest.fixture
def declared(monkeypatch):
    """The node layer reads the extended record."""
    from bsal_ros.nodes.records import NODE_RECORDS
    monkeypatch.setitem(NODE_RECORDS, "hardware_node", WithTyreWear)
    return WithTyreWear


def shipped():
    """The records without the example (as they are in the package)."""
    return {**records(), "hardware_node": HardwareNodeParams}


def node_with(context, **kw):
    from bsal_ros.nodes.hardware_node import HardwareNode
    return HardwareNode(context=context, start=False, auto_home=False, **kw)


def test_the_node_declares_it_with_its_descriptor(declared, ros_context):
    from rclpy.parameter import Parameter
    hw = node_with(ros_context)
    try:
        assert hw.p["tyre_wear"] == 0.0                    # the code that reads it
        d = hw.describe_parameter("tyre_wear")
        assert d.read_only and d.description.startswith("worn share")
        assert (d.floating_point_range[0].from_value, d.floating_point_range[0].to_value) \
            == (0.0, 0.5)
        result = hw.set_parameters([Parameter("tyre_wear", value=0.1)])[0]
        assert not result.successful and "read-only" in result.reason
    finally:
        hw.close()
        hw.destroy_node()


def test_a_wrong_value_is_refused_naming_it(declared, ros_context):
    with pytest.raises(ValueError, match=r"parameter tyre_wear must be in 0\.\.0\.5, not 0\.9"):
        node_with(ros_context, tyre_wear=0.9)


def test_set_from_a_params_file(declared, tmp_path):
    import rclpy
    import rclpy.context
    path = tmp_path / "brak_worn.yaml"
    path.write_text(yaml.safe_dump({"/**/hardware_node": {"ros__parameters": {
        "tyre_wear": 0.25}}}))
    context = rclpy.context.Context()
    rclpy.init(args=["--ros-args", "--params-file", str(path)], context=context)
    try:
        hw = node_with(context)
        assert hw.p["tyre_wear"] == 0.25
        hw.close()
        hw.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def test_set_from_a_launch_override(declared, ros_context, monkeypatch):
    """A row of the launch file's HARDWARE_OVERRIDES (the one more file a launch
    argument costs) turns ``tyre_wear:=0.3`` into the node's parameter."""
    pytest.importorskip("launch_ros")
    from launch import LaunchContext
    from rclpy.parameter import Parameter
    spec = importlib.util.spec_from_file_location("brak_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table = dict(module.HARDWARE_OVERRIDES, tyre_wear=("tyre_wear", float))
    context = LaunchContext()
    for argument in table:      # not given: "" (take it from the file)
        context.launch_configurations[argument] = ""
    context.launch_configurations["tyre_wear"] = "0.3"
    overrides = module._overrides(context, table)
    value = overrides["tyre_wear"].evaluate(context)
    hw = node_with(ros_context, parameter_overrides=[Parameter("tyre_wear", value=value)])
    try:
        assert hw.p["tyre_wear"] == 0.3
    finally:
        hw.close()
        hw.destroy_node()
    source = LAUNCH.read_text(encoding="utf-8")
    row = '    "i2c_bus": ("i2c_bus", int),\n'
    assert row in source
    with_row = source.replace(row, row + '    "tyre_wear": ("tyre_wear", float),\n')
    assert launch_problems(shipped(), with_row) == [
        "launch/brak.launch.py: argument tyre_wear sets `tyre_wear`, which hardware_node "
        "does not declare"]
    assert launch_problems(records(), with_row) == []
    wrong_type = with_row.replace('("tyre_wear", float)', '("tyre_wear", int)')
    assert launch_problems(records(), wrong_type) == [
        "launch/brak.launch.py: argument tyre_wear gives tyre_wear an int, declared float"]


def test_the_docs_check_names_its_missing_row(declared):
    recs = {"hardware_node": WithTyreWear}
    text = DOC.read_text(encoding="utf-8")
    assert doc_problems(recs, text) == [
        "docs/INTERFACES.md: hardware_node parameter `tyre_wear` has no row"]
    last = "| `cmd_vel_stamped` |"
    at = text.index("\n", text.index(last)) + 1
    assert doc_problems(recs, text[:at] + ROW + text[at:]) == []
    wrong = ROW.replace("0..0.5", "0..1")
    assert doc_problems(recs, text[:at] + wrong + text[at:]) == [
        "docs/INTERFACES.md: hardware_node `tyre_wear`: range '0..1', declared '0..0.5'"]


def test_the_params_file_check_names_it(declared):
    files = shipped_params()
    files["config/brak.yaml"]["/**/hardware_node"]["ros__parameters"]["tyre_wear"] = 0.0
    assert yaml_problems(shipped(), files) == [   # the shipped record does not read it
        "config/brak.yaml: hardware_node key `tyre_wear`: no parameter reads it"]
    assert yaml_problems(records(), files) == []
    files["config/brak.yaml"]["/**/hardware_node"]["ros__parameters"]["tyre_wear"] = 0.2
    assert yaml_problems(records(), files) == [
        "config/brak.yaml: hardware_node `tyre_wear` is 0.2, its declared default 0.0"]


def test_its_default_and_wrong_values_come_from_the_declaration(declared):
    from test_bad_parameters import generated_cases
    assert WithTyreWear.static_defaults()["tyre_wear"] == 0.0
    values = {argv[-1] for exe, name, argv, _ in generated_cases() if name == "tyre_wear"}
    assert values == {"tyre_wear:=abc", "tyre_wear:=true", "tyre_wear:=-1.0",
                      "tyre_wear:=1.5"}


@dataclass(frozen=True)
class WithLiveTyreWear(HardwareNodeParams):
    """The same parameter, changeable at run time: its declaration names the
    attribute a change goes to (no branch in the node or the robot)."""

    tyre_wear: float = param(0.0, "worn share of the drive tyre's tread (the worked example "
                             "of docs/EXTENDING.md)", 0.0, 0.5, dynamic="robot.tyre_wear")


def test_a_run_time_parameter_reaches_the_attribute_its_declaration_names(monkeypatch,
                                                                          ros_context):
    from rclpy.parameter import Parameter
    from bsal_ros.nodes.records import NODE_RECORDS
    monkeypatch.setitem(NODE_RECORDS, "hardware_node", WithLiveTyreWear)
    hw = node_with(ros_context)
    try:
        assert not hw.describe_parameter("tyre_wear").read_only
        assert hw.set_parameters([Parameter("tyre_wear", value=0.2)])[0].successful
        assert hw.robot.tyre_wear == 0.2 and hw.p["tyre_wear"] == 0.2
        # the shipped ones too: each goes where its declaration says
        assert all(r.successful for r in hw.set_parameters([
            Parameter("cmd_vel_timeout", value=1.5), Parameter("speed_of_sound", value=350.0)]))
        assert (hw.robot.cmd_timeout, hw.robot.speed_of_sound) == (1.5, 350.0)
    finally:
        hw.close()
        hw.destroy_node()
