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

"""A signal at any moment of a start ends the process with its stop line (issue 38).

Each node executable is started as a user starts it (its console script,
whose entry point installs the signal handlers before it imports rclpy:
``bsal_ros/entry_points.py``) and gets SIGINT or SIGTERM at a random moment
of its first 3 s. The 3 s count from the first of two moments, both seen
in /proc: its SIGTERM handler is in place (SigCgt; the entry point's first
act, so this is the program's first instruction), or rclpy's C extension is
loaded (maps; the imports are under way). With the entry points, the first
always comes first; without them (the node modules as console scripts), the
second did, and a signal in the rest of the imports raised
KeyboardInterrupt inside one (a traceback, exit 130) or killed the process
(SIGTERM, exit -15). Before either moment a signal has Python's own effect
(docs/DEVELOPING.md, "Signals before the first instruction"). Each run
must print no traceback, log its stop line naming the signal and exit with
code 0 (docs/DEVELOPING.md).

Moments and signals are random (the seed is in every failure message;
``BSAL_START_SIGNAL_SEED`` replays one); ``BSAL_START_SIGNAL_ROUNDS=N``
runs N per executable (default 10, about 2 minutes on 2 cores).
"""
import os
from pathlib import Path
import random
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from test_node_shutdown import Proc, UNCLEAN

# untraced: it runs no line of bsal_ros that another module does not (scripts/coverage_unique.py)
pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.untraced]

SEED = int(os.environ.get("BSAL_START_SIGNAL_SEED") or random.SystemRandom().randrange(1 << 30))
ROUNDS = max(1, int(os.environ.get("BSAL_START_SIGNAL_ROUNDS", "10")))
#: a round takes a few seconds (start, up to 3 s, the stop)
pytestmark.append(pytest.mark.timeout(max(300, 30 * ROUNDS)))
#: the signal lands within this many seconds of the process's first instruction
WINDOW_S = 3.0
#: the stop takes well under this (the runtime's bound is 10 s after start-up)
EXIT_WAIT_S = 60.0

ARGS = {
    "hardware_node": lambda ns, tmp: ["--ros-args", "-r", f"__ns:=/{ns}"],
    "rci_gateway": lambda ns, tmp: ["--ros-args", "-r", f"__ns:=/{ns}", "-p", "port:=0"],
    "rdi_gateway": lambda ns, tmp: ["--ros-args", "-r", f"__ns:=/{ns}", "-p",
                                    "realtime_port:=0", "-p", "ca_port:=0"],
    "foxglove_gateway": lambda ns, tmp: ["--ros-args", "-r", f"__ns:=/{ns}", "-p", "port:=0",
                                         "-p", "page_port:=0"],
    "brak_markers": lambda ns, tmp: ["--ros-args", "-r", f"__ns:=/{ns}"],
    "brak_bringup": lambda ns, tmp: ["--namespace", ns, "--rci-port", "0",
                                     "--rdi-realtime-port", "0", "--rdi-ca-port", "0",
                                     "--foxglove-port", "0", "--page-port", "0"],
    "brak_record": lambda ns, tmp: ["--namespace", ns, "--output", str(tmp / f"{ns}.mcap")],
}


def first_moment(proc, timeout=60.0) -> str:
    """Wait until the process's SIGTERM handler is installed or rclpy's C
    extension is loaded, whichever comes first; returns which."""
    pid, bit = proc.proc.pid, 1 << (signal.SIGTERM - 1)
    deadline = time.monotonic() + timeout
    while True:
        assert proc.proc.poll() is None, f"exited early:\n{proc.text()}"
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            maps = Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            status = maps = ""
        caught = re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.M)
        if caught and int(caught.group(1), 16) & bit:
            return "handlers"
        if "_rclpy_pybind11" in maps:
            return "rclpy"
        assert time.monotonic() < deadline, "neither moment came"
        time.sleep(0.002)


def one_round(executable, tmp_path, rng):
    """Start, wait for the first instruction, signal at a random moment; the
    problem in one line, or ""."""
    sig = rng.choice([signal.SIGINT, signal.SIGTERM])
    delay = rng.uniform(0.0, WINDOW_S)
    proc = Proc(executable, tmp_path, shutil.which(executable), *ARGS[executable](
        f"ss_{executable}_{rng.randrange(1 << 30):08x}", tmp_path))
    try:
        first = first_moment(proc)
        time.sleep(delay)
        code, _ = proc.signal_and_wait(sig, timeout=EXIT_WAIT_S)
    finally:
        proc.kill()
    text = proc.text()
    stop_line = re.search(rf"stopping.*\({sig.name}\)", text)
    if first == "handlers" and code == 0 and stop_line and not UNCLEAN.search(text):
        return ""
    return (f"{sig.name} {delay:.3f} s after the first moment ({first} first): exit {code}, "
            f"stop line {'logged' if stop_line else 'missing'}:\n{text[-3000:]}")


@pytest.mark.parametrize("executable", sorted(ARGS))
def test_a_signal_at_any_moment_of_a_start_stops_cleanly(executable, tmp_path):
    rng = random.Random(f"{SEED}-{executable}")
    failures = []
    for i in range(ROUNDS):
        why = one_round(executable, tmp_path, rng)
        if why:
            failures.append(f"round {i}: {why}")
    assert not failures, (f"{len(failures)} of {ROUNDS} (BSAL_START_SIGNAL_SEED={SEED}):\n"
                          + "\n".join(failures[:3]))


def test_the_node_executables_start_through_the_light_entry_points():
    """The console scripts name bsal_ros.entry_points, which imports no rclpy itself."""
    import importlib.metadata
    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")
           if ep.name in ARGS}
    assert eps == {name: f"bsal_ros.entry_points:{name}" for name in ARGS}, eps
    probe = ("import sys, bsal_ros.entry_points; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('rclpy', 'rcl_interfaces', 'sensor_msgs', 'yaml')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]", out
