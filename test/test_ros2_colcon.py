"""The README's colcon path runs the real test suite.

colcon chooses pytest for an ament_python package only when the package
declares a pytest test dependency (setup.py's `extras_require={'test': ['pytest']}`;
setuptools ignores `tests_require`); otherwise `colcon test` falls back to
unittest and finds 0 tests. Here a scratch workspace laid out as the README
says (<ws>/src/bsal_ros is this repository) is built and `colcon test` is asked
to collect: it must find the suite (more than 300 tests), through pytest.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE_PATHS = ["src/bsal_ros", "src/bsal_ros/bsal_interfaces"]

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(300)]


def colcon():
    exe = Path(sys.executable).with_name("colcon")
    assert os.access(exe, os.X_OK), "make setup installs colcon-common-extensions into the venv"
    return str(exe)


def test_colcon_test_runs_the_pytest_suite(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bsal_ros").symlink_to(ROOT)
    # bsal_interfaces is already built into this checkout's install/ (on the paths):
    # building only bsal_ros keeps this test short.
    build = subprocess.run(
        [colcon(), "build", "--base-paths", *BASE_PATHS, "--packages-select", "bsal_ros"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert build.returncode == 0, build.stdout + build.stderr
    assert (tmp_path / "install" / "bsal_ros" / "share" / "ament_index" / "resource_index"
            / "packages" / "bsal_ros").is_file()
    assert (tmp_path / "install" / "bsal_ros" / "share" / "bsal_ros" / "launch"
            / "brak.launch.py").is_file()
    test = subprocess.run(
        [colcon(), "test", "--base-paths", *BASE_PATHS, "--packages-select", "bsal_ros",
         "--event-handlers", "console_direct+", "--pytest-args", "--collect-only", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240)
    out = test.stdout + test.stderr
    assert test.returncode == 0, out[-3000:]
    found = re.search(r"^(\d+) tests? collected", out, flags=re.M)
    assert found, f"pytest did not run (unittest fallback?):\n{out[-3000:]}"
    assert int(found.group(1)) > 300, out[-3000:]
    assert (tmp_path / "build" / "bsal_ros" / "pytest.xml").is_file()


def test_setup_py_declares_pytest_as_the_test_extra():
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert re.search(r"extras_require=\{'test': \['pytest'\]\}", text)
    assert "tests_require=" not in text
