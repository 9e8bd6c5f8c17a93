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

"""Shared machinery: cached ``struct.Struct`` objects and the general/poly/group
framing of id-carrying packets (001 sections 4.4 and 5.3), used by both the RCI
and the RDI codecs.

Hot paths (group and poly payloads of fixed-size items) are one precompiled
``Struct`` per (byte order, layout, count), cached, and the per-item objects
are built with C-level ``map``/``zip`` over the unpacked tuple, so there is no
per-field Python code.
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import itemgetter
import struct

from .constants import Form
from .errors import ProtocolError

F_GENERAL, F_POLY, F_GROUP = Form.GENERAL, Form.POLY, Form.GROUP

_tuple_new = tuple.__new__
#: the first / second element of an (id, data) item
get0 = itemgetter(0)
get1 = itemgetter(1)


def _is_tuple(d):
    return isinstance(d, tuple)


#: largest packet we ever buffer while waiting for the rest (bytes); the real
#: maximum is 5 + 255 * 14 = 3575 (RDI relative-encoder poly packet)
MAX_PACKET = 4096

PREFIX = {"big": ">", "little": "<", ">": ">", "<": "<", "network": ">", "!": ">"}


def prefix_of(byteorder: str) -> str:
    """The struct prefix of a byte order ("big"/"little" or a struct prefix)."""
    try:
        return PREFIX[byteorder]
    except (KeyError, TypeError):
        raise ValueError(f"byteorder must be 'big' or 'little', not {byteorder!r}") from None


_STRUCTS: dict[str, struct.Struct] = {}


def S(fmt: str) -> struct.Struct:
    """Cached precompiled Struct (fmt includes the byte-order prefix)."""
    s = _STRUCTS.get(fmt)
    if s is None:
        if len(_STRUCTS) > 8192:   # bounded: formats come from a finite set x count<=255
            _STRUCTS.clear()
        s = _STRUCTS[fmt] = struct.Struct(fmt)
    return s


class Incomplete(Exception):
    """Internal: the buffer ends inside this packet."""


class Bad(Exception):
    """Internal: bad field at ``pos`` (absolute in the buffer), ``size`` bytes."""

    def __init__(self, msg: str, pos: int, size: int = 1):
        super().__init__(msg)
        self.msg, self.pos, self.size = msg, pos, size


class Layout:
    """Fixed-size item data: ``k`` values, one per struct code of ``fmt``.

    :param fmt: struct codes, no byte-order prefix.
    :param kind: ``scalar``: the data is the single value itself (int);
        ``named``: a NamedTuple ``cls`` of the k values; ``named_pad``:
        ``cls(v, None)`` (one value on the wire, a trailing optional field
        left ``None``).
    :param cls: the NamedTuple of ``named`` and ``named_pad``.
    :param allowed: the legal values (scalar only), checked on decode.
    :raises struct.error: ``fmt`` is not a struct format.
    """

    __slots__ = ("fmt", "k", "kind", "cls", "clsset", "allowed", "size", "gen_enc", "gen_dec",
                 "grp_enc", "grp_dec", "poly_dec")

    def __init__(self, fmt: str, kind: str = "scalar", cls=None, allowed=None):
        self.fmt, self.kind, self.cls = fmt, kind, cls
        self.k = len(fmt)
        self.allowed = frozenset(allowed) if allowed is not None else None
        self.size = struct.calcsize("<" + fmt)
        # precompiled general-form Structs per byte order (the most common form)
        self.gen_enc = {p: struct.Struct(p + "HBH" + fmt) for p in "<>"}
        self.gen_dec = {p: struct.Struct(p + "H" + fmt) for p in "<>"}
        self.clsset = frozenset((cls,))
        # group/poly Structs per byte order, keyed by the item count (filled lazily)
        self.grp_enc = {"<": {}, ">": {}}
        self.grp_dec = {"<": {}, ">": {}}
        self.poly_dec = {"<": {}, ">": {}}

    def grp_enc_struct(self, pfx: str, n: int) -> struct.Struct:
        """``id_code sub count first_id {data} x n``."""
        st = self.grp_enc[pfx].get(n)
        if st is None:
            st = self.grp_enc[pfx][n] = struct.Struct(pfx + "HBBH" + self.fmt * n)
        return st

    def grp_dec_struct(self, pfx: str, n: int) -> struct.Struct:
        """``first_id {data} x n`` (after the count byte)."""
        st = self.grp_dec[pfx].get(n)
        if st is None:
            st = self.grp_dec[pfx][n] = struct.Struct(pfx + "H" + self.fmt * n)
        return st

    def poly_dec_struct(self, pfx: str, n: int) -> struct.Struct:
        """``{id data} x n`` (after the count byte)."""
        st = self.poly_dec[pfx].get(n)
        if st is None:
            st = self.poly_dec[pfx][n] = struct.Struct(pfx + ("H" + self.fmt) * n)
        return st

    # --- decode helpers
    def build(self, vals):
        """Flat value tuple (k values per item) -> iterable of item data."""
        kind = self.kind
        if kind == "scalar":
            return vals
        if kind == "named":
            if self.k == 1:
                return map(_tuple_new, repeat(self.cls), zip(vals))
            it = iter(vals)
            return map(_tuple_new, repeat(self.cls), zip(*([it] * self.k)))
        return map(_tuple_new, repeat(self.cls), zip(vals, repeat(None)))

    def one(self, vals):
        """The item data of one item's unpacked wire values."""
        if self.kind == "scalar":
            return vals[0]
        if self.kind == "named":
            return _tuple_new(self.cls, vals)
        return _tuple_new(self.cls, (vals[0], None))

    # --- encode helpers
    def flat_items(self, items):
        """Flat wire values of the data of ``(id, data)`` items (C-level iterators)."""
        kind = self.kind
        if kind == "scalar":
            return map(get1, items)
        if kind == "named":
            return chain.from_iterable(map(get1, items))
        return map(get0, map(get1, items))

    def vals(self, d) -> tuple:
        """The wire values of one item's data."""
        kind = self.kind
        if kind == "scalar":
            return (d,)
        if kind == "named":
            return d
        return (d[0],)

    def accepts_items(self, items) -> bool:
        """Type check of the data of all ``(id, data)`` items (C-level for the common cases)."""
        kind = self.kind
        if kind == "scalar":
            return not any(map(_is_tuple, map(get1, items)))
        if set(map(type, map(get1, items))) != self.clsset:
            return False
        return kind == "named" or all(d[1] is None for d in map(get1, items))

    def accepts_all(self, datas) -> bool:
        """Type check of all item data (C-level for the common cases)."""
        kind = self.kind
        if kind == "scalar":
            return not any(map(_is_tuple, datas))
        if set(map(type, datas)) != self.clsset:
            return False
        return kind == "named" or all(d[1] is None for d in datas)

    def accepts(self, d) -> bool:
        """True when ``d`` is valid item data for this layout."""
        if self.kind == "scalar":
            return isinstance(d, int) and not isinstance(d, tuple)
        if self.kind == "named":
            return type(d) is self.cls
        return type(d) is self.cls and d[1] is None


class IdPacketForms:
    """Constructors of an id-carrying packet in each form, for RCI and RDI
    packets alike (``cls(sub_code, items, form, **flags)``; RCI packets take
    ``rq_ack=`` among ``flags``)."""

    __slots__ = ()

    @classmethod
    def one(cls, sub_code: int, ident: int, data, **flags):
        """A general-form packet with a single item.

        :param sub_code: the packet's id_sub_code (:class:`SensorType` ...).
        :param ident: the item's id.
        :param data: the item's data.
        :param flags: the packet's flags (RCI: ``rq_ack``).
        :returns: the packet.
        """
        return cls(sub_code, [(ident, data)], F_GENERAL, **flags)

    @classmethod
    def group(cls, sub_code: int, first_id: int, datas, **flags):
        """A group-form packet: consecutive ids.

        :param sub_code: the packet's id_sub_code.
        :param first_id: the first item's id.
        :param datas: the items' data, for ids first_id, first_id + 1, ...
        :param flags: the packet's flags (RCI: ``rq_ack``).
        :returns: the packet.
        """
        return cls(sub_code, list(zip(range(first_id, first_id + len(datas)), datas)),
                   F_GROUP, **flags)

    @classmethod
    def poly(cls, sub_code: int, items, **flags):
        """A poly-form packet: ids in any order.

        :param sub_code: the packet's id_sub_code.
        :param items: (id, data) pairs.
        :param flags: the packet's flags (RCI: ``rq_ack``).
        :returns: the packet.
        """
        return cls(sub_code, list(items), F_POLY, **flags)

# ------------------------------------------------------------------ decoding


def decode_fixed(buf, p, form, lay: Layout, pfx: str):
    """Items after the ``id_sub_code`` byte at ``p``; returns (items, end)."""
    if form is F_GENERAL:
        st = lay.gen_dec[pfx]
        vals = st.unpack_from(buf, p)
        items = [(vals[0], lay.one(vals[1:]))]
        end = p + st.size
        if lay.allowed is not None and items[0][1] not in lay.allowed:
            raise Bad("undefined data byte", end - lay.size, lay.size)
        return items, end
    if p >= len(buf):
        raise Incomplete
    n = buf[p]
    if n == 0:
        raise Bad("zero count", p)
    if form is F_GROUP:
        st = lay.grp_dec[pfx].get(n) or lay.grp_dec_struct(pfx, n)
        vals = st.unpack_from(buf, p + 1)
        first = vals[0]
        if first + n - 1 > 0xFFFF:
            raise Bad("group ids run past 0xFFFF", p + 1, 2)
        datas = vals[1:]
        if lay.allowed is not None and not lay.allowed.issuperset(datas):
            for i, d in enumerate(datas):
                if d not in lay.allowed:
                    raise Bad("undefined data byte", p + 3 + i * lay.size, lay.size)
        return list(zip(range(first, first + n), lay.build(datas))), p + 1 + st.size
    # poly
    st = lay.poly_dec[pfx].get(n) or lay.poly_dec_struct(pfx, n)
    vals = st.unpack_from(buf, p + 1)
    if lay.kind == "scalar":
        items = list(zip(vals[0::2], vals[1::2]))
        if lay.allowed is not None and not lay.allowed.issuperset(vals[1::2]):
            for i, (_, d) in enumerate(items):
                if d not in lay.allowed:
                    raise Bad("undefined data byte", p + 1 + i * (2 + lay.size) + 2, lay.size)
    else:
        k1 = lay.k + 1
        ids = vals[0::k1]
        if k1 == 2:
            datas = vals[1::2]
        else:
            datas = [v for j in range(0, len(vals), k1) for v in vals[j + 1:j + k1]]
        items = list(zip(ids, lay.build(datas)))
    return items, p + 1 + st.size


def decode_var(buf, p, form, parse_item, pfx: str):
    """Items of variable size: ``parse_item(buf, p, id) -> (data, end)``."""
    u16 = S(pfx + "H")
    if form is F_GENERAL:
        (ident,) = u16.unpack_from(buf, p)
        data, p = parse_item(buf, p + 2, ident)
        return [(ident, data)], p
    if p >= len(buf):
        raise Incomplete
    n = buf[p]
    if n == 0:
        raise Bad("zero count", p)
    p += 1
    items = []
    if form is F_GROUP:
        (first,) = u16.unpack_from(buf, p)
        if first + n - 1 > 0xFFFF:
            raise Bad("group ids run past 0xFFFF", p, 2)
        p += 2
        for ident in range(first, first + n):
            data, p = parse_item(buf, p, ident)
            items.append((ident, data))
        return items, p
    for _ in range(n):
        (ident,) = u16.unpack_from(buf, p)
        data, p = parse_item(buf, p + 2, ident)
        items.append((ident, data))
    return items, p


# ------------------------------------------------------------------ encoding
def check_items(items, form) -> int:
    """Validate the item count/ids for ``form`` (a :class:`Form`); returns the count."""
    n = len(items)
    if form is F_GENERAL:
        if n != 1:
            raise ProtocolError(f"general form carries exactly one item, got {n}")
        return n
    if not 1 <= n <= 255:
        raise ProtocolError(f"poly/group form carries 1..255 items, got {n}")
    if form is F_GROUP:
        first = items[0][0]
        if list(map(get0, items)) != list(range(first, first + n)):
            raise ProtocolError("group items must have consecutive ids")
    elif form is not F_POLY:
        raise ProtocolError(f"bad form {form!r}")
    return n


def encode_fixed(pfx, code, sub, items, form, lay: Layout, checked: bool = False) -> bytes:
    """One id-carrying packet of fixed-size items in its form (general, poly or group)."""
    if form is F_GENERAL and len(items) == 1:      # fast path, the most common form
        try:
            ident, d = items[0]
            if not (checked or lay.accepts(d)):
                raise ProtocolError(f"item data must be "
                                    f"{lay.cls.__name__ if lay.cls else 'int'}")
            return lay.gen_enc[pfx].pack(code, sub, ident, *lay.vals(d))
        except (struct.error, TypeError, ValueError, OverflowError) as exc:
            if isinstance(exc, ProtocolError):
                raise
            raise ProtocolError(f"cannot encode: {exc}") from None
    n = check_items(items, form)
    if not checked and not lay.accepts_items(items):
        raise ProtocolError(f"item data must be {lay.cls.__name__ if lay.cls else 'int'}")
    try:
        if form is F_GROUP:
            st = lay.grp_enc[pfx].get(n) or lay.grp_enc_struct(pfx, n)
            return st.pack(code, sub, n, items[0][0], *lay.flat_items(items))
        if form is F_GENERAL:
            ident, d = items[0]
            return lay.gen_enc[pfx].pack(code, sub, ident, *lay.vals(d))
        vals = lay.vals
        return S(pfx + "HBB" + ("H" + lay.fmt) * n).pack(
            code, sub, n, *chain.from_iterable((i, *vals(d)) for i, d in items))
    except (struct.error, TypeError, ValueError, OverflowError) as exc:
        raise ProtocolError(f"cannot encode: {exc}") from None


def encode_var(pfx, code, sub, items, form, enc_item) -> bytes:
    """``enc_item(data) -> bytes`` for each item."""
    n = check_items(items, form)
    try:
        u16 = S(pfx + "H")
        if form is F_GENERAL:
            ident, d = items[0]
            return S(pfx + "HBH").pack(code, sub, ident) + enc_item(d)
        if form is F_GROUP:
            head = S(pfx + "HBBH").pack(code, sub, n, items[0][0])
            return head + b"".join(enc_item(d) for _, d in items)
        head = S(pfx + "HBB").pack(code, sub, n)
        return head + b"".join(u16.pack(i) + enc_item(d) for i, d in items)
    except (struct.error, TypeError, ValueError, OverflowError, IndexError) as exc:
        raise ProtocolError(f"cannot encode: {exc}") from None


def encode_packet(encoders: dict, packet, byteorder: str, protocol: str) -> bytes:
    """Encode ``packet`` with its encoder from ``encoders`` (packet type ->
    ``enc(prefix, packet)``); every failure is a :class:`ProtocolError`."""
    enc = encoders.get(type(packet))
    if enc is None:
        raise ProtocolError(f"not an {protocol} packet: {type(packet).__name__}")
    pfx = prefix_of(byteorder)
    try:
        return enc(pfx, packet)
    except ProtocolError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError,
            struct.error) as exc:
        raise ProtocolError(f"cannot encode {type(packet).__name__}: {exc!r}") from None
