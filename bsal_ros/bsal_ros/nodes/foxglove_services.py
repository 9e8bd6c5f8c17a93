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

"""The robot's services, callable from Foxglove's service panel.

A service the ``services`` parameter allows is advertised while the ROS
graph offers it, with its request and response definitions (``ros2msg``) as
schemas. A call arrives in one of the SDK's blocking threads with the
request's CDR bytes: they are deserialized (a malformed request is answered
with the reason), sent with ``call_async`` on a client the executor made,
and the answer's CDR bytes go back (the ROS client is made at the first
call, so an idle gateway adds no endpoint to the graph). One deadline,
``service_timeout_s`` from the call's arrival, covers making the client,
waiting for the server and the answer: a call not answered by then is
answered with an error. So is a call that fails on the way (rclpy raising in
``call_async``, a client destroyed meanwhile): the client reads the reason as
the failure, it is logged once per client, service and kind, and the
gateway goes on.
"""

from __future__ import annotations

import threading
import time

from rclpy.serialization import deserialize_message, serialize_message

from bsal_ros.foxglove.definitions import DefinitionNotFound
from bsal_ros.nodes.ros_entities import destroy


class ServiceRelay:
    """The services a gateway advertises, and their ROS clients."""

    def __init__(self, gateway):
        self.gw = gateway
        self.advertised: dict[str, tuple[str, object, type]] = {}   # name -> (type, client, srv)
        self._left_out: set[str] = set()
        self.calls = {"answered": 0, "failed": 0}
        self._said: set[tuple] = set()     # (client, service, reason) failures logged
        self._said_lock = threading.Lock()  # calls come in the SDK's threads
        self.clock = time.monotonic         # of the calls' deadlines

    def look(self, graph) -> None:
        """Advertise the allowed services the graph offers, remove those gone (executor)."""
        gw = self.gw
        if not gw.access.control:
            return
        offered = {name: types for name, types in graph if name in gw.access.services
                   and not self._only_our_client(name)}
        for name in list(self.advertised):
            if offered.get(name) != [self.advertised[name][0]]:
                self._remove(name)
        for name, types in offered.items():
            if name not in self.advertised and len(types) == 1:
                self._add(name, types[0])

    def _only_our_client(self, name: str) -> bool:
        """The service is in the graph only through the client the gateway made for
        it: its server left, and it is gone for the robot."""
        entry = self.advertised.get(name)
        return entry is not None and entry[1] is not None and self.gw.count_services(name) == 0

    def providers(self) -> list[tuple[str, list[str]]]:
        """(service, [node FQN]) of every advertised service (connection graph)."""
        gw = self.gw
        by_node = {}
        for node, ns in gw.get_node_names_and_namespaces():
            try:
                names = gw.get_service_names_and_types_by_node(node, ns)
            except Exception:   # noqa: BLE001 - the node left between the two calls
                continue
            for service, _ in names:
                by_node.setdefault(service, []).append(f"{ns.rstrip('/')}/{node}")
        return [(s, sorted(by_node.get(s, []))) for s in sorted(self.advertised)]

    def _add(self, name: str, type_name: str) -> None:
        from bsal_ros.nodes.ros_types import interface_class
        gw, fg = self.gw, self.gw._fg
        srv = interface_class(type_name)
        try:
            request, response = (gw.definitions.full_text(f"{type_name}{part}")
                                 for part in ("_Request", "_Response"))
        except (DefinitionNotFound, ValueError) as exc:
            srv, why = None, f"no definition: {exc}"
        else:
            why = f"its type {type_name} is not importable here"
        if srv is None:
            if name not in self._left_out:
                self._left_out.add(name)
                gw.get_logger().warning(f"Foxglove gateway: service {name} not offered: {why}")
            return

        def schema(part: str, text: str):
            return fg.MessageSchema(encoding="cdr", schema=fg.Schema(
                name=f"{type_name}{part}", encoding="ros2msg", data=text.encode()))

        self.advertised[name] = (type_name, None, srv)    # its client: at the first call
        gw.server.add_services([fg.Service(
            name, schema=fg.ServiceSchema(type_name, request=schema("_Request", request),
                                          response=schema("_Response", response)),
            handler=lambda req, n=name: self.call(n, req))])

    def _remove(self, name: str) -> None:
        _, client, _ = self.advertised.pop(name)
        if self.gw.server is not None:
            self.gw.server.remove_services([name])
        if client is not None:
            destroy(self.gw, client)

    def _client(self, name: str, deadline: float):
        """The ROS client of an advertised service, made by the executor at the
        first call (an idle gateway holds no client), waited for until ``deadline``;
        None if it went away or was not made in time."""
        entry = self.advertised.get(name)
        if entry is None or entry[1] is not None:
            return entry and entry[1]
        made = threading.Event()

        def make():
            current = self.advertised.get(name)
            if current is not None and current[1] is None:
                self.advertised[name] = (current[0], self.gw.create_client(current[2], name),
                                         current[2])
            made.set()
        self.gw.in_executor(make)
        made.wait(self._left(deadline))
        entry = self.advertised.get(name)
        return entry and entry[1]

    def call(self, name: str, request) -> bytes:
        """Answer a client's call to ``name`` (an SDK thread); raises with the reason."""
        gw = self.gw
        timeout = float(gw.p["service_timeout_s"])
        deadline = self.clock() + timeout
        entry = self.advertised.get(name)
        if entry is None or not gw.access.may_call(name):
            return self._fail(name, request, f"service {name} is not offered")
        type_name, _, srv = entry
        if request.encoding != "cdr":
            return self._fail(name, request, f"encoding {request.encoding!r} refused, cdr "
                                             "expected")
        try:
            message = deserialize_message(bytes(request.payload), srv.Request)
        except Exception as exc:   # noqa: BLE001 - rclpy raises its own error for bad CDR
            return self._fail(name, request, f"the request is not a valid CDR "
                                             f"{type_name} request ({len(request.payload)} "
                                             f"bytes: {exc})")
        client = self._client(name, deadline)
        if client is None:
            return self._fail(name, request, f"service {name} is not offered")
        try:
            answer, why = self._ask(client, name, message, deadline, timeout)
        except Exception as exc:   # noqa: BLE001 - rclpy's own errors: the client gets why
            answer, why = None, f"the call failed ({type(exc).__name__}: {exc})"
        if why:
            return self._fail(name, request, why)
        self.calls["answered"] += 1
        return answer

    def _ask(self, client, name: str, message, deadline: float,
             timeout: float) -> tuple[bytes | None, str]:
        """Send ``message`` and wait for the answer until ``deadline``: (its CDR
        bytes, "") or (None, why not)."""
        # a new client's request before the server has matched it would be lost
        if not client.service_is_ready() and \
                not client.wait_for_service(timeout_sec=self._left(deadline)):
            return None, f"no server of {name} within {timeout:g} s"
        done = threading.Event()
        future = client.call_async(message)
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(self._left(deadline)):
            client.remove_pending_request(future)
            return None, f"no answer within {timeout:g} s"
        exc = future.exception()
        if exc is not None:
            return None, f"the call failed ({type(exc).__name__}: {exc})"
        return serialize_message(future.result()), ""

    def _left(self, deadline: float) -> float:
        """Seconds until ``deadline`` (0 once it passed)."""
        return max(0.0, deadline - self.clock())

    def _fail(self, name: str, request, why: str):
        """Answer the call with ``why``; log it once per client, service and reason
        (the details in brackets left out), however often the client repeats it."""
        self.calls["failed"] += 1
        key = (request.client_id, name, why.split(" (", 1)[0])
        with self._said_lock:
            first = key not in self._said
            if first:
                if len(self._said) >= 1000:     # clients come and go: forget the old ones
                    self._said.clear()
                self._said.add(key)
        if first:
            self.gw.get_logger().warning(f"Foxglove gateway: client {request.client_id} called "
                                         f"{name}: {why} (logged once for this client)")
        raise RuntimeError(f"{name}: {why}")
