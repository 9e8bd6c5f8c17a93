#!/usr/bin/env python3
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

"""The Foxglove gateway under load (issue 50): latency, CPU, memory, errors.

    scripts/with_env.sh python bench/bench_foxglove.py [--seconds 20]
        [--clients 1,10,100] [--rest-seconds 30] [--record-seconds 60]
        [--parts latency,rest,record,soak] [--soak-seconds 600] [--quick]
        [--trace] [--only-probe]

The default run (parts 1-3, about 7 minutes) is what ``make bench`` runs;
the 10-minute soak is ``--parts soak`` (``--soak-seconds`` to change it).
Every process is started here and stopped by PID at the end, on failure too
(bsal_ros/test/foxglove_rig.py):

* the bridge, ``brak_bringup`` on the simulated robot, every port free;
* the probe, an rclpy process publishing ``/bench_probe``
  (``std_msgs/msg/Header``) at 50 Hz, stamped with its publish time
  (CLOCK_REALTIME), its ``frame_id`` a sequence number (losses are counted);
* the floor, a bare rclpy subscriber of the probe in a process of its own
  (DDS only), measuring the same messages in the same windows;
* the Foxglove clients, Node.js processes of up to 50 clients
  (bench/foxglove_clients.js, on Foxglove's own ``@foxglove/ws-protocol`` and
  ``@foxglove/rosmsg2-serialization`` from bsal_ros/web/node_modules), each
  client subscribed to every channel; each decodes the probe (latency =
  receipt - stamp, one clock) and counts the rest; the first of each process
  decodes the sonars' headers too;
* N RDI clients of the same bridge's real-time port (in this process).

1. Latency and CPU with N = 1, 10, 100 Foxglove clients beside the floor,
   then the RDI fan-out with N clients in the same bridge. CPU: the bridge
   process's, user + system, % of one core (/proc), every node of it; the
   same bridge with no client is the reference. The sonar reading's age at
   receipt: Foxglove, receipt - the Range's header stamp (the board's read
   time); RDI, per frame, receipt - (base time + the newest ultrasonic
   statval). ``--trace`` cuts the probe's path in three inside the gateway
   (its channel's ``Channel.log`` timed: stamp -> the gateway's callback, the
   SDK's fan-out, what is left to the client); ``--only-probe`` has the
   clients watch the probe alone (the gateway then forwards nothing else).
2. The bridge at rest, no client, with the gateway and ``--no-foxglove``,
   alternating, one bridge per round.
3. ``brak_record`` at full rate: its CPU, the file's bytes per minute ("not
   installed: skipped" without the console script).
4. The soak: 10 clients on everything, one more connecting and leaving every
   second, a recording (when brak_record exists), legacy/build/client-app in
   a loop, the bridge's RSS every 5 s; memory after the warm-up and every
   error (the bridge's ERROR lines, the clients' failures, client-app's exit
   codes).

Prints Markdown (scripts/run_bench.py collects it into docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
import re
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bsal_ros" / "test"))    # child_process: a test helper
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

from foxglove_rig import (ask, Bridge, CpuWindow, LegacyLoop, load, Processes,  # noqa: E402
                          read_line, rss_kb, slope_per_min, start_peers, thread_cpu)

NODE_MODULES = ROOT / "bsal_ros" / "web" / "node_modules"
CLIENTS_JS = ROOT / "bench" / "foxglove_clients.js"
CLIENT_APP = ROOT / "legacy" / "build" / "client-app"
PROBE = "/bench_probe"
CLIENTS_PER_PROCESS = 50


# ------------------------------------------------------------------ statistics
def pct(xs, q):
    """The ``q`` quantile (0..1) of ``xs`` (nan when empty)."""
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def ratio(x, floor):
    """``x / floor`` as ``"3.2x"`` ("-" when there is no floor)."""
    if not floor or math.isnan(floor) or math.isnan(x):
        return "-"
    return f"{x / floor:.1f}x"


def node_env() -> dict:
    """The environment of the Node.js clients (Foxglove's packages on NODE_PATH)."""
    return {**os.environ, "NODE_PATH": str(NODE_MODULES)}


def start_foxglove_clients(procs: Processes, url: str, n: int, churn: bool = False,
                           only_probe: bool = False):
    """Node processes holding ``n`` clients in all (or one churning client);
    returns them once every client has its first probe."""
    node = shutil.which("node")
    sizes = [1] if churn else [min(CLIENTS_PER_PROCESS, n - i)
                               for i in range(0, n, CLIENTS_PER_PROCESS)]
    kids = []
    for size in sizes:
        cmd = [node, CLIENTS_JS, "--url", url, "--probe", PROBE]
        cmd += ["--churn"] if churn else ["--clients", size, "--ready-timeout", 90]
        cmd += ["--only-probe"] if only_probe else []
        kids.append(procs.start("foxglove-clients", cmd, pipes=True, env=node_env()))
    for k in kids:
        ready = read_line(k, 120)
        if not ready.get("ready"):
            raise RuntimeError(f"Foxglove clients not ready: {ready}")
    return kids


# ----------------------------------------------------------------- RDI clients
def rdi_clients(port: int, n: int, seconds: float, bridge_pid: int, warmup: float = 2.0):
    """``n`` RDI real-time clients for ``warmup`` + ``seconds``: frames/s per
    client, the newest sonar reading's age at receipt, the bridge's CPU."""
    from bsal_ros.protocol import RdiBaseTime, RdiDecoder, RdiOrientEgo, RdiSensor
    from bsal_ros.protocol.constants import RdiSensorType
    from bsal_ros.protocol.values import Statval
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.setblocking(False)
        socks.append(s)
        sel.register(s, selectors.EVENT_READ, {"dec": RdiDecoder(), "base": None, "newest": None,
                                               "frames": 0, "bytes": 0})
    ages: list[float] = []
    start = time.monotonic() + warmup
    end = start + seconds
    cpu = None
    measuring = False
    try:
        while True:
            now = time.monotonic()
            if not measuring and now >= start:
                measuring = True
                cpu = CpuWindow(bridge=bridge_pid).open()
                for key in sel.get_map().values():
                    key.data["frames"] = key.data["bytes"] = 0
            if now >= end:
                break
            for key, _ in sel.select(0.05):
                data = key.fileobj.recv(262144)
                t = time.time()
                if not data:
                    raise RuntimeError("the RDI gateway closed a client")
                st = key.data
                st["bytes"] += len(data)
                for p in st["dec"].feed(data):
                    if isinstance(p, RdiBaseTime):
                        st["base"] = p.time.sec + p.time.usec / 1e6
                    elif isinstance(p, RdiSensor) and p.sub_code == RdiSensorType.ULTRASONIC:
                        ms = max(Statval.unpack(r.status).ms for _, r in p.items)
                        st["newest"] = ms if st["newest"] is None else max(st["newest"], ms)
                    elif isinstance(p, RdiOrientEgo):     # the end of a frame
                        st["frames"] += 1
                        if measuring and st["base"] is not None and st["newest"] is not None:
                            ages.append(1e3 * (t - st["base"]) - st["newest"])
                        st["newest"] = None
        cpu.close()
    finally:
        for s in socks:
            s.close()
    fps = sorted(k.data["frames"] / seconds for k in sel.get_map().values())
    return {"cpu": cpu.pct("bridge"), "fps_min": fps[0], "fps_med": fps[len(fps) // 2],
            "age_p50": pct(ages, 0.5), "age_p99": pct(ages, 0.99)}


# ------------------------------------------------------------------- part 1
def foxglove_window(procs, bridge, floor, n, seconds, warmup=2.0, only_probe=False):
    """``n`` Foxglove clients for ``warmup`` + ``seconds``: latency, floor, CPU."""
    kids = start_foxglove_clients(procs, bridge.url, n, only_probe=only_probe)
    try:
        time.sleep(warmup)
        ask(floor, "start")
        for k in kids:
            ask(k, "start")
        cpu = CpuWindow(bridge=bridge.pid, **{f"node{i}": k.pid for i, k in enumerate(kids)})
        threads0 = thread_cpu(bridge.pid)
        cpu.open()
        wall = time.time()
        time.sleep(seconds)
        cpu.close()
        threads1 = thread_cpu(bridge.pid)
        reports = [ask(k, "stop") for k in kids]
        fl = ask(floor, "stop")["latency_ms"]
    finally:
        for k in kids:
            procs.stop(k)
    lat = [x for r in reports for x in r["latency_ms"]]
    clients = [c for r in reports for c in r["clients"]]
    window = cpu.t1 - cpu.t0
    return {
        "n": n, "p50": pct(lat, 0.5), "p99": pct(lat, 0.99), "wall": (wall, wall + seconds),
        "worst_p99": max((c["p99"] for c in clients if c["p99"] is not None), default=float("nan")),
        "floor_p50": pct(fl, 0.5), "floor_p99": pct(fl, 0.99),
        "probes": len(lat), "expected": len(fl) * n,
        "lost": sum(c["lost"] for c in clients),
        "msgs_per_client": statistics.fmean(c["messages"] for c in clients) / window,
        "bytes_total": sum(c["bytes"] for c in clients) / window,
        "channels": min(c["channels"] for c in clients),
        "cpu": cpu.pct("bridge"),
        "clients_cpu": sum(cpu.pct(f"node{i}") for i in range(len(kids))),
        "threads": {k: 100 * (threads1.get(k, 0) - v) / window for k, v in threads0.items()},
        "sonar_age": [x for r in reports for x in r["sonar_age_ms"]],
        "failures": sum(r["failures"] for r in reports),
        "failure_texts": [t for r in reports for t in r["failure_texts"]][:5],
        "statuses": {k: v for r in reports for k, v in r["statuses"].items()},
    }


def part_latency(procs, args, workdir: Path):
    """Part 1: N Foxglove clients beside the floor, N RDI clients, the bridge alone."""
    print(f"### 1. Latency and CPU with N clients ({load()} at its start)\n")
    trace = workdir / "trace.json"
    bridge = Bridge(procs, rdi_clients=max(args.clients),
                    trace=(PROBE, trace) if args.trace else None)
    probe, floor = start_peers(procs, args.probe_hz, PROBE)
    time.sleep(args.settle)
    idle = CpuWindow(bridge=bridge.pid).open()
    time.sleep(args.seconds)
    idle.close()
    rows = []
    for n in args.clients:
        fox = foxglove_window(procs, bridge, floor, n, args.seconds, only_probe=args.only_probe)
        rdi = rdi_clients(bridge.rdi_realtime, n, args.seconds, bridge.pid)
        rows.append((fox, rdi))
        print(f"[bench_foxglove] {n} clients done", file=sys.stderr, flush=True)
    errors = bridge.errors()
    procs.stop(probe)
    procs.stop(floor)
    bridge.stop()

    print(f"`{PROBE}` (std_msgs/msg/Header) at {args.probe_hz:g} Hz; {args.seconds:g} s per "
          f"window after a 2 s warm-up; the floor: a bare rclpy subscriber (DDS only) "
          f"receiving the same probes in the same window. Bridge CPU with no client: "
          f"**{idle.pct('bridge'):.1f} %** of a core.\n")
    print("| clients | Foxglove p50 / p99 ms | floor p50 / p99 ms | ratio p50 / p99 "
          "| worst client p99 ms | probes got / floor's x N, lost "
          "| bridge CPU % (+ over no client) "
          "| client processes CPU % | msgs/s per client | bytes/s total |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for fox, _ in rows:
        print(f"| {fox['n']} | **{fox['p50']:.2f} / {fox['p99']:.2f}** | "
              f"{fox['floor_p50']:.2f} / {fox['floor_p99']:.2f} | "
              f"{ratio(fox['p50'], fox['floor_p50'])} / {ratio(fox['p99'], fox['floor_p99'])} | "
              f"{fox['worst_p99']:.2f} | {fox['probes']} / {fox['expected']}, {fox['lost']} | "
              f"**{fox['cpu']:.1f}** ({fox['cpu'] - idle.pct('bridge'):+.1f}) | "
              f"{fox['clients_cpu']:.0f} | {fox['msgs_per_client']:.0f} | "
              f"{fox['bytes_total']:,.0f} |")
    print("\nThe RDI fan-out in the same bridge, N real-time clients (port "
          "`realtime`, its 10 Hz"
          + (f"; max_clients {max(args.clients)} for this run, 64 by default"
             if max(args.clients) > 64 else "")
          + "), and the sonar reading's age at receipt: Foxglove, "
          "receipt - the Range's header stamp (the board's read time), every sonar "
          "message the first client of each Node process got; RDI, receipt - (base "
          "time + the newest ultrasonic statval's ms) per frame (statvals count ms: "
          "up to 1 ms of rounding; a frame holds the newest readings, up to one period "
          "old).\n")
    print("| clients | RDI frames/s per client min / median | bridge CPU % with RDI "
          "(+ over no client) | sonar age p50 / p99 ms, Foxglove | sonar age p50 / p99 ms, RDI |")
    print("|---|---|---|---|---|")
    for fox, rdi in rows:
        ages = fox["sonar_age"]
        print(f"| {fox['n']} | {rdi['fps_min']:.1f} / {rdi['fps_med']:.1f} | "
              f"{rdi['cpu']:.1f} ({rdi['cpu'] - idle.pct('bridge'):+.1f}) | "
              f"{pct(ages, 0.5):.1f} / {pct(ages, 0.99):.1f} | "
              f"{rdi['age_p50']:.1f} / {rdi['age_p99']:.1f} |")
    last = rows[-1][0]
    top = sorted(last["threads"].items(), key=lambda kv: -kv[1])[:6]
    print(f"\nBridge CPU by thread with {last['n']} Foxglove clients (% of a core): "
          + ", ".join(f"`{k}` {v:.1f}" for k, v in top) + ".")
    if args.trace:
        print_trace(json.loads(trace.read_text()) if trace.exists() else [], rows)
    by_n = {f["n"]: f for f, _ in rows}
    goals = []
    if 10 in by_n:
        goals.append(f"p99 with 10 clients {by_n[10]['p99']:.2f} ms (goal: at most 5 ms)")
    if 100 in by_n:
        goals.append(f"the bridge with 100 clients {by_n[100]['cpu']:.1f} % of a core, "
                     "every node of it (goal: the gateway on at most one core)")
    if goals:
        print("\nGoals of issue 50: " + "; ".join(goals) + ".")
    fails = sum(f["failures"] for f, _ in rows)
    statuses = {k: v for f, _ in rows for k, v in f["statuses"].items()}
    print(f"\nChannels each client subscribed to: {rows[0][0]['channels']}. Client failures: "
          f"{fails}{' ' + repr(rows[-1][0]['failure_texts']) if fails else ''}; statuses "
          f"sent to clients: {statuses or 'none'}; bridge ERROR lines: {len(errors)}"
          f"{' ' + repr(errors[:3]) if errors else ''}.\n")


def print_trace(samples, rows):
    """The probe's path cut in three: stamp -> the gateway's callback, the SDK's
    ``Channel.log``, and what is left to the client (end-to-end minus both)."""
    print("\nThe probe's path inside the gateway (`--trace`: its Channel.log timed), ms "
          "p50 / p90 / p99:\n")
    print("| clients | stamp -> gateway callback | Channel.log (the SDK's fan-out) "
          "| left to tokio, WebSocket, client (p50) |")
    print("|---|---|---|---|")
    for fox, _ in rows:
        t0, t1 = fox["wall"]
        mine = [r for r in samples if t0 <= r[0] <= t1]
        cb, log = [r[1] for r in mine], [r[2] for r in mine]
        print(f"| {fox['n']} | " + " | ".join(
            " / ".join(f"{pct(xs, q):.2f}" for q in (0.5, 0.9, 0.99)) for xs in (cb, log))
            + f" | {fox['p50'] - pct(cb, 0.5) - pct(log, 0.5):.2f} |")


# ------------------------------------------------------------------- part 2
def part_rest(procs, args):
    """Part 2: the bridge with no client, with and without the gateway, alternating."""
    print(f"### 2. The bridge at rest, no client ({load()} at its start)\n")
    rounds = max(1, args.rest_rounds)
    each = args.rest_seconds / rounds
    got = {True: [], False: []}
    for r in range(rounds):
        for fox in ((True, False) if r % 2 == 0 else (False, True)):
            bridge = Bridge(procs, foxglove=fox)
            try:
                time.sleep(args.settle)
                w = CpuWindow(bridge=bridge.pid).open()
                time.sleep(each)
                got[fox].append(w.close().pct("bridge"))
            finally:
                bridge.stop()
    with_, without = statistics.fmean(got[True]), statistics.fmean(got[False])
    print(f"{rounds} rounds of {each:g} s each way ({args.settle:g} s after 'Brak is up'), "
          "alternating, one bridge per round; % of one core:\n")
    print("| bridge | CPU % per round | mean |")
    print("|---|---|---|")
    print(f"| with the gateway, no client | {', '.join(f'{x:.2f}' for x in got[True])} | "
          f"**{with_:.2f}** |")
    print(f"| `--no-foxglove` | {', '.join(f'{x:.2f}' for x in got[False])} | "
          f"**{without:.2f}** |")
    print(f"\nThe gateway with no client adds **{with_ - without:+.2f} %** of a core "
          f"(goal: at most 1 %).\n")


# ------------------------------------------------------------------- part 3
def recorder_command(out: Path):
    """brak_record's command line writing every topic to ``out`` (None: not
    installed; a str: why its command line is not understood)."""
    exe = shutil.which("brak_record")
    if exe is None:
        return None
    r = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    helptext = r.stdout + r.stderr
    for flag in ("--output", "--out", "-o"):
        if re.search(rf"(^|[\s,\[]){re.escape(flag)}\b", helptext):
            return [exe, flag, str(out)]
    if re.search(r"usage:.*\b(file|path|output|out)\b", helptext, re.I | re.S):
        return [exe, str(out)]
    return f"brak_record's command line has no output file option I know:\n{helptext[:600]}"


def part_record(procs, args, workdir: Path):
    """Part 3: brak_record at full rate."""
    print(f"### 3. brak_record at full rate ({load()} at its start)\n")
    out = workdir / "bench.mcap"
    cmd = recorder_command(out)
    if cmd is None or isinstance(cmd, str):
        print("brak_record not installed: skipped\n" if cmd is None else f"skipped: {cmd}\n")
        return
    bridge = Bridge(procs)
    try:
        time.sleep(args.settle)
        alone = CpuWindow(bridge=bridge.pid).open()
        time.sleep(min(args.record_seconds, args.seconds))
        alone.close()
        rec = procs.start("brak_record", cmd)
        t_start = time.monotonic()
        time.sleep(5.0)
        w = CpuWindow(bridge=bridge.pid, rec=rec.pid).open()
        time.sleep(args.record_seconds)
        w.close()
        rec.popen.send_signal(signal.SIGINT)       # Ctrl-C: a complete, indexed file
        rec.popen.wait(60)
        took = time.monotonic() - t_start
        status = procs.stop(rec)
        size = out.stat().st_size if out.exists() else 0
        said = [ln for ln in rec.text().splitlines() if " messages, " in ln]
        errors = bridge.errors()
    finally:
        bridge.stop()
    shown = " ".join(["brak_record", *cmd[1:-1], "FILE"])
    print(f"`{shown}`, every topic, {args.record_seconds:g} s measured after 5 s, then "
          f"SIGINT (exit {status}); % of one core:\n")
    print("| recorder CPU % | bridge CPU % recording | bridge CPU % not recording "
          "| file bytes per minute | file bytes |")
    print("|---|---|---|---|---|")
    print(f"| **{w.pct('rec'):.1f}** | {w.pct('bridge'):.1f} | {alone.pct('bridge'):.1f} | "
          f"**{size * 60 / took:,.0f}** | {size:,} in {took:.0f} s |")
    print(f"\nIts last progress line: `{said[-1][:300] if said else '(none)'}`. "
          f"Bridge ERROR lines: {len(errors)}.\n")


# ------------------------------------------------------------------- part 4
def part_soak(procs, args, workdir: Path):
    """Part 4: the soak."""
    print(f"### 4. Soak, {args.soak_seconds:g} s ({load()} at its start)\n")
    bridge = Bridge(procs)
    legacy = rec = None
    rec_status = None
    try:
        probe, floor = start_peers(procs, args.probe_hz, PROBE)
        steady = start_foxglove_clients(procs, bridge.url, 10)
        churner = start_foxglove_clients(procs, bridge.url, 1, churn=True)
        cmd = recorder_command(workdir / "soak.mcap")
        rec = procs.start("brak_record", cmd) if isinstance(cmd, list) else None
        legacy = LegacyLoop(CLIENT_APP, bridge.rci) if CLIENT_APP.exists() else None
        for k in steady + churner:
            ask(k, "start")
        ask(floor, "start")
        mark = len(bridge.child.text())          # the bridge's start-up lies before
        samples = []
        t0 = time.monotonic()
        while (t := time.monotonic() - t0) < args.soak_seconds:
            samples.append((t, rss_kb(bridge.pid)))
            if not bridge.child.alive():
                raise RuntimeError(f"the bridge died in the soak:\n{bridge.child.text()[-2000:]}")
            time.sleep(max(0.0, 5.0 - (time.monotonic() - t0 - t)))
        reports = [ask(k, "stop") for k in steady + churner]
        fl = ask(floor, "stop")["latency_ms"]
    finally:
        if legacy is not None:
            legacy.stop()
        if rec is not None:
            rec.popen.send_signal(signal.SIGINT)     # Ctrl-C: the file is completed
            try:
                rec.popen.wait(60)
            except subprocess.TimeoutExpired:
                pass
            rec_status = procs.stop(rec)
    errors, early = bridge.errors(mark), bridge.errors(0, mark)
    mcap = workdir / "soak.mcap"
    rec_size = mcap.stat().st_size if rec and mcap.exists() else 0
    for k in steady + churner + [probe, floor]:
        procs.stop(k)
    bridge.stop()
    after = [(t, v) for t, v in samples if t >= args.soak_warmup] or samples
    vals = [v for _, v in after]
    lat = [x for r in reports[:-1] for x in r["latency_ms"]]
    churn = reports[-1]
    failures = sum(r["failures"] for r in reports)
    texts = [t for r in reports for t in r["failure_texts"]][:5]
    statuses = {k: v for r in reports for k, v in r["statuses"].items()}
    print(f"10 clients on every channel, one more connecting and leaving every second "
          f"({churn['churn_clients']} came and went, {churn['churn_connected']} connected, "
          f"{churn['churn_with_data']} got messages), "
          + (f"brak_record recording ({rec_size:,} bytes, exit {rec_status} after SIGINT), "
             if rec else
             "no recording (brak_record not installed), ")
          + (f"client-app in a loop ({legacy.runs} runs)" if legacy else
             "no client-app (legacy/build/client-app missing: make setup)")
          + f"; bridge RSS every 5 s, warm-up {args.soak_warmup:g} s.\n")
    print("| RSS kB at start | after warm-up: first | last | max | slope kB/min "
          "| probe p50 / p99 ms (floor) | errors |")
    print("|---|---|---|---|---|---|---|")
    n_err = len(errors) + failures + (len(legacy.failed) if legacy else 0)
    print(f"| {samples[0][1]:,} | {vals[0]:,} | {vals[-1]:,} | {max(vals):,} | "
          f"**{slope_per_min(after):+.1f}** | {pct(lat, 0.5):.2f} / {pct(lat, 0.99):.2f} "
          f"({pct(fl, 0.5):.2f} / {pct(fl, 0.99):.2f}) | **{n_err}** |")
    minutes = [v for t, v in samples if int(t) % 60 < 5]
    print(f"\nRSS kB each minute: {', '.join(f'{v:,}' for v in minutes)}.")
    print(f"\nErrors: bridge ERROR lines {len(errors)}{' ' + repr(errors[:3]) if errors else ''} "
          f"(before the soak, at start-up: {len(early)}{' ' + repr(early[:2]) if early else ''}); "
          f"client failures {failures}{' ' + repr(texts) if texts else ''}; client-app "
          f"failed runs {len(legacy.failed) if legacy else '-'}"
          f"{' ' + repr(legacy.failed[:3]) if legacy and legacy.failed else ''}; statuses "
          f"sent to clients: {statuses or 'none'}.\n")


# ---------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="measured window per case")
    ap.add_argument("--clients", default="1,10,100", help="numbers of clients (part 1)")
    ap.add_argument("--probe-hz", type=float, default=50.0)
    ap.add_argument("--settle", type=float, default=5.0,
                    help="seconds after the bridge is up before measuring")
    ap.add_argument("--parts", default="latency,rest,record",
                    help="which parts, of latency,rest,record,soak (the soak is not a default)")
    ap.add_argument("--rest-seconds", type=float, default=30.0, help="part 2: seconds each way")
    ap.add_argument("--rest-rounds", type=int, default=2)
    ap.add_argument("--record-seconds", type=float, default=60.0, help="part 3")
    ap.add_argument("--soak-seconds", type=float, default=600.0, help="part 4")
    ap.add_argument("--soak-warmup", type=float, default=None,
                    help="RSS samples before this are warm-up (default: a fifth, at most 120 s)")
    ap.add_argument("--trace", action="store_true",
                    help="part 1: time the probe inside the gateway (its Channel.log wrapped)")
    ap.add_argument("--only-probe", action="store_true",
                    help="part 1: the clients subscribe to the probe alone")
    ap.add_argument("--quick", action="store_true",
                    help="a short run: 5 s windows, 1 and 10 clients, 10 s at rest, 15 s "
                         "recording, 60 s of soak")
    args = ap.parse_args(argv)
    args.clients = [int(c) for c in args.clients.split(",") if c.strip()]
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    unknown = parts - {"latency", "rest", "record", "soak"}
    if unknown:
        ap.error(f"unknown parts: {', '.join(sorted(unknown))}")
    if args.quick:
        args.seconds, args.clients = 5.0, [1, 10]
        args.rest_seconds, args.record_seconds, args.soak_seconds = 10.0, 15.0, 60.0
    if args.soak_warmup is None:
        args.soak_warmup = min(120.0, args.soak_seconds / 5)
    if not shutil.which("node") or not (NODE_MODULES / "@foxglove" / "ws-protocol").is_dir():
        print("Node.js or bsal_ros/web/node_modules missing (make setup): skipped")
        return 0
    load = os.getloadavg()
    print(f"Load average at start {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
          f"(1 / 5 / 15 min) on {os.cpu_count()} cores.\n")
    with tempfile.TemporaryDirectory(prefix="bench_foxglove-") as tmp:
        procs = Processes(Path(tmp))
        try:
            if "latency" in parts and args.clients:
                part_latency(procs, args, Path(tmp))
            if "rest" in parts:
                part_rest(procs, args)
            if "record" in parts:
                part_record(procs, args, Path(tmp))
            if "soak" in parts:
                part_soak(procs, args, Path(tmp))
        finally:
            procs.stop_all()
    load = os.getloadavg()
    print(f"Load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
