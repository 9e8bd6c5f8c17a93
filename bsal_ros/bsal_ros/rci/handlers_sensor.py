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

"""RCI sensor commands: Activate Sensor, Set Sensor (clear encoders, sonar
firing order and timing) and Get Sensor (seed 001 4.6.11-4.6.13), one
handler object each (:class:`~bsal_ros.rci.handlers_base.Handler`).
"""

from __future__ import annotations

from .handlers_base import DeviceCommands, Handler
from .inquiries import Inquiries
from .port import RobotPort, SonarTiming
from .session_parts import CaState, RobotCalls
from ..kinds import kind, rci_item, RCI_SENSOR_CLASS
from ..protocol.constants import (CStRpStatus, GetSensorStatus, RciCode, SensorCommandCode,
                                  SensorType)
from ..protocol.rci import CAcSn, CGtSnIq, CGtSnRp, CStSn, StatusData

SENSOR_CLASS = RCI_SENSOR_CLASS


class DataItems:
    """The CGtSnRp DATA item of each device's newest state, converted once per
    state object: between two readings a control application polling at kHz
    rates asks for the same object (the one the port's cache holds) hundreds
    of times, and converting it was a fifth of the read's time in the
    gateway's loop (py-spy, issue 31)."""

    __slots__ = ("_items",)

    def __init__(self):
        self._items: dict = {}

    def item(self, k, state):
        """The DATA item of ``state`` (kind ``k``): the last conversion's when
        ``state`` is the object it was made from (the gateway never changes a
        state it holds), else a new one."""
        key = (state.device_class, state.id)
        hit = self._items.get(key)
        if hit is not None and hit[0] is state:
            return hit[1]
        data = rci_item(k, state)
        self._items[key] = (state, data)
        return data


class ActivateSensor(Handler):
    """CAcSn: sensors switched on or off for the control application."""

    def __init__(self, devices: DeviceCommands):
        self.devices = devices

    async def run(self, pkt: CAcSn) -> None:
        """Activate or deactivate and answer."""
        cls = SENSOR_CLASS[pkt.sub_code]
        if self.devices.ids(RciCode.CAcSn, cls, pkt) is None:
            return
        await self.devices.activate(RciCode.CAcSn, cls, pkt)


class SetSensor(Handler):
    """CStSn: relative encoders cleared, or the sonars' firing order and timing."""

    def __init__(self, port: RobotPort, devices: DeviceCommands, calls: RobotCalls):
        self.port = port
        self.devices = devices
        self.calls = calls

    async def run(self, pkt: CStSn) -> None:
        """Carry out the setting and answer."""
        ids = self.devices.ids(RciCode.CStSn, SENSOR_CLASS[pkt.sub_code], pkt)
        if ids is None:
            return
        if pkt.sub_code == SensorType.RELENCODER:
            res = await self.calls.acked_call(self.port.clear_encoders(ids), pkt.rq_ack)
        else:
            timings: dict[int, SonarTiming] = {}
            for i, d in pkt.items:
                t = timings.setdefault(i, SonarTiming(i))
                if d.kind == SensorCommandCode.ULTRASONIC_ORDER:
                    t.firing_slot = int(d.value)
                else:
                    t.interval_ms = int(d.value)
            res = await self.calls.acked_call(
                self.port.set_sonar_timing(list(timings.values())), pkt.rq_ack)
        self.devices.answers.finish_result(RciCode.CStSn, res, pkt.rq_ack)


class GetSensor(Handler):
    """CGtSnIq: readings (DATA) or statvals, from the port's cache (at once)
    or fetched."""

    def __init__(self, inquiries: Inquiries, ca: CaState):
        self.inquiries = inquiries
        self.ca = ca
        #: DATA items converted once per state object
        self._data_items = DataItems()

    def now(self, pkt: CGtSnIq) -> bool:
        """Answer from the cache (or refuse the ids) at once; False: the
        states must be fetched (nothing was sent)."""
        return self.inquiries.now(RciCode.CGtSnIq, SENSOR_CLASS[pkt.sub_code], pkt,
                                  self._reply)

    async def run(self, pkt: CGtSnIq) -> None:
        """Answer, fetching the states when the cache cannot."""
        if not self.now(pkt):
            await self.inquiries.fetched(RciCode.CGtSnIq, SENSOR_CLASS[pkt.sub_code], pkt,
                                         self._reply)

    def _reply(self, pkt: CGtSnIq, states):
        """CGtSnRp for ``states`` (None: answered NO_SUPPORT)."""
        items = []
        append = items.append
        sent = []       # the DATA item of each state, None for STATUS
        # the item and its conversions are the kind's (bsal_ros/kinds); a
        # relative encoder's d_count is the board's change between its two
        # latest readings (001 5.4.2 pairs it with d_status), the number RDI
        # sends, whenever and however often this CA asks
        k = kind(SENSOR_CLASS[pkt.sub_code])
        item = self._data_items.item
        statval = self.ca.statval
        for (i, s), state in zip(pkt.items, states):
            if s == GetSensorStatus.DATA:
                data = item(k, state)
                append((i, data))
                sent.append(data)
            elif s == GetSensorStatus.STATUS:
                append((i, StatusData(statval(state))))
                sent.append(None)
            else:
                self.inquiries.answers.inquiry_failed(RciCode.CGtSnIq, CStRpStatus.NO_SUPPORT,
                                                      f"status type {int(s)} is not supported")
                return None
        what = "status" if pkt.items[0][1] == GetSensorStatus.STATUS else "data"
        # the control-application view (rci/ca_states -> RDI port 7652) gets
        # the values exactly as they went out
        return CGtSnRp(pkt.sub_code, items, pkt.form), what, sent
