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
"""Write classic pcap files of TCP sessions from recorded bytes (no capture needed).

Each connection gets a three-way handshake, data segments with consistent
sequence and acknowledgement numbers, and FINs, between 127.0.0.1 and
127.0.0.2, over Ethernet: deterministic files Wireshark and tshark read like a
loopback capture. Checksums are computed (IP) or left zero (TCP; Wireshark does
not verify them by default).
"""

from __future__ import annotations

from pathlib import Path
import struct

__all__ = ["PcapWriter", "write_sessions"]

_ETH = bytes(6) + bytes.fromhex("020000000001") + b"\x08\x00"
_SYN, _ACK, _PSH, _FIN = 0x02, 0x10, 0x08, 0x01


def _ip_checksum(header: bytes) -> int:
    s = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class PcapWriter:
    """A pcap file (LINKTYPE_ETHERNET) being written; use as a context manager."""

    def __init__(self, path):
        self.path = Path(path)
        self._f = open(self.path, "wb")
        self._f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        self.frames = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Flush and close the file."""
        self._f.close()

    def segment(self, t: float, src, dst, seq: int, ack: int, flags: int, payload=b"") -> None:
        """One TCP segment from ``src`` (ip, port) to ``dst`` at time ``t`` (s)."""
        tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                          5 << 4, flags, 65535, 0, 0) + bytes(payload)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), self.frames & 0xFFFF,
                                   0x4000, 64, 6, 0, bytes(map(int, src[0].split("."))),
                                   bytes(map(int, dst[0].split(".")))))
        ip[10:12] = struct.pack("!H", _ip_checksum(bytes(ip)))
        frame = _ETH + bytes(ip) + tcp
        sec = int(t)
        self._f.write(struct.pack("<IIII", sec, int(round((t - sec) * 1e6)) % 1000000,
                                  len(frame), len(frame)))
        self._f.write(frame)
        self.frames += 1

    def session(self, events, client=("127.0.0.2", 40000), server=("127.0.0.1", 7650),
                t0: float = 1_000_000_000.0) -> None:
        """One TCP connection: ``events`` are (t, "c2s"|"s2c", bytes) in order;
        each becomes one segment (an empty chunk is skipped)."""
        seq = {"c2s": 1000, "s2c": 5000}
        ends = {"c2s": (client, server), "s2c": (server, client)}
        last = t0 + (events[0][0] if events else 0.0)
        self.segment(last - 0.003, client, server, seq["c2s"] - 1, 0, _SYN)
        self.segment(last - 0.002, server, client, seq["s2c"] - 1, seq["c2s"], _SYN | _ACK)
        self.segment(last - 0.001, client, server, seq["c2s"], seq["s2c"], _ACK)
        for t, direction, data in events:
            if not data:
                continue
            last = max(last, t0 + t)
            other = "s2c" if direction == "c2s" else "c2s"
            src, dst = ends[direction]
            self.segment(last, src, dst, seq[direction], seq[other], _ACK | _PSH, data)
            seq[direction] += len(data)
        for direction in ("c2s", "s2c"):
            other = "s2c" if direction == "c2s" else "c2s"
            src, dst = ends[direction]
            last += 0.001
            self.segment(last, src, dst, seq[direction], seq[other], _ACK | _FIN)
            seq[direction] += 1


def write_sessions(path, sessions) -> int:
    """Write ``sessions`` (list of dicts with ``events`` and optional ``client``,
    ``server``) to ``path``; returns the number of frames written."""
    with PcapWriter(path) as w:
        for i, s in enumerate(sessions):
            w.session(s["events"], client=s.get("client", ("127.0.0.2", 40000 + i)),
                      server=s.get("server", ("127.0.0.1", 7650)),
                      t0=1_000_000_000.0 + 10.0 * i)
        return w.frames
