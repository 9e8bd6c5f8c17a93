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

"""One pytest over ROS modules hands them to `make test`'s runner (test/suite_isolation.py,
issue 53), on test trees of its own.

Each case writes a small test tree (``ros``-marked modules that record their
process and ROS domain) into a temporary folder, beside a link to the
repository's ``scripts/``, and runs pytest on it as ``colcon test`` does:
``python -m pytest`` in the package folder, colcon's arguments in
``PYTEST_ADDOPTS``. The junit file colcon reads lists every test with its
outcome and text; each module ran in a process and a domain of its own; a
module whose process died fails its tests that did not report; one ROS module,
``--one-process`` or ``--collect-only`` run in the process itself.
"""

import json
import os
from pathlib import Path
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

REPOSITORY = Path(__file__).resolve().parents[2]
TEST_DIR = Path(__file__).resolve().parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TEST_DIR)!r})
pytest_plugins = ("suite_isolation",)
"""

#: a test that records where it ran: its process and its ROS domain
WHERE = """
import json, os
from pathlib import Path
import pytest

pytestmark = pytest.mark.ros


def where(name):
    Path(os.environ["WHERE_DIR"], name).write_text(json.dumps(
        {"pid": os.getpid(), "domain": os.environ.get("ROS_DOMAIN_ID"),
         "addopts": os.environ.get("PYTEST_ADDOPTS")}))
"""

MODULES = {
    "test_a.py": WHERE + """
def test_here():
    where("a")

def test_fails():
    assert 1 + 1 == 3, "one and one"

def test_skipped():
    pytest.skip("not on this robot")
""",
    "test_b.py": WHERE + """
def test_here():
    where("b")
""",
    "test_c.py": WHERE + """
def test_first():
    where("c")

def test_dies():
    os._exit(3)

def test_after():
    pass
""",
    "test_pure.py": """
import json, os
from pathlib import Path

def test_here():
    Path(os.environ["WHERE_DIR"], "pure").write_text(json.dumps({"pid": os.getpid()}))
""",
}


def tree(tmp_path: Path, modules: dict[str, str]) -> Path:
    """A package folder ``tmp_path/pkg`` with ``test/`` holding ``modules``,
    and ``tmp_path/scripts`` linked to the repository's."""
    pkg = tmp_path / "pkg"
    (pkg / "test").mkdir(parents=True)
    (pkg / "test" / "conftest.py").write_text(CONFTEST)
    (pkg / "setup.cfg").write_text(
        "[tool:pytest]\ntestpaths = test\nmarkers =\n    ros: starts nodes\n"
        "    alone: runs alone\n    untraced: runs untraced\n")
    for name, text in modules.items():
        (pkg / "test" / name).write_text(textwrap.dedent(text))
    (tmp_path / "scripts").symlink_to(REPOSITORY / "scripts")
    (tmp_path / "where").mkdir()
    return pkg


def colcon_pytest(pkg: Path, *args: str) -> tuple[subprocess.CompletedProcess, int]:
    """``python -m pytest ARGS`` in ``pkg`` with colcon's arguments in
    PYTEST_ADDOPTS, the modules in domains 90-99; returns it and its PID."""
    build = pkg.parent / "build"
    env = {**os.environ, "WHERE_DIR": str(pkg.parent / "where"), "BSAL_SUITE_DOMAINS": "90-99",
           "PYTEST_ADDOPTS": f"--tb=short --junit-xml={build}/pytest.xml --junit-prefix=pkg "
                             f"-o cache_dir={build}/.pytest_cache"}
    env.pop("BSAL_COVERAGE_RCFILE", None)     # the toy trees measure nothing of ours
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=pkg, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(timeout=240)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, ""), proc.pid


def junit_cases(pkg: Path) -> dict[str, tuple[str, str]]:
    """classname::name -> (outcome, text) of every testcase in colcon's junit file."""
    root = ET.parse(pkg.parent / "build" / "pytest.xml").getroot()
    cases = {}
    for case in root.iter("testcase"):
        outcome, text = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome, text = tag, (found.get("message") or "") + (found.text or "")
                break
        cases[f"{case.get('classname')}::{case.get('name')}"] = (outcome, text)
    return cases


def where(pkg: Path) -> dict[str, dict]:
    """What each recording test wrote: module -> pid, domain, PYTEST_ADDOPTS."""
    return {p.name: json.loads(p.read_text()) for p in (pkg.parent / "where").iterdir()}


def test_every_test_is_reported_from_a_process_and_a_domain_per_module(tmp_path):
    pkg = tree(tmp_path, MODULES)
    done, pid = colcon_pytest(pkg)
    out = done.stdout
    assert done.returncode == 1, out
    assert "[isolation] 4 modules hold ROS tests of several" in out, out
    assert "3 failed, 4 passed, 1 skipped" in out, out
    cases = junit_cases(pkg)
    assert len(cases) == 8, cases
    assert cases["pkg.test.test_a::test_here"] == ("passed", "")
    outcome, text = cases["pkg.test.test_a::test_fails"]
    assert outcome == "failure" and "one and one" in text and "test_a.py:" in text, text
    outcome, text = cases["pkg.test.test_a::test_skipped"]
    assert outcome == "skipped" and "not on this robot" in text, text
    # the module's process died in test_dies: it and the test after it fail, naming the log
    for name in ("test_dies", "test_after"):
        outcome, text = cases[f"pkg.test.test_c::{name}"]
        assert outcome == "failure" and "test_c.py: no result for this test" in text, text
        assert "test_c.log" in text, text
    assert cases["pkg.test.test_c::test_first"] == ("passed", "")
    ran = where(pkg)
    assert len({r["pid"] for r in ran.values()} | {pid}) == 5, ran
    assert all(90 <= int(ran[m]["domain"]) <= 99 for m in ("a", "b", "c")), ran
    # colcon's arguments are for the handing pytest: no module wrote colcon's junit file
    assert all(r.get("addopts") is None for r in ran.values()), ran


def test_a_selection_runs_only_the_tests_selected(tmp_path):
    pkg = tree(tmp_path, MODULES)
    done, pid = colcon_pytest(pkg, "-k", "here or skipped or first")
    assert done.returncode == 0, done.stdout
    assert "4 passed, 1 skipped, 3 deselected" in done.stdout, done.stdout
    cases = junit_cases(pkg)
    assert sorted(cases) == ["pkg.test.test_a::test_here", "pkg.test.test_a::test_skipped",
                             "pkg.test.test_b::test_here", "pkg.test.test_c::test_first",
                             "pkg.test.test_pure::test_here"], cases
    assert pid not in {r["pid"] for r in where(pkg).values()}


def test_one_ros_module_runs_in_the_process_itself(tmp_path):
    pkg = tree(tmp_path, {name: MODULES[name] for name in ("test_b.py", "test_pure.py")})
    done, pid = colcon_pytest(pkg)
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout
    assert "[isolation]" not in done.stdout
    assert {r["pid"] for r in where(pkg).values()} == {pid}


def test_one_process_keeps_every_module_in_the_process(tmp_path):
    pkg = tree(tmp_path, {name: MODULES[name] for name in ("test_a.py", "test_b.py")})
    done, pid = colcon_pytest(pkg, "--one-process")
    assert done.returncode == 1 and "1 failed, 2 passed, 1 skipped" in done.stdout, done.stdout
    assert {r["pid"] for r in where(pkg).values()} == {pid}


def test_collect_only_hands_nothing_on(tmp_path):
    pkg = tree(tmp_path, MODULES)
    done, _ = colcon_pytest(pkg, "--collect-only", "-q")
    assert done.returncode == 0 and "8 tests collected" in done.stdout, done.stdout
    assert not list((tmp_path / "where").iterdir()) and "[isolation]" not in done.stdout
