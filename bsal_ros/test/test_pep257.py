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

"""ament_pep257 on the package, its tests and launch files, bench/ and scripts/.

ament's convention, less the project's declared deviations (linters.PEP257_DEVIATIONS).
"""
import pytest

from linters import importing, PEP257_DEVIATIONS, python_paths

# untraced: it runs no line of bsal_ros that another module does not (scripts/coverage_unique.py)
pytestmark = pytest.mark.untraced


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    with importing("ament_pep257"):
        from ament_pep257.main import main
    rc = main(argv=["--add-ignore", *sorted(PEP257_DEVIATIONS), "--", *python_paths()])
    assert rc == 0, "Found code style errors / warnings"
