// Copyright 2026 The bsal_ros authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.
//
// SPDX-License-Identifier: Apache-2.0

// Brak from above, in SVG, drawn from its robot description (URDF).
//
// One SVG unit is one metre, in ROS axes (x forward, y left: the world group
// flips SVG's y). Every link with a visual is drawn as its outline seen from
// above; every joint is a group placed at its origin, a moving joint about z
// (the steering) turned by its position from joint_states. A sonar's cone is
// drawn in its link's frame: field of view and length (the range) straight
// from its Range message, so the arc's radius in the path is the range in
// metres.

const SVG = "http://www.w3.org/2000/svg";
// half the width of the view, m
export const VIEW_HALF = 2;
const TRAIL_POINTS = 3000;
const TRAIL_STEP = 0.01;
const MATERIALS = new Set(["body", "tyre", "fork", "sonar", "accelerometer"]);

function el(name, attrs = {}) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function numbers(text, n) {
  const out = String(text || "").trim().split(/\s+/).map(Number);
  while (out.length < n) out.push(0);
  return out.slice(0, n).map((v) => (Number.isFinite(v) ? v : 0));
}

function origin(node) {
  const o = node ? node.querySelector(":scope > origin") : null;
  const [x, y, z] = numbers(o && o.getAttribute("xyz"), 3);
  const [roll, pitch, yaw] = numbers(o && o.getAttribute("rpy"), 3);
  return { x, y, z, roll, pitch, yaw };
}

const deg = (rad) => (rad * 180) / Math.PI;
const fmt = (v) => Number(v.toFixed(4));
const near = (a, b) => Math.abs(Math.abs(a) - b) < 1e-3;

// The robot description as {root, links: name -> [visual], joints: [joint]}.
export function parseUrdf(text) {
  const doc = new DOMParser().parseFromString(text, "application/xml");
  if (doc.querySelector("parsererror") || !doc.querySelector("robot")) {
    throw new Error("robot_description is not URDF");
  }
  const links = new Map();
  for (const link of doc.querySelectorAll("robot > link")) {
    const visuals = [];
    for (const visual of link.querySelectorAll(":scope > visual")) {
      const geometry = visual.querySelector("geometry > *");
      const material = visual.querySelector(":scope > material");
      if (geometry) {
        visuals.push({ origin: origin(visual), shape: geometry.localName, geometry,
          material: material ? material.getAttribute("name") : "" });
      }
    }
    links.set(link.getAttribute("name"), visuals);
  }
  const joints = [];
  const children = new Set();
  for (const joint of doc.querySelectorAll("robot > joint")) {
    const parent = joint.querySelector(":scope > parent");
    const child = joint.querySelector(":scope > child");
    const axis = joint.querySelector(":scope > axis");
    if (!parent || !child) continue;
    joints.push({ name: joint.getAttribute("name"), type: joint.getAttribute("type"),
      parent: parent.getAttribute("link"), child: child.getAttribute("link"),
      origin: origin(joint), axis: numbers(axis ? axis.getAttribute("xyz") : "1 0 0", 3) });
    children.add(child.getAttribute("link"));
  }
  const root = [...links.keys()].find((name) => !children.has(name));
  return { root, links, joints };
}

// The outline of one visual seen from above (an SVG element), or null.
function outline(visual) {
  const { origin: o, shape, geometry } = visual;
  const cls = MATERIALS.has(visual.material) ? visual.material : "part";
  const g = el("g", { transform: `translate(${fmt(o.x)} ${fmt(o.y)}) rotate(${fmt(deg(o.yaw))})`,
    class: cls });
  if (shape === "cylinder") {
    const r = Number(geometry.getAttribute("radius"));
    const len = Number(geometry.getAttribute("length"));
    if (near(o.roll, Math.PI / 2)) { // axis along y: a wheel
      g.appendChild(el("rect", { x: -r, y: -len / 2, width: 2 * r, height: len }));
    } else if (near(o.pitch, Math.PI / 2)) { // axis along x
      g.appendChild(el("rect", { x: -len / 2, y: -r, width: len, height: 2 * r }));
    } else {
      g.appendChild(el("circle", { r }));
    }
  } else if (shape === "box") {
    const [sx, sy] = numbers(geometry.getAttribute("size"), 3);
    g.appendChild(el("rect", { x: -sx / 2, y: -sy / 2, width: sx, height: sy }));
  } else if (shape === "sphere") {
    g.appendChild(el("circle", { r: Number(geometry.getAttribute("radius")) }));
  } else {
    return null;
  }
  return g;
}

// The path of a cone from the origin along x: half angle h, length r (the arc's radius).
export function conePath(r, fov) {
  const h = fov / 2;
  const x = fmt(r * Math.cos(h));
  const y = fmt(r * Math.sin(h));
  const rr = fmt(r);
  return `M0 0 L${x} ${-y} A${rr} ${rr} 0 0 1 ${x} ${y} Z`;
}

export class RobotView {
  constructor(svg) {
    this.svg = svg;
    this.world = svg.querySelector("#world");
    this.grid = svg.querySelector("#grid");
    this.trail = svg.querySelector("#trail");
    this.posed = svg.querySelector("#robot-pose");
    this.linkGroups = new Map(); // link name -> group in the link's frame
    this.moving = new Map(); // joint name -> {group, axisZ}
    this.cones = new Map(); // topic -> path
    this.trailPoints = [];
    this.gridCell = null;
    this.pose = { x: 0, y: 0, yaw: 0 };
    this.description = "";
  }

  // Draw the robot from its URDF text (again only when the text changed).
  setDescription(text) {
    if (text === this.description) return;
    const model = parseUrdf(text);
    this.description = text;
    this.posed.replaceChildren();
    this.linkGroups.clear();
    this.moving.clear();
    const cones = [...this.cones.values()];
    this.cones.clear();
    const byParent = new Map();
    for (const joint of model.joints) {
      if (!byParent.has(joint.parent)) byParent.set(joint.parent, []);
      byParent.get(joint.parent).push(joint);
    }
    const addLink = (name, into) => {
      const g = el("g", { "data-link": name });
      for (const visual of model.links.get(name) || []) {
        const shape = outline(visual);
        if (shape) g.appendChild(shape);
      }
      into.appendChild(g);
      this.linkGroups.set(name, g);
      for (const joint of byParent.get(name) || []) {
        const o = joint.origin;
        const placed = el("g", { "data-joint": joint.name,
          transform: `translate(${fmt(o.x)} ${fmt(o.y)}) rotate(${fmt(deg(o.yaw))})` });
        g.appendChild(placed);
        let inner = placed;
        if (joint.type === "revolute" || joint.type === "continuous") {
          inner = el("g", { class: "moving" });
          placed.appendChild(inner);
          this.moving.set(joint.name, { group: inner, axisZ: Math.abs(joint.axis[2]) > 0.5 ? Math.sign(joint.axis[2]) : 0 });
        }
        addLink(joint.child, inner);
      }
    };
    if (model.root) addLink(model.root, this.posed);
    this.posed.appendChild(el("line", { class: "heading", x1: 0, y1: 0, x2: 0.15, y2: 0 }));
    // cones drawn before the description came are put into their frames again
    for (const cone of cones) this.placeCone(cone);
  }

  // A moving joint's position (rad) from joint_states: turns it when it turns about z.
  setJoint(name, position) {
    const joint = this.moving.get(name);
    if (!joint || !joint.axisZ || !Number.isFinite(position)) return;
    joint.group.setAttribute("transform", `rotate(${fmt(deg(position * joint.axisZ))})`);
  }

  // The link a Range's frame_id names (the frame prefix stripped), or undefined.
  linkOf(frameId) {
    if (this.linkGroups.has(frameId)) return frameId;
    let best;
    for (const name of this.linkGroups.keys()) {
      if (frameId.endsWith(name) && (!best || name.length > best.length)) best = name;
    }
    return best;
  }

  placeCone(cone) {
    const link = this.linkOf(cone.getAttribute("data-frame") || "");
    const group = link ? this.linkGroups.get(link) : null;
    (group || this.posed).appendChild(cone);
    this.cones.set(cone.getAttribute("data-topic"), cone);
  }

  // One sonar's cone: length = its range (max_range, dashed, without an echo).
  setRange(topic, msg, stale) {
    let cone = this.cones.get(topic);
    if (!cone) {
      cone = el("path", { class: "cone", "data-topic": topic, "data-frame": msg.header.frame_id });
      this.placeCone(cone);
    }
    const echo = Number.isFinite(msg.range) && msg.range < msg.max_range;
    const length = Number.isFinite(msg.range) ? Math.min(msg.range, msg.max_range) : msg.max_range;
    cone.setAttribute("d", conePath(Math.max(length, 0), msg.field_of_view));
    cone.setAttribute("class", `cone${echo ? "" : " no-echo"}${stale ? " stale" : ""}`);
  }

  markStale(topic, stale) {
    const cone = this.cones.get(topic);
    if (cone) cone.classList.toggle("stale", stale);
  }

  // The robot's odometry pose: moves the drawing, the trail and the view.
  setPose(x, y, yaw) {
    this.pose = { x, y, yaw };
    this.posed.setAttribute("transform", `translate(${fmt(x)} ${fmt(y)}) rotate(${fmt(deg(yaw))})`);
    const last = this.trailPoints[this.trailPoints.length - 1];
    if (!last || Math.hypot(last[0] - x, last[1] - y) >= TRAIL_STEP) {
      this.trailPoints.push([x, y]);
      if (this.trailPoints.length > TRAIL_POINTS) this.trailPoints.shift();
      this.trail.setAttribute("points", this.trailPoints.map(([a, b]) => `${fmt(a)},${fmt(b)}`).join(" "));
    }
    const h = VIEW_HALF;
    this.svg.setAttribute("viewBox", `${fmt(x - h)} ${fmt(-y - h)} ${2 * h} ${2 * h}`);
    this.drawGrid(x, y);
  }

  // One line a metre, around the robot (redrawn when it enters another square metre).
  drawGrid(x, y) {
    const cell = `${Math.floor(x)},${Math.floor(y)}`;
    if (cell === this.gridCell) return;
    this.gridCell = cell;
    const h = VIEW_HALF + 2;
    const lines = [];
    for (let v = Math.floor(x - h); v <= Math.ceil(x + h); v += 1) {
      lines.push(el("line", { x1: v, y1: y - h, x2: v, y2: y + h, class: v === 0 ? "axis" : "" }));
    }
    for (let v = Math.floor(y - h); v <= Math.ceil(y + h); v += 1) {
      lines.push(el("line", { x1: x - h, y1: v, x2: x + h, y2: v, class: v === 0 ? "axis" : "" }));
    }
    this.grid.replaceChildren(...lines);
  }
}
