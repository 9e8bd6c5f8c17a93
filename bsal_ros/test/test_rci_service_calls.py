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

"""The RCI gateway's service calls (issue 40): public rclpy only.

The gateway's clients live on its own node (an executor spins it);
``RosRobotPort._request`` calls ``call_async`` from the asyncio thread and
awaits the rclpy future through :class:`FutureBridge`, so while one answer is
awaited the loop serves everything else. Before, a node no executor spun took
its answers in ``rcl_wait`` on the asyncio thread through rclpy's private
``rclpy.impl`` (issue 31's direct calls).

The server here is a real rclpy service in this process, spun by a
MultiThreadedExecutor in a thread with a reentrant group: ``SetBool`` with
data=True is answered after SLOW_S, data=False at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
import re
import subprocess
import threading
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

from bsal_ros.nodes.rci_ros_port import FutureBridge  # noqa: E402
from bsal_ros.rci.port import PortUnavailable  # noqa: E402

pytestmark = pytest.mark.ros

SLOW_S = 0.2
PACKAGE = Path(__file__).resolve().parents[1]
#: an import or use of a private rclpy name: rclpy.impl, _rclpy, rclpy._anything
PRIVATE = r"rclpy\.impl|\b_rclpy|rclpy\._"


def test_the_package_imports_no_private_rclpy_name():
    """``git grep`` over the package's code (a plain scan outside a git work tree)."""
    assert re.search(PRIVATE, "from rclpy.impl.implementation_singleton import "
                              "rclpy_implementation as _rclpy")      # it can fail
    run = subprocess.run(["git", "grep", "-n", "-E", PRIVATE, "--", "bsal_ros/*.py"],
                         cwd=PACKAGE, capture_output=True, text=True)
    if run.returncode in (0, 1):             # 1: no line found
        found = run.stdout.splitlines()
    else:                                    # not a git work tree (a colcon build's copy)
        found = [f"{f}:{n}" for f in sorted((PACKAGE / "bsal_ros").rglob("*.py"))
                 for n, line in enumerate(f.read_text().splitlines(), 1)
                 if re.search(PRIVATE, line)]
    assert not found, found


@pytest.fixture
def rig(ros_context):
    """(a SetBool client on a node an executor spins in a thread, answered names)."""
    server = rclpy.create_node("service_calls_server", context=ros_context)
    answered = []

    def answer(req, resp):
        if req.data:
            time.sleep(SLOW_S)
        resp.success = True
        resp.message = "slow" if req.data else "fast"
        answered.append(resp.message)
        return resp
    server.create_service(SetBool, "service_calls_probe", answer,
                          callback_group=ReentrantCallbackGroup())
    owner = rclpy.create_node("service_calls_owner", context=ros_context)
    cli = owner.create_client(SetBool, "service_calls_probe",
                              callback_group=ReentrantCallbackGroup())
    executors = [MultiThreadedExecutor(num_threads=3, context=ros_context),
                 SingleThreadedExecutor(context=ros_context)]
    executors[0].add_node(server)
    executors[1].add_node(owner)
    spinners = [threading.Thread(target=ex.spin, daemon=True) for ex in executors]
    for t in spinners:
        t.start()
    assert cli.wait_for_service(timeout_sec=10.0)
    try:
        yield cli, answered
    finally:
        for ex in executors:
            ex.shutdown()
        for t in spinners:
            t.join(5.0)
        owner.destroy_node()
        server.destroy_node()


async def call(cli, data: bool, timeout: float):
    """As RosRobotPort._request: call_async, awaited through a FutureBridge."""
    bridge = FutureBridge(asyncio.get_running_loop())
    return await bridge.wait(cli.call_async(SetBool.Request(data=data)), timeout, cli.srv_name)


async def first_answer(cli):
    """One fast call, resent until answered: a new client's first answer may
    be dropped while the server has not matched its reader (test/first_answer.py)."""
    for _ in range(20):
        try:
            return await call(cli, False, 0.5)
        except PortUnavailable:
            pass
    raise AssertionError("the server never answered")


def test_the_loop_serves_others_while_an_answer_is_awaited(rig):
    cli, _ = rig
    order = []

    async def go():
        await first_answer(cli)
        asyncio.get_running_loop().call_soon(order.append, "other")
        order.append((await call(cli, True, 5.0)).message)
    asyncio.run(go())
    assert order == ["other", "slow"]


def test_no_answer_in_time_is_port_unavailable_and_a_late_one_is_dropped(rig):
    cli, answered = rig

    async def go():
        await first_answer(cli)
        with pytest.raises(PortUnavailable, match="no answer within 0.05 s"):
            await call(cli, True, 0.05)
        while "slow" not in answered:         # the late answer has come
            await asyncio.sleep(0.01)
        return (await call(cli, False, 2.0)).message
    assert asyncio.run(go()) == "fast"


def test_the_gateway_calls_the_hardware_node_from_its_own_node(ros_context):
    """Every hardware node service the RCI gateway calls has its client on
    the gateway's node, resolved in its namespace; no hidden node."""
    from rclpy.parameter import Parameter

    from bsal_ros.nodes.rci_gateway import RciGatewayNode
    gw = RciGatewayNode(context=ros_context, namespace="/service_calls_gw",
                        parameter_overrides=[Parameter("port", value=0)])
    try:
        assert sorted(c.srv_name for c in gw.clients) == [
            f"/service_calls_gw/{name}" for name in (
                "activate_devices", "clear_encoders", "get_device_states", "list_devices",
                "reset", "set_motors", "set_sonar_timing", "sim_control")] + ["renew_lease"]
    finally:
        gw.destroy_node()
