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

"""The documentation's generated tables (bsal_ros.tools.gen_docs).

docs/PROTOCOL.md's codes, directions, constants and items, SECURITY.md's
write commands and the RCI -> ROS table of README.md and INTERFACES.md are
written between markers from the registries: the committed files equal the
generator's output in a fresh interpreter; a stale table is reported; a
command or kind registered later appears in each table it belongs to; the ROS
names the RCI -> ROS table gives are the ones the ROS port calls.
"""

from __future__ import annotations

from pathlib import Path
import shutil

import pytest

from bsal_ros.protocol.rci_registry import commands
from bsal_ros.tools import gen_docs
import bumper_kind  # noqa: F401  (registers the bumper kind)
from conftest import check_shipped_generator
import led_command as led

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def led_registered():
    led.register()
    yield
    led.unregister()


def test_committed_tables_are_the_generators_output():
    # a fresh interpreter: this one holds the bumper, which the shipped docs must not name
    check_shipped_generator("bsal_ros.tools.gen_docs")
    found = {}
    for name in gen_docs.FILES:
        for m in gen_docs.BLOCK.finditer((REPO / name).read_text()):
            found.setdefault(m[2], []).append(name)
    assert found == {"rci_codes": ["docs/PROTOCOL.md"], "rci_directions": ["docs/PROTOCOL.md"],
                     "rci_constants": ["docs/PROTOCOL.md"], "rci_items": ["docs/PROTOCOL.md"],
                     "write_commands": ["docs/SECURITY.md"],
                     "rci_to_ros": ["README.md", "docs/INTERFACES.md"],
                     "kind_parameters": ["docs/INTERFACES.md"],
                     "kind_description_keys": ["docs/INTERFACES.md"]}


def test_a_stale_table_is_reported_and_rewritten(tmp_path):
    for name in gen_docs.FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    security = tmp_path / "docs" / "SECURITY.md"
    security.write_text(security.read_text().replace("* RCI-CSmTp (Simulator Teleport, 0x0230)\n",
                                                     ""))
    assert gen_docs.main(["--check", "--root", str(tmp_path)]) == 1
    assert gen_docs.main(["--root", str(tmp_path)]) == 0
    assert "* RCI-CSmTp (Simulator Teleport, 0x0230)" in security.read_text()
    assert gen_docs.main(["--check", "--root", str(tmp_path)]) == 0


def test_an_unknown_table_name_is_an_error():
    with pytest.raises(ValueError, match="unknown generated table 'nope'"):
        gen_docs.render("<!-- generated: nope -->\n<!-- end generated -->\n", "x.md")


def test_a_registered_command_and_kind_reach_every_table(led_registered):
    assert "| RCI-CStLd Set LED | 0x0220 |" in gen_docs.rci_codes()
    assert "| CStLd | CA | refused | reported |" in gen_docs.rci_directions()
    assert "| CStLd | 0xe0 | `red(guint8) green(guint8) blue(guint8)` |" in gen_docs.rci_items()
    assert "* RCI-CStLd (Set LED, 0x0220)" in gen_docs.write_commands()
    assert len(gen_docs.write_commands().splitlines()) == sum(s.writes for s in commands())
    assert "| Set LED (CStLd, 0x0220) | robot-port method `set_leds` |" in gen_docs.rci_to_ros()
    # the bumper of test/bumper_kind.py: its sub-code and its DATA item
    assert "BUMPER 0x10" in gen_docs.rci_constants()
    assert "| CGtSnRp | BUMPER | DATA asked: `contacts(guint8)` |" in gen_docs.rci_items()


def test_the_ros_names_are_the_ones_the_ros_port_calls():
    port = (REPO / "bsal_ros" / "bsal_ros" / "nodes" / "rci_ros_port.py").read_text()
    named = {m for s in commands() for m in s.port_methods}
    assert named <= set(gen_docs.PORT_ROS)        # every method of Brak's commands is mapped
    for method, ros in gen_docs.PORT_ROS.items():
        if ros:
            name = ros.split("`")[1]
            assert f'"{name}"' in port, (method, name)
