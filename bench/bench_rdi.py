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

"""RDI fan-out benchmark (not a test; no ROS needed).

The gateway core (bsal_ros.rdi.RdiGateway, one real-time stream with a
Brak-sized state: 12 sonars, encoders, accelerometer, 2 motors, steering,
drive, ego, omni = 197-byte frames) runs in a child process; this process
connects N clients on loopback and decodes every frame with the protocol
library. Each frame carries its build time (monotonic clock, shared by the
two processes) in the ego packet's x field, so the client side measures the
per-frame lag = receipt time - build time.

Reported per (clients, rate): gateway CPU (% of one core, child process
user+sys), frames/s per client, per-frame lag p50/p99 (all clients) and the
worst client's p99, bytes/s in total. Then memory (child RSS) sampled each
second for --memory-seconds with 16 reading clients and one that never reads
(first with the default max_client_lag_s = 5 s: the stalled client is dropped;
then with the lag limit off, so the stalled client stays connected and only
the bounded queues hold memory back).

Run:  python3 bench/bench_rdi.py [--seconds 5] [--memory-seconds 60]
Output: Markdown (figures in a code block), for scripts/run_bench.py.
"""

from __future__ import annotations

import argparse
import os
import selectors
import socket
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bsal_ros", "test"))    # child_process: a test helper

from bsal_ros.core import DeviceState  # noqa: E402
from bsal_ros.protocol import RdiDecoder, RdiOrientEgo, Statval, Timeval  # noqa: E402
from bsal_ros.rdi import RdiGateway, StreamConfig, StreamState  # noqa: E402
from child_process import cpu_seconds  # noqa: E402


# ------------------------------------------------------------------ child
class BenchState(StreamState):
    """A Brak-sized state whose every frame carries its build time in ego.x."""

    def __init__(self, t0: float):
        super().__init__()
        self.t0 = t0
        st = Statval(True, True, True, 1000).pack()
        self.set_base_time(Timeval(int(time.time()), 0))
        self.update_devices([DeviceState("ultrasonic", i, statval=st, delay_us=3000 + 100 * i,
                                         stamp=1)
                             for i in range(12)])
        self.update_devices([
            DeviceState("relative_encoder", 0, statval=st, d_count=3, count=300, position=1.0,
                        stamp=1),
            DeviceState("absolute_encoder", 0, statval=st, count=10, stamp=1),
            DeviceState("accelerometer", 0, statval=st, accel_g=0.01, stamp=1),
            DeviceState("dc_motor", 0, statval=st, speedval=0x8199, stamp=1),
            DeviceState("pservo_motor", 0, statval=st, speedval=0x0010, motor_position=0.1,
                        stamp=1)])
        self.set_omni_from_twist(0.0, 0.3, time.time())

    # new data every frame: the version changes at every look, so the server
    # never reuses the previous frame's bytes
    @property
    def version(self):
        self._v += 1
        return self._v

    @version.setter
    def version(self, v):
        self._v = v

    def build_frame(self):
        self.ego = (time.monotonic() - self.t0, 0.0, 0.0, time.time())
        return super().build_frame()


def serve(rate: float, t0: float, max_lag: float, max_clients: int) -> None:
    gw = RdiGateway([StreamConfig("realtime", port=0, rate_hz=rate, max_lag_s=max_lag,
                                  max_clients=max_clients)],
                    {"realtime": BenchState(t0)})
    port = gw.start()["realtime"]
    print(port, flush=True)
    sys.stdin.read()                 # until the parent closes stdin
    gw.stop()


# ----------------------------------------------------------------- parent
def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Child:

    def __init__(self, rate, max_lag=5.0, max_clients=128):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve",
                                   str(rate), repr(self.t0), str(max_lag), str(max_clients)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline())

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()


def pct(sorted_vals, q):
    if not sorted_vals:
        return float("nan")
    return sorted_vals[min(len(sorted_vals) - 1, int(q * len(sorted_vals)))]


def readers(port: int, n: int, decoder=None):
    """(selector, sockets) of ``n`` non-blocking connections to ``port``, each
    registered with a ``decoder()`` of its own when one is given."""
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, decoder() if decoder else None)
    return sel, socks


def run_clients(child: Child, n: int, seconds: float, warmup: float = 1.0):
    sel, socks = readers(child.port, n, RdiDecoder)
    lags = {s: [] for s in socks}
    frames = dict.fromkeys(socks, 0)
    nbytes = 0
    t_start = time.monotonic() + warmup
    t_end = t_start + seconds
    cpu0 = None
    while True:
        now = time.monotonic()
        if cpu0 is None and now >= t_start:
            cpu0, tc0 = cpu_seconds(child.p.pid), now
        if now >= t_end:
            break
        for key, _ in sel.select(0.05):
            data = key.fileobj.recv(262144)
            if not data:
                raise SystemExit("gateway closed a client")
            t = time.monotonic()
            if t < t_start:
                key.data.feed(data)
                continue
            nbytes += len(data)
            for p in key.data.feed(data):
                if isinstance(p, RdiOrientEgo):
                    lags[key.fileobj].append(t - child.t0 - p.xpos)
                    frames[key.fileobj] += 1
    cpu = (cpu_seconds(child.p.pid) - cpu0) / (time.monotonic() - tc0)
    for s in socks:
        s.close()
    all_l = sorted(v for ls in lags.values() for v in ls)
    worst_p99 = max(pct(sorted(ls), 0.99) for ls in lags.values())
    fps = sorted(frames[s] / seconds for s in socks)
    return {"cpu": cpu, "p50": pct(all_l, 0.5), "p99": pct(all_l, 0.99), "worst_p99": worst_p99,
            "fps_min": fps[0], "fps_med": fps[len(fps) // 2], "bps": nbytes / seconds}


def memory_run(seconds: float, max_lag: float, rate: float = 50.0):
    child = Child(rate, max_lag=max_lag)
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(("127.0.0.1", child.port))
    sel, socks = readers(child.port, 16)
    samples = []
    t0 = time.monotonic()
    next_sample = t0
    while time.monotonic() - t0 < seconds:
        for key, _ in sel.select(0.05):
            key.fileobj.recv(262144)
        if time.monotonic() >= next_sample:
            samples.append(rss_kb(child.p.pid))
            next_sample += 1.0
    for s in socks + [stalled]:
        s.close()
    child.close()
    return samples


def main(argv=None):
    ap = argparse.ArgumentParser(description="RDI fan-out benchmark")
    ap.add_argument("--seconds", type=float, default=5.0, help="measurement per case")
    ap.add_argument("--memory-seconds", type=float, default=60.0)
    ap.add_argument("--clients", default="1,16,64")
    ap.add_argument("--rates", default="10,50")
    a = ap.parse_args(argv)
    print("```text")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"{a.seconds:g} s per case (after 1 s warm-up)\n")
    print(f"{'clients':>7} {'rate':>5} {'gw CPU':>7} {'frames/s':>13} {'lag p50':>8} "
          f"{'lag p99':>8} {'worst p99':>9} {'bytes/s':>10}")
    print(f"{'':>7} {'Hz':>5} {'%core':>7} {'min/median':>13} {'ms':>8} {'ms':>8} {'ms':>9} "
          f"{'total':>10}")
    for rate in [float(r) for r in a.rates.split(",")]:
        for n in [int(c) for c in a.clients.split(",")]:
            child = Child(rate)
            try:
                r = run_clients(child, n, a.seconds)
            finally:
                child.close()
            print(f"{n:>7} {rate:>5.0f} {100 * r['cpu']:>6.1f}% "
                  f"{r['fps_min']:>6.1f}/{r['fps_med']:<6.1f} {1e3 * r['p50']:>8.2f} "
                  f"{1e3 * r['p99']:>8.2f} {1e3 * r['worst_p99']:>9.2f} {r['bps']:>10,.0f}")
    if a.memory_seconds > 0:
        for lag, what in ((5.0, "default max_client_lag_s 5 s (stalled client dropped)"),
                          (1e6, "lag limit off (stalled client stays connected)")):
            s = memory_run(a.memory_seconds, lag)
            print(f"\nmemory, 16 readers + 1 stalled client, 50 Hz, {a.memory_seconds:g} s, "
                  f"{what}:")
            at_10 = s[min(10, len(s) - 1)]
            print(f"  gateway RSS kB: start {s[0]}, after 10 s {at_10}, "
                  f"max {max(s)}, end {s[-1]} (growth after 10 s: {s[-1] - at_10} kB)")
    print("```")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
