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

"""scripts/coverage_unique.py: the lines that one test module alone reaches."""
from pathlib import Path
import sys

import coverage

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from coverage_unique import main, unique_lines  # noqa: E402, I100 - the scripts folder


def recorded(path=None):
    """Three modules' lines of two files, as `make test` records them."""
    data = coverage.CoverageData(basename=str(path) if path else None, no_disk=path is None)
    for context, lines in {"test_a.py": {"f.py": [1, 2], "g.py": [7]},
                           "test_b.py": {"f.py": [2, 3]},
                           "test_c.py": {"f.py": [1, 3], "g.py": [7]}}.items():
        data.set_context(context)
        data.add_lines(lines)
    if path:
        data.write()
    return data


def test_a_line_counts_for_a_module_only_when_no_other_reaches_it():
    only = unique_lines(recorded())
    assert not any(only.values())     # every line of f.py and g.py is reached twice
    data = recorded()
    data.set_context("test_d.py")
    data.add_lines({"g.py": [9]})
    assert dict(unique_lines(data)) == {"test_d.py": [("g.py", 9)]}


def test_the_report_names_every_module_and_its_count(tmp_path, capsys):
    data = recorded(tmp_path / ".coverage")
    data.set_context("test_d.py")
    data.add_lines({"g.py": [9, 10]})
    data.write()
    assert main([str(tmp_path / ".coverage")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["2", "test_d.py"]
    assert sorted(line.split()[1] for line in lines) == [
        "test_a.py", "test_b.py", "test_c.py", "test_d.py"]


def test_data_without_modules_is_refused(tmp_path, capsys):
    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    data.add_lines({"f.py": [1]})
    data.write()
    assert main([str(tmp_path / ".coverage")]) == 1
    assert "no line recorded with a test module" in capsys.readouterr().err
