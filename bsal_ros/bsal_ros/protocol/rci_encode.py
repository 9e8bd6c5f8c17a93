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

"""The RCI encoder (seed 001 chapter 4): ``encode_rci(packet, byteorder) -> bytes``."""

from __future__ import annotations

from itertools import chain
import struct

from . import rci_commands  # noqa: F401  (registers the book's commands)
from . import rci_registry
# _items and _stream are private to this package: its codecs share them
from ._items import encode_fixed, encode_packet, encode_var, F_GROUP, S
from .constants import CapReply, Form, MotorType, RciCode
from .errors import ProtocolError
from .rci_packets import (CBsTm, FLAG_GROUP, FLAG_RQ_ACK, FORM_FLAG, ICaIq, ICaRp, IIId, MotorData,
                          StatusData, VersionReply)
from .rci_registry import COMMAND_ITEMS, SUB_CODES
from .rci_tables import (CAP_REPLIES, CSTRP_STATUS, INQ_TYPES, L_MOTOR_DC, L_MOTOR_PSERVO,
                         L_STATUS, SENSOR_DATA, SENSOR_DATA_TYPE, TERM_CODES)
from .values import Timeval

__all__ = ["encode_rci"]


# ====================================================================== encoding
def _code(pkt, base: int, form=Form.GENERAL) -> int:
    return base | FORM_FLAG[form] | (FLAG_RQ_ACK if pkt.rq_ack else 0)


def _sub(base, sub):
    table = SUB_CODES[base]
    try:
        return table[int(sub)]
    except (KeyError, TypeError, ValueError):
        raise ProtocolError(f"{base.name}: bad id_sub_code {sub!r}") from None


def _pad(b, size, what):
    if isinstance(b, str):
        b = b.encode("latin-1")
    b = bytes(b)
    if len(b) > size:
        raise ProtocolError(f"IIId: {what} longer than {size} bytes")
    return b + bytes(size - len(b))


def _enc_iiid(pfx, p: IIId):
    try:
        return S(pfx + "HBB16s16s24s").pack(
            RciCode.IIId, p.vers_major, p.vers_minor, _pad(p.user_id, 16, "user_id"),
            _pad(p.auth_key, 16, "auth_key"), _pad(p.reserved, 24, "reserved"))
    except (struct.error, TypeError) as exc:
        raise ProtocolError(f"IIId: {exc}") from None


def _enc_icaiq(pfx, p: ICaIq):
    n = len(p.items)
    if n > 255:
        raise ProtocolError("ICaIq: at most 255 inquiries")
    for _, t in p.items:
        if t not in INQ_TYPES:
            raise ProtocolError(f"ICaIq: bad inq_type {t!r}")
    try:
        return S(pfx + "HB" + "HB" * n).pack(RciCode.ICaIq, n, *[v for it in p.items for v in it])
    except (struct.error, TypeError) as exc:
        raise ProtocolError(f"ICaIq: {exc}") from None


def _enc_icarp(pfx, p: ICaRp):
    n = len(p.items)
    if not 1 <= n <= 255:
        raise ProtocolError("ICaRp: 1..255 replies")
    fmt, vals = [pfx, "HB"], [RciCode.ICaRp, n]
    for cid, r in p.items:
        if isinstance(r, VersionReply):
            if r.vers_major == CapReply.ERROR:
                # would read as a one-byte ERROR answer (docs/PROTOCOL.md 3.2)
                raise ProtocolError(f"ICaRp: vers_major 0x{r.vers_major:02x} is the ERROR byte")
            fmt.append("HBB")
            vals += (cid, r.vers_major, r.vers_minor)
        elif isinstance(r, int) and r in CAP_REPLIES:
            fmt.append("HB")
            vals += (cid, r)
        else:
            raise ProtocolError(f"ICaRp: bad reply {r!r}")
    try:
        return S("".join(fmt)).pack(*vals)
    except (struct.error, TypeError) as exc:
        raise ProtocolError(f"ICaRp: {exc}") from None


def _enc_simple(fmt, base, attrs, check=None):
    def enc(pfx, p):
        vals = [getattr(p, a) for a in attrs]
        if check is not None and vals[-1] not in check:
            raise ProtocolError(f"{base.name}: bad value {vals[-1]!r}")
        try:
            return S(pfx + "H" + fmt).pack(_code(p, base), *vals)
        except (struct.error, TypeError) as exc:
            raise ProtocolError(f"{base.name}: {exc}") from None
    return enc


def _enc_cbstm(pfx, p: CBsTm):
    try:
        sec, usec = Timeval(*p.time).clamped()
        return S(pfx + "Hii").pack(_code(p, RciCode.CBsTm), sec, usec)
    except (struct.error, TypeError, ValueError) as exc:
        raise ProtocolError(f"CBsTm: {exc}") from None


def _enc_fixed(base, lay):
    def enc(pfx, p):
        return encode_fixed(pfx, _code(p, base, p.form), _sub(base, p.sub_code), p.items,
                            p.form, lay)
    return enc


def _enc_commands(base):
    """Encoder of a Set packet (CStMt, CStSn): command byte + payload per item."""
    spec = COMMAND_ITEMS[base]

    def enc(pfx, p):
        sub = _sub(base, p.sub_code)

        def item(d):
            if not isinstance(d, spec.item_type):
                raise ProtocolError(f"{base.name} item data must be {spec.item_type.__name__}")
            hit = spec.by_kind.get((sub, d.kind))
            if hit is None:
                raise ProtocolError(f"{base.name}: {d.kind!r} not defined for {sub.name}")
            byte, fmt = hit
            if not fmt:
                return bytes((byte,))
            return S(pfx + "B" + fmt).pack(byte, d[1])
        return encode_var(pfx, _code(p, base, p.form), sub, p.items, p.form, item)
    return enc


CGTMTRP = int(RciCode.CGtMtRp)
_tnew = tuple.__new__
_DC = int(MotorType.DC)


def _reply_layout_for(base, sub, d):
    t = type(d)
    if t is StatusData:
        return L_STATUS
    if base == CGTMTRP:
        if t is MotorData:
            if sub == _DC:
                if d.mposval is not None:
                    raise ProtocolError("CGtMtRp: DC motor data carries no mposval")
                return L_MOTOR_DC
            if d.mposval is None:
                raise ProtocolError("CGtMtRp: PSERVO motor data needs an mposval")
            return L_MOTOR_PSERVO
        raise ProtocolError(f"CGtMtRp: bad item data {d!r}")
    s = SENSOR_DATA_TYPE.get(t)
    if s is None or s != sub:
        raise ProtocolError(f"CGtSnRp: item data {d!r} does not fit {sub.name}")
    return SENSOR_DATA[s]


def _enc_reply(base):
    # (id_sub_code, item data type) -> (sub-code enum, Layout) for the item types
    # whose layout follows from the type alone (not MotorData: DC vs PSERVO)
    fast = {}
    for s in SUB_CODES[base].values():
        fast[(int(s), StatusData)] = (s, L_STATUS)
        if base != CGTMTRP:
            fast[(int(s), SENSOR_DATA[s].cls)] = (s, SENSOR_DATA[s])
    group_code = base | FLAG_GROUP

    def enc(pfx, p):
        if p.form is F_GROUP and type(p.items) is list:
            # fast path: a well-formed group of one item type, checked with one
            # pass per property; anything else takes the general path below,
            # which raises the exact error
            try:
                ids, datas = zip(*p.items)
                hit = fast.get((p.sub_code, type(datas[0])))
            except (TypeError, ValueError):
                hit = None
            if hit is not None:
                sub, lay = hit
                n = len(ids)
                first = ids[0]
                if (n <= 255 and type(first) is int and ids == tuple(range(first, first + n))
                        and set(map(type, datas)) == lay.clsset):
                    try:
                        return (lay.grp_enc[pfx].get(n) or lay.grp_enc_struct(pfx, n)).pack(
                            group_code | (FLAG_RQ_ACK if p.rq_ack else 0), sub, n, first,
                            *chain.from_iterable(datas))
                    except (struct.error, TypeError, ValueError, OverflowError) as exc:
                        raise ProtocolError(f"cannot encode: {exc}") from None
        sub = _sub(base, p.sub_code)
        form = p.form
        code = _code(p, base, form)
        items = p.items
        if items:
            it0 = items[0]
            d0 = it0[1] if len(it0) == 2 else None
            lay = _reply_layout_for(base, sub, d0)
            if lay.accepts_items(items):
                return encode_fixed(pfx, code, sub, items, p.form, lay, True)

        def item(d):
            lay = _reply_layout_for(base, sub, d)
            return S(pfx + lay.fmt).pack(*lay.vals(d))
        return encode_var(pfx, code, sub, items, p.form, item)
    return enc


def _enc_bare(base, packet):
    if "rq_ack" not in packet.__dataclass_fields__:
        code = int(base)
        return lambda pfx, p: S(pfx + "H").pack(code)
    return _enc_simple("", base, ())


#: wire shape (rci_registry.WIRE_SHAPES) -> encoder builder(spec)
SHAPES = {
    "iiid": lambda s: _enc_iiid,
    "bare": lambda s: _enc_bare(s.code, s.packet),
    "icaiq": lambda s: _enc_icaiq,
    "icarp": lambda s: _enc_icarp,
    "control_id": lambda s: _enc_simple("H", s.code, ("control_id",)),
    "cstrp": lambda s: _enc_simple("HB", s.code, ("control_id", "status"), CSTRP_STATUS),
    "csvtm": lambda s: _enc_simple("H", s.code, ("term_code",), TERM_CODES),
    "cbstm": lambda s: _enc_cbstm,
    "items": lambda s: _enc_fixed(s.code, s.wire.layout),
    "commands": lambda s: _enc_commands(s.code),
    "reply": lambda s: _enc_reply(s.code),
}
#: packet class -> encoder, built from the command registry
_ENCODERS: dict = {}


def rebuild_encoders() -> None:
    """Build the encoder table from the registered commands (after a change).

    Thread: not with an encode running in another thread.
    """
    table = {}
    for spec in rci_registry.commands():
        if spec.unsupported is None:
            table[spec.packet] = SHAPES[spec.wire.shape](spec)
    _ENCODERS.clear()
    _ENCODERS.update(table)


def rebuild_reply_encoders() -> None:
    """Rebuild the reply encoders after a new sensor sub-code (:mod:`.wire_kinds`)."""
    rebuild_encoders()


rebuild_encoders()
rci_registry._listeners.append(rebuild_encoders)


def encode_rci(packet, byteorder: str = "big") -> bytes:
    """Encode one RCI packet.

    :param packet: an RCI packet (:class:`CStMt`, :class:`CGtSnRp` ...).
    :param byteorder: ``"big"`` (the wire's default) or ``"little"``.
    :returns: its bytes.
    :raises ProtocolError: not a supported RCI packet, or a field that does not fit.
    :raises ValueError: an unknown ``byteorder``.
    """
    return encode_packet(_ENCODERS, packet, byteorder, "RCI")
