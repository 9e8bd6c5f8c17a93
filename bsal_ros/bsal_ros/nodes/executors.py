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

"""Which rclpy executor spins a process's nodes, how it is built and how its
thread pool is emptied before the nodes are destroyed.

Kinds (``docs/BENCHMARKS.md``, bench_rci, has the figures behind the choice):

* ``events``: rclpy's ``EventsExecutor`` (``rclpy.experimental``, C++). Each
  ready entity is one event on a queue, no wait set is rebuilt per callback:
  an acked RCI Set Motor costs about a quarter of what it costs under the
  single-threaded executor in one process, and idle CPU halves. Every
  callback runs in the one spinning thread and callback groups are ignored,
  so a callback that blocks (an I2C write with retries on a sick bus) stalls
  all others.
* ``single``: ``SingleThreadedExecutor``; same one-thread rule, slower.
* ``multi``: ``MultiThreadedExecutor`` with a thread pool: a blocking
  callback stalls only its own group.

``auto`` picks ``events`` unless some node of the process has callbacks that
block (the hardware node on a real I2C bus, ``smbus2``), then ``multi``. The
environment variable ``BSAL_ROS_EXECUTOR`` (auto|events|single|multi) sets
the kind of every executable started with ``auto``; ``brak_bringup
--executor`` sets it for the one-process bring-up.
"""

from __future__ import annotations

import os
import threading
import time

KINDS = ("events", "single", "multi")
ENV_VAR = "BSAL_ROS_EXECUTOR"


def requested_kind(kind: str = "auto") -> str:
    """``kind``, or when it is ``auto`` the environment's choice (``auto`` if unset).
    Raises ValueError on a name that is not a kind."""
    if kind == "auto":
        kind = os.environ.get(ENV_VAR, "").strip() or "auto"
    if kind != "auto" and kind not in KINDS:
        raise ValueError(f"{ENV_VAR}={kind!r}: not an executor kind; "
                         f"use auto or one of {', '.join(KINDS)}")
    return kind


def resolve(kind: str, blocking_callbacks: bool) -> str:
    """The kind to build for a process whose callbacks may block (or not)."""
    kind = requested_kind(kind)
    if kind == "auto":
        return "multi" if blocking_callbacks else "events"
    return kind


def make(kind: str, context=None, num_threads: int = 2):
    """Build an executor of ``kind`` (a resolved kind) for ``context``."""
    if kind == "events":
        from rclpy.experimental.events_executor import EventsExecutor
        executor = EventsExecutor(context=context)
        _reassert_signal_handlers()
        return executor
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    if kind == "multi":
        return MultiThreadedExecutor(num_threads=num_threads, context=context)
    if kind == "single":
        return SingleThreadedExecutor(context=context)
    raise ValueError(f"unknown executor kind {kind!r}")


def _reassert_signal_handlers() -> None:
    """Put the Python-level SIGINT/SIGTERM handlers back at the C level.

    Newer EventsExecutors install an asio signal set for SIGINT and SIGTERM
    in their constructor, which replaces Python's own C handler and would
    shut the context down from the signal (before the gateways' safety stops
    ran). rclpy 9.1.2 does not; re-installing what Python already has is
    harmless either way. Only the main thread may set handlers."""
    if threading.current_thread() is not threading.main_thread():
        return
    import signal
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler is not None:
            signal.signal(sig, handler)


def parks_pending_tasks(executor) -> bool:
    """True when ``executor`` leaves a coroutine that awaits an unfinished
    future alone until something wakes it (rclpy's own Python executors).

    The EventsExecutor of rclpy 9 re-queues such a task at once after every
    step, so an ``await`` of a future that completes seconds later turns into
    a busy loop: 100 % of a core for the whole wait (measured: 1.0 s of CPU
    for a 1 s await). Code that awaits for long checks this first
    (:class:`~bsal_ros.nodes.homing_action.HomingSupervisor`)."""
    from rclpy.executors import Executor
    return executor is None or isinstance(executor, Executor)


def drain_pool(executor, num_threads: int, timeout: float) -> bool:
    """Return once no callback runs in a MultiThreadedExecutor's thread pool
    (False: ``timeout`` passed first).

    The nodes are removed, so nothing new is handed out; then one task per
    worker thread is handed to the pool and all of them meet at a barrier:
    the pool takes work in order and each worker finishes a callback (guard
    trigger included) before it takes the next one, so when every worker
    holds one of these tasks, no earlier callback is running any more.
    Public rclpy API only. Needed because ``Executor.shutdown()`` destroys
    the executor's guard condition before it joins the pool, and a callback
    still in the pool triggers that guard when it ends."""
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
    while (not all(t.executing() or t.done() for t in tasks)
           and time.monotonic() < deadline):
        executor.spin_once(timeout_sec=0.02)     # hands the tasks to the pool
    try:
        barrier.wait(max(0.0, deadline - time.monotonic()))
    except threading.BrokenBarrierError:
        return False
    while not all(t.done() for t in tasks) and time.monotonic() < deadline + timeout:
        time.sleep(0.005)
    return True
