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

"""The clock of a process's stop: how long each phase took, and the
watchdog that ends a stop that hangs.

:func:`bsal_ros.nodes.runtime.run` logs one line with the phases' figures
when a stop is slow; the watchdog prints the phases already done when it
fires. Either line tells which node or step to look at.
"""

import faulthandler
import os
import sys
import threading
import time


class PhaseClock:
    """Durations of the stop's phases, for the one line a slow stop logs."""

    def __init__(self):
        self._last = time.monotonic()
        self.laps: list[tuple[str, float]] = []

    def lap(self, phase: str) -> None:
        """``phase`` ended now: it took the time since the previous lap."""
        now = time.monotonic()
        self.laps.append((phase, now - self._last))
        self._last = now

    def total(self) -> float:
        """Seconds from the clock's creation to the last lap."""
        return sum(took for _, took in self.laps)

    def summary(self) -> str:
        """The phases that took 10 ms or more, e.g. ``stop steps 0.41 s, destroying x 3.90 s``."""
        slow = [f"{phase} {took:.2f} s" for phase, took in self.laps if took >= 0.01]
        return ", ".join(slow) or "no phase over 10 ms"


class StopWatchdog:
    """Ends the process (exit code 1, every thread's stack on stderr) if the
    clean stop has not ended it by ``deadline`` (time.monotonic())."""

    def __init__(self, deadline: float, name: str, bound: float,
                 phases: PhaseClock | None = None):
        self.deadline = deadline
        self.bound = bound
        self.name = name
        self.phases = phases
        self.cancelled = threading.Event()
        thread = threading.Thread(target=self._watch, name="runtime-shutdown-watchdog",
                                  daemon=True)
        thread.start()
        # The same from faulthandler's C thread, which needs no GIL: it also
        # fires if a thread deadlocks while holding the GIL (this Python
        # thread could never run then).
        faulthandler.dump_traceback_later(max(0.1, deadline - time.monotonic()) + 0.5,
                                          exit=True, file=sys.__stderr__)

    def cancel(self) -> None:
        """Stand down: the process goes on (``hard_exit=False``)."""
        self.cancelled.set()
        faulthandler.cancel_dump_traceback_later()

    def _watch(self) -> None:
        if self.cancelled.wait(max(0.0, self.deadline - time.monotonic())):
            return
        # os.write: a thread stuck inside print() may hold sys.stderr's lock
        done = f" (phases done: {self.phases.summary()})" if self.phases else ""
        os.write(2, (f"[runtime] {self.name}: not stopped within {self.bound:g} s{done}; "
                     f"forcing exit. Threads:\n").encode())
        faulthandler.dump_traceback(file=sys.__stderr__, all_threads=True)
        os._exit(1)
