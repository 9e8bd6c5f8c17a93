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

"""Generate the documentation's tables from the registries.

A table lives in a Markdown file between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``; this module writes each from the RCI command
registry, the protocol constants and the device-kind registry (every kind
loaded in this interpreter)::

    python -m bsal_ros.tools.gen_docs           # rewrite every generated table
    python -m bsal_ros.tools.gen_docs --check   # exit 1 naming each stale one

Tables: ``rci_codes``, ``rci_directions``, ``rci_constants``, ``rci_items``
(docs/PROTOCOL.md), ``write_commands`` (docs/SECURITY.md), ``rci_to_ros``
(README.md and docs/INTERFACES.md), ``kind_parameters`` and
``kind_description_keys`` (docs/INTERFACES.md: what the loaded device kinds
and board types declare).
"""

from __future__ import annotations

from pathlib import Path
import re
import sys

from bsal_ros.kinds.registry import declared_keys, declared_params
from bsal_ros.protocol import constants as k
from bsal_ros.protocol import rci_registry as reg
from bsal_ros.protocol.rci import encode_rci  # noqa: F401  (registers the book's commands)
from bsal_ros.protocol.rci_tables import REPLY_LAYOUTS
from bsal_ros.rci.handlers import HANDLERS, ignore
from bsal_ros.tools.gen_common import (command_name, generator_parser, rendered, sub_name,
                                       write_or_check)

REPO = Path(__file__).resolve().parents[3]
FILES = ("README.md", "docs/PROTOCOL.md", "docs/SECURITY.md", "docs/INTERFACES.md")
BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end generated -->)", re.S)
SENT_BY = {reg.TO_SERVER: "CA", reg.TO_CLIENT: "CP", reg.BOTH: "both"}
#: C types of the struct codes, as the book writes them
C_TYPES = {"B": "guint8", "H": "guint16", "h": "gint16", "I": "guint32", "i": "gint32",
           "f": "float"}
#: value kinds the book names by their field
VALUE_TYPES = {"statval": "statval(4)", "speedval": "speedval(2)", "mposval": "mposval(4)",
               "status": "statval(4)"}
#: what each robot-port method (RciCommandSpec.port_methods) is on the ROS side
#: (nodes/rci_ros_port.py); None: bookkeeping (device_ids: the ids list_devices
#: gave at start) with no ROS call of its own
PORT_ROS = {"reset": "service `reset`", "activate": "service `activate_devices`",
            "set_motors": "service `set_motors`", "home_steering": "action `home_steering`",
            "clear_encoders": "service `clear_encoders`",
            "set_sonar_timing": "service `set_sonar_timing`",
            "cached": "topic `device_states` (cache)",
            "fetch": "service `get_device_states` (cache too old)",
            "device_ids": None,
            "sim_teleport": "service `sim_control` (teleport)", "delivered": None}
CONSTANT_GROUPS = (("Get Motor status (`RCI_CGTMTST_*`)", k.GetMotorStatus),
                   ("Get Sensor status (`RCI_CGTSNST_*`)", k.GetSensorStatus),
                   ("Status reply (`RCI_CSTRP_*`)", k.CStRpStatus),
                   ("Server termination (`RCI_CSVTM_*`)", k.TermCode),
                   ("Capability inquiry (`RCI_ICAIQ_*`)", k.CapInquiry),
                   ("Capability reply (`RCI_ICARP_*`)", k.CapReply))


def _subs(code) -> list:
    domain = reg.SUB_CODES.get(code, {})
    return [(int(s), sub_name(int(s), m)) for s, m in sorted(domain.items())]


def rci_codes() -> str:
    """PROTOCOL.md 3.1: every registered code and its title."""
    rows = ["| packet | code |", "|---|---|"]
    rows += [f"| RCI-{s.name}{' (CAtSn)' if s.name == 'CAcSn' else ''} {s.title} "
             f"| 0x{int(s.code):04x} |" for s in reg.commands()]
    return "\n".join(rows)


def rci_directions() -> str:
    """PROTOCOL.md 3.1: who sends each code, may a guest, does CStIq report it."""
    rows = ["| packet | sent by | guest | CStIq |", "|---|---|---|---|"]
    for s in reg.commands():
        control = s.code >= 0x0100 and s.server_receives
        guest = ("refused" if s.writes else "allowed") if control else "-"
        rows.append(f"| {s.name} | {SENT_BY[s.direction]} | {guest} | "
                    f"{'reported' if s.tracked else '-'} |")
    return "\n".join(rows)


def rci_constants() -> str:
    """PROTOCOL.md 3.1: the status-code groups, sub-codes and command bytes."""
    rows = ["| group | constants |", "|---|---|"]
    for title, enum in CONSTANT_GROUPS:
        rows.append(f"| {title} | " + ", ".join(f"{m.name} 0x{int(m):02x}" for m in enum) + " |")
    for group, acts, sets in (("Sensor", k.RciCode.CAcSn, k.RciCode.CStSn),
                              ("Motor", k.RciCode.CAcMt, k.RciCode.CStMt)):
        rows.append(f"| {group} sub-codes (`RCI_{group.upper()}_*`) | "
                    + ", ".join(f"{n} 0x{s:02x}" for s, n in _subs(acts)) + " |")
        ci = reg.COMMAND_ITEMS.get(sets)
        cmds = sorted(((b, command_name(b, kind)) for (_, b), (kind, _) in ci.by_byte.items()))
        rows.append(f"| {group} commands | " + ", ".join(f"{n} 0x{b:02x}" for b, n in cmds) + " |")
    return "\n".join(rows)


def _layout_text(lay) -> str:
    """An item layout as the book writes one: ``delay(guint16)``."""
    if lay.cls is None:
        values = sorted(lay.allowed or ())
        for enum in (k.GetMotorStatus, k.GetSensorStatus):
            if values and all(v in enum._value2member_map_ for v in values):
                names = [f"0x{v:02x} {enum(v).name}" for v in values]
                return "`status_code(1)`: " + ", ".join(names)
        return f"`{C_TYPES[lay.fmt]}`" + (f" {' / '.join(map(str, values))}" if values else "")
    parts = []
    for name, fmt in zip(lay.cls._fields[:lay.k], lay.fmt):
        parts.append(VALUE_TYPES.get(name) if fmt in "HI" and name in VALUE_TYPES
                     else f"{name}({C_TYPES[fmt]})")
    return "`" + " ".join(parts) + "`"


def rci_items() -> str:
    """PROTOCOL.md 3.4: the item data of every id-carrying code per sub-code."""
    rows = ["| packet | sub-codes | item data |", "|---|---|---|"]
    for s in reg.commands():
        if s.wire is None or s.sub_codes is None:
            continue
        names = ", ".join(n for _, n in _subs(s.code))
        if s.wire.shape == "items":
            rows.append(f"| {s.name} | {names} | {_layout_text(s.wire.layout)} |")
        elif s.wire.shape == "commands":
            for sub, sname in _subs(s.code):
                cmds = [f"`0x{b:02x}{' ' + C_TYPES[fmt] if fmt else ''}` "
                        f"({command_name(b, kind)})"
                        for (cs, b), (kind, fmt) in sorted(s.wire.commands.by_byte.items())
                        if cs == sub]
                rows.append(f"| {s.name} | {sname} | {' or '.join(cmds)} |")
        elif s.wire.shape == "reply":
            for (sub, status), lay in sorted(REPLY_LAYOUTS[s.code].items()):
                rows.append(f"| {s.name} | {sub_name(int(sub))} | {status.name} asked: "
                            f"{_layout_text(lay)} |")
    return "\n".join(rows)


def write_commands() -> str:
    """SECURITY.md: the commands that change the robot (refused to a guest)."""
    return "\n".join(f"* RCI-{s.name} ({s.title}, 0x{int(s.code):04x})"
                     for s in reg.commands() if s.writes)


def rci_to_ros() -> str:
    """README and INTERFACES: the ROS interfaces behind each command a CA sends."""
    rows = ["| RCI packet | ROS |", "|---|---|"]
    for s in reg.commands():
        if not s.dispatched or HANDLERS.get(int(s.code)) is ignore:
            continue
        # a command re-reads the cache after it (cached, fetch): shown for the Get inquiries
        ros = [PORT_ROS.get(m, f"robot-port method `{m}`") for m in s.port_methods
               if PORT_ROS.get(m, m) and not (s.writes and m in ("cached", "fetch"))]
        rows.append(f"| {s.title} ({s.name}, 0x{int(s.code):04x}) | "
                    f"{'; '.join(ros) if ros else 'answered by the gateway itself'} |")
    return "\n".join(rows)


def default_cell(default) -> str:
    """A default as every parameter table of INTERFACES.md writes it, the
    generated ones and those written by hand (test/param_consistency.py
    holds the hand-written rows to it): ``true``, a string in backquotes
    (``""`` for the empty one), else the value's ``repr``."""
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, str):
        return f"`{default}`" if default else '`""`'
    return repr(default)


def range_cell(spec) -> str:
    """A range or choices as every parameter table of INTERFACES.md writes
    them, before the ", **run time**" of a parameter that changes at run time:
    the choices in backquotes joined by " / ", ``low..high``, or ``-``."""
    if spec.choices:
        return " / ".join(f"`{c}`" for c in spec.choices)
    if spec.low is not None:
        return f"{spec.low:g}..{spec.high:g}"
    return "-"


def _range_text(spec) -> str:
    """The range cell of a generated row, with its run-time mark."""
    return range_cell(spec) + (", **run time**" if spec.dynamic else "")


def kind_parameters() -> str:
    """INTERFACES.md, hardware_node: the parameters the loaded device kinds
    and board types bring (their ``params`` records), in its table's columns."""
    rows = [f"| `{name}` | {default_cell(default)} | {_range_text(spec)} | "
            f"{spec.description} ({what} `{owner}`) |"
            for what, owner, rec in declared_params()
            for name, (default, spec) in rec.specs().items()]
    if not rows:
        return "(none: no loaded device kind or board type brings a parameter)"
    return "\n".join(["| name | default | range | meaning |", "|---|---|---|---|"] + rows)


def kind_description_keys() -> str:
    """INTERFACES.md, hardware_node: the robot-description keys the loaded
    board types and device kinds declare for their entries (``keys`` records)."""
    rows = []
    for what, owner, rec in declared_keys():
        entry = (f"robot.boards.<{owner} board>" if what == "board type"
                 else f"robot.devices.{owner}.<name>")
        rows += [f"| `{entry}` | `{name}` | {default_cell(default)} | {_range_text(spec)} | "
                 f"{spec.description} |" for name, (default, spec) in rec.specs().items()]
    if not rows:
        return "(none: no loaded board type or device kind declares a key of its own)"
    return "\n".join(["| entry | key | default | range | meaning |", "|---|---|---|---|---|"]
                     + rows)


TABLES = {f.__name__: f for f in (rci_codes, rci_directions, rci_constants, rci_items,
                                  write_commands, rci_to_ros, kind_parameters,
                                  kind_description_keys)}


def render(text: str, where: str = "") -> str:
    """``text`` with each generated block rewritten; an unknown name is a ValueError."""
    def block(m):
        if m[2] not in TABLES:
            raise ValueError(f"{where}: unknown generated table {m[2]!r} "
                             f"(known: {', '.join(TABLES)})")
        return f"{m[1]}{TABLES[m[2]]()}\n{m[4]}"
    return BLOCK.sub(block, text)


def main(argv=None) -> int:
    """Rewrite the generated tables, or with --check report the stale files."""
    ap = generator_parser("bsal_ros.tools.gen_docs", __doc__, "a table")
    ap.add_argument("--root", type=Path, default=REPO, help="the repository")
    args = ap.parse_args(argv)
    paths = [args.root / name for name in FILES]
    fix = f"--root names the repository, the folder holding {', '.join(FILES)}"
    return write_or_check(rendered(ap, paths, lambda text, p: render(text, p.name), fix),
                          args.check, ap.prog, shipped=args.root == REPO)


if __name__ == "__main__":
    sys.exit(main())
