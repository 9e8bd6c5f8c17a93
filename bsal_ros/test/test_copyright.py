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

"""ament_copyright: every source file carries a copyright notice and a known licence.

Python of the package, tests, launch, bench/ and scripts/, the C++ of legacy/ and
bsal_interfaces/ (scripts/add_license_headers.py writes the headers).
"""
import pytest

from linters import COPYRIGHT_EXCLUDES, copyright_paths, importing

# untraced: it runs no line of bsal_ros that another module does not (scripts/coverage_unique.py)
pytestmark = pytest.mark.untraced


@pytest.mark.copyright
@pytest.mark.linter
def test_copyright():
    with importing("ament_copyright"):
        from ament_copyright.main import main
    rc = main(argv=[*copyright_paths(), "--exclude", *COPYRIGHT_EXCLUDES])
    assert rc == 0, "Found errors"
