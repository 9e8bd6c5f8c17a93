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

"""The executor every executable builds (bsal_ros.nodes.runtime.make_executor:
rclpy's EventsExecutor), and the two behaviours of it we build around: it must
leave our SIGINT handler in place, and it re-runs a pending coroutine at once
(the homing goal's ParkedWait keeps that from becoming a busy loop)."""
import os
import signal
import time

import pytest

pytest.importorskip("rclpy")

import rclpy  # noqa: E402
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor  # noqa: E402
from rclpy.task import Future  # noqa: E402

from bsal_ros.nodes.homing_action import PARK_S, ParkedWait, parks_pending_tasks  # noqa: E402
from bsal_ros.nodes.runtime import make_executor  # noqa: E402

pytestmark = pytest.mark.ros


def test_the_executables_executor_is_events_and_only_rclpys_own_park_pending_tasks(
        ros_context):
    built = {"single": SingleThreadedExecutor(context=ros_context),
             "multi": MultiThreadedExecutor(num_threads=2, context=ros_context),
             "events": make_executor(ros_context)}
    try:
        assert type(built["events"]).__name__ == "EventsExecutor"
        assert parks_pending_tasks(built["single"])
        assert parks_pending_tasks(built["multi"])
        assert not parks_pending_tasks(built["events"])
    finally:
        for ex in built.values():
            ex.shutdown()


def test_events_executor_leaves_our_sigint_handler_in_place(ros_context):
    """The runtime's handler must see SIGINT (a newer EventsExecutor installs
    its own in its constructor and would shut the context down instead)."""
    seen = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    ex = make_executor(ros_context)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.05)
        assert seen == [signal.SIGINT]
        assert ros_context.ok()
    finally:
        signal.signal(signal.SIGINT, previous)
        ex.shutdown()


def steps_of(awaitable_of, ros_context, seconds=0.3, steps_to_done=None):
    """Run a coroutine on an EventsExecutor that awaits ``awaitable_of(future)``
    while a timer completes the future after ``seconds`` (or, with
    ``steps_to_done``, the coroutine's own step number that many does);
    return how many times the executor stepped the coroutine and the wall
    time from its first step to its end."""
    node = rclpy.create_node(f"steps_{os.getpid()}_{time.monotonic_ns()}", context=ros_context)
    ex = make_executor(ros_context)
    ex.add_node(node)
    future = Future()
    count = {"steps": 0, "done": False, "first": None, "end": None}

    class Counted:

        def __await__(self):
            inner = awaitable_of(future).__await__()
            count["first"] = time.monotonic()
            try:
                while True:
                    count["steps"] += 1
                    if count["steps"] == steps_to_done:
                        future.set_result(True)
                    yield next(inner)
            except StopIteration as stop:
                return stop.value

    async def waiter():
        await Counted()
        count["end"] = time.monotonic()
        count["done"] = True

    if steps_to_done is None:
        node.create_timer(seconds, lambda: future.done() or future.set_result(True))
    ex.create_task(waiter)
    try:
        deadline = time.monotonic() + 30
        while not count["done"] and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.1)
        assert count["done"], count
        return count["steps"], count["end"] - count["first"]
    finally:
        ex.shutdown()
        node.destroy_node()


def test_parked_wait_is_no_busy_loop_under_the_events_executor(ros_context):
    # The premise: a plain await of a pending future is re-run at once, with
    # no event in between (rclpy's own executors would park it): it reaches
    # its 2000th step, which alone completes the future.
    plain, _ = steps_of(lambda f: f, ros_context, steps_to_done=2000)
    assert plain == 2000
    # Each parked step sleeps PARK_S (at least, whatever the load) before it
    # yields: the steps cannot outnumber the time they took over PARK_S (a
    # busy loop takes a step in microseconds: tens of thousands here).
    parked, took = steps_of(ParkedWait, ros_context)
    assert 1 <= parked <= took / PARK_S + 1, (parked, took)
