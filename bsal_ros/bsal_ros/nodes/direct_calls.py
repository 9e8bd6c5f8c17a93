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

"""Service calls whose answers the RCI gateway's asyncio thread takes itself.

Why (issue 31): through an executor an answer crosses two threads (DDS's
receive thread wakes the executor thread, whose done callback wakes the
asyncio thread) and an rclpy task; that hand-over was 0.12 ms of an acked
Set Motor's 0.55-0.77 ms (docs/BENCHMARKS.md). Here the clients live on a
node of their own that no executor spins. After sending, the asyncio thread
waits in ``rcl_wait`` (the GIL released) for at most ``inline_wait_s`` and
takes the answer; one that has not come by then is polled for every
:data:`POLL_S` while the loop serves the other sessions, until the timeout.

The price: while it waits inline, the loop serves nobody else (bounded by
``inline_wait_s``; 0 turns the inline wait off: every answer is polled for).

While an rclpy ``EventsExecutor`` in the same process spun another client
of the same service, these clients received no answers in a scratch test
(rclpy 9.1.2, rmw_fastrtps 9.3; with a SingleThreadedExecutor they did; the
cause is not known): such a call ends with "no answer" at its timeout. No
other node of the bridge has a client of these services.
"""

from __future__ import annotations

import asyncio
import time

import rclpy
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

from bsal_ros.rci.port import PortUnavailable

#: s between two looks for an answer once the inline wait is over
POLL_S = 0.001


class DirectCalls:
    """Clients on a node no executor spins; :meth:`call` from one thread only
    (the gateway's asyncio thread)."""

    def __init__(self, node, inline_wait_s: float):
        # Our own arguments only: a process-wide ``-r __node:=...`` (a launch
        # file's name=) would otherwise give this node the gateway's name.
        self.node = rclpy.create_node(f"_{node.get_name()}_calls",
                                      namespace=node.get_namespace(), context=node.context,
                                      use_global_arguments=False,
                                      start_parameter_services=False, enable_rosout=False)
        self._owner = node
        self.inline_wait_ns = int(inline_wait_s * 1e9)
        self._wait_set = _rclpy.WaitSet(0, 0, 0, 1, 0, 0, node.context.handle)
        #: (client, sequence number) of every call still waiting
        self._waiting: set[tuple[int, int]] = set()
        #: answers taken by a call other than theirs, for their caller
        self._kept: dict[tuple[int, int], object] = {}

    def client(self, srv_type, name: str):
        """A client of ``name``, resolved (and remapped) as the gateway node would."""
        return self.node.create_client(srv_type, self._owner.resolve_service_name(name))

    async def call(self, client, request, timeout: float):
        """The answer to ``request``; PortUnavailable when none came within ``timeout`` s."""
        key = (id(client), self._send(client, request))
        self._waiting.add(key)
        try:
            deadline = time.monotonic() + timeout
            answer = self._take(client, key, min(self.inline_wait_ns, int(timeout * 1e9)))
            while answer is None:
                if time.monotonic() >= deadline:
                    raise PortUnavailable(f"{client.srv_name}: no answer within {timeout:.2f} s")
                await asyncio.sleep(POLL_S)
                answer = self._take(client, key, 0)
            return answer
        finally:
            self._waiting.discard(key)
            self._kept.pop(key, None)

    @staticmethod
    def _send(client, request) -> int:
        """Publish ``request``; its sequence number."""
        with client.handle:
            return client.handle.send_request(request)

    def _take(self, client, key, wait_ns: int):
        """Our answer if it has come, waiting up to ``wait_ns`` for it; None if not."""
        kept = self._kept.pop(key, None)
        if kept is not None:
            return kept
        end = time.monotonic_ns() + wait_ns
        with client.handle:
            while True:
                answer = self._drain(client, key)
                left = end - time.monotonic_ns()
                if answer is not None or left <= 0:
                    return answer
                ws = self._wait_set
                ws.clear_entities()
                ws.add_client(client.handle)
                ws.wait(left)

    def _drain(self, client, key):
        """Take the answers that have come until ours (returned; None when it
        is not among them); another waiting call's is kept for it, one nobody
        waits for any more (its call timed out) is dropped."""
        take, response_type = client.handle.take_response, client.srv_type.Response
        while True:
            header, response = take(response_type)
            if header is None:
                return None
            other = (key[0], header.request_id.sequence_number)
            if other == key:
                return response
            if other in self._waiting:
                self._kept[other] = response

    def close(self) -> None:
        """Destroy the node and its clients (no call may be running)."""
        self.node.destroy_node()
