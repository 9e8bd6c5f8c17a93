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

"""Command lines of our own executables: options of ours, plus ROS arguments.

Like every ROS executable, ``brak_bringup`` and ``brak_drive`` take ROS
arguments anywhere on the command line, each block opened by ``--ros-args``
and closed by ``--`` or the end of the line (rcl's grammar). No rclpy here:
the tools parse their options before rclpy is imported, so a signal during
the import cannot leave a half-initialised context.
"""

from __future__ import annotations

ROS_ARGS = "--ros-args"


def split_ros_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split ``argv`` (without the program name) into (our arguments, ROS
    arguments); the ROS arguments come back as one list without the
    ``--ros-args`` markers, ready to follow a single ``--ros-args``."""
    ours: list[str] = []
    ros: list[str] = []
    inside = False
    for i, arg in enumerate(argv):
        if not inside and arg == "--" and argv[i + 1:i + 2] == [ROS_ARGS]:
            continue        # "-- --ros-args ...", the form brak_bringup documented before
        if arg == ROS_ARGS:
            inside = True
        elif inside and arg == "--":
            inside = False
        elif inside:
            ros.append(arg)
        else:
            ours.append(arg)
    return ours, ros
