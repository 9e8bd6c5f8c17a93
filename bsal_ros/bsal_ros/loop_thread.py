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

"""An asyncio event loop in its own thread: start, hand it work, stop it in bounded time.

The RCI and RDI gateways serve their sockets from an asyncio loop while the
rclpy executor runs in other threads. Both start, feed and stop that loop the
same way, so the way lives here once:

    lt = LoopThread("rdi-asyncio")
    ports = lt.start(open_streams(), timeout=10.0)   # runs the coroutine in the loop
    lt.call_soon(state.update, values)               # from any thread, never blocks
    lt.run(coro, timeout=5.0)                        # from any thread, waits for the result
    lt.stop(close_streams, timeout=3.0)              # close, cancel the rest, join

It imports no ROS, so the no-ROS layers (``bsal_ros.rdi``) can use it too;
that is why it lives at the package top and not under ``bsal_ros/nodes``.

Bounds: ``stop(closing, timeout)`` gives ``closing()`` at most ``timeout``
seconds, then cancels every task still pending (they get
``CANCEL_GRACE_S`` to finish), closes the loop and joins the thread, so it
returns within about ``timeout + CANCEL_GRACE_S + 0.5`` seconds even if a
coroutine misbehaves. The thread is a daemon: a loop stuck in blocking code
cannot keep the process alive after ``stop`` gave up on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import Any, Awaitable, Callable, Coroutine, TypeVar

__all__ = ["LoopThread", "CANCEL_GRACE_S"]

T = TypeVar("T")

#: seconds the tasks still pending after ``closing()`` get to handle their cancellation
CANCEL_GRACE_S = 1.0


class LoopThread:
    """One asyncio event loop running ``run_forever`` in one daemon thread."""

    def __init__(self, name: str):
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._running = threading.Event()
        self._stopping = False
        self._lock = threading.Lock()
        #: what went wrong while closing (``None``: closed cleanly); for the caller's log
        self.close_error: BaseException | None = None

    # ------------------------------------------------------------------ life
    def start(self, opening: Coroutine[Any, Any, T] | None = None,
              timeout: float = 10.0) -> T | None:
        """Start the thread and the loop; run ``opening`` in it and return its
        result. If ``opening`` raises (or does not finish within ``timeout``),
        the loop is stopped again and the exception is raised here."""
        with self._lock:
            if self._thread is not None:
                if opening is not None:
                    opening.close()
                raise RuntimeError(f"{self.name}: already started")
            self.loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)
            self._thread.start()
        if not self._running.wait(timeout):
            if opening is not None:
                opening.close()
            self.stop(timeout=1.0)
            raise RuntimeError(f"{self.name}: the event loop did not start in {timeout:g} s")
        if opening is None:
            return None
        try:
            return self.run(opening, timeout)
        except BaseException:
            self.stop(timeout=1.0)
            raise

    def _main(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        loop.call_soon(self._running.set)
        try:
            loop.run_forever()
        finally:
            try:
                self._cancel_pending(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
            except Exception as exc:   # noqa: BLE001 - reported by stop(), never raised in a thread
                self.close_error = self.close_error or exc
            finally:
                self._running.clear()
                loop.close()

    @staticmethod
    def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
        tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        if not tasks:
            return
        for t in tasks:
            t.cancel()
        # Wait (bounded) so that every task's cancellation is handled and its
        # result retrieved: no "Task was destroyed but it is pending" and no
        # "exception was never retrieved" on the way out.
        gathered = asyncio.gather(*tasks, return_exceptions=True)
        try:
            loop.run_until_complete(asyncio.wait_for(gathered, CANCEL_GRACE_S))
        except asyncio.TimeoutError:
            pass

    @property
    def running(self) -> bool:
        """True while the loop runs and accepts work."""
        return self._running.is_set() and not self._stopping

    def in_loop_thread(self) -> bool:
        """True when called from the loop's own thread (waiting on it there would deadlock)."""
        return self._thread is not None and threading.current_thread() is self._thread

    # ---------------------------------------------------------------- work
    def call_soon(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Thread-safe: run ``fn(*args)`` in the loop soon. Never blocks;
        returns False (and drops the call) when the loop is not running."""
        loop = self.loop
        if loop is None or not self._running.is_set():
            return False
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:        # closed between the check and the call
            return False
        return True

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future:
        """Thread-safe: schedule ``coro`` in the loop; a concurrent future of its result."""
        loop = self.loop
        if loop is None or not self._running.is_set():
            coro.close()
            raise RuntimeError(f"{self.name}: the event loop is not running")
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coro`` in the loop from another thread and wait for its result
        (at most ``timeout`` s, then it is cancelled and TimeoutError raised)."""
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError(f"{self.name}: run() from the loop's own thread would deadlock")
        fut = self.submit(coro)
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise TimeoutError(f"{self.name}: no result within {timeout:g} s") from None

    # ------------------------------------------------------------------ stop
    def stop(self, closing: Callable[[], Awaitable[Any]] | None = None,
             timeout: float = 3.0) -> bool:
        """Run ``closing()`` in the loop (at most ``timeout`` s), cancel what is
        still pending, close the loop and join the thread. Idempotent; safe
        before ``start`` and after a failed start. Returns True when the
        thread has ended (False: it is stuck in blocking code and left behind)."""
        if self.in_loop_thread():
            raise RuntimeError(f"{self.name}: stop() from the loop's own thread would deadlock")
        with self._lock:
            thread, loop = self._thread, self.loop
            first = not self._stopping
            self._stopping = True
        if thread is None:
            return True
        deadline = time.monotonic() + timeout
        if first and closing is not None and self._running.is_set():
            try:
                fut = asyncio.run_coroutine_threadsafe(
                    asyncio.wait_for(closing(), timeout), loop)
                fut.result(timeout + 0.5)
            except (concurrent.futures.TimeoutError, asyncio.TimeoutError) as exc:
                self.close_error = TimeoutError(f"{self.name}: closing took more than "
                                                f"{timeout:g} s: {exc!r}")
            except Exception as exc:   # noqa: BLE001 - closing failed: still stop the loop
                self.close_error = exc
        try:
            loop.call_soon_threadsafe(loop.stop)
        except RuntimeError:        # already closed (the thread has ended or is ending)
            pass
        thread.join(max(0.0, deadline - time.monotonic()) + CANCEL_GRACE_S + 0.5)
        return not thread.is_alive()
