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

// The drive pad: arrow keys and on-screen buttons, held to drive.
//
// While a direction is held a geometry_msgs/Twist goes to cmd_vel every
// SEND_PERIOD_MS (the hardware node stops the robot 0.5 s after the last one);
// releasing the last one sends a zero twist at once. Stop sends a zero twist
// and ignores what is still held until it is released and pressed again.

export const SEND_PERIOD_MS = 100;
// m/s forward or back, rad/s left or right
export const LINEAR = 0.2;
export const ANGULAR = 0.5;

const KEYS = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };

// The twist the held directions ask for.
export function twistOf(held) {
  const x = (held.has("up") ? LINEAR : 0) - (held.has("down") ? LINEAR : 0);
  const z = (held.has("left") ? ANGULAR : 0) - (held.has("right") ? ANGULAR : 0);
  return { linear: { x, y: 0, z: 0 }, angular: { x: 0, y: 0, z } };
}

export class DrivePad {
  // send(twist) -> true when it went out
  constructor(root, send) {
    this.root = root;
    this.send = send;
    this.buttons = [...root.querySelectorAll("button[data-dir]")];
    this.stopButton = root.querySelector("#stop");
    this.state = root.querySelector("#drive-state");
    this.held = new Map(); // direction -> set of sources holding it (key, pointer, button)
    this.suppressed = new Set(); // sources held through a Stop: ignored until released
    this.enabled = false;
    this.timer = null;
    this.sent = 0;
    this.zeros = 0;
    this.zeroAt = 0;
    this.bind();
  }

  bind() {
    for (const button of this.buttons) {
      const dir = button.dataset.dir;
      const source = `button:${dir}`;
      button.addEventListener("pointerdown", (e) => {
        if (!this.enabled) return;
        e.preventDefault();
        button.setPointerCapture(e.pointerId);
        this.press(dir, source);
      });
      for (const type of ["pointerup", "pointercancel", "lostpointercapture"]) {
        button.addEventListener(type, () => this.release(dir, source));
      }
      // Space or Enter on a focused button holds it too
      button.addEventListener("keydown", (e) => {
        if ((e.key === " " || e.key === "Enter") && !e.repeat) {
          e.preventDefault();
          this.press(dir, `${source}:key`);
        }
      });
      button.addEventListener("keyup", (e) => {
        if (e.key === " " || e.key === "Enter") this.release(dir, `${source}:key`);
      });
      button.addEventListener("contextmenu", (e) => e.preventDefault());
    }
    this.stopButton.addEventListener("click", () => this.stop());
    window.addEventListener("keydown", (e) => {
      const dir = KEYS[e.key];
      if (!dir || e.altKey || e.ctrlKey || e.metaKey) return;
      e.preventDefault(); // no scrolling while driving
      if (!e.repeat) this.press(dir, `key:${e.key}`);
    });
    window.addEventListener("keyup", (e) => {
      const dir = KEYS[e.key];
      if (dir) this.release(dir, `key:${e.key}`);
    });
    // a window that loses the keyboard never sees the key go up: stop now
    window.addEventListener("blur", () => this.releaseAll());
    document.addEventListener("visibilitychange", () => {
      if (document.hidden) this.releaseAll();
    });
  }

  // Allowed to drive (reason null) or not (the reason shown beside the disabled pad).
  enable(reason) {
    const on = reason === null;
    if (!on) this.releaseAll();
    this.enabled = on;
    for (const b of [...this.buttons, this.stopButton]) b.disabled = !on;
    this.state.textContent = on ? "ready: hold an arrow to drive" : `driving off: ${reason}`;
    this.state.classList.toggle("off", !on);
  }

  press(dir, source) {
    if (!this.enabled || this.suppressed.has(source)) return;
    if (!this.held.has(dir)) this.held.set(dir, new Set());
    this.held.get(dir).add(source);
    this.changed();
  }

  release(dir, source) {
    this.suppressed.delete(source);
    const sources = this.held.get(dir);
    if (!sources || !sources.delete(source)) return;
    if (sources.size === 0) this.held.delete(dir);
    this.changed();
  }

  releaseAll() {
    const wasDriving = this.held.size > 0;
    this.held.clear();
    this.suppressed.clear();
    if (wasDriving) this.changed();
  }

  // The Stop button: zero now, and what is held stays ignored until released.
  stop() {
    for (const sources of this.held.values()) for (const s of sources) this.suppressed.add(s);
    this.held.clear();
    this.changed(true);
  }

  changed(force = false) {
    for (const b of this.buttons) b.classList.toggle("held", this.held.has(b.dataset.dir));
    if (this.held.size > 0) {
      this.tick();
      if (this.timer === null) this.timer = setInterval(() => this.tick(), SEND_PERIOD_MS);
      return;
    }
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
      force = true;
    }
    if (force) {
      this.zeros += 1;
      this.zeroAt = Date.now(); // wall clock, ms: when the stop left the page (tests)
      this.send(twistOf(new Set()));
    }
    if (this.enabled) this.state.textContent = force ? "stopped" : "ready: hold an arrow to drive";
  }

  tick() {
    if (this.held.size === 0) return;
    const dirs = new Set(this.held.keys());
    if (this.send(twistOf(dirs))) this.sent += 1;
    if (this.enabled) this.state.textContent = `driving: ${[...dirs].join(" + ")}`;
  }
}
