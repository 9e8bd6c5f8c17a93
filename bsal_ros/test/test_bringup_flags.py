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
"""brak_bringup's flags come from the launch file's override tables, each
with its parameter's declaration (type, choices, description): the two front
doors take the same overrides, users_file included."""

import pytest

from bsal_ros.description.launch_args import flag
from bsal_ros.nodes import bringup
from bsal_ros.nodes.records import NODE_RECORDS
from param_consistency import LAUNCH, launch_tables


def test_every_launch_override_is_a_bringup_flag_with_its_declaration():
    parser_actions = {a.option_strings[0]: a for a in bringup.make_parser()._actions
                      if a.option_strings}
    tables = launch_tables(LAUNCH.read_text(encoding="utf-8"))
    assert set(tables) == set(bringup.override_tables())
    for node, table in tables.items():
        specs = NODE_RECORDS[node].specs()
        for argument, (parameter, type_name, _) in table.items():
            action = parser_actions[flag(argument)]
            default, spec = specs[parameter]
            assert action.type.__name__ == type_name == type(default).__name__
            assert (action.choices or []) == list(spec.choices)
            assert spec.description in action.help


@pytest.mark.parametrize("node,flag_args,expected", [
    ("rci_gateway", ["--users-file", "/srv/brak/users.yaml", "--rci-port", "7650"],
     {"users_file": "/srv/brak/users.yaml", "port": 7650}),
    ("hardware_node", ["--bus-backend", "smbus2", "--i2c-bus", "3"],
     {"bus_backend": "smbus2", "i2c_bus": 3}),
    ("rdi_gateway", ["--rdi-ca-port", "0"], {"ca_port": 0}),
    ("foxglove_gateway", ["--foxglove-host", "0.0.0.0", "--foxglove-port", "8775",
                          "--page-port", "8776"],
     {"host": "0.0.0.0", "port": 8775, "page_port": 8776}),
])
def test_a_flag_given_becomes_its_node_s_parameter(node, flag_args, expected):
    args = bringup.parse_args(flag_args)
    assert {p: v for p, v in bringup.given(args, node) if v is not None} == expected
