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

"""What the Foxglove server tells the gateway, from the SDK's own threads.

foxglove-sdk calls these methods in its server's threads. Each one only
counts (the clients of a channel) and hands the work to the executor
(:class:`~bsal_ros.nodes.handoff.Handoff`: bounded; subscription changes
coalesced), where ROS entities are made and used. Two of them wait: a
parameter write, for the node that owns the parameter (at most
``service_timeout_s``, and only for names ``param_writes`` allows), and the
first question about parameters, for the mirror to load (at most 2 s, once).
"""

from __future__ import annotations


class Listener:
    """The ``foxglove.websocket.ServerListener`` of one gateway node."""

    def __init__(self, gateway):
        self.gw = gateway

    def on_subscribe(self, client, channel) -> None:
        """A client watches a channel: the first one makes the ROS subscription;
        a later one of a latched topic gets its kept messages."""
        first = self.gw.watchers.add(channel.id, client.id)
        self.gw.channel_changed(channel.id, later_client=not first)

    def on_unsubscribe(self, client, channel) -> None:
        """A client stopped watching (or left): the last one ends the subscription."""
        if self.gw.watchers.remove(channel.id, client.id):
            self.gw.channel_changed(channel.id, later_client=False)

    def on_client_advertise(self, client, channel) -> None:
        """A client will publish on a channel of its own."""
        self.gw.in_executor(self.gw.publishing.advertised, client.id, channel.id, channel.topic,
                            channel.encoding, channel.schema_name, data=True)

    def on_client_unadvertise(self, client, client_channel_id: int) -> None:
        """A client's channel is gone (withdrawn, or the client left)."""
        # never dropped: it may be the zero twist of a client that left while driving
        self.gw.in_executor(self.gw.publishing.unadvertised, client.id, client_channel_id,
                            must=True)

    def on_message_data(self, client, client_channel_id: int, data: bytes) -> None:
        """A message a client published."""
        self.gw.in_executor(self.gw.publishing.message, client.id, client_channel_id, bytes(data),
                            data=True)

    def on_get_parameters(self, client, param_names, request_id=None):
        """The parameters asked for, from the gateway's mirror (no waiting)."""
        return self.gw.mirror.get(param_names)

    def on_set_parameters(self, client, parameters, request_id=None):
        """Set the allowed ones on their nodes; returns every asked parameter's value."""
        return self.gw.mirror.set(client.id, parameters)

    def on_parameters_subscribe(self, param_names) -> None:
        """Clients want updates of these parameters."""
        self.gw.mirror.watch(param_names, True)

    def on_parameters_unsubscribe(self, param_names) -> None:
        """No client wants updates of these parameters any more."""
        self.gw.mirror.watch(param_names, False)

    def on_connection_graph_subscribe(self) -> None:
        """A first client wants the connection graph."""
        self.gw.in_executor(self.gw.watch_graph, 1)

    def on_connection_graph_unsubscribe(self) -> None:
        """The last client left the connection graph."""
        self.gw.in_executor(self.gw.watch_graph, -1)
