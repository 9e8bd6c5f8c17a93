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

"""Brak's page: its own cost in the browser (not a test).

The bridge (``brak_bringup``, simulated robot, free ports) serves the page;
Debian's chromium, headless (test/page_browser.py), shows it at 1280 x 800.
Measured inside the page: the time of each redraw (``performance.now`` around
it; the page redraws at most once per animation frame, when a message came),
p50 / p99 / max over ``--seconds``, the redraws and messages per second, and
the time from opening the page to the robot drawn with its twelve cones.
Then the browser's memory every 10 s for ``--memory-minutes``: the page's
JavaScript heap (``Runtime.getHeapUsage`` over the DevTools protocol, after a
garbage collection every minute), its DOM's element count, and the resident
memory of the renderer that draws the page and of all the browser's
processes (psutil), with the slope of a least-squares line through each
after the first minute (flat: a slope near 0).

Run:  scripts/with_env.sh python bench/bench_page.py [--seconds 60] [--memory-minutes 10]
Output: Markdown (figures in a code block), for scripts/run_bench.py.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bsal_ros" / "test"))    # the tests' Bridge and browser helpers

from page_browser import (browser_rss, chromium, DESKTOP, MIB, page_url,  # noqa: E402
                          percentile, slope_per_minute, unavailable, until)
from test_bringup import Bridge  # noqa: E402


def main(argv=None) -> int:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="window of the redraw times (s)")
    parser.add_argument("--memory-minutes", type=float, default=10.0,
                        help="how long memory is sampled (min)")
    args = parser.parse_args(argv)
    why = unavailable()
    if why:
        print(f"bench_page: {why}", file=sys.stderr)
        return 2
    load_before = os.getloadavg()
    bridge = Bridge("--duration", str(int(args.seconds + args.memory_minutes * 60 + 300)))
    try:
        with chromium(DESKTOP) as browser:
            page = browser.new_page()
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            opened = time.monotonic()
            page.goto(page_url(bridge))
            until(page, "document.querySelectorAll('path.cone[d]').length === 12",
                  timeout=60000, polling=10)
            first_draw = time.monotonic() - opened
            page.wait_for_timeout(5000)                               # warm-up
            start = page.evaluate("[brakPage.stats.renderCount, brakPage.stats.messages, "
                                  "performance.now()]")
            page.wait_for_timeout(args.seconds * 1000)
            end = page.evaluate("[brakPage.stats.renderCount, brakPage.stats.messages, "
                                "performance.now()]")
            times = page.evaluate(f"brakPage.renderTimes().slice(-{end[0] - start[0]})")
            span = (end[2] - start[2]) / 1000
            cdp = browser.new_cdp_session(page)
            heap, rss, renderer, dom = [], [], [], []
            t0 = time.monotonic()
            while time.monotonic() - t0 < args.memory_minutes * 60:
                now = time.monotonic() - t0
                if len(dom) % 6 == 0:         # a collection a minute, the heap read after it
                    cdp.send("HeapProfiler.collectGarbage")
                    heap.append((now, cdp.send("Runtime.getHeapUsage")["usedSize"] / MIB))
                per = browser_rss(browser.profile_dir)
                rss.append((now, sum(per.values()) / MIB))
                renderer.append((now, per.get("renderer", 0) / MIB))
                dom.append(page.evaluate("document.getElementsByTagName('*').length"))
                page.wait_for_timeout(10000)
            cdp.detach()
            page.close()
    finally:
        bridge.stop()
    load_after = os.getloadavg()

    def settled(samples):
        return [s for s in samples if s[0] >= 60] or samples
    print(f"The page at 1280 x 800 in headless Chromium ({Path('/usr/bin/chromium').name}), "
          f"the bridge on the simulated robot; load average {load_before[0]:.1f} before, "
          f"{load_after[0]:.1f} after (a shared 2-core machine).\n")
    print("```")
    print(f"first drawing (open -> robot and 12 cones drawn): {first_draw:.2f} s")
    print(f"redraws over {span:.0f} s: {len(times)} ({len(times) / span:.1f}/s), messages "
          f"{(end[1] - start[1]) / span:.0f}/s")
    print(f"time per redraw: p50 {percentile(times, 0.5):.3f} ms, p99 "
          f"{percentile(times, 0.99):.3f} ms, max {max(times):.3f} ms "
          f"(frame budget at 60 Hz: 16.7 ms)")
    for name, samples, digits in (("JS heap (after GC)", heap, 2), ("renderer RSS", renderer, 0),
                                  ("browser RSS, all processes", rss, 0)):
        print(f"{name} over {args.memory_minutes:.0f} min: first {samples[0][1]:.{digits}f} "
              f"MiB, last {samples[-1][1]:.{digits}f} MiB, max "
              f"{max(v for _, v in samples):.{digits}f} MiB, slope after the first minute "
              f"{slope_per_minute(settled(samples)):+.3f} MiB/min")
    print(f"DOM elements: first {dom[0]}, last {dom[-1]}, max {max(dom)}")
    print(f"console errors: {len(errors)}")
    print("```")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
