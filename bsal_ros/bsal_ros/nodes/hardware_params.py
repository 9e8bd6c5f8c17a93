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

"""The hardware node's parameters: names, descriptions, defaults, the robot
description they assemble, and which of them may change at run time.

ROS-side but free of any node state: :func:`declare` declares them on a node
(through rclpy's public API), :func:`robot_description` builds the robot
description (built-in, then ``robot_description_file``, then ``robot.*``
parameters), :func:`check_dynamic` says whether a run-time change is allowed.
"""

from __future__ import annotations

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter

from bsal_ros.hardware.description import (check_motor_watchdogs, deep_merge, DEFAULT_DESCRIPTION,
                                           DescriptionError, load_description, unflatten, validate)
from bsal_ros.hardware.robot import scale_rates

# name -> description (defaults: DEFAULT_DESCRIPTION["hardware_node"] == config/brak.yaml;
# auto_home's default follows the backend)
PARAMETERS = {
    "bus_backend": "I2C bus backend: 'sim' (simulated Brak, default) or 'smbus2' (/dev/i2c-N)",
    "i2c_bus": "bus number N of /dev/i2c-N for the smbus2 backend",
    "robot_description_file": "optional robot description file (ROS params format, like "
                              "config/brak.yaml); merged over the built-in description, "
                              "robot.* parameters go over it",
    "sim_seed": "seed of the simulated world's random numbers; -1 = robot.sim.seed",
    "speed_of_sound": "m/s used to turn echo delays into ranges (343 at 20 C)",
    "sonar_no_return": "Range.range when a sonar hears no echo: 'inf' (REP-117) or "
                       "'max_range' (what Nav2's range layer clears on)",
    "cmd_vel_timeout": "s without a cmd_vel message before the drive is stopped",
    "diagnostics_period": "s between DiagnosticArray messages on /diagnostics",
    "stale_factor": "a device that is on is STALE after this many poll periods without data",
    "rate_scale": "multiplies every board's update and poll rate (tests run faster)",
    "all_boards_hz": "> 0: poll every board at this rate instead of the description's",
    "activate_on_start": "switch every motor and sensor on at start-up",
    "auto_home": "home the steering at start-up (cmd_vel drives only with a homed steering); "
                 "left out: true on the sim backend, false on a real bus (nothing moves "
                 "until a client asks)",
    "frame_prefix": "prefix of every frame id (e.g. 'brak1/' for two robots in one TF tree)",
    "odom_frame": "frame of the odometry (REP-105)",
    "map_frame": "frame of the pose estimate and the sim ground truth",
    "base_frame": "robot body frame (middle of the rear axle)",
    "publish_ground_truth": "simulated bus only: publish the true pose on ground_truth",
    "publish_tf": "broadcast odom -> base_link when tf2_ros is available",
    "base_time_rollover_s": "move the statval base time forward after this many s "
                            "(must stay below the 24-bit ms field's 4.66 h)",
    "odom_noise_per_m": "odometry translation noise, m per sqrt(m) travelled",
    "odom_heading_noise_per_rad": "odometry heading noise, rad per sqrt(rad) turned",
}

# parameters of the node only (not in the robot description's hardware_node defaults)
NODE_PARAMETERS = {
    "cmd_vel_stamped": ("subscribe to cmd_vel as geometry_msgs/TwistStamped instead of Twist "
                        "(as ros2_controllers and Nav2 can send it)", False),
}

# what may change at run time; every other parameter is read at start-up
DYNAMIC = ("speed_of_sound", "sonar_no_return", "cmd_vel_timeout", "stale_factor")


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
    """Declare every node parameter; returns name -> value (floats as float)."""
    defaults = dict(DEFAULT_DESCRIPTION["hardware_node"])
    for name, text in PARAMETERS.items():
        if name == "auto_home":
            # nothing moves by itself on a real robot unless the configuration says so
            defaults[name] = node.get_parameter("bus_backend").value == "sim"
        # float parameters also take integers (speed_of_sound:=343 on a command line)
        is_float = isinstance(defaults[name], float)
        declare_one(node, name, defaults[name], ParameterDescriptor(
            description=text, dynamic_typing=is_float))
    for name, (text, default) in NODE_PARAMETERS.items():
        declare_one(node, name, default, ParameterDescriptor(description=text))
        defaults[name] = default
    p = {name: node.get_parameter(name).value for name in list(PARAMETERS) + list(NODE_PARAMETERS)}
    for name in PARAMETERS:
        if isinstance(defaults[name], float):
            try:
                p[name] = float(p[name])
            except (TypeError, ValueError):
                raise ValueError(f"parameter {name} must be a number, not {p[name]!r}")
    if p["sonar_no_return"] not in ("inf", "max_range"):
        raise ValueError("sonar_no_return must be 'inf' or 'max_range'")
    return p


def robot_description(node, p: dict) -> dict:
    """The robot description: built-in, then robot_description_file, then the
    node's ``robot.*`` parameters (declared read-only); rates scaled."""
    desc = load_description(p["robot_description_file"] or None)
    robot_params = {f"robot.{n}": v.value
                    for n, v in node.get_parameters_by_prefix("robot").items()}
    for n in sorted(robot_params):
        declare_one(node, n, robot_params[n], ParameterDescriptor(
            description="robot description entry (docs/HARDWARE.md)", read_only=True))
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


def check_dynamic(params) -> str:
    """Why a run-time change of ``params`` is refused ("" : it is allowed)."""
    for prm in params:
        if prm.name not in DYNAMIC:
            return (f"{prm.name} is read at start-up: restart the node to change it "
                    f"(run-time: {', '.join(DYNAMIC)})")
        v = prm.value
        if prm.name == "sonar_no_return" and v not in ("inf", "max_range"):
            return "sonar_no_return must be 'inf' or 'max_range'"
        if prm.name != "sonar_no_return" and (not isinstance(v, (int, float)) or v <= 0):
            return f"{prm.name} must be > 0"
    return ""
