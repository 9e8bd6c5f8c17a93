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

"""ROS domains handed to test modules, one module per domain at a time.

A domain is held through an exclusive ``flock`` on a file of its own in a
folder shared by every run on the machine (``$TMPDIR/bsal_ros-test-domains``):
two runs at once (a developer's and CI's, two worktrees) never put two
modules in one domain, and a run that dies frees its domains with its
process (the kernel drops the locks). ament's ``domain_coordinator`` does
the same with ports.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
import tempfile
import threading
import time


class DomainPool:
    """Hands out ROS domain ids from ``ids``; ``domain()`` waits for a free one."""

    def __init__(self, ids: list[int], folder: Path | None = None, poll_s: float = 0.2):
        if not ids:
            raise ValueError("no ROS domain to hand out")
        self.ids = list(ids)
        self.folder = folder or Path(tempfile.gettempdir()) / "bsal_ros-test-domains"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.poll_s = poll_s
        self._lock = threading.Lock()
        self._next = 0

    @classmethod
    def from_range(cls, text: str, folder: Path | None = None) -> "DomainPool":
        """A pool of ``"1-99"`` or ``"5,7,9-12"``; ValueError for ids outside 0..232."""
        ids: list[int] = []
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            ids += range(int(low), int(high or low) + 1)
        bad = [i for i in ids if not 0 <= i <= 232]
        if bad:
            raise ValueError(f"ROS domain ids run from 0 to 232 (to 101 on Linux): {bad}")
        return cls(ids, folder)

    def try_take(self) -> tuple[int, int] | None:
        """(domain, locked file descriptor) of a free domain, or None."""
        with self._lock:
            for step in range(len(self.ids)):
                # round robin: a freed domain rests while the others are used,
                # so a module's late DDS traffic never meets the next module
                domain = self.ids[(self._next + step) % len(self.ids)]
                fd = os.open(self.folder / f"{domain}.lock", os.O_CREAT | os.O_RDWR, 0o666)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                self._next = (self._next + step + 1) % len(self.ids)
                return domain, fd
        return None

    @contextlib.contextmanager
    def domain(self):
        """Hold a free domain for the ``with`` block (waits until one is free)."""
        taken = self.try_take()
        while taken is None:
            time.sleep(self.poll_s)
            taken = self.try_take()
        domain, fd = taken
        try:
            yield domain
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
