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
"""The device-kind and board-type registry (python-can's ``register_backend``
style): the name -> declaration tables every per-kind table is built from,
and the checks a base class cannot make.

A **board type** (:class:`~.base.BoardType`) says which
:class:`~bsal_ros.hardware.boards.Board` polls it, which virtual board
simulates it, which device kinds it carries and whether it drives a motor;
its methods check its description entry and scale its rates. A **device
kind** (:class:`~.base.DeviceKind`) says which
:class:`~bsal_ros.hardware.devices.Device` reads it, the
:class:`~bsal_ros.core.DeviceState` fields it fills, its RCI and RDI codes,
its topic and aggregator group; its methods give its diagnostics, RDI
reading, topic message and viewer text. What a declaration leaves out is
refused by Python (a required argument, an abstract method); what is left
here is what only the values tell: blank entries, fields a kind does not
fill, wire codes another kind owns, and the registry as a whole.

Hardware classes are named ``"module:attribute"`` and resolved when the
hardware layer builds a robot, so the gateways (which import no hardware
code) read the same declarations. No ROS, no hardware imports here.
"""

from __future__ import annotations

import dataclasses
import importlib

from .base import BoardType, DeviceKind, KindError, NoTopic, STATE_FIELDS, TOPIC_QOS
from ..core.device_classes import ALL_CLASSES
from ..core.device_state import DeviceState
from ..core.params import ParamRecord, record_problems
from ..protocol.constants import RdiCode
from ..protocol.wire_kinds import register_rci_sensor, register_rdi_item

_BOARD_TYPES: dict[str, BoardType] = {}
_KINDS: dict[str, DeviceKind] = {}
#: RCI sensor sub-code -> kind name; one live dict (the RCI handlers read it)
RCI_SENSOR_CLASS: dict[int, str] = {}
#: RDI (code, sub-code) -> kind name
RDI_KIND: dict[tuple[int, int], str] = {}


def resolve(ref):
    """``"package.module:attribute"`` -> the attribute (imported now); a class
    given instead of a name is returned as it is."""
    if not isinstance(ref, str):
        return ref
    mod, _, attr = ref.partition(":")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as exc:
        raise KindError(f"cannot resolve {ref!r}: {exc}") from None


def _is_ref(ref) -> bool:
    """A class, or a ``"module:attribute"`` name of one."""
    if isinstance(ref, type):
        return True
    mod, _, attr = ref.partition(":") if isinstance(ref, str) else ("", "", "")
    return bool(mod and attr)


def board_type_problems(bt: BoardType) -> list[str]:
    """What the declaration ``bt`` leaves blank, one line per entry ([]: whole)."""
    name = bt.name or "(no name)"
    out = [] if bt.name else ["board type: name is empty"]
    for entry in ("board", "sim_board"):
        if not _is_ref(getattr(bt, entry)):
            out.append(f"board type {name!r}: {entry} {getattr(bt, entry)!r} is neither a "
                       f"class nor 'module:Class'")
    if not bt.carries:
        out.append(f"board type {name!r}: carries no device kind")
    if not isinstance(bt.motor, bool):
        out.append(f"board type {name!r}: motor must be True or False, not {bt.motor!r}")
    return out


def configuration_problems(what: str, decl) -> list[str]:
    """What the ``keys`` and ``params`` records of declaration ``decl`` (a
    ``what``: "board type" or "device kind") lack, and each parameter another
    registered declaration already brings, one line each ([]: none)."""
    out = []
    for entry in ("keys", "params"):
        rec = getattr(decl, entry)
        if rec is None:
            continue
        if not (isinstance(rec, type) and issubclass(rec, ParamRecord)
                and dataclasses.is_dataclass(rec)):
            out.append(f"{what} {decl.name!r}: {entry} {rec!r} is not a ParamRecord dataclass")
            continue
        out += [f"{what} {decl.name!r}: {entry}: {p}" for p in record_problems(rec)]
    if decl.params is not None and dataclasses.is_dataclass(decl.params):
        mine = {f.name for f in dataclasses.fields(decl.params)}
        for other_what, other, rec in declared_params():
            if other != decl.name:
                for name in sorted(mine & {f.name for f in dataclasses.fields(rec)}):
                    out.append(f"{what} {decl.name!r}: parameter {name!r} is already "
                               f"declared by {other_what} {other!r}")
    return out


def declared_params() -> tuple[tuple[str, str, type], ...]:
    """(what, name, record) of every registered board type and device kind
    that brings hardware node parameters, board types first."""
    return tuple((what, d.name, d.params) for what, d in _declarations()
                 if d.params is not None)


def declared_keys() -> tuple[tuple[str, str, type], ...]:
    """(what, name, record) of every registered board type and device kind
    whose description entries may carry keys of their own, board types first."""
    return tuple((what, d.name, d.keys) for what, d in _declarations() if d.keys is not None)


def _declarations():
    return ([("board type", bt) for bt in _BOARD_TYPES.values()]
            + [("device kind", _KINDS[c]) for c in device_classes()])


def register_board_type(bt: BoardType) -> BoardType:
    """Add a board type (again with the same declaration: no-op); KindError
    names an entry the declaration lacks."""
    problems = board_type_problems(bt) + configuration_problems("board type", bt)
    if problems:
        raise KindError(problems[0])
    old = _BOARD_TYPES.get(bt.name)
    if old is not None and old != bt:
        raise KindError(f"board type {bt.name!r} is already registered")
    _BOARD_TYPES[bt.name] = bt
    return bt


def kind_problems(k: DeviceKind) -> list[str]:
    """What the declaration ``k`` leaves blank, one line per entry ([]: whole).
    A motor kind (:class:`~.base.MotorKind`) answers CGtMt and is sent by
    rdi.state's motor code, so it may say ``rci=None``, ``rdi=None``,
    ``viewer_label=None``; a sensor kind may not."""
    name = k.name or "(no name)"
    out = [] if k.name else ["device kind: name is empty"]
    if not _is_ref(k.device):
        out.append(f"device kind {name!r}: device {k.device!r} is neither a class nor "
                   f"'module:Class'")
    if not k.fields and not k.extra_fields:
        out.append(f"device kind {name!r}: fields and extra_fields are empty (it fills no value)")
    for entry in ("data_fields", "status_fields"):
        if not getattr(k, entry):
            out.append(f"device kind {name!r}: {entry} is empty")
    if not k.motor:
        for entry, what in (("rci", "its RCI sensor item (RciSensor)"),
                            ("rdi", "its RDI item (RdiItem)")):
            if getattr(k, entry) is None:
                out.append(f"device kind {name!r}: {entry} is None, which only a motor kind "
                           f"(MotorKind) may say: a sensor kind needs {what}")
    if k.rdi is not None and not k.viewer_label:
        out.append(f"device kind {name!r}: viewer_label is empty, but it is sent over RDI")
    if not k.diagnostics_group:
        out.append(f"device kind {name!r}: diagnostics_group is empty (its tree in the "
                   f"diagnostics aggregator, e.g. 'Sonars')")
    if k.topic is not None:
        t = k.topic
        if not t.name or not _is_ref(t.msg) or t.qos not in TOPIC_QOS:
            out.append(f"device kind {name!r}: topic needs a name, msg 'package.msg:Class' "
                       f"and qos in {TOPIC_QOS}, not {t!r}")
        if isinstance(k, NoTopic):
            out.append(f"device kind {name!r}: topic is given, but its class "
                       f"{type(k).__name__} fills none (NoTopic)")
    return out


def registry_problems() -> list[str]:
    """What the registry as a whole lacks ([]: nothing): a board type carrying
    an unregistered kind or a motor kind without motor=True, a kind no board
    type carries, a device class of BSAL's (core.device_classes) with no kind."""
    out = []
    carried = set()
    for bt in _BOARD_TYPES.values():
        for name in bt.carries:
            carried.add(name)
            k = _KINDS.get(name)
            if k is None:
                out.append(f"board type {bt.name!r} carries {name!r}, which is not a "
                           f"registered device kind")
            elif k.motor and not bt.motor:
                out.append(f"board type {bt.name!r} carries the motor kind {name!r} but says "
                           f"motor=False")
    for name in _KINDS:
        if name not in carried:
            out.append(f"device kind {name!r} is carried by no board type")
    for name in ALL_CLASSES:
        if name not in _KINDS:
            out.append(f"device class {name!r} (core.device_classes) has no registered kind")
    return out


def _check_kind(k: DeviceKind) -> None:
    problems = kind_problems(k) + configuration_problems("device kind", k)
    if problems:
        raise KindError(problems[0])
    unknown = [f for f in k.fields if f not in STATE_FIELDS]
    if unknown:
        raise KindError(f"device kind {k.name!r}: fields {unknown} are not DeviceState fields "
                        f"(a kind's own values go in extra_fields)")
    clash = [f for f in k.extra_fields if f in STATE_FIELDS]
    if clash:
        raise KindError(f"device kind {k.name!r}: extra_fields {clash} are DeviceState fields")
    own = set(k.fields) | set(k.extra_fields) | {"statval", "d_statval"}
    for what, names in (("data_fields", k.data_fields), ("status_fields", k.status_fields)):
        stray = [f for f in names if f not in own]
        if stray:
            raise KindError(f"device kind {k.name!r}: {what} {stray} not among its fields")
    if k.rci is not None:
        stray = [f for f, _ in k.rci.fields if f not in own]
        if stray:
            raise KindError(f"device kind {k.name!r}: rci.fields {stray} not among its fields")
        if len(k.rci.fields) != k.rci.layout.k:
            raise KindError(f"device kind {k.name!r}: rci.fields has {len(k.rci.fields)} "
                            f"values, its layout {k.rci.layout.k}")
        taken = RCI_SENSOR_CLASS.get(k.rci.sub)
        if taken not in (None, k.name):
            raise KindError(f"device kind {k.name!r}: RCI sub-code {k.rci.sub:#04x} is {taken}'s")
    if k.rdi is not None:
        taken = RDI_KIND.get((int(k.rdi.code), int(k.rdi.sub)))
        if taken not in (None, k.name):
            raise KindError(f"device kind {k.name!r}: RDI sub-code {k.rdi.sub:#04x} is {taken}'s")


def register_kind(k: DeviceKind) -> DeviceKind:
    """Add a device kind and its RCI and RDI codes (again, same declaration: no-op)."""
    old = _KINDS.get(k.name)
    if old is not None:
        if old == k:
            return k
        raise KindError(f"device kind {k.name!r} is already registered")
    _check_kind(k)
    if k.rci is not None:
        register_rci_sensor(k.rci.sub, k.rci.layout)
    if k.rdi is not None:
        register_rdi_item(k.rdi.code, k.rdi.sub, k.rdi.layout)
    _KINDS[k.name] = k
    if k.rci is not None:
        RCI_SENSOR_CLASS[k.rci.sub] = k.name
    if k.rdi is not None:
        RDI_KIND[(int(k.rdi.code), int(k.rdi.sub))] = k.name
    return k


def unregister(name: str) -> None:
    """Forget a board type or device kind (tests); wire codes stay legal."""
    _BOARD_TYPES.pop(name, None)
    k = _KINDS.pop(name, None)
    if k is not None and k.rci is not None:
        RCI_SENSOR_CLASS.pop(k.rci.sub, None)
    if k is not None and k.rdi is not None:
        RDI_KIND.pop((int(k.rdi.code), int(k.rdi.sub)), None)


def board_type(name: str) -> BoardType:
    """The board type ``name``; KindError names the registered ones."""
    bt = _BOARD_TYPES.get(name)
    if bt is None:
        raise KindError(f"unknown board type {name!r} (registered: {', '.join(_BOARD_TYPES)})")
    return bt


def kind(name: str) -> DeviceKind:
    """The device kind ``name``; KindError names the registered ones."""
    k = _KINDS.get(name)
    if k is None:
        raise KindError(f"unknown device kind {name!r} (registered: {', '.join(_KINDS)})")
    return k


def is_builtin(k: DeviceKind) -> bool:
    """A kind of Brak's own (declared in bsal_ros), not a plugin's: what a file
    checked into this repository (generated from the registry) names."""
    device = k.device if isinstance(k.device, str) else k.device.__module__
    return device.startswith("bsal_ros.")


def board_types() -> tuple[str, ...]:
    """Every registered board type, in registration order."""
    return tuple(_BOARD_TYPES)


def device_classes() -> tuple[str, ...]:
    """Every registered device kind: Brak's six in their usual order, then the
    others in registration order."""
    order = {c: n for n, c in enumerate(ALL_CLASSES)}
    return tuple(sorted(_KINDS, key=lambda c: order.get(c, len(order))))


def all_kinds() -> tuple[DeviceKind, ...]:
    """Every registered device kind's declaration, in :func:`device_classes` order."""
    return tuple(_KINDS[c] for c in device_classes())


def rdi_sensor_kinds() -> tuple[DeviceKind, ...]:
    """The kinds sent as RDI-Sn items, in registration order."""
    return tuple(k for k in all_kinds() if k.rdi is not None and k.rdi.code == RdiCode.Sn)


def rdi_kind(code: int, sub: int) -> DeviceKind | None:
    """The kind behind an RDI (code, sub-code), or None."""
    name = RDI_KIND.get((int(code), int(sub)))
    return None if name is None else _KINDS[name]


def _attrs(names) -> tuple[str, ...]:
    """DeviceState attribute names: a kind's extra values travel as ``extra``."""
    return tuple(dict.fromkeys(f if f in STATE_FIELDS else "extra" for f in names))


def data_fields() -> tuple[str, ...]:
    """Every DeviceState attribute some DATA answer tells a control
    application, kinds in :func:`device_classes` order."""
    return _attrs(f for k in all_kinds() for f in k.data_fields)


def status_fields() -> tuple[str, ...]:
    """Every DeviceState attribute some STATUS answer tells a control application."""
    return _attrs(f for k in all_kinds() for f in k.status_fields)


def rci_item(k: DeviceKind, state: DeviceState):
    """The CGtSnRp DATA item of ``state`` (:meth:`~.base.DeviceKind.rci_item`)."""
    return k.rci_item(state)


def rci_as_sent(k: DeviceKind, state: DeviceState, item) -> DeviceState:
    """``state`` as its DATA ``item`` carried it (:meth:`~.base.DeviceKind.rci_as_sent`)."""
    return k.rci_as_sent(state, item)
