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
"""Catch a test process that stops running Python for a while, and say where.

A heartbeat thread re-arms faulthandler's C timer every ``period`` s. If no
Python thread runs for ``limit`` s (a thread holds the GIL inside a C call
that blocks, or the whole process is not scheduled), the timer, which needs
no GIL, writes every thread's stack to a file; the heartbeat, once it runs
again, records how long it was held up. A test that fails during a stall can
then name the call that held the process instead of guessing.
"""

from __future__ import annotations

import faulthandler
from pathlib import Path
import threading
import time


class StallWatch:
    """``with StallWatch(path) as watch:``; ``watch.report()`` says what was seen."""

    def __init__(self, path: Path, limit: float = 1.0, period: float = 0.1):
        self.path = Path(path)
        self.limit = limit
        self.period = period
        #: (seconds since start, how long the heartbeat was held up) per stall over ``limit``
        self.stalls: list[tuple[float, float]] = []
        self.longest = 0.0
        self._stop = threading.Event()
        self._file = None
        self._thread = None
        self._t0 = 0.0

    def __enter__(self) -> StallWatch:
        self._file = open(self.path, "w", encoding="utf-8")
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._beat, name="stall-watch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5.0)
        faulthandler.cancel_dump_traceback_later()
        self._file.close()

    def _beat(self) -> None:
        last = time.monotonic()
        while not self._stop.is_set():
            faulthandler.dump_traceback_later(self.limit, file=self._file)
            self._stop.wait(self.period)
            now = time.monotonic()
            gap = now - last
            self.longest = max(self.longest, gap)
            if gap > self.limit:
                self.stalls.append((round(last - self._t0, 2), round(gap, 2)))
            last = now

    def stacks(self) -> str:
        """What faulthandler wrote (empty when no stall reached ``limit``)."""
        return self.path.read_text(encoding="utf-8", errors="replace")

    def report(self) -> str:
        """One line, then the stacks of the first stall, if any."""
        line = (f"process stalls over {self.limit:g} s: {self.stalls or 'none'} "
                f"(longest heartbeat gap {self.longest:.2f} s)")
        text = self.stacks()
        return f"{line}\n{text[:6000]}" if text else line
