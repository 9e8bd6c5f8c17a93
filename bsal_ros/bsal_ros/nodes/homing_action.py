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

"""Steering homing, supervised for ROS: the ``home_steering`` action and the
start-up auto-home.

:class:`HomingSupervisor` runs one homing goal at a time (a second is
rejected), publishes feedback on every fresh reading and a phase change as
one log line, aborts on a timeout or a cancel, and watches the auto-home
started with the node (its outcome, done or failed with the reason, is one
log line from :meth:`HomingSupervisor.check_auto_home`).
"""

from __future__ import annotations

import threading
import time

from bsal_interfaces.action import HomeSteering
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import Executor
from rclpy.task import Future

from bsal_ros.core.result import BUSY, HARDWARE_FAULT, OK, REFUSED, Result
from bsal_ros.nodes.hardware_msgs import result_msg
from bsal_ros.nodes.ros_entities import destroy

#: seconds a homing goal's coroutine parks the EventsExecutor's thread per step
PARK_S = 0.001
#: how long the executor keeps serving after a goal ended by the stop: a result
#: request that came before the stop but is not yet taken (a loaded machine)
#: is then answered (the goal has ended: at once) before the node is destroyed
END_LINGER_S = 0.2


def parks_pending_tasks(executor) -> bool:
    """True when ``executor`` leaves a coroutine awaiting an unfinished future
    alone until something wakes it (rclpy's Python executors, which tests
    use); the EventsExecutor re-runs it at once, a busy loop for the whole await."""
    return executor is None or isinstance(executor, Executor)


class ParkedWait:
    """``await ParkedWait(future)``: wait for an rclpy future under an
    executor that re-runs a pending coroutine at once (the EventsExecutor,
    :func:`parks_pending_tasks`), without a busy loop.

    Each step sleeps ``PARK_S`` with the GIL released before it yields, so a
    homing goal (seconds) costs almost no CPU instead of a whole core. The
    price: while a goal runs, another callback may wait up to ``PARK_S``
    behind one step (the future is completed by a timer of the same thread,
    so waiting on it would not be shorter)."""

    def __init__(self, future):
        self.future = future

    def __await__(self):
        while not self.future.done():
            time.sleep(PARK_S)
            if not self.future.done():
                yield
        return self.future.result()


class HomingSupervisor:
    """The home_steering action server and the auto-home watch of one node."""

    def __init__(self, node, robot):
        self.node = node
        self.robot = robot
        self.log = node.get_logger()
        self._group = ReentrantCallbackGroup()
        self._lock = threading.Lock()
        self._goal_handle = None
        self.auto_homing = False
        self.server = ActionServer(
            node, HomeSteering, "home_steering", execute_callback=self._execute,
            goal_callback=self._goal, cancel_callback=self._cancel, callback_group=self._group)

    # ---- start-up auto-home --------------------------------------------------------
    def start_auto_home(self) -> None:
        """Home steering 0 now (the node's start-up, when auto_home is set)."""
        if self.robot.device("pservo_motor", 0) is None:
            return
        res = self.robot.start_homing(0)
        self.auto_homing = res.ok
        self.node.log_at("info" if res.ok else "warn",
                         f"auto-home: {res.message}" if res.ok
                         else f"auto-home not started: {res.message}")

    def check_auto_home(self) -> None:
        """Log the auto-home's outcome once it is known (diagnostics timer)."""
        if not self.auto_homing:
            return
        r = self.robot
        st = r.homing_status(0)
        if st["done"] or st["failed"]:
            self.auto_homing = False
            r.homing_finished(0)
            outcome = "done" if st["done"] else "failed: " + self.failure_reason(st, 0)
            self.node.log_at("info" if st["done"] else "error",
                             f"auto-home {outcome} (steering at {st['angle']:.3f} rad)")

    def failure_reason(self, st: dict, dev_id: int) -> str:
        """Why a homing failed, never empty: the robot's reason, else what the
        steering board's phase and state say (a board that cancels homing
        gives no reason of its own)."""
        if st["reason"]:
            return st["reason"]
        res, states = self.robot.get_states("pservo_motor", [dev_id])
        fault = states[0].fault if res.ok and states else ""
        if not st["up"]:
            why = "the steering board stopped answering"
        elif st["phase"] == "cancelled":
            why = ("the steering board cancelled homing (its command watchdog expired, "
                   "its motor was switched off, or homing was aborted)")
        else:
            why = f"homing ended in phase {st['phase']!r}"
        return f"{why}; board: {fault}" if fault else why

    def end_goals(self, timeout: float = 1.0) -> None:
        """Shutdown step, run while the executor still spins: abort a running
        home_steering goal and wait (at most ``timeout`` s) until its execute
        callback has answered the client, then ``END_LINGER_S`` more. A goal left
        pending when the node is destroyed has its coroutine closed by the
        garbage collector, whose clean-up then uses the destroyed action server
        (a traceback)."""
        with self._lock:
            goal = self._goal_handle
        if goal is None or goal == "reserved":
            return
        res = self.robot.abort_homing(goal.request.id)
        self.log.info(f"shutting down: home_steering {goal.request.id} aborted ({res.message})")
        deadline = time.monotonic() + timeout
        while self._goal_handle is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(END_LINGER_S)

    # ---- home_steering action ---------------------------------------------------------
    def _goal(self, goal) -> GoalResponse:
        with self._lock:
            if self._goal_handle is not None:
                self.log.warning("home_steering goal rejected: a homing goal is running")
                return GoalResponse.REJECT
            self._goal_handle = "reserved"
            return GoalResponse.ACCEPT

    def _cancel(self, goal_handle) -> CancelResponse:   # a cancel is always accepted
        return CancelResponse.ACCEPT

    async def _execute(self, goal_handle):
        req = goal_handle.request
        result = HomeSteering.Result()
        r = self.robot
        t0 = r.clock()
        try:
            with self._lock:
                self._goal_handle = goal_handle
            res = r.start_homing(req.id)
            if not res.ok:
                if res.code == BUSY and self.auto_homing:
                    res = Result(BUSY, res.message + " (start-up auto-home)")
                self.log.warning(f"home_steering {req.id} refused: {res.message}")
                goal_handle.abort()
                result.result = result_msg(res)
                result.angle = r.steer_angle()
                return result
            timeout = float(req.timeout_s) if req.timeout_s > 0 else 30.0
            self.log.info(f"home_steering {req.id}: started at {r.steer_angle():.3f} rad "
                          f"(timeout {timeout:.1f} s)")
            done = Future()
            state = {"phase": "", "stamp": None}

            def check():
                if done.done():
                    return
                st = r.homing_status(req.id)
                if goal_handle.is_cancel_requested:
                    r.abort_homing(req.id)
                    done.set_result(("cancelled", st))
                    return
                if st["fresh_stamp"] != state["stamp"]:
                    state["stamp"] = st["fresh_stamp"]
                    fb = HomeSteering.Feedback(angle=float(st["angle"]),
                                               progress=float(st["progress"]),
                                               phase=st["phase"])
                    goal_handle.publish_feedback(fb)
                if st["phase"] != state["phase"]:
                    state["phase"] = st["phase"]
                    self.log.info(f"home_steering {req.id}: phase {st['phase']} at "
                                  f"{st['angle']:.3f} rad, {100.0 * st['progress']:.0f} %")
                if st["done"]:
                    done.set_result(("done", st))
                elif st["failed"]:
                    done.set_result(("failed", st))
                elif r.clock() - t0 > timeout:
                    r.abort_homing(req.id)
                    done.set_result(("timeout", st))

            poll_s = r.device("pservo_motor", req.id).board.poll_period()
            period = min(0.05, max(0.01, poll_s / 2.0))
            timer = self.node.create_timer(period, check, callback_group=self._group)
            try:
                if parks_pending_tasks(self.node.executor):
                    outcome, st = await done
                else:
                    outcome, st = await ParkedWait(done)
            finally:
                timer.cancel()
                destroy(self.node, timer)
            result.angle = float(st["angle"])
            result.duration_s = float(r.clock() - t0)
            reason = self.failure_reason(st, req.id) if outcome == "failed" else ""
            result.result = result_msg(self._conclude(goal_handle, outcome, reason, st,
                                                      timeout, result.duration_s))
            self.node.log_at("info" if outcome == "done" else "warn",
                             f"home_steering {req.id}: {outcome}: {result.result.message}")
            return result
        finally:
            r.homing_finished(req.id)
            with self._lock:
                self._goal_handle = None

    @staticmethod
    def _conclude(goal_handle, outcome: str, reason: str, st: dict, timeout: float,
                  duration_s: float) -> Result:
        """End the goal as its outcome says; the Result the client gets."""
        if outcome == "done":
            goal_handle.succeed()
            return Result(OK, f"homed in {duration_s:.2f} s")
        if outcome == "cancelled":
            goal_handle.canceled()
            return Result(REFUSED, f"homing cancelled by the client at {st['angle']:.3f} rad")
        goal_handle.abort()
        if outcome == "timeout":
            return Result(HARDWARE_FAULT, f"homing timed out after {timeout:.1f} s")
        return Result(HARDWARE_FAULT, reason)
