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
"""Recorded sessions (test/sessions/*.jsonl) replayed against a freshly started bridge.

The sessions were recorded with ``brak_wire record`` through the recording
proxy (docs/WIRE.md): the book's listing (legacy/build/book-3.3), the legacy
example program (legacy/build/client-app) and the RDI viewer (the GUI
client). The replay sends the recorded client bytes and diffs the gateway's
replies with the rule of bsal_ros.tools.wire_replay: codes, order, counts,
acknowledgements and terminations must match; times and sensor values may
differ.
"""

from __future__ import annotations

from pathlib import Path
import shutil
import signal
import subprocess
import time

import pytest

from bsal_ros.protocol import CBsTm, CCnAc, CStRp, encode_rci, Statval
from bsal_ros.protocol.rci_packets import StatusData
from bsal_ros.tools.wire_record import load, Recording
from bsal_ros.tools.wire_replay import decode, diff, normalize, replay

pytestmark = [pytest.mark.timeout(300)]

SESSIONS = sorted(Path(__file__).with_name("sessions").glob("*.jsonl"))


def test_the_three_sessions_are_shipped():
    names = {p.stem for p in SESSIONS}
    assert {"book_listing", "client_app", "rdi_viewer"} <= names
    for p in SESSIONS:
        rec = load(p)
        assert rec.header["format"] == "bsal-wire/1" and rec.header["note"]
        packets = [x for c in rec.connections() for x in decode(c, rec.header["protocol"])]
        assert packets and not [x for x in packets if x[0] == "error"], p


def test_the_rule_masks_times_and_readings_but_not_codes():
    a = CBsTm(time=(1, 2))
    assert normalize(a) == normalize(CBsTm(time=(3, 4)))
    s1 = StatusData(Statval(on=True, up=False, ok=True, ms=5).pack())
    s2 = StatusData(Statval(on=True, up=False, ok=True, ms=999).pack())
    s3 = StatusData(Statval(on=True, up=False, ok=False, ms=5).pack())
    from bsal_ros.tools.wire_replay import _data
    assert _data(s1) == _data(s2) != _data(s3)
    assert normalize(CStRp(0x0201, 0x09)) != normalize(CStRp(0x0201, 0x0B))
    assert normalize(CCnAc(0x0201)) != normalize(CStRp(0x0201, 0x0B))


def _rec(chunks):
    return Recording({"format": "bsal-wire/1", "protocol": "rci", "byteorder": "big", "note": "t"},
                     [{"t": t, "conn": 0, "dir": d, "hex": b.hex()} for t, d, b in chunks])


def test_diff_reports_a_changed_reply_code_and_a_missing_packet():
    base = [(0.0, "c2s", bytes.fromhex("0a01c10000d2")), (0.1, "s2c", encode_rci(CCnAc(0x0201)))]
    changed = [base[0], (0.1, "s2c", encode_rci(CStRp(0x0201, 0x09)))]
    assert diff(_rec(base), _rec(base)) == []
    d = diff(_rec(base), _rec(changed))
    assert len(d) == 1 and "CCnAc" in d[0] and "CStRp" in d[0]
    d = diff(_rec(base), _rec(base[:1]))
    assert any("recorded 1 packets from the gateway, replayed 0" in x for x in d)


def replay_when_free(rec, port):
    """Replay; a connection refused because the previous session is still
    closing (IInCp + CSvTm ACCESS: one session at a time) is tried again."""
    for _ in range(20):
        live = replay(rec, "127.0.0.1", port)
        first = [p for c in live.connections()[:1] for d, p in decode(c, rec.header["protocol"])
                 if d == "s2c"][:2]
        if not any(type(p).__name__ == "CSvTm" and p.term_code == 0x10 for p in first):
            return live
        time.sleep(0.5)
    return live


@pytest.fixture(scope="module")
def bridge():
    import re

    from test_bringup import Bridge
    b = Bridge()
    b.wait_for(re.compile(r"device list received"), timeout=60)
    yield b
    b.stop()


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_replay_against_a_fresh_bridge_gives_the_same_replies(bridge, path):
    rci_port, rt_port, _ = (int(x) for x in bridge.ports)
    rec = load(path)
    port = rci_port if rec.header["protocol"] == "rci" else rt_port
    live = replay_when_free(rec, port)
    problems = diff(rec, live)
    assert problems == [], "\n".join(problems)
    # the replay really talked to the gateway
    got = [p for c in live.connections()
           for d, p in decode(c, rec.header["protocol"]) if d == "s2c"]
    assert len(got) > 5


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("dumpcap") and shutil.which("tshark")),
                    reason="tshark/dumpcap are not installed (apt package tshark; make setup "
                           "installs it)")
def test_a_live_loopback_capture_decodes_in_tshark(bridge, tmp_path):
    """dumpcap on lo while the book's session is replayed against the bridge:
    tshark with the dissector lists exactly the packets bsal_ros.protocol
    decodes from the same session, none malformed, with `-Y rci` as typed."""
    from test_wireshark import BAD, fields, frames
    rci_port = int(bridge.ports[0])
    pcap = tmp_path / "live.pcapng"
    cap = subprocess.Popen(["dumpcap", "-q", "-i", "lo", "-f", f"tcp port {rci_port}",
                            "-w", str(pcap), "-a", "duration:120"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 15
        while not (pcap.exists() and pcap.stat().st_size > 0):
            assert time.monotonic() < deadline and cap.poll() is None, cap.stderr.read()
            time.sleep(0.1)
        time.sleep(0.5)
        live = replay_when_free(load(Path(__file__).with_name("sessions") / "book_listing.jsonl"),
                                rci_port)
        time.sleep(0.5)
    finally:
        cap.send_signal(signal.SIGINT)
        cap.wait(15)
    # per direction: the capture's interleaving of the two is the wire's, not the replayer's
    decode_as = f"tcp.port=={rci_port},rci"
    got = fields(pcap, "rci.packet", "rci.direction", flt=None, extra=("-d", decode_as))
    assert len(got["rci.packet"]) == len(got["rci.direction"])
    for mine, theirs in (("c2s", "CA"), ("s2c", "CP")):
        expected = [type(p).__name__ for c in live.connections() for d, p in decode(c, "rci")
                    if d == mine]
        assert [n for n, d in zip(got["rci.packet"], got["rci.direction"])
                if d == theirs] == expected
    assert frames(pcap, BAD, "-d", decode_as) == 0
    assert frames(pcap, "rci", "-d", decode_as) > 10
    assert frames(pcap, 'rci.packet == "CStMt"', "-d", decode_as) > 0
