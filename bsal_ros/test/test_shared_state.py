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
"""What a test module changes for the whole process is put back when it ends
(test/shared_state.py, issue 53): a kind and its wire codes, an RCI command and
its handler, the environment and the working directory; a sub-code another
module took is free again, which is what `make test-fast` needed
(test_kind_codes.py then test_kind_configuration.py, in one process, each
registering sub-code 0x7e with a layout of its own)."""

import dataclasses
import os
from pathlib import Path
import subprocess
import sys
from typing import NamedTuple

import pytest

from bsal_ros.kinds import device_classes, kind, RciSensor, RdiItem, register_kind
from bsal_ros.protocol import encode_rci, ProtocolError
from bsal_ros.protocol import rdi
from bsal_ros.protocol._items import Layout
from bsal_ros.protocol.constants import RdiCode
from bsal_ros.protocol.rci_registry import command
from bsal_ros.protocol.wire_kinds import (rci_sensor_layout, rdi_item_layout,
                                          register_rci_sensor)
from bsal_ros.rci.handlers import HANDLERS
import led_command as led
from shared_state import snapshot

ROOT = Path(__file__).resolve().parents[1]
#: a sub-code no other module of the suite uses
SUB = 0x6D


class Data(NamedTuple):
    value: int


class Reading(NamedTuple):
    value: int
    status: int


class OtherData(NamedTuple):
    value: int


def register_probe_kind():
    """A sensor kind (the accelerometer's declaration) on sub-code SUB."""
    register_kind(dataclasses.replace(
        kind("accelerometer"), name="probe", fields=(), extra_fields=("value",),
        data_fields=("value",),
        rci=RciSensor(sub=SUB, layout=Layout("B", "named", Data), fields=(("value", int),)),
        rdi=RdiItem(code=RdiCode.Sn, sub=SUB, layout=Layout("BI", "named", Reading))))


def set_led():
    """A Set LED packet (test/led_command.py)."""
    return led.CStLd.one(led.LED_RGB, 1, led.LedColor(255, 128, 0))


def test_a_kind_a_command_the_environment_and_the_folder_are_put_back(tmp_path):
    before = snapshot()
    try:
        register_probe_kind()
        led.register()
        os.environ["BSAL_SHARED_STATE_PROBE"] = "1"
        os.chdir(tmp_path)
        assert "probe" in device_classes() and rci_sensor_layout(SUB) is not None
        assert encode_rci(set_led()) == bytes.fromhex("0220 e0 0001 ff8000")
    finally:
        changed = before.restore()

    for table in ("bsal_ros.kinds.registry._KINDS", "bsal_ros.protocol.rci_tables.SENSOR_DATA",
                  "bsal_ros.protocol.rdi._LAYOUTS", "bsal_ros.protocol.rci_registry._SPECS",
                  "bsal_ros.rci.handlers.HANDLERS", "os.environ", "the working directory"):
        assert table in changed, changed
    assert "probe" not in device_classes()
    assert rci_sensor_layout(SUB) is None and rdi_item_layout(RdiCode.Sn, SUB) is None
    # what is derived from the tables is rebuilt: the decode plans, the encoders
    assert not any(key & 0xFF == SUB for key in rdi._PLANS[">"] if key >> 8 == RdiCode.Sn)
    assert command(led.LED_CODE) is None and led.LED_CODE not in HANDLERS
    with pytest.raises(ProtocolError):
        encode_rci(set_led())
    assert "BSAL_SHARED_STATE_PROBE" not in os.environ and Path.cwd() != tmp_path


def test_a_sub_code_taken_before_is_free_again_with_another_layout():
    before = snapshot()
    try:
        register_probe_kind()
        with pytest.raises(ValueError, match="taken by Data"):
            register_rci_sensor(SUB, Layout("H", "named", OtherData))
    finally:
        before.restore()
    after = snapshot()
    try:
        register_rci_sensor(SUB, Layout("H", "named", OtherData))
        assert rci_sensor_layout(SUB).cls is OtherData
    finally:
        after.restore()
    assert rci_sensor_layout(SUB) is None


def test_nothing_changed_is_nothing_restored():
    assert snapshot().restore() == []


@pytest.mark.parametrize("order", [("test_kind_codes.py", "test_kind_configuration.py"),
                                   ("test_kind_configuration.py", "test_kind_codes.py")])
def test_the_modules_that_share_a_sub_code_pass_in_one_process_in_either_order(order):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *(f"test/{name}" for name in order)],
                          cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
