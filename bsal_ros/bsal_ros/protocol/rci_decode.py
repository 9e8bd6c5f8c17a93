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

"""The RCI stream decoder (seed 001 chapter 4): header checks and the parsers
of every packet whose layout the packet itself defines.

``RciDecoder(byteorder="big", role="server"|"client"|"any")``; ``feed(data)
-> list[packet]``. ``role`` is the side that *receives*: a server decoder
accepts what a control application may send, a client decoder what a control
process may send. Replies decoded against an inquiry live in
:mod:`.rci_replies`.
"""

from __future__ import annotations

from collections import deque

# _items and _stream are private to this package: its codecs share them
from . import rci_commands  # noqa: F401  (registers the book's commands)
from ._items import Bad, decode_fixed, decode_var, F_GENERAL, F_GROUP, F_POLY, S
from ._stream import StreamDecoder
from .rci_packets import (CBsTm, CSvTm, FLAG_GROUP, FLAG_POLY, FLAG_RQ_ACK, FLAGS, ICaIq, IIId,
                          IIID_SIZE)
from .rci_registry import (all_codes, CLASS_OF, command, COMMAND_ITEMS, commands, receives,
                           SUB_CODES)
from .rci_replies import ReplyMatching
from .rci_tables import INQ_TYPES, TERM_CODES
from .values import Timeval

__all__ = ["RciDecoder"]

# ====================================================================== decoding
_VALID: dict = {}


def _valid_codes(allowed: frozenset) -> dict:
    """id_code -> (base, flags) for every id_code that passes the header checks of
    :meth:`RciDecoder._parse` for a decoder receiving ``allowed`` base codes."""
    table = _VALID.get(allowed)
    if table is None:
        table = {}
        for base in allowed:
            for flags in (0, FLAG_RQ_ACK, FLAG_POLY, FLAG_POLY | FLAG_RQ_ACK, FLAG_GROUP,
                          FLAG_GROUP | FLAG_RQ_ACK):
                if (flags & (FLAG_POLY | FLAG_GROUP)) and not base & 0x0200:
                    continue
                if (flags & FLAG_RQ_ACK) and base < 0x0100:
                    continue
                table[base | flags] = (base, flags)
        _VALID[allowed] = table
    return table


class RciDecoder(ReplyMatching, StreamDecoder):
    """Streaming RCI decoder (see the module docstring).

    :param byteorder: ``"big"`` (the wire's default) or ``"little"``.
    :param role: ``"server"`` decodes what a control application sends (the
        gateway side), ``"client"`` what the control process sends, ``"any"``
        every packet (for dump tools). A packet not valid in that direction is
        a :class:`ProtocolError` from :meth:`feed`.
    :raises ValueError: an unknown ``role`` or ``byteorder``.
    """

    def __init__(self, byteorder: str = "big", role: str = "server"):
        super().__init__(byteorder)
        self._allowed = receives(role)      # ValueError for an unknown role
        self.role = role
        self._pending: deque = deque()
        #: an ICaIq waits for its ICaRp (dropped by the first control packet)
        self._icaiq_pending = False
        self._valid = _valid_codes(self._allowed)
        pfx = self._pfx
        self._u16 = S(pfx + "H")
        shapes = self._shapes()
        self._parsers = {int(spec.code): shapes[spec.wire.shape](spec) for spec in commands()
                         if spec.code in self._allowed}

    def _shapes(self) -> dict:
        """Wire shape (rci_registry.WIRE_SHAPES) -> parser builder(spec)."""
        return {
            "iiid": lambda s: self._p_iiid, "bare": lambda s: self._p_bare,
            "icaiq": lambda s: self._p_icaiq, "icarp": lambda s: self._p_icarp,
            "control_id": lambda s: self._p_control_id, "cstrp": lambda s: self._p_cstrp,
            "csvtm": lambda s: self._p_csvtm, "cbstm": lambda s: self._p_cbstm,
            "items": lambda s: self._p_fixed(s.wire.layout),
            "commands": lambda s: self._p_commands, "reply": lambda s: self._p_reply,
        }

    def reset(self) -> None:
        """Forget buffered bytes and the pending inquiries (new connection)."""
        super().reset()
        self.clear_expectations()

    # ------------------------------------------------------------- parsing
    def _parse(self, buf, pos):
        (code,) = self._u16.unpack_from(buf, pos)
        hdr = self._valid.get(code)
        if hdr is not None:                 # a valid id_code: one lookup for all checks
            base, flags = hdr
            if self._icaiq_pending and base >= 0x0100:
                self._drop_capability_inquiries()
            return self._parsers[base](buf, pos, base, flags)
        base = code & ~FLAGS
        if base not in all_codes():
            raise Bad(f"unknown RCI code 0x{code:04x}", pos, 2)
        spec = command(base)
        if spec.unsupported is not None:
            raise Bad(f"{spec.name} (0x{base:04x}) is not supported: {spec.unsupported}", pos, 2)
        if base not in self._allowed:
            raise Bad(f"{spec.name} not valid towards the {self.role}", pos, 2)
        flags = code & FLAGS
        if flags:
            if (flags & FLAG_POLY) and (flags & FLAG_GROUP):
                raise Bad(f"both POLY and GROUP bits in 0x{code:04x}", pos, 2)
            if (flags & (FLAG_POLY | FLAG_GROUP)) and not base & 0x0200:
                raise Bad(f"poly/group on non-multi code 0x{code:04x}", pos, 2)
            if (flags & FLAG_RQ_ACK) and base < 0x0100:
                raise Bad(f"RQ_ACK on initialization packet 0x{code:04x}", pos, 2)
        if self._icaiq_pending and base >= 0x0100:
            self._drop_capability_inquiries()
        return self._parsers[base](buf, pos, base, flags)

    def _drop_capability_inquiries(self) -> None:
        """The peer is in the control phase: an ICaRp can no longer come (an
        entity may leave capability inquiries unanswered, 001 4.5.5). Not at
        its IInCp: that may come before its ICaRp (4.5.3, "at any time")."""
        self._icaiq_pending = False
        self._pending = deque(e for e in self._pending if not isinstance(e[0], ICaIq))

    def _p_bare(self, buf, pos, base, flags):
        cls = CLASS_OF[base]
        if "rq_ack" not in cls.__dataclass_fields__:
            return cls(), pos + 2
        return cls(bool(flags)), pos + 2

    def _p_iiid(self, buf, pos, base, flags):
        _, major, minor, uid, key, res = S(self._pfx + "HBB16s16s24s").unpack_from(buf, pos)
        return IIId(major, minor, uid.rstrip(b"\0"), key, res), pos + IIID_SIZE

    def _p_icaiq(self, buf, pos, base, flags):
        n = buf[pos + 2]
        vals = S(self._pfx + "HB" * n).unpack_from(buf, pos + 3)
        items = list(zip(vals[0::2], vals[1::2]))
        for i, (_, t) in enumerate(items):
            if t not in INQ_TYPES:
                raise Bad(f"bad inq_type 0x{t:02x}", pos + 3 + 3 * i + 2)
        return ICaIq([(c, INQ_TYPES[t]) for c, t in items]), pos + 3 + 3 * n

    def _p_control_id(self, buf, pos, base, flags):
        """CStIq, CCnAc: ``control_id(2)``."""
        return CLASS_OF[base](self._u16.unpack_from(buf, pos + 2)[0], bool(flags)), pos + 4

    def _p_csvtm(self, buf, pos, base, flags):
        (t,) = self._u16.unpack_from(buf, pos + 2)
        if t not in TERM_CODES:
            raise Bad(f"bad term_code 0x{t:04x}", pos + 2, 2)
        return CSvTm(TERM_CODES[t], bool(flags)), pos + 4

    def _p_cbstm(self, buf, pos, base, flags):
        sec, usec = S(self._pfx + "ii").unpack_from(buf, pos + 2)
        return CBsTm(Timeval(sec, usec), bool(flags)), pos + 10

    @staticmethod
    def _form(flags):
        if flags & FLAG_GROUP:
            return F_GROUP
        if flags & FLAG_POLY:
            return F_POLY
        return F_GENERAL

    def _sub_of(self, buf, pos, base):
        s = buf[pos + 2]
        sub = SUB_CODES[base].get(s)
        if sub is None:
            raise Bad(f"bad id_sub_code 0x{s:02x} for {command(base).name}", pos + 2)
        return sub

    def _p_fixed(self, lay):
        def parse(buf, pos, base, flags):
            sub = self._sub_of(buf, pos, base)
            form = self._form(flags)
            items, end = decode_fixed(buf, pos + 3, form, lay, self._pfx)
            return CLASS_OF[base](sub, items, form, bool(flags & FLAG_RQ_ACK)), end
        return parse

    def _p_commands(self, buf, pos, base, flags):
        """A Set packet (CStMt, CStSn): command byte + payload per item."""
        sub = self._sub_of(buf, pos, base)
        spec = COMMAND_ITEMS[base]
        pfx = self._pfx

        def item(b, p, ident):
            c = b[p]
            hit = spec.by_byte.get((sub, c))
            if hit is None:
                raise Bad(f"bad {spec.what} command byte 0x{c:02x} for {sub.name}", p)
            kind, fmt = hit
            if not fmt:
                return spec.item_type(kind, 0), p + 1
            st = S(pfx + fmt)
            return spec.item_type(kind, st.unpack_from(b, p + 1)[0]), p + 1 + st.size
        form = self._form(flags)
        items, end = decode_var(buf, pos + 3, form, item, pfx)
        return CLASS_OF[base](sub, items, form, bool(flags & FLAG_RQ_ACK)), end
