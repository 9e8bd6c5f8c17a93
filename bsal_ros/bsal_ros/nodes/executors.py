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

"""Which rclpy executor spins a process's nodes (docs/BENCHMARKS.md has the figures).

``events``: rclpy's EventsExecutor, every callback in the spinning thread;
``multi``: a MultiThreadedExecutor's pool; ``single``: SingleThreadedExecutor.
``auto`` is ``events``, or ``multi`` when a node's callbacks may block (I2C
on ``smbus2``). ``BSAL_ROS_EXECUTOR`` overrides ``auto``.
"""

from __future__ import annotations

import os
import threading
import time

KINDS = ("events", "single", "multi")
ENV_VAR = "BSAL_ROS_EXECUTOR"


def resolve(kind: str, blocking_callbacks: bool) -> str:
    """The kind to build: ``kind``, or for ``auto`` the environment's choice, else
    ``multi`` if ``blocking_callbacks`` else ``events``.

    :raises ValueError: a name that is no kind."""
    if kind == "auto":
        kind = os.environ.get(ENV_VAR, "").strip() or "auto"
    if kind != "auto" and kind not in KINDS:
        raise ValueError(f"{ENV_VAR}={kind!r}: not an executor kind; "
                         f"use auto or one of {', '.join(KINDS)}")
    return ("multi" if blocking_callbacks else "events") if kind == "auto" else kind


def make(kind: str, context=None, num_threads: int = 2):
    """A new executor of ``kind`` (one of KINDS) for ``context``."""
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    if kind == "events":
        from rclpy.experimental.events_executor import EventsExecutor
        return EventsExecutor(context=context)
    if kind == "multi":
        return MultiThreadedExecutor(num_threads=num_threads, context=context)
    return SingleThreadedExecutor(context=context)


def parks_pending_tasks(executor) -> bool:
    """True when ``executor`` leaves a coroutine awaiting an unfinished future
    alone until something wakes it (rclpy's Python executors); the
    EventsExecutor re-runs it at once, a busy loop for the whole await."""
    from rclpy.executors import Executor
    return executor is None or isinstance(executor, Executor)


def drain_pool(executor, num_threads: int, timeout: float) -> bool:
    """Return True once no callback runs in a MultiThreadedExecutor's pool of
    ``num_threads`` (False: ``timeout`` s passed first); its nodes are removed.

    One task per worker meets the others at a barrier: a worker takes a task
    only after it finished its callback (guard trigger included)."""
    for node in list(executor.get_nodes()):
        executor.remove_node(node)
    barrier = threading.Barrier(num_threads + 1)

    def occupy_one_worker():
        try:
            barrier.wait(timeout)
        except threading.BrokenBarrierError:
            pass
    tasks = [executor.create_task(occupy_one_worker) for _ in range(num_threads)]
    deadline = time.monotonic() + timeout
    while not all(t.executing() or t.done() for t in tasks) and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.02)     # hands the tasks to the pool
    try:
        barrier.wait(max(0.0, deadline - time.monotonic()))
    except threading.BrokenBarrierError:
        return False
    while not all(t.done() for t in tasks) and time.monotonic() < deadline + timeout:
        time.sleep(0.005)
    return True
