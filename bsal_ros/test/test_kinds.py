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

"""Every device kind and board type is declared whole and in one place
(bsal_ros/kinds, issue 24): each declaration names every entry, resolves to
the right classes and agrees with the codecs' registry; DeviceState, its
message and the RDI gateway's field lists agree."""

import dataclasses

import pytest

from bsal_ros.core import DeviceState
from bsal_ros.core.device_classes import ALL_CLASSES
from bsal_ros.kinds import (all_kinds, board_type, board_types, BoardType, data_fields, DeviceKind,
                            kind, KindError, resolve, status_fields)
from bsal_ros.kinds.registry import STATE_FIELDS
from bsal_ros.protocol.wire_kinds import rci_sensor_layout, rdi_item_layout


def test_brak_declares_its_six_kinds_and_four_board_types():
    assert set(ALL_CLASSES) <= {k.name for k in all_kinds()}
    assert {"ultrasonic", "dc_motor", "pservo_motor", "accelerometer"} <= set(board_types())


@pytest.mark.parametrize("decl", [BoardType, DeviceKind])
def test_a_declaration_missing_an_entry_is_refused_naming_it(decl):
    full = {"ultrasonic": board_type("ultrasonic"), "kind": kind("ultrasonic")}
    sample = full["ultrasonic"] if decl is BoardType else full["kind"]
    for f in dataclasses.fields(decl):
        entries = {g.name: getattr(sample, g.name) for g in dataclasses.fields(decl)
                   if g.name != f.name}
        with pytest.raises(TypeError, match=f"'{f.name}'"):
            type(sample)(**entries)


@pytest.mark.parametrize("decl", [BoardType, DeviceKind])
def test_a_declaration_class_missing_a_method_is_refused_naming_it(decl):
    sample = board_type("ultrasonic") if decl is BoardType else kind("ultrasonic")
    entries = {g.name: getattr(sample, g.name) for g in dataclasses.fields(decl)}
    assert decl.__abstractmethods__
    for method in decl.__abstractmethods__:
        given = {m: getattr(type(sample), m) for m in decl.__abstractmethods__ if m != method}
        partial = type(f"Partial{decl.__name__}", (decl,), given)
        with pytest.raises(TypeError, match=f"abstract .*'?{method}'?"):
            partial(**entries)


def test_every_board_type_resolves_and_carries_registered_kinds():
    from bsal_ros.hardware.boards import Board
    from bsal_ros.hardware.sim_boards import VirtualBoard
    carried = set()
    for name in board_types():
        bt = board_type(name)
        assert issubclass(resolve(bt.board), Board), f"board type {name}: board"
        assert issubclass(resolve(bt.sim_board), VirtualBoard), f"board type {name}: sim_board"
        for k in bt.carries:
            kind(k)                     # KindError names an undeclared kind
        carried |= set(bt.carries)
    missing = [k.name for k in all_kinds() if k.name not in carried]
    assert not missing, f"device kinds no board type carries: {missing}"


def test_every_kind_resolves_and_agrees_with_the_codecs():
    from bsal_ros.hardware.devices import Device
    for k in all_kinds():
        dev = resolve(k.device)
        assert issubclass(dev, Device) and dev.device_class == k.name, f"kind {k.name}: device"
        values = k.diagnostics(DeviceState(k.name, 0))
        assert isinstance(values, dict) and values, f"kind {k.name}: diagnostics"
        if k.rci is not None:
            assert rci_sensor_layout(k.rci.sub) is k.rci.layout, f"kind {k.name}: rci layout"
        if k.rdi is not None:
            assert rdi_item_layout(k.rdi.code, k.rdi.sub) is k.rdi.layout, f"kind {k.name}: rdi"
            assert k.viewer_label, f"kind {k.name}: sent over RDI but no viewer entry"
            reading = k.rdi_reading(DeviceState(k.name, 0))
            assert type(reading) is k.rdi.layout.cls, f"kind {k.name}: rdi reading"
            assert isinstance(k.viewer_text(reading), str)


def test_unknown_kind_or_board_type_is_a_clear_error():
    with pytest.raises(KindError, match="unknown device kind 'laser'.*ultrasonic"):
        kind("laser")
    with pytest.raises(KindError, match="unknown board type 'laser'"):
        board_type("laser")


def test_device_state_message_and_rdi_fields_agree():
    """The record, the generated message and the RDI gateway's field lists:
    the converter derives its plan from the first two and refuses to load when
    they disagree; every field a DATA or STATUS answer tells travels in the message."""
    pytest.importorskip("bsal_interfaces")
    from bsal_ros.nodes import device_state_msg as conv
    from bsal_ros.nodes.rdi_gateway import DATA_FIELDS, STATUS_FIELDS
    assert conv.mismatch() == []
    carried = {name for name, _ in conv.FIELDS} | {"extra"}
    for name in data_fields() + status_fields() + DATA_FIELDS + STATUS_FIELDS:
        assert name in carried, f"{name}: told to a control application, not in the message"
    for k in all_kinds():
        lost = [f for f in k.fields if f not in carried and f not in conv.HARDWARE_ONLY]
        assert not lost, f"kind {k.name}: fields {lost} neither in the message nor hardware-only"
    # a field missing on either side is named
    types = dict(conv.DeviceStateMsg.get_fields_and_field_types())
    del types["accel_g"]
    assert conv.mismatch(msg_types=types) == ["DeviceState.accel_g has no message field 'accel_g'"]
    record = [f for f in STATE_FIELDS if f != "homed"]
    assert conv.mismatch(record_fields=record) == ["message field 'homed' has no DeviceState field"]


def test_device_state_round_trips_every_field():
    pytest.importorskip("bsal_interfaces")
    from bsal_ros.nodes.device_state_msg import from_msg, HARDWARE_ONLY, to_msg
    values = {"on": True, "up": False, "ok": False, "fault": "x", "stamp": 12.5, "statval": 7,
              "delay_us": 9, "range_m": 1.5, "d_count": -3, "d_statval": 8, "count": 4,
              "position": 0.5, "accel_g": 0.25, "speedval": 11, "duty_mode": True, "speed": 2.5,
              "mposval": 12, "motor_position": 0.75, "homed": True, "homing": True,
              "extra": {"contacts": 3.0}}
    untested = STATE_FIELDS - set(values) - set(HARDWARE_ONLY) - {"device_class", "id"}
    assert not untested, f"add {untested} to this round trip"
    s = DeviceState("bumper", 2, **values)
    assert from_msg(to_msg(s)) == s
