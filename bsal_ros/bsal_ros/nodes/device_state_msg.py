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

"""The one converter between :class:`bsal_ros.core.DeviceState` and
``bsal_interfaces/DeviceState``: the hardware node packs, the gateways unpack.

Values are clamped to the message's field widths (never wrapped), so a state
that round-trips through the message keeps every value the wire can carry.

The fields are not listed here: they are those of the record
(``dataclasses.fields``) that the generated message has
(``get_fields_and_field_types()``), each converted by its message type; the
record's ``stamp`` is the header stamp, its ``extra`` (a device kind's own
values) the ``extra_names``/``extra_values`` pair. :func:`mismatch` names
every field one side has and the other lacks (beyond :data:`HARDWARE_ONLY`);
the converter refuses to load while there is one.
"""

from __future__ import annotations

import dataclasses
import math

from bsal_interfaces.msg import DeviceState as DeviceStateMsg
from builtin_interfaces.msg import Time

from bsal_ros.core import DeviceState
from bsal_ros.core.units import clamp_int


def time_msg(t: float | None) -> Time:
    """Seconds (None or negative: never) -> builtin_interfaces/Time."""
    if t is None or not math.isfinite(t) or t < 0:
        return Time()
    sec = int(math.floor(t))
    nsec = int(round((t - sec) * 1e9))
    if nsec >= 1_000_000_000:
        sec, nsec = sec + 1, nsec - 1_000_000_000
    return Time(sec=sec, nanosec=nsec)


def time_seconds(t: Time) -> float | None:
    """builtin_interfaces/Time -> seconds; the zero time means never (None)."""
    if t.sec == 0 and t.nanosec == 0:
        return None
    return t.sec + t.nanosec * 1e-9


#: record fields the hardware node keeps to itself (not in the message)
HARDWARE_ONLY = ("measured_speed", "stalled", "stop_pending", "watchdog_stopped", "phase")
#: record field -> where the message carries it, and message fields no record field names
_ELSEWHERE = {"stamp": "header", "extra": ("extra_names", "extra_values")}
_MSG_ONLY = ("header", "extra_names", "extra_values")
_INT_RANGES = {"int8": (-128, 127), "uint8": (0, 0xFF), "int16": (-32768, 32767),
               "uint16": (0, 0xFFFF), "int32": (-(1 << 31), (1 << 31) - 1),
               "uint32": (0, 0xFFFFFFFF), "int64": (-(1 << 63), (1 << 63) - 1),
               "uint64": (0, (1 << 64) - 1)}


def mismatch(record_fields=None, msg_types=None) -> list[str]:
    """What the record and the message disagree on (empty: they agree)."""
    record = [f.name for f in dataclasses.fields(DeviceState)] if record_fields is None \
        else list(record_fields)
    types = DeviceStateMsg.get_fields_and_field_types() if msg_types is None else msg_types
    out = []
    for name in record:
        if name in HARDWARE_ONLY:
            if name in types:
                out.append(f"{name} is listed hardware-only but the message has it")
            continue
        where = _ELSEWHERE.get(name, name)
        for w in (where,) if isinstance(where, str) else where:
            if w not in types:
                out.append(f"DeviceState.{name} has no message field {w!r}")
    for name in types:
        if name not in record and name not in _MSG_ONLY:
            out.append(f"message field {name!r} has no DeviceState field")
    return out


def _converter(msg_type: str):
    if msg_type == "boolean":
        return bool
    if msg_type in ("float", "double"):
        return float
    if msg_type == "string":
        return str
    lo, hi = _INT_RANGES[msg_type]
    return lambda v: clamp_int(v, lo, hi)


def _plan() -> tuple[tuple[str, object], ...]:
    problems = mismatch()
    if problems:
        raise RuntimeError("DeviceState and bsal_interfaces/DeviceState disagree: "
                           + "; ".join(problems))
    types = DeviceStateMsg.get_fields_and_field_types()
    return tuple((name, _converter(types[name])) for name in types
                 if name not in _MSG_ONLY)


#: (field, conversion into the message's type), every field both sides carry
FIELDS = _plan()
_NAMES = tuple(name for name, _ in FIELDS)


def to_msg(s: DeviceState, frame_id: str = "") -> DeviceStateMsg:
    """Pack one record into a message (hardware-only fields are left out)."""
    m = DeviceStateMsg()
    m.header.stamp = time_msg(s.stamp)
    m.header.frame_id = frame_id
    for name, conv in FIELDS:
        value = getattr(s, name)
        if value:       # a new message already holds 0, 0.0, False and "" (-0.0 goes as 0.0)
            setattr(m, name, conv(value))
    if s.extra:
        m.extra_names = list(s.extra)
        m.extra_values = [float(v) for v in s.extra.values()]
    return m


def from_msg(m: DeviceStateMsg) -> DeviceState:
    """Unpack a message into a record (hardware-only fields keep defaults)."""
    s = DeviceState(**{name: getattr(m, name) for name in _NAMES},
                    stamp=time_seconds(m.header.stamp))
    if m.extra_names:
        s.extra = dict(zip(m.extra_names, m.extra_values))
    return s
