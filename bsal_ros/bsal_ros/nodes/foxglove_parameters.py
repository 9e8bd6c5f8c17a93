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

"""The robot's ROS parameters, for Foxglove's parameters panel.

A mirror of every parameter of the robot's nodes (those in the gateway's
topic namespace), named ``/<node>.<parameter>`` as foxglove_bridge names
them: filled once per node from its ``list_parameters`` and
``get_parameters`` services when it appears in the graph, kept current by
``/parameter_events``, and dropped when the node leaves. A client reads the
mirror without waiting. A write is sent to the owning node's
``set_parameters`` service only for names ``param_writes`` allows (none by
default); it waits for the answer in the SDK's thread, at most
``service_timeout_s``. A write not done (not allowed, no such parameter, a
bad value, no answer, the node's refusal, or any error on the way) is told
to the clients as a status and logged, once per client and kind of refusal
(the memory of them is bounded: :data:`MAX_REFUSALS`); the client gets the
mirror's values back and the gateway goes on.
"""

from __future__ import annotations

import threading

from rcl_interfaces.msg import Parameter as RosParameter, ParameterEvent, ParameterType, \
    ParameterValue
from rcl_interfaces.srv import GetParameters, ListParameters, SetParameters
from rclpy.qos import QoSProfile, ReliabilityPolicy

from bsal_ros.nodes.ros_entities import destroy

#: (client, kind of refusal) pairs remembered for "logged once" before the memory starts again
MAX_REFUSALS = 256

#: rcl_interfaces/ParameterValue: the field holding each type's value
VALUE_FIELDS = {
    ParameterType.PARAMETER_BOOL: "bool_value",
    ParameterType.PARAMETER_INTEGER: "integer_value",
    ParameterType.PARAMETER_DOUBLE: "double_value",
    ParameterType.PARAMETER_STRING: "string_value",
    ParameterType.PARAMETER_BYTE_ARRAY: "byte_array_value",
    ParameterType.PARAMETER_BOOL_ARRAY: "bool_array_value",
    ParameterType.PARAMETER_INTEGER_ARRAY: "integer_array_value",
    ParameterType.PARAMETER_DOUBLE_ARRAY: "double_array_value",
    ParameterType.PARAMETER_STRING_ARRAY: "string_array_value",
}


def native(value: ParameterValue):
    """A ROS parameter value as a Python value (None: not set)."""
    field = VALUE_FIELDS.get(value.type)
    if field is None:
        return None
    v = getattr(value, field)
    if value.type == ParameterType.PARAMETER_BYTE_ARRAY:
        return bytes(b[0] if isinstance(b, bytes) else b for b in v)
    return list(v) if value.type >= ParameterType.PARAMETER_BOOL_ARRAY else v


def ros_value(kind: int, value) -> ParameterValue:
    """``value`` as a ROS parameter value of type ``kind``; ValueError when it is not one."""
    out = ParameterValue(type=kind)
    field = VALUE_FIELDS.get(kind)
    if field is None:
        raise ValueError("the parameter is not set")
    if kind == ParameterType.PARAMETER_DOUBLE and isinstance(value, int) \
            and not isinstance(value, bool):
        value = float(value)
    try:
        setattr(out, field, value)
    except (AssertionError, TypeError, ValueError) as exc:
        raise ValueError(f"{value!r} is not a {field.replace('_value', '')}: {exc}") from None
    return out


class ParameterMirror:
    """The parameters of the robot's nodes, as a Foxglove server serves them."""

    def __init__(self, gateway):
        self.gw = gateway
        self._lock = threading.Lock()
        self.values: dict[str, ParameterValue] = {}
        self._nodes: dict[str, dict] = {}      # node FQN -> its clients and state
        self._watched: set[str] = set()
        self._refused: set[tuple[int, str]] = set()   # (client, kind) said once
        self.active = False              # a client asked: only then are clients made
        self._loaded = threading.Event()

    def _activate(self) -> None:
        """The first client's question (SDK thread): load every node's parameters,
        waiting for them at most ``service_timeout_s`` this once."""
        with self._lock:      # two first questions at once: one load
            first, self.active = not self.active, True
        if first:
            self.gw.in_executor(self._start)
            self._loaded.wait(min(2.0, float(self.gw.p["service_timeout_s"])))

    def _start(self) -> None:
        self.gw.create_subscription(ParameterEvent, "/parameter_events", self._on_event,
                                    QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
        self.look()

    # -------------------------------------------------------------- executor
    def look(self) -> None:
        """Load the parameters of nodes new to the graph; forget those gone. Nothing
        until a client asks (an idle gateway adds no endpoint to the graph)."""
        if not self.active:
            return
        gw = self.gw
        present = set()
        for name, ns in gw.get_node_names_and_namespaces():
            fqn = f"{ns.rstrip('/')}/{name}"
            if fqn == gw.get_fully_qualified_name() or not gw.filter.wants(fqn):
                continue
            present.add(fqn)
            entry = self._nodes.get(fqn)
            if entry is None:
                entry = self._nodes[fqn] = {
                    "list": gw.create_client(ListParameters, f"{fqn}/list_parameters"),
                    "get": gw.create_client(GetParameters, f"{fqn}/get_parameters"),
                    "set": gw.create_client(SetParameters, f"{fqn}/set_parameters"),
                    "state": "new"}
            if entry["state"] == "new" and entry["list"].service_is_ready() \
                    and entry["get"].service_is_ready():
                entry["state"] = "loading"
                future = entry["list"].call_async(ListParameters.Request())
                future.add_done_callback(lambda f, n=fqn: self._listed(n, f))
        for fqn in set(self._nodes) - present:
            entry = self._nodes.pop(fqn)
            for key in ("list", "get", "set"):
                destroy(gw, entry[key])
            with self._lock:
                for name in [n for n in self.values if n.startswith(fqn + ".")]:
                    del self.values[name]
        if all(e["state"] == "loaded" for e in self._nodes.values()):
            self._loaded.set()

    def _listed(self, fqn: str, future) -> None:
        entry = self._nodes.get(fqn)
        if entry is None or future.exception() is not None:
            if entry is not None:
                entry["state"] = "new"
            return
        names = list(future.result().result.names)
        request = GetParameters.Request(names=names)
        nxt = entry["get"].call_async(request)
        nxt.add_done_callback(lambda f: self._got(fqn, names, f))

    def _got(self, fqn: str, names: list[str], future) -> None:
        entry = self._nodes.get(fqn)
        if entry is None or future.exception() is not None:
            if entry is not None:
                entry["state"] = "new"
            return
        with self._lock:
            for name, value in zip(names, future.result().values):
                self.values[f"{fqn}.{name}"] = value
        entry["state"] = "loaded"
        if all(e["state"] == "loaded" for e in self._nodes.values()):
            self._loaded.set()

    def _on_event(self, event: ParameterEvent) -> None:
        fqn = event.node
        if fqn not in self._nodes:
            return
        changed = []
        with self._lock:
            for p in list(event.new_parameters) + list(event.changed_parameters):
                key = f"{fqn}.{p.name}"
                self.values[key] = p.value
                changed.append(key)
            for p in event.deleted_parameters:
                self.values.pop(f"{fqn}.{p.name}", None)
        watched = [k for k in changed if k in self._watched]
        server = self.gw.server
        if watched and server is not None:
            server.publish_parameter_values(self.get(watched))

    # ------------------------------------------------------------ SDK threads
    def get(self, names) -> list:
        """Foxglove parameters for ``names`` (all when empty), those the mirror has."""
        self._activate()
        fg = self.gw._fg
        with self._lock:
            keys = list(names) if names else sorted(self.values)
            out = []
            for key in keys:
                value = self.values.get(key)
                if value is None:
                    continue
                v = native(value)
                if v is None:
                    continue
                kind = None
                if value.type == ParameterType.PARAMETER_DOUBLE:
                    kind = fg.ParameterType.Float64
                elif value.type == ParameterType.PARAMETER_DOUBLE_ARRAY:
                    kind = fg.ParameterType.Float64Array
                elif value.type == ParameterType.PARAMETER_BYTE_ARRAY:
                    kind = fg.ParameterType.ByteArray
                out.append(fg.Parameter(key, value=v, type=kind))
            return out

    def watch(self, names, on: bool) -> None:
        """Clients do (``on``) or no longer do want updates of ``names``."""
        if on:
            self._activate()
        with self._lock:
            (self._watched.update if on else self._watched.difference_update)(names)

    def set(self, client: int, parameters) -> list:
        """Write the allowed parameters to their nodes (waiting for each node's
        answer); returns the mirror's values of every parameter asked."""
        asked = [p.name for p in parameters]
        for p in parameters:
            try:
                kind, why = self._write(p)
            except Exception as exc:   # noqa: BLE001 - a client's write never stops the node
                kind, why = "failed", f"the write failed: {exc!r}"
            if kind:
                self._tell_once(client, kind,
                                f"client {client}: parameter {p.name} not set: {why}")
        return self.get(asked)

    def _tell_once(self, client: int, kind: str, text: str) -> None:
        """Tell ``text`` the first time ``client`` meets this ``kind`` of refusal."""
        key = (client, kind)
        with self._lock:
            first = key not in self._refused
            if first:
                if len(self._refused) >= MAX_REFUSALS:     # clients come and go
                    self._refused.clear()
                self._refused.add(key)
        if first:       # said from the executor: not from inside the SDK's own callback
            self.gw.in_executor(self.gw.tell, text)

    def _write(self, p) -> tuple[str, str]:
        """Set one parameter on its node: ("", "") or (kind of refusal, why not)."""
        gw = self.gw
        if not gw.access.may_set(p.name):
            return "not allowed", (gw.access.control_off_reason()
                                   or "not allowed (param_writes)")
        fqn, _, name = p.name.rpartition(".")
        entry = self._nodes.get(fqn)
        with self._lock:
            current = self.values.get(p.name)
        if entry is None or current is None:
            return "unknown", "no such parameter"
        try:
            value = ros_value(current.type, p.get_value())
        except ValueError as exc:
            return "value", str(exc)
        done = threading.Event()
        future = entry["set"].call_async(SetParameters.Request(
            parameters=[RosParameter(name=name, value=value)]))
        future.add_done_callback(lambda _f: done.set())
        timeout = float(gw.p["service_timeout_s"])
        if not done.wait(timeout):
            entry["set"].remove_pending_request(future)
            return "no answer", f"{fqn} did not answer within {timeout:g} s"
        result = future.result().results[0]
        if not result.successful:
            return "node refused", f"{fqn} refused it: {result.reason}"
        with self._lock:
            self.values[p.name] = value
        gw.get_logger().info(f"Foxglove gateway: client set {p.name} = {native(value)!r}")
        return "", ""
