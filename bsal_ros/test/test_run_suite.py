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

"""The suite runner of `make test` (scripts/run_suite.py) on test trees of its own.

Each case writes a small test tree into a temporary folder and runs the
runner on it as `make test` does, in a process of its own: the closing line
and the exit code, a module per process with a domain of its own, the
``alone`` tests after the others with nothing beside them, a hung module's
stacks printed and the run going on, and the leak check (test/leak_check.py)
failing the test that leaves an rclpy context alive.
"""

import os
from pathlib import Path
import re
import subprocess
import sys
import textwrap

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
RUNNER = REPOSITORY / "scripts" / "run_suite.py"
TEST_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(REPOSITORY / "scripts"))

from suite_domains import DomainPool  # noqa: E402, I100 - the scripts folder

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TEST_DIR)!r})
pytest_plugins = ("leak_check",)
"""


def tree(tmp_path: Path, modules: dict[str, str]) -> Path:
    """A test tree ``tmp_path/t/test`` with our leak check and ``modules``."""
    test_dir = tmp_path / "t" / "test"
    test_dir.mkdir(parents=True)
    (test_dir / "conftest.py").write_text(CONFTEST)
    (tmp_path / "t" / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    alone: runs alone\n    untraced: runs untraced\n")
    for name, text in modules.items():
        (test_dir / name).write_text(textwrap.dedent(text))
    return test_dir


def run_suite(test_dir: Path, *args: str, timeout: float = 120,
              coverage_rcfile: str | None = None) -> subprocess.CompletedProcess:
    """The runner on ``test_dir``, its modules in domains 90-99 (held through
    the machine's lock folder, as the suite's own modules are)."""
    env = dict(os.environ)
    env.pop("BSAL_COVERAGE_RCFILE", None)     # the toy trees measure nothing of ours
    if coverage_rcfile is not None:           # as make test sets it
        env["BSAL_COVERAGE_RCFILE"] = coverage_rcfile
    return subprocess.run([sys.executable, str(RUNNER), "--test-dir", str(test_dir),
                           "--results", str(test_dir.parent / "results"), "--domains", "90-99",
                           *args, "--", "-q"],
                          env=env, capture_output=True, text=True, timeout=timeout)


def closing_line(out: str) -> str:
    """The runner's last "N passed, N failed, N skipped" line."""
    pattern = r"\d+ passed, \d+ failed, \d+ skipped"
    lines = [line for line in out.splitlines() if re.fullmatch(pattern, line)]
    assert lines, out
    return lines[-1]


def test_one_process_and_one_domain_per_module_and_one_closing_line(tmp_path):
    """Three modules: each in a process and a domain of its own; a failure, a
    skip and the passes counted in one line and one junit file; exit 1."""
    body = textwrap.dedent("""
        import os
        import pytest

        def test_where():
            print("PID", os.getpid(), "DOMAIN", os.environ["ROS_DOMAIN_ID"], flush=True)
            assert os.environ["BSAL_SUITE_MODULE"] == os.path.basename(__file__)
    """)
    test_dir = tree(tmp_path, {
        "test_a.py": body,
        "test_b.py": body + "\n\ndef test_skipped():\n    pytest.skip('why')\n",
        "test_c.py": body + "\n\ndef test_fails():\n    assert 1 == 2\n",
    })
    done = run_suite(test_dir, "--jobs", "2", "-s")
    assert done.returncode == 1, done.stdout + done.stderr
    assert closing_line(done.stdout) == "3 passed, 1 failed, 1 skipped"
    assert "FAILED test.test_c::test_fails" in done.stdout or "FAILED test_c" in done.stdout
    logs = {p.stem: p.read_text() for p in (test_dir.parent / "results").glob("test_*.log")}
    seen = {name: re.search(r"PID (\d+) DOMAIN (\d+)", text).groups()
            for name, text in logs.items()}
    assert len({pid for pid, _ in seen.values()}) == 3, seen
    assert all(90 <= int(domain) <= 99 for _, domain in seen.values()), seen
    junit = (test_dir.parent / "results" / "junit.xml").read_text()
    assert junit.count("<testcase") == 5 and "test_fails" in junit


def test_hypothesis_plugin_only_where_a_module_uses_hypothesis(tmp_path):
    """Its plugin imports all of hypothesis in every pytest process (about 1 s
    of CPU): left out of the modules that never name it."""
    body = textwrap.dedent("""
        def test_plugins(request):
            # the name in two parts: this module must not name it to the runner
            loaded = request.config.pluginmanager.has_plugin("hypo" + "thesispytest")
            print("HYPOTHESIS PLUGIN", loaded, flush=True)
    """)
    test_dir = tree(tmp_path, {"test_plain.py": body,
                               "test_prop.py": "import hypothesis  # noqa: F401\n" + body})
    done = run_suite(test_dir, "--jobs", "2", "-s")
    assert done.returncode == 0, done.stdout + done.stderr
    results = test_dir.parent / "results"
    assert "HYPOTHESIS PLUGIN False" in (results / "test_plain.log").read_text()
    assert "HYPOTHESIS PLUGIN True" in (results / "test_prop.log").read_text()


def test_repeat_runs_a_module_again_in_a_fresh_process(tmp_path):
    """``--repeat 3 --jobs 1``: three runs of the module, one after the other,
    each in a process of its own (the soak of a module that once failed)."""
    pids = tmp_path / "pids"
    test_dir = tree(tmp_path, {"test_once.py": f"""
        import os

        def test_once():
            with open({str(pids)!r}, "a") as f:
                f.write(f"{{os.getpid()}}\\n")
    """})
    done = run_suite(test_dir, "--repeat", "3", "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert closing_line(done.stdout) == "3 passed, 0 failed, 0 skipped"
    assert len(set(pids.read_text().split())) == 3
    assert re.search(r"test_once\.py #3: 1 passed", done.stdout), done.stdout


def test_a_process_a_module_left_running_is_killed_and_named(tmp_path):
    """A test that starts a process and never ends it: once its module is
    done the runner kills the process and names it."""
    pid_file = tmp_path / "pid"
    test_dir = tree(tmp_path, {"test_leaves.py": f"""
        import subprocess

        def test_starts_and_forgets():
            child = subprocess.Popen(["sleep", "300"])
            open({str(pid_file)!r}, "w").write(str(child.pid))
    """})
    done = run_suite(test_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    pid = int(pid_file.read_text())
    assert re.search(rf"test_leaves\.py: left 1 process\(es\) running, killed: {pid} sleep 300",
                     done.stdout), done.stdout
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z"), state      # a zombie is dead, waiting for its reaper


def test_no_test_at_all_is_exit_5(tmp_path):
    """A tree whose modules hold no test ends with pytest's code 5, not 0."""
    test_dir = tree(tmp_path, {"test_empty.py": "X = 1\n"})
    done = run_suite(test_dir)
    assert done.returncode == 5, done.stdout
    assert closing_line(done.stdout) == "0 passed, 0 failed, 0 skipped"


def test_alone_tests_run_after_the_others_with_nothing_beside_them(tmp_path):
    """A test marked ``alone`` starts once every other module has ended, and
    runs untraced, as a module marked ``untraced`` does: coverage's variable
    reaches the other tests, not them."""
    stamp = tmp_path / "stamps"
    stamp.mkdir()
    busy = f"""
        import pathlib, time

        def test_busy():
            d = pathlib.Path({str(stamp)!r})
            (d / (__name__ + ".start")).write_text(str(time.monotonic()))
            time.sleep(1.0)
            (d / (__name__ + ".end")).write_text(str(time.monotonic()))
    """
    alone = f"""
        import os, pathlib, time
        import pytest

        def traced(name):
            (pathlib.Path({str(stamp)!r}) / name).write_text(
                os.environ.get("BSAL_COVERAGE_RCFILE", "untraced"))

        def test_in_parallel():
            traced("parallel.tracer")

        @pytest.mark.alone
        def test_timed():
            (pathlib.Path({str(stamp)!r}) / "alone.start").write_text(str(time.monotonic()))
            traced("alone.tracer")
    """
    repeats = f"""
        import os, pathlib
        import pytest

        pytestmark = [pytest.mark.filterwarnings("ignore"),
                      pytest.mark.untraced]

        def test_repeats():
            (pathlib.Path({str(stamp)!r}) / "untraced.tracer").write_text(
                os.environ.get("BSAL_COVERAGE_RCFILE", "untraced"))
    """
    # the alone module sorts first: without the phases it would start first
    test_dir = tree(tmp_path, {"test_0_alone.py": alone, "test_x.py": busy, "test_y.py": busy,
                               "test_z_untraced.py": repeats})
    # a path no import reads: the toy modules never import bsal_ros
    done = run_suite(test_dir, "--jobs", "3", coverage_rcfile="toy.coveragerc")
    assert done.returncode == 0, done.stdout + done.stderr
    assert closing_line(done.stdout) == "5 passed, 0 failed, 0 skipped"
    ends = [float((stamp / f"test_{m}.end").read_text()) for m in "xy"]
    assert float((stamp / "alone.start").read_text()) > max(ends)
    assert (stamp / "parallel.tracer").read_text() == "toy.coveragerc"
    assert (stamp / "alone.tracer").read_text() == "untraced"
    assert (stamp / "untraced.tracer").read_text() == "untraced"
    assert re.search(r"test_0_alone\.py \[alone\]: 1 passed", done.stdout), done.stdout


def test_a_hung_module_prints_its_threads_native_stacks_and_the_run_goes_on(tmp_path):
    """A module past the time limit: its stacks (C frames too) are printed, it
    is killed, the next module still runs, and the run fails naming it."""
    probe = subprocess.run([str(Path(sys.executable).with_name("py-spy")), "--version"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("py-spy is not installed in this interpreter's folder (make setup installs it)")
    test_dir = tree(tmp_path, {
        "test_hangs.py": """
            import threading

            def test_waits_for_ever():
                threading.Event().wait()
        """,
        "test_then.py": "def test_runs():\n    pass\n",
    })
    done = run_suite(test_dir, "--jobs", "1", "--module-timeout", "10")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "test_hangs.py: still running after 10 s" in out, out
    # py-spy's dump of the pytest process: the Python frame and a native one
    assert re.search(r"test_waits_for_ever \(.*test_hangs\.py:\d+\)", out), out
    assert re.search(r"\((libc|libpthread|libpython)[^)]*\)", out), out
    assert re.search(r"test_then\.py: 1 passed", out), out
    assert "FAILED test_hangs.py" in out and "TIMED OUT" in out
    assert closing_line(out) == "1 passed, 1 failed, 0 skipped"


def test_a_module_whose_pytestmark_sets_a_longer_timeout_gets_it(tmp_path):
    """``pytestmark = pytest.mark.timeout(N)`` longer than the module time-out:
    the module may run that long (test_ros2_colcon.py builds a workspace)."""
    test_dir = tree(tmp_path, {
        "test_long.py": """
            import time
            import pytest

            pytestmark = [pytest.mark.timeout(120)]

            def test_takes_its_time():
                time.sleep(3)
        """,
    })
    done = run_suite(test_dir, "--jobs", "1", "--module-timeout", "1")
    out = done.stdout
    assert done.returncode == 0 and "still running" not in out, out + done.stderr
    assert closing_line(out) == "1 passed, 0 failed, 0 skipped"


def test_a_test_that_leaks_an_rclpy_context_fails_naming_it(tmp_path):
    """The leak check: a test and a module fixture that leave a context
    alive are errors at their teardown, named; a clean test passes."""
    pytest.importorskip("rclpy", reason="rclpy: run through make test (the project venv)")
    test_dir = tree(tmp_path, {"test_leaks.py": """
        import pytest
        import rclpy
        import rclpy.context

        @pytest.fixture(scope="module")
        def kept():
            context = rclpy.context.Context()
            rclpy.init(context=context)
            yield context                       # never shut down

        def test_clean():
            context = rclpy.context.Context()
            rclpy.init(context=context)
            rclpy.shutdown(context=context)

        def test_leaky():
            context = rclpy.context.Context()
            rclpy.init(context=context)
            node = rclpy.create_node("left_behind", context=context)
            test_leaky.node = node

        def test_uses_the_module_fixture(kept):
            assert kept.ok()
    """})
    done = run_suite(test_dir, timeout=180)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    log = (test_dir.parent / "results" / "test_leaks.log").read_text()
    assert re.search(r"test_leaks\.py::test_leaky left 1 rclpy context\(s\) alive", log), log
    assert "made by the test at test_leaks.py:" in log and "/left_behind" in log, log
    assert re.search(r"test_uses_the_module_fixture left 1 rclpy context.*\n.*"
                     r"made by a module-scoped fixture at test_leaks\.py:\d+ in kept", log), log
    assert "test_clean left" not in log
    # a test whose teardown failed is a failed test (pytest: "3 passed, 2 errors")
    assert closing_line(out) == "1 passed, 2 failed, 0 skipped", out


def test_two_runs_never_hold_one_domain(tmp_path):
    """Two pools on one lock folder (two runs on one machine) hand out
    different domains while held, and a freed domain rests (round robin)."""
    a = DomainPool.from_range("5-7", folder=tmp_path)
    b = DomainPool.from_range("5-7", folder=tmp_path)
    with a.domain() as d1, b.domain() as d2, a.domain() as d3:
        assert len({d1, d2, d3}) == 3
        assert b.try_take() is None
    with a.domain() as d4:
        pass
    with a.domain() as d5:
        assert d5 != d4     # the next one round, not the one just freed
    with pytest.raises(ValueError):
        DomainPool.from_range("100-240", folder=tmp_path)
