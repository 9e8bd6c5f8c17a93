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

"""A robot description the hardware node cannot use ends its start-up cleanly.

The executable logs one fatal line naming the problem and exits with code 2
(runtime.StartupError), as for any other bad parameter; before the fix the
``except`` clause of ``hardware_node.main`` named ``DescriptionError`` without
importing it, so the same input ended in a NameError traceback.
"""
import shutil
import subprocess

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]


def test_a_robot_description_file_that_is_no_mapping_is_a_fatal_line_and_exit_code_2(tmp_path):
    exe = shutil.which("hardware_node")
    assert exe, "make setup installs the console scripts into the venv"
    bad = tmp_path / "no_such_robot.yaml"
    bad.write_text("- just\n- a list\n", encoding="utf-8")   # DescriptionError: not a mapping
    run = subprocess.run([exe, "--ros-args", "-p", f"robot_description_file:={bad}",
                          "-r", "__ns:=/startup_check"],
                         capture_output=True, text=True, timeout=90)
    out = run.stdout + run.stderr
    assert run.returncode == 2, out
    assert "Traceback" not in out and "NameError" not in out, out
    assert "hardware node:" in out and "no_such_robot.yaml" in out, out
