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

// Brak's page (docs/PAGE.md): the robot in real time, the control application's
// view, health and a drive pad, over one connection to the Foxglove gateway.
//
// Messages are kept as they come (newest per topic); the page is redrawn at
// most once per animation frame, so it follows the topics' rates (sonars 8 Hz
// each, odometry 20 Hz) without drawing more than the screen shows. Each
// redraw's time (performance.now) is kept for bench/bench_page.py.

import { Connection, writerFor } from "./connection.js";
import { DrivePad } from "./drive.js";
import { accelText, CaView, Diagnostics, deg, encoderTexts, fixed, parseSession, rangeText,
  sinceText, stampText, yawOf } from "./panels.js";
import { RobotView } from "./robot.js";

// no message for this long: the topic is shown stale, not its old value
const STALE_MS = 2000;
const DIAGNOSTICS_STALE_MS = 3500;
// nothing at all from the gateway for this long while connected: the banner says so
const SILENT_MS = 2000;
const CHECK_MS = 250;
const RENDER_TIMES = 65536;
const RANGE = "sensor_msgs/msg/Range";
const TWIST = "geometry_msgs/msg/Twist";
// the definition the page publishes with when the gateway advertised no cmd_vel
// channel to take it from (geometry_msgs/Twist, as rosbag2 writes it)
const TWIST_DEFINITION = `geometry_msgs/Vector3 linear
geometry_msgs/Vector3 angular
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z
`;

const $ = (id) => document.getElementById(id);

// relative name -> how it is watched: stale after staleMs (periodic), or event-driven
const WATCHED = {
  odom: { staleMs: STALE_MS },
  joint_states: { staleMs: STALE_MS },
  encoders: { staleMs: STALE_MS },
  imu: { staleMs: STALE_MS },
  "/diagnostics": { staleMs: DIAGNOSTICS_STALE_MS },
  robot_description: { event: true },
  "rci/session": { event: true },
  "rci/ca_states": { event: true },
};

class Page {
  constructor() {
    this.ns = "/";
    this.view = new RobotView($("robot"));
    this.ca = new CaView();
    this.diagnostics = new Diagnostics();
    this.session = null; // parsed rci/session
    this.sessionNotice = "";
    this.latest = new Map(); // topic -> {msg, at}
    this.seen = new Map(); // topic -> {first, last, count, times[]}
    this.sonarRows = new Map(); // topic -> row
    this.dirty = new Set();
    this.frame = 0;
    this.connectedAt = 0;
    this.linkState = { kind: "connecting", detail: "" };
    this.loss = null; // why the last connection ended (null: connected, or never tried)
    this.stats = { renders: 0, messages: 0, renderMs: new Float64Array(RENDER_TIMES), renderCount: 0 };
    this.cmdVel = null; // {channelId, writer}
    this.conn = new Connection({
      state: (kind, detail) => this.onState(kind, detail),
      advertised: () => this.onAdvertised(),
      message: (channel, msg, at) => this.onMessage(channel, msg, at),
      serverInfo: () => this.onServerInfo(),
      status: (status) => this.onStatus(status),
    });
    this.conn.wanted = (channel) => this.wants(channel);
    this.pad = new DrivePad(document.querySelector(".drive"), (twist) => this.sendTwist(twist));
    this.pad.enable("not connected");
  }

  start() {
    this.conn.start();
    setInterval(() => this.check(), CHECK_MS);
  }

  topic(name) {
    if (name.startsWith("/")) return name;
    return this.ns === "/" ? `/${name}` : `${this.ns}/${name}`;
  }

  relative(topic) {
    const prefix = this.ns === "/" ? "/" : `${this.ns}/`;
    return topic.startsWith(prefix) ? topic.slice(prefix.length) : topic;
  }

  wants(channel) {
    if (channel.schemaName === RANGE && channel.topic.startsWith(this.ns === "/" ? "/" : `${this.ns}/`)) {
      return true;
    }
    return Object.keys(WATCHED).some((name) => this.topic(name) === channel.topic);
  }

  // ------------------------------------------------------------ connection
  onState(kind, detail) {
    this.linkState = { kind, detail };
    // a loss stays on the banner while the page tries again, until it is connected
    if (kind === "lost") this.loss = detail;
    if (kind === "connected") this.loss = null;
    if (kind === "connected") {
      this.connectedAt = performance.now();
      if (this.conn.config && this.conn.config.namespace) this.ns = this.conn.config.namespace;
      // what a new connection must tell again: the latched session comes back by itself
      this.session = null;
      this.sessionNotice = "";
      this.ca.clear();
      this.diagnostics.statuses.clear();
      this.dirty.add("ca");
      this.dirty.add("health");
    }
    if (kind !== "connected") {
      this.cmdVel = null;
      this.pad.enable(kind === "lost" ? "no connection to the robot" : "connecting");
    }
    this.dirty.add("link");
    this.request();
  }

  onServerInfo() {
    this.setupDriving();
    this.dirty.add("link");
    this.request();
  }

  onAdvertised() {
    this.setupDriving();
    this.dirty.add("topics");
    this.request();
  }

  onStatus(status) {
    const text = String(status.message || "");
    $("gateway-status").textContent = text ? `gateway: ${text}` : "";
  }

  // Driving: allowed when serverInfo has clientPublish; the pad says why not otherwise.
  setupDriving() {
    if (!this.conn.connected || !this.conn.serverInfo) return;
    if (!this.conn.mayPublish()) {
      this.cmdVel = null;
      this.pad.enable("the gateway does not allow driving (its serverInfo has no clientPublish: "
        + "client_publish is empty, or it listens off loopback without remote_control)");
      return;
    }
    if (this.cmdVel) return;
    const topic = this.topic("cmd_vel");
    const advertised = this.conn.byTopic.get(topic);
    const schema = advertised && advertised.schemaName === TWIST ? advertised.schema : TWIST_DEFINITION;
    const channelId = this.conn.advertise(topic, TWIST, schema);
    if (channelId === null) return;
    this.cmdVel = { channelId, writer: writerFor(schema), topic };
    this.pad.enable(null);
  }

  sendTwist(twist) {
    if (!this.cmdVel) return false;
    return this.conn.send(this.cmdVel.channelId, this.cmdVel.writer.writeMessage(twist));
  }

  // ------------------------------------------------------------ messages
  onMessage(channel, msg, at) {
    const topic = channel.topic;
    this.stats.messages += 1;
    this.latest.set(topic, { msg, at });
    let seen = this.seen.get(topic);
    if (!seen) {
      seen = { first: at, last: at, count: 0, times: [] };
      this.seen.set(topic, seen);
    }
    seen.last = at;
    seen.count += 1;
    seen.times.push(at);
    if (seen.times.length > 64) seen.times.shift();
    const rel = this.relative(topic);
    if (channel.schemaName === RANGE) {
      this.dirty.add(`range:${topic}`);
    } else if (rel === "rci/session") {
      this.onSession(msg.data);
    } else if (rel === "rci/ca_states") {
      this.ca.update(msg);
      this.dirty.add("ca");
    } else if (topic === "/diagnostics") {
      this.diagnostics.update(msg, at, this.ns);
      this.dirty.add("health");
    } else {
      this.dirty.add(rel);
    }
    this.request();
  }

  onSession(text) {
    const event = parseSession(text);
    if (event.kind === "connected") {
      // the view is not emptied here: rci/ca_states is a topic of its own, and the new
      // session's first answers may come before this notice (as in the RDI gateway)
      this.session = event;
    } else if (event.kind === "closed") {
      this.session = null;
      this.ca.clear();
    }
    this.sessionNotice = text;
    this.dirty.add("ca");
  }

  // ------------------------------------------------------------ freshness
  // "ok", "stale", "missing" or "waiting" (event topics before their first message)
  freshness(topic, now) {
    const seen = this.seen.get(topic);
    const watch = WATCHED[this.relative(topic)] || WATCHED[topic] || { staleMs: STALE_MS };
    if (!this.conn.connected) return seen ? "stale" : "missing";
    if (!this.conn.byTopic.has(topic)) return "missing";
    if (!seen) {
      if (watch.event) return "waiting";
      return now - this.connectedAt > watch.staleMs ? "missing" : "waiting";
    }
    if (watch.event) return "ok";
    return now - seen.last > watch.staleMs ? "stale" : "ok";
  }

  check() {
    const now = performance.now();
    const silent = this.conn.connected && now - this.conn.lastMessageMs > SILENT_MS;
    if (silent !== this.silent) {
      this.silent = silent;
      this.dirty.add("link");
    }
    this.dirty.add("fresh");
    this.request();
  }

  // ------------------------------------------------------------ drawing
  request() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  render() {
    const t0 = performance.now();
    const dirty = this.dirty;
    this.dirty = new Set();
    if (dirty.has("link")) this.renderLink();
    const description = this.latest.get(this.topic("robot_description"));
    if (description && dirty.has("robot_description")) {
      try {
        this.view.setDescription(description.msg.data);
      } catch (err) {
        this.onStatus({ message: `robot_description not drawn: ${err.message}` });
      }
    }
    const fresh = dirty.has("fresh");
    for (const key of dirty) {
      if (key.startsWith("range:")) this.renderRange(key.slice(6), t0);
    }
    if (fresh) {
      for (const topic of this.sonarRows.keys()) this.renderRange(topic, t0);
    }
    if (dirty.has("joint_states") || fresh) this.renderJoints(t0);
    if (dirty.has("odom") || fresh) this.renderOdom(t0);
    if (dirty.has("encoders") || fresh) this.renderEncoders(t0);
    if (dirty.has("imu") || fresh) this.renderImu(t0);
    if (dirty.has("ca") || fresh) this.renderCa(t0);
    if (dirty.has("health") || dirty.has("topics") || fresh) this.renderHealth(t0);
    const took = performance.now() - t0;
    const s = this.stats;
    s.renderMs[s.renderCount % RENDER_TIMES] = took;
    s.renderCount += 1;
    s.renders += 1;
  }

  renderLink() {
    const { kind, detail } = this.linkState;
    const banner = $("banner");
    let text = "";
    if (kind === "connected") {
      const name = this.conn.serverInfo ? this.conn.serverInfo.name : "";
      $("link").textContent = `connected to ${this.conn.url}${name ? ` (${name})` : ""}`;
      if (this.silent) text = `No data from Brak for more than ${SILENT_MS / 1000} s.`;
    } else if (this.loss && this.conn.everConnected) {
      $("link").textContent = kind === "lost" ? "connection lost" : "reconnecting…";
      text = `Connection to Brak lost: ${this.loss}. Reconnecting by itself every second…`;
    } else if (this.loss) {
      $("link").textContent = kind === "lost" ? "not connected" : "connecting…";
      text = `Cannot reach Brak's gateway: ${this.loss}. Trying again every second…`;
    } else {
      $("link").textContent = `connecting to ${detail || "the gateway"}…`;
    }
    banner.textContent = text;
    banner.hidden = !text;
  }

  // one value cell: its text, or "stale"/"missing" in place of an old value
  cell(element, topic, text, now) {
    const state = this.freshness(topic, now);
    element.classList.toggle("stale", state === "stale");
    element.classList.toggle("missing", state === "missing" || state === "waiting");
    if (state === "ok") {
      element.textContent = text;
    } else {
      element.textContent = state === "stale" ? "stale (no recent message)"
        : state === "missing" ? "missing (no message)" : "waiting…";
    }
    return state;
  }

  sonarRow(topic) {
    let row = this.sonarRows.get(topic);
    if (row) return row;
    row = document.createElement("tr");
    const name = document.createElement("th");
    name.scope = "row";
    name.textContent = this.relative(topic);
    const value = document.createElement("td");
    value.className = "range";
    row.append(name, value);
    row.dataset.topic = topic;
    this.sonarRows.set(topic, row);
    const body = $("sonars").tBodies[0];
    const after = [...body.rows].find((r) => r.dataset.topic.localeCompare(topic, undefined, { numeric: true }) > 0);
    body.insertBefore(row, after || null);
    return row;
  }

  renderRange(topic, now) {
    const latest = this.latest.get(topic);
    if (!latest) return;
    const row = this.sonarRow(topic);
    const value = row.cells[1];
    const state = this.cell(value, topic, rangeText(latest.msg), now);
    value.dataset.stamp = stampText(latest.msg.header.stamp);
    value.dataset.state = state;
    this.view.setRange(topic, latest.msg, state !== "ok");
  }

  renderJoints(now) {
    const latest = this.latest.get(this.topic("joint_states"));
    if (!latest) return;
    const js = latest.msg;
    let steering = null;
    js.name.forEach((name, i) => {
      const pos = js.position[i];
      this.view.setJoint(name, pos);
      if (name === "steering_joint") steering = pos;
    });
    this.cell($("steering"), this.topic("joint_states"),
      steering === null ? "-" : `${fixed(deg(steering), 1)}° (${fixed(steering, 3)} rad)`, now);
  }

  renderOdom(now) {
    const latest = this.latest.get(this.topic("odom"));
    if (!latest) return;
    const { pose, twist } = latest.msg;
    const p = pose.pose.position;
    const yaw = yawOf(pose.pose.orientation);
    this.view.setPose(p.x, p.y, yaw);
    const topic = this.topic("odom");
    this.cell($("speed"), topic, `${fixed(twist.twist.linear.x, 2)} m/s`, now);
    this.cell($("pose"), topic, `x ${fixed(p.x, 2)} m, y ${fixed(p.y, 2)} m, `
      + `yaw ${fixed(deg(yaw), 0)}°`, now);
  }

  renderEncoders(now) {
    const latest = this.latest.get(this.topic("encoders"));
    const texts = latest ? encoderTexts(latest.msg) : {};
    if (latest && texts.relative) this.encoders = { ...this.encoders, relative: texts.relative };
    if (latest && texts.absolute) this.encoders = { ...this.encoders, absolute: texts.absolute };
    const known = this.encoders || {};
    this.cell($("enc-rel"), this.topic("encoders"), known.relative || "-", now);
    this.cell($("enc-abs"), this.topic("encoders"), known.absolute || "-", now);
  }

  renderImu(now) {
    const latest = this.latest.get(this.topic("imu"));
    this.cell($("accel"), this.topic("imu"), latest ? accelText(latest.msg) : "-", now);
  }

  renderCa(now) {
    const topic = this.topic("rci/session");
    const state = this.freshness(topic, now);
    const s = this.session;
    const rci = state !== "missing";
    $("ca-session").textContent = !rci ? "unknown: no rci/session topic (is the RCI gateway running?)"
      : s ? "a control application is logged in" : "no control application logged in";
    $("ca-session").classList.toggle("missing", !rci);
    $("ca-user").textContent = s ? s.user : "-";
    $("ca-since").textContent = s && s.at ? sinceText(s.at, Date.now()) : "-";
    $("ca-from").textContent = s && s.from ? s.from : "-";
    $("ca-devices").textContent = s ? this.ca.activatedText() : "-";
    $("ca-motors").textContent = s ? this.ca.motorsText() : "-";
    $("ca-last").textContent = this.sessionNotice || "-";
  }

  renderHealth(now) {
    const body = $("diagnostics").tBodies[0];
    const rows = this.diagnostics.rows(now, DIAGNOSTICS_STALE_MS);
    const diagState = this.freshness("/diagnostics", now);
    for (const tr of [...body.rows]) if (tr.dataset.placeholder) tr.remove();
    while (body.rows.length > rows.length) body.deleteRow(-1);
    rows.forEach((r, i) => {
      const tr = body.rows[i] || body.insertRow();
      while (tr.cells.length < 3) tr.insertCell();
      const stale = r.stale || diagState !== "ok";
      tr.cells[0].textContent = r.name;
      tr.cells[0].title = r.fullName;
      tr.cells[1].textContent = stale ? "stale" : r.levelText;
      tr.cells[1].className = stale ? "level-3" : `level-${r.level}`;
      tr.cells[2].textContent = r.message;
      tr.classList.toggle("stale", stale);
    });
    if (rows.length === 0) {
      const tr = body.insertRow();
      tr.dataset.placeholder = "1";
      const td = tr.insertCell();
      td.colSpan = 3;
      td.className = "missing";
      td.textContent = diagState === "missing" ? "missing: no /diagnostics" : "waiting for /diagnostics…";
    }
    const topics = new Set([...Object.keys(WATCHED).map((n) => this.topic(n)), ...this.sonarRows.keys()]);
    for (const [topic, channel] of this.conn.byTopic) if (channel.schemaName === RANGE && this.wants(channel)) topics.add(topic);
    const list = [...topics].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const tbody = $("topics").tBodies[0];
    while (tbody.rows.length > list.length) tbody.deleteRow(-1);
    list.forEach((topic, i) => {
      const tr = tbody.rows[i] || tbody.insertRow();
      while (tr.cells.length < 2) tr.insertCell();
      const state = this.freshness(topic, now);
      const seen = this.seen.get(topic);
      let text = state;
      if (state === "ok" && seen && seen.times.length > 1 && !WATCHED[this.relative(topic)]?.event) {
        const span = (seen.times[seen.times.length - 1] - seen.times[0]) / 1000;
        text = `ok, ${((seen.times.length - 1) / Math.max(span, 1e-3)).toFixed(1)} Hz`;
      } else if (state === "stale") {
        text = `stale: nothing for ${((now - seen.last) / 1000).toFixed(0)} s`;
      } else if (state === "missing") {
        text = this.conn.byTopic.has(topic) ? "missing: no message" : "missing: not on the robot";
      }
      tr.cells[0].textContent = topic;
      tr.cells[1].textContent = text;
      tr.cells[1].className = state === "ok" ? "level-0" : state === "waiting" ? "" : "stale";
      tr.dataset.topic = topic;
      tr.dataset.state = state;
    });
  }
}

const page = new Page();
// for tests and bench/bench_page.py: counters and the redraw times (ms)
window.brakPage = {
  stats: page.stats,
  connection: page.conn,
  pad: page.pad,
  renderTimes() {
    const s = page.stats;
    const n = Math.min(s.renderCount, RENDER_TIMES);
    const out = [];
    for (let i = s.renderCount - n; i < s.renderCount; i += 1) out.push(s.renderMs[i % RENDER_TIMES]);
    return out;
  },
};
page.start();
