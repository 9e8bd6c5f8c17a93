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

"""Get Sensor's DATA items (rci/handlers_sensor.py DataItems): converted once
per state object, and again for every new reading of the device."""

from bsal_ros.core.device_state import DeviceState
from bsal_ros.kinds import kind, rci_item
import bsal_ros.rci.handlers_sensor as handlers_sensor
from bsal_ros.rci.handlers_sensor import DataItems


def sonar(i, delay_us):
    return DeviceState("ultrasonic", i, on=True, stamp=1.0, statval=(7 << 8) | 1,
                       delay_us=delay_us, range_m=delay_us * 1.7e-4)


def counting(monkeypatch):
    calls = []

    def convert(k, state):
        calls.append(state)
        return rci_item(k, state)
    monkeypatch.setattr(handlers_sensor, "rci_item", convert)
    return calls


def test_the_same_state_is_converted_once(monkeypatch):
    calls = counting(monkeypatch)
    items, k, s = DataItems(), kind("ultrasonic"), sonar(0, 2900)
    first = items.item(k, s)
    assert first == rci_item(k, s)
    assert items.item(k, s) is first and items.item(k, s) is first
    assert calls == [s]


def test_a_new_reading_is_converted_again(monkeypatch):
    calls = counting(monkeypatch)
    items, k = DataItems(), kind("ultrasonic")
    old, new = sonar(0, 2900), sonar(0, 7300)
    assert items.item(k, old) == rci_item(k, old)
    assert items.item(k, new) == rci_item(k, new) != rci_item(k, old)
    # an equal reading in a new object is a new reading too (no value compare)
    same = sonar(0, 7300)
    items.item(k, same)
    assert calls == [old, new, same]


def test_devices_do_not_share_an_entry():
    items, k = DataItems(), kind("ultrasonic")
    a, b = sonar(0, 2900), sonar(1, 11800)
    assert items.item(k, a) == rci_item(k, a)
    assert items.item(k, b) == rci_item(k, b)
    assert items.item(k, a) == rci_item(k, a)
