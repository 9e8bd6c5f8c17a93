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
parameters); :class:`HardwareNodeParams` is the one declaration (types, ranges,
choices, which may change at run time).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter

from bsal_ros.hardware.backends import BACKENDS
from bsal_ros.hardware.description import (check_motor_watchdogs, deep_merge, DEFAULT_DESCRIPTION,
                                           DescriptionError, load_description, unflatten, validate)
from bsal_ros.hardware.robot import scale_rates, STATVAL_MS_MAX
from bsal_ros.nodes.params import NodeParams, param

# defaults: config/brak.yaml == DEFAULT_DESCRIPTION["hardware_node"] (a test keeps them equal)
_D = DEFAULT_DESCRIPTION["hardware_node"]
HOUR_S = 3600.0
INT32_MAX = 2**31 - 1
# the statval time is a 24-bit ms count: the base time must move before it wraps
ROLLOVER_MAX_S = STATVAL_MS_MAX / 1000.0 - 60.0


@dataclass(frozen=True)
class HardwareNodeParams(NodeParams):
    """Parameters of the hardware node (docs/INTERFACES.md)."""

    bus_backend: str = param(_D["bus_backend"], "I2C bus backend: 'sim' (simulated Brak, "
                             "default) or 'smbus2' (/dev/i2c-N)", choices=tuple(BACKENDS))
    i2c_bus: int = param(_D["i2c_bus"], "bus number N of /dev/i2c-N for the smbus2 backend",
                         0, 255)
    robot_description_file: str = param(
        _D["robot_description_file"], "optional robot description file (ROS params format, "
        "like config/brak.yaml); merged over the built-in description, robot.* parameters "
        "go over it")
    sim_seed: int = param(_D["sim_seed"], "seed of the simulated world's random numbers; "
                          "-1 = robot.sim.seed", -1, INT32_MAX)
    speed_of_sound: float = param(_D["speed_of_sound"], "m/s used to turn echo delays into "
                                  "ranges (343 at 20 C)", 100.0, 2000.0, dynamic=True)
    sonar_no_return: str = param(_D["sonar_no_return"], "Range.range when a sonar hears no "
                                 "echo: 'inf' (REP-117) or 'max_range' (what Nav2's range "
                                 "layer clears on)", choices=("inf", "max_range"), dynamic=True)
    cmd_vel_timeout: float = param(_D["cmd_vel_timeout"], "s without a cmd_vel message before "
                                   "the drive is stopped", 0.01, HOUR_S, dynamic=True)
    diagnostics_period: float = param(_D["diagnostics_period"], "s between DiagnosticArray "
                                      "messages on /diagnostics", 0.01, HOUR_S)
    stale_factor: float = param(_D["stale_factor"], "a device that is on is STALE after this "
                                "many poll periods without data", 1.0, 1000.0, dynamic=True)
    rate_scale: float = param(_D["rate_scale"], "multiplies every board's update and poll rate "
                              "(tests run faster)", 0.01, 100.0)
    all_boards_hz: float = param(_D["all_boards_hz"], "> 0: poll every board at this rate "
                                 "instead of the description's", 0.0, 1000.0)
    activate_on_start: bool = param(_D["activate_on_start"], "switch every motor and sensor on "
                                    "at start-up")
    auto_home: bool = param(False, "home the steering at start-up (cmd_vel drives only with a "
                            "homed steering); left out: true on the sim backend, false on a "
                            "real bus (nothing moves until a client asks)")
    frame_prefix: str = param(_D["frame_prefix"], "prefix of every frame id (e.g. 'brak1/' for "
                              "two robots in one TF tree)")
    odom_frame: str = param(_D["odom_frame"], "frame of the odometry (REP-105)")
    map_frame: str = param(_D["map_frame"], "frame of the pose estimate and the sim ground "
                           "truth")
    base_frame: str = param(_D["base_frame"], "robot body frame (middle of the rear axle)")
    publish_ground_truth: bool = param(_D["publish_ground_truth"], "simulated bus only: "
                                       "publish the true pose on ground_truth")
    publish_tf: bool = param(_D["publish_tf"], "broadcast odom -> base_link when tf2_ros is "
                             "available")
    base_time_rollover_s: float = param(_D["base_time_rollover_s"], "move the statval base "
                                        "time forward after this many s (below the 24-bit ms "
                                        "field's 4.66 h)", 1.0, ROLLOVER_MAX_S)
    odom_noise_per_m: float = param(_D["odom_noise_per_m"], "odometry translation noise, m per "
                                    "sqrt(m) travelled", 0.0, 1.0)
    odom_heading_noise_per_rad: float = param(_D["odom_heading_noise_per_rad"], "odometry "
                                              "heading noise, rad per sqrt(rad) turned",
                                              0.0, 1.0)
    cmd_vel_stamped: bool = param(False, "subscribe to cmd_vel as geometry_msgs/TwistStamped "
                                  "instead of Twist (as ros2_controllers and Nav2 can send it)")

    @classmethod
    def default_of(cls, node, f: dataclasses.Field):
        """auto_home follows the backend: nothing on a real robot moves by itself."""
        if f.name == "auto_home":
            return node.get_parameter("bus_backend").value == "sim"
        return f.default


# name -> description, and what may change at run time (docs, the node's callback)
PARAMETERS = {name: spec.description for name, (_, spec) in HardwareNodeParams.specs().items()}
DYNAMIC = HardwareNodeParams.dynamic_names()


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
    line: the parameter, the value, what is allowed) for a refused value."""
    p = dataclasses.asdict(HardwareNodeParams.declare(node))
    # every override is declared (robot.* are read by prefix): a name that is
    # none of ours is a typo in a params file or on the command line (a gateway's
    # parameter given to every node of brak_bringup with -p is not)
    from bsal_ros.nodes.gateway_params import RciGatewayParams, RdiGatewayParams
    others = set(RciGatewayParams.specs()) | set(RdiGatewayParams.specs())
    for name in sorted(node.get_parameters_by_prefix("")):
        if name not in p and name not in others and name not in RCLPY_OWN \
                and not name.startswith(OTHER_PREFIXES):
            close = [n for n in p if n.split("_")[0] == name.split("_")[0]]
            raise ValueError(f"parameter {name}: the hardware node has no such parameter"
                             + (f" (did you mean {close[0]}?)" if close else ""))
    return p


# rclpy's own parameters, and prefixes read elsewhere (the robot description, QoS overrides)
RCLPY_OWN = ("use_sim_time", "start_type_description_service")
OTHER_PREFIXES = ("robot.", "qos_overrides.")


def robot_description(node, p: dict) -> dict:
    """The robot description: built-in, then robot_description_file, then the
    node's ``robot.*`` parameters (declared read-only); rates scaled."""
    try:
        desc = load_description(p["robot_description_file"] or None)
    except DescriptionError as exc:
        raise ValueError(f"parameter robot_description_file: {exc}") from None
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
