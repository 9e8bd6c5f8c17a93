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
"""Generate the tables and item layouts of ``bsal.lua`` from the registries.

The Lua file keeps its dissector logic, one routine per wire shape of
:data:`~bsal_ros.protocol.rci_registry.WIRE_SHAPES`; what each code carries is
the block between ``-- BEGIN GENERATED TABLES`` and ``-- END GENERATED
TABLES``, written here from the RCI command registry and the device-kind
registry (``bsal_ros.kinds``: every kind loaded in this interpreter), so a new
command or kind decodes once the block is regenerated::

    python -m bsal_ros.wireshark.gen_lua           # rewrite bsal.lua in place
    python -m bsal_ros.wireshark.gen_lua --check   # exit 1 if bsal.lua is stale

Each item field is ``{abbrev, fmt, kind, unit}``: ``fmt`` a struct code (B, H,
h, I, i, f), ``kind`` how to show it (uint, int, float, statval, speedval,
mposval, choice: one of ``CHOICES[abbrev]``), ``unit`` the book's unit or "".
"""

from __future__ import annotations

from pathlib import Path
import sys

from bsal_ros import kinds
from bsal_ros.protocol import constants as k
from bsal_ros.protocol import rci_registry as reg
from bsal_ros.protocol import rci_tables as t
from bsal_ros.protocol import rdi as rdi_mod
from bsal_ros.protocol.rci import encode_rci  # noqa: F401  (registers the book's commands)
from bsal_ros.protocol.wire_kinds import rdi_item_layouts
from bsal_ros.tools.gen_common import (command_name, generator_parser, rendered, replace_block,
                                       sub_name, write_or_check)

BEGIN = "-- BEGIN GENERATED TABLES (python -m bsal_ros.wireshark.gen_lua; do not edit)"
END = "-- END GENERATED TABLES"
LUA = Path(__file__).with_name("bsal.lua")

#: units the book gives (001 4.6.10, 4.6.13, 5.4-5.7), by field name
UNITS = {"delay": "us", "accel": "g", "angle": "rad", "direction": "rad", "xpos": "m",
         "ypos": "m", "speed": "m/s", "rotations": "rotations", "count": "counts",
         "d_count": "counts", "seconds": "s", "microseconds": "us", "interval": "ms",
         "x_mm": "mm", "y_mm": "mm", "yaw_mrad": "mrad"}
STATVAL_NAMES = {"status", "d_status", "statval"}
SPEEDVAL_NAMES = {"speed", "speedval"}
#: scalar item layouts (no field names of their own): their field and value names
SCALARS = {id(t.L_ACTIVATE): ("activate", {0: "deactivate", 1: "activate"}),
           id(t.L_MOTOR_INQUIRY): ("motor_status_code",
                                   {int(m): m.name for m in k.GetMotorStatus}),
           id(t.L_SENSOR_INQUIRY): ("sensor_status_code",
                                    {int(m): m.name for m in k.GetSensorStatus})}
#: payloads of Set command bytes (our extensions name them), by command kind
PAYLOADS = {"SPVAL": "speedval", "ULTRASONIC_ORDER": "slot", "ULTRASONIC_TIMING": "interval"}
#: RDI sub-code names the book gives, per code; other sub-codes are named after
#: the device kind that registered them
RDI_SUB_ENUMS = {k.RdiCode.Sn: k.RdiSensorType, k.RdiCode.Mt: k.RdiMotorType,
                 k.RdiCode.Ac: k.RdiActuatorType, k.RdiCode.RbOr: k.RdiOrientType,
                 k.RdiCode.Ms: k.RdiMiscType}


class _Fields:
    """Field specs, one abbrev per (fmt, kind): a name two layouts use with
    different types gets its owner's name in front (``rci.<kind>.count``)."""

    def __init__(self):
        self.seen: dict = {}
        self.choices: dict = {}

    def field(self, name: str, fmt: str, owner: str, choices=None) -> str:
        kind = {"f": "float", "h": "int", "i": "int"}.get(fmt, "uint")
        if choices is not None:
            kind = "choice"
        elif fmt == "I" and name in STATVAL_NAMES:
            kind = "statval"
        elif fmt == "H" and name in SPEEDVAL_NAMES:
            kind, name = "speedval", "speedval"
        elif fmt == "I" and name == "mposval":
            kind = "mposval"
        abbrev = name
        if self.seen.setdefault(abbrev, (fmt, kind)) != (fmt, kind):
            abbrev = f"{owner.lower()}.{name}"
            self.seen.setdefault(abbrev, (fmt, kind))
        if choices is not None:
            self.choices[abbrev] = choices
        unit = UNITS.get(name, "") if kind in ("uint", "int", "float") else ""
        return f'{{"{abbrev}", "{fmt}", "{kind}", "{unit}"}}'

    def layout(self, lay, owner: str) -> str:
        """A Layout's fields as a Lua list."""
        if lay.cls is None:
            name, choices = SCALARS.get(id(lay), (f"{owner.lower()}_value", None))
            if choices is None and lay.allowed is not None:
                choices = {v: str(v) for v in sorted(lay.allowed)}
            return "{" + self.field(name, lay.fmt, owner, choices) + "}"
        names = lay.cls._fields[:lay.k]
        return "{" + ", ".join(self.field(n, c, owner) for n, c in zip(names, lay.fmt)) + "}"


def _names(pairs) -> str:
    return "{" + ", ".join(f'[0x{int(v):02x}] = "{n}"' for v, n in pairs) + "}"


def _enum(enum) -> str:
    return _names((m, m.name) for m in enum)


def _set(codes) -> str:
    return "{" + ", ".join(f"[0x{int(c):04x}] = true" for c in sorted(codes)) + "}"


def _rdi_sub_name(code: int, sub: int) -> str:
    enum = RDI_SUB_ENUMS.get(code)
    if enum is not None and sub in enum._value2member_map_:
        return enum(sub).name
    kind = kinds.rdi_kind(code, sub)
    return kind.name.upper() if kind else f"0x{sub:02x}"


def _rci_tables(f: _Fields) -> list[str]:
    specs = reg.commands()
    out = ["local RCI_CODES = {" + ", ".join(
        f'[0x{int(s.code):02x}] = "{s.name}"' for s in specs) + "}"]
    out.append("local RCI_SHAPES = {" + ", ".join(
        f'[0x{int(s.code):04x}] = "{s.wire.shape}"' for s in specs if s.wire) + "}")
    out.append("local RCI_FLAGS = {" + ", ".join(f"{m.name} = 0x{int(m):04x}" for m in k.RciFlag)
               + "}")
    out.append(f"local RCI_FROM_CA = {_set(reg.receives('server'))}")
    out.append(f"local RCI_FROM_CP = {_set(reg.receives('client'))}")
    for name, enum in (("CSTRP_STATUS", k.CStRpStatus), ("TERM_CODES", k.TermCode),
                       ("CAP_INQUIRY", k.CapInquiry), ("CAP_REPLY", k.CapReply)):
        out.append(f"local {name} = {_enum(enum)}")
    out.append("local RCI_SUBS = {" + ", ".join(
        f"[0x{int(c):04x}] = " + _names((s, sub_name(int(s), subs[s])) for s in sorted(subs))
        for c, subs in sorted(reg.SUB_CODES.items())) + "}")
    # a reply answers the inquiry one code below it (ICaIq/ICaRp, CGt*Iq/CGt*Rp)
    replies = {int(s.code): int(s.code) - 1 for s in specs
               if s.wire and s.wire.shape in ("reply", "icarp")}
    for r, q in replies.items():
        inquiry = reg.command(q)
        if inquiry is None or inquiry.wire.shape not in ("items", "icaiq"):
            raise ValueError(f"reply 0x{r:04x} follows no inquiry at 0x{q:04x}")
    out.append("local INQUIRY_OF = {" + ", ".join(
        f"[0x{r:04x}] = 0x{q:04x}" for r, q in sorted(replies.items())) + "}")
    out.append("local RCI_ASKS = " + _set(q for r, q in replies.items()
                                          if reg.command(r).wire.shape == "reply"))
    out.append("local RCI_ITEMS = {" + ", ".join(
        f"[0x{int(s.code):04x}] = {f.layout(s.wire.layout, s.name)}"
        for s in specs if s.wire and s.wire.shape == "items") + "}")
    cmds = []
    for code, ci in sorted(reg.COMMAND_ITEMS.items()):
        per_sub: dict = {}
        for (sub, byte), (kind, fmt) in sorted(ci.by_byte.items()):
            payload = PAYLOADS.get(kind.name, kind.name.lower())
            lay = "{" + f.field(payload, fmt, reg.command(code).name) + "}" if fmt else "{}"
            per_sub.setdefault(sub, []).append(
                f'[0x{byte:02x}] = {{"{command_name(byte, kind)}", {lay}}}')
        cmds.append(f'[0x{int(code):04x}] = {{field = "{ci.what}_command", ' + ", ".join(
            f"[0x{s:02x}] = {{{', '.join(v)}}}" for s, v in per_sub.items()) + "}")
    out.append("local RCI_COMMANDS = {" + ", ".join(cmds) + "}")
    reply_tables = []
    for code, table in sorted(t.REPLY_LAYOUTS.items()):
        per_sub = {}
        for (sub, status), lay in sorted(table.items()):
            per_sub.setdefault(int(sub), []).append(
                f"[0x{int(status):02x}] = {f.layout(lay, sub_name(int(sub)))}")
        reply_tables.append(f"[0x{int(code):04x}] = {{" + ", ".join(
            f"[0x{s:02x}] = {{{', '.join(v)}}}" for s, v in per_sub.items()) + "}")
    out.append("local RCI_REPLIES = {" + ", ".join(reply_tables) + "}")
    return out


def _rdi_tables(f: _Fields) -> list[str]:
    out = [f"local RDI_CODES = {_enum(k.RdiCode)}"]
    out.append("local RDI_FLAGS = {" + ", ".join(f"{m.name} = 0x{int(m):04x}" for m in k.RdiFlag)
               + "}")
    items = rdi_item_layouts()
    plain = _rdi_plain()
    subs: dict = {}
    for code, sub in [*items, *plain]:
        subs.setdefault(code, []).append((sub, _rdi_sub_name(code, sub)))
    out.append("local RDI_SUBS = {" + ", ".join(
        f"[0x{c:04x}] = {_names(sorted(v))}" for c, v in sorted(subs.items())) + "}")
    for name, table in (("RDI_ITEMS", items), ("RDI_PLAIN", plain)):
        per_code: dict = {}
        for (code, sub), lay in sorted(table.items()):
            per_code.setdefault(code, []).append(
                f"[0x{sub:02x}] = {f.layout(lay, _rdi_sub_name(code, sub))}")
        out.append(f"local {name} = {{" + ", ".join(
            f"[0x{c:04x}] = {{{', '.join(v)}}}" for c, v in per_code.items()) + "}")
    return out


class _Plain:
    """A stand-in Layout of an RDI packet without ids (orientation, base time)."""

    def __init__(self, fmt: str, names):
        self.fmt, self.k, self.allowed = fmt, len(fmt), None
        self.cls = type("Plain", (), {"_fields": tuple(names)})


def _rdi_plain() -> dict:
    """(code, sub) -> layout of the RDI packets without ids, from the decoder's plans."""
    import dataclasses
    out = {}
    for key, plan in sorted(rdi_mod._PLANS[">"].items()):
        if plan[0] in (3, 4):     # no id: orientation, base time
            fmt = plan[4].format.lstrip("<>").replace("x", "")
            names = ([fl.name for fl in dataclasses.fields(plan[1])] if plan[0] == 3
                     else ["seconds", "microseconds"])
            out[(key >> 8, key & 0xFF)] = _Plain(fmt, names)
    return out


def tables() -> str:
    """The generated Lua block, markers included."""
    f = _Fields()
    out = [BEGIN, f"local RCI_VERSION = {{{k.RCI_VERSION_MAJOR}, {k.RCI_VERSION_MINOR}}}"]
    out += _rci_tables(f)
    out += _rdi_tables(_Fields())     # RDI has its own field names (rdi.*)
    out.append("local CHOICES = {" + ", ".join(
        f'["{a}"] = ' + "{" + ", ".join(f'[{v}] = "{n}"' for v, n in sorted(c.items())) + "}"
        for a, c in sorted(f.choices.items())) + "}")
    out.append(END)
    return "\n".join(out) + "\n"


def render(text: str) -> str:
    """``text`` (a bsal.lua) with its generated block replaced by :func:`tables`."""
    return replace_block(text, BEGIN, END, tables(), LUA.name)


def main(argv=None) -> int:
    """Rewrite bsal.lua's generated block, or with --check report whether it is stale."""
    ap = generator_parser("bsal_ros.wireshark.gen_lua", __doc__, "bsal.lua")
    ap.add_argument("--lua", type=Path, default=LUA,
                    help="the dissector file: bsal.lua, or a copy of it to regenerate")
    args = ap.parse_args(argv)
    fix = (f"--lua names a copy of {LUA} (copy it there first: its generated block is "
           f"rewritten in place)")
    return write_or_check(rendered(ap, [args.lua], lambda text, _: render(text), fix),
                          args.check, ap.prog, shipped=args.lua == LUA)


if __name__ == "__main__":
    sys.exit(main())
