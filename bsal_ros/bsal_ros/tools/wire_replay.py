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
"""Replay the client side of a recording against a running bridge and diff the replies.

RCI: for each recorded connection the replayer connects, sends the client's
chunks in order, each no earlier than its recorded time after the connection
opened and not before the gateway has sent as many bytes as it had by then
(RCI packet sizes do not depend on values, so that is the causal order; a
wait that times out lets the diff report what went wrong), then reads until
the gateway has sent as much as recorded or closed. Both sessions are
decoded with bsal_ros.protocol and compared packet by packet.

The rule (``normalize``): may differ are the base time (CBsTm), statval
times and its on/up bits (a device's state sampled at another moment: an
encoder is "on" while its wheel turns), sensor values (ultrasonic delay,
encoder counts, accelerations, motor speed and position readings) and the
CP's auth_key/reserved bytes; may not differ are packet codes, their order
and count, forms, flags (RQ_ACK), sub-codes, ids, item counts, the statval
``ok`` bit, status, termination and capability codes, acknowledgements and
who ends the session.

RDI is a time-driven stream: the replayer reads it for the recorded duration;
must match are the first packet (the base time) and the set of packet kinds
(code, sub-code, form, ids); values and how many frames may differ.
"""

from __future__ import annotations

import socket
import time

from bsal_ros.kinds import all_kinds
from bsal_ros.protocol import (CGtMtIq, CGtSnIq, CStIq, ICaIq, RciDecoder, RdiDecoder,
                               Statval)
from bsal_ros.protocol.errors import ProtocolError

from .wire_record import Recording

__all__ = ["decode", "normalize", "diff", "readings", "replay"]

_INQUIRIES = (ICaIq, CGtMtIq, CGtSnIq, CStIq)
#: the motor code's RDI readings (rdi.state; motor kinds declare no RDI item)
_MOTOR_READINGS = frozenset({"DcMotorReading", "SteerReading", "DriveReading"})


def readings() -> frozenset[str]:
    """Item data whose values are readings of the (simulated) robot, where only
    the type must match: every registered kind's RCI DATA item and RDI
    reading (bsal_ros.kinds, a plugin's too) and the motor code's."""
    out = set(_MOTOR_READINGS)
    for k in all_kinds():
        for item in (k.rci, k.rdi):
            if item is not None and item.layout.cls is not None:
                out.add(item.layout.cls.__name__)
    return frozenset(out)


def decode(chunks, protocol: str, byteorder: str = "big") -> list:
    """[(dir, packet)] of one connection's chunks; a decode error ends the list
    with ("error", message)."""
    out = []
    if protocol == "rdi":
        dec = RdiDecoder(byteorder)
        try:
            for _, d, data in chunks:
                if d == "s2c":
                    out += [(d, p) for p in dec.feed(data)]
        except ProtocolError as exc:
            out.append(("error", str(exc)))
        return out
    ca, cp = RciDecoder(byteorder, "server"), RciDecoder(byteorder, "client")
    try:
        for _, d, data in chunks:
            for p in (ca if d == "c2s" else cp).feed(data):
                if d == "c2s" and isinstance(p, _INQUIRIES):
                    cp.expect_reply(p)
                out.append((d, p))
    except ProtocolError as exc:
        out.append(("error", str(exc)))
    return out


def _data(d):
    name = type(d).__name__
    if name in readings():
        return name
    if name == "StatusData":
        return ("statval", Statval.unpack(d.statval).ok)
    if name == "MotorData":
        return ("MotorData", d.mposval is None)
    return d


def normalize(p):
    """What must not differ between two sessions, as a comparable tuple."""
    if isinstance(p, str):
        return ("error", p)
    name = type(p).__name__
    if name == "CBsTm":
        return (name, p.rq_ack)
    if name == "IIId":
        return (name, p.vers_major, p.vers_minor, p.user_id)
    if name == "RdiBaseTime":
        return (name,)
    if name in ("RdiOrientEgo", "RdiOrientOmni"):
        return (name, Statval.unpack(p.status).ok)
    if hasattr(p, "items") and hasattr(p, "sub_code"):
        return (name, int(p.sub_code), int(p.form), getattr(p, "rq_ack", None),
                tuple((i, _data(d)) for i, d in p.items))
    if hasattr(p, "items"):
        return (name, tuple((i, _data(d)) for i, d in p.items))
    return (name,) + tuple(getattr(p, f) for f in p.__slots__)


def _kind(p):
    n = normalize(p)
    if len(n) == 5:        # id packet: code, sub-code, form, ids
        return n[:3] + (tuple(i for i, _ in n[4]),)
    return n[:1]


def diff(recorded: Recording, replayed: Recording) -> list:
    """Differences that the rule does not allow, as readable lines ([] = same)."""
    proto = recorded.header["protocol"]
    order = recorded.header.get("byteorder", "big")
    rec_c, rep_c = recorded.connections(), replayed.connections()
    out = []
    if len(rec_c) != len(rep_c):
        out.append(f"connections: recorded {len(rec_c)}, replayed {len(rep_c)}")
    for n, (a, b) in enumerate(zip(rec_c, rep_c)):
        pa = [p for d, p in decode(a, proto, order) if d != "c2s"]
        pb = [p for d, p in decode(b, proto, order) if d != "c2s"]
        if proto == "rdi":
            if not pa or not pb or _kind(pa[0]) != _kind(pb[0]):
                out.append(f"conn {n}: first packet {pa[:1]} vs {pb[:1]}")
            ka, kb = {_kind(p) for p in pa}, {_kind(p) for p in pb}
            out += [f"conn {n}: kind only recorded: {k}" for k in sorted(ka - kb, key=repr)]
            out += [f"conn {n}: kind only replayed: {k}" for k in sorted(kb - ka, key=repr)]
            continue
        for i, (x, y) in enumerate(zip(pa, pb)):
            if normalize(x) != normalize(y):
                out.append(f"conn {n} reply #{i}: recorded {x!r} replayed {y!r}")
        if len(pa) != len(pb):
            out.append(f"conn {n}: recorded {len(pa)} packets from the gateway, "
                       f"replayed {len(pb)}: "
                       f"extra {(pa[len(pb):] or pb[len(pa):])[:3]!r}")
    ca, cb = recorded.closes(), replayed.closes()
    for n in range(min(len(rec_c), len(rep_c))):
        if proto == "rci" and ca.get(n) != cb.get(n):
            out.append(
                f"conn {n}: closed by {ca.get(n)} when recorded, by {cb.get(n)} in the replay")
    return out


def _recv_some(s, out: list, stamp) -> bool:
    try:
        data = s.recv(65536)
    except socket.timeout:
        return True
    except OSError:
        data = b""
    if not data:
        return False
    out.append((stamp(), "s2c", data))
    return True


def _replay_conn(chunks, by, host, port, protocol, speed, wait_s, stamp, events, conn):
    s = socket.create_connection((host, port), timeout=5)
    s.settimeout(0.05)
    got: list = []
    events.append({"t": stamp(), "conn": conn, "ev": "open"})
    t_open = time.monotonic()
    t_first = chunks[0][0] if chunks else 0.0
    received = lambda: sum(len(c[2]) for c in got)   # noqa: E731
    alive, seen_s2c = True, 0
    closed_by = None
    for t, d, data in chunks:
        if d == "s2c":
            seen_s2c += len(data)
            continue
        deadline = time.monotonic() + wait_s
        while alive and (received() < seen_s2c
                         or time.monotonic() - t_open < (t - t_first) / speed):
            if time.monotonic() > deadline and received() < seen_s2c:
                break
            alive = _recv_some(s, got, stamp)
        if not alive:
            closed_by = "server"
            break
        got.append((stamp(), "c2s", data))
        try:
            s.sendall(data)
        except OSError:
            closed_by, alive = "server", False
            break
    total = sum(len(c[2]) for c in chunks if c[1] == "s2c")
    t_end = (chunks[-1][0] - t_first) / speed if chunks else 0.0
    deadline = time.monotonic() + wait_s
    while alive and time.monotonic() < deadline and (
            received() < total or (protocol == "rdi" and time.monotonic() - t_open < t_end)):
        alive = _recv_some(s, got, stamp)
    if alive:
        # a recording the server ended: wait for its close; else the client closes,
        # after a short look for an early close by the server
        limit = time.monotonic() + (wait_s if by == "server" else 0.3)
        while alive and time.monotonic() < limit:
            alive = _recv_some(s, got, stamp)
        closed_by = "client" if alive else "server"
    s.close()
    for t, d, data in got:
        events.append({"t": t, "conn": conn, "dir": d, "hex": data.hex()})
    events.append({"t": stamp(), "conn": conn, "ev": "close", "by": closed_by})


def replay(rec: Recording, host: str, port: int, speed: float = 1.0,
           wait_s: float = 5.0) -> Recording:
    """Replay ``rec``'s client side against host:port; returns the live session."""
    t0 = time.monotonic()
    stamp = lambda: round(time.monotonic() - t0, 6)   # noqa: E731
    out = Recording(dict(rec.header, note="replay of: " + rec.header.get("note", ""),
                         gateway_port=port))
    closes = rec.closes()
    for n, chunks in enumerate(rec.connections()):
        _replay_conn(chunks, closes.get(n), host, port, rec.header["protocol"], speed, wait_s,
                     stamp, out.events, n)
    return out
