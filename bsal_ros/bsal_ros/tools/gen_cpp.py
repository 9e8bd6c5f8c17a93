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

"""Generate the C++ library's RCI constants and wire-length tables from the registries.

Two files of ``legacy/include`` come from the RCI command registry, the
protocol constants and the device-kind registry (``bsal_ros.kinds``: every
kind loaded in this interpreter):

* ``bsal-protocols.h``: the block between its markers (packet codes, flag
  bits, status codes, sub-codes, command bytes, version); the book's other
  spellings stay below it, hand-kept;
* ``bsal-wire-tables.h``, whole: the length of each fixed-size packet and of
  each reply item per (reply code, sub-code, status code), which
  ``rci-client.cc`` frames replies with.

::

    python -m bsal_ros.tools.gen_cpp                 # rewrite both in legacy/include
    python -m bsal_ros.tools.gen_cpp --check         # exit 1 if either is stale
    python -m bsal_ros.tools.gen_cpp --out DIR       # write both into DIR (a build's include,
                                                     # given to g++ ahead of legacy/include)
"""

from __future__ import annotations

from pathlib import Path
import sys

from bsal_ros.protocol import constants as k
from bsal_ros.protocol import rci_registry as reg
from bsal_ros.protocol.rci import encode_rci
from bsal_ros.protocol.rci_tables import REPLY_LAYOUTS
from bsal_ros.tools.gen_common import (command_name, generator_parser, replace_block, sub_name,
                                       write_or_check)

INCLUDE = Path(__file__).resolve().parents[3] / "legacy" / "include"
PROTOCOLS, TABLES = "bsal-protocols.h", "bsal-wire-tables.h"
BEGIN = "/* BEGIN GENERATED (python -m bsal_ros.tools.gen_cpp; do not edit) */"
END = "/* END GENERATED */"
#: fixed-size packets: the encoder's length of a default instance is theirs
FIXED_SHAPES = ("iiid", "bare", "control_id", "cstrp", "csvtm", "cbstm")
#: the status-code groups of 001 4.8, by their C prefix
VALUE_GROUPS = (("Control Get Motor status codes", "RCI_CGTMTST_", k.GetMotorStatus),
                ("Control Get Sensor status codes", "RCI_CGTSNST_", k.GetSensorStatus),
                ("Control Status Reply codes", "RCI_CSTRP_", k.CStRpStatus),
                ("Control Server Termination codes", "RCI_CSVTM_", k.TermCode),
                ("Initialization Capability Inquiry codes", "RCI_ICAIQ_", k.CapInquiry),
                ("Initialization Capability Reply codes", "RCI_ICARP_", k.CapReply))
LICENCE = Path(__file__).read_text(encoding="utf-8").split('"""', 1)[0].replace("#", "//")


def _define(name: str, value: str) -> str:
    return f"#define {name:<19} {value}"


def _subs(code: int) -> list[int]:
    return sorted(int(s) for s in reg.SUB_CODES.get(code, {}))


def protocols_block() -> str:
    """The generated block of bsal-protocols.h, markers included."""
    out = [BEGIN, "/* 4.8.1 packet codes (and later ones: rci_commands, registered commands) */"]
    out += [_define(f"RCI_{s.name}", f"0x{int(s.code):04x}") for s in reg.commands()]
    out += ["", "/* flag bits of id_code */"]
    out += [_define(f"RCI_{f.name}", f"0x{int(f):04x}") for f in k.RciFlag]
    out.append(_define("RCI_FLAG_MASK", "(RCI_RQ_ACK | RCI_POLY | RCI_GROUP)"))
    for title, prefix, enum in VALUE_GROUPS:
        out += [f"/* {title} */"] + [_define(prefix + m.name, f"0x{int(m):02x}") for m in enum]
    for group, set_code, sub_code in (("Sensor", k.RciCode.CStSn, k.RciCode.CAcSn),
                                      ("Motor", k.RciCode.CStMt, k.RciCode.CAcMt)):
        out.append(f"/* Control {group} Type subcodes */")
        out += [_define(f"RCI_{group.upper()}_{sub_name(s)}", f"0x{s:02x}")
                for s in _subs(sub_code)]
        out.append(f"/* Control {group} command codes */")
        ci = reg.COMMAND_ITEMS.get(set_code)
        for (_, byte), (kind, _) in sorted((ci.by_byte if ci else {}).items(),
                                           key=lambda kv: kv[0][1]):
            out.append(_define(f"RCI_{group.upper()}_{command_name(byte, kind)}",
                               f"0x{byte:02x}"))
    out += ["", "/* Protocol version spoken by this library */",
            _define("RCI_VERSION_MAJOR", str(k.RCI_VERSION_MAJOR)),
            _define("RCI_VERSION_MINOR", str(k.RCI_VERSION_MINOR)), END]
    return "\n".join(out) + "\n"


def tables_header() -> str:
    """bsal-wire-tables.h, whole."""
    fixed = [(int(s.code), s.name, len(encode_rci(s.packet())))
             for s in reg.commands() if s.wire is not None and s.wire.shape in FIXED_SHAPES]
    items = [(int(code), sub, int(status), lay.size, getattr(lay.cls, "__name__", "scalar"))
             for code, table in sorted(REPLY_LAYOUTS.items())
             for (sub, status), lay in sorted(table.items())]
    out = [LICENCE.rstrip() + "\n",
           "/*",
           " * bsal-wire-tables.h -- RCI wire lengths, generated from the bsal_ros",
           " * registries (python -m bsal_ros.tools.gen_cpp; do not edit).  A device kind",
           " * or command registered in Python reaches the C++ library by regenerating it.",
           " */",
           "#ifndef BSAL_WIRE_TABLES_H", "#define BSAL_WIRE_TABLES_H", "",
           "/* Whole length (bytes, code included) of a fixed-size packet; -1: not one. */",
           "static inline int rciFixedPacketLen(unsigned base)", "{", "    switch (base) {"]
    out += [f"    case 0x{c:04x}: return {n};    /* {name} */" for c, name, n in fixed]
    out += ["    default: return -1;", "    }", "}", "",
            "/* Data length (bytes) of one item of reply `code` (CGtMtRp, CGtSnRp) for",
            " * sub-code `sub` asked with `status_code`; -1: not a legal combination. */",
            "static inline int rciReplyItemLen(unsigned code, unsigned sub, unsigned status_code)",
            "{", "    switch ((code << 16) | (sub << 8) | status_code) {"]
    out += [f"    case 0x{c:04x}{s:02x}{st:02x}: return {n};    /* {sub_name(s)} {name} */"
            for c, s, st, n, name in items]
    out += ["    default: return -1;", "    }", "}", "",
            "/* Data length (bytes) of one item of id-carrying command `code` whose items",
            " * are of one fixed layout (activations, inquiries, CSmTp, registered",
            " * commands); -1: not one (the Set packets carry a command byte first). */",
            "static inline int rciCommandItemLen(unsigned code)", "{", "    switch (code) {"]
    out += [f"    case 0x{int(s.code):04x}: return {s.wire.layout.size};    /* {s.name} */"
            for s in reg.commands() if s.wire is not None and s.wire.shape == "items"]
    out += ["    default: return -1;", "    }", "}", "", "#endif /* BSAL_WIRE_TABLES_H */"]
    return "\n".join(out) + "\n"


def render_protocols(text: str) -> str:
    """``text`` (a bsal-protocols.h) with its generated block replaced."""
    return replace_block(text, BEGIN, END, protocols_block(), PROTOCOLS)


def outputs(include: Path = INCLUDE) -> dict:
    """{file name: its generated text} (bsal-protocols.h from the one in ``include``)."""
    text = (INCLUDE / PROTOCOLS).read_text(encoding="utf-8")
    return {PROTOCOLS: render_protocols(text), TABLES: tables_header()}


def main(argv=None) -> int:
    """Write the headers, or with --check report which are stale."""
    ap = generator_parser("bsal_ros.tools.gen_cpp", __doc__, "a header")
    ap.add_argument("--out", type=Path, default=INCLUDE, help="folder to write the headers to")
    args = ap.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        ap.refuse(f"--out {args.out} is a file: name a folder (it is created if missing)")
    rc = write_or_check({args.out / name: text for name, text in outputs().items()},
                        args.check, ap.prog, shipped=args.out == INCLUDE)
    if rc == 0 and not args.check and args.out != INCLUDE:
        # the headers replace two of legacy/include's, so their folder must come first
        print(f"{ap.prog}: {' and '.join(outputs())} written to {args.out}: build the "
              f"rci-client library and its programs with -I{args.out} ahead of -I{INCLUDE}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
