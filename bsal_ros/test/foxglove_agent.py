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

"""The tests' Foxglove client: test/foxglove_js/client.js in a Node process
(Foxglove's own @foxglove/ws-protocol, @foxglove/rosmsg and
@foxglove/rosmsg2-serialization, installed in bsal_ros/web/ by make setup),
driven by JSON lines (no tests here).

    with NodeClient() as fg:
        fg.connect(url)
        fg.send("subscribe", topics=["/odom"])
        msg = fg.wait("message", lambda e: e["topic"] == "/odom")

Beside it: ROS values as the Node client prints them (:func:`plain`), a raw
WebSocket client that never reads (:class:`StalledClient`), and the bridge's
log lines (:func:`lines_with`).
"""

from __future__ import annotations

import base64
import json
import math
import os
from pathlib import Path
import shutil
import socket
import subprocess
import threading
import time

import pytest

from spun_node import SpunNode

ROOT = Path(__file__).resolve().parents[1]
CLIENT_JS = Path(__file__).resolve().parent / "foxglove_js" / "client.js"
NODE_MODULES = ROOT / "web" / "node_modules"
#: the only subprotocol foxglove-sdk's server accepts
SUBPROTOCOL = "foxglove.sdk.v1"


def node_or_skip() -> str:
    """The ``node`` executable with Foxglove's libraries installed, or a skip with the reason."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (make setup installs Debian's nodejs)")
    for package in ("@foxglove/ws-protocol", "@foxglove/rosmsg",
                    "@foxglove/rosmsg2-serialization", "ws"):
        if not (NODE_MODULES / package / "package.json").is_file():
            pytest.skip(f"{package} is not in bsal_ros/web/node_modules (make setup runs "
                        "npm ci there)")
    return node


class NodeClient:
    """One Node process running client.js; its events kept in order."""

    def __init__(self, name: str = "client", prefix: tuple = ()):
        """``prefix``: the command the Node process runs under (``ip netns exec lab``)."""
        self.name = name
        env = {**os.environ, "NODE_PATH": str(NODE_MODULES)}
        self.proc = subprocess.Popen([*prefix, node_or_skip(), str(CLIENT_JS)],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     text=True, bufsize=1)
        self.events: list[dict] = []
        self.stderr: list[str] = []
        self._cv = threading.Condition()
        self._readers = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._readers:
            t.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                event = {"ev": "unparsed", "line": line}
            event["_at"] = time.monotonic()
            with self._cv:
                self.events.append(event)
                self._cv.notify_all()
        with self._cv:
            self.events.append({"ev": "exited", "_at": time.monotonic()})
            self._cv.notify_all()

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line)

    # ---------------------------------------------------------------- commands
    def send(self, op: str, **fields) -> None:
        """One command to the client (see client.js's COMMANDS)."""
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()

    def connect(self, url: str, timeout: float = 20.0, **fields) -> dict:
        """Connect and wait for the server's channels (what the client writes with
        comes from them); returns the server's serverInfo."""
        self.send("connect", url=url, **fields)
        info = self.wait("serverInfo", timeout=timeout)
        self.wait("advertise", timeout=timeout)
        return info

    def wait_service(self, name: str, timeout: float = 20.0) -> dict:
        """Wait until the server has advertised service ``name``; its entry."""
        event = self.wait("advertiseServices", lambda e: any(s["name"] == name
                                                             for s in e["services"]),
                          timeout=timeout)
        return next(s for s in event["services"] if s["name"] == name)

    # ------------------------------------------------------------------ events
    def select(self, ev: str, pred=lambda e: True, since: int = 0) -> list[dict]:
        """Events named ``ev`` matching ``pred``, from index ``since`` on."""
        with self._cv:
            return [e for e in self.events[since:] if e["ev"] == ev and pred(e)]

    def mark(self) -> int:
        """The index of the next event (for ``since``)."""
        with self._cv:
            return len(self.events)

    def wait(self, ev: str, pred=lambda e: True, timeout: float = 20.0, since: int = 0) -> dict:
        """The first event named ``ev`` matching ``pred`` (from index ``since``);
        AssertionError naming what came instead when none comes within ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for e in self.events[since:]:
                    if e["ev"] == ev and pred(e):
                        return e
                left = deadline - time.monotonic()
                if left <= 0 or (self.events and self.events[-1]["ev"] == "exited"):
                    break
                self._cv.wait(min(left, 0.2))
        raise AssertionError(f"{self.name}: no {ev} event within {timeout} s; last events: "
                             f"{self.tail()}; stderr: {''.join(self.stderr)[-2000:]}")

    def tail(self, n: int = 12) -> list:
        """The last ``n`` events, message bodies left out (for failure messages)."""
        def short(e):
            e = {k: v for k, v in e.items() if k not in ("value", "_at")}
            for key in ("channels", "services"):
                if key in e:
                    e[key] = f"{len(e[key])} {key}"
            return e
        with self._cv:
            return [short(e) for e in self.events[-n:]]

    def channels(self) -> dict[str, dict]:
        """{topic: channel} of every channel advertised and not withdrawn."""
        out = {}
        with self._cv:
            for e in self.events:
                if e["ev"] == "advertise":
                    for ch in e["channels"]:
                        out[ch["topic"]] = ch
                elif e["ev"] == "unadvertise":
                    for ch_id in e["channelIds"]:
                        for topic in [t for t, c in out.items() if c["id"] == ch_id]:
                            del out[topic]
        return out

    def statuses(self, since: int = 0) -> list[str]:
        """The status messages the server sent, from index ``since`` on."""
        return [e["message"] for e in self.select("status", since=since)]

    def counts(self, timeout: float = 10.0) -> dict[str, int]:
        """{topic: messages received so far} of every subscription."""
        since = self.mark()
        self.send("counts")
        return self.wait("counts", since=since, timeout=timeout)["counts"]

    # --------------------------------------------------------------- life cycle
    def close(self) -> None:
        """End the Node process (its stdin closes: it exits by itself)."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for t in self._readers:
            t.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------------- values
def jsonable(value):
    """A float as client.js prints it: JSON has no NaN or infinities."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def plain(msg):
    """A ROS message (or value) as the Node client prints a decoded one: dicts of
    fields, lists for every array, JSON's numbers (a ``byte`` is a number there,
    a one-byte ``bytes`` in rclpy)."""
    if hasattr(msg, "get_fields_and_field_types"):
        return {name: plain(getattr(msg, name)) for name in msg.get_fields_and_field_types()}
    if isinstance(msg, (bytes, bytearray)):
        return msg[0] if len(msg) == 1 else list(msg)
    if isinstance(msg, (list, tuple)) or hasattr(msg, "tolist") or type(msg).__name__ == "array":
        return [plain(v) for v in (msg.tolist() if hasattr(msg, "tolist") else msg)]
    if isinstance(msg, bool):
        return msg
    if hasattr(msg, "item"):          # a numpy scalar
        return jsonable(msg.item())
    return jsonable(msg)


def first_difference(a, b, path: str = "") -> str:
    """Where two plain values first differ, and how ("" when equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'the first' if key in a else 'the second'}"
            why = first_difference(a[key], b[key], f"{path}.{key}")
            if why:
                return why
        return ""
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items against {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            why = first_difference(x, y, f"{path}[{i}]")
            if why:
                return why
        return ""
    same = a == b and (isinstance(a, bool) == isinstance(b, bool))
    return "" if same else f"{path}: {a!r} against {b!r}"


def stamp_of(value: dict) -> tuple[int, int]:
    """(sec, nanosec) of a plain message's header."""
    h = value["header"]["stamp"]
    return h["sec"], h["nanosec"]


# ---------------------------------------------------------------- raw clients
def handshake(port: int, host: str = "127.0.0.1", rcvbuf: int = 0,
              source: str = "") -> socket.socket:
    """A TCP connection (from loopback address ``source`` if given) that has done
    the WebSocket handshake (subprotocol foxglove.sdk.v1) and read the server's
    answer headers, nothing more."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    if source:
        sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect((host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {SUBPROTOCOL}\r\n"
                  "\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)          # byte by byte: nothing after the headers is read
        assert chunk, "the server closed during the handshake"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def text_frame(text: str) -> bytes:
    """A masked WebSocket text frame (clients must mask)."""
    payload = text.encode()
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        header = bytes([0x81, 0x80 | n])
    elif n < 65536:
        header = bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        header = bytes([0x81, 0x80 | 127]) + n.to_bytes(8, "big")
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class StalledClient:
    """A client that subscribes to channels and then never reads a byte: its
    socket's receive buffer fills and the server's queue for it with it."""

    def __init__(self, port: int, channel_ids, source: str = ""):
        self.sock = handshake(port, rcvbuf=4096, source=source)
        subs = [{"id": i, "channelId": c} for i, c in enumerate(sorted(channel_ids))]
        self.sock.sendall(text_frame(json.dumps({"op": "subscribe", "subscriptions": subs})))

    def close(self) -> None:
        """Drop the connection."""
        self.sock.close()


def lines_with(lines, *words) -> list[str]:
    """The log lines holding every one of ``words``."""
    return [ln for ln in lines if all(w in ln for w in words)]


# ------------------------------------------------------------------- ROS side
class RosSide(SpunNode):
    """What an rclpy node beside the bridge receives: every message of the topics
    given (``(topic, type, qos)``), kept with its arrival time, and the calls a
    test makes itself (parameters, publishers)."""

    def __init__(self, topics, name: str = "foxglove_test_watch", keep: int = 4000):
        from collections import deque
        from rclpy.node import Node
        self.lock = threading.Lock()
        self.start_context()
        self.node = Node(name, context=self.context)
        self.kept: dict[str, deque] = {}
        self.counts: dict[str, int] = {}
        for topic, msg_type, qos in topics:
            self.kept[topic] = deque(maxlen=keep)
            self.counts[topic] = 0
            self.node.create_subscription(msg_type, topic,
                                          lambda m, t=topic: self._got(t, m), qos)
        self.spin()

    def _got(self, topic: str, msg) -> None:
        with self.lock:
            self.kept[topic].append((time.monotonic(), msg))
            self.counts[topic] += 1

    def messages(self, topic: str, since: float = 0.0) -> list:
        """The messages of ``topic`` that arrived at or after monotonic ``since``."""
        with self.lock:
            return [m for at, m in self.kept[topic] if at >= since]

    def wait_message(self, topic: str, pred=lambda m: True, since: float = 0.0,
                     timeout: float = 20.0):
        """The first message of ``topic`` since ``since`` matching ``pred``."""
        def first():
            return next((m for at, m in self.kept[topic] if at >= since and pred(m)), None)
        return self.wait(f"a {topic} message", first, timeout)

    def call(self, srv_type, name: str, request, timeout: float = 10.0):
        """Call a service and return its answer."""
        client = self.node.create_client(srv_type, name)
        try:
            assert client.wait_for_service(timeout_sec=timeout), f"no {name} service"
            future = client.call_async(request)
            deadline = time.monotonic() + timeout
            while not future.done() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert future.done(), f"{name} did not answer within {timeout} s"
            return future.result()
        finally:
            self.node.destroy_client(client)

    def parameter(self, node: str, name: str):
        """A parameter's value, asked of ``node`` (its ``get_parameters`` service)."""
        from rcl_interfaces.srv import GetParameters
        from bsal_ros.nodes.foxglove_parameters import native
        answer = self.call(GetParameters, f"{node}/get_parameters",
                           GetParameters.Request(names=[name]))
        return native(answer.values[0])
