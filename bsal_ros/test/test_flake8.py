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

"""ament_flake8 on the package, its tests and launch files, bench/ and scripts/.

With the project's configuration (``.flake8``: ament's, plus declared deviations).
"""
import subprocess
import sys

import pytest

from linters import FLAKE8_CONFIG, importing, python_paths

# untraced: it runs no line of bsal_ros that another module does not (scripts/coverage_unique.py)
pytestmark = pytest.mark.untraced


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    with importing("ament_flake8"):   # it runs in a process of its own (below)
        from ament_flake8.main import main_with_errors  # noqa: F401
    # In a process of its own: flake8's worker pool forks, and a fork of this
    # process (threads of earlier tests still alive) can deadlock in the child:
    # a clean-clone run hung here until pytest-timeout's 300 s.
    # The errors are printed again after the marker: ament's own report ends
    # with the list of every file checked, which would bury them.
    code = ("import sys; from ament_flake8.main import main_with_errors; "
            "rc, errors = main_with_errors(argv=sys.argv[1:]); "
            "print(f'@@ {len(errors)} errors'); print(*errors, sep=chr(10)); sys.exit(rc)")
    run = subprocess.run([sys.executable, "-c", code, "--config", str(FLAKE8_CONFIG),
                          *python_paths()], capture_output=True, text=True, timeout=280)
    found = run.stdout.rpartition("@@ ")[2]
    assert run.returncode == 0, f"code style errors / warnings: {found[-6000:]}{run.stderr}"
    assert found.startswith("0 errors"), run.stdout[-3000:]
