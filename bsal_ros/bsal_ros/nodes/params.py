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
"""The ROS side of the parameter records (:mod:`bsal_ros.core.params`).

``declare(record, node)`` declares every field of ``record`` with a
ParameterDescriptor and returns the record of the values it got (overrides
from the command line or a parameters file included), or raises ValueError
with one line naming the parameter, the value and what is allowed. Every
parameter that is not ``dynamic`` is declared ``read_only``: it is read at
start-up only. A node created with
``automatically_declare_parameters_from_overrides=True`` holds every name it
was given; one that no parameter reads (a typo in a params file or on the
command line) is refused naming the closest valid name. The records of the
three nodes are :data:`bsal_ros.nodes.records.NODE_RECORDS`.
"""

from __future__ import annotations

import dataclasses

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.parameter import Parameter

from bsal_ros.core.params import Spec, unknown_name

# rclpy's own parameters, and prefixes read elsewhere (the robot description, QoS overrides)
RCLPY_OWN = ("use_sim_time", "start_type_description_service")
OTHER_PREFIXES = ("robot.", "qos_overrides.")


def descriptor(spec: Spec, default) -> ParameterDescriptor:
    """The ParameterDescriptor of a parameter with this spec and ``default``."""
    d = ParameterDescriptor(description=spec.description, read_only=not spec.dynamic,
                            # a float parameter also takes an integer (watchdog_s:=2)
                            dynamic_typing=isinstance(default, float))
    if spec.low is not None and isinstance(default, float):
        d.floating_point_range = [FloatingPointRange(
            from_value=float(spec.low), to_value=float(spec.high), step=0.0)]
    elif spec.low is not None and isinstance(default, int):
        d.integer_range = [IntegerRange(from_value=int(spec.low), to_value=int(spec.high),
                                        step=1)]
    if spec.choices:
        d.additional_constraints = "one of: " + ", ".join(spec.choices)
    return d


def declare(record, node, node_label: str | None = None):
    """Declare every field of ``record`` as a parameter of ``node``; returns the
    record of the values. Raises ValueError, naming the parameter, for a value
    that is refused, and for a name given to the node that no parameter reads
    (:func:`checked`, before anything is declared). ``node`` declares its
    overrides itself (``automatically_declare_parameters_from_overrides``)."""
    given = {name: prm.value for name, prm in node.get_parameters_by_prefix("").items()}
    values = checked(record, given, node_label or node.get_name())
    for f in dataclasses.fields(record):
        default = record.default_of(values.get, f)
        desc = descriptor(f.metadata["spec"], default)
        try:
            if node.has_parameter(f.name):
                # declared already from an override (automatically_declare_...)
                if not desc.dynamic_typing:
                    desc.type = Parameter.Type.from_parameter_value(given[f.name]).value
                node.set_descriptor(f.name, desc)
            else:
                node.declare_parameter(f.name, default, desc)
        except ParameterException as exc:
            raise ValueError(f"parameter {f.name}: {exc}") from exc
    return record(**values)


def checked(record, given: dict, node_label: str) -> dict:
    """name -> value of every field of ``record`` for a node given the
    overrides ``given`` (name -> value): a node's own, or what the ROS
    arguments would give it (:mod:`bsal_ros.nodes.preflight`). ValueError,
    one line: the first refused value in the record's order, then a name that
    no parameter reads."""
    values: dict = {}
    for f in dataclasses.fields(record):
        spec = f.metadata["spec"]
        default = record.default_of(values.get, f)
        value = given.get(f.name, default)
        why = spec.check(f.name, default, value)
        if why:
            raise ValueError(f"parameter {why}")
        values[f.name] = float(value) if isinstance(default, float) else value
    refuse_unknown(record, given, node_label)
    return values


def refuse_unknown(record, names, node_label: str) -> None:
    """ValueError for a name in ``names`` (a node's parameters) that no
    parameter of ``record`` reads. A parameter of another of our nodes
    passes: one process (brak_bringup) gives a ``-p`` to all of them."""
    from bsal_ros.nodes.records import NODE_RECORDS
    ours = set(record.specs())
    others = {n for r in NODE_RECORDS.values() for n in r.specs()}
    for name in sorted(names):
        if name in ours or name in others or name in RCLPY_OWN \
                or name.startswith(OTHER_PREFIXES):
            continue
        raise ValueError("parameter " + unknown_name(f"the {node_label}", name, sorted(ours)))
