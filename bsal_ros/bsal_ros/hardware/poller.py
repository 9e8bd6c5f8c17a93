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

"""The real-time support of 001 2.6: a thread that polls boards when due.

Bus I/O (which blocks on a real adapter) runs here, never in ROS callbacks;
each cycle's :class:`~.robot.CycleUpdate` list goes to a listener (the ROS
node publishes from it). CPU time of the thread is measured for the bench.
"""

from __future__ import annotations

import threading
import time
from typing import Callable


class Poller:
    """Runs ``robot.cycle()`` whenever a board is due, on its own thread."""

    def __init__(self, robot, listener: Callable[[list], None] | None = None,
                 sleep: Callable[[float], None] | None = None, name: str = "bsal-hw-poll"):
        self.robot = robot
        self.listener = listener
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._name = name
        self.cycles = 0
        self.cpu_s = 0.0          # thread CPU time spent in cycles (incl. listener)
        self.errors = 0
        self.last_error = ""

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and wait for it (bounded)."""
        self._stop.set()
        t = self._thread
        if t is not None:
            t.join(timeout)
        self._thread = None

    @property
    def running(self) -> bool:
        """The thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        clock = self.robot.clock
        while not self._stop.is_set():
            wait = self.robot.next_due() - clock()
            if wait > 0:
                if self._stop.wait(min(wait, 0.1)):
                    break
                continue
            c0 = time.thread_time()
            try:
                updates = self.robot.cycle()
                if updates and self.listener is not None:
                    self.listener(updates)
            except Exception as exc:  # keep polling; report once per distinct error
                self.errors += 1
                msg = f"{type(exc).__name__}: {exc}"
                if msg != self.last_error:
                    self.last_error = msg
                    self.robot.report("error", f"poll cycle failed: {msg}")
            self.cpu_s += time.thread_time() - c0
            self.cycles += 1
