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
"""The Wireshark dissector (bsal_ros/wireshark/bsal.lua) run by tshark.

Captures are written from bytes (bsal_ros.tools.wire_pcap: deterministic
TCP/IP headers): every packet kind of docs/PROTOCOL.md in both byte orders, as
sent, split into 1-11 byte segments and coalesced; a broken stream; and the
recorded sessions of test/sessions (the book's listing, the legacy example and
the RDI viewer against the bridge). tshark's fields are compared with what
bsal_ros.protocol decodes from the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
import shutil
import subprocess

import pytest

from bsal_ros.protocol import RdiBaseTime, RdiOrientEgo, RdiOrientOmni
from bsal_ros.tools.wire_pcap import write_sessions
from bsal_ros.wireshark import gen_lua, lua_path
from conftest import check_shipped_generator
import wire_samples as ws

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed "
                                  "(apt package tshark; make setup installs it)")
SESSIONS = Path(__file__).with_name("sessions")
BAD = ("rci.malformed || rdi.malformed || rci.unframed || rdi.unframed || rci.dissector_bug"
       " || rdi.dissector_bug || _ws.malformed || _ws.expert.severity >= 0x00800000")


def test_committed_lua_is_the_generators_output():
    # a fresh interpreter, as a user regenerating it: this process may hold kinds the
    # tests registered (test/bumper_kind.py), which the shipped dissector must not name
    text = lua_path().read_text(encoding="utf-8")
    check_shipped_generator("bsal_ros.wireshark.gen_lua")
    assert text.startswith(
        "-- Copyright 2026 The bsal_ros authors") and "SPDX-License-Identifier" in text


def test_generated_tables_follow_the_codec(tmp_path):
    # a code added to the codec shows up in the Lua: the tables are the codec's
    assert "[0x0213] = true" in gen_lua.tables() and '"CGtSnRp"' in gen_lua.tables()
    stale = tmp_path / "bsal.lua"
    stale.write_text(lua_path().read_text().replace('"CGtSnRp"', '"XXX"'))
    assert gen_lua.main(["--check", "--lua", str(stale)]) == 1


def tshark(pcap, *args):
    r = subprocess.run([TSHARK, "-n", "-X", f"lua_script:{lua_path()}", "-r", str(pcap), *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Lua" not in r.stderr and "rror" not in r.stderr.replace("dangerous", ""), r.stderr
    return r.stdout


def fields(pcap, *names, flt=None, extra=()):
    """{field: [values over the capture, in order]}."""
    args = [*extra, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
            "-E", "aggregator=|"]
    for n in names:
        args += ["-e", n]
    if flt:
        args += ["-Y", flt]
    out = {n: [] for n in names}
    for line in tshark(pcap, *args).splitlines():
        for n, v in zip(names, line.split("\t")):
            out[n] += [x for x in v.split("|") if x != ""]
    return out


def frames(pcap, flt, *extra):
    return len(tshark(pcap, *extra, "-Y", flt, "-T", "fields", "-e", "frame.number").split())


def rci_expected(packets):
    names, ids, speedvals, statvals, delays = [], [], [], [], []
    for _, p in packets:
        names.append(type(p).__name__)
        for i, data in getattr(p, "items", None) or []:
            if hasattr(p, "sub_code"):
                ids.append(i)
            if getattr(getattr(data, "kind", None), "name", "") == "RESET":
                continue          # PSERVO_RESET: no speedval on the wire
            for attr, out in (("speedval", speedvals), ("statval", statvals), ("delay", delays)):
                if hasattr(data, attr) and getattr(data, attr) is not None:
                    out.append(getattr(data, attr))
    return names, ids, speedvals, statvals, delays


@needs_tshark
@pytest.mark.parametrize("byteorder", ["big", "little"])
@pytest.mark.parametrize("shape", ["as_sent", "split", "coalesced"])
def test_every_rci_packet_kind_decodes_with_the_codecs_values(tmp_path, byteorder, shape):
    events = ws.rci_events(byteorder)
    events = {"as_sent": events, "split": ws.split(events), "coalesced": ws.coalesce(events)}[shape]
    pcap = tmp_path / "rci.pcap"
    write_sessions(pcap, [{"events": events}])
    assert frames(pcap, BAD) == 0, tshark(pcap, "-Y", BAD, "-O", "rci")
    names, ids, speedvals, statvals, delays = rci_expected(
        ws.decode_events(events, "rci", byteorder))
    got = fields(pcap, "rci.packet", "rci.id", "rci.speedval", "rci.statval", "rci.delay",
                 "rci.byte_order", "rci.flags.rq_ack", "rci.user_id", "rci.accel", "rci.d_count",
                 "rci.mposval.si", "rci.statval.time", "rci.term_code")
    assert got["rci.packet"] == names
    assert [int(x) for x in got["rci.id"]] == ids
    assert [int(x, 16) for x in got["rci.speedval"]] == speedvals
    assert [int(x, 16) for x in got["rci.statval"]] == statvals
    assert [int(x) for x in got["rci.delay"]] == delays
    assert set(got["rci.byte_order"]) == {f"{byteorder}-endian"}
    assert got["rci.flags.rq_ack"].count("1") == 4       # CRs, CAcMt group, CStMt home, CGtMtIq
    assert got["rci.user_id"] == ["guest"]              # the CP's empty one is not listed
    assert [float(x) for x in got["rci.accel"]] == [1.0]
    assert [int(x) for x in got["rci.d_count"]] == [5]
    assert [float(x) for x in got["rci.mposval.si"]] == [1.0]
    assert [int(x) for x in got["rci.statval.time"]] == [301, 1]
    assert [int(x, 16) for x in got["rci.term_code"]] == [0x15]
    # what a user types
    assert frames(pcap, "rci") > 0 and frames(pcap, "rci.code == 0x0201") > 0
    assert frames(pcap, "rci.flags.group && rci.sub_code == 0xc0") >= 2


@needs_tshark
@pytest.mark.parametrize("byteorder", ["big", "little"])
@pytest.mark.parametrize("shape", ["as_sent", "split", "coalesced"])
def test_every_rdi_packet_kind_decodes_with_the_codecs_values(tmp_path, byteorder, shape):
    events = ws.rdi_events(byteorder)
    events = {"as_sent": events, "split": ws.split(events), "coalesced": ws.coalesce(events)}[shape]
    pcap = tmp_path / "rdi.pcap"
    write_sessions(pcap, [{"events": events, "server": ("127.0.0.1", 7651)},
                          {"events": events, "server": ("127.0.0.1", 7652)}])
    assert frames(pcap, BAD) == 0, tshark(pcap, "-Y", BAD, "-O", "rdi")
    packets = ws.decode_events(events, "rdi", byteorder)
    got = fields(pcap, "rdi.packet", "rdi.sub_name", "rdi.id", "rdi.status", "rdi.xpos",
                 "rdi.seconds", "rdi.byte_order", "rdi.status.on", "rdi.status.up")
    names = [{RdiBaseTime: "Ms", RdiOrientEgo: "RbOr", RdiOrientOmni: "RbOr"}.get(
        type(p), type(p).__name__.replace("Rdi", "").replace("Sensor", "Sn").replace(
            "Motor", "Mt").replace("Actuator", "Ac")) for _, p in packets]
    assert got["rdi.packet"] == names * 2
    ids = [i for _, p in packets for i, _ in getattr(p, "items", [])]
    assert [int(x) for x in got["rdi.id"]] == ids * 2
    statuses = []
    for _, p in packets:
        for _, d in getattr(p, "items", []):
            statuses.append(d.status)      # d_status is rdi.d_status
        if hasattr(p, "status"):
            statuses.append(p.status)
    assert [int(x, 16) for x in got["rdi.status"]] == statuses * 2
    assert [float(x) for x in got["rdi.xpos"]] == [1.5] * 2
    assert [int(x) for x in got["rdi.seconds"]] == [978307200] * 2
    assert set(got["rdi.byte_order"]) == {f"{byteorder}-endian"}
    assert frames(pcap, "rdi") > 0 and frames(pcap, "rdi.code == 0x0040") > 0


@needs_tshark
@pytest.mark.parametrize("damage", ["unknown_code", "zero_count", "bad_sub_code", "bad_status"])
def test_a_broken_stream_is_flagged_and_never_a_lua_error(tmp_path, damage):
    events = ws.rci_events("big")
    i = next(k for k, (_, d, b) in enumerate(events) if b[:2] == b"\x82\x02")   # CGtMtIq group
    t, d, b = events[i]
    b = {"unknown_code": b"\x03\x33" + b[2:], "zero_count": b[:3] + b"\x00" + b[4:],
         "bad_sub_code": b[:2] + b"\x99" + b[3:], "bad_status": b[:-1] + b"\x07"}[damage]
    events[i] = (t, d, b)
    pcap = tmp_path / "broken.pcap"
    write_sessions(pcap, [{"events": ws.split(events)}])
    assert frames(pcap, 'rci.malformed && rci.direction == "CA"') == 1
    # the CP's reply to the lost inquiry cannot be framed either: flagged, not guessed
    assert frames(pcap, 'rci.malformed && rci.direction == "CP"') == 1
    # (_ws.malformed: every malformed-group expert)
    assert frames(pcap, "rci.dissector_bug") == 0
    assert frames(pcap, "rci.unframed") > 0            # the rest of that direction
    # the other direction still decodes up to its unanswerable reply
    assert frames(pcap, 'rci.direction == "CP" && !rci.malformed') > 3


@needs_tshark
def test_garbage_never_raises_a_lua_error(tmp_path):
    import random
    rnd = random.Random(23)
    base = ws.rci_events("big")
    sessions = []
    for n in range(30):
        ev = [(t, d, bytes(x if rnd.random() > 0.02 else rnd.randrange(256) for x in b))
              for t, d, b in base]
        sessions.append({"events": ws.split(ev, sizes=(rnd.randrange(1, 40),))})
    sessions.append({"events": [(0.0, "s2c", bytes(rnd.randrange(256) for _ in range(4000)))],
                     "server": ("127.0.0.1", 7651)})
    pcap = tmp_path / "garbage.pcap"
    write_sessions(pcap, sessions)
    assert frames(pcap, "rci.dissector_bug || rdi.dissector_bug") == 0
    assert frames(pcap, "rci.malformed") > 0


def recorded_sessions():
    return sorted(SESSIONS.glob("*.jsonl"))


@needs_tshark
@pytest.mark.parametrize("path", recorded_sessions(), ids=lambda p: p.stem)
def test_recorded_sessions_decode_cleanly(tmp_path, path):
    from bsal_ros.tools.wire_record import load, to_pcap
    rec = load(path)
    pcap = tmp_path / (path.stem + ".pcap")
    to_pcap(rec, pcap)
    proto = rec.header["protocol"]
    assert frames(pcap, BAD) == 0, tshark(pcap, "-Y", BAD)
    expected = []
    for conn in rec.connections():
        expected += [type(p).__name__ for _, p in ws.decode_events(
            conn, proto, rec.header.get("byteorder", "big"))]
    got = fields(pcap, f"{proto}.packet")[f"{proto}.packet"]
    assert len(got) == len(expected) > 0
    if proto == "rci":
        assert got == expected
    assert frames(pcap, proto) > 0
    json.dumps(rec.header)
