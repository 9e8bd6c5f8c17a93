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
"""How many measured lines each test module alone reaches, from the combined
coverage data of a `make test` (each line is recorded with its module's name:
bsal_ros/.coveragerc's ``context``).

A module whose count is 0 (or a handful) can be marked ``untraced`` without
the coverage figure going down; run it before marking one:

    scripts/with_env.sh python scripts/coverage_unique.py [build/coverage/.coverage] [MODULE...]
"""
from __future__ import annotations

import argparse
from collections import defaultdict
import os
from pathlib import Path
import sys

REPOSITORY = Path(__file__).resolve().parents[1]


def unique_lines(data) -> dict[str, list[tuple[str, int]]]:
    """For each context (test module), the (file, line) pairs no other reaches."""
    only = defaultdict(list)
    for filename in sorted(data.measured_files()):
        for line, contexts in sorted(data.contexts_by_lineno(filename).items()):
            named = {c for c in contexts if c}
            if len(named) == 1:
                only[named.pop()].append((filename, line))
    return only


def main(argv=None) -> int:
    import coverage
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="?", default=str(REPOSITORY / "build/coverage/.coverage"))
    ap.add_argument("modules", nargs="*", help="print these modules' lines too")
    args = ap.parse_args(argv)
    data = coverage.CoverageData(basename=args.data)
    data.read()
    if not data.measured_contexts() - {""}:
        print(f"{args.data}: no line recorded with a test module (a run older than the "
              "context setting?)", file=sys.stderr)
        return 1
    only = unique_lines(data)
    contexts = sorted(data.measured_contexts() - {""}, key=lambda c: (-len(only.get(c, [])), c))
    for context in contexts:
        print(f"{len(only.get(context, [])):6d}  {context}")
    for module in args.modules:
        print(f"\n{module}:")
        for filename, line in only.get(module, []):
            print(f"  {os.path.relpath(filename, REPOSITORY)}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
