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

"""Service calls awaited from the gateway's asyncio side leave nothing behind.

The bridge once replaced the rclpy future's callback scheduler, so rclpy's
own done callback never removed the request from the client's pending table:
every Set Motor of a control application leaked about 1.3 KB. It now uses
only the future's public add_done_callback; this test keeps it leak-free.
"""
import asyncio
import threading
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_srvs.srv import Trigger

from bsal_ros.nodes.rci_ros_port import FutureBridge
from bsal_ros.rci.port import PortUnavailable

pytestmark = pytest.mark.ros


def test_completed_and_timed_out_calls_are_released(ros_context):
    node = rclpy.create_node("bridge_leak", context=ros_context)
    node.create_service(Trigger, "fast", lambda req, resp: resp)
    fast = node.create_client(Trigger, "fast")
    silent = node.create_client(Trigger, "nobody_serves_this")
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    loop = asyncio.new_event_loop()
    try:
        assert fast.wait_for_service(timeout_sec=10)
        bridge = FutureBridge(loop)

        async def calls():
            for _ in range(300):
                await bridge.wait(fast.call_async(Trigger.Request()), 5.0, "fast")
            for _ in range(3):
                with pytest.raises(PortUnavailable, match="no answer"):
                    await bridge.wait(silent.call_async(Trigger.Request()), 0.05, "silent")
        loop.run_until_complete(calls())

        deadline = time.monotonic() + 10     # rclpy's done callbacks run as executor tasks
        while (fast._pending_requests or silent._pending_requests) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(fast._pending_requests) == 0
        assert len(silent._pending_requests) == 0
    finally:
        loop.close()
        executor.shutdown()
        node.destroy_node()
