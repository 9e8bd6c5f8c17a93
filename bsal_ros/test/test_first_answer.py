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

"""test/first_answer.py: a request whose answer was dropped is sent again,
the dropped one leaves the client's pending table, and an action client is
made ready by a probe goal before the goal that matters.

The drop itself (rmw_fastrtps, a loaded machine) cannot be caused on demand:
the fakes below stand for a client whose first answers never come."""

import pytest

from first_answer import action_ready, call_answered


class Future:
    """An rclpy future, answered or not."""

    def __init__(self, value=None, answered=True):
        self.value, self.answered = value, answered

    def done(self):
        return self.answered

    def result(self):
        return self.value


def waiter(log):
    def wait(fut, seconds):
        log.append(seconds)
        return fut.done()
    return wait


class Client:
    srv_name = "/set_motors"

    def __init__(self, dropped):
        self.dropped, self.sent, self.removed = dropped, [], []

    def call_async(self, request):
        self.sent.append(request)
        return Future(f"answer {len(self.sent)}", answered=len(self.sent) > self.dropped)

    def remove_pending_request(self, fut):
        self.removed.append(fut)


def test_an_answered_request_is_sent_once():
    client, waits = Client(dropped=0), []
    assert call_answered(client, "req", waiter(waits), attempt_s=2.0) == "answer 1"
    assert client.sent == ["req"] and client.removed == [] and waits == [2.0]


def test_dropped_answers_are_asked_again_and_forgotten():
    client = Client(dropped=2)
    assert call_answered(client, "req", waiter([]), attempt_s=2.0) == "answer 3"
    assert client.sent == ["req"] * 3
    assert len(client.removed) == 2          # no pending entry is left behind


def test_a_client_never_answered_fails_with_the_count():
    client = Client(dropped=10 ** 6)
    with pytest.raises(TimeoutError, match=r"/set_motors: no answer to \d+ requests in 0 s"):
        call_answered(client, "req", waiter([]), total_s=0.05, attempt_s=0.01)


class Handle:
    """A goal handle: accepted or rejected."""

    def __init__(self, accepted, result_answered=True):
        self.accepted = accepted
        self.result_answered = result_answered
        self.result_asked = 0

    def get_result_async(self):
        self.result_asked += 1
        return Future("result", answered=self.result_answered)


class ActionClient:
    _action_name = "home_steering"

    def __init__(self, dropped, accepted=True, seen=True, results_lost=0):
        self.dropped, self.accepted, self.seen = dropped, accepted, seen
        self.results_lost = results_lost
        self.goals, self.handles = [], []

    def wait_for_server(self, timeout_sec):
        return self.seen

    def send_goal_async(self, goal):
        self.goals.append(goal)
        handle = Handle(self.accepted, result_answered=len(self.goals) > self.results_lost)
        self.handles.append(handle)
        return Future(handle, answered=len(self.goals) > self.dropped)


def test_the_probe_goal_is_resent_until_answered_then_waited_for():
    client = ActionClient(dropped=1)
    assert action_ready(client, "probe", waiter([]), attempt_s=1.0) == 2
    assert client.goals == ["probe", "probe"]
    assert client.handles[-1].result_asked == 1     # its end is awaited: the server is idle


def test_a_probe_whose_result_is_lost_is_sent_again():
    # the goal service answered, the result service not yet matched (cc12)
    client = ActionClient(dropped=0, results_lost=2)
    assert action_ready(client, "probe", waiter([]), attempt_s=1.0) == 3
    assert [h.result_asked for h in client.handles] == [1, 1, 1]


def test_a_rejected_probe_is_an_answer_too():
    client = ActionClient(dropped=0, accepted=False)
    assert action_ready(client, "probe", waiter([])) == 1
    assert client.handles[0].result_asked == 0


def test_no_server_no_probe():
    client = ActionClient(dropped=0, seen=False)
    with pytest.raises(TimeoutError, match="home_steering not seen"):
        action_ready(client, "probe", waiter([]), total_s=0.1)
    assert client.goals == []
