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

"""What one module's pytest process did: its outcome, its CPU time, its junit file."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
import subprocess
import time
import xml.etree.ElementTree as ET


@dataclasses.dataclass
class Outcome:
    """What one pytest process of one module did."""

    module: str
    phase: str                  # "parallel" or "alone"
    returncode: int | None = None
    seconds: float = 0.0
    domain: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = dataclasses.field(default_factory=list)
    timed_out: bool = False
    #: CPU seconds of the module's pytest and of the processes it waited for
    cpu_s: float = 0.0
    log: Path | None = None
    junit: Path | None = None

    @property
    def ok(self) -> bool:
        """The module passed: pytest's 0, or 5 (nothing selected) with no failure."""
        return (not self.timed_out and self.failed == 0
                and self.returncode in (0, 5))

    def summary(self) -> str:
        """``14 passed, 1 skipped in 3.2 s`` and why it failed, if it did."""
        parts = [f"{n} {what}" for n, what in ((self.passed, "passed"), (self.failed, "failed"),
                                               (self.skipped, "skipped")) if n]
        text = ", ".join(parts) or "no test"
        text += f" in {self.seconds:.1f} s ({self.cpu_s:.0f} s CPU)"
        if self.timed_out:
            text += " - TIMED OUT (stacks above), killed"
        elif self.returncode not in (0, 1, 5) or (self.returncode == 1 and not self.failed):
            text += f" - pytest exit code {self.returncode}"
        return text


def wait_with_cpu(proc: subprocess.Popen, timeout: float) -> tuple[int, float]:
    """Wait for ``proc`` (TimeoutExpired past ``timeout``): its exit code and
    CPU seconds (user + system, the processes it waited for included: the
    nodes and tools a test started)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        time.sleep(0.05)


def read_junit(outcome: Outcome) -> None:
    """Fill the counts and failed test names of ``outcome`` from its junit file."""
    if outcome.junit is None or not outcome.junit.exists():
        return
    try:
        root = ET.parse(outcome.junit).getroot()
    except ET.ParseError:
        return
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            outcome.failed += 1
            outcome.failures.append(name)
        elif case.find("skipped") is not None:
            outcome.skipped += 1
        else:
            outcome.passed += 1
