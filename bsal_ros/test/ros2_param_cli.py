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

"""``ros2 param ...`` against another process's node, run as a user runs it.

Run again, as a user would run it again:

* while the command's fresh node has not yet discovered the node it asks
  ("Node not found");
* when it hangs: ros2param waits without a timeout for an answer that
  rmw_fastrtps can drop for a new client (first_answer.py);
* when it crashed (SIGSEGV): Fast DDS 3.2's TypeLookup reply thread
  (``dds.tls.replies``) reads shared maps without their lock, and the
  development machine's kernel log showed three crashes of it in 23 hours of
  test runs (docs/DEVELOPING.md, "`ros2 param` that printed nothing"). A
  crash is shown as a warning with the fault handler's report.

Any other outcome is returned for the test to judge. ros2cli exits without a
word when a signal ends it (SIGINT once rclpy runs: exit code 2; SIGTERM: 15
or -15): a run that printed nothing is returned as its exit code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import warnings

import pytest

#: discovery of the asked node, on a loaded machine
DISCOVERY_S = 60.0
#: one run; a matched client is answered in well under a second
HANG_S = 20.0
#: runs that hung, or crashed, before the test gives up
HANGS = 3
CRASHES = 3


def ros2_param(ros2: str, *args: str) -> str:
    """``ros2 param ARGS`` (stdout and stderr together, ``ros2`` the command)."""
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    deadline = time.monotonic() + DISCOVERY_S
    hung = crashed = 0
    while True:
        try:
            run = subprocess.run([ros2, "param", *args, "--no-daemon", "--spin-time", "2"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 timeout=HANG_S, env=env)
        except subprocess.TimeoutExpired:
            hung += 1
            if hung == HANGS:
                pytest.fail(f"ros2 param {' '.join(args)}: hung {hung} times ({HANG_S:.0f} s)")
            continue
        out = run.stdout or f"(no output, exit code {run.returncode})"
        if run.returncode == -signal.SIGSEGV:
            crashed += 1
            said = f"ros2 param {' '.join(args)}: crashed (SIGSEGV, {crashed} of {CRASHES})"
            if crashed == CRASHES:
                pytest.fail(f"{said}:\n{out[-3000:]}")
            warnings.warn(f"{said}, run again; the fault handler's report:\n{out[-3000:]}")
            continue
        if "Node not found" not in out or time.monotonic() > deadline:
            assert "Traceback" not in out and "Fatal Python error" not in out, out
            return out
        time.sleep(0.5)
