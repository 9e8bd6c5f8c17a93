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

"""pytest plugin: one pytest over ROS test modules runs each in a process and
a ROS domain of its own, through `make test`'s runner, and reports every test.

ROS test modules must not share a process (docs/DEVELOPING.md, "Tests": the
DDS participants of earlier tests stay alive and Fast DDS deadlocks at a
participant's destruction), but ``colcon test`` runs ``python -m pytest`` once
in the package folder, and so does a plain ``pytest test/``. When the tests a
pytest process selected hold ``ros`` tests of more than one module, this
plugin runs none of them itself: it hands the selected tests, module by
module, to ``scripts/run_suite.py`` (the runner of `make test`: a fresh pytest
process per module, a ROS domain no other running module holds, the ``alone``
tests afterwards), and replays every test's report, as the module's process
sent it, into this process's hooks. So the terminal, the exit code and the
junit file colcon reads (``--junit-xml``) list each test with its outcome and
its failure's text, as if it had run here; a test whose module's process
ended before it reported (a crash, the module time-out) fails, naming the
module's log. One module, or only pure (not ``ros``) modules, run here as
usual: `make test-fast` and a runner's module process are never handed on.
``--one-process`` turns the plugin off.

The module's process side: the runner gives each module's pytest a file in
``BSAL_SUITE_REPORTS``; this plugin writes every report into it, one JSON line
each (pytest's own serialisation, the one pytest-xdist uses).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import re
import subprocess
import sys

import pytest

#: the runner's file of a module's reports (set by scripts/run_suite.py)
REPORTS_ENV = "BSAL_SUITE_REPORTS"
#: `make test`'s runner, relative to the repository around the package
RUNNER = Path("scripts", "run_suite.py")
#: the modules some of whose tests were left out (-k, -m) in this session
_deselected: set[Path] = set()
#: the runner's line for a module run that ended
ENDED = re.compile(r"\[suite\] \(\d+/\d+\) (test_\w+\.py)( #\d+)?( \[alone\])?: (.*)")


def pytest_addoption(parser):
    """``--one-process``: every selected test runs in this process."""
    parser.getgroup("bsal_ros").addoption(
        "--one-process", action="store_true",
        help="run the selected tests in this pytest process even when they hold ROS tests "
             "of several modules (by default each module then runs in a process and a ROS "
             "domain of its own, through scripts/run_suite.py)")


# ----------------------------------------------------------- a module's process
class ReportWriter:
    """Writes each report of this process, one JSON line, to the runner's file."""

    def __init__(self, config, path: str):
        self.config = config
        self.file = open(path, "w", encoding="utf-8")

    def write(self, report) -> None:
        """One report, serialised as pytest-xdist sends it."""
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        self.file.write(json.dumps(data, default=repr) + "\n")
        self.file.flush()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report):
        """Every phase of every test."""
        self.write(report)

    @pytest.hookimpl(trylast=True)
    def pytest_collectreport(self, report):
        """A module that could not be collected (an error line of its own)."""
        if report.failed:
            self.write(report)

    def pytest_unconfigure(self):
        """Close the file."""
        self.file.close()


def pytest_configure(config):
    """In a module's process of the runner: write its reports. Taken out of
    the environment so the pytest processes its tests start write none."""
    _deselected.clear()
    path = os.environ.pop(REPORTS_ENV, None)
    if path:
        config.pluginmanager.register(ReportWriter(config, path), "bsal_suite_reports")


# ------------------------------------------------------------ the handing process
def handed_on(session) -> dict[Path, list]:
    """Module -> its selected tests, when this process must hand them to the
    runner: they hold ``ros`` tests of more than one module; else {}."""
    config = session.config
    if config.option.collectonly or config.option.one_process or session.testsfailed:
        return {}
    ros_modules = {item.path for item in session.items if item.get_closest_marker("ros")}
    if len(ros_modules) < 2:
        return {}
    modules: dict[Path, list] = {}
    for item in session.items:
        modules.setdefault(item.path, []).append(item)
    return modules


def runner_arguments(modules: dict[Path, list], deselected: set[Path]) -> list[str]:
    """The runner's test arguments: a module whose every test is selected by
    its path, the others by their selected tests' node ids."""
    args = []
    for path, items in modules.items():
        if path in deselected:
            args += [f"{path}::{item.nodeid.split('::', 1)[1]}" for item in items]
        else:
            args.append(str(path))
    return args


class Replay:
    """Feeds the reports of the modules' processes into this process's hooks."""

    def __init__(self, session, modules: dict[Path, list], results: Path):
        self.session = session
        self.results = results
        self.items = {item.nodeid: item for items in modules.values() for item in items}
        self.finished: set[str] = set()
        self.replayed: set[Path] = set()
        #: module file name -> why its process failed (the runner's line)
        self.ended: dict[str, str] = {}

    def module_ended(self, module: str, alone: bool, summary: str) -> None:
        """A module run ended: replay its file."""
        self.ended[module] = summary
        stem = Path(module).stem + (".alone" if alone else "")
        self.replay(self.results / f"{stem}.reports.jsonl")

    def replay(self, path: Path) -> None:
        """Every report of one module run, in the order it was made."""
        if path in self.replayed or not path.exists():
            return
        self.replayed.add(path)
        hook = self.session.config.hook
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                report = hook.pytest_report_from_serializable(config=self.session.config,
                                                              data=json.loads(line))
            except ValueError:
                continue                # the last line of a process killed mid-write
            # JSON has no tuples: a skip's (file, line, reason) and a location are
            if isinstance(report.longrepr, list):
                report.longrepr = tuple(report.longrepr)
            if isinstance(getattr(report, "location", None), list):
                report.location = tuple(report.location)
            if isinstance(report, pytest.CollectReport):
                hook.pytest_collectreport(report=report)
            else:
                self.log(report)

    def log(self, report) -> None:
        """One phase of one test, with the start and finish hooks around it."""
        item = self.items.get(report.nodeid)
        ihook = item.ihook if item is not None else self.session.config.hook
        if report.when == "setup":
            ihook.pytest_runtest_logstart(nodeid=report.nodeid, location=report.location)
        ihook.pytest_runtest_logreport(report=report)
        if report.when == "teardown":
            ihook.pytest_runtest_logfinish(nodeid=report.nodeid, location=report.location)
            self.finished.add(report.nodeid)

    def unreported(self) -> None:
        """A test whose module's process ended before its teardown reported fails."""
        for path in sorted(self.results.glob("*.reports.jsonl")):
            self.replay(path)
        for nodeid, item in self.items.items():
            if nodeid in self.finished:
                continue
            module = item.path.name
            why = self.ended.get(module, "the runner did not run it")
            log = self.results / f"{item.path.stem}.log"
            report = pytest.TestReport(
                nodeid, item.location, {}, "failed",
                f"{module}: no result for this test: its module's process ended before it "
                f"reported ({why}); log: {log}", "call")
            self.log(pytest.TestReport(nodeid, item.location, {}, "passed", None, "setup"))
            self.log(report)
            self.log(pytest.TestReport(nodeid, item.location, {}, "passed", None, "teardown"))


def results_folder(config, repository: Path) -> Path:
    """Where the runner keeps the modules' logs and reports: beside the junit
    file asked for (colcon's ``build/<package>/``), else `make test`'s folder.
    Beside the junit file it is a dot folder: ``colcon test-result`` reads
    every ``.xml`` under ``build/`` but those, and would count each test three
    times (the module's file, the runner's merged one, colcon's)."""
    xml = config.option.xmlpath
    if xml:
        return Path(xml).absolute().parent / ".test-results"
    return repository / "build" / "test-results"


def pytest_deselected(items):
    """Remember the modules some of whose tests were left out (-k, -m)."""
    _deselected.update(item.path for item in items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """Hand the modules to the runner when they hold ROS tests of several."""
    modules = handed_on(session)
    if not modules:
        return None
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(line):
        if reporter is not None:
            reporter.write_line(line)
    # the folder the modules were collected from, as given (a workspace's
    # src/ may be a link): the runner's modules are the same files
    test_dirs = {path.parent for path in modules}
    repository = next(iter(test_dirs)).parents[1]
    runner = repository / RUNNER
    if len(test_dirs) > 1 or not runner.is_file():
        say(f"[isolation] {runner} not found (the package without its repository) or the "
            "modules are in several folders: the ROS test modules run in this one process")
        return None
    results = results_folder(session.config, repository)
    replay = Replay(session, modules, results)
    args = runner_arguments(modules, _deselected)
    say(f"[isolation] {len(modules)} modules hold ROS tests of several: each runs in a "
        f"process and a ROS domain of its own (scripts/run_suite.py; logs: {results})")
    # the modules' processes get the runner's arguments only: colcon's own
    # (--junit-xml, -o cache_dir) are for this process
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [sys.executable, str(runner), "--test-dir", str(next(iter(test_dirs))),
           "--results", str(results), *args]
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, bufsize=1) as proc:
        try:
            for line in proc.stdout:
                line = line.rstrip("\n")
                ended = ENDED.fullmatch(line)
                if ended:
                    say(line)
                    replay.module_ended(ended.group(1), bool(ended.group(3)), ended.group(4))
                elif line.startswith("[suite]") and "FAILED" not in line:
                    say(line)
        except KeyboardInterrupt:
            proc.wait(60)           # the runner got the Ctrl-C too: it ends the modules
            raise
    replay.unreported()
    say(f"[isolation] the runner exited {proc.returncode}")
    return True
