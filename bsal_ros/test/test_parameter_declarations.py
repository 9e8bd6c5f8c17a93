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

"""The parameter records are the one declaration: docs and config files agree with them.

For each node, docs/INTERFACES.md's parameter table has one row per declared
parameter with its default and its range (or choices, or "run time"), and no
row the record does not declare; the shipped YAML files set only declared
parameters, to their declared defaults.
"""
from pathlib import Path

import pytest
import yaml

pytest.importorskip("rclpy")

from bsal_ros.nodes.gateway_params import RciGatewayParams, RdiGatewayParams  # noqa: E402
from bsal_ros.nodes.hardware_params import HardwareNodeParams  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT.parent / "docs" / "INTERFACES.md"
RECORDS = {"hardware_node": HardwareNodeParams, "rci_gateway": RciGatewayParams,
           "rdi_gateway": RdiGatewayParams}


def table_rows(node):
    """{name: [cells]} of the node's parameter table in INTERFACES.md."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"\n## {node}\n", 1)[1].split("\n## ", 1)[0]
    params = section.split("### Parameters", 1)[1]
    rows = {}
    for line in params.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0].strip("`")] = cells
    return rows


def documented_range(default, spec):
    """The range cell as the tables write it."""
    if spec.choices:
        text = " / ".join(f"`{c}`" for c in spec.choices)
    elif spec.low is not None:
        text = f"{spec.low:g}..{spec.high:g}"
    else:
        text = "-"
    return text


@pytest.mark.parametrize("node", sorted(RECORDS))
def test_the_interfaces_table_has_exactly_the_declared_parameters(node):
    rows = table_rows(node)
    specs = RECORDS[node].specs()
    documented = {n for n in rows if not n.startswith("robot.")}
    assert documented == set(specs), (f"only in the docs: {documented - set(specs)}, "
                                      f"only declared: {set(specs) - documented}")
    for name, (default, spec) in specs.items():
        cells = rows[name]
        assert cells[2].split(",")[0].strip() == documented_range(default, spec), (name, cells)
        assert ("run time" in cells[2]) == spec.dynamic, (name, cells)
        if isinstance(default, bool) and name != "auto_home":
            assert cells[1] == str(default).lower(), (name, cells)
        elif isinstance(default, (int, float)) and not isinstance(default, bool):
            assert float(cells[1]) == default, (name, cells)


def test_the_shipped_config_files_set_declared_parameters_to_their_defaults():
    brak = yaml.safe_load((ROOT / "config" / "brak.yaml").read_text(encoding="utf-8"))
    hardware = dict(brak["/**/hardware_node"]["ros__parameters"])
    hardware.pop("robot")
    gateways = yaml.safe_load((ROOT / "config" / "gateways.yaml").read_text(encoding="utf-8"))
    files = {"hardware_node": hardware,
             "rci_gateway": gateways["/**/rci_gateway"]["ros__parameters"],
             "rdi_gateway": gateways["/**/rdi_gateway"]["ros__parameters"]}
    for node, values in files.items():
        specs = RECORDS[node].specs()
        unknown = set(values) - set(specs)
        assert not unknown, f"{node}: keys no parameter reads: {unknown}"
        for name, value in values.items():
            assert value == specs[name][0], (node, name, value, specs[name][0])
