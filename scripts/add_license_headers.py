#!/usr/bin/env python3
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

"""Put the project's Apache-2.0 header at the top of every source file.

    python3 scripts/add_license_headers.py            # add it where it is missing
    python3 scripts/add_license_headers.py --check    # list files without it, exit 1 if any
    python3 scripts/add_license_headers.py FILE...    # only these files

Idempotent: a file that already names a licence with ``SPDX-License-Identifier``
in its first lines is left alone. Re-run it after merging another branch. Files are those
git tracks or would track (``git ls-files --cached --others --exclude-standard``):
Python (``.py``, launch files and tests included), shell scripts (``.sh`` and
extension-less files with a shell shebang), C/C++ (``.c .cc .cpp .h .hh .hpp``),
JavaScript (``.js``), ``CMakeLists.txt``, ``.cmake``, Makefiles and ``.lua``.

Where the header goes: after a shebang line and a PEP 263 coding line (both
must stay first), before everything else, followed by one empty line, so a
module docstring stays the module's docstring.
"""

import argparse
from pathlib import Path
import re
import subprocess
import sys

HEADER = """\
Copyright 2026 The bsal_ros authors

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.

SPDX-License-Identifier: Apache-2.0"""

# Files that keep a licence of their own (they carry their own SPDX line too):
# none; code written elsewhere is not stored in the repository.
OWN_LICENCE: dict[str, str] = {}

HASH_SUFFIXES = {".py", ".sh", ".cmake"}
HASH_NAMES = {"CMakeLists.txt", "Makefile", "GNUmakefile"}
SLASH_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".js"}
LUA_SUFFIXES = {".lua"}
SHELL_SHEBANG = re.compile(r"^#!.*\b(ba|da|z)?sh\b")
CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
SPDX = "SPDX-License-Identifier:"
LOOK_LINES = 40   # how far down an existing SPDX line counts


def comment_token(path: Path, text: str):
    """The line-comment token for this file, or None when it is not a source file."""
    if path.suffix in LUA_SUFFIXES:
        return "--"
    if path.suffix in HASH_SUFFIXES or path.name in HASH_NAMES:
        return "#"
    if path.suffix in SLASH_SUFFIXES:
        return "//"
    if not path.suffix and SHELL_SHEBANG.match(text.split("\n", 1)[0]):
        return "#"
    return None


def commented(token: str) -> str:
    """The header with every line behind the comment token (no trailing spaces)."""
    return "".join(f"{token} {line}".rstrip() + "\n" for line in HEADER.split("\n"))


def has_licence(text: str) -> bool:
    """Whether the file's first lines already name a licence."""
    return any(SPDX in line for line in text.split("\n")[:LOOK_LINES])


def with_header(text: str, token: str) -> str:
    """``text`` with the header after its shebang and coding lines."""
    lines = text.splitlines(keepends=True)
    keep = 0
    if lines and lines[0].startswith("#!"):
        keep = 1
    if token == "#" and len(lines) > keep and keep < 2 and CODING.match(lines[keep]):
        keep += 1
    head, rest = lines[:keep], lines[keep:]
    if head and not head[-1].endswith("\n"):
        head[-1] += "\n"
    while rest and not rest[0].strip():
        rest.pop(0)
    body = "".join(rest)
    return "".join(head) + commented(token) + ("\n" + body if body else "")


def tracked_files(root: Path):
    """Every file git tracks under ``root``, and new files it does not ignore."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=root, check=True, capture_output=True, text=True).stdout
    return [root / name for name in out.split("\0") if name]


def process(root: Path, paths, check: bool):
    """Add (or, with ``check``, only report) missing headers; return the files concerned."""
    concerned = []
    for path in paths:
        rel = path.resolve().relative_to(root).as_posix()
        if rel in OWN_LICENCE or not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        token = comment_token(path, text)
        if token is None or has_licence(text):
            continue
        concerned.append(rel)
        if not check:
            path.write_text(with_header(text, token), encoding="utf-8")
    return concerned


def main(argv=None) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true",
                        help="only list the files without a header; exit 1 if there are any")
    parser.add_argument("files", nargs="*", type=Path,
                        help="files to treat (default: every file git tracks)")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    paths = [p.resolve() for p in args.files] if args.files else tracked_files(root)
    concerned = process(root, paths, args.check)
    for rel in concerned:
        print(("missing header: " if args.check else "header added: ") + rel)
    if args.check:
        return 1 if concerned else 0
    print(f"{len(concerned)} file(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
