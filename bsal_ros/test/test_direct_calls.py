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

"""DirectCalls (bsal_ros/nodes/direct_calls.py): the RCI gateway's service
answers taken on its asyncio thread, with no executor spinning the client.

The server is a real rclpy service in this process, spun by a
MultiThreadedExecutor in a thread with a reentrant group, so one slow answer
does not hold back another. ``SetBool`` with data=True is answered after
SLOW_S, data=False at once; the answer's message names the request.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

from bsal_ros.nodes.direct_calls import DirectCalls  # noqa: E402
from bsal_ros.rci.port import PortUnavailable  # noqa: E402

SLOW_S = 0.2


@pytest.fixture
def rig(ros_context):
    """(DirectCalls over the gateway-like node, its SetBool client, answered names)."""
    server = rclpy.create_node("direct_calls_server", context=ros_context)
    answered = []

    def answer(req, resp):
        if req.data:
            time.sleep(SLOW_S)
        resp.success = True
        resp.message = "slow" if req.data else "fast"
        answered.append(resp.message)
        return resp
    server.create_service(SetBool, "direct_calls_probe", answer,
                          callback_group=ReentrantCallbackGroup())
    ex = MultiThreadedExecutor(num_threads=3, context=ros_context)
    ex.add_node(server)
    spinner = threading.Thread(target=ex.spin, daemon=True)
    spinner.start()
    owner = rclpy.create_node("direct_calls_owner", context=ros_context)
    calls = DirectCalls(owner, inline_wait_s=0.0)
    cli = calls.client(SetBool, "direct_calls_probe")
    assert cli.wait_for_service(timeout_sec=10.0)
    try:
        yield calls, cli, answered
    finally:
        calls.close()
        ex.shutdown()
        spinner.join(5.0)
        owner.destroy_node()
        server.destroy_node()


def first_answer(calls, cli):
    """One fast call, resent until answered: a new client's first answer may
    be dropped while the server has not matched its reader (test/first_answer.py)."""
    async def go():
        for _ in range(20):
            try:
                return await calls.call(cli, SetBool.Request(data=False), 0.5)
            except PortUnavailable:
                pass
        raise AssertionError("the server never answered")
    return asyncio.run(go())


def test_the_answer_is_taken_by_the_caller_without_an_executor(rig):
    calls, cli, _ = rig
    assert first_answer(calls, cli).message == "fast"
    # no executor has the client's node: nothing but the caller can take answers
    assert calls.node.executor is None
    assert calls.node.get_name() == "_direct_calls_owner_calls"

    async def go():
        return [(await calls.call(cli, SetBool.Request(data=d), 2.0)).message
                for d in (True, False, False)]
    assert asyncio.run(go()) == ["slow", "fast", "fast"]


@pytest.mark.parametrize("inline_s", [5.0, 0.0])
def test_the_loop_waits_inline_only_within_the_budget(rig, inline_s):
    """With a budget the caller keeps the loop until its answer is in; with
    none, the loop serves others first and the answer is polled for."""
    calls, cli, _ = rig
    first_answer(calls, cli)
    calls.inline_wait_ns = int(inline_s * 1e9)
    order = []

    async def go():
        asyncio.get_running_loop().call_soon(order.append, "other")
        await calls.call(cli, SetBool.Request(data=True), 5.0)
        order.append("answer")
    asyncio.run(go())
    assert order == (["answer", "other"] if inline_s else ["other", "answer"])


def test_an_answer_taken_by_another_call_reaches_its_caller(rig):
    """B is answered at once, A after SLOW_S. A waits inline and takes B's
    answer first (the loop is blocked: B cannot look meanwhile); B must still
    get it, and each call its own."""
    calls, cli, answered = rig
    first_answer(calls, cli)
    answered.clear()

    async def go():
        b = asyncio.ensure_future(calls.call(cli, SetBool.Request(data=False), 5.0))
        await asyncio.sleep(0)            # B sent its request and looks every POLL_S
        calls.inline_wait_ns = int(5e9)
        a = (await calls.call(cli, SetBool.Request(data=True), 5.0)).message
        assert not b.done()               # B's answer waits in the kept table
        assert calls._kept
        return a, (await b).message
    assert asyncio.run(go()) == ("slow", "fast")
    assert answered == ["fast", "slow"]
    assert not calls._kept and not calls._waiting


def test_no_answer_in_time_is_port_unavailable_and_a_late_one_is_dropped(rig):
    calls, cli, _ = rig
    first_answer(calls, cli)

    async def go():
        with pytest.raises(PortUnavailable, match="no answer within 0.05 s"):
            await calls.call(cli, SetBool.Request(data=True), 0.05)
        await asyncio.sleep(SLOW_S * 2)   # the late "slow" answer has come by now
        return (await calls.call(cli, SetBool.Request(data=False), 2.0)).message
    assert asyncio.run(go()) == "fast"
    assert not calls._kept and not calls._waiting


def test_the_gateway_calls_the_hardware_node_through_its_calls_node(ros_context):
    """Every hardware node service the RCI gateway calls has its client on
    the hidden calls node; the gateway's own node keeps only the lease
    renewal's (a timer of the executor calls it)."""
    from rclpy.parameter import Parameter

    from bsal_ros.nodes.rci_gateway import RciGatewayNode
    gw = RciGatewayNode(context=ros_context, namespace="/direct_calls_gw",
                        parameter_overrides=[Parameter("port", value=0)])
    try:
        calls = gw.robot.calls
        assert calls.node.get_fully_qualified_name() == "/direct_calls_gw/_rci_gateway_calls"
        assert sorted(c.srv_name for c in calls.node.clients) == [
            f"/direct_calls_gw/{name}" for name in (
                "activate_devices", "clear_encoders", "get_device_states", "list_devices",
                "reset", "set_motors", "set_sonar_timing", "sim_control")]
        assert [c.srv_name for c in gw.clients] == ["renew_lease"]
    finally:
        gw.destroy_node()
    assert not list(calls.node.clients)      # destroyed with the gateway
