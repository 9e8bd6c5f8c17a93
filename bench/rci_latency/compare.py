"""Medians over repeated bench_rci_client.py runs, one row per variant.

    python bench/rci_latency/compare.py baseline='out/b_*.json' switch='out/s_*.json'

Each argument is LABEL=GLOB of --json reports of one variant; the table shows,
per deployment, the median over the runs of each figure (ms), and the range
(min-max) of the p50s, which says how noisy the repeats were.
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


def main(argv):
    variants = [a.split("=", 1) for a in argv]
    print("| variant | deployment | runs | load (1 min) | sonar p50 / p99 | Set Motor p50 / p99 "
          "(p50 range) | rclpy floor (single) p50 / p99 | rclpy floor (events) p50 / p99 | "
          "TCP floor p50 / p99 | "
          "traced: req -> hw cb / hw cb / hw cb -> gw future / future -> asyncio (p50) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, pattern in variants:
        runs = []
        for path in sorted(glob.glob(pattern)):
            try:
                runs.append(json.loads(open(path).read()))
            except (OSError, ValueError):
                continue
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
