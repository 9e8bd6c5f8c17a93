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

"""The shipped Fast DDS profile (config/fastdds_robot.xml) and when it applies.

Fast DDS reads ``FASTDDS_DEFAULT_PROFILES_FILE`` when a process makes its
first participant, so the variable must be in the environment before
rclpy.init: ``brak_bringup`` sets it in its own process, ``brak.launch.py``
in each node process's environment. A user's own
``FASTDDS_DEFAULT_PROFILES_FILE`` wins; ``BSAL_DDS_PROFILE=0`` (or the
launch argument / bringup flag) switches the shipped one off.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bsal_ros.paths import shipped

#: the variable Fast DDS reads its XML profiles from
PROFILES_VAR = "FASTDDS_DEFAULT_PROFILES_FILE"
#: set to 0 / false / off / no to leave the shipped profile out
SWITCH_VAR = "BSAL_DDS_PROFILE"
_OFF = {"0", "false", "off", "no"}


def profile_path() -> Path:
    """The shipped profile's path (share/bsal_ros/config in an install)."""
    return shipped("config", "fastdds_robot.xml")


def switched_on(environ: Mapping[str, str], flag: bool = True) -> bool:
    """False when the caller's flag or ``BSAL_DDS_PROFILE`` switches it off."""
    return flag and environ.get(SWITCH_VAR, "1").strip().lower() not in _OFF


def profile_env(environ: Mapping[str, str], flag: bool = True,
                path: str | None = None) -> dict[str, str]:
    """The variables to add to a bridge process's environment: the shipped
    profile (at ``path`` when the caller resolved it), or nothing (switched
    off, or the user named a profile file)."""
    if not switched_on(environ, flag) or environ.get(PROFILES_VAR):
        return {}
    return {PROFILES_VAR: path or str(profile_path())}


def describe(environ: Mapping[str, str]) -> str:
    """One phrase for the start-up line: which Fast DDS profile is in use."""
    given = environ.get(PROFILES_VAR)
    if not given:
        return "Fast DDS profile: none (defaults)"
    if Path(given) == profile_path():
        return "Fast DDS profile: shipped (fastdds_robot.xml)"
    return f"Fast DDS profile: {given}"
