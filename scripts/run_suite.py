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

"""Run the test suite one module per process, each in a ROS domain of its own.

    python scripts/run_suite.py [--jobs N] [--module-timeout S] [TEST_FILE ...] [-- PYTEST_ARGS]

What `make test` runs (docs/DEVELOPING.md, "Tests"). As ament_cmake_ros'
``run_test_isolated.py`` and colcon's ctest do, every ``test_*.py`` runs in a
fresh pytest process with a ROS_DOMAIN_ID no other running module holds
(:mod:`suite_domains`), several at once; then the modules that hold a test
marked ``alone`` (it times a bound) run those tests one module at a time with
nothing else running, untraced (coverage.py's tracer would be timed; a
module marked ``untraced`` runs so too). A
module past ``--module-timeout`` gets the native and Python stacks of every
thread of every process it started printed (:mod:`suite_stacks`, py-spy), is
killed, and the run goes on; it fails at the end, named. Reported as one
run: a line per module, the failures' output, one junit file
(``build/test-results/junit.xml``), each module's reports
(``<module>.reports.jsonl``, which a pytest that handed its modules to this
runner replays: bsal_ros/test/suite_isolation.py) and one closing line
``N passed, N failed, N skipped``. Exit code 0 when every module passed, 1
when one failed, 5 when no test ran at all (pytest's own code for that).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite_domains import DomainPool  # noqa: E402, I100 - the scripts folder
from suite_outcome import Outcome, read_junit, wait_with_cpu  # noqa: E402
from suite_stacks import command_line, dump_process_tree, session_members  # noqa: E402

REPOSITORY = Path(__file__).resolve().parents[1]
#: modules known to take longest, started first on a machine with no record
#: of an earlier run (afterwards: the durations of the last run, RESULTS/durations.txt)
SLOW_FIRST = ("test_ros2_colcon.py", "test_rci_one_truth_rounds.py", "test_node_shutdown.py",
              "test_ros2_cli.py", "test_start_signals.py", "test_flake8.py",
              "test_gateway_params_cli.py",
              "test_ros2_launch.py", "test_pep257.py", "test_bench_rci.py",
              "test_fault_campaign.py", "test_wire_fuzz.py", "test_registry_removal.py",
              "test_copyright.py", "test_bringup.py")
#: a test that times a bound is marked with this and runs with nothing beside it
ALONE_MARK = "alone"
#: a module whose ``pytestmark`` holds this runs without coverage.py: it
#: repeats paths other modules measure (test_rci_one_truth_rounds.py)
UNTRACED_MARK = "untraced"
#: taken out of the environment of an alone test and of an untraced module:
#: coverage.py's tracer multiplies the CPU of the processes it measures (the
#: peer kills' RCI answers: p99 26 ms traced, 12 ms untraced, on 2 cores), so
#: a bound would time the tracer, and a thousand repetitions pay it for no line
TRACER_VARS = ("BSAL_COVERAGE_RCFILE", "COVERAGE_PROCESS_START")
#: how many lines of a failed module's output are printed (the whole log is kept)
FAILURE_LINES = 400


def selected_modules(test_dir: Path, names: list[str]) -> list[Path]:
    """Every ``test_*.py`` of ``test_dir``, or those ``names`` picks (a path or
    a file name, ``::test`` parts dropped: those go to pytest)."""
    every = sorted(test_dir.glob("test_*.py"))
    if not names:
        return every
    wanted = {Path(n.split("::")[0]).name for n in names}
    unknown = wanted - {m.name for m in every}
    if unknown:
        raise SystemExit(f"run_suite: no such test module in {test_dir}: "
                         f"{', '.join(sorted(unknown))}")
    return [m for m in every if m.name in wanted]


def alone_kind(module: Path) -> str:
    """How many of the module's tests are marked alone.

    "all": the module's ``pytestmark`` has the mark; "some": a test function
    or method is decorated with ``@pytest.mark.alone``; "": none.
    """
    text = module.read_text()
    if module_marked(text, ALONE_MARK):
        return "all"
    if re.search(rf"^( {{4}})?@pytest\.mark\.{ALONE_MARK}\b", text, re.MULTILINE):
        return "some"
    return ""


def module_marked(text: str, mark: str) -> bool:
    """True when a module's text sets a ``pytestmark`` that holds ``mark``: a
    single mark, or a list of them on one line or several."""
    return re.search(rf"^pytestmark\s*=\s*(\[[^\]]*|[^\n]*)\bpytest\.mark\.{mark}\b", text,
                     re.MULTILINE) is not None


def module_timeout(module: Path, default: float) -> float:
    """The module's time-out: ``default``, or the pytest time-out its
    ``pytestmark`` sets when that is longer (test_ros2_colcon.py builds a
    workspace and runs colcon test in it: longer than any other module)."""
    found = re.search(r"^pytestmark\s*=\s*(\[[^\]]*|[^\n]*)\bpytest\.mark\.timeout\((\d+)\)",
                      module.read_text(), re.MULTILINE)
    return max(default, float(found.group(2))) if found else default


def combined_marker(user: str | None, extra: str | None) -> list[str]:
    """pytest's ``-m`` for a phase: the user's expression and the phase's."""
    parts = [f"({p})" for p in (user, extra) if p]
    return ["-m", " and ".join(parts)] if parts else []


def split_marker(pytest_args: list[str]) -> tuple[list[str], str | None]:
    """``pytest_args`` without its ``-m EXPR``, and EXPR (None without one)."""
    rest, marker, i = [], None, 0
    while i < len(pytest_args):
        if pytest_args[i] == "-m" and i + 1 < len(pytest_args):
            marker = pytest_args[i + 1]
            i += 2
            continue
        rest.append(pytest_args[i])
        i += 1
    return rest, marker


class Suite:
    """One run: the modules, the domain pool, the outcomes."""

    def __init__(self, test_dir: Path, results: Path, pytest_args: list[str], jobs: int,
                 module_timeout: float, pool: DomainPool, out=sys.stdout,
                 picked: dict[str, list[str]] | None = None, repeat: int = 1):
        #: module file name -> the ``::test`` parts asked for (all tests: none)
        self.picked = picked or {}
        self.test_dir = test_dir
        self.results = results
        self.pytest_args, self.marker = split_marker(pytest_args)
        self.jobs = max(1, jobs)
        self.module_timeout = module_timeout
        self.pool = pool
        self.out = out
        self.outcomes: list[Outcome] = []
        #: each module runs this many times (a soak of flaky modules: --repeat 20 --jobs 1)
        self.repeat = max(1, repeat)
        self._lock = threading.Lock()
        self._done = 0
        self._total = 0
        self._running: set[subprocess.Popen] = set()
        self._stopping = False

    # ------------------------------------------------------------------ plan
    def order(self, modules: list[Path]) -> list[Path]:
        """Longest first: by the durations of earlier runs (RESULTS/durations.txt),
        SLOW_FIRST for a module with none recorded."""
        durations = self._durations()
        fallback = {name: 1e6 - i for i, name in enumerate(SLOW_FIRST)}
        return sorted(modules, key=lambda m: -durations.get(m.name, fallback.get(m.name, 0.0)))

    def _durations(self) -> dict[str, float]:
        durations = {}
        record = self.results / "durations.txt"
        if record.exists():
            for line in record.read_text().splitlines():
                name, _, secs = line.partition(" ")
                try:
                    durations[name] = float(secs)
                except ValueError:
                    pass
        return durations

    # ------------------------------------------------------------------- run
    def run(self, modules: list[Path]) -> int:
        """Both phases; returns the exit code."""
        started = time.monotonic()
        self.results.mkdir(parents=True, exist_ok=True)
        for old in [*self.results.glob("*.xml"), *self.results.glob("*.log"),
                    *self.results.glob("*.reports.jsonl")]:
            old.unlink()
        parallel, alone = [], []
        for round_ in range(1, self.repeat + 1):
            for module in self.order(modules):
                kind = alone_kind(module)
                if kind != "all":
                    parallel.append((module, "parallel", "not " + ALONE_MARK if kind else None,
                                     round_))
                if kind:
                    alone.append((module, "alone", ALONE_MARK, round_))
        self._total = len(parallel) + len(alone)
        self._say(f"{len(modules)} modules: {len(parallel)} in {self.jobs} parallel processes, "
                  f"then {len(alone)} alone; module timeout {self.module_timeout:g} s")
        try:
            self._run_parallel(parallel)
            for job in alone:
                self._run_one(*job)
        except KeyboardInterrupt:
            # Ctrl-C: the modules run in sessions of their own (no terminal
            # signal reaches them): end them, say so, exit as a signal would
            self._stopping = True
            for proc in list(self._running):
                self._kill(proc)
            self._say("interrupted: the running modules were killed")
            return 130
        self._record_durations()
        return self._report(time.monotonic() - started)

    def _run_parallel(self, jobs: list[tuple[Path, str, str | None, int]]) -> None:
        queue = list(jobs)

        def worker():
            while True:
                with self._lock:
                    if not queue or self._stopping:
                        return
                    job = queue.pop(0)
                self._run_one(*job)
        threads = [threading.Thread(target=worker, name=f"suite-{i}", daemon=True)
                   for i in range(min(self.jobs, len(queue)))]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():     # a join with a timeout lets Ctrl-C through
                t.join(0.5)

    def _run_one(self, module: Path, phase: str, marker: str | None, round_: int) -> Outcome:
        stem = (module.stem + ("" if phase == "parallel" else ".alone")
                + (f".{round_}" if self.repeat > 1 else ""))
        outcome = Outcome(module.name, phase, log=self.results / f"{stem}.log",
                          junit=self.results / f"{stem}.xml")
        with self.pool.domain() as domain:
            outcome.domain = domain
            env = {**os.environ, "ROS_DOMAIN_ID": str(domain),
                   "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
                   "BSAL_SUITE_MODULE": module.name, "PYTHONUNBUFFERED": "1",
                   # every test's report, for a pytest that handed its modules
                   # to this runner (bsal_ros/test/suite_isolation.py)
                   "BSAL_SUITE_REPORTS": str(self.results / f"{stem}.reports.jsonl")}
            if phase == "alone" or module_marked(module.read_text(), UNTRACED_MARK):
                env = {k: v for k, v in env.items() if k not in TRACER_VARS}
            targets = [f"{module}::{p}" for p in self.picked.get(module.name, [])] or [str(module)]
            cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                   *plugins_left_out(module), *targets,
                   f"--junitxml={outcome.junit}", "-o", "junit_family=xunit1",
                   *combined_marker(self.marker, marker), *self.pytest_args]
            began = time.monotonic()
            with open(outcome.log, "wb") as log:
                proc = subprocess.Popen(cmd, cwd=self.test_dir.parent, env=env, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
                self._running.add(proc)
                limit = module_timeout(module, self.module_timeout)
                try:
                    outcome.returncode, outcome.cpu_s = wait_with_cpu(proc, limit)
                except subprocess.TimeoutExpired:
                    outcome.timed_out = True
                    self._hung(proc, outcome, log, limit)
                except KeyboardInterrupt:
                    self._kill(proc)
                    raise
                finally:
                    self._running.discard(proc)
                self._end_leftovers(proc, outcome)
            outcome.seconds = time.monotonic() - began
        read_junit(outcome)
        with self._lock:
            self.outcomes.append(outcome)
            self._done += 1
            self._say(f"({self._done}/{self._total}) {module.name}"
                      f"{f' #{round_}' if self.repeat > 1 else ''}"
                      f"{' [alone]' if phase == 'alone' else ''}: {outcome.summary()} "
                      f"[domain {outcome.domain}]")
        return outcome

    def _hung(self, proc: subprocess.Popen, outcome: Outcome, log, limit: float) -> None:
        """Print every thread's stacks of the module's processes, then kill them."""
        stacks = dump_process_tree(proc.pid)
        banner = (f"\n[suite] {outcome.module}: still running after {limit:g} s: "
                  "the stacks of every thread of its processes, then SIGKILL\n")
        log.write((banner + stacks).encode(errors="replace"))
        log.flush()
        with self._lock:
            self.out.write(banner + stacks + "\n")
            self.out.flush()
        self._kill(proc)
        outcome.returncode = proc.wait()

    def _end_leftovers(self, proc: subprocess.Popen, outcome: Outcome) -> None:
        """Processes the module started and left running are killed (one line
        names them), so they cannot weigh on the modules after it."""
        left = [p for p in session_members(proc.pid) if p != proc.pid]
        if not left:
            return
        names = "; ".join(f"{p} {command_line(p)[:120]}" for p in left)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        with self._lock:
            self._say(f"{outcome.module}: left {len(left)} process(es) running, killed: {names}")

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        """SIGKILL a module's process group (its pytest and what it started)."""
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass

    # ---------------------------------------------------------------- report
    def _record_durations(self) -> None:
        """Keep each module's time (both phases) for the next run's order."""
        total = self._durations()
        ran: dict[str, float] = {}
        for o in self.outcomes:
            ran[o.module] = ran.get(o.module, 0.0) + o.seconds / self.repeat
        total.update(ran)
        lines = [f"{name} {secs:.1f}" for name, secs in sorted(total.items())]
        (self.results / "durations.txt").write_text("\n".join(lines) + "\n")

    def _report(self, seconds: float) -> int:
        failed = [o for o in self.outcomes if not o.ok]
        for o in sorted(failed, key=lambda o: o.module):
            self._say(f"==== {o.module} ({o.phase}) failed: {o.summary()}; log {o.log}")
            lines = o.log.read_text(errors="replace").splitlines() if o.log.exists() else []
            if len(lines) > FAILURE_LINES:
                self.out.write(f"... ({len(lines) - FAILURE_LINES} lines above: see the log)\n")
            self.out.write("\n".join(lines[-FAILURE_LINES:]) + "\n")
        self._merge_junit()
        passed = sum(o.passed for o in self.outcomes)
        skipped = sum(o.skipped for o in self.outcomes)
        # a module that failed without a failed test (a crash, a time-out, a
        # collection error) counts as one failure
        failures = sum(max(o.failed, 0 if o.ok else 1) for o in self.outcomes)
        for o in sorted(failed, key=lambda o: o.module):
            for name in o.failures or [f"{o.module} ({o.summary()})"]:
                self._say(f"FAILED {name}")
        cpu = sum(o.cpu_s for o in self.outcomes)
        self._say(f"{len(self.outcomes)} module runs in {seconds // 60:.0f} min "
                  f"{seconds % 60:.0f} s, {cpu / 60:.1f} min of CPU; "
                  f"junit: {self.results / 'junit.xml'}")
        self.out.write(f"{passed} passed, {failures} failed, {skipped} skipped\n")
        self.out.flush()
        if failures:
            return 1
        return 0 if passed else 5

    def _merge_junit(self) -> None:
        merged = ET.Element("testsuites")
        for o in sorted(self.outcomes, key=lambda o: (o.module, o.phase)):
            try:
                root = ET.parse(o.junit).getroot()
            except (ET.ParseError, FileNotFoundError, TypeError):
                suite = ET.SubElement(merged, "testsuite", name=o.module, tests="1",
                                      failures="0" if o.ok else "1")
                if not o.ok:
                    case = ET.SubElement(suite, "testcase", classname=o.module, name="module")
                    ET.SubElement(case, "failure", message=o.summary())
                continue
            merged.extend(root.iter("testsuite"))
        ET.ElementTree(merged).write(self.results / "junit.xml", encoding="utf-8",
                                     xml_declaration=True)

    def _say(self, line: str) -> None:
        self.out.write(f"[suite] {line}\n")
        self.out.flush()


def default_jobs() -> int:
    """One more than the cores: many modules mostly wait (DDS discovery,
    sockets, subprocesses). Two more was tried (cc16, 2026-11-28): the modules
    took 9 % more CPU (21.9 against 20.1 min), the suite 26 s longer, and a
    reader thread of test_rdi_server fell 1 s behind."""
    return (os.cpu_count() or 1) + 1


def plugins_left_out(module: Path) -> list[str]:
    """pytest options that leave out the plugins ``module`` does not use.

    Hypothesis's plugin imports all of hypothesis for its closing summary, in
    every pytest process: about 1 s of CPU per module that never uses it.
    """
    if "hypothesis" in module.read_text(encoding="utf-8"):
        return []
    return ["-p", "no:hypothesispytest"]


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str], list[str]]:
    """Our options, the module names, and the pytest arguments: those after
    ``--`` and any argument we do not know (``-k EXPR``, ``-q``, ``-x``)."""
    if "--" in argv:
        ours, theirs = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    else:
        ours, theirs = argv, []
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--jobs", "-j", type=int,
                    default=int(os.environ.get("BSAL_SUITE_JOBS", default_jobs())))
    ap.add_argument("--module-timeout", type=float,
                    default=float(os.environ.get("BSAL_SUITE_MODULE_TIMEOUT", 900)))
    ap.add_argument("--test-dir", type=Path, default=REPOSITORY / "bsal_ros" / "test")
    ap.add_argument("--results", type=Path, default=REPOSITORY / "build" / "test-results")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each module this many times (with --jobs 1: in a row, on its own)")
    ap.add_argument("--domains", default=os.environ.get("BSAL_SUITE_DOMAINS", "1-99"),
                    help="the ROS domains the modules take, one each at a time (default 1-99)")
    args, unknown = ap.parse_known_args(ours)
    modules = [a for a in unknown if re.fullmatch(r"(.*/)?test_\w+\.py(::.*)?", a)]
    return args, modules, [a for a in unknown if a not in modules] + theirs


def main(argv: list[str] | None = None) -> int:
    """Run the suite; returns the exit code."""
    args, modules, pytest_args = parse(sys.argv[1:] if argv is None else argv)
    # SIGTERM (a CI job cancelled, kill) ends the run as Ctrl-C does: the modules too
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    pool = DomainPool.from_range(args.domains)
    picked: dict[str, list[str]] = {}
    for name in modules:
        module, _, test = name.partition("::")
        if test:
            picked.setdefault(Path(module).name, []).append(test)
    suite = Suite(args.test_dir, args.results, pytest_args, args.jobs, args.module_timeout, pool,
                  picked=picked, repeat=args.repeat)
    return suite.run(selected_modules(args.test_dir, modules))


if __name__ == "__main__":
    raise SystemExit(main())
