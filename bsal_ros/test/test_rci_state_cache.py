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

"""The RCI gateway's state cache (nodes/rci_state_cache.py) without ROS: the
orderings a loaded executor produces, one by one (issue 21).

The hardware node answers ``get_device_states`` from its newest board reading;
the same reading, and older ones, may still be on their way on the
``device_states`` topic, and a subscription callback can run after the service
answer. Readings are ordered by when their content was read, never by when the
request went out, so a late message never takes a read back in time."""

from __future__ import annotations

import time

from bsal_ros.core.device_state import DeviceState
from bsal_ros.nodes.rci_state_cache import StateCache

ENC = "relative_encoder"


def reading(count: int, stamp: float) -> DeviceState:
    return DeviceState(device_class=ENC, id=0, on=True, stamp=stamp, count=count)


def cache() -> StateCache:
    # generous freshness: these tests are about order and fences, not age
    return StateCache(max_age_cycles=1e6, min_age_s=1e6)


def count_read(c: StateCache):
    states = c.fresh(ENC, [0])
    return None if states is None else states[0].count


def test_a_poll_message_older_than_a_fetched_state_does_not_replace_it():
    # request at 100.0; two polls (100.01: count 5, 100.02: count 9) before the
    # node answered from the newer one; the older poll's message arrives last
    c = cache()
    c.fetched([reading(9, 100.02)], asked_at=100.0)
    c.on_states([reading(5, 100.01)])
    assert count_read(c) == 9


def test_the_poll_a_fetched_state_came_from_keeps_its_fence_time():
    # the same reading arriving on the topic after the fetch: still served,
    # and still counted as current at the request (the fence is before it)
    c = cache()
    c.fence(ENC, [0])
    fence = c.fences[(ENC, 0)]
    c.fetched([reading(9, fence - 0.5)], asked_at=fence + 0.001)
    c.on_states([reading(9, fence - 0.5)])
    assert count_read(c) == 9
    assert c.fenced_reads == 0


def test_a_newer_poll_replaces_a_fetched_state():
    c = cache()
    c.fetched([reading(9, 100.02)], asked_at=100.0)
    c.on_states([reading(12, 100.04)])
    assert count_read(c) == 12


def test_a_reading_from_before_a_fence_is_not_served():
    c = cache()
    c.on_states([reading(30, 50.0)])
    assert count_read(c) == 30
    c.fence(ENC, [0])          # now (wall time), long after 50.0
    assert count_read(c) is None
    assert c.fenced_reads == 1


def test_a_fetch_asked_before_a_fence_does_not_satisfy_it():
    # a request that went out before the command was answered may carry the old
    # state: its answer is kept for ordering but the fence still sends the next
    # read to the hardware node
    c = cache()
    c.fence(ENC, [0])
    fence = c.fences[(ENC, 0)]
    c.fetched([reading(30, fence - 1.0)], asked_at=fence - 0.5)
    assert count_read(c) is None


def test_a_fetch_never_replaces_a_newer_reading():
    c = cache()
    c.on_states([reading(12, 100.04)])
    c.fetched([reading(9, 100.02)], asked_at=100.0)
    assert count_read(c) == 12


def test_an_older_poll_never_replaces_a_newer_one():
    c = cache()
    c.on_states([reading(12, 100.04)])
    c.on_states([reading(9, 100.02)])
    assert count_read(c) == 12


def test_a_fetched_state_replaces_an_older_poll_that_arrived_while_it_was_asked():
    # request at 100.0; a poll read at 100.01 (count 5) arrives before the answer,
    # which the node took from its newer poll of 100.06 (count 11)
    c = cache()
    c.on_states([reading(5, 100.01)])
    c.fetched([reading(11, 100.06)], asked_at=100.0)
    assert count_read(c) == 11


# ---- issue 31: the command's answer carries the post-command states -------------
def test_a_command_answer_serves_the_next_read_without_a_fetch():
    c = cache()
    c.on_states([reading(30, 50.0)])
    c.answered(ENC, [0], [reading(0, time.time())])
    assert count_read(c) == 0
    assert c.fenced_reads == 0


def test_a_poll_from_before_the_command_arriving_after_its_answer_is_not_served():
    c = cache()
    t = time.time()
    c.answered(ENC, [0], [reading(0, t)])
    c.on_states([reading(30, t - 0.01)])
    assert count_read(c) == 0


def test_a_reading_taken_after_the_command_that_came_first_stays_and_is_served():
    # the poll after the command reached the gateway before the command's answer
    # (which came late: the command was applied 1 s before the answer arrived):
    # newer content, so it reflects the command; the fence must not send the read
    # to the hardware node, and the older answer must not replace it
    c = cache()
    t = time.time() - 1.0
    c.on_states([reading(3, t + 0.01)])
    c.answered(ENC, [0], [reading(0, t)])
    assert count_read(c) == 3
    assert c.fenced_reads == 0


def test_an_answer_without_states_leaves_the_devices_fenced():
    # a refused command, or no answer at all: the next read asks the hardware node
    c = cache()
    c.on_states([reading(30, 50.0)])
    c.answered(ENC, [0], [])
    assert count_read(c) is None


def test_a_reset_answer_fences_every_class_and_serves_its_states():
    c = cache()
    sonar = DeviceState(device_class="ultrasonic", id=2, on=True, stamp=50.0)
    c.on_states([reading(30, 50.0), sonar])
    t = time.time()
    c.answered("", None, [reading(0, t)])
    assert count_read(c) == 0
    assert c.fresh("ultrasonic", [2]) is None


def test_a_kept_answer_follows_every_change_and_ages_out(monkeypatch):
    # fresh() keeps its answer between two changes (issue 31): a new reading,
    # a fetched state, a fence, or age each make it answer anew
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    c = StateCache(max_age_cycles=1.5, min_age_s=0.05)
    c.on_states([reading(1, 100.0)])
    kept = c.fresh(ENC, [0])
    assert kept[0].count == 1 and c.fresh(ENC, [0]) is kept
    c.on_states([reading(2, 100.1)])
    assert count_read(c) == 2
    c.fetched([reading(3, 100.2)], asked_at=100.15)
    assert count_read(c) == 3
    c.fence(ENC, [0])
    assert count_read(c) is None
    c.answered(ENC, [0], [reading(4, time.time() + 1.0)])
    assert count_read(c) == 4
    now[0] += 10.0                 # no reading for ten seconds: too old
    assert count_read(c) is None
