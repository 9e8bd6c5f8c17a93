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

"""What the launch file reads from a hardware node params file (``config:=``).

``launch/brak.launch.py`` passes the file to the hardware node as it is and
needs three things from it at launch time: the node parameters (to tell which
values the file sets), the URDF of the robot it describes (for
robot_state_publisher, so custom sonar poses and frames match TF), and the
frame names (for rviz's fixed frame). Pure Python: no ROS import here.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from bsal_ros.hardware.description import deep_merge, load_description, params_section, validate

from .urdf import build_urdf


def node_parameters(path: str | Path) -> dict:
    """The hardware node's parameters set by the params file ``path`` (``robot`` included)."""
    with open(path, "r", encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a ROS 2 params file is a mapping at the top level")
    return params_section(data)


def description_of(path: str | Path) -> dict:
    """The description the hardware node builds from the params file ``path``:
    built-in defaults, then its ``robot_description_file``, then the file itself."""
    params = node_parameters(path)
    desc = load_description(params.get("robot_description_file") or None)
    robot = params.pop("robot", None) or {}
    desc = deep_merge(desc, {"robot": robot, "hardware_node": params})
    validate(desc["robot"])
    return desc


def urdf_of(path: str | Path) -> str:
    """URDF text of the robot described by the params file ``path``."""
    return build_urdf(description_of(path), source=Path(path).name)
