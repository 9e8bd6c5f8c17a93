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

"""What the ament linter tests check, and the project's declared deviations.

One list of paths for test_flake8.py and test_pep257.py (bsal_ros's code,
its tests and launch files, bench/ and scripts/*.py), and for
test_copyright.py (the same plus legacy/ and bsal_interfaces/). Deviations
from ament's configuration are declared in ``.flake8`` (flake8) and here
(pep257) and explained in QUALITY_DECLARATION.md, section "Linters".
"""
import contextlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]   # the bsal_ros package folder
REPO = ROOT.parent

FLAKE8_CONFIG = ROOT / ".flake8"

# pydocstyle codes ament_pep257 checks that the project's docstring style does not follow
PEP257_DEVIATIONS = {
    "D205": "a summary may run over two lines (it ends at the first period)",
    "D400": "the same: the first line need not end with a period",
    "D415": "the same, for any punctuation",
    "D209": "closing quotes stay on the last line of text (compact docstrings)",
    "D213": "the summary starts on the first line, as in PEP 257's own examples",
    "D401": "summaries describe ('The ...', 'True when ...') rather than command",
    "D403": "a summary may start with a code identifier (statval, errno), spelt as in code",
}


def python_paths():
    """The Python files and folders flake8 and pep257 check."""
    return [str(p) for p in (ROOT / "bsal_ros", ROOT / "test", ROOT / "launch",
                             ROOT / "setup.py", REPO / "bench",
                             *sorted((REPO / "scripts").glob("*.py")))]


def copyright_paths():
    """What ament_copyright checks: the Python paths, the C++ library and the interfaces."""
    return python_paths() + [str(REPO / "legacy"), str(REPO / "bsal_interfaces")]


# Files ament_copyright leaves out (glob patterns): legacy/ build output, not
# sources; the book's listing, which scripts/book_listing.py extracts from the
# seed into legacy/build/, is its author's and is never stored in the repository.
COPYRIGHT_EXCLUDES = [str(REPO / "legacy" / "build" / "*")]


@contextlib.contextmanager
def importing(linter: str):
    """Around a test's import of ament linter ``linter`` (``ament_flake8``): an
    ImportError skips the test with the reason (a pip-only machine without
    ../shared/ros2-tools). The import itself stays in the test, where
    test_package_layout.py reads what the tests import."""
    try:
        yield
    except ImportError as exc:
        pytest.skip(f"{linter} is not importable ({exc}): a ROS install has it; on a "
                    "pip-only machine make setup installs it from ../shared/ros2-tools")
