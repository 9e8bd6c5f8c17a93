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

"""brak_record's ``--wire``: the legacy sessions through recording proxies,
each packet a JSON message on a channel of its stream.

Three streams, each a proxy of :mod:`bsal_ros.tools.wire_record` on
127.0.0.1 (the same loopback-only proxy ``brak_wire record`` runs) in front
of one of the bridge's gateways; a legacy program connects to the proxy's
port instead of the gateway's, and nothing of the bridge changes:

============== ======== ============== ============
channel        protocol gateway (to)   proxy (on)
============== ======== ============== ============
/wire/rci      RCI      7650           7750
/wire/rdi_realtime RDI  7651           7751
/wire/rdi_ca   RDI      7652           7752
============== ======== ============== ============

Each connection is decoded by :class:`.wire_json.ConnectionDecoder`; every
message is handed to ``write(stream, message, log_time_ns)`` as the proxy saw
it, one stream's messages in the order of the wire. No ROS here.
"""

from __future__ import annotations

from dataclasses import dataclass
import time
from typing import Callable

from bsal_ros.foxglove.wire_json import ConnectionDecoder
from bsal_ros.tools.wire_record import RecordingProxy

#: channel prefix of the wire streams
PREFIX = "/wire/"


@dataclass(frozen=True)
class Stream:
    """One legacy stream: its name, protocol and default ports."""

    name: str
    protocol: str
    gateway_port: int
    proxy_port: int

    @property
    def topic(self) -> str:
        """Its channel's topic."""
        return PREFIX + self.name


#: the bridge's three legacy streams, in the order of the --wire-* port lists
STREAMS = (Stream("rci", "rci", 7650, 7750), Stream("rdi_realtime", "rdi", 7651, 7751),
           Stream("rdi_ca", "rdi", 7652, 7752))


def port_list(text: str, what: str) -> tuple[int, ...]:
    """Three ports ``RCI,REALTIME,CA`` (0: any free one); ValueError naming ``what``."""
    parts = [p.strip() for p in text.split(",")]
    try:
        ports = tuple(int(p) for p in parts)
    except ValueError:
        ports = ()
    if len(ports) != len(STREAMS) or not all(0 <= p < 65536 for p in ports):
        raise ValueError(f"{what} {text!r}: three ports RCI,REALTIME,CA, e.g. "
                         f"{','.join(str(s.gateway_port) for s in STREAMS)}")
    return ports


class WireTap:
    """The three proxies; :meth:`close` stops them.

    :param host: where the gateways listen (the proxies listen on 127.0.0.1).
    :param targets: the gateways' ports, in :data:`STREAMS` order.
    :param listen: the proxies' ports (0: any free one).
    :param write: ``write(stream, message, log_time_ns)``, from the proxies' threads.
    :param say: one line for a person (a connection opened or closed, a refusal).
    :raises OSError: a proxy port is taken (the proxies already opened are closed).
    """

    def __init__(self, host: str, targets, listen, write: Callable[[Stream, dict, int], None],
                 say: Callable[[str], None]):
        self._write, self._say = write, say
        self._decoders: dict = {}
        self.proxies: list[tuple[Stream, RecordingProxy]] = []
        self.packets = {s.name: 0 for s in STREAMS}
        try:
            for stream, target, port in zip(STREAMS, targets, listen):
                proxy = RecordingProxy((host, int(target)), stream.protocol, int(port),
                                       on_event=lambda e, s=stream: self._event(s, e))
                self.proxies.append((stream, proxy))
        except OSError:
            self.close()
            raise

    def describe(self) -> str:
        """``rci 127.0.0.1:7750 -> 127.0.0.1:7650, ...``: where to connect."""
        return ", ".join(f"{s.name} 127.0.0.1:{p.port} -> {p.target[0]}:{p.target[1]}"
                         for s, p in self.proxies)

    def _event(self, stream: Stream, e: dict) -> None:
        """A proxy event (its lock held): decoded, handed on. Never raises into the proxy."""
        now = time.time_ns()
        try:
            for msg in self._messages(stream, e):
                if "packet" in msg:
                    self.packets[stream.name] += 1
                self._write(stream, msg, now)
        except Exception as exc:   # noqa: BLE001 - the proxied session goes on regardless
            self._say(f"wire {stream.name}: event not recorded: {exc!r}")

    def _messages(self, stream: Stream, e: dict) -> list[dict]:
        ev = e.get("ev")
        if ev == "unreachable":
            self._say(f"wire {stream.name}: a client connected, but the gateway "
                      f"{self._target(stream)} refused it ({e['error']}); the client was "
                      "disconnected")
            return []
        conn = e["conn"]
        key = (stream.name, conn)
        if ev == "open":
            self._decoders[key] = dec = ConnectionDecoder(stream.protocol, conn)
            self._say(f"wire {stream.name}: connection {conn} opened")
            return [dec.event("open")]
        dec = self._decoders.get(key)
        if dec is None:
            return []
        if ev == "close":
            del self._decoders[key]
            self._say(f"wire {stream.name}: connection {conn} closed by the {e['by']}")
            return [dec.event("close", by=e["by"])]
        return dec.feed(e["dir"], bytes.fromhex(e["hex"]))

    def _target(self, stream: Stream) -> str:
        for s, p in self.proxies:
            if s == stream:
                return f"{p.target[0]}:{p.target[1]}"
        return "?"

    def close(self) -> None:
        """Stop the proxies (their threads end within a second; idempotent)."""
        proxies, self.proxies = self.proxies, []
        for _, proxy in proxies:
            proxy.close()
