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
"""RCI latency lab -> robot, on two hosts (issue 22): both placements, over a
clean and over a lossy, narrow link, with the same run's floor.

    scripts/with_env.sh python bench/bench_two_hosts.py [--samples 400]
        [--placements robot,split] [--loss 2] [--rate 10mbit] [--json FILE]

Needs root (network namespaces; bench/two_hosts/netns.py makes and deletes
them). For each placement (``robot``: the whole bridge on the robot;
``split``: hardware node on the robot, gateways in the lab) the lab's control
application (plain sockets, bench/two_hosts/clients.py, in the lab
namespace) times, in interleaved blocks: (a) a 12-sonar Get Sensor
CGtSnIq -> CGtSnRp, (b) Set Motor with RQ_ACK CStMt -> CCnAc, and the
floor: a bare TCP round trip lab -> robot across the veth with the same
request sizes (an echo server in the robot namespace). Then the link gets
``--loss`` % random loss each way (nftables) and a ``--rate`` tbf, and the
same is measured again. Prints Markdown with p50/p99 (ms). Do not run it in
parallel with the tests (2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import platform
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.two_hosts import netns  # noqa: E402
from bench.two_hosts.rig import Deployment  # noqa: E402

REPLY_SIZES = {"sonar": 60, "motor": 8}    # CGtSnRp of 12 sonars, CCnAc (bytes, big endian)


def pct(xs, q):
    """Nearest-rank percentile of ns samples, in ms."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s)) - 1))] / 1e6


def measure(dep: Deployment, echo_port: int, samples: int, blocks: int) -> dict:
    """Interleaved blocks of both RCI paths and both floors."""
    lab = dep.lab
    out = {"sonar": [], "motor": [], "tcp_sonar": [], "tcp_motor": [],
           "bad": {"sonar": [], "motor": []}}
    per = max(1, samples // blocks)
    sizes = None
    for _ in range(blocks):
        r = lab.ask("rci_bench", n=per)
        out["sonar"] += r["sonar"]
        out["motor"] += r["motor"]
        for path in ("sonar", "motor"):
            out["bad"][path] += r["bad"][path]
        sizes = r["sizes"]
        for path in ("sonar", "motor"):
            out[f"tcp_{path}"] += lab.ask("echo", host=dep.hosts.addr["robot"], port=echo_port,
                                          req=sizes[path], rep=REPLY_SIZES[path], n=per)["ns"]
    out["sizes"] = sizes
    return out


def run_placement(hosts, placement, a, logdir) -> dict:
    """One deployment: clean link, then the lossy one."""
    dep = Deployment(hosts, placement, logdir, dict(os.environ))
    results = {}
    try:
        dep.wait_up()
        deadline = time.monotonic() + 60
        while not {"/hardware_node", "/rci_gateway"} <= set(dep.lab.ask("graph")["nodes"]):
            if time.monotonic() > deadline:
                raise RuntimeError("graph not complete from the lab")
            time.sleep(0.5)
        echo_port = dep.robot.ask("echo_start", host=hosts.addr["robot"])["port"]
        if dep.login()["activate"] != "ack":
            raise RuntimeError("DC motor 0 not switched on")
        dep.lab.ask("rci_bench", n=a.warmup)
        results["clean"] = measure(dep, echo_port, a.samples, a.blocks)
        hosts.impair(loss_pct=a.loss, rate=a.rate)
        try:
            results["lossy"] = measure(dep, echo_port, a.samples, a.blocks)
        finally:
            hosts.clear_impairment()
    finally:
        codes = dep.stop()
        print(f"[bench] {placement}: stopped {codes}", file=sys.stderr)
    return results


def report(a, runs) -> None:
    """Markdown: one row per placement, link and path."""
    print(f"RCI latency lab -> robot over a veth pair between two network namespaces; "
          f"{a.samples} samples per path and case, {a.blocks} interleaved blocks; "
          f"lossy = {a.loss} % loss each way (nftables) + tbf {a.rate}; Fast DDS profile: "
          f"{a.fastdds_profile or 'none (defaults)'}. "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs. ms.\n")
    print("| placement | link | path | p50 | p99 | floor p50 | floor p99 | failed (answer, ms) |")
    print("|---|---|---|---|---|---|---|---|")
    names = {"sonar": "Get Sensor 12 sonars (CGtSnIq -> CGtSnRp)",
             "motor": "Set Motor acked (CStMt -> CCnAc)"}
    for placement, res in runs.items():
        for link, r in res.items():
            for path in ("sonar", "motor"):
                xs, fl, bad = r[path], r[f"tcp_{path}"], r["bad"][path]
                failed = "0" if not bad else (
                    f"{len(bad)} ({', '.join(sorted({a for _, a in bad}))}, "
                    f"{min(n for n, _ in bad) / 1e6:.0f}..{max(n for n, _ in bad) / 1e6:.0f})")
                print(f"| {placement} | {link} | {names[path]} | {pct(xs, 50):.2f} | "
                      f"{pct(xs, 99):.2f} | {pct(fl, 50):.3f} | {pct(fl, 99):.3f} | "
                      f"{failed} |")


def main(argv=None) -> int:
    """Run the placements, print the report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=400)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--placements", default="robot,split")
    ap.add_argument("--loss", type=int, default=2)
    ap.add_argument("--rate", default="10mbit")
    ap.add_argument("--fastdds-profile", help="FASTDDS_DEFAULT_PROFILES_FILE of every ROS "
                    "process (e.g. bsal_ros/config/fastdds_lossy_link.xml)")
    ap.add_argument("--json", help="write the raw samples (ns) here")
    a = ap.parse_args(argv)
    if a.fastdds_profile:
        os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] = str(Path(a.fastdds_profile).resolve())
    why = netns.unavailable_reason()
    if why:     # not a failure of the bridge: make bench goes on with the others
        print(f"Skipped: two hosts need network namespaces: {why}.")
        return 0
    runs = {}
    hosts = netns.TwoHosts().create()
    try:
        with tempfile.TemporaryDirectory(prefix="bench_two_hosts_") as tmp:
            for placement in a.placements.split(","):
                t0 = time.monotonic()
                sub = Path(tmp) / placement
                sub.mkdir()
                runs[placement] = run_placement(hosts, placement, a, sub)
                print(f"[bench] {placement}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    finally:
        errors = hosts.delete()
        if errors:
            print(f"[bench] cleanup: {errors}", file=sys.stderr)
    report(a, runs)
    if a.json:
        Path(a.json).write_text(json.dumps(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
