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

"""Medians over repeated bench_rci.py runs, one row per variant.

    python bench/rci_latency/compare.py baseline='out/b_*.json' switch='out/s_*.json'
    python bench/rci_latency/compare.py --detail baseline='out/b_*.json'

Each argument is LABEL=GLOB of --json reports of one variant; the table shows,
per deployment, the median over the runs of each figure (ms), and the range
(min-max) of the p50s, which says how noisy the repeats were. --detail prints,
per variant, every figure against every floor with the ratios, the traced
segments (p50 and p99) and the processes' CPU, each a median over the runs.
"""

from __future__ import annotations

import glob
import json
import statistics
import sys

DEPLOY = {"one": "one process", "per-node": "process per node"}
SEG_SHORT = {
    "request -> hardware node callback starts": "req -> hw cb",
    "hardware node set_motors callback": "hw cb",
    "callback end -> response on the gateway's future": "hw cb -> gw future",
    "future -> asyncio coroutine resumes": "future -> asyncio",
}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def load_runs(pattern):
    """The --json reports matching ``pattern`` (unreadable files skipped)."""
    runs = []
    for path in sorted(glob.glob(pattern)):
        try:
            runs.append(json.loads(open(path).read()))
        except (OSError, ValueError):
            continue
    return runs


FLOORS = (("tcp_sonar", "TCP echo"), ("trigger_single", "rclpy single"),
          ("trigger_multi", "rclpy multi"), ("trigger_events", "rclpy events"))


def detail(label, runs):
    """Median tables of one variant (see the module docstring)."""
    loads = ", ".join(f"{r['load'][0]:.1f}" for r in runs)
    print(f"{label}: {len(runs)} runs, load average (1 min) at their start {loads}\n")
    print("| path | deployment | p50 (range) | p99 | p99.9 | floor | floor p50 / p99 / p99.9 "
          "| ratio p50 / p99 / p99.9 |")
    print("|---|---|---|---|---|---|---|---|")
    for dep in DEPLOY:
        rs = [r["runs"][dep]["summary"] for r in runs if dep in r.get("runs", {})]
        if not rs:
            continue
        for key, name, floors in (("sonar", "12-sonar group Get", FLOORS[:1]),
                                  ("motor", "acked Set Motor", FLOORS[1:])):
            q = {x: med([s[key][x] for s in rs]) for x in ("p50", "p99", "p999")}
            p50s = [s[key]["p50"] for s in rs]
            for fk, fname in floors:
                if not all(fk in s for s in rs):
                    continue
                f = {x: med([s[fk][x] for s in rs]) for x in ("p50", "p99", "p999")}
                print(f"| {name} | {DEPLOY[dep]} | {q['p50']:.3f} ({min(p50s):.3f}-"
                      f"{max(p50s):.3f}) | {q['p99']:.3f} | {q['p999']:.3f} | {fname} "
                      f"| {f['p50']:.3f} / {f['p99']:.3f} / {f['p999']:.3f} "
                      f"| {q['p50'] / f['p50']:.1f}x / {q['p99'] / f['p99']:.1f}x / "
                      f"{q['p999'] / f['p999']:.1f}x |")
    print()
    deps = [d for d in DEPLOY if any(d in r.get("breakdown", {}) for r in runs)]
    if deps:
        names = list(next(r["breakdown"][deps[0]]["segments"] for r in runs
                          if deps[0] in r.get("breakdown", {})))
        print("| segment (traced) | " + " | ".join(f"{DEPLOY[d]} p50 (p99)" for d in deps)
              + " |")
        print("|---|" + "---|" * len(deps))
        for k in names:
            cells = []
            for d in deps:
                bd = [r["breakdown"][d]["segments"][k] for r in runs
                      if k in r.get("breakdown", {}).get(d, {}).get("segments", {})]
                cells.append(f"{med([b['p50'] for b in bd]):.3f} "
                             f"({med([b['p99'] for b in bd]):.3f})")
            print(f"| {k} | " + " | ".join(cells) + " |")
        cells = []
        for d in deps:
            tot = [r["breakdown"][d]["total"] for r in runs if d in r.get("breakdown", {})]
            cells.append(f"{med([t['p50'] for t in tot]):.3f} ({med([t['p99'] for t in tot]):.3f})")
        print("| whole round trip (traced) | " + " | ".join(cells) + " |")
        print()
    for dep in DEPLOY:
        rs = [r["runs"][dep] for r in runs if dep in r.get("runs", {})]
        if rs:
            print(f"CPU, % of one core, {DEPLOY[dep]}, idle / sampling: " + ", ".join(
                f"{k} {med([r['idle_cpu'][k] for r in rs]):.0f} / "
                f"{med([r['busy_cpu'][k] for r in rs]):.0f}" for k in rs[0]["idle_cpu"]) + ".\n")


def main(argv):
    if argv and argv[0] == "--detail":
        for label, pattern in (a.split("=", 1) for a in argv[1:]):
            detail(label, load_runs(pattern))
        return 0
    variants = [a.split("=", 1) for a in argv]
    print("| variant | deployment | runs | load (1 min) | sonar p50 / p99 | Set Motor p50 / p99 "
          "(p50 range) | rclpy floor (single) p50 / p99 | rclpy floor (events) p50 / p99 | "
          "TCP floor p50 / p99 | "
          "traced: req -> hw cb / hw cb / hw cb -> gw future / future -> asyncio (p50) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, pattern in variants:
        runs = load_runs(pattern)
        if not runs:
            print(f"| {label} | - | 0 | | | | | | | |")
            continue
        load = med([r["load"][0] for r in runs])
        for dep in DEPLOY:
            rs = [r["runs"][dep]["summary"] for r in runs if dep in r.get("runs", {})]
            if not rs:
                continue

            def m(key, q):
                return med([s[key][q] for s in rs if key in s])
            p50s = [s["motor"]["p50"] for s in rs]
            bd = [r["breakdown"][dep]["segments"] for r in runs if dep in r.get("breakdown", {})]
            segs = " / ".join(f"{med([b[k]['p50'] for b in bd if k in b]):.3f}"
                              for k in SEG_SHORT) if bd else "-"
            print(f"| {label} | {DEPLOY[dep]} | {len(rs)} | {load:.1f} "
                  f"| {m('sonar', 'p50'):.3f} / {m('sonar', 'p99'):.3f} "
                  f"| {m('motor', 'p50'):.3f} / {m('motor', 'p99'):.3f} "
                  f"({min(p50s):.3f}-{max(p50s):.3f}) "
                  f"| {m('trigger_single', 'p50'):.3f} / {m('trigger_single', 'p99'):.3f} "
                  f"| {m('trigger_events', 'p50'):.3f} / {m('trigger_events', 'p99'):.3f} "
                  f"| {m('tcp_sonar', 'p50'):.3f} / {m('tcp_sonar', 'p99'):.3f} | {segs} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
