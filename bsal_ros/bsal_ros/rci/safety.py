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

"""Keep trying to stop the motors a finished session could not stop.

When a control application leaves while a motor board does not answer, the
safety stop is refused (HARDWARE_FAULT: nothing written) and the motor keeps
its last setting once the board answers again. The gateway therefore retries
stopping that motor class until the robot accepts it, or until a new session
commands that class itself (its command must not be overwritten by a late
retry: the session waits for a retry in flight before sending its own).
"""

from __future__ import annotations

import asyncio
import logging

from .port import MOTOR_CLASSES, RobotPort


class StopRetrier:
    """Retries refused safety stops until the robot accepts them (across sessions)."""

    def __init__(self, port: RobotPort, logger: logging.Logger, period_s: float = 0.2):
        self.port = port
        self.log = logger
        self.period_s = period_s
        self.pending: set[str] = set()
        self.attempts = 0
        self._locks = {c: asyncio.Lock() for c in MOTOR_CLASSES}
        self._task: asyncio.Task | None = None

    def add(self, classes) -> None:
        """Keep retrying the stop of these motor classes."""
        new = set(classes) - self.pending
        if not new:
            return
        self.pending |= new
        self.log.warning("safety stop of %s refused by the robot: retrying every %.1f s until "
                         "it is accepted", ", ".join(sorted(new)), self.period_s)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def claim(self, device_class: str) -> None:
        """A session is about to command this class: stop retrying it, and let
        a retry in flight finish first."""
        if device_class in self.pending:
            self.pending.discard(device_class)
            self.log.info("safety stop of %s: a new session takes over", device_class)
        lock = self._locks.get(device_class)
        if lock is not None and lock.locked():
            async with lock:
                pass

    async def claim_all(self) -> None:
        """A reset: stop retrying every class."""
        for c in MOTOR_CLASSES:
            await self.claim(c)

    async def _run(self) -> None:
        while self.pending:
            await asyncio.sleep(self.period_s)
            for cls in sorted(self.pending):
                async with self._locks[cls]:
                    if cls not in self.pending:
                        continue
                    self.attempts += 1
                    try:
                        ok = await self.port.stop_motors(cls)
                    except Exception as exc:   # noqa: BLE001 - keep trying
                        self.log.debug("safety stop retry of %s: %r", cls, exc)
                        ok = False
                    if ok and cls in self.pending:
                        self.pending.discard(cls)
                        self.log.warning("safety stop of %s accepted after %d retries", cls,
                                         self.attempts)

    async def close(self) -> None:
        """Stop retrying (gateway closing)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
