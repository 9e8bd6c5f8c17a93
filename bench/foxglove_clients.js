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

// Foxglove clients of bench/bench_foxglove.py: one Node.js process holding many
// clients on Foxglove's own @foxglove/ws-protocol, each subscribed to every
// channel the gateway advertises (new ones too). Each client decodes only the
// probe (@foxglove/rosmsg2-serialization: a std_msgs/msg/Header whose stamp is
// its publish time, CLOCK_REALTIME, and whose frame_id is its sequence number)
// and counts the messages and bytes of the rest; the first client of the
// process also decodes the sonars' Range headers (the age of a reading at
// receipt). With --churn the process instead opens one client every second,
// subscribes it to everything and closes it before the next one comes.
//
//   NODE_PATH=bsal_ros/web/node_modules node bench/foxglove_clients.js \
//       --url ws://127.0.0.1:PORT --clients 10 [--probe /bench_probe] [--churn]
//       [--only-probe]   (subscribe to the probe alone, not to every channel)
//
// Commands, one per line on stdin, each answered by one JSON line on stdout:
//   (at start, unasked) {"ready": ...} once every client has its first probe
//   start  -> {"started": true}: counters reset, the measured window opens
//   stop   -> {"clients": [...], "latency_ms": [...], ...}: the window's figures
//             (failures and statuses: since the process started)
//   quit (or stdin closed): every client closes, the process exits.
"use strict";

const { FoxgloveClient } = require("@foxglove/ws-protocol");
const WebSocket = require("ws");
const { parse } = require("@foxglove/rosmsg");
const { MessageReader } = require("@foxglove/rosmsg2-serialization");
const readline = require("readline");

const SUBPROTOCOL = "foxglove.sdk.v1";

function options(argv) {
  const o = { url: "", clients: 1, probe: "/bench_probe", sonar: /^\/(.*\/)?sonar_\d+$/,
              churn: false, onlyProbe: false, readyTimeout: 60 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--url") o.url = argv[++i];
    else if (a === "--clients") o.clients = parseInt(argv[++i], 10);
    else if (a === "--probe") o.probe = argv[++i];
    else if (a === "--churn") o.churn = true;
    else if (a === "--only-probe") o.onlyProbe = true;
    else if (a === "--ready-timeout") o.readyTimeout = parseFloat(argv[++i]);
    else throw new Error(`unknown option ${a}`);
  }
  if (!o.url) throw new Error("--url is required");
  return o;
}

const opt = options(process.argv.slice(2));

// receipt time on the same clock as the publisher's stamp (CLOCK_REALTIME, ms)
function nowMs() {
  return performance.timeOrigin + performance.now();
}

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

const readers = new Map();    // schema name -> MessageReader (one per process)
function readerFor(channel) {
  let r = readers.get(channel.schemaName);
  if (r === undefined) {
    r = new MessageReader(parse(channel.schema, { ros2: true }));
    readers.set(channel.schemaName, r);
  }
  return r;
}

// everything odd a client saw: errors, unexpected closes, statuses, decode failures
const failures = [];
const statuses = {};
function failed(who, what) {
  if (failures.length < 50) failures.push(`${who}: ${what}`);
  failures.count = (failures.count || 0) + 1;
}

class BenchClient {
  constructor(index, decodeSonars) {
    this.index = index;
    this.decodeSonars = decodeSonars;
    this.channels = new Map();   // channel id -> channel
    this.subs = new Map();       // subscription id -> {channel, kind}
    this.closing = false;
    this.opened = false;
    this.reset();
    this.ws = new WebSocket(opt.url, [SUBPROTOCOL]);
    this.client = new FoxgloveClient({ ws: this.ws });
    const c = this.client;
    c.on("open", () => { this.opened = true; });
    c.on("error", (e) => failed(`client ${index}`, `error ${e && e.message ? e.message : e}`));
    c.on("close", (e) => {
      if (!this.closing) failed(`client ${index}`, `closed by the server (${e && e.code})`);
    });
    c.on("status", (s) => {
      const key = `level ${s.level}: ${s.message}`;
      statuses[key] = (statuses[key] || 0) + 1;
    });
    c.on("advertise", (chs) => { for (const ch of chs) this.watch(ch); });
    c.on("unadvertise", (ids) => {
      for (const id of ids) this.channels.delete(id);
    });
    c.on("message", (m) => this.message(m));
  }

  reset() {
    this.latencies = [];
    this.sonarAges = [];
    this.messages = 0;
    this.bytes = 0;
    this.probes = 0;
    this.lost = 0;
    this.lastSeq = -1;
  }

  watch(ch) {
    if (this.channels.has(ch.id) || this.closing) return;
    if (opt.onlyProbe && ch.topic !== opt.probe) return;     // the decomposition's case
    this.channels.set(ch.id, ch);
    let kind = "count";
    if (ch.topic === opt.probe) kind = "probe";
    else if (this.decodeSonars && opt.sonar.test(ch.topic)) kind = "sonar";
    let reader = null;
    if (kind !== "count") {
      try {
        reader = readerFor(ch);
      } catch (e) {
        failed(`client ${this.index}`, `schema of ${ch.topic}: ${e.message}`);
        kind = "count";
      }
    }
    const sid = this.client.subscribe(ch.id);
    this.subs.set(sid, { channel: ch, kind, reader });
  }

  message({ subscriptionId, data }) {
    const t = nowMs();
    this.messages += 1;
    this.bytes += data.byteLength;
    const sub = this.subs.get(subscriptionId);
    if (sub === undefined || sub.kind === "count") return;
    let m;
    try {
      m = sub.reader.readMessage(data);
    } catch (e) {
      failed(`client ${this.index}`, `decode ${sub.channel.topic}: ${e.message}`);
      return;
    }
    if (sub.kind === "probe") {
      this.latencies.push(t - (m.stamp.sec * 1e3 + m.stamp.nanosec / 1e6));
      const seq = parseInt(m.frame_id, 10);
      if (this.lastSeq >= 0 && seq > this.lastSeq + 1) this.lost += seq - this.lastSeq - 1;
      this.lastSeq = seq;
      this.probes += 1;
    } else {
      this.sonarAges.push(t - (m.header.stamp.sec * 1e3 + m.header.stamp.nanosec / 1e6));
    }
  }

  close() {
    this.closing = true;
    try {
      this.client.close();
    } catch (e) {
      // already closed
    }
  }
}

function fixed(xs) {
  return xs.map((x) => Math.round(x * 1000) / 1000);
}

// ------------------------------------------------------------- steady clients
function steady() {
  const clients = [];
  for (let i = 0; i < opt.clients; i++) clients.push(new BenchClient(i, i === 0));
  const t0 = Date.now();
  const waitReady = setInterval(() => {
    if (clients.every((c) => c.probes > 0)) {
      clearInterval(waitReady);
      send({ ready: true, clients: clients.length,
             channels: Math.min(...clients.map((c) => c.channels.size)),
             seconds: (Date.now() - t0) / 1000 });
    } else if (Date.now() - t0 > opt.readyTimeout * 1000) {
      clearInterval(waitReady);
      send({ ready: false, opened: clients.filter((c) => c.opened).length,
             with_probe: clients.filter((c) => c.probes > 0).length, failures });
    }
  }, 50);
  return {
    start() { for (const c of clients) c.reset(); },
    report() {
      return {
        clients: clients.map((c) => ({ messages: c.messages, bytes: c.bytes, probes: c.probes,
                                       lost: c.lost, channels: c.channels.size,
                                       p99: percentile(c.latencies, 0.99) })),
        latency_ms: fixed(clients.flatMap((c) => c.latencies)),
        sonar_age_ms: fixed(clients[0] ? clients[0].sonarAges : []),
      };
    },
    close() { for (const c of clients) c.close(); },
  };
}

function percentile(xs, q) {
  if (!xs.length) return null;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

// ---------------------------------------------------- one client in, one out
function churn() {
  let n = 0;
  let connected = 0;
  let withData = 0;
  let current = null;
  let serial = 0;
  function next() {
    if (current !== null) {    // counted when it leaves
      n += 1;
      if (current.opened) connected += 1;
      if (current.messages > 0) withData += 1;
      current.close();
    }
    serial += 1;
    current = new BenchClient(`churn ${serial}`, false);
  }
  next();
  const timer = setInterval(next, 1000);
  send({ ready: true, churn: true });
  return {
    start() { n = 0; connected = 0; withData = 0; },
    report() { return { churn_clients: n, churn_connected: connected, churn_with_data: withData }; },
    close() { clearInterval(timer); if (current !== null) current.close(); },
  };
}

// -------------------------------------------------------------------- control
const set = opt.churn ? churn() : steady();
let quitting = false;
function quit() {
  if (quitting) return;
  quitting = true;
  set.close();
  setTimeout(() => process.exit(0), 300);
}
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const cmd = line.trim();
  if (cmd === "start") {
    set.start();
    send({ started: true });
  } else if (cmd === "stop") {
    const usage = process.cpuUsage();
    send({ ...set.report(), failures: failures.count || 0, failure_texts: failures.slice(),
           statuses, cpu_s: (usage.user + usage.system) / 1e6 });
  } else if (cmd === "quit") {
    quit();
  }
});
rl.on("close", quit);
process.on("SIGTERM", quit);
