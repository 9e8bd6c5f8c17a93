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
"""Node parameters declared once, as typed records (no ROS here).

A record is a frozen dataclass whose fields are one node's parameters: name,
type and default, and a :class:`Spec` (what it means, its range or choices,
and whether a change at run time is applied). Everything that is checked
against a parameter is read from the record: the ROS declaration
(``bsal_ros.nodes.params.declare``: descriptor, read-only, the refusal of a
wrong value and of an unknown name), docs/INTERFACES.md's tables, the shipped
params files, the launch file's overrides and the generated wrong-value test.
The records are ROS-free so the hardware layer (the robot description's
node defaults) and the launch process read the same declaration.

:func:`record_problems` names what a declaration lacks (a parameter without
a description, a default of no parameter type, a half range, a default
outside its range or choices); :func:`unknown_name` words the refusal of a
name no parameter reads, with the closest valid name.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
import difflib
import functools
from typing import Any, Callable, Iterable

#: the Python types a ROS parameter of a record may have
PARAMETER_TYPES = (bool, int, float, str)


@dataclass(frozen=True)
class Spec:
    """How one parameter is described and checked."""

    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    #: changeable while the node runs (every other parameter is read-only):
    #: True when the node reads it from its parameters at each use, or the
    #: attribute, dotted from the node ("robot.cmd_timeout"), that a change
    #: is written to at once (:meth:`ParamRecord.apply_change`)
    dynamic: bool | str = False

    def check(self, name: str, default, value) -> str:
        """Why ``value`` is refused for parameter ``name`` ("" : it is accepted)."""
        if isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return f"{name} must be a number, not {value!r}"
        elif type(value) is not type(default):
            return f"{name} must be of type {type(default).__name__}, not {value!r}"
        if self.low is not None and not self.low <= value <= self.high:
            return f"{name} must be in {self.low:g}..{self.high:g}, not {value!r}"
        if self.choices and value not in self.choices:
            return f"{name} must be one of {', '.join(self.choices)}, not {value!r}"
        return ""


def param(default, description: str, low=None, high=None, choices=(), dynamic=False):
    """A parameter field: ``default`` and its :class:`Spec` (``low``..``high`` inclusive)."""
    return field(default=default,
                 metadata={"spec": Spec(description, low, high, tuple(choices), dynamic)})


class ParamRecord:
    """Base of the parameter records: the declaration read by name, run-time checks."""

    #: parameters whose default follows another parameter (:meth:`default_of`);
    #: they are left out of :meth:`static_defaults`
    DERIVED: tuple[str, ...] = ()

    @classmethod
    def default_of(cls, value_of: Callable[[str], Any], f: dataclasses.Field):
        """The default of field ``f``; ``value_of(name)`` reads another parameter
        (a record may make one default depend on another parameter)."""
        return f.default

    @classmethod
    def specs(cls) -> dict[str, tuple[object, Spec]]:
        """name -> (default, Spec) of every parameter of the record."""
        return {f.name: (f.default, f.metadata.get("spec")) for f in dataclasses.fields(cls)}

    @classmethod
    def static_defaults(cls) -> dict[str, object]:
        """name -> default of every parameter whose default is fixed."""
        return {n: d for n, (d, _) in cls.specs().items() if n not in cls.DERIVED}

    @classmethod
    def dynamic_names(cls) -> tuple[str, ...]:
        """The parameters whose change at run time is applied."""
        return tuple(n for n, (_, spec) in cls.specs().items() if spec.dynamic)

    @classmethod
    def check_change(cls, params) -> tuple[str, dict]:
        """(why a run-time change of ``params`` is refused or "", the new values
        of this record's parameters by name). Parameters of rclpy's own
        (``use_sim_time``) pass through."""
        specs = cls.specs()
        changes = {}
        for prm in params:
            if prm.name not in specs:
                continue
            default, spec = specs[prm.name]
            if not spec.dynamic:   # rclpy refuses read-only ones first; kept for clarity
                return (f"{prm.name} is read at start-up: restart the node to change it", {})
            why = spec.check(prm.name, default, prm.value)
            if why:
                return why, {}
            changes[prm.name] = float(prm.value) if isinstance(default, float) else prm.value
        return "", changes

    @classmethod
    def apply_change(cls, owner, changes: dict) -> None:
        """Write each changed parameter whose declaration names an attribute
        (``dynamic="robot.cmd_timeout"``) to that attribute of ``owner``, under
        the lock of the object holding it when it has one."""
        specs = cls.specs()
        for name, value in changes.items():
            where = specs[name][1].dynamic
            if not isinstance(where, str):
                continue
            *path, attr = where.split(".")
            obj = functools.reduce(getattr, path, owner)
            with getattr(obj, "lock", None) or contextlib.nullcontext():
                setattr(obj, attr, value)

    @classmethod
    def of(cls, values: dict):
        """The record of the entries of ``values`` it declares, each other
        parameter at its default (values not checked: see :meth:`refusal`)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})

    @classmethod
    def refusal(cls, values: dict) -> str:
        """Why a declared entry of ``values`` is refused, the first one
        (``"stale_factor must be in 1..1000, not 0.5"``); "" : none is."""
        for name, (default, spec) in cls.specs().items():
            if name in values:
                why = spec.check(name, default, values[name])
                if why:
                    return why
        return ""

    def __getitem__(self, name: str):
        # read by name as well: the gateways' start-up and shutdown code reads p["host"]
        return getattr(self, name)


def record_problems(record: type) -> list[str]:
    """What the declaration ``record`` lacks, one line per problem naming the
    parameter and the missing or wrong entry ([]: it is whole)."""
    out = []
    fields = dataclasses.fields(record)
    if not fields:
        out.append(f"{record.__name__} declares no parameter")
    for f in fields:
        where = f"{record.__name__}.{f.name}"
        spec = f.metadata.get("spec")
        if not isinstance(spec, Spec):
            out.append(f"{where}: no Spec (declare it with param(default, description, ...))")
            continue
        default = f.default
        if default is dataclasses.MISSING or default is None:
            out.append(f"{where}: no default")
            continue
        if type(default) not in PARAMETER_TYPES:
            out.append(f"{where}: default {default!r} is not a bool, int, float or str")
            continue
        problems = []
        if not spec.description.strip():
            problems.append(f"{where}: no description")
        if (spec.low is None) != (spec.high is None):
            problems.append(f"{where}: a range needs both low and high, "
                            f"not {spec.low!r}..{spec.high!r}")
        elif spec.low is not None and isinstance(default, (bool, str)):
            problems.append(f"{where}: a range for a {type(default).__name__} parameter")
        if spec.choices and not isinstance(default, str):
            problems.append(f"{where}: choices for a {type(default).__name__} parameter")
        if isinstance(spec.dynamic, str) and not all(
                part.isidentifier() for part in spec.dynamic.split(".")):
            problems.append(f"{where}: dynamic={spec.dynamic!r} is neither True nor the "
                            f"attribute a change goes to ('robot.cmd_timeout')")
        if not problems:
            why = spec.check(f.name, default, default)
            if why:
                problems.append(f"{where}: its default is refused: {why}")
        out += problems
    return out


def closest(name: str, names: Iterable[str]) -> str | None:
    """The valid name closest to ``name`` (a typo's correction), or None."""
    names = list(names)
    match = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    if match:
        return match[0]
    # a shared first word (odom_heading_noise -> odom_heading_noise_per_rad)
    head = [n for n in names if n.split("_")[0] == name.split("_")[0]]
    return head[0] if head else None


def unknown_name(what: str, name: str, names: Iterable[str]) -> str:
    """The refusal of ``name``, which no parameter of ``what`` reads."""
    near = closest(name, names)
    return (f"{name}: {what} has no such parameter"
            + (f" (did you mean {near}?)" if near else ""))
