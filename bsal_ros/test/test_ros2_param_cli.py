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

"""ros2_param_cli.ros2_param against a stand-in ``ros2`` that plays, run after
run, the outcomes the real one has had: not yet discovered, a crash, a silent
exit, an answer."""

from pathlib import Path
import sys

import pytest

from ros2_param_cli import CRASHES, ros2_param

STAND_IN = """\
import os, signal, sys
from pathlib import Path
state = Path(__file__).with_suffix(".runs")
runs = int(state.read_text()) if state.exists() else 0
state.write_text(str(runs + 1))
plan = {plan!r}
step = plan[min(runs, len(plan) - 1)]
Path(__file__).with_suffix(".args").write_text(" ".join(sys.argv[1:]))
if step == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)     # as a Fast DDS thread's segfault ends it
elif step == "silent":
    sys.exit(15)                             # ros2cli after an external shutdown
elif step == "unknown":
    sys.exit("Node not found")
else:
    print(step)
"""


def stand_in(tmp_path: Path, *plan: str) -> tuple[str, Path]:
    """An executable ``ros2`` playing ``plan`` (the last step repeats) and its run counter."""
    path = tmp_path / "ros2"
    path.write_text(f"#!{sys.executable}\n" + STAND_IN.format(plan=list(plan)), encoding="utf-8")
    path.chmod(0o755)
    return str(path), tmp_path / "ros2.runs"


def runs(counter: Path) -> int:
    return int(counter.read_text())


def test_a_crashed_run_is_run_again_and_shown_with_the_fault_handler_s_report(tmp_path):
    ros2, counter = stand_in(tmp_path, "crash", "Set parameter successful")
    with pytest.warns(UserWarning) as seen:
        out = ros2_param(ros2, "set", "/n/node", "p", "5")
    assert out == "Set parameter successful\n" and runs(counter) == 2
    (warning,) = seen
    said = str(warning.message)
    assert said.startswith(f"ros2 param set /n/node p 5: crashed (SIGSEGV, 1 of {CRASHES}), "
                           "run again"), said
    assert "Fatal Python error: Segmentation fault" in said, said
    args = (tmp_path / "ros2.args").read_text()
    assert args == "param set /n/node p 5 --no-daemon --spin-time 2", args


def test_a_command_that_always_crashes_fails_the_test_after_three_runs(tmp_path):
    ros2, counter = stand_in(tmp_path, "crash")
    with pytest.warns(UserWarning), pytest.raises(pytest.fail.Exception,
                                                  match=rf"crashed \(SIGSEGV, {CRASHES} of"):
        ros2_param(ros2, "get", "/n/node", "p")
    assert runs(counter) == CRASHES


def test_a_silent_exit_is_returned_with_its_exit_code(tmp_path):
    ros2, counter = stand_in(tmp_path, "silent")
    assert ros2_param(ros2, "set", "/n/node", "p", "5") == "(no output, exit code 15)"
    assert runs(counter) == 1


def test_node_not_found_is_asked_again(tmp_path):
    ros2, counter = stand_in(tmp_path, "unknown", "unknown", "Double value is: 2.0")
    assert ros2_param(ros2, "get", "/n/node", "p") == "Double value is: 2.0\n"
    assert runs(counter) == 3
