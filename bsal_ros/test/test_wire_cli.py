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

"""``brak_wire``, the console script of docs/WIRE.md section 2, as a user runs it.

The book's listing (the seed's own C++, legacy/build/book-3.3) drives a
running bridge through ``brak_wire record``; ``brak_wire replay`` sends the
recorded client bytes to the same bridge and finds the same replies (exit
0, "same"); ``brak_wire pcap`` writes the recording for Wireshark, and tshark
with the shipped dissector lists exactly the packets the recording holds.
The library functions behind each subcommand have their own tests
(test_wire_sessions.py, test_wireshark.py); this one checks the command line
they are reached through. Needs the seed (the book's listing): skips without it.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from bsal_ros.tools.wire_record import load
from bsal_ros.tools.wire_replay import decode
from test_book_listing import book_app  # noqa: F401 - the fixture
from test_bringup import Bridge

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(300)]


def brak_wire(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    exe = shutil.which("brak_wire")
    assert exe, "brak_wire is not on PATH (make setup installs the console scripts)"
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)


def test_record_replay_and_pcap_of_the_book_listing(book_app, tmp_path):  # noqa: F811
    bridge = Bridge()
    try:
        bridge.wait_for(re.compile(r"device list received"), timeout=60)
        target = f"127.0.0.1:{bridge.ports[0]}"
        recording = tmp_path / "book.jsonl"
        r = brak_wire("record", "--target", target, "--protocol", "rci", "--out", str(recording),
                      "--note", "the book's listing (test_wire_cli)",
                      "--", str(book_app), "127.0.0.1:{port}")
        assert r.returncode == 0, r.stdout + r.stderr
        assert re.search(r"^recording 127\.0\.0\.1:\d+ -> " + re.escape(target), r.stdout, re.M)
        assert re.search(re.escape(str(recording)) + r": 1 connection\(s\), \d+ events",
                         r.stdout), r.stdout
        rec = load(recording)
        assert rec.header["note"] == "the book's listing (test_wire_cli)"
        packets = [(d, type(p).__name__) for d, p in decode(rec.connections()[0], "rci")]
        sent = {name for d, name in packets if d == "c2s"}
        # the book's session: reset, motors and sonars on, driving, readings
        assert {"CRs", "CAcMt", "CStMt", "CAcSn", "CGtSnIq"} <= sent, packets
        assert ("s2c", "CGtSnRp") in packets and ("s2c", "CSvTm") not in packets, packets

        bridge.wait_for(re.compile(r"session ends"), timeout=30)   # one session at a time
        r = brak_wire("replay", str(recording), "--target", target)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.splitlines()[-1] == f"{recording}: same", r.stdout

        pcap = tmp_path / "book.pcap"
        r = brak_wire("pcap", str(recording), str(pcap))
        assert r.returncode == 0, r.stdout + r.stderr
        assert int(re.search(r": (\d+) frames$", r.stdout.strip()).group(1)) > 0, r.stdout
        if shutil.which("tshark"):
            from test_wireshark import BAD, fields, frames
            assert frames(pcap, BAD) == 0
            assert fields(pcap, "rci.packet")["rci.packet"] == [name for _, name in packets]
    finally:
        bridge.stop()
