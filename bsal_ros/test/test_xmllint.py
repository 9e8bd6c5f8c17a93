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

"""ament_xmllint and catkin_pkg on both package manifests.

ament_xmllint validates a manifest against the schema its ``xml-model``
processing instruction names, which it fetches from download.ros.org; the
tests never leave loopback (docs/DEVELOPING.md), so it checks copies without
that line (well-formed XML), and catkin_pkg, which implements the same
package format 3 rules, validates the manifests themselves (as bloom does).
"""
import shutil

import pytest

from linters import importing, REPO, ROOT

MANIFESTS = [ROOT / "package.xml", REPO / "bsal_interfaces" / "package.xml"]


@pytest.mark.linter
@pytest.mark.xmllint
def test_xmllint(tmp_path):
    with importing("ament_xmllint"):
        from ament_xmllint.main import main
    if shutil.which("xmllint") is None:
        pytest.skip("the xmllint program is missing "
                    "(Debian: libxml2-utils; make setup installs it)")
    copies = []
    for manifest in MANIFESTS:
        text = manifest.read_text(encoding="utf-8")
        assert "<?xml-model" in text, manifest
        copy = tmp_path / manifest.parent.name / "package.xml"
        copy.parent.mkdir()
        copy.write_text("\n".join(line for line in text.splitlines()
                                  if not line.startswith("<?xml-model")), encoding="utf-8")
        copies.append(str(copy))
    assert main(argv=copies) == 0, "Found errors"


@pytest.mark.linter
@pytest.mark.xmllint
def test_catkin_pkg_validates_both_manifests():
    catkin_pkg = pytest.importorskip("catkin_pkg.package")
    for manifest in MANIFESTS:
        package = catkin_pkg.parse_package(str(manifest), warnings=(warnings := []))
        package.validate(warnings=warnings)
        assert warnings == [], (manifest, warnings)
        assert package.licenses == ["Apache-2.0"]
        assert {u.type for u in package.urls} == {"website", "repository", "bugtracker"}
