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

"""A ROS user's workspace: plain `colcon build`, `colcon test`, `colcon test-result`.

The repository is cloned (here: linked) into ``<ws>/src/`` and colcon runs
with no flags, as on a ROS install: it must find both packages (they are
siblings, neither inside the other), build ``bsal_interfaces`` with rosidl and
``bsal_ros`` with setuptools, and ``colcon test`` must run this suite through
pytest (colcon picks pytest only when setup.py declares the ``test`` extra;
otherwise it falls back to unittest and finds nothing), with the results in
``colcon test-result``. The underlay is the venv's ROS wheels alone, so the
workspace's own ``bsal_interfaces`` is the one used. ``colcon test`` runs every
pure module and two ROS modules: its one pytest hands them to `make test`'s
runner, a process and a ROS domain per module (test/suite_isolation.py), and
``colcon test-result`` counts every test the runner ran.
"""
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent
#: ccache's log of the workspace's compiles (with_setup_ccache)
CCACHE_STATS = "ccache-stats.log"

#: the workspace's build and colcon test of the pure modules: 6-12 min on 2
#: busy cores; the runner gives the module this time-out too
#: (scripts/run_suite.py, module_timeout)
pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(1800)]
#: make setup's checkout, in its environment (scripts/with_env.sh): its install/
#: is the ament prefix; not so under a ROS user's colcon test
IN_MAKE_SETUP = (REPO / "install").resolve() in {
    Path(p).resolve() for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p}
#: the ROS modules colcon test runs beside the pure ones: short, each starts nodes
ROS_PAIR = ("test_ros_logging.py", "test_hardware_node_no_bus.py")


def pure_modules() -> list[str]:
    """Every test module of the suite none of whose tests is marked ``ros``."""
    return sorted(p.name for p in (ROOT / "test").glob("test_*.py")
                  if "pytest.mark.ros" not in p.read_text(encoding="utf-8"))


def colcon():
    exe = Path(sys.executable).with_name("colcon")
    assert os.access(exe, os.X_OK), "make setup installs colcon-common-extensions into the venv"
    return str(exe)


def underlay_env():
    """The environment of a shell that sourced only the ROS underlay (here the venv)."""
    venv = Path(sys.prefix)
    # nor make test's coverage variable: the workspace's copy is not measured
    # (.coveragerc omits it), and its tracer would only slow the build's Python
    env = {k: v for k, v in os.environ.items()
           if k not in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH", "COLCON_PREFIX_PATH",
                        "BSAL_COVERAGE_RCFILE", "COVERAGE_PROCESS_START")}
    env["AMENT_PREFIX_PATH"] = env["CMAKE_PREFIX_PATH"] = str(venv)
    env["PYTHONPATH"] = ""
    return env


def with_setup_ccache(env, ws: Path) -> dict:
    """``env`` with the compiler launched by ccache on the cache that `make
    setup` filled (scripts/setup.sh, step 3) when both are there: the same
    generated sources, flags and paths relative to ``build/`` give the same
    objects, so the workspace compiles nothing twice. What the test checks
    is unchanged: colcon's flags and the build are a plain user's."""
    cache = REPO / "build" / "ccache"
    if not (shutil.which("ccache") and cache.is_dir()):
        return env
    return {**env, "CCACHE_DIR": str(cache), "CCACHE_BASEDIR": str(ws / "build"),
            "CCACHE_STATSLOG": str(ws / CCACHE_STATS),
            "CMAKE_C_COMPILER_LAUNCHER": "ccache", "CMAKE_CXX_COMPILER_LAUNCHER": "ccache"}


def ccache_outcomes(ws: Path) -> dict:
    """How many compiles of the workspace's build were hits and misses of the
    cache (ccache's stats log: one ``# file`` line per compile, then its
    outcomes); empty without ccache."""
    log = ws / CCACHE_STATS
    if not log.is_file():
        return {}
    text = log.read_text()

    def count(pattern):
        return len(re.findall(pattern, text, re.M))
    return {"compiles": count(r"^# "), "hits": count(r"^(direct|preprocessed)_cache_hit$"),
            "misses": count(r"^cache_miss$")}


@pytest.mark.skipif(
    not IN_MAKE_SETUP,
    reason="a ROS user's colcon test: this run is itself the workspace's check; a nested "
           "workspace has no make setup compiler cache (its build of bsal_interfaces took "
           "over 13 min on 2 busy cores)")
def test_plain_colcon_build_test_and_test_result_in_a_workspace(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bsal_ros").symlink_to(REPO)
    env = underlay_env()
    build = subprocess.run([colcon(), "build"], cwd=tmp_path, env=with_setup_ccache(env, tmp_path),
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "2 packages finished" in build.stdout, build.stdout[-2000:]
    # with setup's cache, no object is compiled twice: a miss means the
    # workspace's flags or paths drifted from setup's (scripts/setup.sh, step 3)
    compiled = ccache_outcomes(tmp_path)
    print(f"ccache: {compiled or 'not used'}")
    assert not compiled or compiled["misses"] == 0, compiled
    install = tmp_path / "install"
    assert (install / "bsal_interfaces" / "share" / "bsal_interfaces" / "srv"
            / "SetMotors.srv").is_file()
    assert (install / "bsal_ros" / "share" / "ament_index" / "resource_index"
            / "packages" / "bsal_ros").is_file()
    assert (install / "bsal_ros" / "share" / "bsal_ros" / "launch" / "brak.launch.py").is_file()

    # colcon test as a user runs it, after sourcing the workspace, over every
    # pure module and two ROS modules (the whole suite is what `make test`
    # runs): pytest hands them to make test's runner (test/suite_isolation.py),
    # and colcon's junit file counts every test the runner ran, as the runner's does
    chosen = pure_modules() + list(ROS_PAIR)
    script = (f"source {install}/setup.bash && "
              f"{colcon()} test --event-handlers console_direct+ "
              f"--pytest-args {' '.join(f'test/{m}' for m in chosen)} && "
              f"{colcon()} test-result --all --verbose")
    test = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    out = test.stdout + test.stderr
    assert test.returncode == 0, out[-5000:]
    found = re.search(r"build/bsal_ros/pytest\.xml: (\d+) tests, 0 errors, 0 failures, "
                      r"(\d+) skipped", out)
    assert found, f"colcon test-result shows no pytest results of bsal_ros:\n{out[-3000:]}"
    tests, skipped = int(found.group(1)), int(found.group(2))
    collected = re.search(r"collected (\d+) items", out)
    assert collected and tests == int(collected.group(1)), out[-3000:]
    assert f"[isolation] {len(chosen)} modules hold ROS tests of several" in out, out[-3000:]
    assert f"[suite] {len(chosen)} modules:" in out, out[-3000:]
    # the runner's own junit file (make test's count) holds the same tests
    runner_junit = (tmp_path / "build" / "bsal_ros" / ".test-results" / "junit.xml").read_text()
    assert runner_junit.count("<testcase") == tests, (tests, runner_junit.count("<testcase"))
    assert runner_junit.count("<skipped") == skipped
    for module in ROS_PAIR:
        assert re.search(rf"\[suite\] \(\d+/\d+\) {module}: \d+ passed", out), out[-3000:]
    assert tests > 1500, tests


def test_setup_py_declares_pytest_as_the_test_extra():
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    # colcon's pytest step looks for the "test" extra (other extras may sit beside it)
    assert re.search(r"extras_require=\{[^}]*[\"']test[\"']: \[[\"']pytest[\"']\]", text)
    assert "tests_require=" not in text
