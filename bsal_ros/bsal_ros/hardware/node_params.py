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
"""The hardware node's parameters: the one declaration (no ROS here).

Each field is one parameter: its name, type and default, and a Spec (what it
means, its range or choices, and whether a change at run time is applied;
:mod:`bsal_ros.core.params`). The hardware node declares it
(``bsal_ros.nodes.hardware_params``); the robot description's node defaults
(``DEFAULT_DESCRIPTION["hardware_node"]``), docs/INTERFACES.md's table,
config/brak.yaml and the launch file's overrides are checked against it. It
lives in the hardware layer, which may not import the node layer, so the
defaults are written here only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .backends import BACKENDS
from ..core.params import param, ParamRecord
from ..protocol.values import STATVAL_MS_MAX

HOUR_S = 3600.0
INT32_MAX = 2**31 - 1
# the statval time is a 24-bit ms count: the base time must move before it wraps
ROLLOVER_MAX_S = STATVAL_MS_MAX / 1000.0 - 60.0


@dataclass(frozen=True)
class HardwareNodeParams(ParamRecord):
    """Parameters of the hardware node (docs/INTERFACES.md)."""

    DERIVED = ("auto_home",)

    bus_backend: str = param("sim", "I2C bus backend: 'sim' (simulated Brak, default), "
                             "'smbus2' (/dev/i2c-N) or 'ros_base' (a ROS 2 base through "
                             "base_profile)", choices=tuple(BACKENDS))
    base_profile: str = param("", "ros_base backend: the profile mapping each device to the "
                              "base's topics, a file or a shipped one's name (twist_range, "
                              "twist_lidar, tricycle)")
    i2c_bus: int = param(1, "bus number N of /dev/i2c-N for the smbus2 backend", 0, 255)
    robot_description_file: str = param(
        "", "optional robot description file (ROS params format, like config/brak.yaml); "
        "merged over the built-in description, robot.* parameters go over it")
    sim_seed: int = param(-1, "seed of the simulated world's random numbers; -1 = "
                          "robot.sim.seed", -1, INT32_MAX)
    speed_of_sound: float = param(343.0, "m/s used to turn echo delays into ranges (343 at "
                                  "20 C)", 100.0, 2000.0, dynamic="robot.speed_of_sound")
    sonar_no_return: str = param("inf", "Range.range when a sonar hears no echo: 'inf' "
                                 "(REP-117) or 'max_range' (what Nav2's range layer clears "
                                 "on)", choices=("inf", "max_range"), dynamic=True)
    cmd_vel_timeout: float = param(0.5, "s without a cmd_vel message before the drive is "
                                   "stopped", 0.01, HOUR_S,
                                   dynamic="robot.cmd_timeout")
    diagnostics_period: float = param(1.0, "s between DiagnosticArray messages on "
                                      "/diagnostics", 0.01, HOUR_S)
    stale_factor: float = param(3.0, "a device that is on is STALE after this many poll "
                                "periods without data", 1.0, 1000.0, dynamic=True)
    rate_scale: float = param(1.0, "multiplies every board's update and poll rate (tests run "
                              "faster)", 0.01, 100.0)
    all_boards_hz: float = param(0.0, "> 0: poll every board at this rate instead of the "
                                 "description's", 0.0, 1000.0)
    activate_on_start: bool = param(True, "switch every motor and sensor on at start-up")
    auto_home: bool = param(False, "home the steering at start-up (cmd_vel drives only with a "
                            "homed steering); left out: true on the sim backend, false on a "
                            "real bus (nothing moves until a client asks)")
    frame_prefix: str = param("", "prefix of every frame id (e.g. 'brak1/' for two robots in "
                              "one TF tree)")
    odom_frame: str = param("odom", "frame of the odometry (REP-105)")
    map_frame: str = param("map", "frame of the pose estimate and the sim ground truth")
    base_frame: str = param("base_link", "robot body frame (middle of the rear axle)")
    publish_ground_truth: bool = param(True, "simulated bus only: publish the true pose on "
                                       "ground_truth")
    publish_tf: bool = param(True, "broadcast odom -> base_link when tf2_ros is available")
    base_time_rollover_s: float = param(14400.0, "move the statval base time forward after "
                                        "this many s (below the 24-bit ms field's 4.66 h)",
                                        1.0, ROLLOVER_MAX_S)
    odom_noise_per_m: float = param(0.02, "odometry translation noise, m per sqrt(m) "
                                    "travelled", 0.0, 1.0)
    odom_heading_noise_per_rad: float = param(0.02, "odometry heading noise, rad per "
                                              "sqrt(rad) turned", 0.0, 1.0)
    cmd_vel_stamped: bool = param(False, "subscribe to cmd_vel as geometry_msgs/TwistStamped "
                                  "instead of Twist (as ros2_controllers and Nav2 can send it)")

    @classmethod
    def default_of(cls, value_of, f: dataclasses.Field):
        """auto_home follows the backend: nothing on a real robot moves by itself."""
        if f.name == "auto_home":
            return value_of("bus_backend") == "sim"
        return f.default
