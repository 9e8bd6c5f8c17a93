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

"""``python -m bsal_ros.description``: print Brak's URDF (or check a file against it).

Examples::

    python -m bsal_ros.description > config/brak.urdf
    python -m bsal_ros.description --config my_brak.yaml -o my_brak.urdf
    python -m bsal_ros.description --check config/brak.urdf     # exit 1 when stale
"""
from __future__ import annotations

from pathlib import Path
import sys

from bsal_ros.core.cli import OneLineParser
from bsal_ros.hardware.description import DescriptionError, load_description

from .urdf import build_urdf


def default_config() -> Path | None:
    """config/brak.yaml of the source tree, else of the installed package share."""
    here = Path(__file__).resolve()
    candidates = [here.parents[2] / "config" / "brak.yaml"]
    if len(here.parents) > 5:  # <prefix>/lib/pythonX.Y/site-packages/bsal_ros/description
        candidates.append(here.parents[5] / "share" / "bsal_ros" / "config" / "brak.yaml")
    return next((p for p in candidates if p.is_file()), None)


def main(argv: list[str] | None = None) -> int:
    """``python -m bsal_ros.description``: print, write or check the URDF."""
    ap = OneLineParser(prog="python -m bsal_ros.description",
                       description="Generate Brak's URDF from the robot description.")
    ap.add_argument("--config", type=Path, default=None,
                    help="robot description YAML (default: the package's config/brak.yaml)")
    ap.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    ap.add_argument("--check", type=Path, metavar="URDF",
                    help="compare URDF with the generated text; exit 1 when they differ")
    args = ap.parse_args(argv)

    if args.config is not None and not args.config.is_file():
        ap.refuse(f"--config {args.config}: no such file (a robot description YAML, as the "
                  f"package's config/brak.yaml)")
    if args.check is not None and not args.check.is_file():
        ap.refuse(f"--check {args.check}: no such file (write it first: "
                  f"{ap.prog} -o {args.check})")
    config = args.config or default_config()
    if config is None:
        print("no config/brak.yaml found: using the built-in description", file=sys.stderr)
    try:
        desc = load_description(str(config) if config else None)
    except DescriptionError as exc:
        ap.refuse(str(exc))
    text = build_urdf(desc, source=f"config/{config.name}" if config else
                      "the built-in description")
    if args.check is not None:
        if args.check.read_text(encoding="utf-8") != text:
            print(f"{args.check} is stale: regenerate it with "
                  f"`python -m bsal_ros.description > {args.check}`", file=sys.stderr)
            return 1
        return 0
    if args.output is not None:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            ap.refuse(f"cannot write {args.output}: {exc.strerror} (-o names a file in a "
                      f"folder that exists)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
