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

"""SIGINT and SIGTERM set one flag; the spin loop reads it (docs/DEVELOPING.md, "Start and stop").

Imported by :mod:`bsal_ros.entry_points` before rclpy: standard library only.
"""

from __future__ import annotations

import signal
import time

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Set by a signal, a timer or code: the process should stop.

    ``request`` only assigns attributes (no lock, no I/O), so a signal
    handler may call it whatever code it interrupted."""

    def __init__(self):
        self.reason: str | None = None
        self.when: float | None = None

    def request(self, reason: str) -> None:
        """Ask for a stop; the first reason wins. Any thread, or a signal handler."""
        if self.reason is None:
            self.when = time.monotonic()
            self.reason = reason

    @property
    def requested(self) -> bool:
        """True once a stop was asked for."""
        return self.reason is not None


def install_signal_handlers(stop: StopRequest) -> None:
    """Make SIGINT and SIGTERM call ``stop.request`` (main thread only)."""
    def handler(signum, frame):     # noqa: ARG001 - signal handler signature
        stop.request(signal.Signals(signum).name)
    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)


def ignore_late_signals() -> None:
    """Ignore SIGINT and SIGTERM from now on: everything is stopped, and
    Python's finalisation would otherwise put their default action back."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
