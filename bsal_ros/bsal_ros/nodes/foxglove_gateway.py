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

"""Foxglove gateway node: Brak over Foxglove's WebSocket protocol, for Foxglove,
Lichtblick and any client of ``@foxglove/ws-protocol``, with no ROS on their side.

* **Topics.** Every topic of the robot (its namespace, and ``/tf``,
  ``/tf_static``, ``/diagnostics``, ``/rosout``) is a channel whose schema is
  the ROS 2 message definition (``ros2msg``) and whose messages are the CDR
  bytes of a raw subscription, passed through as they came. The graph is
  looked at every ``graph_period_s``: a topic that appears or leaves is
  advertised or withdrawn. The ROS subscription exists only while a client
  watches its channel, with the publishers' QoS; a latched topic's last
  messages are sent again when another client starts watching.
* **Driving.** Clients may publish on ``client_publish`` (``cmd_vel``): a CDR
  message of the type the robot subscribes with, checked by deserializing it;
  anything else is refused with a status and one log line. A client that
  stops publishing while the robot moves (unadvertise, disconnect) gets a
  zero twist sent for it; the hardware node's own ``cmd_vel_timeout`` holds
  anyway.
* **Services** (:mod:`.foxglove_services`), **parameters**
  (:mod:`.foxglove_parameters`), the **connection graph** and **assets**
  (``package://bsal_ros/...``).
* **Brak's page** (``page``, ``page_port``; :mod:`.foxglove_page`, docs/PAGE.md):
  one more client of the WebSocket server, served over HTTP(S) by this process.

Threads: the SDK's server runs in its own (Rust) threads and calls the
listener there; the listener only hands work to the executor
(``executor.create_task``, thread-safe), where every ROS entity is created
and destroyed. Subscriptions log to the SDK's channels from the executor.
Access rules: :mod:`bsal_ros.foxglove.access`; docs/SECURITY.md.

    foxglove_gateway --ros-args -p port:=8765 -p host:=127.0.0.1
"""

from __future__ import annotations

from dataclasses import dataclass
import threading
import time

from rclpy.node import Node

from bsal_ros.foxglove import sdk_log
from bsal_ros.foxglove.access import Access, name_list
from bsal_ros.foxglove.assets import AssetRefused, read_asset
from bsal_ros.foxglove.definitions import DefinitionNotFound
from bsal_ros.foxglove.topics import changes, TopicFilter, Watchers
from bsal_ros.nodes import params
from bsal_ros.nodes.foxglove_page import serve_page
from bsal_ros.nodes.gateway_params import FoxgloveGatewayParams
from bsal_ros.nodes.handoff import Handoff
from bsal_ros.nodes.preflight import destroyed_if_refused
from bsal_ros.nodes.ros_entities import destroy
from bsal_ros.nodes.ros_types import interface_class, message_definitions, publisher_qos
from bsal_ros.paths import share_dir

#: the WebSocket subprotocol of foxglove-sdk's server (docs/VISUALIZATION.md)
SUBPROTOCOL = "foxglove.sdk.v1"
#: work items waiting for the executor before message data is dropped
MAX_PENDING = 1000


def access_of(p, namespace: str) -> Access:
    """The access rules the parameters ``p`` give, names resolved in ``namespace``."""
    return Access(host=p["host"], tls=bool(p["tls"]), certfile=p["certfile"],
                  keyfile=p["keyfile"], remote_control=bool(p["remote_control"]),
                  publish_topics=name_list(p["client_publish"], namespace),
                  services=name_list(p["services"], namespace),
                  param_writes=tuple(s.strip() for s in p["param_writes"].split(",")
                                     if s.strip()))


@dataclass
class Advertised:
    """One ROS topic served as a channel."""

    topic: str
    type_name: str
    msg_class: type
    channel: object
    subscription: object = None
    latched: bool = False
    messages: int = 0


class FoxgloveGatewayNode(Node):
    """The Foxglove gateway. ``start()`` opens the server and returns its port;
    the caller spins the node in an executor."""

    @destroyed_if_refused
    def __init__(self, node_name: str = "foxglove_gateway", **kwargs):
        kwargs.setdefault("automatically_declare_parameters_from_overrides", True)
        super().__init__(node_name, **kwargs)
        self.p = p = params.declare(FoxgloveGatewayParams, self, "Foxglove gateway")
        ns = self.get_namespace()
        self.access = access_of(p, ns)
        why = self.access.refusal()
        if why:
            raise ValueError(why)
        self.filter = TopicFilter(p["topic_namespace"] or ns)
        self.definitions = message_definitions()
        self.watchers = Watchers()
        self.topics: dict[str, Advertised] = {}
        self._by_channel: dict[int, Advertised] = {}
        self._left_out: set[str] = set()       # topics said once not to be served, and why
        self.handoff = Handoff(self, "Foxglove gateway", MAX_PENDING)
        self._dirty: dict[int, bool] = {}        # channel -> a later client wants its latch
        self._dirty_lock = threading.Lock()
        self._asset_refusals: set[str] = set()
        self._graph_watchers = 0
        self._last_graph = None
        self.server = None
        self._stopped = False
        self.port = 0
        self.url = ""
        self.page = None          # Brak's page (PageServer) while it serves
        self.page_url = ""
        self.stats = {"messages": 0, "bytes": 0}
        import foxglove
        self._fg = foxglove
        # the SDK's own lines (a client's bad frames, a client that does not read): once each
        self._sdk_log = sdk_log.attach(
            lambda line: self.get_logger().warning(f"Foxglove gateway: {line}"))
        self._fg_context = foxglove.Context()
        from bsal_ros.nodes.foxglove_parameters import ParameterMirror
        from bsal_ros.nodes.foxglove_publish import ClientPublishing
        from bsal_ros.nodes.foxglove_services import ServiceRelay
        self.publishing = ClientPublishing(self)
        self.relay = ServiceRelay(self)
        self.mirror = ParameterMirror(self)
        self._graph_timer = self.create_timer(float(p["graph_period_s"]), self.look_at_graph)

    # ------------------------------------------------------------ life cycle
    def start(self) -> int:
        """Open the WebSocket server (OSError: the address or port is taken);
        returns its port. The graph is looked at once first, so the robot's
        topics are there for the first client."""
        fg = self._fg
        from bsal_ros.nodes.foxglove_listener import Listener
        caps = [fg.Capability.ConnectionGraph, fg.Capability.Parameters]
        # a capability is offered only when something may use it: a client (Brak's page)
        # reads from serverInfo whether it may drive
        if self.access.control and self.access.publish_topics:
            caps.append(fg.Capability.ClientPublish)
        if self.access.control and self.access.services:
            caps.append(fg.Capability.Services)
        tls = self.access.tls_material()
        try:
            self.server = fg.start_server(
                name=f"bsal_ros {self.get_fully_qualified_name()}",
                host=self.p["host"], port=int(self.p["port"]), capabilities=caps,
                server_listener=Listener(self), supported_encodings=["cdr"],
                asset_handler=self._asset, context=self._fg_context,
                message_backlog_size=int(self.p["client_backlog"]),
                tls_cert=tls[0] if tls else None, tls_key=tls[1] if tls else None)
        except Exception as exc:   # noqa: BLE001 - the SDK raises its own error types
            raise OSError(f"cannot start the Foxglove server on {self.p['host']}:"
                          f"{self.p['port']}: {exc}") from None
        self.port = self.server.port
        scheme = "wss" if tls else "ws"
        self.url = f"{scheme}://{self.p['host']}:{self.port}"
        self.look_at_graph()
        page = serve_page(self, scheme)
        control = self.access.control_off_reason() or (
            f"clients may publish on {', '.join(self.access.publish_topics) or 'nothing'}")
        self.get_logger().info(f"Foxglove gateway: {self.url} (subprotocol {SUBPROTOCOL}), "
                               f"{len(self.topics)} topics; {control}; {page}")
        return self.port

    def stop(self) -> None:
        """Close the server and the page, then stop any robot a client was driving
        (after the server: no client's twist can follow the zero; idempotent: the
        stop step runs it while the executor serves, destroy_node no more)."""
        if self._stopped:
            return
        self._stopped = True
        server, self.server = self.server, None
        if server is not None:
            server.stop()
        page, self.page = self.page, None
        if page is not None:
            page.stop()
        # in the executor's thread, which still serves during a stop (runtime.Composition)
        done = threading.Event()
        self.handoff.put(lambda: (self.publishing.stop_all("the gateway stops"), done.set()),
                         must=True)
        if self.executor is None or not done.wait(2.0):
            self.publishing.stop_all("the gateway stops")     # no executor serves: here

    def destroy_node(self):
        """Close the server, then destroy the node."""
        self.stop()
        sdk_log.detach(self._sdk_log)
        return super().destroy_node()

    # --------------------------------------------- hand-over to the executor
    def in_executor(self, fn, *args, data: bool = False, must: bool = False) -> None:
        """Run ``fn(*args)`` in the executor's thread, from any thread (bounded:
        :class:`~bsal_ros.nodes.handoff.Handoff`)."""
        self.handoff.put(fn, *args, data=data, must=must)

    def channel_changed(self, channel_id: int, later_client: bool) -> None:
        """A client started or stopped watching ``channel_id`` (any thread): the
        executor brings the subscriptions in line once, however many came."""
        with self._dirty_lock:
            self._dirty[channel_id] = self._dirty.get(channel_id, False) or later_client
        self.handoff.coalesce("channels", self._sync_channels)

    def _sync_channels(self) -> None:
        """Subscribe to each changed channel that a client watches, drop the
        subscription of one nobody watches, and send a latched topic's kept
        messages again for a client that came later (executor)."""
        with self._dirty_lock:
            dirty, self._dirty = self._dirty, {}
        for channel_id, later_client in dirty.items():
            adv = self._by_channel.get(channel_id)
            if adv is None:              # withdrawn meanwhile, or never ours
                self.watchers.drop(channel_id)
                continue
            watched = self.watchers.count(channel_id) > 0
            if watched and adv.subscription is None:
                self._subscribe(channel_id)      # DDS delivers a latched topic's messages
            elif watched and later_client and adv.latched:
                self._replay_latched(adv)
            elif not watched and adv.subscription is not None:
                destroy(self, adv.subscription)
                adv.subscription = None

    def tell(self, message: str, level: str = "warning", key: str | None = None) -> None:
        """One log line and the same as a status to the clients (the SDK's Python
        API has no status to a single client: it names the client instead)."""
        getattr(self.get_logger(), level)(f"Foxglove gateway: {message}")
        server = self.server
        if server is not None:
            fg_level = {"info": self._fg.StatusLevel.Info, "warning": self._fg.StatusLevel.Warning,
                        "error": self._fg.StatusLevel.Error}[level]
            server.publish_status(message, fg_level, key)

    # --------------------------------------------------------- topics (executor)
    def look_at_graph(self) -> None:
        """Advertise the robot's new topics, withdraw those gone; the services
        and the connection graph likewise (graph timer). A failure is logged once
        per kind and the next look tries again: the rest of the process goes on."""
        self.handoff.drain()
        try:
            self._look_at_graph()
        except Exception as exc:   # noqa: BLE001 - an SDK or rclpy error must not end the bridge
            self.handoff.failed("the graph look", exc)

    def _look_at_graph(self) -> None:
        wanted, mixed = self.filter.pick(self.get_topic_names_and_types())
        for topic, types in mixed:
            self._leave_out(topic, f"more than one type ({', '.join(types)})")
        for topic in [t for t in wanted if self._kept_alive_by_us(t)]:
            del wanted[topic]      # its last publisher left: our subscription is all there is
        new, gone = changes({t: a.type_name for t, a in self.topics.items()}, wanted)
        for topic in gone:
            self._withdraw(topic)
        for topic, type_name in new.items():
            self._advertise(topic, type_name)
        if self.server is not None:
            self.relay.look(self.get_service_names_and_types())
            self.mirror.look()
            if self._graph_watchers:
                self._publish_connection_graph()

    def _kept_alive_by_us(self, topic: str) -> bool:
        """A topic in the graph only through the gateway's own subscription or
        client publisher: gone for the robot (advertised or not: a withdrawn topic
        the gateway still publishes on is not advertised again next look). Only
        those topics are looked at, so an idle gateway asks nothing."""
        adv = self.topics.get(topic)
        subscribed = adv is not None and adv.subscription is not None
        if not subscribed and topic not in self.publishing.topics():
            return False
        me = (self.get_name(), self.get_namespace())
        endpoints = (self.get_publishers_info_by_topic(topic)
                     + self.get_subscriptions_info_by_topic(topic))
        return all((i.node_name, i.node_namespace) == me for i in endpoints)

    def _leave_out(self, topic: str, why: str) -> None:
        if topic not in self._left_out:
            self._left_out.add(topic)
            self.get_logger().warning(f"Foxglove gateway: topic {topic} not served: {why}")

    def _advertise(self, topic: str, type_name: str) -> None:
        msg_class = interface_class(type_name)
        if msg_class is None:
            return self._leave_out(topic, f"its type {type_name} is not importable here")
        try:
            text = self.definitions.full_text(type_name)
        except (DefinitionNotFound, ValueError) as exc:
            return self._leave_out(topic, f"no message definition: {exc}")
        fg = self._fg
        schema = fg.Schema(name=type_name, encoding="ros2msg", data=text.encode())
        channel = fg.Channel(topic, schema=schema, message_encoding="cdr",
                             context=self._fg_context)
        adv = Advertised(topic, type_name, msg_class, channel)
        self.topics[topic] = adv
        self._by_channel[channel.id()] = adv
        self._left_out.discard(topic)
        if self.watchers.count(channel.id()):
            self._subscribe(channel.id())

    def _withdraw(self, topic: str) -> None:
        adv = self.topics.pop(topic)
        cid = adv.channel.id()
        self._by_channel.pop(cid, None)
        self.watchers.drop(cid)
        if adv.subscription is not None:
            destroy(self, adv.subscription)
        adv.channel.close()

    def _subscribe(self, channel_id: int) -> None:
        adv = self._by_channel.get(channel_id)
        if adv is None or adv.subscription is not None or not self.watchers.count(channel_id):
            return
        qos, adv.latched = publisher_qos(self.get_publishers_info_by_topic(adv.topic))
        if adv.latched:
            self.watchers.keep_latched(channel_id, max(int(self.p["latched_depth"]), qos.depth))
        channel, watchers = adv.channel, self.watchers
        stats = self.stats

        def forward(data: bytes) -> None:
            now = time.time_ns()
            channel.log(data, log_time=now)
            adv.messages += 1
            stats["messages"] += 1
            stats["bytes"] += len(data)
            if adv.latched:
                watchers.remember(channel_id, data, now)

        adv.subscription = self.create_subscription(adv.msg_class, adv.topic, forward, qos,
                                                    raw=True)

    def _replay_latched(self, adv: Advertised) -> None:
        """A latched topic's kept messages again, for a client that came later
        (the others get them twice: a latched topic is state, not a stream)."""
        for data, log_time in self.watchers.latched(adv.channel.id()):
            adv.channel.log(data, log_time=log_time)

    def watch_graph(self, delta: int) -> None:
        """A client (un)subscribed to the connection graph (executor)."""
        self._graph_watchers = max(0, self._graph_watchers + delta)
        self._last_graph = None
        if self._graph_watchers:
            self._publish_connection_graph()

    def _publish_connection_graph(self) -> None:
        published, subscribed = [], []
        for topic in sorted(self.topics):
            pubs = sorted({_fqn(i) for i in self.get_publishers_info_by_topic(topic)})
            subs = sorted({_fqn(i) for i in self.get_subscriptions_info_by_topic(topic)})
            published.append((topic, pubs))
            subscribed.append((topic, subs))
        services = self.relay.providers()
        snapshot = (tuple((t, tuple(p)) for t, p in published),
                    tuple((t, tuple(s)) for t, s in subscribed),
                    tuple((s, tuple(p)) for s, p in services))
        if snapshot == self._last_graph or self.server is None:
            return
        self._last_graph = snapshot
        graph = self._fg.ConnectionGraph()
        for topic, ids in published:
            graph.set_published_topic(topic, ids)
        for topic, ids in subscribed:
            graph.set_subscribed_topic(topic, ids)
        for service, ids in services:
            graph.set_advertised_service(service, ids)
        self.server.publish_connection_graph(graph)

    # ------------------------------------------------------- assets (SDK thread)
    def _asset(self, uri: str) -> bytes | None:
        """A client's fetchAsset (an SDK thread): the file's bytes, or None (refused,
        logged once per kind of refusal)."""
        try:
            return read_asset(uri, share_dir())
        except (AssetRefused, OSError) as exc:
            kind = exc.kind if isinstance(exc, AssetRefused) else type(exc).__name__
            if kind not in self._asset_refusals and len(self._asset_refusals) < 64:
                self._asset_refusals.add(kind)
                self.get_logger().warning(f"Foxglove gateway: asset refused: {exc} (logged "
                                          "once for this kind)")
            return None


def _fqn(info) -> str:
    ns = info.node_namespace.rstrip("/")
    return f"{ns}/{info.node_name}"


def main(args=None, hard_exit: bool = True, stop=None) -> int:
    """Run the Foxglove gateway until SIGINT/SIGTERM; exit code 0 (2: it cannot
    start: a bad parameter, a non-loopback host without TLS, the port taken)."""
    from bsal_ros.nodes.preflight import one_node
    from bsal_ros.nodes.runtime import run, StartupError

    def build(nodes) -> None:
        try:
            import foxglove  # noqa: F401 - a pip package (requirements/project.txt)
        except ImportError as exc:
            raise StartupError(f"foxglove-sdk is not importable ({exc}): pip install it "
                               "(requirements/project.txt)") from None
        try:
            node = FoxgloveGatewayNode(context=nodes.context)
        except ValueError as exc:
            raise StartupError(str(exc)) from None
        nodes.add(node, stop=node.stop)
        try:
            node.start()
        except OSError as exc:
            raise StartupError(str(exc)) from None

    return run("foxglove_gateway", build, args=args, hard_exit=hard_exit,
               check=one_node("foxglove_gateway", ""), stop=stop)


if __name__ == "__main__":
    raise SystemExit(main())
