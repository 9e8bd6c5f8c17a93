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
"""The parameter records are the one declaration: docs, config files and the
launch file agree with them (checks: test/param_consistency.py).

For each node, every parameter has a default, a description and a
consistent range; docs/INTERFACES.md's parameter table has one row per
declared parameter with its default and its range (or choices, or "run
time"), and no row the record does not declare; the shipped YAML files set
only declared parameters, to their declared defaults; the launch file's
overrides name declared parameters of their type and choices. The robot
description's node defaults are the record's.
"""
import pytest

from bsal_ros.hardware.description import DEFAULT_DESCRIPTION, load_description
from bsal_ros.hardware.node_params import HardwareNodeParams
from param_consistency import (declaration_problems, doc_problems, doc_text, LAUNCH,
                               launch_problems, launch_tables, records, shipped_params,
                               yaml_problems)


def test_every_record_is_whole():
    recs = records()
    assert set(recs) == {"hardware_node", "rci_gateway", "rdi_gateway", "foxglove_gateway"}
    assert declaration_problems(recs) == []


@pytest.mark.parametrize("node", ["hardware_node", "rci_gateway", "rdi_gateway",
                                  "foxglove_gateway"])
def test_the_interfaces_table_has_exactly_the_declared_parameters(node):
    recs = {node: records()[node]}
    assert doc_problems(recs, doc_text()) == []


def test_the_shipped_config_files_set_declared_parameters_to_their_defaults():
    files = shipped_params()
    assert files["config/brak.yaml"]["/**/hardware_node"]["ros__parameters"]["bus_backend"]
    assert yaml_problems(records(), files) == []


def test_the_launch_overrides_name_declared_parameters():
    source = LAUNCH.read_text(encoding="utf-8")
    tables = launch_tables(source)
    assert set(tables) == {"hardware_node", "rci_gateway", "rdi_gateway", "foxglove_gateway"}
    assert tables["hardware_node"]["bus_backend"] == ("bus_backend", "str",
                                                      ["", "sim", "smbus2", "ros_base"])
    assert launch_problems(records(), source) == []


def test_the_robot_description_takes_the_node_defaults_from_the_record():
    defaults = HardwareNodeParams.static_defaults()
    assert DEFAULT_DESCRIPTION["hardware_node"] == defaults
    assert set(defaults) == set(HardwareNodeParams.specs()) - {"auto_home"}
    assert load_description()["hardware_node"]["base_frame"] == "base_link"
