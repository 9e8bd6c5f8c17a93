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

"""A node in an rclpy context of its own, spun in a background thread: the
test's doubles and watchers that live beside the process under test (no tests
here). rclpy is imported when one starts, so a module that only defines one
still imports where rclpy is missing."""

from __future__ import annotations

import threading
import time


class SpunNode:
    """A subclass calls :meth:`start_context`, makes ``self.node`` in
    ``self.context``, then calls :meth:`spin`: a single-threaded executor
    spins the node in a daemon thread until :meth:`close`, which also
    destroys the node and shuts the context down."""

    def start_context(self) -> None:
        """A fresh, initialised private context as ``self.context``."""
        import rclpy
        import rclpy.context
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)

    def spin(self) -> None:
        """Start spinning ``self.node`` in the background."""
        import rclpy.executors
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while self._running:
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        """Stop the thread, destroy the node, shut the context down."""
        import rclpy
        self._running = False
        self.thread.join(5)
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)

    def wait(self, what: str, predicate, timeout: float):
        """Wait until ``predicate()``, called under the subclass's ``self.lock``, is
        true and return its value; AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                got = predicate()
            if got:
                return got
            time.sleep(0.02)
        raise AssertionError(f"{what} not seen within {timeout} s")
