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

"""The control application's view of a Get reply (rci/ca_view.py): ``on`` as
the session activated the device, DATA values as the wire carried them, and
built only when read (the publisher's thread reads it at most
ca_states_max_hz times a second, the read path never)."""
from bsal_ros.core.device_state import DeviceState
from bsal_ros.kinds import kind, rci_item
from bsal_ros.rci.ca_view import CaView


def sonar(i, on=True, delay_us=1234):
    return DeviceState("ultrasonic", i, on=on, stamp=1.0, statval=(7 << 8) | int(on),
                       delay_us=delay_us, range_m=0.2117)


def test_on_is_what_this_session_activated():
    states = [sonar(0), sonar(1), sonar(2, on=False)]
    view = CaView(states, frozenset({1, 2}))
    assert [s.on for s in view] == [False, True, True]
    assert [s.statval & 1 for s in view] == [0, 1, 1]
    assert [s.statval >> 8 for s in view] == [7, 7, 7]
    assert view[1] is states[1]         # nothing differs: the same object


def test_data_values_are_the_ones_the_wire_carried():
    states = [sonar(0, delay_us=1234)]
    item = rci_item(kind("ultrasonic"), states[0])
    sent = item._replace(**{item._fields[0]: 999})
    (shown,) = CaView(states, frozenset({0}), [sent])
    assert shown is not states[0]
    assert rci_item(kind("ultrasonic"), shown) == sent
    (untouched,) = CaView(states, frozenset({0}), [None])
    assert untouched is states[0]


def test_built_once_and_only_when_read():
    states = [sonar(0)]
    view = CaView(states, frozenset())
    assert view._built is None and len(view) == 1 and view._built is None
    first = list(view)
    assert view._built is not None and list(view) == first and view[0] is first[0]
