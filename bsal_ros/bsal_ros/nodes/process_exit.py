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

"""How an executable's process ends: the stop's clock, the watchdog that
bounds it, and ``os._exit`` keeping the output and coverage data.

``os._exit`` skips the interpreter's teardown (where no watchdog runs) and
its ``atexit`` hooks, coverage.py's save among them.
"""

import faulthandler
import os
import sys
import threading
import time


def hard_exit(code: int) -> None:
    """Flush stdout and stderr, stop and save coverage.py's measurement if one
    runs (coverage.py is never imported here), then ``os._exit(code)``; never returns."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:   # noqa: BLE001 - a closed pipe: nothing left to say
            pass
    current = getattr(getattr(sys.modules.get("coverage"), "Coverage", None), "current", None)
    try:
        cov = current()             # TypeError: no coverage.py; AttributeError: none measuring
        cov.stop()
        cov.save()
    except Exception:   # noqa: BLE001 - no measurement, or one that fails: exit the same
        pass
    os._exit(code)


class PhaseClock:
    """Durations of a stop's phases, for the one line a slow stop logs."""

    def __init__(self):
        self._last, self.laps = time.monotonic(), []

    def lap(self, phase: str) -> None:
        """``phase`` ended now: it took the time since the previous lap."""
        now = time.monotonic()
        self.laps.append((phase, now - self._last))
        self._last = now

    def total(self) -> float:
        """Seconds from the clock's creation to the last lap."""
        return sum(took for _, took in self.laps)

    def summary(self) -> str:
        """The phases of 10 ms or more, e.g. ``stop steps 0.41 s, destroying x 3.90 s``."""
        slow = [f"{phase} {took:.2f} s" for phase, took in self.laps if took >= 0.01]
        return ", ".join(slow) or "no phase over 10 ms"


class StopWatchdog:
    """Ends the process with exit code 1 and every thread's stack on stderr
    unless ``cancel`` is called by ``deadline`` (``time.monotonic()``)."""

    def __init__(self, deadline: float, name: str, bound: float, phases: PhaseClock):
        self.deadline, self.name, self.bound, self.phases = deadline, name, bound, phases
        self.cancelled = threading.Event()
        threading.Thread(target=self._watch, name="runtime-shutdown-watchdog",
                         daemon=True).start()
        # faulthandler's C timer needs no GIL: it fires even if a thread holding it deadlocks
        faulthandler.dump_traceback_later(max(0.1, deadline - time.monotonic()) + 0.5,
                                          exit=True, file=sys.__stderr__)

    def cancel(self) -> None:
        """Stand down: the process goes on."""
        self.cancelled.set()
        faulthandler.cancel_dump_traceback_later()

    def _watch(self) -> None:
        if self.cancelled.wait(max(0.0, self.deadline - time.monotonic())):
            return
        # os.write: a thread stuck inside print() may hold sys.stderr's lock
        os.write(2, (f"[runtime] {self.name}: not stopped within {self.bound:g} s (phases "
                     f"done: {self.phases.summary()}); forcing exit. Threads:\n").encode())
        faulthandler.dump_traceback(file=sys.__stderr__, all_threads=True)
        os._exit(1)
