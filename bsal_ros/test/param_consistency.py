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
"""The checks that hold every copy of a node parameter to its declaration.

The declaration is the record (``bsal_ros.nodes.records.NODE_RECORDS``).
Each check takes what it checks as an argument (the records, the text of
docs/INTERFACES.md, the parsed params files, the launch file's source), so a
test can hand it a declaration with one entry removed and see the message
name what is missing (test/test_registry_removal.py). Each returns one line
per problem ([]: none).
"""
import ast
from pathlib import Path

import yaml

from bsal_ros.core.params import closest, record_problems
from bsal_ros.tools.gen_docs import default_cell, range_cell

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT.parent / "docs" / "INTERFACES.md"
LAUNCH = ROOT / "launch" / "brak.launch.py"
#: shipped params file -> {section: node}
PARAMS_FILES = {"config/brak.yaml": {"/**/hardware_node": "hardware_node"},
                "config/gateways.yaml": {"/**/rci_gateway": "rci_gateway",
                                         "/**/rdi_gateway": "rdi_gateway",
                                         "/**/foxglove_gateway": "foxglove_gateway"}}
#: the launch file's override table of each node
LAUNCH_TABLES = {"HARDWARE_OVERRIDES": "hardware_node", "RCI_OVERRIDES": "rci_gateway",
                 "RDI_OVERRIDES": "rdi_gateway", "FOXGLOVE_OVERRIDES": "foxglove_gateway"}


def doc_text() -> str:
    """docs/INTERFACES.md with its generated tables as this interpreter's
    registry writes them (the parameters the loaded device kinds bring)."""
    from bsal_ros.tools.gen_docs import render
    return render(DOC.read_text(encoding="utf-8"), DOC.name)


def records():
    """node -> parameter record, as the nodes read it."""
    from bsal_ros.nodes.records import NODE_RECORDS
    return dict(NODE_RECORDS)


def declaration_problems(recs) -> list[str]:
    """Every record whole: a default, a description, a consistent range."""
    return [f"{node}: {p}" for node, rec in recs.items() for p in record_problems(rec)]


def table_rows(text: str, node: str) -> dict[str, list[str]]:
    """{name: [cells]} of the node's parameter table in INTERFACES.md."""
    section = text.split(f"\n## {node}\n", 1)[1].split("\n## ", 1)[0]
    params = section.split("### Parameters", 1)[1]
    rows = {}
    for line in params.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0].strip("`")] = cells
    return rows


def documented_nodes(text: str) -> list[str]:
    """The nodes whose section of INTERFACES.md has a parameter table."""
    out = []
    for section in text.split("\n## ")[1:]:
        title, _, body = section.partition("\n")
        if "\n### Parameters" in "\n" + body and "\n| `" in body.split("### Parameters", 1)[1]:
            out.append(title.strip())
    return out


def orphan_table_problems(recs, text: str) -> list[str]:
    """Every parameter table of INTERFACES.md belongs to a node with a record."""
    return [f"docs/INTERFACES.md: {node} has a parameter table, but no record declares "
            f"{node}'s parameters (NODE_RECORDS)" for node in documented_nodes(text)
            if node not in recs]


def doc_problems(recs, text: str) -> list[str]:
    """docs/INTERFACES.md has one row per declared parameter, with its default,
    range (or choices) and whether it changes at run time, and no other row."""
    out = []
    for node, rec in recs.items():
        try:
            rows = table_rows(text, node)
        except IndexError:
            out.append(f"docs/INTERFACES.md: no '## {node}' section with '### Parameters'")
            continue
        specs = rec.specs()
        for name in rows:
            if name not in specs and not name.startswith("robot."):
                near = closest(name, specs)
                out.append(f"docs/INTERFACES.md: {node} row `{name}`: no parameter of "
                           f"{rec.__name__} declares it" + (f" (closest: {near})" if near else ""))
        for name, (default, spec) in specs.items():
            cells = rows.get(name)
            if cells is None:
                out.append(f"docs/INTERFACES.md: {node} parameter `{name}` has no row")
                continue
            if len(cells) < 4 or not cells[3]:
                out.append(f"docs/INTERFACES.md: {node} `{name}`: no meaning")
                continue
            rng = cells[2].split(",")[0].strip()
            if rng != range_cell(spec):
                out.append(f"docs/INTERFACES.md: {node} `{name}`: range {rng!r}, declared "
                           f"{range_cell(spec)!r}")
            if ("run time" in cells[2]) != bool(spec.dynamic):
                out.append(f"docs/INTERFACES.md: {node} `{name}`: "
                           + ("declared run time, the row does not say **run time**"
                              if spec.dynamic else "the row says run time, declared read-only"))
            if name not in rec.DERIVED and cells[1] != default_cell(default) and not (
                    isinstance(default, float) and _float(cells[1]) == default):
                out.append(f"docs/INTERFACES.md: {node} `{name}`: default {cells[1]}, declared "
                           f"{default_cell(default)}")
    return out


def _float(text):
    try:
        return float(text)
    except ValueError:
        return None


def shipped_params() -> dict[str, dict]:
    """file -> its parsed YAML, for every shipped params file."""
    return {f: yaml.safe_load((ROOT / f).read_text(encoding="utf-8")) for f in PARAMS_FILES}


def yaml_problems(recs, files: dict[str, dict]) -> list[str]:
    """Every key of a shipped params file is a declared parameter (``robot`` is
    the robot description, checked by its own validation) at its default."""
    out = []
    for fname, data in files.items():
        for section, node in PARAMS_FILES[fname].items():
            values = dict(((data or {}).get(section) or {}).get("ros__parameters") or {})
            values.pop("robot", None)
            if node not in recs:
                out.append(f"{fname}: section {section} sets parameters of {node}, but no "
                           f"record declares {node}'s parameters (NODE_RECORDS)")
                continue
            specs = recs[node].specs()
            for key, value in values.items():
                if key not in specs:
                    near = closest(key, specs)
                    out.append(f"{fname}: {node} key `{key}`: no parameter reads it"
                               + (f" (did you mean {near}?)" if near else ""))
                elif value != specs[key][0] or type(value) is not type(specs[key][0]) and not (
                        isinstance(specs[key][0], float) and isinstance(value, int)):
                    out.append(f"{fname}: {node} `{key}` is {value!r}, its declared default "
                               f"{specs[key][0]!r}")
    return out


def launch_tables(source: str) -> dict[str, dict[str, tuple[str, str, list | None]]]:
    """node -> {launch argument: (parameter, type name, the argument's choices)}."""
    tree = ast.parse(source)
    choices = {}
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
            kw = {k.arg: k.value for k in call.keywords}
            if isinstance(kw.get("choices"), ast.List):
                choices[call.args[0].value] = [e.value for e in kw["choices"].elts]
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) \
                and node.targets[0].id in LAUNCH_TABLES:
            table = {}
            for k, v in zip(node.value.keys, node.value.values):
                table[k.value] = (v.elts[0].value, v.elts[1].id, choices.get(k.value))
            out[LAUNCH_TABLES[node.targets[0].id]] = table
    return out


def launch_problems(recs, source: str) -> list[str]:
    """Every launch argument that overrides a parameter names a declared one of
    its node, converts to its type and offers its choices."""
    out = []
    for node, table in launch_tables(source).items():
        if node not in recs:
            out.append(f"launch/brak.launch.py: {', '.join(table)} override parameters of "
                       f"{node}, but no record declares {node}'s parameters (NODE_RECORDS)")
            continue
        specs = recs[node].specs()
        for argument, (name, type_name, choices) in table.items():
            if name not in specs:
                near = closest(name, specs)
                out.append(f"launch/brak.launch.py: argument {argument} sets `{name}`, which "
                           f"{node} does not declare" + (f" (closest: {near})" if near else ""))
                continue
            default, spec = specs[name]
            if type(default).__name__ != type_name:
                out.append(f"launch/brak.launch.py: argument {argument} gives {name} an "
                           f"{type_name}, declared {type(default).__name__}")
            if spec.choices and choices != [""] + list(spec.choices):
                out.append(f"launch/brak.launch.py: argument {argument} offers {choices}, "
                           f"{name} is one of {list(spec.choices)}")
    return out


def all_problems(recs=None) -> list[str]:
    """Every check against the shipped files."""
    recs = records() if recs is None else recs
    return (declaration_problems(recs)
            + orphan_table_problems(recs, doc_text())
            + doc_problems(recs, doc_text())
            + yaml_problems(recs, shipped_params())
            + launch_problems(recs, LAUNCH.read_text(encoding="utf-8")))
