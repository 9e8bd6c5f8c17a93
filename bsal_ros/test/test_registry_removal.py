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
"""Removing any one entry of a declaration makes a check fail naming it (issue 24).

Two registries, every entry tried (the cases are generated from the
registries themselves, so a new entry gets its cases):

* **node parameters** (``NODE_RECORDS``: the hardware node's and both
  gateways' records): a parameter removed from its record (its INTERFACES.md
  row, params-file key and launch override are named as reading nothing), its
  INTERFACES.md row removed, its description or default blanked, a node's
  record removed;
* **device kinds and board types** (``bsal_ros.kinds``, Brak's own and the
  bumper of test/bumper_kind.py): an entry left out of a declaration or a
  method left out of its class (refused at construction), an entry blanked
  (refused at registration), a whole kind or board type taken out of the
  registry (:func:`registry_problems`).

Each case asserts the message names the node or kind and the missing entry.
"""
import dataclasses

import pytest

from bsal_ros.core.params import ParamRecord, Spec
from bsal_ros.kinds import (all_kinds, board_type, board_types, BoardType, DeviceKind,
                            kind_problems, KindError, register_board_type, register_kind,
                            registry_problems, unregister)
from bsal_ros.kinds import registry
import bumper_kind  # noqa: F401  (registers the bumper: its entries are tried too)
from param_consistency import (all_problems, declaration_problems, doc_problems, doc_text,
                               LAUNCH, launch_problems, launch_tables, records, shipped_params,
                               yaml_problems)

RECORDS = records()
PARAMS = [(node, name) for node, rec in RECORDS.items() for name in rec.specs()]
DOC_TEXT = doc_text()
LAUNCH_TEXT = LAUNCH.read_text(encoding="utf-8")


def variant(rec, drop: str | None = None, **changed):
    """A copy of record ``rec`` without parameter ``drop``, or with the
    (default, spec) of a parameter replaced (``name=(default, spec)``)."""
    fields = []
    for f in dataclasses.fields(rec):
        if f.name == drop:
            continue
        default, spec = changed.get(f.name, (f.default, f.metadata["spec"]))
        fields.append((f.name, f.type, dataclasses.field(default=default,
                                                         metadata={"spec": spec})))
    return dataclasses.make_dataclass(rec.__name__, fields, bases=(ParamRecord,), frozen=True,
                                      namespace={"DERIVED": rec.DERIVED})


def with_record(node, rec):
    return {**RECORDS, node: rec}


def test_the_shipped_declarations_pass_every_check():
    assert all_problems() == []
    assert registry_problems() == []
    assert len(PARAMS) == sum(len(r.specs()) for r in RECORDS.values()) >= 60


# ---------------------------------------------------------------- parameters
@pytest.mark.parametrize("node,name", PARAMS)
def test_a_parameter_removed_from_its_record_is_named(node, name):
    recs = with_record(node, variant(RECORDS[node], drop=name))
    problems = all_problems(recs)
    assert f"docs/INTERFACES.md: {node} row `{name}`: no parameter of " \
           f"{RECORDS[node].__name__} declares it" in "\n".join(problems), problems
    files = shipped_params()
    in_yaml = [f for f, data in files.items()
               if name in ((data.get(f"/**/{node}") or {}).get("ros__parameters") or {})]
    for fname in in_yaml:
        assert any(p.startswith(f"{fname}: {node} key `{name}`: no parameter reads it")
                   for p in yaml_problems(recs, files)), (fname, problems)
    arguments = [a for a, (p, _, _) in launch_tables(LAUNCH_TEXT).get(node, {}).items()
                 if p == name]
    for argument in arguments:
        assert any(f"argument {argument} sets `{name}`, which {node} does not declare" in p
                   for p in launch_problems(recs, LAUNCH_TEXT)), problems


@pytest.mark.parametrize("node,name", PARAMS)
def test_a_parameter_without_its_interfaces_row_is_named(node, name):
    lines = DOC_TEXT.splitlines(keepends=True)
    section = DOC_TEXT.index(f"\n## {node}\n")
    row = next(i for i, ln in enumerate(lines)
               if ln.startswith(f"| `{name}` |") and sum(map(len, lines[:i])) > section)
    text = "".join(lines[:row] + lines[row + 1:])
    assert doc_problems(RECORDS, text) == [
        f"docs/INTERFACES.md: {node} parameter `{name}` has no row"]


@pytest.mark.parametrize("node,name", PARAMS)
def test_a_parameter_without_a_description_is_named(node, name):
    default, spec = RECORDS[node].specs()[name]
    rec = variant(RECORDS[node], **{name: (default, dataclasses.replace(spec, description=""))})
    assert declaration_problems({node: rec}) == [
        f"{node}: {RECORDS[node].__name__}.{name}: no description"]


@pytest.mark.parametrize("node,name", PARAMS)
def test_a_parameter_without_a_default_is_named(node, name):
    _, spec = RECORDS[node].specs()[name]
    rec = variant(RECORDS[node], **{name: (None, spec)})
    assert declaration_problems({node: rec}) == [
        f"{node}: {RECORDS[node].__name__}.{name}: no default"]


@pytest.mark.parametrize("node", sorted(RECORDS))
def test_a_node_record_removed_is_named(node):
    recs = {n: r for n, r in RECORDS.items() if n != node}
    problems = all_problems(recs)
    missing = f"no record declares {node}'s parameters (NODE_RECORDS)"
    assert [p.split(":")[0] for p in problems if missing in p] == [
        "docs/INTERFACES.md",
        "config/brak.yaml" if node == "hardware_node" else "config/gateways.yaml",
        "launch/brak.launch.py"], problems


def test_a_half_range_and_a_default_outside_it_are_named():
    rec = RECORDS["rci_gateway"]
    default, spec = rec.specs()["port"]
    half = variant(rec, port=(default, dataclasses.replace(spec, high=None)))
    assert declaration_problems({"rci_gateway": half}) == [
        "rci_gateway: RciGatewayParams.port: a range needs both low and high, not 0..None"]
    outside = variant(rec, port=(70000, spec))
    assert declaration_problems({"rci_gateway": outside}) == [
        "rci_gateway: RciGatewayParams.port: its default is refused: port must be in "
        "0..65535, not 70000"]
    assert isinstance(spec, Spec)


# ---------------------------------------------------------------- kinds
KIND_NAMES = [k.name for k in all_kinds()]
BOARD_TYPE_NAMES = list(board_types())
#: the blank of an entry ("" / () / None); an entry already blank is not a removal
BLANK = {"name": "", "device": "", "board": "", "sim_board": "", "carries": (), "fields": (),
         "extra_fields": (), "data_fields": (), "status_fields": (), "rci": None, "rdi": None,
         "viewer_label": None, "motor": None}


def entries(decl):
    return [f.name for f in dataclasses.fields(decl)]


def blank_cases():
    cases = []
    for name in KIND_NAMES:
        k = registry.kind(name)
        for entry in entries(DeviceKind):
            if entry in BLANK and getattr(k, entry) != BLANK[entry] and not (
                    entry in ("fields", "extra_fields") and (k.fields and k.extra_fields)):
                cases.append(("device kind", name, entry))
    for name in BOARD_TYPE_NAMES:
        bt = board_type(name)
        for entry in entries(BoardType):
            if entry in BLANK and getattr(bt, entry) != BLANK[entry]:
                cases.append(("board type", name, entry))
    return cases


@pytest.mark.parametrize("name,entry", [(n, e) for n in KIND_NAMES for e in entries(DeviceKind)])
def test_a_kind_declaration_missing_an_entry_is_refused_naming_it(name, entry):
    k = registry.kind(name)
    given = {e: getattr(k, e) for e in entries(DeviceKind) if e != entry}
    with pytest.raises(TypeError, match=f"missing 1 required keyword-only argument: '{entry}'"):
        type(k)(**given)


@pytest.mark.parametrize("name,entry",
                         [(n, e) for n in BOARD_TYPE_NAMES for e in entries(BoardType)])
def test_a_board_type_declaration_missing_an_entry_is_refused_naming_it(name, entry):
    bt = board_type(name)
    given = {e: getattr(bt, e) for e in entries(BoardType) if e != entry}
    with pytest.raises(TypeError, match=f"missing 1 required keyword-only argument: '{entry}'"):
        type(bt)(**given)


def method_cases():
    kinds = [(registry.kind(n), DeviceKind) for n in KIND_NAMES]
    types = [(board_type(n), BoardType) for n in BOARD_TYPE_NAMES]
    return [(decl.name, base, method) for decl, base in kinds + types
            for method in sorted(base.__abstractmethods__)]


@pytest.mark.parametrize("name,base,method", method_cases())
def test_a_declaration_class_missing_a_method_is_refused_naming_it(name, base, method):
    decl = registry.kind(name) if base is DeviceKind else board_type(name)
    given = {m: getattr(type(decl), m) for m in base.__abstractmethods__ if m != method}
    partial = type(type(decl).__name__, (base,), given)
    given_entries = {e: getattr(decl, e) for e in entries(base)}
    with pytest.raises(TypeError, match=f"abstract method '?{method}'?$"):
        partial(**given_entries)


@pytest.mark.parametrize("what,name,entry", blank_cases())
def test_a_blanked_entry_is_refused_at_registration_naming_it(what, name, entry):
    decl = registry.kind(name) if what == "device kind" else board_type(name)
    # a copy under a new name (so the registry's "already registered" does not answer first)
    copy_name = "" if entry == "name" else f"{name}_copy"
    blanked = dataclasses.replace(decl, name=copy_name, **{entry: BLANK[entry]}) \
        if entry != "name" else dataclasses.replace(decl, name="")
    register = register_kind if what == "device kind" else register_board_type
    try:
        with pytest.raises(KindError) as err:
            register(blanked)
    finally:
        unregister(copy_name)
    message = str(err.value)
    assert entry in message, message
    assert (f"{what} {copy_name!r}" in message) if entry != "name" else \
        (f"{what}: name is empty" == message), message
    if what == "device kind":
        assert message in kind_problems(blanked)


@pytest.mark.parametrize("name", KIND_NAMES)
def test_a_kind_removed_from_the_registry_is_named(name, monkeypatch):
    monkeypatch.delitem(registry._KINDS, name)
    problems = registry_problems()
    carriers = [bt for bt in BOARD_TYPE_NAMES if name in board_type(bt).carries]
    assert carriers
    for bt in carriers:
        assert f"board type {bt!r} carries {name!r}, which is not a registered device kind" \
            in problems, problems


@pytest.mark.parametrize("name", BOARD_TYPE_NAMES)
def test_a_board_type_removed_from_the_registry_is_named(name, monkeypatch):
    carried = board_type(name).carries
    monkeypatch.delitem(registry._BOARD_TYPES, name)
    problems = registry_problems()
    for k in carried:
        assert f"device kind {k!r} is carried by no board type" in problems, problems


def test_a_bsal_device_class_without_its_kind_is_named(monkeypatch):
    monkeypatch.delitem(registry._KINDS, "accelerometer")
    assert "device class 'accelerometer' (core.device_classes) has no registered kind" \
        in registry_problems()


def test_a_motor_kind_on_a_board_type_without_motor_is_named(monkeypatch):
    monkeypatch.setitem(registry._BOARD_TYPES, "dc_motor",
                        dataclasses.replace(board_type("dc_motor"), motor=False))
    assert registry_problems() == [
        "board type 'dc_motor' carries the motor kind 'dc_motor' but says motor=False"]
