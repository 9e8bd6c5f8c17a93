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

"""Work from other threads, run in a node's executor thread, bounded.

foxglove-sdk calls the gateway from its own threads; ROS entities must be
made and used in the executor's (rosbridge raced the executor doing
otherwise). ``rclpy``'s EventsExecutor has no guard conditions, but its
``create_task`` is thread-safe (it enqueues like a DDS callback), so a
:class:`Handoff` hands each piece of work over with it.

Bounds: at most ``max_pending`` pieces wait; beyond that a ``data`` piece (a
client's message) is dropped, counted and logged once per burst, and a
control piece is refused the same way unless it is ``must`` (a client's
channel going away: its zero twist must not be lost; there is one such
piece per channel a client had). Work keyed with :meth:`coalesce` waits once
however often it is asked for. A piece that raises is logged once per kind
(its function and exception type), with a count; the node goes on.
"""

from __future__ import annotations

import threading

#: kinds of failure remembered for "logged once" before the memory starts again
MAX_KINDS = 256


class Handoff:
    """Hand work from any thread to ``node``'s executor thread."""

    def __init__(self, node, label: str, max_pending: int = 1000):
        self.node = node
        self.label = label
        self.max_pending = max_pending
        self._lock = threading.Lock()
        self._pending = 0
        self._dropped = 0
        self._early: list = []           # before the node was in an executor
        self._keys: set = set()          # coalesced work waiting
        self._failures: dict[str, int] = {}

    def put(self, fn, *args, data: bool = False, must: bool = False) -> None:
        """Run ``fn(*args)`` in the executor thread; see the module's bounds."""
        with self._lock:
            if not must and self._pending >= self.max_pending:
                self._dropped += 1
                first = self._dropped == 1
            else:
                first = None
                self._pending += 1
                executor = self.node.executor
                if executor is None:     # not spun yet: drain() runs it
                    self._early.append((fn, args))
                    return
        if first is None:
            executor.create_task(self._run, fn, args)
        elif first:
            what = "client messages" if data else "pieces of work"
            self.node.get_logger().warning(f"{self.label}: more than {self.max_pending} "
                                           f"{what} waiting: dropping them")

    def coalesce(self, key, fn) -> None:
        """Run ``fn()`` once in the executor thread, however often this is called
        with ``key`` before it runs (``fn`` reads the state the callers changed)."""
        with self._lock:
            if key in self._keys:
                return
            self._keys.add(key)

        def run():
            with self._lock:
                self._keys.discard(key)
            fn()
        self.put(run, must=True)

    def drain(self) -> None:
        """Run the work handed over before the node was in an executor (executor thread)."""
        with self._lock:
            early, self._early = self._early, []
        for fn, args in early:
            self._run(fn, args)

    def _run(self, fn, args) -> None:
        with self._lock:
            self._pending -= 1
            dropped = self._dropped if self._pending == 0 else 0
            if dropped:
                self._dropped = 0
        if dropped:
            self.node.get_logger().warning(f"{self.label}: {dropped} were dropped")
        try:
            fn(*args)
        except Exception as exc:   # noqa: BLE001 - one client's bad request never stops the node
            self.failed(getattr(fn, "__name__", repr(fn)), exc)

    def failed(self, where: str, exc: BaseException) -> None:
        """Log ``exc`` once per kind (``where`` and its type), then count it silently."""
        kind = f"{where}: {type(exc).__name__}"
        with self._lock:
            if len(self._failures) >= MAX_KINDS:
                self._failures.clear()
            count = self._failures.get(kind, 0) + 1
            self._failures[kind] = count
        if count == 1:
            self.node.get_logger().error(f"{self.label}: {where} failed: {exc!r} (logged once "
                                         "for this kind)")
