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

"""How a stop is asked for: SIGINT and SIGTERM, a timer or code set one flag.

:mod:`bsal_ros.entry_points` (else :func:`bsal_ros.nodes.runtime.run`) installs
these handlers first, so no signal finds Python's default from then on; the
spin loop looks at the flag (``StopRequest``) and stops everything in order.
``brak_drive`` uses them too.

The signal races this answers (each seen in CI or on ``ros2 launch``):

* rclpy's signal handlers (``rclpy.init`` installs them for SIGINT and
  SIGTERM on the default context) shut the context down from the signal,
  asynchronously to every thread using it. An executor between its
  ``context.ok()`` check and building its wait set then raises ``RCLError:
  failed to initialize wait set: the given context is not valid`` out of
  ``spin()`` (hardware_node during auto-home, both gateways on Ctrl-C), and
  the gateways' asyncio threads and the poller thread hit the dead context
  too. Fix: ``rclpy.init(signal_handler_options=SignalHandlerOptions.NO)``
  and our own handlers that only set a flag; the context is shut down by us,
  after every user of it has stopped.
* Python's finalisation resets Python-handled signals to SIG_DFL: a second
  signal during the exit killed the process (exit -15). Fix: after the clean
  stop both are ignored (``ignore_late_signals``).
* A Python signal handler runs between two bytecodes, possibly inside a lock
  or a stdout write it would need again (deadlock, ``RuntimeError: reentrant
  call``). Fix: the handler only assigns attributes (``StopRequest``).
"""

from __future__ import annotations

from collections.abc import Callable   # not typing: imported before the handlers
import signal
import time

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Set by a signal, a timer or code: the process should stop.

    Safe in a signal handler: ``request`` only assigns attributes (no lock, no
    I/O), so it cannot deadlock with the code the signal interrupted."""

    def __init__(self):
        self.reason: str | None = None
        self.when: float | None = None

    def request(self, reason: str) -> None:
        """Ask for a stop; the first reason wins (signal-handler safe)."""
        if self.reason is None:
            self.when = time.monotonic()
            self.reason = reason

    @property
    def requested(self) -> bool:
        """True once a stop was asked for."""
        return self.reason is not None


def install_signal_handlers(stop: StopRequest) -> Callable[[], None]:
    """SIGINT and SIGTERM set ``stop`` (a second signal changes nothing: the
    clean stop is already under way and bounded). Returns a function that
    puts the previous handlers back."""
    previous = {}

    def handler(signum, frame):     # noqa: ARG001 - signal handler signature
        stop.request(signal.Signals(signum).name)

    for sig in STOP_SIGNALS:
        previous[sig] = signal.signal(sig, handler)

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)
    return restore


def ignore_late_signals() -> None:
    """Once everything is stopped: SIGINT and SIGTERM are ignored until the
    process has exited. Python's finalisation puts SIG_DFL back for every
    signal with a Python handler (not for SIG_IGN), so without this a
    second Ctrl-C during the exit (DDS teardown) killed the process by the
    signal (exit -15 / a KeyboardInterrupt traceback)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
