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

"""What a Foxglove client may do: the gateway's allow-lists and its TLS rule.

* Off loopback the server needs TLS (a certificate and its key, PEM): the
  start is refused otherwise, as foxglove_bridge's ``tls``, ``certfile`` and
  ``keyfile`` parameters would have it.
* Clients may publish only on the topics of ``publish_topics`` (Brak's
  ``cmd_vel``), call only the services of ``services``, and set only the
  parameters matching ``param_writes`` (none by default); reading is open.
* Off loopback, publishing and service calls are off unless
  ``remote_control`` says otherwise: a laptop on the lab network watches, it
  does not drive, until someone decides it may (docs/SECURITY.md).

Names are ROS names: relative ones are resolved in the gateway's namespace.
"""

from __future__ import annotations

from dataclasses import dataclass
import fnmatch
from pathlib import Path

from bsal_ros.core.net import is_loopback


def absolute(name: str, namespace: str) -> str:
    """``name`` as an absolute ROS name in ``namespace`` ("/" or "/brak2")."""
    name = name.strip()
    if name.startswith("/"):
        return name
    ns = "/" + namespace.strip("/")
    return (ns.rstrip("/") + "/" + name) if name else ns


def name_list(text: str, namespace: str) -> tuple[str, ...]:
    """A comma-separated parameter value as absolute names, in order, once each."""
    out: list[str] = []
    for part in text.split(","):
        if part.strip() and absolute(part, namespace) not in out:
            out.append(absolute(part, namespace))
    return tuple(out)


@dataclass(frozen=True)
class Access:
    """The gateway's access rules, from its parameters."""

    host: str
    tls: bool = False
    certfile: str = ""
    keyfile: str = ""
    remote_control: bool = False
    publish_topics: tuple[str, ...] = ()
    services: tuple[str, ...] = ()
    param_writes: tuple[str, ...] = ()

    @property
    def loopback(self) -> bool:
        """The server is reachable from this machine only."""
        return is_loopback(self.host)

    def refusal(self) -> str:
        """Why the server must not start with these settings ("" : it may)."""
        if not self.loopback and not self.tls:
            return (f"foxglove gateway: host {self.host} is not loopback and tls is false: "
                    "set tls:=true with certfile and keyfile (PEM), or bind 127.0.0.1 and "
                    "reach it over SSH (docs/SECURITY.md)")
        if self.tls:
            for what, path in (("certfile", self.certfile), ("keyfile", self.keyfile)):
                if not path:
                    return f"foxglove gateway: tls is true but {what} is empty"
                if not Path(path).is_file():
                    return f"foxglove gateway: {what} {path} is not a readable file"
        return ""

    def tls_material(self) -> tuple[bytes, bytes] | None:
        """(certificate, key) bytes to serve ``wss://`` with, or None without TLS.
        OSError when a file cannot be read."""
        if not self.tls:
            return None
        return Path(self.certfile).read_bytes(), Path(self.keyfile).read_bytes()

    @property
    def control(self) -> bool:
        """Clients may publish and call services at all (loopback, or allowed off it)."""
        return self.loopback or self.remote_control

    def control_off_reason(self) -> str:
        """Why publishing and service calls are off ("" : they are on)."""
        if self.control:
            return ""
        return (f"driving and service calls are off: the gateway listens on {self.host} "
                "(not loopback) and remote_control is false")

    def may_publish(self, topic: str) -> bool:
        """A client may publish on ``topic`` (an absolute name)."""
        return self.control and topic in self.publish_topics

    def may_call(self, service: str) -> bool:
        """A client may call ``service`` (an absolute name)."""
        return self.control and service in self.services

    def may_set(self, parameter: str) -> bool:
        """A client may set ``parameter`` (``"/node.name"``, as the gateway names them)."""
        return self.control and any(fnmatch.fnmatchcase(parameter, pattern)
                                    for pattern in self.param_writes)
