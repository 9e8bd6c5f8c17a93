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
"""The lab's legacy clients, without ROS: a control application that drives
and reads over RCI (in a thread, every answer recorded with its
``time.monotonic()``: CLOCK_MONOTONIC is the same in every namespace), an RDI
reader, and a sized TCP echo server for the bare round-trip floor."""

from __future__ import annotations

import socket
import struct
import threading
import time

from bsal_ros.protocol.constants import CStRpStatus, GetSensorStatus, MotorType, SensorType
from bsal_ros.protocol.rci import (CAcMt, CCnAc, CGtSnIq, CGtSnRp, CStMt, CStRp, CSvTm, encode_rci,
                                   IIId, MotorCommand, MotorCommandKind)
from bsal_ros.protocol.rdi import RdiDecoder
from bsal_ros.protocol.values import speedval_pack
from bsal_ros.rci.client import RciClient


def set_motor(duty: float) -> CStMt:
    """Set Motor DC 0 to ``duty`` percent, with RQ_ACK."""
    return CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                   speedval_pack(True, duty)), rq_ack=True)


def sonar_inquiry() -> CGtSnIq:
    """Get Sensor: the 12 ultrasonics' data, one group."""
    return CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)


def answer_name(pkt) -> str:
    """``ack``, ``sonar``, ``ABORT`` (any CStRp status), ``CSvTm <code>`` or the type."""
    if isinstance(pkt, CCnAc):
        return "ack"
    if isinstance(pkt, CGtSnRp):
        return "sonar"
    if isinstance(pkt, CStRp):
        return CStRpStatus(pkt.status).name
    if isinstance(pkt, CSvTm):
        return f"CSvTm {int(pkt.term_code)}"
    return type(pkt).__name__


class ControlApp:
    """One RCI session, as a legacy control application holds it: never
    reconnects; a reply may take as long as ``reply_timeout_s``."""

    def __init__(self, host: str, port: int, user: str, key_hex: str,
                 reply_timeout_s: float = 30.0, connect_deadline_s: float = 20.0):
        deadline = time.monotonic() + connect_deadline_s
        while True:
            try:
                self.rci = RciClient(host, port, timeout=5.0)
                server_id, _, _ = self.rci.handshake(user, bytes.fromhex(key_hex))
                if isinstance(server_id, IIId):
                    break
                self.rci.close()
                why = repr(server_id)
            except (OSError, EOFError, TimeoutError) as exc:
                why = repr(exc)
            if time.monotonic() > deadline:
                raise RuntimeError(f"RCI login to {host}:{port} failed: {why}")
            time.sleep(0.2)
        self.reply_timeout_s = reply_timeout_s
        self.log: list[tuple[float, str, str]] = []   # (t, request, answer)
        self.ended = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def request(self, what: str, pkt, timeout: float | None = None):
        """One request and its answer, logged."""
        ans = self.rci.request(pkt, self.reply_timeout_s if timeout is None else timeout)
        self.log.append((time.monotonic(), what, answer_name(ans)))
        return ans

    def prepare(self, timeout_s: float = 20.0) -> str:
        """Switch DC motor 0 on (retried while the gateway does not see the robot yet)."""
        deadline = time.monotonic() + timeout_s
        while True:
            ans = self.request("activate", CAcMt.one(MotorType.DC, 0, 1, rq_ack=True))
            if isinstance(ans, CCnAc) or time.monotonic() > deadline:
                return answer_name(ans)
            time.sleep(0.3)

    def drive(self, duty: float, period_s: float = 0.1) -> None:
        """In a thread: Set Motor (duty, RQ_ACK) and a 12-sonar Get Sensor every period."""
        cmd, inq = set_motor(duty), sonar_inquiry()

        def run():
            try:
                while not self._stop.is_set():
                    t0 = time.monotonic()
                    for what, pkt in (("set", cmd), ("sonar", inq)):
                        if isinstance(self.request(what, pkt), CSvTm):
                            self.ended = self.log[-1][2]
                            return
                    self._stop.wait(max(0.0, period_s - (time.monotonic() - t0)))
            except (OSError, EOFError, TimeoutError) as exc:
                self.ended = repr(exc)
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def stop_driving(self) -> str:
        """End the drive loop and set the motor to 0; returns the stop's answer."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.reply_timeout_s + 5)
        if self.ended:
            return self.ended
        for _ in range(3):    # over a lossy link a command may be ABORTed: send it again
            got = answer_name(self.request("stop", set_motor(0.0)))
            if got == "ack":
                break
        return got

    def timed(self, pkt, data: bytes) -> tuple[int, object]:
        """(ns, answer) of one request sent as pre-encoded ``data`` (the bench)."""
        dec = self.rci.decoder
        if isinstance(pkt, CGtSnIq):
            dec.expect_reply(pkt)
        sock = self.rci.sock
        t0 = time.perf_counter_ns()
        sock.sendall(data)
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError("gateway closed the session")
            out = dec.feed(chunk)
            if out:
                return time.perf_counter_ns() - t0, out[0]

    def close(self) -> None:
        """Close the socket."""
        self.rci.close()


def encoded(pkt) -> bytes:
    """The packet's bytes (big endian)."""
    return encode_rci(pkt)


def rdi_kinds(host: str, port: int, seconds: float) -> dict:
    """Read an RDI stream for ``seconds``: packet kinds seen and bytes."""
    kinds: set[tuple] = set()
    got = 0
    dec = RdiDecoder()
    with socket.create_connection((host, port), timeout=5.0) as s:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            s.settimeout(max(0.05, end - time.monotonic()))
            try:
                data = s.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            got += len(data)
            kinds |= {(type(p).__name__, getattr(p, "sub_code", None)) for p in dec.feed(data)}
    return {"kinds": sorted([k, s if s is None else int(s)] for k, s in kinds), "bytes": got}


class SizedEcho:
    """TCP server: the client sends two big-endian uint32 (request size, reply
    size), then each request of that size is answered with that many bytes."""

    def __init__(self, host: str, port: int = 0):
        self.sock = socket.create_server((host, port))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _recv_exact(conn, n):
        buf = b""
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def _serve(self, conn):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            req, rep = struct.unpack("!II", self._recv_exact(conn, 8))
            reply = b"\x55" * rep
            while True:
                self._recv_exact(conn, req)
                conn.sendall(reply)
        except (EOFError, OSError):
            conn.close()


def sized_round_trips(sock: socket.socket, req: int, rep: int, n: int) -> list[int]:
    """``n`` round trips (ns) on a connection to a sized echo server whose
    sizes were sent: ``req`` bytes out, ``rep`` bytes back each.

    :raises EOFError: the server closed the connection.
    """
    out = []
    data = b"\xaa" * req
    for _ in range(n):
        t0 = time.perf_counter_ns()
        sock.sendall(data)
        got = 0
        while got < rep:
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError("echo server closed")
            got += len(chunk)
        out.append(time.perf_counter_ns() - t0)
    return out


def echo_samples(host: str, port: int, req: int, rep: int, n: int) -> list[int]:
    """``n`` round trips (ns) of ``req`` bytes out, ``rep`` bytes back."""
    with socket.create_connection((host, port), timeout=10) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(struct.pack("!II", req, rep))
        return sized_round_trips(s, req, rep, n)
