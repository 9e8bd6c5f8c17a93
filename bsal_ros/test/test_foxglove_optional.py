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

"""foxglove-sdk is optional (a pip package with no rosdep key: QUALITY_DECLARATION.md,
section 5): without it ``brak_bringup`` runs the rest of the bridge and says so in
one line, and ``foxglove_gateway`` stops with one line and exit status 2.

The SDK is hidden in the child process the way Python's import system allows
(``sys.modules['foxglove'] = None``: every import of it raises ImportError).
"""
import os
from pathlib import Path
import subprocess
import sys

import pytest

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[1]
HIDE = "import sys; sys.modules['foxglove'] = None; "


def run(code: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE + code], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout,
                          env=dict(os.environ, RCUTILS_COLORIZED_OUTPUT="0"))


def test_brak_bringup_runs_the_rest_of_the_bridge_and_says_so_once():
    done = run("from bsal_ros.nodes import bringup; sys.exit(bringup.main(["
               "'--rci-port', '0', '--rdi-realtime-port', '0', '--rdi-ca-port', '0', "
               "'--duration', '4'], hard_exit=False))")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    said = [line for line in out.splitlines() if "foxglove-sdk is not importable" in line]
    assert len(said) == 1 and "--no-foxglove" in said[0], out
    up = [line for line in out.splitlines() if "Brak is up" in line]
    assert len(up) == 1 and "RCI 127.0.0.1:" in up[0] and "Foxglove" not in up[0], out
    assert "Traceback" not in out


def test_foxglove_gateway_alone_stops_with_one_line_and_exit_2():
    done = run("from bsal_ros.nodes import foxglove_gateway; "
               "sys.exit(foxglove_gateway.main(['foxglove_gateway', '--ros-args', '-p', "
               "'port:=0', '-p', 'page_port:=0'], hard_exit=False))")
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and "foxglove-sdk is not importable" in lines[0], out
    assert "pip install it" in lines[0]
