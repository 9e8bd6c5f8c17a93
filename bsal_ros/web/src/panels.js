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

// What the page's text says: figures, the control application's view, health.
// Pure functions of the decoded messages (no DOM), so each is easy to read.

export const LEVELS = ["OK", "WARN", "ERROR", "STALE"];

export const deg = (rad) => (rad * 180) / Math.PI;

// v with n decimals, never "-0.00"
export function fixed(v, n) {
  const text = v.toFixed(n);
  return Number(text) === 0 ? (0).toFixed(n) : text;
}

// yaw (rad) of a quaternion
export function yawOf(q) {
  return Math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z));
}

// "1.23 m", "no echo" (the REP-117 +inf, or max_range), "below 0.15 m"
export function rangeText(msg) {
  if (!Number.isFinite(msg.range) || msg.range >= msg.max_range) return "no echo";
  if (msg.range < msg.min_range) return `below ${msg.min_range.toFixed(2)} m`;
  return `${msg.range.toFixed(2)} m`;
}

export function stampText(stamp) {
  return `${stamp.sec}.${String(stamp.nanosec).padStart(9, "0")}`;
}

// The encoders topic: {relative, absolute} texts
export function encoderTexts(msg) {
  const out = {};
  for (const s of msg.states || []) {
    if (s.device_class === "relative_encoder") {
      out.relative = `count ${s.count}, ${s.position.toFixed(2)} rad`;
    } else if (s.device_class === "absolute_encoder") {
      out.absolute = `count ${s.count}, ${deg(s.position).toFixed(1)}°`;
    }
  }
  return out;
}

export function accelText(imu) {
  const a = imu.linear_acceleration.x;
  return `${fixed(a, 3)} m/s² (${fixed(a / 9.80665, 3)} g)`;
}

// rci/session: connected <user> [from <address>] [at <ISO time>], closed <reason>,
// silence <detail>
export function parseSession(text) {
  const m = /^connected(?:\s+(\S+))?(?:\s+from\s+(\S+))?(?:\s+at\s+(\S+))?/.exec(text);
  if (m) return { kind: "connected", user: m[1] || "(unnamed)", from: m[2] || "", at: m[3] || "" };
  if (text.startsWith("closed")) return { kind: "closed", reason: text.slice(6).trim() };
  if (text.startsWith("silence")) return { kind: "silence", detail: text.slice(7).trim() };
  return { kind: "other", text };
}

function pad2(v) {
  return String(v).padStart(2, "0");
}

// "2026-12-07 10:15:02 (2 min 5 s ago)" in the browser's time zone
export function sinceText(iso, nowMs) {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return iso || "-";
  const d = new Date(t);
  const when = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} `
    + `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  const s = Math.max(0, Math.round((nowMs - t) / 1000));
  const ago = s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min ${s % 60} s`
    : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${when} (${ago} ago)`;
}

// ids as "0-11" or "0, 2, 5"
export function idRanges(ids) {
  const sorted = [...ids].sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i < sorted.length; i += 1) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j += 1;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j;
  }
  return parts.join(", ");
}

// The control application's view from rci/ca_states: its devices (class:id -> state)
export class CaView {
  constructor() {
    this.devices = new Map();
  }

  clear() {
    this.devices.clear();
  }

  update(msg) {
    for (const s of msg.states || []) this.devices.set(`${s.device_class}:${s.id}`, s);
  }

  activatedText() {
    const byClass = new Map();
    for (const s of this.devices.values()) {
      if (!s.on) continue;
      if (!byClass.has(s.device_class)) byClass.set(s.device_class, []);
      byClass.get(s.device_class).push(s.id);
    }
    if (byClass.size === 0) return "none it was told of";
    return [...byClass.entries()].sort().map(([c, ids]) => `${c} ${idRanges(ids)}`).join("; ");
  }

  motorsText() {
    const motors = [...this.devices.values()].filter((s) => s.device_class.endsWith("_motor"));
    if (motors.length === 0) return "none reported to it";
    return motors.sort((a, b) => (a.device_class + a.id).localeCompare(b.device_class + b.id))
      .map((s) => {
        const speed = s.duty_mode ? `${s.speed.toFixed(0)} % duty` : `${s.speed.toFixed(2)} rad/s`;
        const pos = s.device_class === "pservo_motor" ? `, at ${deg(s.motor_position).toFixed(1)}°` : "";
        return `${s.device_class} ${s.id}: ${speed}${pos} (speedval 0x${s.speedval.toString(16)})`;
      }).join("; ");
  }
}

// /diagnostics: the newest status of each device, by name
export class Diagnostics {
  constructor() {
    this.statuses = new Map();
  }

  // the statuses of the nodes in namespace ns ("<node FQN>: <device>"); /diagnostics is
  // shared by every robot of the ROS domain
  update(msg, nowMs, ns = "/") {
    for (const s of msg.status || []) {
      const cut = s.name.indexOf(": ");
      if (cut > 0) {
        const fqn = s.name.slice(0, cut);
        const nodeNs = fqn.slice(0, fqn.lastIndexOf("/")) || "/";
        if (fqn.startsWith("/") && nodeNs !== ns) continue;
      }
      this.statuses.set(s.name, { status: s, at: nowMs });
    }
  }

  // [{name, level (0..3), levelText, message, stale}] in name order
  rows(nowMs, staleMs) {
    return [...this.statuses.entries()].sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
      .map(([name, { status, at }]) => {
        const stale = nowMs - at > staleMs;
        const level = Number(status.level);
        return { name: name.includes(": ") ? name.slice(name.indexOf(": ") + 2) : name,
          fullName: name, level, levelText: stale ? "stale" : (LEVELS[level] || `level ${level}`),
          message: status.message, stale };
      });
  }
}
