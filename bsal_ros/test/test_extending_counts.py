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
"""docs/EXTENDING.md's counts, from its worked examples' files (issue 30):
a new device kind is at most 4 files and no file of the bsal_ros package
itself, the cliff and battery plugins (configuration of their own; the
battery's /diagnostics level) at most 3 each and named by no other file
(issues 41, 52); a new RCI command forwarded to a service at most 4 (7 for a command
of the package, listed with the reason for the three more); a new parameter
at most 2 (3 with a launch argument). Each "Files touched" line is read from
the document, its count must equal its list, every file must exist, and the
worked examples must not be named by any module of the package. And every
plugin under test/plugins, whatever its name (issue 52): its files are its
package and its test, listed in the document, and nothing of the core (the
package's modules, setup files, launch and config files; scripts/ and the
Makefile for its module) names it, so none needs a core edit."""

import ast
from pathlib import Path
import re
import tomllib

import pytest

PKG = Path(__file__).resolve().parents[1]          # the bsal_ros/ package folder
REPO = PKG.parent
DOC = REPO / "docs" / "EXTENDING.md"
CORE = PKG / "bsal_ros"
#: section title -> (limit, names of the worked example no core module may use)
SECTIONS = {
    "## A new board type (and its device kind)": (4, ("bsal_bumper", "BumperBoard", "bumper")),
    "## A new RCI command forwarded to a hardware-node service": (4, ("CStLd", "led_command",
                                                                      "set_leds")),
    "## A new node parameter": (2, ("tyre_wear",)),
}
TOUCHED = re.compile(r"Files touched[^*]*\*\*(\d+)\*\* \(([^)]*)\)")
WITH_LAUNCH = re.compile(r"\*\*(\d+)\*\* with a launch argument \(([^)]*)\)")


def section(title):
    text = DOC.read_text(encoding="utf-8")
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start:end if end > 0 else None]


def listed(match):
    return int(match.group(1)), re.findall(r"`([^`]+)`", match.group(2))


def path_of(name):
    return REPO / name if name.startswith("docs/") else PKG / name


@pytest.mark.parametrize("title", SECTIONS)
def test_each_worked_example_s_count_is_its_list_within_the_limit(title):
    limit, _ = SECTIONS[title]
    m = TOUCHED.search(section(title))
    assert m, f"{title}: no 'Files touched: **N** (...)' line"
    count, files = listed(m)
    assert count == len(files) <= limit, (count, files)
    for name in files:
        assert path_of(name).is_file(), f"{title}: {name} does not exist"


def test_a_new_kind_touches_no_file_of_the_package_and_no_module_names_it():
    _, files = listed(TOUCHED.search(section("## A new board type (and its device kind)")))
    assert not [f for f in files if path_of(f).resolve().is_relative_to(CORE)]
    assert not [f for f in files if f in ("setup.py", "setup.cfg", "package.xml")]


PLUGIN_FILES = re.compile(r"Files of the ([\w-]+) plugin: \*\*(\d+)\*\* \(([^)]*)\)")
#: the worked plugins with a file list of their own -> what only their own files may name
PLUGIN_NAMES = {
    "cliff": re.compile(r"\bbsal_cliff\b|\bCliffKind\b|\bcliff_offset_mm\b"),
    "battery": re.compile(r"\bbsal_battery\b|\bBatteryKind\b|\bbattery_low_volts_per_cell\b"
                          r"|\bbattery_cells\b"),
}


def plugin_lists() -> dict[str, tuple[int, list[str]]]:
    """name -> (count, files) of each "Files of the <name> plugin" line."""
    text = section("## A new board type (and its device kind)")
    return {m.group(1): (int(m.group(2)), re.findall(r"`([^`]+)`", m.group(3)))
            for m in PLUGIN_FILES.finditer(text)}


@pytest.mark.parametrize("name", sorted(PLUGIN_NAMES))
def test_each_plugin_with_its_own_list_is_at_most_3_files_and_nothing_else_names_it(name):
    """Issues 41, 52: a plugin with a description key and a run-time
    parameter of its own (and, the battery, its own /diagnostics level) is its
    module with its metadata and its test, no file of the package, no edit of
    scripts/, of another test or of setup.py."""
    lists = plugin_lists()
    assert name in lists, f"no 'Files of the {name} plugin: **N** (...)' line"
    count, files = lists[name]
    assert count == len(files) <= 3, (count, files)
    assert all(path_of(f).is_file() for f in files), files
    own = {path_of(f).resolve() for f in files}
    assert not [p for p in own if p.is_relative_to(CORE)]
    elsewhere = [*CORE.rglob("*.py"), *(PKG / "test").rglob("*.py"),
                 *(REPO / "scripts").rglob("*"), PKG / "setup.py", PKG / "setup.cfg"]
    named = [str(p.relative_to(REPO)) for p in elsewhere
             if p.is_file() and p.resolve() not in own and p.resolve() != Path(__file__).resolve()
             and PLUGIN_NAMES[name].search(p.read_text(encoding="utf-8", errors="replace"))]
    assert named == [], f"files other than the plugin's own name it: {named}"


PLUGINS = PKG / "test" / "plugins"
#: every plugin package of the test tree
PLUGIN_FOLDERS = sorted(p.parent for p in PLUGINS.glob("*/pyproject.toml"))
#: what pip and Python leave in a plugin's folder
ARTEFACTS = re.compile(r"\.egg-info$|^__pycache__$|^build$|^dist$")


def own_files(folder: Path) -> set[str]:
    """The plugin's files (relative to the package folder), build artefacts left out."""
    return {str(p.relative_to(PKG)) for p in folder.rglob("*")
            if p.is_file() and not any(ARTEFACTS.search(part)
                                       for part in p.relative_to(folder).parts)}


def names_of(folder: Path) -> tuple[set[str], set[str]]:
    """(its module names, its entry-point names and the classes and
    parameter or key names its modules declare): what a core file naming it
    would name."""
    meta = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    modules = {p.stem for p in folder.glob("*.py")} | {p.parent.name
                                                       for p in folder.glob("*/__init__.py")}
    modules |= set(meta.get("tool", {}).get("setuptools", {}).get("py-modules", []))
    declared = set()
    for group in meta.get("project", {}).get("entry-points", {}).values():
        declared |= set(group)
        modules |= {v.partition(":")[0].split(".")[0] for v in group.values()}
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                declared.add(node.name)
                if any(getattr(b, "id", "") == "ParamRecord" for b in node.bases):
                    declared |= {a.target.id for a in node.body if isinstance(a, ast.AnnAssign)}
    return modules, declared


def test_there_are_the_three_worked_plugins():
    assert {f.name for f in PLUGIN_FOLDERS} >= {"bsal_bumper", "bsal_cliff", "bsal_battery"}


@pytest.mark.parametrize("folder", PLUGIN_FOLDERS, ids=[f.name for f in PLUGIN_FOLDERS])
def test_every_plugin_is_its_package_and_its_test_and_no_core_file_names_it(folder):
    """Issue 52: a plugin in test/plugins that needed a core edit would be
    flagged. Its files are listed in EXTENDING.md (one list holds them all:
    its folder's files, its test, for the bumper this document), and no file
    of the core names its module, entry point, classes or parameters."""
    own = own_files(folder)
    text = section("## A new board type (and its device kind)")
    lists = [listed(m)[1] for m in TOUCHED.finditer(text)] + [
        files for _, files in plugin_lists().values()]
    holding = [f for f in lists if own & set(f)]
    assert len(holding) == 1, (f"{folder.name}: {len(holding)} 'Files ...' lines of "
                               f"EXTENDING.md list its files {sorted(own)} (one must)")
    (files,) = holding
    assert {f for f in files if f.startswith(f"test/plugins/{folder.name}/")} == own, files
    rest = [f for f in files if f not in own]
    assert [f for f in rest if f.startswith("test/test_")], f"{folder.name}: no test listed"
    assert all(f.startswith("test/test_") or f == "docs/EXTENDING.md" for f in rest), rest
    modules, declared = names_of(folder)
    core = [*CORE.rglob("*.py"), *(PKG / "launch").rglob("*"), *(PKG / "config").rglob("*"),
            PKG / "setup.py", PKG / "setup.cfg", PKG / "package.xml"]
    every = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in sorted(modules | declared)))
    named = [str(p.relative_to(REPO)) for p in core
             if p.is_file() and every.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert named == [], f"core files name the plugin {folder.name}: {named}"
    setup = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in sorted(modules)))
    named = [str(p.relative_to(REPO)) for p in [*(REPO / "scripts").rglob("*"), REPO / "Makefile"]
             if p.is_file() and setup.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert named == [], f"scripts name the plugin {folder.name} (make setup installs every one): " \
                        f"{named}"


@pytest.mark.parametrize("title", SECTIONS)
def test_no_module_of_the_package_names_a_worked_example(title):
    _, names = SECTIONS[title]
    if title == "## A new node parameter":
        return      # declared at test time: its files are the ones it would change
    pattern = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in names), re.IGNORECASE)
    hits = [str(p.relative_to(PKG)) for p in CORE.rglob("*.py")
            if pattern.search(p.read_text(encoding="utf-8"))]
    assert hits == [], f"the package names the worked example: {hits}"


def test_a_parameter_with_a_launch_argument_is_one_file_more():
    text = section("## A new node parameter")
    count, files = listed(TOUCHED.search(text))
    more, extra = listed(WITH_LAUNCH.search(text))
    assert more == count + len(extra) <= 3 and extra == ["launch/brak.launch.py"]
    assert all(path_of(f).is_file() for f in files + extra)
    # the worked example sets it through exactly those: a record field, its
    # INTERFACES.md row and a row of the launch file's override table
    example = (PKG / "test" / "test_parameter_worked_example.py").read_text(encoding="utf-8")
    assert "class WithTyreWear(HardwareNodeParams)" in example
    assert 'ROW = ("| `tyre_wear`' in example and "HARDWARE_OVERRIDES" in example


PACKAGE_COMMAND = re.compile(
    r"Files touched by a command of the package: \*\*(\d+)\*\* \(([^)]*)\)")


def test_a_command_of_the_package_lists_the_files_it_is_written_in():
    """Above the limit of 4: the count is the list, each file exists, the
    ones every command needs are there (its declaration, the port method,
    its entry in the one handler table, the ROS port's call, its test), and
    the two more are the hand-written PROTOCOL.md example and its stated
    values, which test_protocol_doc demands."""
    title = "## A new RCI command forwarded to a hardware-node service"
    m = PACKAGE_COMMAND.search(section(title))
    assert m, "no 'Files touched by a command of the package: **N** (...)' line"
    count, files = listed(m)
    assert count == len(files), (count, files)
    assert all(path_of(f).is_file() for f in files), files
    needed = {"bsal_ros/protocol/rci_commands.py", "bsal_ros/rci/port.py",
              "bsal_ros/rci/handlers.py", "bsal_ros/nodes/rci_ros_port.py"}
    assert needed <= set(files)
    extra = set(files) - needed         # the test and the PROTOCOL.md example's two
    assert len(extra) == 3 and {"docs/PROTOCOL.md", "test/test_protocol_doc.py"} <= extra
    doc_test = (PKG / "test" / "test_protocol_doc.py").read_text(encoding="utf-8")
    assert "every RCI packet type has an example" in doc_test
