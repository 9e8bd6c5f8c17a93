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

"""What a display client knows after reading an RDI stream (pure Python).

:class:`ViewerModel` applies decoded RDI packets (newest wins) and keeps a
bounded pose trail and a bounded cloud of sonar echoes in world coordinates
(what outlines the room). :func:`describe` turns one packet into one line of
text (the ``--dump`` mode), decoding statval/speedval into readable units.
"""

from __future__ import annotations

from collections import deque
import math

from ..core.units import delay_to_range, SPEED_OF_SOUND
from ..kinds import rdi_kind
from ..kinds.convert import fmt_statval
from ..protocol import (Form, RdiActuator, RdiActuatorType, RdiBaseTime, RdiCode, RdiMotor,
                        RdiOrientEgo, RdiOrientOmni, RdiSensor, RdiSensorType, speedval_unpack,
                        Statval, Timeval)

__all__ = ["ViewerModel", "describe", "sonar_layout", "fmt_statval", "fmt_speedval"]


def sonar_layout() -> dict[int, tuple[float, float, float]]:
    """Sonar id -> (x, y, yaw) in the robot frame: from the project's robot
    description when available, else a 12-sensor ring."""
    try:
        from ..hardware.description import load_description
        devs = load_description(None)["robot"]["devices"]["ultrasonic"]
        out = {int(d["id"]): tuple(float(v) for v in d["pose"]) for d in devs.values()}
        if out:
            return out
    except Exception:   # noqa: BLE001 - the viewer also works outside the project
        pass
    return {i: (0.25 + 0.28 * math.cos(i * math.pi / 6), 0.28 * math.sin(i * math.pi / 6),
                i * math.pi / 6) for i in range(12)}


def fmt_speedval(raw: int) -> str:
    """A speedval as signed percent or rad/s."""
    duty, v = speedval_unpack(raw)
    return f"{v:+.1f}%" if duty else f"{v:+.3f}rad/s"


def _items_text(p) -> str:
    parts = []
    sub = p.sub_code
    for ident, d in p.items:
        if isinstance(p, RdiSensor):
            k = rdi_kind(RdiCode.Sn, sub)      # the kind's own text (bsal_ros/kinds)
            text = k.viewer_text(d) if k is not None else f"{tuple(d)}"
        elif isinstance(p, RdiMotor):
            text = f"speed=0x{d.speed:04x}({fmt_speedval(d.speed)})"
        elif sub == RdiActuatorType.STEER:
            text = f"angle={d.angle:.4f}rad"
        else:
            text = f"rotations={d.rotations:.4f}"
        parts.append(f"{ident}:{text} st={fmt_statval(d.status)}")
    return " ".join(parts)


def describe(p) -> str:
    """One line of text for one packet."""
    if isinstance(p, RdiBaseTime):
        return f"RDI-Ms BASETIME sec={p.time.sec} usec={p.time.usec}"
    if isinstance(p, RdiOrientEgo):
        return (f"RDI-RbOr EGO x={p.xpos:.4f}m y={p.ypos:.4f}m angle={p.angle:.4f}rad "
                f"st={fmt_statval(p.status)}")
    if isinstance(p, RdiOrientOmni):
        return (f"RDI-RbOr OMNI direction={p.direction:.4f}rad speed={p.speed:.4f}m/s "
                f"st={fmt_statval(p.status)}")
    code = {RdiSensor: "RDI-Sn", RdiMotor: "RDI-Mt", RdiActuator: "RDI-Ac"}[type(p)]
    form = {Form.GENERAL: "general", Form.POLY: "poly", Form.GROUP: "group"}[p.form]
    sub = getattr(p.sub_code, "name", None)
    if sub is None:
        k = rdi_kind(RdiCode.Sn, p.sub_code) if isinstance(p, RdiSensor) else None
        sub = k.name.upper() if k is not None else f"{p.sub_code:#04x}"
    return f"{code} {sub} {form} n={len(p.items)} {_items_text(p)}"


class ViewerModel:
    """What the viewer knows of the robot from the RDI packets received."""

    def __init__(self, speed_of_sound: float = SPEED_OF_SOUND,
                 layout: dict | None = None, trail: int = 2000, echoes: int = 4000):
        self.c = float(speed_of_sound)
        self.layout = layout if layout is not None else sonar_layout()
        self.base_time: Timeval | None = None
        #: device kind -> id -> its latest RDI-Sn reading (every kind of bsal_ros/kinds)
        self.sensors: dict[str, dict] = {}
        self.sonars: dict[int, tuple[int, int]] = self.sensors.setdefault("ultrasonic", {})
        self.relenc: dict = self.sensors.setdefault("relative_encoder", {})
        self.absenc: dict = self.sensors.setdefault("absolute_encoder", {})
        self.accel: dict = self.sensors.setdefault("accelerometer", {})
        self.unknown = 0              # RDI-Sn packets of a sub-code no kind declares
        self.motors: dict = {}
        self.steer: dict = {}
        self.drive: dict = {}
        self.ego: RdiOrientEgo | None = None
        self.omni: RdiOrientOmni | None = None
        self.trail: deque = deque(maxlen=trail)
        self.echoes: deque = deque(maxlen=echoes)
        self.packets = 0
        self.frames = 0
        self._pending_echoes = None

    def range_m(self, delay_us: int) -> float:
        """Range (m) of an ultrasonic round-trip delay (us); 0 (no echo): inf."""
        return delay_to_range(delay_us, self.c)

    def apply(self, p) -> None:
        """Take one RDI packet into the model."""
        self.packets += 1
        if isinstance(p, RdiSensor):
            k = rdi_kind(RdiCode.Sn, p.sub_code)
            if k is None:
                self.unknown += 1
                return
            table = self.sensors.setdefault(k.name, {})
            for ident, d in p.items:
                table[ident] = d
            if p.sub_code == RdiSensorType.ULTRASONIC:
                self._pending_echoes = p.items    # placed when this frame's pose arrives
        elif isinstance(p, RdiMotor):
            self.motors.update(p.items)
        elif isinstance(p, RdiActuator):
            (self.steer if p.sub_code == RdiActuatorType.STEER else self.drive).update(p.items)
        elif isinstance(p, RdiOrientEgo):
            self.ego = p
            if self._pending_echoes:
                self._echoes(self._pending_echoes)
                self._pending_echoes = None
            if not self.trail or math.hypot(self.trail[-1][0] - p.xpos,
                                            self.trail[-1][1] - p.ypos) > 0.01:
                self.trail.append((p.xpos, p.ypos))
        elif isinstance(p, RdiOrientOmni):
            self.omni = p
            self.frames += 1          # omni closes every frame the gateway builds
        elif isinstance(p, RdiBaseTime):
            self.base_time = p.time

    def _echoes(self, items) -> None:
        if self.ego is None:
            return
        x, y, th = self.ego.xpos, self.ego.ypos, self.ego.angle
        for ident, d in items:
            pose = self.layout.get(ident)
            if pose is None or d.delay == 0 or not Statval.unpack(d.status).ok:
                continue
            r = self.range_m(d.delay)
            if r > 5.0:
                continue
            sx, sy, syaw = pose
            wx = x + math.cos(th) * sx - math.sin(th) * sy
            wy = y + math.sin(th) * sx + math.cos(th) * sy
            a = th + syaw
            self.echoes.append((wx + r * math.cos(a), wy + r * math.sin(a)))
