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

"""A new ROS client's first answer, for processes that use a client at once.

A service (or action) server sends an answer only once its reply writer has
matched the client's reply reader. rmw_fastrtps waits the writer's
``max_blocking_time`` (100 ms) for that, then drops the answer; rclpy only
warns (``RuntimeWarning: failed to send response (timeout): client will not
receive response``). ``wait_for_service`` / ``server_is_ready`` see the
server's endpoints, not whether the server has seen ours, so a client made in
another process and used at once can wait forever when discovery is slow
(a loaded machine; upstream: ros2/ros2cli#1089, ros2/rmw_fastrtps#706).
Once a client has had one answer, the server has matched its reader and later
answers are not dropped this way.

* :func:`call_answered` resends an unanswered request (for requests that may
  run twice: reads, setting a value);
* :func:`action_ready` makes an action client's next goal safe: a probe goal
  the server ends at once is sent until it is answered, then waited for.

The tests that talk to another process's nodes, and the two-host agent, use
them; the bridge's own clients live long and retry by design (docs/DEPLOYMENT.md).
"""

from __future__ import annotations

import time
from typing import Any, Callable

#: how long one attempt waits for its answer (a matched client answers in ms)
ATTEMPT_S = 5.0

#: (future, seconds) -> whether the future is done; how the caller spins
Waiter = Callable[[Any, float], bool]


def spinning(executor) -> Waiter:
    """A waiter for a caller that spins ``executor`` itself."""
    def wait(fut, seconds: float) -> bool:
        executor.spin_until_future_complete(fut, timeout_sec=seconds)
        return fut.done()
    return wait


def polling(step_s: float = 0.01) -> Waiter:
    """A waiter for a caller whose executor spins in another thread."""
    def wait(fut, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not fut.done() and time.monotonic() < deadline:
            time.sleep(step_s)
        return fut.done()
    return wait


def _attempt_s(deadline: float, attempt_s: float) -> float:
    return max(0.0, min(attempt_s, deadline - time.monotonic()))


def call_answered(client, request, wait: Waiter, total_s: float = 60.0,
                  attempt_s: float = ATTEMPT_S):
    """``client``'s answer to ``request``, sent again after each ``attempt_s``
    without one; TimeoutError after ``total_s``."""
    deadline = time.monotonic() + total_s
    sent = 0
    while True:
        fut = client.call_async(request)
        sent += 1
        if wait(fut, _attempt_s(deadline, attempt_s)):
            return fut.result()
        client.remove_pending_request(fut)
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{client.srv_name}: no answer to {sent} requests "
                               f"in {total_s:.0f} s")


def action_ready(client, probe_goal, wait: Waiter, total_s: float = 60.0,
                 attempt_s: float = ATTEMPT_S) -> int:
    """Send ``probe_goal`` (one the server rejects or ends at once, such as a
    home_steering goal for a motor that does not exist) until it is rejected,
    or accepted and its result has come back: DDS matches the goal and the
    result service each on its own, and a result request sent before its match
    is lost (a goal then never answered, cc12). The next goal finds the server
    idle. Returns the probes sent."""
    deadline = time.monotonic() + total_s
    if not client.wait_for_server(timeout_sec=max(0.0, deadline - time.monotonic())):
        raise TimeoutError(f"action server {client._action_name} not seen in {total_s:.0f} s")
    sent = 0
    while True:
        fut = client.send_goal_async(probe_goal)
        sent += 1
        if wait(fut, _attempt_s(deadline, attempt_s)):
            handle = fut.result()
            if not handle.accepted or wait(handle.get_result_async(),
                                           _attempt_s(deadline, attempt_s)):
                return sent
        if time.monotonic() >= deadline:
            raise TimeoutError(f"action {client._action_name}: no answer to {sent} goals "
                               f"in {total_s:.0f} s")
