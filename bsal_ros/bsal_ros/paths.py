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

"""Where the package's shipped files (config/, launch/) are.

A colcon/ament install has them under share/bsal_ros; the pip development
install (`make setup`, editable) uses the source tree they come from.
"""
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[1]


def share_dir() -> Path:
    """The folder holding config/ and launch/ for this install."""
    if (SOURCE_ROOT / "config" / "brak.yaml").is_file():
        return SOURCE_ROOT
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory("bsal_ros"))


def shipped(*parts: str) -> Path:
    """Return the path of a shipped file (parts such as "config", "users.yaml")."""
    return share_dir().joinpath(*parts)
