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

"""Figures for the fault campaign: summaries of timings and per-process
resource snapshots (file descriptors, threads, RSS) with leak checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass
import math

#: growth tolerated between two snapshots before a leak is reported
FD_TOLERANCE = 4
THREAD_TOLERANCE = 2


def pct(xs, q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    s = sorted(xs)
    if not s:
        return math.nan
    return s[min(len(s) - 1, max(0, int(math.ceil(q / 100.0 * len(s))) - 1))]


def summary(xs) -> dict:
    """{n, p50, max, min} of a list of numbers (None entries count as failures)."""
    vals = [float(x) for x in xs if x is not None]
    out = {"n": len(vals), "failed": sum(1 for x in xs if x is None)}
    if vals:
        out.update(p50=pct(vals, 50), max=max(vals), min=min(vals))
    return out


def slope(points) -> float:
    """Least-squares slope of [(x, y), ...] (0.0 with fewer than two points)."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def fmt_ms(s: dict, key: str = "p50") -> str:
    v = s.get(key)
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * 1e3:.0f}"


@dataclass
class ProcSnapshot:
    fds: int
    threads: int
    rss: int
    cpu_s: float
    tcp: int

    def to_dict(self) -> dict:
        return asdict(self)


def snapshot(pid: int) -> ProcSnapshot | None:
    """Resources of a live process (None if it is gone)."""
    import psutil
    try:
        p = psutil.Process(pid)
        with p.oneshot():
            t = p.cpu_times()
            try:
                tcp = len(p.net_connections(kind="tcp"))
            except (AttributeError, psutil.Error):
                tcp = -1
            return ProcSnapshot(p.num_fds(), p.num_threads(), p.memory_info().rss,
                                t.user + t.system, tcp)
    except psutil.Error:
        return None


def leak_check(before: dict | None, after: dict | None) -> dict:
    """Deltas between two snapshot dicts and whether they exceed the tolerances."""
    if not before or not after:
        return {"checked": False}
    d = {k: after[k] - before[k] for k in ("fds", "threads", "rss", "tcp")}
    return {"checked": True, "fds": d["fds"], "threads": d["threads"], "rss": d["rss"],
            "tcp": d["tcp"],
            "fd_leak": d["fds"] > FD_TOLERANCE, "thread_leak": d["threads"] > THREAD_TOLERANCE}
