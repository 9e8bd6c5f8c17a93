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

from .convert import low16, u16, u32
from .registry import (BoardType, DeviceKind, RciSensor, RdiItem, register_board_type,
                       register_kind, RosTopic, ViewerSpec)
from ..protocol.constants import RdiCode, RdiSensorType, SensorType
from ..protocol.rci_tables import SENSOR_DATA
from ..protocol.rdi import UltrasonicReading
from ..protocol.wire_kinds import rdi_item_layout


def validate_board(name: str, b: dict) -> None:
    """Channels 1..8, one firing slot per channel, interval 5..1000 ms."""
    ch = int(b.get("channels", 0))
    if not 1 <= ch <= 8:
        raise ValueError("channels must be 1..8")
    if len(b.get("slots", [])) != ch:
        raise ValueError("slots needs one entry per channel")
    if not 5 <= int(b.get("interval_ms", 0)) <= 1000:
        raise ValueError("interval_ms must be 5..1000")


def scale_slot_rates(board: dict, rate_scale: float, all_boards_hz: float) -> None:
    """An ultrasonic board fires one slot per interval: a full round of its
    slots at ``all_boards_hz`` (the poll waits a round), else the interval
    divided by ``rate_scale``; never under 5 ms."""
    nslots = max(board["slots"]) + 1
    if all_boards_hz > 0:
        interval = max(5, int(1000.0 / (all_boards_hz * nslots)))
        board["interval_ms"] = interval
        board["poll_margin"] = max(1.0, (1000.0 / all_boards_hz) / (interval * nslots))
    elif rate_scale != 1.0:
        board["interval_ms"] = max(5, int(round(board["interval_ms"] / rate_scale)))


def fill_range(m, s, ctx) -> None:
    """A sensor_msgs/Range of one sonar: the cone of the description's
    geometry; no echo is +inf (REP 117) or max_range (``sonar_no_return``)."""
    g = ctx.desc["geometry"]
    m.header.stamp = ctx.stamp
    m.header.frame_id = ctx.frame
    m.radiation_type = type(m).ULTRASOUND
    m.field_of_view = float(g["sonar_field_of_view"])
    m.min_range = float(g["sonar_min_range"])
    m.max_range = float(g["sonar_max_range"])
    rng = s.range_m
    if math.isinf(rng):
        rng = math.inf if ctx.params["sonar_no_return"] == "inf" else m.max_range
    m.range = float(rng)
    m.variance = 0.01 ** 2


register_board_type(BoardType(
    name="ultrasonic",
    board="bsal_ros.hardware.boards:UltrasonicBoard",
    sim_board="bsal_ros.hardware.sim_boards:VirtualUltrasonicBoard",
    carries=("ultrasonic",),
    motor=False,
    validate=validate_board,
    rates=scale_slot_rates))

register_kind(DeviceKind(
    name="ultrasonic",
    device="bsal_ros.hardware.devices:Ultrasonic",
    motor=False,
    fields=("delay_us", "range_m"),
    extra_fields=(),
    data_fields=("delay_us",),
    status_fields=("statval",),
    rci=RciSensor(sub=SensorType.ULTRASONIC, layout=SENSOR_DATA[SensorType.ULTRASONIC],
                  fields=(("delay_us", low16),)),
    rdi=RdiItem(code=RdiCode.Sn, sub=RdiSensorType.ULTRASONIC,
                layout=rdi_item_layout(RdiCode.Sn, RdiSensorType.ULTRASONIC),
                reading=lambda d: UltrasonicReading(u16(d.delay_us), u32(d.statval))),
    diagnostics=lambda s: {"delay_us": s.delay_us,
                           "range_m": "inf" if math.isinf(s.range_m) else f"{s.range_m:.3f}"},
    diagnostics_group="Sonars",
    topic=RosTopic(name="sonar_{id:02d}", msg="sensor_msgs.msg:Range", qos="sensor",
                   fill=fill_range),
    viewer=ViewerSpec(label="sonar", text=lambda d: f"delay={d.delay}us", line=None)))
