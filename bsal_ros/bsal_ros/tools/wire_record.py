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
"""Record a client's session through a gateway: a recording TCP proxy on loopback.

Format (JSON lines, docs/WIRE.md): the first line is the header
``{"format": "bsal-wire/1", "protocol": "rci"|"rdi", "byteorder": "big", ...}``,
then one event per line, in the order the proxy saw them::

    {"t": 0.000, "conn": 0, "ev": "open"}
    {"t": 0.004, "conn": 0, "dir": "c2s", "hex": "0010..."}     client -> gateway
    {"t": 0.006, "conn": 0, "dir": "s2c", "hex": "0010..."}     gateway -> client
    {"t": 9.870, "conn": 0, "ev": "close", "by": "server"}

``t`` is seconds since the recording started; chunks are what one ``recv``
returned (packet boundaries are found by decoding, not by chunks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path
import socket
import threading
import time

__all__ = ["FORMAT", "Recording", "RecordingProxy", "load", "to_pcap"]

FORMAT = "bsal-wire/1"


@dataclass
class Recording:
    """A header dict and the events (dicts as in the module docstring)."""

    header: dict
    events: list = field(default_factory=list)

    def connections(self) -> list:
        """Per connection, in order of opening: [(t, dir, bytes)] of its data events."""
        conns: dict = {}
        for e in self.events:
            chunks = conns.setdefault(e["conn"], [])
            if "dir" in e:
                chunks.append((e["t"], e["dir"], bytes.fromhex(e["hex"])))
        return [conns[k] for k in sorted(conns)]

    def closes(self) -> dict:
        """conn -> who closed it ("client", "server") where recorded."""
        return {e["conn"]: e.get("by") for e in self.events if e.get("ev") == "close"}

    def dump(self, path) -> None:
        """Write the JSON-lines file."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(self.header, sort_keys=True) + "\n")
            for e in self.events:
                f.write(json.dumps(e, sort_keys=True) + "\n")


def load(path) -> Recording:
    """Read a recording; raises ValueError on a file of another format."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    if header.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} recording")
    return Recording(header, [json.loads(ln) for ln in lines[1:] if ln.strip()])


def to_pcap(rec: Recording, path) -> int:
    """Write ``rec`` as a pcap (synthetic TCP/IP headers); returns the frame count."""
    from .wire_pcap import write_sessions

    # the well-known port, whatever port the recording used: the dissector's default
    port = {"rci": 7650, "rdi": 7651}[rec.header["protocol"]]
    return write_sessions(path, [{"events": c, "server": ("127.0.0.1", port)}
                                 for c in rec.connections() if c])


class RecordingProxy:
    """Listen on 127.0.0.1:``listen_port`` (0: any), forward each connection to
    ``target`` and record both directions. ``close()`` stops it; every socket
    has a timeout, so the threads end by themselves.

    With ``on_event``, each event is handed to ``on_event(event)`` as it
    happens, in order (under the proxy's lock), instead of being kept in the
    recording (brak_record: a long session holds no memory); a connection the
    target refuses is then an event too, ``{"ev": "unreachable", "error": ...}``."""

    def __init__(self, target: tuple, protocol: str, listen_port: int = 0,
                 byteorder: str = "big", note: str = "", on_event=None):
        self.target = target
        self._on_event = on_event
        self.recording = Recording({"format": FORMAT, "protocol": protocol,
                                    "byteorder": byteorder, "gateway_port": target[1],
                                    "note": note})
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self._conns = 0
        self._open = 0
        self._stop = threading.Event()
        self._threads: list = []
        self._srv = socket.create_server(("127.0.0.1", listen_port))
        self._srv.settimeout(0.2)
        self.port = self._srv.getsockname()[1]
        self._spawn(self._accept)

    def _spawn(self, fn, *args):
        t = threading.Thread(target=fn, args=args, daemon=True)
        t.start()
        self._threads.append(t)

    def _event(self, **e):
        with self._lock:
            e["t"] = round(time.monotonic() - self._t0, 6)
            if self._on_event is None:
                self.recording.events.append(e)
            else:
                self._on_event(e)

    @property
    def finished(self) -> int:
        """Connections opened and closed so far."""
        with self._lock:
            return self._conns - self._open

    def _accept(self):
        while not self._stop.is_set():
            try:
                client, _ = self._srv.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError as exc:
                client.close()
                if self._on_event is not None:
                    self._event(ev="unreachable", error=exc.strerror or str(exc))
                continue
            with self._lock:
                conn = self._conns
                self._conns += 1
                self._open += 1
            self._event(conn=conn, ev="open")
            state = {"done": 0, "by": None}
            self._spawn(self._pump, conn, client, server, "c2s", state)
            self._spawn(self._pump, conn, server, client, "s2c", state)

    def _pump(self, conn, src, dst, direction, state):
        # one direction; at its EOF the other side gets a half-close, and the
        # connection is recorded closed when both directions ended
        src.settimeout(0.2)
        try:
            while not self._stop.is_set():
                try:
                    data = src.recv(65536)
                except socket.timeout:
                    continue
                except OSError:
                    data = b""
                if not data:
                    break
                self._event(conn=conn, dir=direction, hex=data.hex())
                dst.sendall(data)
        except OSError:
            pass
        with self._lock:
            state["done"] += 1
            first = state["done"] == 1
            if first:
                state["by"] = "client" if direction == "c2s" else "server"
        if first:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return
        self._event(conn=conn, ev="close", by=state["by"])
        with self._lock:
            self._open -= 1
        for s in (src, dst):
            s.close()

    def wait_finished(self, n: int, timeout: float) -> bool:
        """Wait until ``n`` connections were opened and closed (bounded)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.finished >= n:
                return True
            time.sleep(0.05)
        return False

    def close(self) -> Recording:
        """Stop accepting and pumping; returns the recording."""
        self._stop.set()
        self._srv.close()
        for t in self._threads:
            t.join(timeout=2)
        return self.recording
