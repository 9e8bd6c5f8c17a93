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
"""Start coverage.py in a process of ``make test`` when it first imports bsal_ros.

``make test`` sets ``BSAL_COVERAGE_RCFILE`` (bsal_ros/.coveragerc); the venv's
``bsal_ros_coverage.pth`` (scripts/setup.sh) runs this file at the start of
every Python process that has it. coverage.py's own hook
(``COVERAGE_PROCESS_START``) measures from the interpreter's first line, so
every process the tests start (the ros2 CLI's, colcon's, launch's) pays the
tracer over all its Python, most of which never runs a line of bsal_ros.
Here measuring starts when ``bsal_ros`` is first imported, before any of its
lines runs; a process that never imports it pays one look per import.
"""
import os
import sys


def start_coverage() -> None:
    """Start coverage.py with the suite's configuration; saved at exit (or by
    bsal_ros.nodes.process_exit before an ``os._exit``)."""
    try:
        import coverage
    except ImportError:     # a venv without coverage.py: nothing to measure
        return
    if coverage.Coverage.current() is not None:    # measuring already
        return
    # coverage.py's own start-up call, given the configuration for this call
    # only: left in the environment, it would start the processes this one
    # starts from their first line
    os.environ["COVERAGE_PROCESS_START"] = os.environ["BSAL_COVERAGE_RCFILE"]
    try:
        coverage.process_startup()
    finally:
        os.environ.pop("COVERAGE_PROCESS_START", None)


class StartCoverageOnImport:
    """A meta path finder that finds nothing: on the first import of bsal_ros
    it starts coverage.py and steps out of ``sys.meta_path``."""

    def find_spec(self, name, path=None, target=None):
        """Start coverage.py if ``name`` is bsal_ros or one of its modules;
        always None (the import goes on to the real finders)."""
        if name == "bsal_ros" or name.startswith("bsal_ros."):
            if self in sys.meta_path:
                sys.meta_path.remove(self)
                start_coverage()
        return None


# a venv can list site-packages twice, which runs the .pth hook twice
if os.environ.get("BSAL_COVERAGE_RCFILE") and not any(
        type(f).__name__ == StartCoverageOnImport.__name__ for f in sys.meta_path):
    sys.meta_path.insert(0, StartCoverageOnImport())
