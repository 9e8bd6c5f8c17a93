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

"""The repository is what a ROS user expects: two packages colcon can find."""
import ast
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/, bench/ beside the packages


# Import name -> rosdep key, where they differ (ROS packages import under their own name).
ROSDEP_KEYS = {"PIL": "python3-pil", "tkinter": "python3-tk", "yaml": "python3-yaml",
               "smbus2": "python3-smbus2", "psutil": "python3-psutil",
               "pytest": "python3-pytest", "hypothesis": "python3-hypothesis",
               "tf2_ros": "tf2_ros_py", "setuptools": "python3-setuptools",
               "coverage": "python3-coverage"}
# Needed but not imported: why.
NOT_IMPORTED_EXEC = {"robot_state_publisher": "started by launch/brak.launch.py by default"}
NOT_IMPORTED_TEST = {"python3-pytest-timeout": "the pytest plugin setup.cfg configures (timeout)",
                     "libglib-dev": "legacy/ (conftest.build_legacy)",
                     "pkg-config": "legacy/ (conftest.build_legacy)",
                     "xvfb": "the viewer's window test (test_rdi_viewer.py)",
                     "iproute2": "ip and tc: test_two_hosts.py makes network namespaces",
                     "tshark": "test/test_wireshark.py runs it on the dissector"}
# Debian splits these out of the standard library.
#: imported by tests, with no rosdep key (no Debian package): make setup installs it from
#: PyPI (requirements/project.txt) and its tests skip without it, in a ROS user's workspace
PYPI_ONLY_TEST = {"irsim": "test_irsim_base.py, test_irsim_demo.py, bench_ros_base.py",
                  "mcap": "test_brak_record.py reads MCAP files back (mcap)",
                  "mcap_ros2": "test_brak_record.py decodes them (mcap-ros2-support)",
                  "playwright": "test_page_browser.py drives Debian's chromium with it "
                                "(test/page_browser.py)"}
#: imported by the package, with no rosdep key a ROS build farm can take (only a pip key
#: exists, and a pip key fails the release check): make setup installs it from PyPI
#: (requirements/project.txt); brak_bringup runs without it and says so in one line
PYPI_ONLY_EXEC = {"foxglove": "the Foxglove gateway and brak_record (foxglove-sdk)"}
SPLIT_STDLIB = {"tkinter"}
# Optional runtime dependencies: imported only by the executable named, which stops with one
# line when they are missing; not exec_depends (a headless robot does not pull them in), but
# test_depends (the tests run that executable). QUALITY_DECLARATION.md, section 5, says so.
OPTIONAL_EXEC = {"python3-tk": "bsal_ros/viewer", "python3-pil": "bsal_ros/viewer"}


def imported_modules(*folders):
    """Top-level modules imported by the .py files under ``folders`` (absolute imports)."""
    out = set()
    for folder in folders:
        for f in ((ROOT if (ROOT / folder).is_dir() else REPO) / folder).rglob("*.py"):
            for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(n, ast.Import):
                    out |= {a.name.split(".")[0] for a in n.names}
                elif isinstance(n, ast.ImportFrom) and n.level == 0:
                    out.add(n.module.split(".")[0])
    return out


def rosdep_keys(modules):
    own = ({"bsal_ros", "bench"} | {f.stem for f in (ROOT / "test").glob("*.py")}
           # the test tree's own plugin packages (test/plugins/<name>/<module>.py)
           | {f.stem for f in (ROOT / "test" / "plugins").glob("*/*.py")}
           # the test tree's helper packages (test/faults, test/two_hosts: the system tests')
           | {f.parent.name for f in (ROOT / "test").glob("*/__init__.py")}
           | {f.stem for f in (REPO / "bench").rglob("*.py")}
           # the repository's scripts (the suite runner's modules, imported by its test)
           | {f.stem for f in (REPO / "scripts").glob("*.py")}
           # bench scripts import their siblings
           | {d.name for d in (REPO / "bench").iterdir() if d.is_dir()})
    third_party = {m for m in modules
                   if m not in own and (m not in sys.stdlib_module_names or m in SPLIT_STDLIB)}
    return {ROSDEP_KEYS.get(m, m) for m in third_party}


def test_package_xml_dependencies_are_exactly_what_the_code_and_tests_import():
    root = ET.parse(ROOT / "package.xml").getroot()
    assert root.get("format") == "3"
    assert root.findtext("name") == "bsal_ros"
    assert root.find("export/build_type").text == "ament_python"
    assert not root.findall("depend") and not root.findall("build_depend")
    exec_deps = [e.text for e in root.findall("exec_depend")]
    test_deps = [e.text for e in root.findall("test_depend")]
    assert len(set(exec_deps)) == len(exec_deps) and len(set(test_deps)) == len(test_deps)
    imported = rosdep_keys(imported_modules("bsal_ros", "launch"))
    assert set(OPTIONAL_EXEC) <= imported, "an optional dependency nothing imports"
    runtime = (imported - set(OPTIONAL_EXEC) - set(PYPI_ONLY_EXEC)) | set(NOT_IMPORTED_EXEC)
    assert set(exec_deps) == runtime, (
        f"missing: {runtime - set(exec_deps)}, not imported: {set(exec_deps) - runtime}")
    tests_only = ((rosdep_keys(imported_modules("test", "bench")) - runtime - set(PYPI_ONLY_TEST)
                   - set(PYPI_ONLY_EXEC))
                  | set(NOT_IMPORTED_TEST) | set(OPTIONAL_EXEC))
    assert set(test_deps) == tests_only, (
        f"missing: {tests_only - set(test_deps)}, not imported: {set(test_deps) - tests_only}")
    # GUI tools are not forced onto a headless robot
    assert not {"rviz2", "rqt_robot_monitor"} & set(exec_deps)
    assert "timeout" in (ROOT / "setup.cfg").read_text()


def test_optional_dependencies_are_imported_only_where_declared():
    """python3-tk and python3-pil stay optional: only the viewer imports them."""
    importers = {}
    for f in list((ROOT / "bsal_ros").rglob("*.py")) + list((ROOT / "launch").rglob("*.py")):
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = ([a.name for a in n.names] if isinstance(n, ast.Import) else
                     [n.module] if isinstance(n, ast.ImportFrom) and n.level == 0 else [])
            for key in {ROSDEP_KEYS.get(m.split(".")[0]) for m in names} & set(OPTIONAL_EXEC):
                importers.setdefault(key, set()).add(f)
    assert set(importers) == set(OPTIONAL_EXEC)
    for key, files in importers.items():
        outside = [str(f.relative_to(ROOT)) for f in files
                   if not f.is_relative_to(ROOT / OPTIONAL_EXEC[key])]
        assert not outside, f"{key} is optional, but {outside} import it"


def test_interfaces_package_xml_names_what_the_generated_code_needs():
    root = ET.parse(REPO / "bsal_interfaces" / "package.xml").getroot()
    depends = {e.text for e in root.findall("depend")}
    assert {"std_msgs", "builtin_interfaces", "action_msgs"} <= depends
    assert any((REPO / "bsal_interfaces" / "action").glob("*.action"))


def test_interfaces_package_is_an_ament_cmake_rosidl_package():
    root = ET.parse(REPO / "bsal_interfaces" / "package.xml").getroot()
    assert root.find("export/build_type").text == "ament_cmake"
    assert root.findtext("member_of_group") == "rosidl_interface_packages"
    cmake = (REPO / "bsal_interfaces" / "CMakeLists.txt").read_text()
    for kind in ("msg", "srv", "action"):
        for f in (REPO / "bsal_interfaces" / kind).iterdir():
            assert f'"{kind}/{f.name}"' in cmake, f"{f.name} is not generated"


def test_ament_marker_and_setup_cfg_script_dir():
    assert (ROOT / "resource" / "bsal_ros").is_file()
    cfg = (ROOT / "setup.cfg").read_text()
    assert "script_dir=$base/lib/bsal_ros" in cfg
    assert "install_scripts=$base/lib/bsal_ros" in cfg


def test_plain_colcon_list_in_a_workspace_finds_both_packages(tmp_path):
    colcon = shutil.which("colcon") or str(Path(sys.executable).with_name("colcon"))
    assert os.access(colcon, os.X_OK), "colcon-core is installed by make setup"
    # A ROS user's workspace: <ws>/src/<clone> is this repository, colcon run with no flags
    # (this checkout's .venv/, build/, install/ and log/ carry COLCON_IGNORE).
    src = tmp_path / "src"
    src.mkdir()
    (src / "bsal_ros").symlink_to(REPO)
    out = subprocess.run([colcon, "list"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    found = {line.split()[0]: line.split()[-1] for line in out.splitlines() if line.strip()}
    assert found == {"bsal_ros": "(ros.ament_python)", "bsal_interfaces": "(ros.ament_cmake)"}


@pytest.mark.parametrize("script", ["hardware_node", "rci_gateway", "rdi_gateway",
                                    "foxglove_gateway", "brak_markers", "brak_bringup",
                                    "rdi_viewer", "brak_drive", "brak_wire", "brak_record"])
def test_console_scripts_resolve(script):
    """Every console script named in setup.py points at a real main()."""
    import importlib
    import re
    text = (ROOT / "setup.py").read_text()
    target = re.search(rf"[\"']{script} = ([\w.]+):(\w+)[\"']", text)
    assert target, script
    module = importlib.import_module(target.group(1))
    assert callable(getattr(module, target.group(2)))


def test_make_uses_the_domain_it_prints():
    """The Makefile draws one ROS_DOMAIN_ID per run; what it prints is what it uses."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ROS_DOMAIN_ID", "MAKEFLAGS", "MAKELEVEL")}
    for _ in range(3):
        out = subprocess.run(["make", "-s", "-C", str(REPO), "print-domain"], env=env,
                             capture_output=True, text=True, timeout=30, check=True).stdout.split()
        assert len(out) == 2 and out[0] == out[1], out
        assert 1 <= int(out[0]) <= 100
    env["ROS_DOMAIN_ID"] = "42"
    out = subprocess.run(["make", "-s", "-C", str(REPO), "print-domain"], env=env,
                         capture_output=True, text=True, timeout=30, check=True).stdout.split()
    assert out == ["42", "42"]


def test_each_test_module_runs_in_a_domain_of_its_own():
    """make test (scripts/run_suite.py) runs this module in a process of its
    own with a ROS domain it holds alone: the domain's lock is taken."""
    import fcntl
    import tempfile
    if "BSAL_SUITE_MODULE" not in os.environ:
        pytest.skip("run by hand, not by make test: no domain was handed out")
    assert os.environ["BSAL_SUITE_MODULE"] == Path(__file__).name
    domain = os.environ["ROS_DOMAIN_ID"]
    lock = Path(tempfile.gettempdir()) / "bsal_ros-test-domains" / f"{domain}.lock"
    with open(lock) as f:
        with pytest.raises(BlockingIOError):
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


def setup_py_data_files():
    """{share-relative destination path} of every file setup.py's data_files installs."""
    from glob import glob
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    out = set()
    for tup in ast.walk(tree):
        if not (isinstance(tup, ast.Tuple) and len(tup.elts) == 2
                and isinstance(tup.elts[0], (ast.Constant, ast.BinOp))):
            continue
        dest = ast.unparse(tup.elts[0]).replace("'share/' + package_name", "'share/bsal_ros'")
        dest = dest.replace(" + ", "").replace("''", "").strip("'")
        files = []
        patterns = set()     # glob("config/*.xml")'s argument is no file name
        for node in ast.walk(tup.elts[1]):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "glob":
                files += glob(str(ROOT / node.args[0].value))
                patterns.add(id(node.args[0]))
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value
                  and id(node) not in patterns):
                if node.value.endswith((".xml",)):
                    files.append(str(ROOT / node.value))
        for f in files:
            out.add(f"{dest}/{Path(f).name}")
    return out


made_by_make_setup = pytest.mark.skipif(
    not (REPO / ".venv" / ".stamps" / "ament").is_file()
    or (REPO / "install").resolve() not in {
        Path(p).resolve() for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p},
    reason="this checkout was not set up by make setup, or the tests do not run in its "
           "environment (e.g. a colcon workspace on a ROS install, where colcon makes the "
           "ament prefix)")


@made_by_make_setup
def test_make_setup_registered_both_packages_in_the_ament_prefix():
    """install/ is an ament prefix as colcon makes it: both packages in the index,
    share/bsal_ros holding what setup.py installs (linked to the sources), and
    lib/bsal_ros the executables ros2 run and launch_ros look up."""
    from ament_index_python.packages import get_package_prefix, get_package_share_directory
    install = REPO / "install"
    for package in ("bsal_ros", "bsal_interfaces"):
        assert Path(get_package_prefix(package)).resolve() == install.resolve(), package
    share = Path(get_package_share_directory("bsal_ros"))
    wanted = {p for p in setup_py_data_files() if p.startswith("share/bsal_ros/")}
    assert {"share/bsal_ros/launch/brak.launch.py", "share/bsal_ros/config/brak.yaml",
            "share/bsal_ros/config/brak.urdf", "share/bsal_ros/config/brak.rviz",
            "share/bsal_ros/config/brak.foxglove.json"} <= wanted
    for rel in wanted:
        installed = install / rel
        assert installed.is_file(), rel
        assert installed.resolve() == (ROOT / rel.split("/", 2)[2]).resolve(), rel
    assert (share / "package.xml").resolve() == (ROOT / "package.xml").resolve()
    scripts = set(re.findall(r"[\"'](\w+) = [\w.]+:\w+[\"']", (ROOT / "setup.py").read_text()))
    for script in scripts:
        exe = install / "lib" / "bsal_ros" / script
        assert exe.is_file() and os.access(exe, os.X_OK), script
    index = install / "share" / "ament_index" / "resource_index"
    assert (index / "packages" / "bsal_ros").is_file()


@made_by_make_setup
def test_sourcing_install_setup_bash_gives_a_working_ros_environment():
    """A clean shell that sources install/setup.bash imports rclpy and our messages
    and finds the package share, as on a ROS install (the venv comes with it)."""
    env = {"HOME": os.environ.get("HOME", "/"), "PATH": "/usr/bin:/bin"}
    script = ('source install/setup.bash && python -c "import rclpy, bsal_interfaces.msg; '
              "from ament_index_python.packages import get_package_share_directory as g; "
              "print(g('bsal_ros'))\" && echo \"$ROS_AUTOMATIC_DISCOVERY_RANGE\"")
    out = subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    share, discovery = out.stdout.split()
    assert Path(share).resolve() == (REPO / "install" / "share" / "bsal_ros").resolve()
    assert discovery == "LOCALHOST"
