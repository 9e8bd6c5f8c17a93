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

// A Foxglove WebSocket client made of Foxglove's own libraries, driven by a test.
//
// @foxglove/ws-protocol's FoxgloveClient over the `ws` package, message
// definitions parsed by @foxglove/rosmsg and CDR read and written by
// @foxglove/rosmsg2-serialization: what Foxglove and Lichtblick use, none of
// it ours. The test (test/foxglove_agent.py) writes one JSON command a line on
// stdin and reads one JSON event a line on stdout; the commands are listed in
// COMMANDS below. Numbers that JSON cannot carry are strings: "NaN",
// "Infinity", "-Infinity", and 64-bit integers beyond 2^53.
//
//     NODE_PATH=bsal_ros/web/node_modules node bsal_ros/test/foxglove_js/client.js

"use strict";

const crypto = require("crypto");
const fs = require("fs");
const readline = require("readline");
const { performance } = require("perf_hooks");

const { FoxgloveClient } = require("@foxglove/ws-protocol");
const { parse } = require("@foxglove/rosmsg");
const { MessageReader, MessageWriter } = require("@foxglove/rosmsg2-serialization");
const WebSocket = require("ws");

// the only subprotocol foxglove-sdk's server accepts (docs/VISUALIZATION.md)
const SUBPROTOCOL = "foxglove.sdk.v1";

function emit(event) {
  process.stdout.write(JSON.stringify(event) + "\n");
}

// Wall-clock time in ns, sub-millisecond: ROS stamps are wall clock too.
function nowNs() {
  return Math.round((performance.timeOrigin + performance.now()) * 1e6);
}

// A decoded value as plain JSON (typed arrays as arrays, bigints as numbers where exact).
function plain(v) {
  if (typeof v === "bigint") {
    return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  }
  if (typeof v === "number") {
    return Number.isFinite(v) ? v : String(v);
  }
  if (ArrayBuffer.isView(v)) {
    return Array.from(v, plain);
  }
  if (Array.isArray(v)) {
    return v.map(plain);
  }
  if (v !== null && typeof v === "object") {
    const out = {};
    for (const key of Object.keys(v)) {
      out[key] = plain(v[key]);
    }
    return out;
  }
  return v;
}

function bytesOf(view) {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function definition(text) {
  return parse(text, { ros2: true });
}

let client = null;
let ws = null;
const channels = new Map(); // channel id -> {id, topic, schemaName, reader}
const byTopic = new Map(); // topic -> channel
const subscriptions = new Map(); // subscription id -> {channel, decode, count}
const wanted = new Map(); // topic -> decode: subscribe once the channel is advertised
const services = new Map(); // name -> {service, writer, reader}
const published = new Map(); // topic -> {id, writer}
const calls = new Map(); // call id -> service name
let drive = null;

function channelOf(topic) {
  return byTopic.get(topic);
}

function subscribeChannel(channel, decode) {
  const sid = client.subscribe(channel.id);
  subscriptions.set(sid, { channel, decode, count: 0 });
  emit({ ev: "subscribed", topic: channel.topic, channelId: channel.id, subscriptionId: sid });
}

function onAdvertise(list) {
  for (const ch of list) {
    const entry = { id: ch.id, topic: ch.topic, schemaName: ch.schemaName, schema: ch.schema,
      encoding: ch.encoding, schemaEncoding: ch.schemaEncoding, reader: null };
    channels.set(ch.id, entry);
    byTopic.set(ch.topic, entry);
    if (wanted.has(ch.topic)) {
      const decode = wanted.get(ch.topic);
      wanted.delete(ch.topic);
      subscribeChannel(entry, decode);
    }
  }
  emit({ ev: "advertise", channels: list.map((c) => ({ id: c.id, topic: c.topic,
    encoding: c.encoding, schemaName: c.schemaName, schemaEncoding: c.schemaEncoding })) });
}

function onUnadvertise(ids) {
  const topics = [];
  for (const id of ids) {
    const ch = channels.get(id);
    if (ch) {
      topics.push(ch.topic);
      channels.delete(id);
      if (byTopic.get(ch.topic) === ch) {
        byTopic.delete(ch.topic);
      }
    }
  }
  emit({ ev: "unadvertise", channelIds: ids, topics });
}

function onMessage({ subscriptionId, timestamp, data }) {
  const sub = subscriptions.get(subscriptionId);
  if (!sub) {
    return;
  }
  sub.count += 1;
  if (!sub.decode) {
    return;
  }
  const ch = sub.channel;
  if (ch.reader === null) {
    ch.reader = new MessageReader(definition(ch.schema));
  }
  let value;
  try {
    value = plain(ch.reader.readMessage(bytesOf(data)));
  } catch (err) {
    emit({ ev: "decodeError", topic: ch.topic, message: String(err) });
    return;
  }
  emit({ ev: "message", topic: ch.topic, logTime: timestamp.toString(), receivedNs: nowNs(),
    value });
}

function onServices(list) {
  for (const s of list) {
    const req = s.request ? s.request.schema : s.requestSchema;
    const res = s.response ? s.response.schema : s.responseSchema;
    services.set(s.name, { service: s, request: req, response: res });
  }
  emit({ ev: "advertiseServices", services: list.map((s) => ({ id: s.id, name: s.name,
    type: s.type })) });
}

function connect(cmd) {
  // localAddress: a loopback source address of its own (127.0.0.N), as another laptop
  const options = cmd.localAddress ? { localAddress: cmd.localAddress } : {};
  if (cmd.ca) {
    options.ca = fs.readFileSync(cmd.ca);
  }
  ws = new WebSocket(cmd.url, cmd.subprotocols || [SUBPROTOCOL], options);
  client = new FoxgloveClient({ ws });
  client.on("open", () => emit({ ev: "open", protocol: ws.protocol }));
  client.on("error", (err) => emit({ ev: "error", message: String(err && err.message || err) }));
  client.on("close", (e) => emit({ ev: "close", code: e && e.code, reason: e && String(e.reason || ""),
    atNs: nowNs() }));
  client.on("serverInfo", (i) => emit({ ev: "serverInfo", name: i.name,
    capabilities: i.capabilities, supportedEncodings: i.supportedEncodings || [] }));
  client.on("status", (s) => emit({ ev: "status", level: s.level, message: s.message, id: s.id }));
  client.on("advertise", onAdvertise);
  client.on("unadvertise", onUnadvertise);
  client.on("message", onMessage);
  client.on("advertiseServices", onServices);
  client.on("unadvertiseServices", (ids) => emit({ ev: "unadvertiseServices", serviceIds: ids }));
  client.on("serviceCallResponse", (r) => {
    const name = calls.get(r.callId);
    const svc = services.get(name);
    let value = null;
    try {
      value = plain(new MessageReader(definition(svc.response)).readMessage(bytesOf(r.data)));
    } catch (err) {
      emit({ ev: "decodeError", service: name, message: String(err) });
    }
    emit({ ev: "serviceResponse", callId: r.callId, service: name, value });
  });
  client.on("serviceCallFailure", (f) => emit({ ev: "serviceFailure", callId: f.callId,
    service: calls.get(f.callId), message: f.message }));
  client.on("parameterValues", (p) => emit({ ev: "parameterValues", id: p.id,
    parameters: p.parameters.map(plain) }));
  client.on("connectionGraphUpdate", (g) => emit({ ev: "connectionGraph",
    publishedTopics: g.publishedTopics, subscribedTopics: g.subscribedTopics,
    advertisedServices: g.advertisedServices }));
  client.on("fetchAssetResponse", (r) => {
    if (r.status === 0) {
      const data = bytesOf(r.data);
      emit({ ev: "asset", requestId: r.requestId, ok: true, bytes: data.byteLength,
        sha256: crypto.createHash("sha256").update(data).digest("hex") });
    } else {
      emit({ ev: "asset", requestId: r.requestId, ok: false, error: r.error });
    }
  });
}

// The writer of a topic's type: the schema the server advertised for it, or the given one.
function advertise(cmd) {
  const ch = channelOf(cmd.topic);
  const schemaName = cmd.schemaName || (ch && ch.schemaName);
  const schema = cmd.schema || (ch && ch.schema);
  const id = client.advertise({ topic: cmd.topic, encoding: cmd.encoding || "cdr", schemaName });
  published.set(cmd.topic, { id, writer: schema ? new MessageWriter(definition(schema)) : null });
  emit({ ev: "advertised", topic: cmd.topic, channelId: id, schemaName });
}

function publish(topic, message) {
  const pub = published.get(topic);
  client.sendMessage(pub.id, pub.writer.writeMessage(message));
}

function callService(cmd) {
  const svc = services.get(cmd.service);
  if (!svc) {
    emit({ ev: "commandError", message: `service ${cmd.service} not advertised` });
    return;
  }
  const data = cmd.bytes !== undefined ? Buffer.from(cmd.bytes, "base64")
    : new MessageWriter(definition(svc.request)).writeMessage(cmd.request || {});
  calls.set(cmd.callId, cmd.service);
  client.sendServiceCallRequest({ serviceId: svc.service.id, callId: cmd.callId,
    encoding: cmd.encoding || "cdr", data: new DataView(data.buffer, data.byteOffset,
      data.byteLength) });
}

// Connect and leave `count` times in a row (half of them closing, half dropping the socket).
async function churn(cmd) {
  let ok = 0;
  const failures = [];
  for (let i = 0; i < cmd.count; i += 1) {
    const outcome = await new Promise((resolve) => {
      const sock = new WebSocket(cmd.url, [SUBPROTOCOL],
        cmd.localAddress ? { localAddress: cmd.localAddress } : {});
      const timer = setTimeout(() => {
        sock.terminate();
        resolve("no serverInfo within 10 s");
      }, 10000);
      sock.on("message", () => {
        clearTimeout(timer);
        if (i % 2 === 0) {
          sock.close();
        } else {
          sock.terminate();
        }
      });
      sock.on("close", () => {
        clearTimeout(timer);
        resolve("ok");
      });
      sock.on("error", (err) => {
        clearTimeout(timer);
        resolve(String(err.message || err));
      });
    });
    if (outcome === "ok") {
      ok += 1;
    } else if (failures.length < 5) {
      failures.push(outcome);
    }
  }
  emit({ ev: "churned", ok, failed: cmd.count - ok, failures });
}

// One function per command; each answers with the events named in its comment.
const COMMANDS = {
  // {url, ca?, subprotocols?, localAddress?} -> open, serverInfo, advertise..., or error/close
  connect,
  // {topics, decode?} -> subscribed (each topic, now or when advertised), then message events
  subscribe: (cmd) => {
    for (const topic of cmd.topics) {
      const ch = channelOf(topic);
      if (ch) {
        subscribeChannel(ch, cmd.decode !== false);
      } else {
        wanted.set(topic, cmd.decode !== false);
      }
    }
  },
  // {channelId} -> subscribed: a subscription to any id, advertised or not
  subscribeId: (cmd) => {
    const channel = channels.get(cmd.channelId) || { id: cmd.channelId, topic: null, reader: null };
    subscribeChannel(channel, false);
  },
  // {topics} -> unsubscribed
  unsubscribe: (cmd) => {
    for (const [sid, sub] of subscriptions) {
      if (cmd.topics.includes(sub.channel.topic)) {
        client.unsubscribe(sid);
        subscriptions.delete(sid);
      }
    }
    emit({ ev: "unsubscribed", topics: cmd.topics });
  },
  // {} -> counts {topic: messages received}
  counts: () => {
    const counts = {};
    for (const sub of subscriptions.values()) {
      counts[sub.channel.topic] = (counts[sub.channel.topic] || 0) + sub.count;
    }
    emit({ ev: "counts", counts, atNs: nowNs() });
  },
  // {topic, schemaName?, schema?, encoding?} -> advertised
  advertise,
  // {topic} -> unadvertised
  unadvertise: (cmd) => {
    client.unadvertise(published.get(cmd.topic).id);
    published.delete(cmd.topic);
    emit({ ev: "unadvertised", topic: cmd.topic });
  },
  // {topic, message} or {topic, bytes (base64)} -> published
  publish: (cmd) => {
    if (cmd.bytes !== undefined) {
      client.sendMessage(published.get(cmd.topic).id, Buffer.from(cmd.bytes, "base64"));
    } else {
      publish(cmd.topic, cmd.message);
    }
    emit({ ev: "published", topic: cmd.topic, atNs: nowNs() });
  },
  // {topic, message, hz} -> publishes until driveStop; driving {atNs} after the first one
  drive: (cmd) => {
    publish(cmd.topic, cmd.message);
    emit({ ev: "driving", topic: cmd.topic, atNs: nowNs() });
    drive = setInterval(() => publish(cmd.topic, cmd.message), 1000 / cmd.hz);
  },
  // {} -> driveStopped
  driveStop: () => {
    clearInterval(drive);
    drive = null;
    emit({ ev: "driveStopped", atNs: nowNs() });
  },
  // {service, callId, request | bytes, encoding?} -> serviceResponse or serviceFailure
  call: callService,
  // {names, id} -> parameterValues
  getParameters: (cmd) => client.getParameters(cmd.names, cmd.id),
  // {parameters: [{name, value, type?}], id} -> parameterValues
  setParameters: (cmd) => client.setParameters(cmd.parameters, cmd.id),
  // {} -> connectionGraph (on every change)
  subscribeGraph: () => client.subscribeConnectionGraph(),
  // {uri, requestId} -> asset
  fetchAsset: (cmd) => client.fetchAsset(cmd.uri, cmd.requestId),
  // {text} -> a text frame as it is (bad JSON, unknown operations)
  raw: (cmd) => {
    ws.send(cmd.text);
    emit({ ev: "sent" });
  },
  // {} -> closing {atNs} just before the close frame; close when the server answers
  close: () => {
    if (drive !== null) {
      clearInterval(drive);
      drive = null;
    }
    emit({ ev: "closing", atNs: nowNs() });
    ws.close();
  },
  // {} -> closing {atNs}: the socket dropped without a close frame, as a laptop that leaves
  terminate: () => {
    if (drive !== null) {
      clearInterval(drive);
      drive = null;
    }
    const atNs = nowNs();
    ws.terminate();
    emit({ ev: "closing", atNs });
  },
  // {url, count, localAddress?} -> churned {ok, failed, failures}
  churn,
  // {} -> the process ends
  exit: () => process.exit(0),
};

const input = readline.createInterface({ input: process.stdin });
input.on("line", (line) => {
  let cmd;
  try {
    cmd = JSON.parse(line);
    const fn = COMMANDS[cmd.op];
    if (fn === undefined) {
      throw new Error(`unknown command ${cmd.op}`);
    }
    const done = fn(cmd);
    if (done && typeof done.catch === "function") {
      done.catch((err) => emit({ ev: "commandError", op: cmd.op, message: String(err) }));
    }
  } catch (err) {
    emit({ ev: "commandError", op: cmd && cmd.op, message: String(err && err.stack || err) });
  }
});
// the test's end is ours: no Node process outlives it
input.on("close", () => process.exit(0));
