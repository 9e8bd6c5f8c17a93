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

"""Draw a :class:`~bsal_ros.viewer.model.ViewerModel` into a Pillow image:
map view (grid, sonar echoes, pose trail, robot with steering wheel and sonar
cones) on the left, a text panel (motors, steering, encoders, accelerometer,
motion, device status) on the right."""

from __future__ import annotations

import math

from .model import fmt_speedval, ViewerModel
from ..kinds import kind
from ..protocol import speedval_unpack, Statval

BG = (250, 250, 247)
GRID = (225, 225, 220)
TEXT = (30, 30, 30)
TRAIL = (40, 90, 200)
ECHO = (120, 120, 120)
ROBOT = (60, 60, 60)
OK, ERR, OFF = (40, 160, 60), (210, 50, 40), (170, 170, 170)


def _status_color(raw: int):
    s = Statval.unpack(raw)
    if not s.on:
        return OFF
    return OK if s.ok and s.up else ERR


def render(model: ViewerModel, size=(800, 600), view_radius_m: float = 6.0,
           max_range_m: float = 5.0, fov: float = 0.35):
    """A PIL image of the model: robot, sonar ranges, echoes and trail."""
    from PIL import Image, ImageDraw  # optional dependency: only the rendering needs it
    w, h = size
    panel = max(220, w // 3)
    mw = w - panel
    img = Image.new("RGB", (w, h), BG)
    dr = ImageDraw.Draw(img, "RGBA")
    ego = model.ego
    cx, cy, th = (ego.xpos, ego.ypos, ego.angle) if ego is not None else (0.0, 0.0, 0.0)
    scale = min(mw, h) / (2.0 * view_radius_m)

    def px(x, y):
        return (mw / 2 + (x - cx) * scale, h / 2 - (y - cy) * scale)

    # grid, 1 m
    x0, x1 = cx - mw / 2 / scale, cx + mw / 2 / scale
    y0, y1 = cy - h / 2 / scale, cy + h / 2 / scale
    for gx in range(math.floor(x0), math.ceil(x1) + 1):
        dr.line([px(gx, y0), px(gx, y1)], fill=GRID)
    for gy in range(math.floor(y0), math.ceil(y1) + 1):
        dr.line([px(x0, gy), px(x1, gy)], fill=GRID)
    # sonar echoes (the room, as the sonars see it) and the pose trail
    for ex, ey in model.echoes:
        a, b = px(ex, ey)
        dr.rectangle([a - 1, b - 1, a + 1, b + 1], fill=ECHO)
    if len(model.trail) > 1:
        dr.line([px(x, y) for x, y in model.trail], fill=TRAIL, width=2)
    # sonar cones
    for ident, d in sorted(model.sonars.items()):
        pose = model.layout.get(ident)
        if pose is None:
            continue
        sx, sy, syaw = pose
        wx = cx + math.cos(th) * sx - math.sin(th) * sy
        wy = cy + math.sin(th) * sx + math.cos(th) * sy
        r = min(model.range_m(d.delay), max_range_m) if d.delay else max_range_m
        a = th + syaw
        col = _status_color(d.status)
        pts = [px(wx, wy)] + [px(wx + r * math.cos(a + k * fov / 8),
                                 wy + r * math.sin(a + k * fov / 8)) for k in range(-4, 5)]
        dr.polygon(pts, fill=col + (60,), outline=col + (160,))
    # robot body (rear axle at the pose, 0.6 m x 0.5 m) and steering wheel
    c, s = math.cos(th), math.sin(th)
    body = [(-0.1, -0.25), (0.55, -0.25), (0.55, 0.25), (-0.1, 0.25)]
    dr.polygon([px(cx + c * bx - s * by, cy + s * bx + c * by) for bx, by in body],
               fill=(200, 200, 200, 200), outline=ROBOT)
    steer = next(iter(model.steer.values()), None)
    wa = th + (steer.angle if steer is not None else 0.0)
    fx, fy = cx + c * 0.5, cy + s * 0.5
    dr.line([px(fx - 0.1 * math.cos(wa), fy - 0.1 * math.sin(wa)),
             px(fx + 0.1 * math.cos(wa), fy + 0.1 * math.sin(wa))], fill=(0, 0, 0), width=4)
    dr.line([px(cx, cy), px(cx + 0.3 * c, cy + 0.3 * s)], fill=(200, 40, 40), width=2)

    # text panel
    dr.rectangle([mw, 0, w, h], fill=(238, 238, 232))
    lines = []
    bt = model.base_time
    lines.append(f"base time {bt.sec}.{bt.usec:06d}" if bt else "base time -")
    if ego is not None:
        lines.append(f"pose x {ego.xpos:+.2f} y {ego.ypos:+.2f} m")
        lines.append(f"     heading {math.degrees(ego.angle):+.1f} deg")
    if model.omni is not None:
        lines.append(f"motion {model.omni.speed:.2f} m/s "
                     f"dir {math.degrees(model.omni.direction):+.0f} deg")
    for ident, m in sorted(model.motors.items()):
        duty, _ = speedval_unpack(m.speed)
        lines.append(f"motor {ident}: {fmt_speedval(m.speed)}")
    for ident, a in sorted(model.steer.items()):
        lines.append(f"steer {ident}: {math.degrees(a.angle):+.1f} deg")
    for ident, d in sorted(model.drive.items()):
        lines.append(f"drive {ident}: {d.rotations:+.2f} rot")
    kinds = {name: kind(name) for name in model.sensors}   # bsal_ros/kinds
    for name, table in model.sensors.items():
        for ident, e in sorted(table.items()):
            line = kinds[name].viewer_line(ident, e)
            if line is not None:
                lines.append(line)
    lines.append(f"packets {model.packets} frames {model.frames}")
    y = 8
    for ln in lines:
        dr.text((mw + 8, y), ln, fill=TEXT)
        y += 14
    # device status: one dot per device
    y += 6
    dr.text((mw + 8, y), "status (green ok, red error, grey off)", fill=TEXT)
    y += 16
    groups = [(kinds[name].viewer_label or name, table)
              for name, table in model.sensors.items()]
    groups += [("motor", model.motors), ("steer", model.steer)]
    for name, table in groups:
        if not table:
            continue
        dr.text((mw + 8, y), name, fill=TEXT)
        x = mw + 60
        for ident, d in sorted(table.items()):
            dr.ellipse([x, y + 2, x + 9, y + 11], fill=_status_color(d.status))
            x += 13
            if x > w - 12:
                x = mw + 60
                y += 14
        y += 16
    return img
