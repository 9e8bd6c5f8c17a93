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

"""The parameter overrides a node would get from the ROS arguments, without the node.

rclpy reads a node's overrides from rcl only once the node exists, and the
first node of a process builds its DDS participant (rmw_fastrtps; the
context alone does not). To refuse a wrong parameter before anything is
built (:mod:`bsal_ros.nodes.preflight`), :func:`overrides_for` reads the same
arguments the way rcl and rclpy (Kilted) do:

* ``-p``/``--param [node:]name:=value`` and ``--params-file FILE`` go into one
  list of entries, one per node name as written (``/**``, ``n1``, ``/ns/n1``
  are three), in the order of the command line; a later value of a name in
  an entry replaces the earlier one, and a ``-p`` without a node is ``/**``'s;
* a node takes every entry whose name matches its fully qualified name
  (``/*`` is one name, ``/**`` any number; a relative name is made absolute),
  in the order of the entries, a later entry's value winning; then the
  ``parameter_overrides`` given in code;
* a value is read as rcl's parser reads a YAML scalar (:func:`scalar`):
  ``yes``/``on``/``true`` are true, an integer is C's ``strtol`` with base 0
  (``010`` is 8, ``0x1F`` 31), a float C's ``strtod`` (``1e3``, ``inf``),
  anything else or quoted a string; a sequence an array. rclpy's
  ``parameter_dict_from_yaml_file`` uses PyYAML's types and matches only
  ``/**`` and a node's own name, so it is not used here;
* ``-r [node:]__node:=name`` and ``-r [node:]__ns:=/ns`` rename the node
  (the first rule that applies wins).

rcl has checked the syntax and read every file by then (``rclpy.init``), so
whatever fails here is refused by rcl first. No rclpy, only PyYAML.
"""

from __future__ import annotations

import re

import yaml

from bsal_ros.nodes.cli import split_ros_args

_TRUE = {"Y", "y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_FALSE = {"N", "n", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
_SPECIAL_FLOATS = {".nan": float("nan"), ".NaN": float("nan"), ".NAN": float("nan"),
                   ".inf": float("inf"), ".Inf": float("inf"), ".INF": float("inf"),
                   "-.inf": float("-inf"), "-.Inf": float("-inf"), "-.INF": float("-inf")}
_C_INT = re.compile(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_C_FLOAT = re.compile(r"\s*[+-]?(inf(inity)?|nan|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
                      r"|0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?\d+)?)",
                      re.IGNORECASE)
_PLAIN = "tag:bsal_ros,2026:rcl-scalar"
_FLAGS_WITH_A_VALUE = ("-p", "--param", "-r", "--remap", "--params-file", "--log-level",
                       "--log-config-file", "-e", "--enclave", "--log-file-name")


def scalar(text: str):
    """A plain (unquoted) YAML scalar as rcl reads it: bool, int, float or str."""
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    match = _C_INT.fullmatch(text)
    if match:
        sign, digits = match.groups()
        base = 16 if digits[:2] in ("0x", "0X") else 8 if digits[0] == "0" else 10
        value = int(digits, base)
        value = -value if sign == "-" else value
        if -2**63 <= value < 2**63:       # strtol's range; beyond it strtod reads it
            return value
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    if _C_FLOAT.fullmatch(text):
        body = text.strip()
        hexa = body.lstrip("+-")[:2] in ("0x", "0X")
        return float.fromhex(body) if hexa else float(body)
    return text


class _RclLoader(yaml.SafeLoader):
    """PyYAML's safe loader with rcl's scalars: every plain scalar is :func:`scalar`'s."""


_RclLoader.yaml_implicit_resolvers = {}
_RclLoader.add_implicit_resolver(_PLAIN, re.compile(r".*", re.DOTALL), None)
_RclLoader.add_constructor(_PLAIN, lambda loader, node: scalar(node.value))


def _file_entries(path: str) -> list[tuple[str, dict]]:
    """(node name as written, {parameter: value}) of a ROS params file, in its order."""
    with open(path, encoding="utf-8") as f:
        document = yaml.load(f, Loader=_RclLoader) or {}
    out: list[tuple[str, dict]] = []

    def walk(names: list[str], mapping: dict) -> None:
        for key, value in mapping.items():
            if key == "ros__parameters":
                out.append(("/".join(names), _flatten("", value or {}, {})))
            elif isinstance(value, dict):
                walk(names + [str(key)], value)
    walk([], document)
    return out


def _flatten(prefix: str, mapping: dict, out: dict) -> dict:
    for key, value in mapping.items():
        if isinstance(value, dict):
            _flatten(f"{prefix}{key}.", value, out)
        else:
            out[f"{prefix}{key}"] = value
    return out


def _rule(text: str) -> tuple[str | None, str, str]:
    """``[node:]name:=value`` -> (node or None, name, value)."""
    left, value = text.split(":=", 1)
    node, _, name = left.rpartition(":")
    return (node or None), name, value


def parse(argv: list[str]) -> tuple[list[tuple[str, dict]], list[tuple[str | None, str, str]]]:
    """(parameter entries in order, remap rules in order) of the ROS arguments in ``argv``."""
    ros = split_ros_args(list(argv[1:]))[1]
    entries: dict[str, dict] = {}
    remaps = []
    i = 0
    while i < len(ros):
        flag, value = ros[i], (ros[i + 1] if i + 1 < len(ros) else "")
        i += 2 if flag in _FLAGS_WITH_A_VALUE else 1
        if flag in ("-p", "--param"):
            node, name, text = _rule(value)
            got = yaml.load(text, Loader=_RclLoader)
            entries.setdefault(node or "/**", {})[name] = got
        elif flag == "--params-file":
            for node, values in _file_entries(value):
                entries.setdefault(node, {}).update(values)
        elif flag in ("-r", "--remap"):
            remaps.append(_rule(value))
    return list(entries.items()), remaps


def _matches(pattern: str, fqn: str) -> bool:
    """Whether a params entry's node name applies to the node ``fqn`` (rclpy's rule)."""
    absolute = pattern if pattern.startswith("/") else "/" + pattern
    return re.fullmatch(absolute.replace("/*", r"(/\w+)"), fqn) is not None


def _remapped(remaps, name: str, namespace: str) -> tuple[str, str]:
    """(name, namespace) after the ``__node`` and ``__ns`` rules that apply to ``name``."""
    new_name = new_ns = None
    for node, what, value in remaps:
        if node not in (None, name):
            continue
        if what in ("__node", "__name") and new_name is None:
            new_name = value
        elif what == "__ns" and new_ns is None:
            new_ns = value
    return new_name or name, new_ns or namespace


def fully_qualified(name: str, namespace: str | None) -> str:
    """``/ns/name`` of a node (a relative namespace is made absolute, as rcl does)."""
    ns = "/" + (namespace or "").strip("/")
    return ns.rstrip("/") + "/" + name


def overrides_for(argv: list[str], name: str, namespace: str | None = None,
                  in_code: dict | None = None) -> tuple[str, dict]:
    """(fully qualified name, {parameter: value}) of the node ``name`` built in
    ``namespace`` in a process started with ``argv``; ``in_code``: the node's
    ``parameter_overrides``, which win."""
    entries, remaps = parse(argv)
    name, namespace = _remapped(remaps, name, namespace or "")
    fqn = fully_qualified(name, namespace)
    values: dict = {}
    for pattern, given in entries:
        if _matches(pattern, fqn):
            values.update(given)
    values.update(in_code or {})
    return fqn, values
