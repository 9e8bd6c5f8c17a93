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

// One connection to the Foxglove gateway, made again by itself when it is lost.
//
// The page asks its own server for config.json (the gateway's port, scheme and
// subprotocol), opens a browser WebSocket to the same host with Foxglove's
// FoxgloveClient, subscribes to the channels the page wants and decodes their CDR
// messages with Foxglove's rosmsg2-serialization, from the ros2msg schema the
// gateway advertised. Nothing of CDR is decoded here by hand.

import { FoxgloveClient } from "@foxglove/ws-protocol";
import { parse } from "@foxglove/rosmsg";
import { MessageReader, MessageWriter } from "@foxglove/rosmsg2-serialization";

export const SUBPROTOCOL = "foxglove.sdk.v1";
// between two attempts to reach a lost gateway
export const RETRY_MS = 1000;

// The WebSocket address of the gateway: the page's host (an IPv6 one keeps its
// brackets in location.hostname), the port and scheme config.json names.
export function gatewayUrl(config, location) {
  const gw = config.gateway || {};
  const scheme = gw.scheme || (location.protocol === "https:" ? "wss" : "ws");
  return `${scheme}://${location.hostname}:${gw.port}`;
}

const definitionCache = new Map();

// The parsed ros2msg definitions of a schema (cached per schema text).
export function definitionsOf(schema) {
  let defs = definitionCache.get(schema);
  if (!defs) {
    defs = parse(schema, { ros2: true });
    definitionCache.set(schema, defs);
  }
  return defs;
}

export function readerFor(schema) {
  return new MessageReader(definitionsOf(schema));
}

export function writerFor(schema) {
  return new MessageWriter(definitionsOf(schema));
}

export class Connection {
  // handlers: state(kind, detail), advertised(channels), message(channel, msg, receiptMs),
  // serverInfo(info), status(status)
  constructor(handlers, location = window.location) {
    this.handlers = handlers;
    this.location = location;
    this.client = null;
    this.config = null;
    this.url = "";
    this.channels = new Map(); // channel id -> channel (with .reader)
    this.byTopic = new Map(); // topic -> channel
    this.subscriptions = new Map(); // subscription id -> channel
    this.wanted = () => false; // (channel) -> whether to subscribe
    this.serverInfo = null;
    this.connected = false;
    this.everConnected = false;
    this.attempts = 0;
    this.lastMessageMs = 0;
    this.messages = 0;
    this.decodeErrors = 0;
    this.retryTimer = null;
  }

  start() {
    this.attempt();
  }

  async attempt() {
    this.retryTimer = null;
    this.attempts += 1;
    this.handlers.state("connecting", this.url);
    let config;
    try {
      const answer = await fetch("config.json", { cache: "no-store" });
      if (!answer.ok) {
        throw new Error(`config.json answered HTTP ${answer.status}`);
      }
      config = await answer.json();
    } catch (err) {
      this.lost(`the page's server does not answer (${err.message})`);
      return;
    }
    this.config = config;
    this.url = gatewayUrl(config, this.location);
    let ws;
    try {
      ws = new WebSocket(this.url, [(config.gateway && config.gateway.subprotocol) || SUBPROTOCOL]);
    } catch (err) {
      this.lost(`cannot open ${this.url} (${err.message})`);
      return;
    }
    const client = new FoxgloveClient({ ws });
    this.client = client;
    client.on("open", () => {
      if (client !== this.client) return;
      this.connected = true;
      this.everConnected = true;
      this.lastMessageMs = performance.now();
      this.handlers.state("connected", this.url);
    });
    client.on("error", () => {
      // the close that follows says what happened
    });
    client.on("close", (event) => {
      if (client !== this.client) return;
      const why = event && event.code && event.code !== 1006
        ? `closed (${event.code}${event.reason ? `: ${event.reason}` : ""})` : "the connection was lost";
      this.lost(why);
    });
    client.on("serverInfo", (info) => {
      if (client !== this.client) return;
      this.serverInfo = info;
      this.handlers.serverInfo(info);
    });
    client.on("status", (status) => {
      if (client !== this.client) return;
      this.handlers.status(status);
    });
    client.on("advertise", (channels) => {
      if (client !== this.client) return;
      for (const channel of channels) this.advertised(channel);
      this.handlers.advertised([...this.byTopic.keys()]);
    });
    client.on("unadvertise", (ids) => {
      if (client !== this.client) return;
      for (const id of ids) this.withdrawn(id);
      this.handlers.advertised([...this.byTopic.keys()]);
    });
    client.on("message", (event) => {
      if (client !== this.client) return;
      this.message(event);
    });
  }

  // The connection is gone (or never came): forget its channels, try again soon.
  lost(why) {
    const client = this.client;
    this.client = null;
    this.connected = false;
    this.serverInfo = null;
    this.channels.clear();
    this.byTopic.clear();
    this.subscriptions.clear();
    if (client) {
      try {
        client.close();
      } catch (err) {
        // already closed
      }
    }
    this.handlers.state("lost", why);
    if (this.retryTimer === null) {
      this.retryTimer = setTimeout(() => this.attempt(), RETRY_MS);
    }
  }

  advertised(channel) {
    if (channel.encoding !== "cdr" || channel.schemaEncoding !== "ros2msg") {
      return;
    }
    const known = this.byTopic.get(channel.topic);
    if (known) this.withdrawn(known.id);
    this.channels.set(channel.id, channel);
    this.byTopic.set(channel.topic, channel);
    if (this.wanted(channel)) {
      this.subscribe(channel);
    }
  }

  withdrawn(id) {
    const channel = this.channels.get(id);
    if (!channel) return;
    this.channels.delete(id);
    if (this.byTopic.get(channel.topic) === channel) this.byTopic.delete(channel.topic);
    if (channel.subscriptionId !== undefined) {
      this.subscriptions.delete(channel.subscriptionId);
    }
  }

  subscribe(channel) {
    try {
      channel.reader = readerFor(channel.schema);
    } catch (err) {
      this.handlers.status({ level: 1, message: `${channel.topic}: schema not understood (${err.message})` });
      return;
    }
    channel.subscriptionId = this.client.subscribe(channel.id);
    this.subscriptions.set(channel.subscriptionId, channel);
  }

  message(event) {
    const channel = this.subscriptions.get(event.subscriptionId);
    if (!channel || !channel.reader) return;
    const now = performance.now();
    this.lastMessageMs = now;
    this.messages += 1;
    let msg;
    try {
      msg = channel.reader.readMessage(event.data);
    } catch (err) {
      this.decodeErrors += 1;
      return;
    }
    this.handlers.message(channel, msg, now);
  }

  // Whether the gateway lets this client publish (serverInfo's capabilities).
  mayPublish() {
    return Boolean(this.serverInfo && (this.serverInfo.capabilities || []).includes("clientPublish"));
  }

  // A channel of our own to publish on (its id), or null when not connected.
  advertise(topic, schemaName, schema) {
    if (!this.client || !this.connected) return null;
    return this.client.advertise({ topic, encoding: "cdr", schemaName, schema, schemaEncoding: "ros2msg" });
  }

  send(channelId, bytes) {
    if (!this.client || !this.connected) return false;
    this.client.sendMessage(channelId, bytes);
    return true;
  }
}
