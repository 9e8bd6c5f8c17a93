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
"""Issues 21 and 31: what the read-after-command guarantee costs, three ways
in one run.

Runs the hardware node (sim) and the RCI gateway in one process (as
``test_rci_one_truth.py`` does) and times, with a raw-socket client, a
CStSn clear (RQ_ACK) followed in the same write by a Get Sensor DATA, and a
plain Get Sensor DATA. Rows, each the gateway's cache patched in this process:
"no fence" (commands neither fence nor fill the cache: reads are served from
the topic as before issue 21, possibly stale), "fence + fetch" (issue 21: the
first read after a command calls get_device_states; the answer's states are
ignored) and "states in the answer" (issue 31, the code as it is). A stale
read shows a count over 3 right after the clear (as in issue 21; on a loaded
machine a fresh read that comes late can show more too: the fetch reads the
count later than the answer's state does).

    scripts/with_env.sh python bench/bench_one_truth.py [--n 500]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import statistics
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bsal_ros" / "test"))


def measure(ca, n):
    """(clear+read round trips ms, read-only round trips ms, stale reads)."""
    import struct

    import test_rci_one_truth as t
    both, plain, stale = [], [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        ca.send(ca.pk("HBHB", t.CSTSN | t.RQ_ACK, t.SENSOR_REL, 0, t.RELENC_CLEAR),
                ca.pk("HBHB", t.CGTSNIQ, t.SENSOR_REL, 0, t.SN_DATA))
        ca.expect_ack(t.CSTSN)
        assert ca.next_code() == t.CGTSNRP
        ca.read(3)
        _, c = struct.unpack(ca.o + "hh", ca.read(4))
        both.append((time.perf_counter() - t0) * 1e3)
        stale += abs(c) > 3
        t0 = time.perf_counter()
        ca.encoder_data()
        plain.append((time.perf_counter() - t0) * 1e3)
        time.sleep(0.02)
    return both, plain, stale


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    n = ap.parse_args().n
    import rclpy
    import test_rci_one_truth as t

    from bsal_ros.nodes import rci_state_cache
    ctx = rclpy.context.Context()
    rclpy.init(context=ctx)
    robot = t.Robot(ctx)
    try:
        ca = t.RawCA(robot.port)
        ca.activate_motor(True)
        ca.set_motor(0x0800 | 409)
        rows = []
        cache = rci_state_cache.StateCache
        real = cache.answered

        def fence_only(self, device_class, ids, states):
            real(self, device_class, ids, [])
        for label, answered in (("no fence", lambda *a, **k: None),
                                ("fence + fetch (21)", fence_only),
                                ("states in answer (31)", real)):
            cache.answered = answered
            both, plain, stale = measure(ca, n)
            rows.append((label, both, plain, stale))
        cache.answered = real
        ca.close()
    finally:
        robot.close()
        rclpy.shutdown(context=ctx)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, n = {n} per row, "
          "simulated bus, drive running at 20 %")
    print(f"{'':22s} {'clear+read p50':>15s} {'p99':>7s} {'read p50':>9s} {'p99':>7s} "
          f"{'stale reads':>12s}")
    for label, both, plain, stale in rows:
        q = statistics.quantiles
        print(f"{label:22s} {statistics.median(both):12.2f} ms {q(both, n=100)[98]:7.2f} "
              f"{statistics.median(plain):6.2f} ms {q(plain, n=100)[98]:7.2f} "
              f"{stale:7d}/{n}")


if __name__ == "__main__":
    main()
