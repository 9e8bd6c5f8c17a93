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
"""The launch arguments that override a node parameter, read from the one
place they are declared: the ``*_OVERRIDES`` tables of launch/brak.launch.py
(argument -> (parameter, type)). ``brak_bringup`` makes its flags from them
(``rci_port`` -> ``--rci-port``), so the two front doors take the same
overrides. Read as source (no ``launch`` import: the PyPI wheels have none).
"""

from __future__ import annotations

import ast
from pathlib import Path

#: the launch file's table of each node
TABLES = {"HARDWARE_OVERRIDES": "hardware_node", "RCI_OVERRIDES": "rci_gateway",
          "RDI_OVERRIDES": "rdi_gateway", "FOXGLOVE_OVERRIDES": "foxglove_gateway"}
_TYPES = {"str": str, "int": int, "float": float, "bool": bool}


def launch_overrides(launch_file: Path) -> dict[str, dict[str, tuple[str, type]]]:
    """node -> {launch argument: (parameter, type)} of ``launch_file``."""
    tree = ast.parse(Path(launch_file).read_text(encoding="utf-8"))
    out: dict[str, dict[str, tuple[str, type]]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict) \
                and getattr(stmt.targets[0], "id", None) in TABLES:
            out[TABLES[stmt.targets[0].id]] = {
                k.value: (v.elts[0].value, _TYPES[v.elts[1].id])
                for k, v in zip(stmt.value.keys, stmt.value.values)}
    missing = set(TABLES.values()) - set(out)
    if missing:
        raise ValueError(f"{launch_file}: no override table for {', '.join(sorted(missing))}")
    return out


def flag(argument: str) -> str:
    """The command-line flag of a launch argument (``rci_port`` -> ``--rci-port``)."""
    return "--" + argument.replace("_", "-")
