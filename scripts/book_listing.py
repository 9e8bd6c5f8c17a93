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

"""Extract the BSAL book's example program (seed 001, section 3.3) into a build folder.

    python3 scripts/book_listing.py OUT.cc             # seed found as below
    python3 scripts/book_listing.py OUT.cc --seeds DIR # seed 001 in DIR

The program text is the book's author's, under his own licence; it is never
stored in this repository. It is read from ``001_*.txt`` of the seeds folder
(``--seeds``, else ``$BSAL_SEEDS_DIR``, else ``shared/seeds`` beside the
repository or one level further up, as for a worktree) each time it is
needed and written to OUT.cc, which belongs in a build folder
(``legacy/build/``, a test's temporary folder).

What is taken: every numbered line of the fenced code blocks under the
heading "3.3 Example program", with its line number and the one space after
it stripped. The page furniture between the blocks (the code fences, the
blank lines of the page layout) is dropped. Nothing else is changed: the
known slip of the listing (``MOTOR_REVERSE`` where the API text says
``MOTOR_BACKWARD``) needs no fix, since rci-client.h defines both, and the
pre-standard ``main`` without a return type is compiled with
``g++ -fpermissive``. The result is checked before it is written: the book
numbers its lines 1..97 without a gap, the structure is the one 3.3
describes, and its SHA-256 is the one recorded here (a different seed is an
error, not a different program).

Exit status: 0 written, 2 no seed found (the message says where it looked),
1 the seed's listing is not the expected one.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from pathlib import Path
import re
import sys

REPO = Path(__file__).resolve().parents[1]
HEADING = re.compile(r"^#+ 3\.3 Example program")
NUMBERED = re.compile(r"^(\d+)(?: (.*))?$")
FENCE = "```"

#: lines the book numbers
LINES = 97
#: SHA-256 of the 97 lines joined with newlines (and a final newline)
SHA256 = "afb28e3bdc4115ae4959decdade41b5a12a636cc830bdbcd006b1564b6ea2eb7"
#: (book line number, a fragment that line holds): what 3.3's prose names
LANDMARKS = [
    (31, '#include "rci-client.h"'),
    (34, "main ("),
    (36, 'string id = "ken";'),
    (61, "connectToServer"),
    (67, "resetRobot"),
    (68, "homeRobot"),
    (78, "setDriveMotor ( 1, MOTOR_REVERSE , 20.0"),
    (84, "for ( int i = 0 ; i < 10 ; ++i )"),
    (96, "setDriveMotor ( 1, MOTOR_REVERSE , 0.0"),
    (97, "}"),
]


class ListingError(ValueError):
    """The seed does not hold the listing this project expects."""


def seed_dirs() -> list[Path]:
    """Where seed 001 is looked for, in order."""
    dirs = [Path(d) for d in [os.environ.get("BSAL_SEEDS_DIR", "")] if d]
    return dirs + [p / "shared" / "seeds" for p in (REPO.parent, REPO.parent.parent)]


def find_seed(seeds_dir: str | os.PathLike | None = None) -> Path | None:
    """Seed 001 (``001_*.txt``) in ``seeds_dir`` or the usual places; None if absent."""
    for d in ([Path(seeds_dir)] if seeds_dir else seed_dirs()):
        found = sorted(d.glob("001_*.txt")) if d.is_dir() else []
        if found:
            return found[0]
    return None


def extract(seed_text: str) -> list[str]:
    """The listing's lines (numbers stripped), checked; raises ListingError."""
    lines = seed_text.splitlines()
    start = next((i for i, ln in enumerate(lines) if HEADING.match(ln)), None)
    if start is None:
        raise ListingError("no heading '3.3 Example program' in seed 001")
    numbered, fenced, seen_block = [], False, False
    for ln in lines[start + 1:]:
        if ln.strip() == FENCE:
            fenced, seen_block = not fenced, True
            continue
        if not fenced:
            if ln.strip() and seen_block:
                break               # the prose after the listing
            continue
        m = NUMBERED.match(ln)
        if m:
            numbered.append((int(m.group(1)), m.group(2) or ""))
        elif ln.strip():
            raise ListingError(f"unnumbered line inside the listing: {ln!r}")
    check([n for n, _ in numbered], [text for _, text in numbered])
    return [text for _, text in numbered]


def check(numbers: list[int], body: list[str]) -> None:
    """The numbering, the landmarks and the digest; raises ListingError."""
    if numbers != list(range(1, LINES + 1)):
        raise ListingError(f"the listing is numbered {numbers[:3]}..{numbers[-3:]} "
                           f"({len(numbers)} lines), not 1..{LINES} without a gap")
    for number, fragment in LANDMARKS:
        if fragment not in body[number - 1]:
            raise ListingError(f"line {number} does not hold {fragment!r}: "
                               f"{body[number - 1]!r}")
    digest = hashlib.sha256(text_of(body).encode("utf-8")).hexdigest()
    if digest != SHA256:
        raise ListingError(f"the listing's SHA-256 is {digest}, not {SHA256}")


def text_of(body: list[str]) -> str:
    """The program as a file's text."""
    return "\n".join(body) + "\n"


def write(out: str | os.PathLike, seeds_dir: str | os.PathLike | None = None) -> Path:
    """Extract, check and write the listing to ``out``; the seed it came from.

    Raises FileNotFoundError without a seed, ListingError for a wrong one."""
    seed = find_seed(seeds_dir)
    if seed is None:
        where = [str(seeds_dir)] if seeds_dir else [str(d) for d in seed_dirs()]
        raise FileNotFoundError(f"seed 001 (001_*.txt) not found in {', '.join(where)}")
    body = extract(seed.read_text(encoding="utf-8"))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = text_of(body)
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")      # unchanged: make does not relink
    return seed


def main(argv=None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the .cc file to write (in a build folder)")
    ap.add_argument("--seeds", help="folder holding 001_*.txt")
    args = ap.parse_args(argv)
    try:
        seed = write(args.out, args.seeds)
    except FileNotFoundError as e:
        print(f"book_listing: {e}", file=sys.stderr)
        return 2
    except ListingError as e:
        print(f"book_listing: {e}", file=sys.stderr)
        return 1
    print(f"book_listing: {args.out} from {seed.name} (section 3.3, {LINES} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
