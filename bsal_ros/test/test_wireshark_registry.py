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

"""The dissector decodes every code and sub-code the registries declare.

One packet of every (code, sub-code) of the RCI command registry (command
bytes and reply layouts included; CSmTp; Set LED of test/led_command.py) and
of every RDI (code, sub-code) (the bumper of test/bumper_kind.py included), in
both byte orders, written as a loopback TCP capture. The dissector is the
shipped bsal.lua with its generated block rewritten for the registries of this
process (``gen_lua.render``: what a user does after adding a kind or a command;
no Lua is written by hand). tshark must show no error, no malformed or
unframed flag, no Lua error, every code and sub-code by name, and each item
field with the value sent.
"""

from __future__ import annotations

import pytest

from bsal_ros.protocol import rci_registry as reg, RdiBaseTime, RdiOrientEgo, RdiOrientOmni
from bsal_ros.protocol.wire_kinds import rdi_item_layouts
from bsal_ros.tools.wire_pcap import write_sessions
from bsal_ros.wireshark import gen_lua, lua_path
import bumper_kind  # noqa: F401  (registers the bumper kind)
import led_command as led
import test_wireshark as tw
import wire_samples as ws

pytestmark = tw.needs_tshark


@pytest.fixture
def dissector(tmp_path):
    """bsal.lua regenerated for this process's registries, Set LED registered."""
    led.register()
    try:
        path = tmp_path / "bsal.lua"
        path.write_text(gen_lua.render(lua_path().read_text(encoding="utf-8")), encoding="utf-8")
        yield path
    finally:
        led.unregister()


def tshark(lua, pcap, *args):
    """tshark's output; no error and no Lua message on stderr."""
    import subprocess
    r = subprocess.run([tw.TSHARK, "-n", "-X", f"lua_script:{lua}", "-r", str(pcap), *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Lua" not in r.stderr and "rror" not in r.stderr.replace("dangerous", ""), r.stderr
    return r.stdout


def column(lua, pcap, flt, *names):
    """{field: [every value over the frames matching flt, in order]}."""
    args = ["-Y", flt, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
            "-E", "aggregator=|"]
    for n in names:
        args += ["-e", n]
    out = {n: [] for n in names}
    for line in tshark(lua, pcap, *args).splitlines():
        for n, v in zip(names, line.split("\t")):
            out[n] += [x for x in v.split("|") if x != ""]
    return out


def abbrev(name: str, fmt: str) -> str:
    """The dissector's field name of an item field (gen_lua's rule)."""
    return "speedval" if fmt == "H" and name in gen_lua.SPEEDVAL_NAMES else name


def item_values(packets):
    """{field abbrev: [values in packet order]} of the named item data sent."""
    out: dict = {}
    for p in packets:
        for _, data in getattr(p, "items", None) or []:
            if hasattr(data, "kind"):       # a Set command: its payload, when it has one
                _, fmt = reg.command_of(type(p)).wire.commands.by_kind[(p.sub_code, data.kind)]
                name = gen_lua.PAYLOADS.get(data.kind.name, data.kind.name.lower())
                if fmt:
                    out.setdefault(abbrev(name, fmt), []).append(data[1])
                continue
            if not hasattr(data, "_fields"):
                continue            # scalars: checked by code and sub-code
            lay_fmt = _fmt_of(p, data)
            for name, fmt, v in zip(data._fields, lay_fmt, data):
                out.setdefault(abbrev(name, fmt), []).append(v)
    return out


def _fmt_of(p, data) -> str:
    from bsal_ros.protocol.rci_tables import REPLY_LAYOUTS
    for table in (rdi_item_layouts(), *REPLY_LAYOUTS.values()):
        for lay in table.values():
            if lay.cls is type(data):
                return lay.fmt
    spec = reg.command_of(type(p))
    return spec.wire.layout.fmt


def parse(text: str):
    try:
        return int(text, 0)
    except ValueError:
        return float(text)


def test_the_samples_cover_every_registered_code_and_sub_code(dissector):
    # the sample builder is complete: a registered code or sub-code without a packet fails
    sent = {(int(reg.CODE_OF[type(p)]), p.sub_code) for _, p in ws.registry_rci_packets()}
    assert sent == {(int(c), s) for c, subs in reg.SUB_CODES.items() for s in subs}
    assert (led.LED_CODE, led.LED_RGB) in sent and (0x0230, 0xF0) in sent
    assert (0x0213, bumper_kind.RCI_SUB) in sent
    rdi = {(type(p).__name__, p.sub_code) for p in ws.registry_rdi_packets()
           if hasattr(p, "items")}
    assert len(rdi) == len(rdi_item_layouts()) and ("RdiSensor", bumper_kind.RDI_SUB) in rdi


@pytest.mark.parametrize("byteorder", ["big", "little"])
def test_every_rci_code_and_sub_code_decodes_with_the_values_sent(tmp_path, dissector, byteorder):
    pcap = tmp_path / "rci.pcap"
    book = ws.rci_events(byteorder)
    registry = [(0.01 * i, d, ws.encode_rci(p, byteorder))
                for i, (d, p) in enumerate(ws.registry_rci_packets())]
    write_sessions(pcap, [{"events": book}, {"events": book[:6] + registry}])
    bad = tshark(dissector, pcap, "-Y", tw.BAD, "-O", "rci")
    assert bad == "", bad
    got = column(dissector, pcap, "rci", "rci.code", "rci.sub_code", "rci.sub_name")
    codes = {int(c, 16) for c in got["rci.code"]}
    assert codes == set(reg.receives("any"))           # every supported code, by its code
    assert not [n for n in got["rci.sub_name"] if n.startswith("unknown")]
    sent = [p for _, p in ws.registry_rci_packets()]
    got = column(dissector, pcap, "tcp.stream == 1 && rci.sub_code", "rci.packet",
                 "rci.sub_code", "rci.sub_name", "rci.id")
    assert got["rci.packet"] == [type(p).__name__ for p in sent]
    assert [int(s, 16) for s in got["rci.sub_code"]] == [p.sub_code for p in sent]
    assert "BUMPER" in got["rci.sub_name"]
    assert [int(i) for i in got["rci.id"]] == [i for p in sent for i, _ in p.items]
    expected = item_values(sent)
    assert {"x_mm", "red", "contacts"} <= set(expected)     # CSmTp, Set LED, the bumper
    fields = [f"rci.{a}" for a in expected]
    got = column(dissector, pcap, "tcp.stream == 1", *fields)
    for a, values in expected.items():
        assert [parse(x) for x in got[f"rci.{a}"]] == values, a


@pytest.mark.parametrize("byteorder", ["big", "little"])
def test_every_rdi_code_and_sub_code_decodes_with_the_values_sent(tmp_path, dissector, byteorder):
    pcap = tmp_path / "rdi.pcap"
    write_sessions(pcap, [{"events": ws.registry_rdi_events(byteorder),
                           "server": ("127.0.0.1", 7651)}])
    bad = tshark(dissector, pcap, "-Y", tw.BAD, "-O", "rdi")
    assert bad == "", bad
    sent = ws.registry_rdi_packets()
    got = column(dissector, pcap, "rdi", "rdi.sub_code", "rdi.sub_name", "rdi.id")
    plain = {RdiBaseTime: 1, RdiOrientEgo: 1, RdiOrientOmni: 2}
    assert [int(s, 16) for s in got["rdi.sub_code"]] == [
        p.sub_code if hasattr(p, "items") else plain[type(p)] for p in sent]
    assert not [n for n in got["rdi.sub_name"] if n.startswith("unknown")]
    assert "BUMPER" in got["rdi.sub_name"]
    assert [int(i) for i in got["rdi.id"]] == [i for p in sent for i, _ in getattr(p, "items", [])]
    expected = item_values(sent)
    assert "contacts" in expected
    # (the packets without ids, orientation and base time: test_wireshark.py)
    got = column(dissector, pcap, "rdi.id", *[f"rdi.{a}" for a in expected])
    for a, values in expected.items():
        assert [parse(x) for x in got[f"rdi.{a}"]] == values, a
