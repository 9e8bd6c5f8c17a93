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

"""The hardware node's parameters on the ROS side, and the robot description
they assemble.

Free of any node state: :func:`declare` declares them on a node (through
rclpy's public API), :func:`robot_description` builds the robot description
(built-in, then ``robot_description_file``, then ``robot.*`` parameters). The
one declaration (types, defaults, ranges, choices, which may change at run
time) is :class:`~bsal_ros.hardware.node_params.HardwareNodeParams`, ROS-free
so the robot description's node defaults are read from it too.
"""

from __future__ import annotations

import dataclasses

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter

from bsal_ros.hardware.description import (check_motor_watchdogs, deep_merge, DescriptionError,
                                           load_description, unflatten, validate)
from bsal_ros.hardware.node_params import HardwareNodeParams
from bsal_ros.hardware.robot import scale_rates
from bsal_ros.nodes import params
from bsal_ros.nodes.records import NODE_RECORDS

# name -> description, and what may change at run time (docs, the node's callback)
PARAMETERS = {name: spec.description for name, (_, spec) in HardwareNodeParams.specs().items()}
DYNAMIC = HardwareNodeParams.dynamic_names()


def record():
    """The hardware node's parameter record: the declaration, or a test's extension of it."""
    return NODE_RECORDS["hardware_node"]


def overrides_list(parameter_overrides, overrides: dict) -> list:
    """Keyword overrides as rclpy Parameters; ``robot={...}`` becomes ``robot.*`` entries."""
    params = list(parameter_overrides or [])
    for k, v in overrides.items():
        if k == "robot" and isinstance(v, dict):
            params += [Parameter(n, value=x) for n, x in _flatten("robot", v, {}).items()]
        else:
            params.append(Parameter(k, value=v))
    return params


def _flatten(prefix: str, value, out: dict) -> dict:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}", v, out)
    else:
        out[prefix] = value
    return out


def declare_one(node, name: str, default, descriptor: ParameterDescriptor) -> None:
    """Declare a parameter, or describe it when an override already declared it
    (the node declares every override automatically)."""
    if node.has_parameter(name):
        given = node.get_parameter(name)
        if not descriptor.dynamic_typing:
            wanted = Parameter.Type.from_parameter_value(default)
            if given.type_ != wanted:   # as declare_parameter would refuse it
                raise ValueError(f"parameter {name} must be of type {wanted.name.lower()}, "
                                 f"not {given.value!r}")
            descriptor.type = given.type_.value
        node.set_descriptor(name, descriptor)
    else:
        node.declare_parameter(name, default, descriptor)


def declare(node) -> dict:
    """Declare every node parameter; returns name -> value (floats as float), a
    dict the node updates when a run-time change is applied. ValueError (one
    line: the parameter, the value, what is allowed) for a refused value and
    for a name no parameter reads (a typo in a params file or on the command line)."""
    return dataclasses.asdict(params.declare(record(), node, "hardware node"))


def robot_description(node, p: dict) -> dict:
    """The robot description of a node with the values ``p``: its ``robot.*``
    parameters are declared read-only, then :func:`assemble`."""
    robot_params = {f"robot.{n}": v.value
                    for n, v in node.get_parameters_by_prefix("robot").items()}
    for n in sorted(robot_params):
        declare_one(node, n, robot_params[n], ParameterDescriptor(
            description="robot description entry (docs/HARDWARE.md)", read_only=True))
    return assemble(p, robot_params)


def assemble(p: dict, robot_params: dict) -> dict:
    """The robot description: built-in, then ``p["robot_description_file"]``,
    then the ``robot.*`` overrides; rates scaled. ValueError (one line) for a
    file that cannot be read, a key nothing reads, a wrong value. The node and
    :mod:`bsal_ros.nodes.preflight` (before any node exists) both call it."""
    try:
        desc = load_description(p["robot_description_file"] or None)
    except DescriptionError as exc:
        raise ValueError(f"parameter robot_description_file: {exc}") from None
    robot = deep_merge(desc["robot"], unflatten(robot_params))
    try:
        validate(robot)
    except DescriptionError as exc:
        raise ValueError(f"robot description: {exc}") from exc
    robot = scale_rates(robot, float(p["rate_scale"]), float(p["all_boards_hz"]))
    try:   # the scaled poll rates must still beat the motor boards' command timeouts
        check_motor_watchdogs(robot)
    except DescriptionError as exc:
        raise ValueError(f"robot description (with rate_scale {p['rate_scale']:g}, "
                         f"all_boards_hz {p['all_boards_hz']:g}): {exc}") from exc
    return robot
