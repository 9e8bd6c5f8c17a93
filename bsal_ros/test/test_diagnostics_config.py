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
"""The diagnostic_aggregator configuration comes from the device kinds
(bsal_ros/kinds/diagnostics_config.py): the checked-in file is fresh, and
every registered kind, a plugin's too, lands in its group's analyzer."""

from pathlib import Path

import yaml

from bsal_ros.kinds import all_kinds, is_builtin
from bsal_ros.kinds.diagnostics_config import analyzers_yaml
import bumper_kind  # noqa: F401  (the bumper plugin, group Bumpers)

CHECKED = Path(__file__).resolve().parents[1] / "config" / "diagnostics_analyzers.yaml"


def test_the_checked_in_file_is_generated_from_brak_s_own_kinds():
    assert CHECKED.read_text(encoding="utf-8") == analyzers_yaml(builtin_only=True), (
        "stale: python -m bsal_ros.kinds.diagnostics_config --builtin "
        "> bsal_ros/config/diagnostics_analyzers.yaml")


def _matched(text):
    params = yaml.safe_load(text)["/**"]["ros__parameters"]
    return {c.removeprefix(": "): a["path"] for a in params.values() if isinstance(a, dict)
            for c in a["contains"]}


def test_every_kind_is_in_its_group_plugins_only_at_launch():
    at_launch, checked = _matched(analyzers_yaml()), _matched(analyzers_yaml(builtin_only=True))
    assert {k.name: k.diagnostics_group for k in all_kinds()} == {
        c: p for c, p in at_launch.items() if c != "bus"}
    assert at_launch["bumper"] == "Bumpers" and "bumper" not in checked
    assert {k.name for k in all_kinds() if is_builtin(k)} | {"bus"} == set(checked)
