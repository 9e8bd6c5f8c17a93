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

"""Run every benchmark under bench/ and write docs/BENCHMARKS.md.

    make bench                      # all of them
    make bench BENCH_ARGS=protocol  # only bench_protocol.py

Each bench/bench_*.py is a standalone script that prints its figures (each
next to a floor measured in the same run) as Markdown on stdout. This runner
only executes them one after another, so no two compete for the two cores,
and collects their output with the machine facts and the exact command.
"""
import datetime
import os
from pathlib import Path
import platform
import subprocess
import sys
import time

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "BENCHMARKS.md"


def machine_facts():
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{cpu}, {os.cpu_count()} cores, {mem_gib:.0f} GiB, "
            f"Python {platform.python_version()}, {platform.system()} {platform.release()}")


def main(argv):
    wanted = set(argv)
    scripts = sorted(p for p in (ROOT / "bench").glob("bench_*.py")
                     if not wanted or p.stem.removeprefix("bench_") in wanted)
    if not scripts:
        print("no benchmark matched", file=sys.stderr)
        return 2
    sections = []
    failures = 0
    for script in scripts:
        rel = script.relative_to(ROOT)
        print(f"[bench] {rel} ...", flush=True)
        started = time.monotonic()
        proc = subprocess.run([sys.executable, str(script)], cwd=ROOT,
                              capture_output=True, text=True, timeout=1800)
        took = time.monotonic() - started
        print(proc.stdout, flush=True)
        if proc.returncode != 0:
            failures += 1
            print(proc.stderr[-4000:], file=sys.stderr)
            body = (f"FAILED (exit {proc.returncode}); stderr tail:\n\n"
                    f"```\n{proc.stderr[-2000:]}\n```")
        else:
            body = proc.stdout.strip()
        sections.append(
            f"## {script.stem}\n\nCommand: `scripts/with_env.sh python {rel}` "
            f"({took:.0f} s)\n\n{body}\n")

    header = (
        "# Benchmarks\n\n"
        "Written by `make bench` (scripts/run_bench.py); do not edit by hand. Every figure\n"
        "stands next to a floor measured in the same run on the same machine, and the\n"
        "ratio is what to compare across machines. The suite has no timed assertions.\n"
        "Sections whose heading is not a script name are written by hand and kept\n"
        "by the runner (the analysis of the figures above them). The system tests\n"
        "with a pass/fail verdict (fault campaign, two-host rig, peer kills) are in\n"
        "bsal_ros/test/; bench_two_hosts and bench_peer_kills use their rig.\n\n"
        f"Machine: {machine_facts()}.  \n"
        f"Run: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '?')}, "
        "ROS_AUTOMATIC_DISCOVERY_RANGE="
        f"{os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE', '?')}.\n\n")
    if OUT.exists():
        # Kept from the old file: sections written by hand (headed by more
        # than a script's name: the analysis under a benchmark's figures) and,
        # in a partial run, the other scripts' sections. Sections of scripts
        # that no longer exist are dropped.
        existing = {p.stem for p in (ROOT / "bench").glob("bench_*.py")}
        ran = {p.stem for p in scripts}
        old = OUT.read_text().split("\n## ")
        keep = []
        for s in old[1:]:
            title = s.split("\n", 1)[0]
            by_hand = " " in title      # a script's section is headed by its bare name
            if by_hand or (wanted and title in existing and title not in ran):
                keep.append("## " + s.rstrip("\n") + "\n")
        sections = keep + sections
        sections.sort(key=lambda s: s.split("\n", 1)[0])
    OUT.write_text(header + "\n".join(sections))
    print(f"[bench] wrote {OUT.relative_to(ROOT)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
