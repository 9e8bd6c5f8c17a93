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
"""Generate the code tables and item layouts of ``bsal.lua`` from bsal_ros.protocol.

The Lua file keeps its hand-written dissector logic; only the block between
``-- BEGIN GENERATED TABLES`` and ``-- END GENERATED TABLES`` is written here::

    python -m bsal_ros.wireshark.gen_lua           # rewrite bsal.lua in place
    python -m bsal_ros.wireshark.gen_lua --check   # exit 1 if bsal.lua is stale

Each item field is ``{abbrev, fmt, kind, unit}``: ``fmt`` a struct code (B, H,
h, I, i, f), ``kind`` how to show it (uint, int, float, statval, speedval,
mposval), ``unit`` the book's unit or "".
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
import sys

from bsal_ros.protocol import constants as k
from bsal_ros.protocol import rci_registry as reg
from bsal_ros.protocol import rci_tables as t
from bsal_ros.protocol import rdi as rdi_mod
from bsal_ros.protocol.rci import encode_rci  # noqa: F401  (registers the book's commands)

BEGIN = "-- BEGIN GENERATED TABLES (python -m bsal_ros.wireshark.gen_lua; do not edit)"
END = "-- END GENERATED TABLES"
LUA = Path(__file__).with_name("bsal.lua")

#: units the book gives (001 4.6.10, 4.6.13, 5.4-5.7), by field name
UNITS = {"delay": "us", "accel": "g", "angle": "rad", "direction": "rad", "xpos": "m",
         "ypos": "m", "speed": "m/s", "rotations": "rotations", "count": "counts",
         "d_count": "counts", "seconds": "s", "microseconds": "us"}
STATVAL_NAMES = {"status", "d_status", "statval"}
SPEEDVAL_NAMES = {"speed", "speedval"}


def _field(name: str, fmt: str) -> str:
    """One item field as a Lua table constructor."""
    kind = {"f": "float", "h": "int", "i": "int"}.get(fmt, "uint")
    abbrev = name
    if fmt == "I" and name in STATVAL_NAMES:
        kind = "statval"
    elif fmt == "H" and name in SPEEDVAL_NAMES:
        kind, abbrev = "speedval", "speedval"
    elif fmt == "I" and name == "mposval":
        kind = "mposval"
    unit = UNITS.get(name, "") if kind in ("uint", "int", "float") else ""
    return f'{{"{abbrev}", "{fmt}", "{kind}", "{unit}"}}'


def _fields(names, fmt: str) -> str:
    return "{" + ", ".join(_field(n, c) for n, c in zip(names, fmt)) + "}"


def _sub_name(sub) -> str:
    """A sub-code's name: the constant's, or for one a kind registered at run time
    (wire_kinds keeps plain numbers) its hex value."""
    return getattr(sub, "name", None) or f"0x{int(sub):02x}"


def _names(enum) -> str:
    return "{" + ", ".join(f'[0x{int(m):02x}] = "{m.name}"' for m in enum) + "}"


def _set(codes) -> str:
    return "{" + ", ".join(f"[0x{int(c):04x}] = true" for c in sorted(codes)) + "}"


def tables() -> str:
    """The generated Lua block, markers included."""
    out = [BEGIN, f"local RCI_VERSION = {{{k.RCI_VERSION_MAJOR}, {k.RCI_VERSION_MINOR}}}"]
    out.append("local RCI_CODES = {" + ", ".join(
        f'[0x{int(s.code):02x}] = "{s.name}"' for s in reg.commands()) + "}")
    out.append("local RCI_FLAGS = {" + ", ".join(f"{f.name} = 0x{int(f):04x}" for f in k.RciFlag)
               + "}")
    out.append(f"local RCI_FROM_CA = {_set(reg.receives('server'))}")
    out.append(f"local RCI_FROM_CP = {_set(reg.receives('client'))}")
    for name, enum in (("GET_MOTOR_STATUS", k.GetMotorStatus),
                       ("GET_SENSOR_STATUS", k.GetSensorStatus),
                       ("CSTRP_STATUS", k.CStRpStatus), ("TERM_CODES", k.TermCode),
                       ("CAP_INQUIRY", k.CapInquiry), ("CAP_REPLY", k.CapReply),
                       ("SENSOR_TYPES", k.SensorType), ("MOTOR_TYPES", k.MotorType),
                       ("SENSOR_COMMANDS", k.SensorCommandCode),
                       ("MOTOR_COMMANDS", k.MotorCommandCode)):
        out.append(f"local {name} = {_names(enum)}")
    out.append("local RCI_SUBS = {" + ", ".join(
        f"[0x{int(c):04x}] = {{" + ", ".join(f'[0x{s:02x}] = "{_sub_name(e)}"'
                                             for s, e in subs.items()) + "}"
        for c, subs in sorted(reg.SUB_CODES.items())) + "}")
    acts = {0: "deactivate", 1: "activate"}
    out.append("local ACTIVATE_VALUES = {" + ", ".join(
        f'[{v}] = "{acts[v]}"' for v in sorted(t.L_ACTIVATE.allowed)) + "}")
    cmds = []
    for code, ci in sorted(reg.COMMAND_ITEMS.items()):
        per_sub: dict = {}
        for (sub, byte), (kind, fmt) in sorted(ci.by_byte.items()):
            per_sub.setdefault(sub, []).append(
                f'[0x{byte:02x}] = {{"{kind.name}", "{fmt}"}}')
        cmds.append(f"[0x{int(code):04x}] = {{" + ", ".join(
            f"[0x{s:02x}] = {{{', '.join(v)}}}" for s, v in per_sub.items()) + "}")
    out.append("local RCI_COMMANDS = {" + ", ".join(cmds) + "}")
    replies = []
    for code, table in ((k.RciCode.CGtMtRp, t.MOTOR_REPLY), (k.RciCode.CGtSnRp, t.SENSOR_REPLY)):
        per_sub = {}
        for (sub, status), lay in sorted(table.items()):
            per_sub.setdefault(int(sub), []).append(
                f"[0x{int(status):02x}] = {_fields(lay.cls._fields, lay.fmt)}")
        replies.append(f"[0x{int(code):04x}] = {{" + ", ".join(
            f"[0x{s:02x}] = {{{', '.join(v)}}}" for s, v in per_sub.items()) + "}")
    out.append("local RCI_REPLIES = {" + ", ".join(replies) + "}")
    out.append(f"local RDI_CODES = {_names(k.RdiCode)}")
    out.append("local RDI_FLAGS = {" + ", ".join(f"{f.name} = 0x{int(f):04x}" for f in k.RdiFlag)
               + "}")
    subs_enum = {k.RdiCode.Sn: k.RdiSensorType, k.RdiCode.Mt: k.RdiMotorType,
                 k.RdiCode.Ac: k.RdiActuatorType, k.RdiCode.RbOr: k.RdiOrientType,
                 k.RdiCode.Ms: k.RdiMiscType}
    out.append("local RDI_SUBS = {" + ", ".join(
        f"[0x{int(c):04x}] = {_names(e)}" for c, e in subs_enum.items()) + "}")
    per_code: dict = {}
    for (code, sub), lay in sorted(rdi_mod._LAYOUT_BY_INT.items()):
        per_code.setdefault(code, []).append(f"[0x{sub:02x}] = {_fields(lay.cls._fields, lay.fmt)}")
    out.append("local RDI_ITEMS = {" + ", ".join(
        f"[0x{c:04x}] = {{{', '.join(v)}}}" for c, v in per_code.items()) + "}")
    plain = {}
    for key, plan in sorted(rdi_mod._PLANS[">"].items()):
        if plan[0] in (3, 4):     # no id: orientation, base time
            fmt = plan[4].format.lstrip("<>").replace("x", "")
            names = ([f.name for f in dataclasses.fields(plan[1])] if plan[0] == 3
                     else ["seconds", "microseconds"])
            plain.setdefault(key >> 8, []).append(f"[0x{key & 0xff:02x}] = {_fields(names, fmt)}")
    out.append("local RDI_PLAIN = {" + ", ".join(
        f"[0x{c:04x}] = {{{', '.join(v)}}}" for c, v in plain.items()) + "}")
    out.append(END)
    return "\n".join(out) + "\n"


def render(text: str) -> str:
    """``text`` (a bsal.lua) with its generated block replaced by :func:`tables`."""
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END + "\n")
    if not sep or not sep2:
        raise ValueError(f"{LUA.name}: generated-table markers not found")
    return head + tables() + tail


def main(argv=None) -> int:
    """Rewrite bsal.lua's generated block, or with --check report whether it is stale."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if bsal.lua is stale")
    ap.add_argument("--lua", type=Path, default=LUA, help="the dissector file")
    args = ap.parse_args(argv)
    text = args.lua.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print(f"{args.lua} is stale: run python -m bsal_ros.wireshark.gen_lua")
            return 1
        return 0
    if new != text:
        args.lua.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
