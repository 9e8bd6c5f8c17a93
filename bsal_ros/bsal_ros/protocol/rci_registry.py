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

"""The RCI command registry: one :class:`RciCommandSpec` per packet code, from
which every per-code table of the codecs and the session is built.

A spec says what a code is (``code``, ``name``, ``title``), who sends it
(``direction``), how it goes on the wire (``packet`` class, ``sub_codes``
domain, ``wire`` shape), what the control process does with it (``writes``:
changes the robot, refused to a guest; ``tracked``: a status inquiry reports
its status; ``port_methods``: the robot-port methods its handler calls), or
that it is explicitly ``unsupported`` (a reason). Every field is required: a declaration that
leaves one out, or blanks one that its other fields need, fails when it is
built with :class:`RciCommandError` naming the code and the field.

Built from the registry (live: a later :func:`register_command` updates
them): :data:`SUB_CODES`, :data:`COMMAND_ITEMS`, :data:`CODE_OF`,
:data:`CLASS_OF`, and :func:`receives` (the codes each side may receive),
:func:`write_codes`, :func:`tracked_codes`, :func:`all_codes`. The codecs
build their dispatch tables from the ``wire`` shapes; the session (``rci``
layer) keeps the one table of which handler runs each code it dispatches
(:data:`bsal_ros.rci.handlers.HANDLERS`) and checks the port-method names.
Pure protocol: no ROS, no import of ``rci`` or ``nodes``. Brak's own
commands (the book's table 4.8.1) are declared in :mod:`.rci_commands`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ._items import Layout

__all__ = ["RciCommandError", "RciCommandSpec", "Wire", "MISSING", "TO_SERVER", "TO_CLIENT",
           "BOTH", "DIRECTIONS", "WIRE_SHAPES", "register_command", "unregister_command",
           "command", "command_of", "commands", "generation", "receives", "write_codes",
           "tracked_codes", "all_codes", "SUB_CODES", "COMMAND_ITEMS", "CODE_OF", "CLASS_OF"]

#: directions: sent by the control application, by the control process, by either
TO_SERVER, TO_CLIENT, BOTH = "to_server", "to_client", "both"
DIRECTIONS = (TO_SERVER, TO_CLIENT, BOTH)
#: id_code bits that are never part of a base code (RQ_ACK, POLY, GROUP)
_FLAG_BITS = 0x0800 | 0x4000 | 0x8000
#: the multi-format bit: only such codes carry id items (poly/group forms)
_MULTI = 0x0200
#: wire shapes and what each needs: "items" (a Layout), "commands" (a
#: CommandItems), neither; the encoder and decoder each have one builder per shape
WIRE_SHAPES = {"iiid": None, "bare": None, "icaiq": None, "icarp": None,
               "control_id": None, "cstrp": None, "csvtm": None, "cbstm": None,
               "items": "layout", "commands": "commands", "reply": None}
_ID_SHAPES = frozenset({"items", "commands", "reply"})


class RciCommandError(LookupError):
    """An RCI command declaration that is not whole or contradicts itself, or
    a name in it (a port method) that does not resolve, or a command the
    session dispatches without a handler."""


class _Missing:
    """The type of :data:`MISSING`."""

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: the value of a field a declaration left out
MISSING: Any = _Missing()


class Code(int):
    """A base code that knows its acronym (``.name``), as RciCode's members do.

    :param value: the base code.
    :param name: its acronym, without "RCI-".
    """

    def __new__(cls, value: int, name: str):
        obj = super().__new__(cls, value)
        obj.name = name
        return obj

    def __repr__(self) -> str:
        return f"<Code.{self.name}: 0x{int(self):04x}>"


@dataclass(frozen=True)
class Wire:
    """How a packet's body goes on the wire: ``shape`` (a key of
    :data:`WIRE_SHAPES`), with the item ``layout`` of an ``items`` packet or
    the ``commands`` table (command byte + payload) of a Set packet."""

    shape: str
    layout: Layout | None = None
    commands: Any = None


@dataclass(frozen=True, kw_only=True)
class RciCommandSpec:
    """One RCI packet code (see the module docstring)."""

    code: int = MISSING
    name: str = MISSING                 # the book's acronym without "RCI-": "CStMt"
    title: str = MISSING                # the book's packet name: "Set Motor"
    direction: str = MISSING            # TO_SERVER, TO_CLIENT or BOTH
    packet: type | None = MISSING       # the packet class (None: unsupported)
    sub_codes: dict | None = MISSING    # id_sub_code domain (None: no id items)
    wire: Wire | None = MISSING         # body shape (None: unsupported)
    writes: bool = MISSING              # changes the robot: a guest may not send it
    tracked: bool = MISSING             # CStIq reports its status (else NO_SUPPORT)
    port_methods: tuple = MISSING       # RobotPort methods the handler calls
    unsupported: str | None = MISSING   # why the code is not implemented (None: it is)

    def __post_init__(self):
        check_spec(self)
        if not hasattr(self.code, "name"):
            object.__setattr__(self, "code", Code(self.code, self.name))

    @property
    def label(self) -> str:
        """``0x0201 (CStMt)``, for messages."""
        name = self.name if isinstance(self.name, str) and self.name.strip() else "?"
        if not isinstance(self.code, int):
            return f"RCI command {name} (code missing)"
        return f"RCI command 0x{self.code:04x} ({name})"

    @property
    def server_receives(self) -> bool:
        """The control process accepts it from a control application."""
        return self.unsupported is None and self.direction in (TO_SERVER, BOTH)

    @property
    def dispatched(self) -> bool:
        """The session runs it in the control phase (a handler must):
        received from a control application, not an initialization packet."""
        return self.server_receives and self.code >= 0x0100

    @property
    def client_receives(self) -> bool:
        """A control application accepts it from the control process."""
        return self.unsupported is None and self.direction in (TO_CLIENT, BOTH)


def _fail(spec: RciCommandSpec, what: str) -> None:
    raise RciCommandError(f"{spec.label}: {what}")


def check_spec(s: RciCommandSpec) -> None:
    """Check that a declaration is whole and does not contradict itself.

    :param s: the declaration.
    :raises RciCommandError: naming the code and the field, when it is not.
    """
    for f in dataclasses.fields(s):
        if getattr(s, f.name) is MISSING:
            _fail(s, f"field '{f.name}' is missing from its declaration")
    if not isinstance(s.code, int) or isinstance(s.code, bool):
        _fail(s, f"field 'code' must be an int, not {s.code!r}")
    if not 0 < s.code <= 0xFFFF or s.code & _FLAG_BITS:
        _fail(s, "field 'code' must be a base code (16 bits, no RQ_ACK/POLY/GROUP bit)")
    for name in ("name", "title"):
        if not isinstance(getattr(s, name), str) or not getattr(s, name).strip():
            _fail(s, f"field '{name}' is blank")
    if s.direction not in DIRECTIONS:
        _fail(s, f"field 'direction' is {s.direction!r}, not one of {', '.join(DIRECTIONS)}")
    for name in ("writes", "tracked"):
        if not isinstance(getattr(s, name), bool):
            _fail(s, f"field '{name}' must be True or False")
    if not isinstance(s.port_methods, tuple) or not all(
            isinstance(m, str) and m.strip() for m in s.port_methods):
        _fail(s, "field 'port_methods' must be a tuple of method names (a blank one given)")
    if s.unsupported is not None:
        _check_unsupported(s)
    else:
        _check_supported(s)


def _check_unsupported(s: RciCommandSpec) -> None:
    if not isinstance(s.unsupported, str) or not s.unsupported.strip():
        _fail(s, "field 'unsupported' is blank: give the reason, or None when it is supported")
    for name in ("packet", "sub_codes", "wire"):
        if getattr(s, name) is not None:
            _fail(s, f"field '{name}' is set, but the command is unsupported")
    if s.writes or s.tracked or s.port_methods:
        _fail(s, "fields 'writes', 'tracked', 'port_methods' are set, but the command "
              "is unsupported")


def _check_supported(s: RciCommandSpec) -> None:
    if not isinstance(s.packet, type):
        _fail(s, "field 'packet' is blank: the packet class (or 'unsupported' with a reason)")
    if not isinstance(s.wire, Wire) or s.wire.shape not in WIRE_SHAPES:
        _fail(s, f"field 'wire' is blank or of an unknown shape ({s.wire!r}; shapes: "
              f"{', '.join(WIRE_SHAPES)})")
    need = WIRE_SHAPES[s.wire.shape]
    if need == "layout" and not isinstance(s.wire.layout, Layout):
        _fail(s, "field 'wire' of shape 'items' needs its item layout")
    if need == "commands" and s.wire.commands is None:
        _fail(s, "field 'wire' of shape 'commands' needs its command table")
    id_items = s.wire.shape in _ID_SHAPES
    if id_items:
        if not isinstance(s.sub_codes, dict) or not s.sub_codes:
            _fail(s, "field 'sub_codes' is blank: id-carrying packets need their sub-code domain")
        if not s.code & _MULTI:
            _fail(s, "field 'code' lacks the RCI_MULTI bit 0x0200 that id-carrying packets have")
    elif s.sub_codes is not None:
        _fail(s, f"field 'sub_codes' is set, but a '{s.wire.shape}' packet carries no ids")
    if (s.writes or s.tracked) and not s.dispatched:
        _fail(s, "fields 'writes'/'tracked' are for commands a control application sends in "
              "the control phase")
    if s.writes and not s.tracked:
        _fail(s, "field 'tracked' is False, but a command that changes the robot must "
              "report its status to CStIq")
    if (s.writes or (id_items and s.server_receives)) and not s.port_methods:
        _fail(s, "field 'port_methods' is blank: the handler reaches the robot")


# ============================================================ the registry
_SPECS: dict[int, RciCommandSpec] = {}
_NAMES: dict[str, int] = {}
#: code -> id_sub_code domain of every id-carrying packet (the specs' dicts)
SUB_CODES: dict = {}
#: code -> CommandItems of every Set packet
COMMAND_ITEMS: dict = {}
#: packet class -> code, code -> packet class
CODE_OF: dict = {}
CLASS_OF: dict = {}
_derived: dict = {}
_generation = [0]
#: called after every change (the encoder rebuilds its table)
_listeners: list = []


def register_command(spec: RciCommandSpec) -> RciCommandSpec:
    """Add a command; adding the same declaration again is a no-op. The
    encoder's table is rebuilt. Thread: at start, before any encoder or
    decoder runs.

    :param spec: the declaration.
    :returns: ``spec``.
    :raises RciCommandError: the declaration is not whole, or its code, name
        or packet class is another command's.
    """
    check_spec(spec)
    old = _SPECS.get(spec.code)
    if old is not None:
        if old == spec:
            return spec
        _fail(spec, f"code is {old.name}'s")
    if spec.name in _NAMES:
        _fail(spec, f"name is 0x{_NAMES[spec.name]:04x}'s")
    if spec.packet is not None and spec.packet in CODE_OF:
        _fail(spec, f"packet class {spec.packet.__name__} is "
              f"0x{int(CODE_OF[spec.packet]):04x}'s")
    _SPECS[spec.code] = spec
    _NAMES[spec.name] = spec.code
    _rebuild()
    return spec


def unregister_command(code: int) -> None:
    """Forget a command (tests); an unknown code is a no-op.

    :param code: its base code.
    """
    spec = _SPECS.pop(int(code), None)
    if spec is not None:
        _NAMES.pop(spec.name, None)
        _rebuild()


def _rebuild() -> None:
    for table in (SUB_CODES, COMMAND_ITEMS, CODE_OF, CLASS_OF):
        table.clear()
    _derived.clear()
    _generation[0] += 1
    for code, s in sorted(_SPECS.items()):
        if s.unsupported is not None:
            continue
        CODE_OF[s.packet] = code
        CLASS_OF[code] = s.packet
        if s.sub_codes is not None:
            SUB_CODES[code] = s.sub_codes
        if s.wire.shape == "commands":
            COMMAND_ITEMS[code] = s.wire.commands
    for fn in list(_listeners):
        fn()


def _cached(key, build) -> frozenset:
    val = _derived.get(key)
    if val is None:
        val = _derived[key] = frozenset(build())
    return val


def generation() -> int:
    """Count the registry's changes.

    :returns: a number that stays the same while a table built from the
        registry is current.
    """
    return _generation[0]


def command(code: int) -> RciCommandSpec | None:
    """The declaration of a base code.

    :param code: the base code.
    :returns: its spec, or None when it is not registered.
    """
    return _SPECS.get(int(code))


def command_of(packet_class: type) -> RciCommandSpec:
    """The declaration of a packet class.

    :param packet_class: e.g. :class:`CStMt`.
    :returns: its spec.
    :raises KeyError: not a registered packet class.
    """
    return _SPECS[CODE_OF[packet_class]]


def commands() -> list[RciCommandSpec]:
    """Every registered declaration.

    :returns: the specs, by code.
    """
    return [s for _, s in sorted(_SPECS.items())]


def receives(role: str) -> frozenset:
    """The codes a decoder of ``role`` accepts: the supported ones.

    :param role: ``"server"`` (control process), ``"client"`` (control
        application) or ``"any"``.
    :returns: the base codes.
    :raises ValueError: another role.
    """
    if role == "server":
        return _cached(role, lambda: (c for c, s in _SPECS.items() if s.server_receives))
    if role == "client":
        return _cached(role, lambda: (c for c, s in _SPECS.items() if s.client_receives))
    if role == "any":
        return _cached(role, lambda: (c for c, s in _SPECS.items() if s.unsupported is None))
    raise ValueError(f"role must be 'server', 'client' or 'any', not {role!r}")


def all_codes() -> frozenset:
    """Every registered code, the unsupported ones too (known, not implemented).

    :returns: the base codes.
    """
    return _cached("all", lambda: _SPECS)


def write_codes() -> frozenset:
    """The codes that change the robot: a guest may not send them.

    :returns: the base codes.
    """
    return _cached("writes", lambda: (c for c, s in _SPECS.items() if s.writes))


def tracked_codes() -> frozenset:
    """The codes whose status a CStIq reports (any other: NO_SUPPORT).

    :returns: the base codes.
    """
    return _cached("tracked", lambda: (c for c, s in _SPECS.items() if s.tracked))
