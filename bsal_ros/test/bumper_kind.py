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
"""The bumper plugin (test/plugins/bsal_bumper) under the name the tests use.

scripts/setup.sh installs it with its entry point, so every process of the
bridge loads it; a tree set up before it existed imports it from its folder
(then it is registered in the importing process only: :data:`INSTALLED` is False).
"""
import pathlib
import sys

from bsal_ros.kinds import loaded_plugins

try:
    import bsal_bumper
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).parent / "plugins" / "bsal_bumper"))
    import bsal_bumper

from bsal_bumper import *  # noqa: E402,F401,F403,I100

#: loaded through its entry point (group bsal_ros.device_kinds)
INSTALLED = loaded_plugins().get("bumper") == "bsal_bumper"
PLUGIN = bsal_bumper
