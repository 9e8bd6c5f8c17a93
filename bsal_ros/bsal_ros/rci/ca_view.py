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

"""What a control application was told by a Get reply, as device states.

Each Get reply is handed to the port (``RobotPort.delivered``) for the
control-application view (rci/ca_states, RDI port 7652). Building that view
means a changed copy of most states (the DATA values as the wire carried
them, ``on`` as this session activated the device): about 4 us per state,
twice the whole read of 12 sonars from the cache. The view is published at
most ``ca_states_max_hz`` times a second, so it is built when it is first
read (by the publisher's thread), not on the read's path.
"""
from __future__ import annotations

from collections.abc import Sequence
import dataclasses

from ..core.device_state import DeviceState
from ..kinds import kind, rci_as_sent


class CaView(Sequence):
    """``states`` as the control application saw them; ``data[n]`` is the
    DATA item sent for ``states[n]`` (None: no DATA item), ``activated`` the
    ids this session switched on. Built once, on first access."""

    __slots__ = ("_states", "_data", "_activated", "_built")

    def __init__(self, states: Sequence[DeviceState], activated: frozenset[int],
                 data: Sequence | None = None):
        self._states = states
        self._data = data
        self._activated = activated
        self._built: list[DeviceState] | None = None

    def _build(self) -> list[DeviceState]:
        built = self._built
        if built is None:
            built = []
            data = self._data
            for n, st in enumerate(self._states):
                if data is not None and data[n] is not None:
                    st = rci_as_sent(kind(st.device_class), st, data[n])
                on = st.id in self._activated
                if st.on != on:
                    st = dataclasses.replace(st, on=on, statval=(st.statval & ~1) | on)
                built.append(st)
            self._built = built     # two threads may both build it: the same list
        return built

    def __len__(self) -> int:
        return len(self._states)

    def __getitem__(self, index):
        return self._build()[index]

    def __iter__(self):
        return iter(self._build())
