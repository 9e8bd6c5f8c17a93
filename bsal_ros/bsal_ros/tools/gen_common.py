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

"""What the generators of checked-in files share (``wireshark/gen_lua.py``,
``tools/gen_cpp.py``, ``tools/gen_docs.py``): the names they give sub-codes
and command bytes, the replacement of a marked block, and writing or checking
the files they produce."""

from __future__ import annotations

from pathlib import Path
import sys

from bsal_ros import kinds
from bsal_ros.core.cli import OneLineParser
from bsal_ros.kinds.plugins import ONLY_ENV
from bsal_ros.protocol import constants as k

#: the book's sub-code names, per family
SUB_ENUMS = (k.MotorType, k.SensorType)


def sub_name(sub: int, member=None) -> str:
    """An RCI sub-code's name: the declaration's (``member.name``), the book's,
    the registered device kind's (upper case), else its hex value."""
    if isinstance(getattr(member, "name", None), str):
        return member.name
    for enum in SUB_ENUMS:
        if sub in enum._value2member_map_:
            return enum(sub).name
    kind = kinds.RCI_SENSOR_CLASS.get(sub)
    return kind.upper() if kind else f"0x{sub:02x}"


def command_name(byte: int, kind) -> str:
    """A Set command byte's name: the book's constant, else its command kind's."""
    for enum in (k.MotorCommandCode, k.SensorCommandCode):
        if byte in enum._value2member_map_:
            return enum(byte).name
    return kind.name


def generator_parser(module: str, doc: str, what: str) -> OneLineParser:
    """The command line every generator starts from: ``python -m module``,
    described by the first line of its docstring ``doc``, and ``--check``
    (exit 1 if ``what``, one of the files it writes, is stale); the generator
    adds the option naming where its files are."""
    ap = OneLineParser(prog=f"python -m {module}", description=doc.splitlines()[0])
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {what} is stale")
    return ap


def replace_block(text: str, begin: str, end: str, block: str, what: str) -> str:
    """``text`` with the lines from ``begin`` to ``end`` (markers included) replaced by
    ``block`` (markers included); ValueError naming ``what`` without them."""
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end + "\n")
    if not sep or not sep2:
        raise ValueError(f"{what}: generated-block markers not found")
    return head + block + tail


def rendered(ap, paths, render, fix: str) -> dict:
    """``{path: render(text, path)}`` for each of ``paths``. A file that cannot
    be read, or has no generated-block markers, ends the run through
    ``ap.refuse`` (one line, exit 2) with ``fix``, what to do about it."""
    out = {}
    for path in paths:
        try:
            out[path] = render(Path(path).read_text(encoding="utf-8"), path)
        except OSError as exc:
            ap.refuse(f"cannot read {path}: {exc.strerror}; {fix}")
        except ValueError as exc:
            ap.refuse(f"{exc} in {path}; {fix}")
    return out


def plugin_kinds() -> list[str]:
    """Registered device kinds that come from other packages' plugins."""
    return [k.name for k in kinds.all_kinds() if not kinds.is_builtin(k)]


def write_or_check(outputs: dict, check: bool, command: str, shipped: bool = False) -> int:
    """Write each ``{Path: text}`` that differs, or with ``check`` name each stale
    one (``command`` regenerates it); returns the exit status. ``shipped``: the
    outputs are the repository's own files, which name Brak's kinds only, so a
    process holding kinds of other packages' plugins refuses (exit 2)."""
    if shipped and plugin_kinds():
        print(f"{command}: kinds of installed plugins are loaded ({', '.join(plugin_kinds())}); "
              f"the checked-in files name Brak's own only: run it with "
              f"{ONLY_ENV}=builtin")
        return 2
    stale = []
    for path, text in outputs.items():
        path = Path(path)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                print(f"{command}: cannot write {path}: {exc.strerror}; name a folder "
                      f"this user can write to", file=sys.stderr)
                return 2
    if check:
        for path in stale:
            print(f"{path} is stale: run {command}")
        return 1 if stale else 0
    return 0
