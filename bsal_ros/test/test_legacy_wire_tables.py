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

"""The C++ library's RCI constants and wire lengths come from the registries.

``legacy/include/bsal-wire-tables.h`` (packet and reply-item lengths, which
``rci-client.cc`` frames replies with) and the generated block of
``bsal-protocols.h`` are written by ``bsal_ros.tools.gen_cpp``: the committed
copies equal its output in a fresh interpreter, and a device kind registered in
Python (the bumper of test/bumper_kind.py, a 1-byte DATA item) reaches the
library by regenerating them into a build's include folder: the library then
reads a bumper DATA reply right, and without them it refuses the sub-code
instead of misframing the reply. The same for a command registered in Python
(Set LED of test/led_command.py): ``rciSendItems()`` sends it with the
regenerated tables and refuses it, sending nothing, without them.
"""

from __future__ import annotations

from pathlib import Path
import subprocess

import pytest

from bsal_ros.protocol.constants import GetSensorStatus
from bsal_ros.protocol.rci import CCnAc, CGtSnIq, CGtSnRp, StatusData
from bsal_ros.protocol.rci_registry import commands
from bsal_ros.protocol.rci_tables import REPLY_LAYOUTS
from bsal_ros.tools import gen_cpp
import bumper_kind
from conftest import build_legacy, check_shipped_generator
import led_command as led
from test_legacy_api import run, ScriptedCP, statval_ms

pytestmark = pytest.mark.timeout(180)

LEGACY = Path(__file__).resolve().parents[2] / "legacy"
CONTACTS = {0: 0x05, 1: 0x0A}       # bumper id -> contact bits the scripted CP reports


def test_committed_headers_are_the_generators_output():
    # a fresh interpreter: this one holds the bumper, which the shipped headers must not name
    check_shipped_generator("bsal_ros.tools.gen_cpp")
    for name in (gen_cpp.PROTOCOLS, gen_cpp.TABLES):
        text = (LEGACY / "include" / name).read_text()
        assert text.startswith("// Copyright 2026 The bsal_ros authors"), name
    assert "RCI_SENSOR_BUMPER" not in (LEGACY / "include" / gen_cpp.PROTOCOLS).read_text()


def test_a_process_holding_plugin_kinds_leaves_the_shipped_headers_alone(capsys):
    """The shipped headers name Brak's own kinds: a process that holds a
    plugin's kind (here the bumper) neither writes nor checks them."""
    from bsal_ros.tools.gen_common import plugin_kinds
    assert "bumper" in plugin_kinds()
    assert gen_cpp.main(["--check"]) == 2
    assert gen_cpp.main([]) == 2
    assert "BSAL_ROS_KIND_PLUGINS=builtin" in capsys.readouterr().out


def test_a_stale_header_is_reported(tmp_path):
    assert gen_cpp.main(["--out", str(tmp_path)]) == 0
    assert gen_cpp.main(["--check", "--out", str(tmp_path)]) == 0
    path = tmp_path / gen_cpp.TABLES
    path.write_text(path.read_text().replace("return 1;", "return 4;"))
    assert gen_cpp.main(["--check", "--out", str(tmp_path)]) == 1


def test_every_reply_item_length_is_the_layouts():
    text = gen_cpp.tables_header()
    rows = [(code, sub, status, lay.size) for code, table in REPLY_LAYOUTS.items()
            for (sub, status), lay in table.items()]
    assert (0x0213, bumper_kind.RCI_SUB, GetSensorStatus.DATA, 1) in rows
    for code, sub, status, size in rows:
        assert f"case 0x{code:04x}{sub:02x}{status:02x}: return {size};" in text
    reply_rows = text[text.index("rciReplyItemLen"):text.index("rciCommandItemLen")]
    assert reply_rows.count("    case 0x") == len(rows)     # no row the registry does not hold
    # the commands of one fixed item layout, CSmTp's 12 bytes among them
    fixed = {int(s.code): s.wire.layout.size for s in commands()
             if s.wire is not None and s.wire.shape == "items"}
    assert fixed[0x0230] == 12
    for code, size in fixed.items():
        assert f"case 0x{code:04x}: return {size};    /*" in text
    block = gen_cpp.protocols_block()
    assert f"#define RCI_SENSOR_BUMPER   0x{bumper_kind.RCI_SUB:02x}" in block
    assert "#define RCI_CSmTp           0x0230" in block


def _compile(out: Path, program: str, *include_dirs: Path) -> Path:
    """legacy/tests/``program`` built from the library's sources, ``include_dirs`` first."""
    build_legacy()       # skips with the reason where g++ or glib is missing
    glib = subprocess.run(["pkg-config", "--cflags", "--libs", "glib-2.0"], check=True,
                          capture_output=True, text=True).stdout.split()
    srcs = [LEGACY / "src" / f for f in ("rci-client.cc", "robot-time.cc", "mposval.cc")]
    incs = [f"-I{d}" for d in (*include_dirs, LEGACY / "include")]
    subprocess.run(["g++", "-O0", "-std=c++17", *incs, str(LEGACY / "tests" / program),
                    *map(str, srcs), "-o", str(out), *glib], check=True, timeout=170)
    return out


def bumper_cp():
    def answer(pkt):
        if not isinstance(pkt, CGtSnIq):
            return []
        items = [(i, StatusData(statval_ms(100 + i)) if st == GetSensorStatus.STATUS
                  else bumper_kind.BumperData(CONTACTS[i])) for i, st in pkt.items]
        return [CGtSnRp(pkt.sub_code, items, pkt.form)]
    return ScriptedCP(answer)


def test_the_library_reads_a_bumper_data_reply_with_regenerated_tables(tmp_path):
    include = tmp_path / "include"
    assert gen_cpp.main(["--out", str(include)]) == 0     # this process holds the bumper
    app = _compile(tmp_path / "sensor-check", "sensor-check.cc", include)
    cp = bumper_cp()
    try:
        code, rows = run(app, cp.port, hex(bumper_kind.RCI_SUB), "0,1")
    finally:
        cp.close()
    assert code == 0
    assert ("rc", {"call": "rciReadSensors", "code": "11", "name": "RCI_CSTRP_IDLE"}) in rows
    got = [(int(r["id"]), r["data"], int(r["statval"], 16)) for k, r in rows if k == "reading"]
    assert got == [(i, f"{CONTACTS[i]:02x}", statval_ms(100 + i)) for i in (0, 1)]
    # one reply: DATA and STATUS of both bumpers in one poly inquiry (items of 1 and 4 bytes)
    [inquiry] = cp.inquiries()
    assert inquiry.items == [(0, 4), (0, 5), (1, 4), (1, 5)]


def test_the_shipped_tables_refuse_a_sub_code_they_do_not_know(tmp_path):
    app = _compile(tmp_path / "sensor-check", "sensor-check.cc")
    cp = bumper_cp()
    try:
        code, rows = run(app, cp.port, hex(bumper_kind.RCI_SUB), "0")
    finally:
        cp.close()
    assert ("rc", {"call": "rciReadSensors", "code": "4", "name": "ERR_BAD_ARGUMENT"}) in rows
    assert cp.inquiries() == []          # nothing sent: a reply it could not frame


@pytest.fixture
def led_registered():
    led.register()
    yield
    led.unregister()


def led_cp():
    return ScriptedCP(lambda pkt: [CCnAc(led.LED_CODE)] if getattr(pkt, "rq_ack", False) else [])


def send_leds(app):
    cp = led_cp()
    try:
        code, rows = run(app, cp.port, hex(led.LED_CODE), hex(led.LED_RGB), "0,1",
                         "ff8000,010203")
    finally:
        cp.close()
    assert code == 0
    return rows, cp.received


def test_the_library_sends_set_led_with_regenerated_tables(tmp_path, led_registered):
    include = tmp_path / "include"
    assert gen_cpp.main(["--out", str(include)]) == 0     # Set LED registered here
    assert "#define RCI_CStLd           0x0220" in (include / gen_cpp.PROTOCOLS).read_text()
    rows, received = send_leds(_compile(tmp_path / "items-check", "items-check.cc", include))
    assert ("rc", {"call": "rciSendItems", "code": "11", "name": "RCI_CSTRP_IDLE"}) in rows
    colors = [led.LedColor(255, 128, 0), led.LedColor(1, 2, 3)]
    assert received == [led.CStLd.group(led.LED_RGB, 0, colors, rq_ack=True)]


def test_the_shipped_tables_refuse_a_command_they_do_not_know(tmp_path, led_registered):
    rows, received = send_leds(_compile(tmp_path / "items-check", "items-check.cc"))
    assert ("rc", {"call": "rciSendItems", "code": "4", "name": "ERR_BAD_ARGUMENT"}) in rows
    assert received == []
