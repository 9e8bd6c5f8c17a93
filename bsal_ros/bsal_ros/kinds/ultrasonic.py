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
"""The ultrasonic board (up to 8 sonar channels fired in slots) and its
device kind: echo delay (us) and range."""

from __future__ import annotations

import math

from .base import BoardType, RciSensor, RdiItem, RosTopic, SensorKind
from .convert import low16, u16, u32
from .registry import register_board_type, register_kind
from ..protocol.constants import RdiCode, RdiSensorType, SensorType
from ..protocol.rci_tables import SENSOR_DATA
from ..protocol.rdi import UltrasonicReading
from ..protocol.wire_kinds import rdi_item_layout


class UltrasonicBoardType(BoardType):
    """Up to 8 sonar channels fired one slot per interval."""

    def validate(self, name: str, entry: dict) -> None:
        """Channels 1..8, one firing slot per channel, interval 5..1000 ms.

        :raises ValueError: naming the entry that is wrong.
        """
        ch = int(entry.get("channels", 0))
        if not 1 <= ch <= 8:
            raise ValueError("channels must be 1..8")
        if len(entry.get("slots", [])) != ch:
            raise ValueError("slots needs one entry per channel")
        if not 5 <= int(entry.get("interval_ms", 0)) <= 1000:
            raise ValueError("interval_ms must be 5..1000")

    def scale_rates(self, entry: dict, rate_scale: float, all_boards_hz: float) -> None:
        """A full round of its slots at ``all_boards_hz`` (the poll waits a
        round), else the interval divided by ``rate_scale``; never under 5 ms."""
        nslots = max(entry["slots"]) + 1
        if all_boards_hz > 0:
            interval = max(5, int(1000.0 / (all_boards_hz * nslots)))
            entry["interval_ms"] = interval
            entry["poll_margin"] = max(1.0, (1000.0 / all_boards_hz) / (interval * nslots))
        elif rate_scale != 1.0:
            entry["interval_ms"] = max(5, int(round(entry["interval_ms"] / rate_scale)))


class UltrasonicKind(SensorKind):
    """A sonar: echo delay (us) and range (m), a sensor_msgs/Range per sonar."""

    def diagnostics(self, state) -> dict:
        """The echo delay and the range (``inf``: no echo)."""
        rng = state.range_m
        return {"delay_us": state.delay_us,
                "range_m": "inf" if math.isinf(rng) else f"{rng:.3f}"}

    def rdi_reading(self, state) -> UltrasonicReading:
        """The delay (guint16) and statval."""
        return UltrasonicReading(u16(state.delay_us), u32(state.statval))

    def fill(self, msg, state, ctx) -> None:
        """A sensor_msgs/Range of one sonar: the cone of the description's
        geometry; no echo is +inf (REP 117) or max_range (``sonar_no_return``)."""
        g = ctx.desc["geometry"]
        msg.header.stamp = ctx.stamp
        msg.header.frame_id = ctx.frame
        msg.radiation_type = type(msg).ULTRASOUND
        msg.field_of_view = float(g["sonar_field_of_view"])
        msg.min_range = float(g["sonar_min_range"])
        msg.max_range = float(g["sonar_max_range"])
        rng = state.range_m
        if math.isinf(rng):
            rng = math.inf if ctx.params["sonar_no_return"] == "inf" else msg.max_range
        msg.range = float(rng)
        msg.variance = 0.01 ** 2

    def viewer_text(self, reading) -> str:
        """The echo delay."""
        return f"delay={reading.delay}us"

    def viewer_line(self, index: int, reading) -> str | None:
        """None: the display client draws the sonars' cones."""
        return None


register_board_type(UltrasonicBoardType(
    name="ultrasonic",
    board="bsal_ros.hardware.boards:UltrasonicBoard",
    sim_board="bsal_ros.hardware.sim_boards:VirtualUltrasonicBoard",
    carries=("ultrasonic",),
    motor=False))

register_kind(UltrasonicKind(
    name="ultrasonic",
    device="bsal_ros.hardware.devices:Ultrasonic",
    fields=("delay_us", "range_m"),
    extra_fields=(),
    data_fields=("delay_us",),
    status_fields=("statval",),
    rci=RciSensor(sub=SensorType.ULTRASONIC, layout=SENSOR_DATA[SensorType.ULTRASONIC],
                  fields=(("delay_us", low16),)),
    rdi=RdiItem(code=RdiCode.Sn, sub=RdiSensorType.ULTRASONIC,
                layout=rdi_item_layout(RdiCode.Sn, RdiSensorType.ULTRASONIC)),
    diagnostics_group="Sonars",
    topic=RosTopic(name="sonar_{id:02d}", msg="sensor_msgs.msg:Range", qos="sensor"),
    viewer_label="sonar"))
