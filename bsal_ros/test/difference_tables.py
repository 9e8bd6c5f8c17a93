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

"""The "Where we differ from the book, and why" tables name their tests;
these helpers check that every named test exists, so a table cannot point at
a renamed or deleted test."""
from pathlib import Path
import re

ROOT = Path(__file__).resolve().parents[1]  # the bsal_ros package
REPO = ROOT.parent  # the repository: bsal_interfaces/, legacy/, docs/, bench/ beside it
HEADING_TAIL = "Where we differ from the book, and why"


def table_rows(markdown: Path) -> list[str]:
    """The body rows of the differences table in ``markdown``."""
    text = markdown.read_text(encoding="utf-8")
    heading = next(ln for ln in text.splitlines()
                   if ln.startswith("#") and ln.endswith(HEADING_TAIL))
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return [ln for ln in section.splitlines() if ln.startswith("| ") and "---" not in ln][1:]


def assert_named_tests_exist(markdown: Path, programs_allowed: bool = False) -> int:
    """Every `file.py::test_name` (or a bare `test_name` after one) in the
    table's last column is a test function of that file; returns the row
    count. With ``programs_allowed``, names of programs are passed over."""
    rows = table_rows(markdown)
    for row in rows:
        cell = row.rstrip(" |").rsplit("|", 1)[1]
        names = re.findall(r"`([\w.:-]+)`", cell)
        assert names, row
        current = None
        for name in names:
            if "::" in name:
                current, name = name.split("::")
            elif programs_allowed and (name.endswith(".py") or not name.startswith("test_")):
                continue                        # a program, not a test function
            assert current and name.startswith("test_"), row
            source = (ROOT / "test" / current).read_text(encoding="utf-8")
            assert re.search(rf"^def {name}\(", source, re.M), f"{current}::{name} ({row[:60]})"
    return len(rows)
