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

"""Child processes of the two-host rig and the benchmarks: log file, PID, bounded
waits, stop by PID."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
import re
import signal
import subprocess
import time

try:
    _prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
except (OSError, AttributeError):   # not Linux: cleanup relies on the finally blocks
    _prctl = None


def die_with_parent():
    """For ``preexec_fn``: the child gets SIGTERM when the process that started
    it dies, even by SIGKILL (PR_SET_PDEATHSIG; nothing where it is not Linux).
    Start children from the main thread only: the signal follows the thread."""
    if _prctl is not None:
        _prctl(1, signal.SIGTERM)


#: PIDs of every child started by this process (the bench reports them)
STARTED: list[int] = []


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (Linux /proc); NaN
    when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stopped(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30.0):
    """Send ``sig`` to ``proc`` (if it still runs) and return everything it
    wrote to its output pipe; SIGKILL when it has not ended within ``timeout``."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


class LoggedProcess:
    """A process we started (``popen``) whose output goes to the file ``log_path``."""

    popen: subprocess.Popen
    log_path: Path

    def alive(self) -> bool:
        """True while the process runs."""
        return self.popen.poll() is None

    def text(self) -> str:
        """Its log so far ("" when the file cannot be read)."""
        try:
            return self.log_path.read_text("utf-8", "replace")
        except OSError:
            return ""


class Child(LoggedProcess):
    """A process we started; output goes to a log file we can search."""

    def __init__(self, name: str, cmd: list[str], logdir: Path, cwd: Path, env: dict | None = None,
                 pipes: bool = False):
        self.name = name
        self.cmd = cmd
        self.log_path = logdir / f"{name}.log"
        self._logf = open(self.log_path, "wb")
        self.popen = subprocess.Popen(
            cmd, cwd=cwd, env=env,
            stdin=subprocess.PIPE if pipes else subprocess.DEVNULL,
            stdout=subprocess.PIPE if pipes else self._logf, stderr=self._logf,
            preexec_fn=die_with_parent, text=pipes, bufsize=1 if pipes else -1)
        self.pid = self.popen.pid
        STARTED.append(self.pid)

    def wait_log(self, pattern: str, timeout: float) -> re.Match:
        """First match of ``pattern`` in the log; RuntimeError on timeout or death."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.text())
            if m:
                return m
            if not self.alive():
                raise RuntimeError(f"{self.name} exited ({self.popen.returncode}) before "
                                   f"/{pattern}/; log tail:\n{self.text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: no /{pattern}/ within {timeout:.0f} s; "
                                   f"log tail:\n{self.text()[-2000:]}")
            time.sleep(0.05)

    def ask(self, line: str, timeout: float = 60.0) -> str:
        """One request line to a piped child, one answer line back."""
        self.popen.stdin.write(line + "\n")
        self.popen.stdin.flush()
        got = self.popen.stdout.readline()
        if not got:
            raise RuntimeError(f"{self.name} closed its output; log tail:\n{self.text()[-2000:]}")
        return got

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM by PID, SIGKILL after ``timeout``; returns the exit status."""
        if self.popen.poll() is None:
            try:
                os.kill(self.pid, signal.SIGTERM)
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.popen.wait(5)
            except ProcessLookupError:
                pass
        for f in (self.popen.stdin, self.popen.stdout):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        self._logf.close()
        return self.popen.returncode
