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

"""The robot description: config/brak.yaml equals the built-in defaults and
is a valid ROS params file shape; validation gives precise reasons."""
from pathlib import Path

import pytest
import yaml

from bsal_ros.hardware.description import (DEFAULT_DESCRIPTION, DescriptionError, load_description,
                                           params_section, unflatten)

ROOT = Path(__file__).resolve().parents[1]
BRAK = ROOT / "config" / "brak.yaml"


def test_brak_yaml_equals_the_built_in_description():
    data = yaml.safe_load(BRAK.read_text())
    params = params_section(data)
    robot = params.pop("robot")
    assert robot == DEFAULT_DESCRIPTION["robot"]
    # node parameters: any subset, at their declared defaults (a new parameter
    # needs no line here; test_parameter_declarations.py names a stray key)
    assert params.items() <= DEFAULT_DESCRIPTION["hardware_node"].items()
    assert load_description(str(BRAK)) == DEFAULT_DESCRIPTION


def _leaves(prefix, v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            _leaves(f"{prefix}.{k}" if prefix else k, x, out)
    else:
        out[prefix] = v
    return out


def test_brak_yaml_is_a_valid_ros_params_file_shape():
    """rcl accepts maps of maps, scalars and arrays of one scalar type only."""
    data = yaml.safe_load(BRAK.read_text())
    for key, sec in data.items():
        assert key.startswith("/") and set(sec) == {"ros__parameters"}
        for name, v in _leaves("", sec["ros__parameters"], {}).items():
            if isinstance(v, list):
                assert v, name
                assert len({type(x) for x in v}) == 1, f"{name}: mixed types {v}"
                assert not isinstance(v[0], (list, dict)), name
            else:
                assert isinstance(v, (bool, int, float, str)), name


def test_unflatten_parameter_names():
    flat = {"robot.sim.seed": 3, "robot.boards.drive.poll_hz": 10.0, "other": 1}
    assert unflatten(flat) == {"sim": {"seed": 3}, "boards": {"drive": {"poll_hz": 10.0}}}


@pytest.mark.parametrize("override,reason", [
    ({"boards": {"drive": {"type": "laser"}}}, "unknown type"),
    ({"boards": {"drive": {"address": 0x20}}}, "also used by"),
    ({"boards": {"drive": {"address": 0x90}}}, "7-bit"),
    ({"boards": {"sonar_a": {"slots": [0, 1]}}}, "one entry per channel"),
    ({"devices": {"ultrasonic": {"sonar_00": {"board": "nope"}}}}, "unknown board"),
    ({"devices": {"ultrasonic": {"sonar_00": {"board": "drive"}}}}, "cannot carry"),
    ({"devices": {"ultrasonic": {"sonar_00": {"channel": 9}}}}, "not on board"),
    ({"devices": {"ultrasonic": {"sonar_01": {"id": 0}}}}, "duplicate id"),
    ({"devices": {"ultrasonic": {"sonar_01": {"channel": 0}}}}, "already used"),
    ({"devices": {"laser": {}}}, "unknown device class"),
])
def test_validation_reasons(override, reason):
    with pytest.raises(DescriptionError, match=reason):
        load_description(overrides={"robot": override})


def test_overrides_as_yaml_text():
    d = load_description(overrides="robot: {sim: {homing_speed: 5.0}}")
    assert d["robot"]["sim"]["homing_speed"] == 5.0
