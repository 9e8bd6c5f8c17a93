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

"""The quality declarations (REP-2004) say what the repository shows.

Checks every fact of bsal_ros/QUALITY_DECLARATION.md and
bsal_interfaces/QUALITY_DECLARATION.md that a program can check: the version
(package.xml, setup.py, the CHANGELOG's top entry, the declaration), the
dependencies and the source of each level, the external-dependency
declarations, the coverage floor, the linters the suite runs, the links, and
that the claimed level is the one REP-2004's chart gives for the status table.
"""

import configparser
from pathlib import Path
import re
import xml.etree.ElementTree as ET

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent
PACKAGES = {"bsal_ros": ROOT, "bsal_interfaces": REPO / "bsal_interfaces"}

# REP-2004's comparison chart: the items each level requires (a check mark; recommended and
# optional items are left out). Level 4 requires only the licence and the copyright.
L1 = {"1.i", "1.ii", "1.iii", "1.iv", "1.v", "1.vi", "2.i", "2.ii", "2.iii", "2.iv", "2.v",
      "3.i", "3.ii", "3.iii", "3.iv", "3.v", "3.v.a", "3.v.c", "4.i", "4.ii", "4.iii.a",
      "4.iii.b", "4.iv.a", "4.iv.b", "4.v.a", "4.v.b", "5.i", "5.iii", "6.i", "7.i"}
REQUIRED = {
    1: L1,
    2: L1 - {"2.iii", "2.v", "3.ii", "4.ii", "4.iii.b", "4.iv.a", "4.iv.b"},
    3: {"1.i", "1.ii", "1.iv", "1.v", "2.i", "2.iv", "3.iii", "3.iv", "3.v.a", "3.v.c", "6.i"},
    4: {"3.iii", "3.iv"},
}
ALL_ITEMS = L1 | {"3.v.b", "5.ii"}
SEMVER = re.compile(r"^\d+\.\d+\.\d+$")


def declaration(package: str) -> str:
    return (PACKAGES[package] / "QUALITY_DECLARATION.md").read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The text under the Markdown heading that starts with ``heading``, to the next one of its
    level or higher."""
    m = re.search(rf"^(#+) {re.escape(heading)}.*$", text, re.M)
    assert m, f"no heading {heading!r}"
    level = len(m.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, m.end())
    return text[m.end():end.start() if end else len(text)]


def table_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row in ``text`` (header and rule rows left out)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:] if rows else rows


def status_table(package: str) -> dict[str, str]:
    rows = table_rows(section(declaration(package), "Requirement status"))
    status = {r[0]: r[2] for r in rows}
    assert len(status) == len(rows), "an item is listed twice"
    return status


def claimed_level(package: str) -> int:
    m = re.search(rf"`{package}` claims \*\*Quality Level (\d)\*\*", declaration(package))
    assert m, "no claim"
    return int(m.group(1))


def manifest(package: str) -> ET.Element:
    return ET.parse(PACKAGES[package] / "package.xml").getroot()


def changelog_top_version(package: str) -> str:
    text = (PACKAGES[package] / "CHANGELOG.rst").read_text(encoding="utf-8")
    m = re.search(r"^(\S+) \(\d{4}-\d{2}-\d{2}\)\n-+$", text, re.M)
    assert m, "no released entry"
    # nothing unreleased above it: the top entry is the released version
    assert "Forthcoming" not in text[:m.start()]
    return m.group(1)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_one_version_everywhere(package):
    version = manifest(package).findtext("version")
    assert SEMVER.match(version)
    assert changelog_top_version(package) == version
    m = re.search(r"It is at version \*\*(\S+)\*\*\.", declaration(package))
    assert m and m.group(1) == version
    if package == "bsal_ros":
        setup = (ROOT / "setup.py").read_text(encoding="utf-8")
        assert re.findall(r"\bversion=\"([^\"]+)\"", setup) == [version]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_claimed_level_follows_from_the_status_table(package):
    status = status_table(package)
    assert set(status) == ALL_ITEMS, (
        f"missing: {ALL_ITEMS - set(status)}, unknown: {set(status) - ALL_ITEMS}")
    assert set(status.values()) <= {"met", "not met"}
    level = min(n for n, items in REQUIRED.items() if all(status[i] == "met" for i in items))
    assert claimed_level(package) == level


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_stable_version_claim_matches_the_version(package):
    major = int(manifest(package).findtext("version").split(".")[0])
    assert (status_table(package)["1.ii"] == "met") == (major >= 1)


def dependency_rows(package: str) -> dict[str, list[str]]:
    text = section(declaration(package), "Dependencies [5]")
    return {r[0].strip("`"): r for r in table_rows(text) if r[0].startswith("`")}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_runtime_dependency_has_a_level_and_a_source(package):
    root = manifest(package)
    runtime = {e.text for e in root.findall("exec_depend") + root.findall("depend")}
    rows = dependency_rows(package)
    assert runtime <= set(rows), f"not in the declaration: {runtime - set(rows)}"
    ros_levels = {}
    for dep in runtime:
        level, source = rows[dep][1], rows[dep][2]
        if dep.startswith("python3-"):
            link = re.search(r"\]\((\.\./docs/quality/[\w.-]+\.md)\)", level + source)
            assert link, f"{dep}: no external-dependency declaration linked"
            assert (PACKAGES[package] / link.group(1)).resolve().is_file(), link.group(1)
            continue
        assert re.match(r"^([1-4]\b|none$)", level), f"{dep}: level {level!r}"
        if dep == "bsal_interfaces":
            assert level.startswith(str(claimed_level("bsal_interfaces")))
        else:
            # the upstream repository, and the file read or the commit searched
            assert re.search(r"`[\w-]+/[\w-]+`", source), f"{dep}: no repository"
            if level != "none":
                assert f"`{dep}/QUALITY_DECLARATION.md`" in source, f"{dep}: no path"
            assert re.search(r"`[0-9a-f]{10}`", source), f"{dep}: no commit"
        ros_levels[dep] = level
    # 5.i at Level 1 means every ROS dependency declares Level 1
    all_level_1 = all(v.startswith("1") for v in ros_levels.values())
    assert (status_table(package)["5.i"] == "met") == all_level_1


def test_external_dependency_declarations_cover_every_non_ros_dependency():
    root = manifest("bsal_ros")
    non_ros = {e.text for e in root.findall("exec_depend") if e.text.startswith("python3-")}
    text = section(declaration("bsal_ros"), "Direct Runtime non-ROS Dependencies")
    linked = set(re.findall(r"\]\(\.\./docs/quality/([\w.-]+)\.md\)", text))
    files = {f.stem for f in (REPO / "docs" / "quality").glob("*.md")}
    assert linked == files and len(files) == len(non_ros)
    for f in files:
        body = (REPO / "docs" / "quality" / f"{f}.md").read_text(encoding="utf-8")
        assert "**Result:" in body and "## Comparison with the REP-2004 items" in body


def test_optional_dependencies_are_declared_as_optional():
    root = manifest("bsal_ros")
    exec_deps = {e.text for e in root.findall("exec_depend")}
    test_deps = {e.text for e in root.findall("test_depend")}
    rows = table_rows(section(declaration("bsal_ros"), "Optional Direct Runtime ROS"))
    optional = {r[0].split()[0].strip("`") for r in rows}
    assert optional == {"python3-pil", "python3-tk", "foxglove-sdk"}
    # rosdep keys: test dependencies, never execution ones; the pip-only one in neither
    # list (a pip key fails the release check) but in the project's requirements
    keyed = {"python3-pil", "python3-tk"}
    assert not optional & exec_deps and keyed <= test_deps and "foxglove-sdk" not in test_deps
    requirements = (REPO / "requirements" / "project.txt").read_text(encoding="utf-8")
    assert re.search(r"^foxglove-sdk==[\d.]+$", requirements, re.M)


def test_coverage_floor_is_the_one_make_test_applies():
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / ".coveragerc")
    floor = float(cfg["report"]["fail_under"])
    m = re.search(r"floor enforced by `make test` \| \*\*([\d.]+) %\*\*", declaration("bsal_ros"))
    assert m and float(m.group(1)) == floor
    # make test applies it: the report reads .coveragerc, and only a part of the suite
    # (COVERAGE_SUBSET) overrides the floor
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"coverage report --rcfile=\.coveragerc [^\n]*\\\n\s*\$\(COVERAGE_FLOOR_ARG\)",
                     make)
    assert "COVERAGE_FLOOR_ARG := $(if $(COVERAGE_SUBSET),--fail-under=0,)" in make


def test_the_linters_named_are_the_suites_linter_tests():
    text = section(declaration("bsal_ros"), "Linters and Static Analysis")
    named = set()
    for row in table_rows(text):
        named |= set(re.findall(r"`test/(test_\w+\.py)`", row[1] if len(row) > 1 else ""))
    marked = {f.name for f in (ROOT / "test").glob("test_*.py")
              if re.search(r"^@pytest\.mark\.linter$", f.read_text(encoding="utf-8"), re.M)}
    assert named == marked and named
    for name in named:
        linter = name[len("test_"):-len(".py")]
        assert f"ament_{linter}" in (ROOT / "test" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_test_files_named_exist(package):
    for name in set(re.findall(r"\btest/(test_\w+\.py)", declaration(package))):
        assert (ROOT / "test" / name).is_file(), name


@pytest.mark.parametrize("doc", ["bsal_ros/QUALITY_DECLARATION.md",
                                 "bsal_interfaces/QUALITY_DECLARATION.md",
                                 "docs/quality/smbus2.md", "docs/quality/pyyaml.md"])
def test_relative_links_resolve(doc):
    path = REPO / doc
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        assert (path.parent / target).exists(), f"{doc}: {target}"


def test_readme_links_the_declaration_with_its_level():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    line = next(ln for ln in readme.splitlines()
                if "(bsal_ros/QUALITY_DECLARATION.md)" in ln)
    assert f"Level {claimed_level('bsal_ros')} " in line
    assert f"({manifest('bsal_ros').findtext('version')})" in line
