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

"""Node parameters declared once, as typed records.

A record is a frozen dataclass whose fields are the node's parameters: name,
type and default, and a :class:`Spec` (what it means, its range or choices,
and whether a change at run time is applied). ``declare(node)`` declares
every field with a ParameterDescriptor and returns the values it got
(overrides from the command line or a parameters file included), or raises
ValueError with one line naming the parameter, the value and what is
allowed; ``check_change(params)`` says why a run-time ``ros2 param set`` is
refused. Every parameter that is not ``dynamic`` is declared ``read_only``:
it is read at start-up only. The test that tries wrong values for every
parameter of every node is generated from these records.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.parameter import Parameter


@dataclass(frozen=True)
class Spec:
    """How one parameter is described and checked."""

    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    #: applied while the node runs; every other parameter is read-only
    dynamic: bool = False

    def descriptor(self, default) -> ParameterDescriptor:
        """The ParameterDescriptor of a parameter with this spec and ``default``."""
        d = ParameterDescriptor(description=self.description, read_only=not self.dynamic,
                                # a float parameter also takes an integer (watchdog_s:=2)
                                dynamic_typing=isinstance(default, float))
        if self.low is not None and isinstance(default, float):
            d.floating_point_range = [FloatingPointRange(
                from_value=float(self.low), to_value=float(self.high), step=0.0)]
        elif self.low is not None and isinstance(default, int):
            d.integer_range = [IntegerRange(from_value=int(self.low), to_value=int(self.high),
                                            step=1)]
        if self.choices:
            d.additional_constraints = "one of: " + ", ".join(self.choices)
        return d

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


class NodeParams:
    """Base of the parameter records: declaration, run-time checks, read access by name."""

    @classmethod
    def declare(cls, node):
        """Declare every field as a parameter of ``node``; returns the record.

        Raises ValueError, naming the parameter, for a value that is refused."""
        values = {}
        for f in dataclasses.fields(cls):
            spec = f.metadata["spec"]
            default = cls.default_of(node, f)
            descriptor = spec.descriptor(default)
            try:
                if node.has_parameter(f.name):
                    # declared already from an override (automatically_declare_...)
                    value = node.get_parameter(f.name).value
                    why = spec.check(f.name, default, value)
                    if why:
                        raise ValueError(f"parameter {why}")
                    if not descriptor.dynamic_typing:
                        descriptor.type = Parameter.Type.from_parameter_value(value).value
                    node.set_descriptor(f.name, descriptor)
                else:
                    value = node.declare_parameter(f.name, default, descriptor).value
            except ParameterException as exc:
                raise ValueError(f"parameter {f.name}: {exc}") from exc
            why = spec.check(f.name, default, value)
            if why:
                raise ValueError(f"parameter {why}")
            values[f.name] = float(value) if isinstance(default, float) else value
        return cls(**values)

    @classmethod
    def default_of(cls, node, f: dataclasses.Field):
        """The default of field ``f`` on ``node`` (a record may make one depend
        on another parameter)."""
        return f.default

    @classmethod
    def specs(cls) -> dict[str, tuple[object, Spec]]:
        """name -> (default, Spec) of every parameter of the record."""
        return {f.name: (f.default, f.metadata["spec"]) for f in dataclasses.fields(cls)}

    @classmethod
    def dynamic_names(cls) -> tuple[str, ...]:
        """The parameters whose change at run time is applied."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.metadata["spec"].dynamic)

    @classmethod
    def check_change(cls, params) -> tuple[str, dict]:
        """(why a run-time change of ``params`` is refused or "", the new values
        of this record's parameters by name). Parameters of rclpy's own
        (``use_sim_time``) pass through."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        changes = {}
        for prm in params:
            f = fields.get(prm.name)
            if f is None:
                continue
            spec = f.metadata["spec"]
            if not spec.dynamic:   # rclpy refuses read-only ones first; kept for clarity
                return (f"{prm.name} is read at start-up: restart the node to change it", {})
            why = spec.check(prm.name, f.default, prm.value)
            if why:
                return why, {}
            changes[prm.name] = float(prm.value) if isinstance(f.default, float) else prm.value
        return "", changes

    def __getitem__(self, name: str):
        # read by name as well: the gateways' start-up and shutdown code (kept
        # as it is while that moves into the shared runtime) reads p["host"]
        return getattr(self, name)
