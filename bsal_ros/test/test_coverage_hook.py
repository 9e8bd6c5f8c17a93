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

"""make test's coverage counts the executables the tests start, up to their end.

The executables end with ``os._exit`` after a clean stop (runtime.run), which
skips coverage.py's own save at exit: :mod:`bsal_ros.nodes.process_exit` saves
first. Checked here with a private coverage configuration (its own data
folder), the way ``make test`` starts coverage in a process: the environment
variable BSAL_COVERAGE_RCFILE and the .pth hook scripts/setup.sh installs,
which starts coverage.py at a process's first import of bsal_ros
(scripts/coverage_hook.py).
"""
import signal
import subprocess
import sys

import coverage
import pytest

from test_node_shutdown import Proc, READY

pytestmark = [pytest.mark.timeout(180)]


@pytest.fixture
def private_coverage(tmp_path, monkeypatch):
    """A coverage configuration of this test alone, given to the processes it starts."""
    rc = tmp_path / "coveragerc"
    data = tmp_path / "data"
    data.mkdir()
    rc.write_text("[run]\nbranch = True\nparallel = True\nconcurrency = thread\n"
                  f"source_pkgs = bsal_ros\ndata_file = {data}/.coverage\n"
                  "disable_warnings = module-not-imported, no-data-collected\n",
                  encoding="utf-8")
    monkeypatch.setenv("BSAL_COVERAGE_RCFILE", str(rc))
    monkeypatch.delenv("COVERAGE_PROCESS_START", raising=False)

    def measured():
        """{module file name: executed line numbers} of every process so far.

        Read with CoverageData, file by file: a second ``coverage.Coverage`` in
        this process (to combine) stops make test's own measurement of it from
        being saved at exit (seen with coverage 7.17).
        """
        executed = {}
        for path in data.glob(".coverage.*"):
            got = coverage.CoverageData(str(path))
            got.read()
            for f in got.measured_files():
                executed.setdefault(f.rsplit("/", 1)[-1], set()).update(got.lines(f) or ())
        return executed
    return measured


def lines_of(module, text):
    """The line numbers of ``module``'s source lines that contain ``text``."""
    source = open(module.__file__, encoding="utf-8").read().splitlines()
    return {n for n, line in enumerate(source, 1) if text in line}


MEASURING = ("import sys; c = sys.modules.get('coverage'); "
             "print(bool(c and c.Coverage.current()))")


def test_a_process_is_measured_from_its_first_import_of_bsal_ros(private_coverage):
    """Not before: a process that never imports bsal_ros (the ros2 CLI,
    colcon) runs without coverage.py; one that does is measured from its
    package's first line, and does not hand coverage.py's own start-up
    variable to the processes it starts."""
    def run(code):
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, check=True).stdout.split()
    assert run(f"import json; {MEASURING}") == ["False"]
    assert private_coverage() == {}
    assert run(f"import bsal_ros.core.result, os; {MEASURING}; "
               "print(os.environ.get('COVERAGE_PROCESS_START'))") == ["True", "None"]
    from bsal_ros.core import result
    assert lines_of(result, "OK = 0") <= private_coverage().get("result.py", set())


def test_hard_exit_saves_the_coverage_data_first(private_coverage):
    from bsal_ros.nodes import process_exit
    run = subprocess.run([sys.executable, "-c", "from bsal_ros.nodes import process_exit; "
                          "process_exit.hard_exit(3)"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 3, run.stdout + run.stderr
    executed = private_coverage().get("process_exit.py", set())
    assert lines_of(process_exit, "cov.stop()") <= executed, sorted(executed)


@pytest.mark.ros
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_node_stopped_by_a_signal_is_measured_to_its_end(sig, private_coverage, tmp_path):
    from bsal_ros.nodes import runtime
    p = Proc("hardware_node", tmp_path)
    try:
        p.wait_for(READY["hardware_node"])
        rc, _ = p.signal_and_wait(sig, timeout=60.0)
    finally:
        p.kill()
    assert rc == 0, p.text()
    executed = private_coverage().get("runtime.py", set())
    assert lines_of(runtime, "process_exit.hard_exit(code)") <= executed, p.text()
