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
"""The wire codes of device-kind plugins: the range they take them from and
which plugin holds which (docs/EXTENDING.md, "Sub-codes of plugins").

A plugin of another package gives its kinds RCI sensor sub-codes and RDI
sub-codes in :data:`PLUGIN_SUBS`; the book's codes and the rest of the byte
are Brak's own. :mod:`.plugins` loads every plugin inside :func:`claiming`:
a plugin whose kind takes a code another plugin holds is refused with one
line naming the code and both plugins (the one loaded first, in
:func:`load_order`, keeps it),
and one whose kind takes a code outside the range with one line naming the
code and the range. No ROS, no
hardware imports here.
"""

from __future__ import annotations

from contextlib import contextmanager
import traceback

from . import registry
from ..protocol.constants import RdiCode

#: the RCI sensor sub-codes and RDI sub-codes (of RDI-Sn, -Mt, -Ac) a plugin's
#: kinds may take. The book's RCI sub-codes are 0x80-0xd2, its RDI ones count
#: from 0x01 (0x01-0x04), so both protocols leave this block free.
PLUGIN_SUBS = range(0x10, 0x80)
#: an entry point's value starts so when the kind is Brak's own (setup.py)
BUILTIN_PREFIX = "bsal_ros."

#: (protocol, sub-code) -> (entry-point name, its value, the kind that holds it)
_holders: dict[tuple[str, int], tuple[str, str, str]] = {}


def load_order(entry_points) -> list:
    """``entry_points`` in the order they are loaded: Brak's own first (the
    book's codes are theirs, and a plugin may build on their board types), then
    the others by name, so which of two plugins keeps a contested code does not
    depend on the path's order or on the order a folder lists its files in."""
    return sorted(entry_points, key=lambda ep: (not ep.value.startswith(BUILTIN_PREFIX),
                                                ep.name))


def kind_codes(k: registry.DeviceKind) -> list[tuple[str, int]]:
    """The codes the declaration ``k`` takes, as (protocol, sub-code):
    ``("RCI sensor", sub)`` and ``("RDI-Sn", sub)`` (or ``RDI-Mt``, ``RDI-Ac``)."""
    out = []
    if k.rci is not None:
        out.append(("RCI sensor", int(k.rci.sub)))
    if k.rdi is not None:
        out.append((f"RDI-{RdiCode(k.rdi.code).name}", int(k.rdi.sub)))
    return out


def _held_by(protocol: str, sub: int) -> str | None:
    """The kind the registry now holds a code for (None: free)."""
    if protocol == "RCI sensor":
        return registry.RCI_SENSOR_CLASS.get(sub)
    held = registry.rdi_kind(RdiCode[protocol.removeprefix("RDI-")], sub)
    return None if held is None else held.name


def outside_range(value: str, k: registry.DeviceKind) -> str | None:
    """The line refusing kind ``k`` of the plugin whose entry point is
    ``value`` when one of its codes lies outside :data:`PLUGIN_SUBS` (None:
    all inside, or the plugin is Brak's own)."""
    if value.startswith(BUILTIN_PREFIX):
        return None
    for protocol, sub in kind_codes(k):
        if sub not in PLUGIN_SUBS:
            return (f"kind {k.name!r}: {protocol} sub-code {sub:#04x} is outside the "
                    f"plugins' range {PLUGIN_SUBS.start:#04x}-{PLUGIN_SUBS.stop - 1:#04x}")
    return None


def held_elsewhere(name: str, k: registry.DeviceKind) -> str | None:
    """The line refusing kind ``k`` of plugin ``name`` when another loaded
    plugin's kind holds one of its codes, naming that plugin (None: none does)."""
    for protocol, sub in kind_codes(k):
        holder = _holders.get((protocol, sub))
        if holder is not None and holder[0] != name and _held_by(protocol, sub) == holder[2]:
            return (f"kind {k.name!r}: {protocol} sub-code {sub:#04x} is already held by "
                    f"device-kind plugin {holder[0]!r} ({holder[1]}), which keeps it")
    return None


def _refused_declaration(exc: BaseException) -> registry.DeviceKind | None:
    """The declaration the registry was checking when it raised ``exc``: the
    registry refuses before it registers anything, so the refused kind is found
    only in the frames of its refusal (the innermost frame of ``kinds`` holding one)."""
    if not isinstance(exc, registry.KindError):
        return None
    for frame, _ in reversed(list(traceback.walk_tb(exc.__traceback__))):
        if not frame.f_globals.get("__name__", "").startswith(registry.__package__):
            continue
        for local in frame.f_locals.values():
            if isinstance(local, registry.DeviceKind):
                return local
    return None


@contextmanager
def claiming(name: str, value: str):
    """Load plugin ``name`` (entry-point ``value``) inside this block: on
    leaving it, the codes of the kinds it registered are recorded as its own.
    Raises :class:`~.registry.KindError` with one line when one of its kinds
    takes a code another plugin holds (:func:`held_elsewhere`, in place of the
    registry's refusal, which names the kind only) or one outside the range
    (:func:`outside_range`); what it registered is then for the caller to
    take back. Not thread-safe: plugins load in the importing thread."""
    before = set(registry.device_classes())
    try:
        yield
    except Exception as exc:
        refused = _refused_declaration(exc)
        # a declaration that is not whole keeps the registry's line, which says what it lacks
        why = (refused is not None and not registry.kind_problems(refused)
               and held_elsewhere(name, refused))
        if why:
            raise registry.KindError(why) from exc
        raise
    added = [registry.kind(c) for c in registry.device_classes() if c not in before]
    for k in added:
        why = outside_range(value, k)
        if why:
            raise registry.KindError(why)
    for k in added:
        for code in kind_codes(k):
            _holders[code] = (name, value, k.name)


def holders() -> dict[tuple[str, int], tuple[str, str]]:
    """Every code a loaded plugin holds: (protocol, sub-code) -> (entry-point
    name, its value)."""
    return {code: (n, v) for code, (n, v, _) in _holders.items()}
