"""RCI (Robot Control Interface, seed 001 chapter 4): packets, encoder, decoder.

Packets are dataclasses named after the spec's acronyms (``IIId``, ``CStMt``
...). The id-carrying control packets (``CAcMt``, ``CStMt``, ``CGtMtIq``,
``CGtMtRp``, ``CAcSn``, ``CStSn``, ``CGtSnIq``, ``CGtSnRp``) share one shape::

    CStMt(sub_code=MotorType.DC,
          items=[(0, MotorCommand(MotorCommandKind.SPVAL, speedval))],
          form=Form.GENERAL,          # or Form.POLY / Form.GROUP
          rq_ack=False)

``items`` is a list of ``(id, data)``; the general form carries exactly one
item, poly/group 1..255 items (group: consecutive ids). Item data per packet:

==========  =================================================================
CAcMt       int 0 (deactivate) or 1 (activate)
CAcSn       int 0 or 1
CStMt       :class:`MotorCommand` (kind SPVAL + speedval, or RESET for PSERVO)
CStSn       :class:`SensorCommand` (RELENCODER_CLEAR, ULTRASONIC_ORDER + slot,
            ULTRASONIC_TIMING + interval ms)
CGtMtIq     int status code (:class:`GetMotorStatus`)
CGtSnIq     int status code (:class:`GetSensorStatus`)
CGtMtRp     :class:`StatusData` (STATUS inquiry) or :class:`MotorData`
            (DATA: speedval, and mposval for PSERVO, ``None`` for DC)
CGtSnRp     :class:`StatusData`, or :class:`UltrasonicData` (delay),
            :class:`RelEncoderData` (d_count, count), :class:`AbsEncoderData`
            (count), :class:`AccelData` (accel) for DATA inquiries
==========  =================================================================

Bit-packed values (statval, speedval, mposval) are carried as raw wire ints;
convert them with :mod:`bsal_ros.protocol.values`.

Encoding: ``encode_rci(packet, byteorder="big") -> bytes``.

Decoding: ``RciDecoder(byteorder="big", role="server"|"client"|"any")``;
``feed(data) -> list[packet]``. ``role`` is the side that *receives*: a server
decoder accepts what a control application may send, a client decoder what a
control process may send. Replies whose length depends on the question
(RCI-ICaRp, RCI-CGtMtRp, RCI-CGtSnRp) are decoded against the inquiry, which
the caller registers with ``decoder.expect_reply(inquiry)`` when sending it.
A pending inquiry is consumed by its reply, or by an ``RCI-CStRp`` whose
``control_id`` is the inquiry's base code (DESIGN.md: the CP answers an
inquiry it cannot serve with CStRp instead of the reply); pending capability
inquiries are dropped when RCI-IInCp arrives (an entity may leave ACCESS
inquiries unanswered).
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import chain, repeat
from typing import NamedTuple, Union

from ._items import (Bad, Incomplete, Layout, S, decode_fixed, decode_var, encode_fixed,
                     encode_var, prefix_of)
from ._stream import StreamDecoder
from ._items import F_GENERAL, F_GROUP, F_POLY, _get0, _get1
from .constants import (RCI_VERSION_MAJOR, RCI_VERSION_MINOR, CapInquiry, CapReply,
                        CStRpStatus, Form, GetMotorStatus, GetSensorStatus, MotorCommandCode,
                        MotorType, RciCode, SensorCommandCode, SensorType, TermCode)
from .errors import ProtocolError
from .values import Timeval

__all__ = [
    "IIId", "IInCp", "ICaIq", "ICaRp", "CStIq", "CStRp", "CSvTm", "CCnAc", "CRs", "CBsTmIq",
    "CBsTm", "CAcMt", "CStMt", "CGtMtIq", "CGtMtRp", "CAcSn", "CAtSn", "CStSn", "CGtSnIq",
    "CGtSnRp", "VersionReply", "MotorCommandKind", "MotorCommand", "SensorCommandKind",
    "SensorCommand", "StatusData", "MotorData", "UltrasonicData", "RelEncoderData",
    "AbsEncoderData", "AccelData", "RciPacket", "encode_rci", "decode_rci", "RciDecoder",
    "IIID_SIZE",
]

_FLAG_RQ_ACK, _FLAG_POLY, _FLAG_GROUP = 0x0800, 0x4000, 0x8000
_FLAGS = _FLAG_RQ_ACK | _FLAG_POLY | _FLAG_GROUP
_FORM_FLAG = {Form.GENERAL: 0, Form.POLY: _FLAG_POLY, Form.GROUP: _FLAG_GROUP}
IIID_SIZE = 60


# ===================================================================== data types
class VersionReply(NamedTuple):
    """RCI-ICaRp item data answering an RCI_ICAIQ_VERSION inquiry."""

    vers_major: int
    vers_minor: int


class MotorCommandKind(IntEnum):
    """What a CStMt item does; the wire byte depends on the motor subcode."""

    SPVAL = 1     # RCI_MOTOR_DC_SPVAL (0xd0) or RCI_MOTOR_PSERVO_SPVAL (0xd1) + speedval
    RESET = 2     # RCI_MOTOR_PSERVO_RESET (0xd2), PSERVO only, no payload


class MotorCommand(NamedTuple):
    """CStMt item data. ``speedval`` is the raw guint16 (ignored for RESET)."""

    kind: MotorCommandKind
    speedval: int = 0


SensorCommandKind = SensorCommandCode


class SensorCommand(NamedTuple):
    """CStSn item data.

    ``kind``: RELENCODER_CLEAR (no payload), ULTRASONIC_ORDER (``value`` =
    guint8 firing slot), ULTRASONIC_TIMING (``value`` = guint16 interval ms).
    """

    kind: SensorCommandCode
    value: int = 0


class StatusData(NamedTuple):
    """Reply item data for a STATUS inquiry: raw statval (guint32)."""

    statval: int


class MotorData(NamedTuple):
    """CGtMtRp DATA item: raw speedval; raw mposval for PSERVO, ``None`` for DC."""

    speedval: int
    mposval: int | None = None


class UltrasonicData(NamedTuple):
    delay: int          # guint16, microseconds (round trip)


class RelEncoderData(NamedTuple):
    d_count: int        # gint16
    count: int          # gint16


class AbsEncoderData(NamedTuple):
    count: int          # gint16


class AccelData(NamedTuple):
    accel: float        # IEEE single, gravities


# ======================================================================= packets
@dataclass(slots=True)
class IIId:
    """Identification (0x0010), 60 bytes. ``user_id`` is NUL-padded to 16 on the
    wire and returned with trailing NULs stripped. ``repr()`` leaves the key
    out, so a packet that lands in a log line does not carry it there."""

    vers_major: int = RCI_VERSION_MAJOR
    vers_minor: int = RCI_VERSION_MINOR
    user_id: bytes = b""
    auth_key: bytes = field(default=bytes(16), repr=False)
    reserved: bytes = bytes(24)


@dataclass(slots=True)
class IInCp:
    """Initialization Completed (0x0011)."""


@dataclass(slots=True)
class ICaIq:
    """Capability Inquiry (0x0012): items = [(control_id, inq_type)], 0..255."""

    items: list = field(default_factory=list)


@dataclass(slots=True)
class ICaRp:
    """Capability Reply (0x0013): items = [(control_id, reply)], 1..255; reply is
    an int (:class:`CapReply`) for ACCESS/SUPPORT, a :class:`VersionReply` for VERSION."""

    items: list = field(default_factory=list)


@dataclass(slots=True)
class CStIq:
    """Status Inquiry (0x0100)."""

    control_id: int = RciCode.CStIq
    rq_ack: bool = False


@dataclass(slots=True)
class CStRp:
    """Status Reply (0x0101); ``control_id`` is a base code."""

    control_id: int = RciCode.CStIq
    status: int = CStRpStatus.IDLE
    rq_ack: bool = False


@dataclass(slots=True)
class CSvTm:
    """Server Termination (0x0102), ``term_code`` is a guint16."""

    term_code: int = TermCode.ERROR
    rq_ack: bool = False


@dataclass(slots=True)
class CCnAc:
    """Control Acknowledge (0x0103); ``control_id`` is the acknowledged base code."""

    control_id: int = 0
    rq_ack: bool = False


@dataclass(slots=True)
class CRs:
    """Reset (0x0104)."""

    rq_ack: bool = False


@dataclass(slots=True)
class CBsTmIq:
    """Base Time Inquiry (0x0106)."""

    rq_ack: bool = False


@dataclass(slots=True)
class CBsTm:
    """Base Time (0x0107): timeval (gint32 seconds, gint32 microseconds)."""

    time: Timeval = Timeval(0, 0)
    rq_ack: bool = False


@dataclass(slots=True)
class _IdPacket:
    sub_code: int
    items: list
    form: Form = Form.GENERAL
    rq_ack: bool = False

    @classmethod
    def one(cls, sub_code: int, ident: int, data, rq_ack: bool = False):
        """General-form packet with a single item."""
        return cls(sub_code, [(ident, data)], Form.GENERAL, rq_ack)

    @classmethod
    def group(cls, sub_code: int, first_id: int, datas, rq_ack: bool = False):
        """Group-form packet: ``datas`` for ids first_id, first_id+1, ..."""
        return cls(sub_code, list(zip(range(first_id, first_id + len(datas)), datas)),
                   Form.GROUP, rq_ack)

    @classmethod
    def poly(cls, sub_code: int, items, rq_ack: bool = False):
        return cls(sub_code, list(items), Form.POLY, rq_ack)


@dataclass(slots=True)
class CAcMt(_IdPacket):
    """Activate Motor (0x0200). Item data: 0 or 1."""


@dataclass(slots=True)
class CStMt(_IdPacket):
    """Set Motor (0x0201). Item data: :class:`MotorCommand`."""


@dataclass(slots=True)
class CGtMtIq(_IdPacket):
    """Get Motor Inquiry (0x0202). Item data: status code (GetMotorStatus)."""


@dataclass(slots=True)
class CGtMtRp(_IdPacket):
    """Get Motor Reply (0x0203). Item data: StatusData or MotorData."""


@dataclass(slots=True)
class CAcSn(_IdPacket):
    """Activate Sensor (0x0210, also spelled CAtSn). Item data: 0 or 1."""


CAtSn = CAcSn


@dataclass(slots=True)
class CStSn(_IdPacket):
    """Set Sensor (0x0211). Item data: :class:`SensorCommand`."""


@dataclass(slots=True)
class CGtSnIq(_IdPacket):
    """Get Sensor Inquiry (0x0212). Item data: status code (GetSensorStatus)."""


@dataclass(slots=True)
class CGtSnRp(_IdPacket):
    """Get Sensor Reply (0x0213). Item data: StatusData or sensor data tuple."""


RciPacket = Union[IIId, IInCp, ICaIq, ICaRp, CStIq, CStRp, CSvTm, CCnAc, CRs, CBsTmIq, CBsTm,
                  CAcMt, CStMt, CGtMtIq, CGtMtRp, CAcSn, CStSn, CGtSnIq, CGtSnRp]

CODE_OF = {IIId: RciCode.IIId, IInCp: RciCode.IInCp, ICaIq: RciCode.ICaIq,
           ICaRp: RciCode.ICaRp, CStIq: RciCode.CStIq, CStRp: RciCode.CStRp,
           CSvTm: RciCode.CSvTm, CCnAc: RciCode.CCnAc, CRs: RciCode.CRs,
           CBsTmIq: RciCode.CBsTmIq, CBsTm: RciCode.CBsTm, CAcMt: RciCode.CAcMt,
           CStMt: RciCode.CStMt, CGtMtIq: RciCode.CGtMtIq, CGtMtRp: RciCode.CGtMtRp,
           CAcSn: RciCode.CAcSn, CStSn: RciCode.CStSn, CGtSnIq: RciCode.CGtSnIq,
           CGtSnRp: RciCode.CGtSnRp}
CLASS_OF = {int(v): k for k, v in CODE_OF.items()}

# =============================================================== value domains
_MOTORS = {int(m): m for m in MotorType}
_SENSORS = {int(s): s for s in SensorType}
_SET_SENSORS = {int(SensorType.ULTRASONIC): SensorType.ULTRASONIC,
                int(SensorType.RELENCODER): SensorType.RELENCODER}
_SUBS = {RciCode.CAcMt: _MOTORS, RciCode.CStMt: _MOTORS, RciCode.CGtMtIq: _MOTORS,
         RciCode.CGtMtRp: _MOTORS, RciCode.CAcSn: _SENSORS, RciCode.CStSn: _SET_SENSORS,
         RciCode.CGtSnIq: _SENSORS, RciCode.CGtSnRp: _SENSORS}
_CSTRP = {int(s): s for s in CStRpStatus}
_TERM = {int(t): t for t in TermCode}
_INQ = {int(c): c for c in CapInquiry}
_CAPREPLY = {int(c): c for c in CapReply}

_L_ACT = Layout("B", allowed=(0, 1))
_L_MTIQ = Layout("B", allowed=tuple(int(s) for s in GetMotorStatus))
_L_SNIQ = Layout("B", allowed=tuple(int(s) for s in GetSensorStatus))
_L_STATUS = Layout("I", "named", StatusData)
_L_MT_DC = Layout("H", "named_pad", MotorData)
_L_MT_PS = Layout("HI", "named", MotorData)
_SN_DATA = {SensorType.ULTRASONIC: Layout("H", "named", UltrasonicData),
            SensorType.RELENCODER: Layout("hh", "named", RelEncoderData),
            SensorType.ABSENCODER: Layout("h", "named", AbsEncoderData),
            SensorType.ACCEL: Layout("f", "named", AccelData)}
_SN_DATA_TYPE = {lay.cls: s for s, lay in _SN_DATA.items()}

# (sub, status) -> Layout of reply items
_MT_REPLY = {}
_SN_REPLY = {}
for _m in MotorType:
    _MT_REPLY[(_m, GetMotorStatus.STATUS)] = _L_STATUS
    _MT_REPLY[(_m, GetMotorStatus.DATA)] = _L_MT_DC if _m == MotorType.DC else _L_MT_PS
for _s in SensorType:
    _SN_REPLY[(_s, GetSensorStatus.STATUS)] = _L_STATUS
    _SN_REPLY[(_s, GetSensorStatus.DATA)] = _SN_DATA[_s]

_MOTOR_CMD_BYTE = {(MotorType.DC, MotorCommandKind.SPVAL): MotorCommandCode.DC_SPVAL,
                   (MotorType.PSERVO, MotorCommandKind.SPVAL): MotorCommandCode.PSERVO_SPVAL,
                   (MotorType.PSERVO, MotorCommandKind.RESET): MotorCommandCode.PSERVO_RESET}
_MOTOR_CMD_KIND = {(int(m), int(b)): k for (m, k), b in _MOTOR_CMD_BYTE.items()}
_SENSOR_CMD = {(SensorType.RELENCODER, SensorCommandCode.RELENCODER_CLEAR): "",
               (SensorType.ULTRASONIC, SensorCommandCode.ULTRASONIC_ORDER): "B",
               (SensorType.ULTRASONIC, SensorCommandCode.ULTRASONIC_TIMING): "H"}
_SENSOR_CMD_BY_BYTE = {(int(s), int(c)): (c, f) for (s, c), f in _SENSOR_CMD.items()}

# Which packets each side may receive. CStIq/CStRp/CCnAc/ICaIq/ICaRp/IIId/IInCp
# go both ways; the rest have one direction (001 chapter 4).
_BOTH = {RciCode.IIId, RciCode.IInCp, RciCode.ICaIq, RciCode.ICaRp, RciCode.CStIq,
         RciCode.CStRp, RciCode.CCnAc}
SERVER_RECEIVES = frozenset(_BOTH | {RciCode.CRs, RciCode.CBsTmIq, RciCode.CAcMt,
                                     RciCode.CStMt, RciCode.CGtMtIq, RciCode.CAcSn,
                                     RciCode.CStSn, RciCode.CGtSnIq})
CLIENT_RECEIVES = frozenset(_BOTH | {RciCode.CSvTm, RciCode.CBsTm, RciCode.CGtMtRp,
                                     RciCode.CGtSnRp})
ALL_CODES = frozenset(int(c) for c in RciCode)


# ====================================================================== encoding
def _code(pkt, base: int, form=Form.GENERAL) -> int:
    return base | _FORM_FLAG[form] | (_FLAG_RQ_ACK if pkt.rq_ack else 0)


def _sub(base, sub):
    table = _SUBS[base]
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
        if t not in _INQ:
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
            fmt.append("HBB")
            vals += (cid, r.vers_major, r.vers_minor)
        elif isinstance(r, int) and r in _CAPREPLY:
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


def _enc_cstmt(pfx, p: CStMt):
    sub = _sub(RciCode.CStMt, p.sub_code)
    u8h = S(pfx + "BH")

    def item(d):
        if not isinstance(d, MotorCommand):
            raise ProtocolError("CStMt item data must be MotorCommand")
        b = _MOTOR_CMD_BYTE.get((sub, d.kind))
        if b is None:
            raise ProtocolError(f"CStMt: {d.kind!r} not defined for {sub.name}")
        if d.kind == MotorCommandKind.RESET:
            return bytes((b,))
        return u8h.pack(b, d.speedval)
    return encode_var(pfx, _code(p, RciCode.CStMt, p.form), sub, p.items, p.form, item)


def _enc_cstsn(pfx, p: CStSn):
    sub = _sub(RciCode.CStSn, p.sub_code)

    def item(d):
        if not isinstance(d, SensorCommand):
            raise ProtocolError("CStSn item data must be SensorCommand")
        fmt = _SENSOR_CMD.get((sub, d.kind))
        if fmt is None:
            raise ProtocolError(f"CStSn: {d.kind!r} not defined for {sub.name}")
        if not fmt:
            return bytes((d.kind,))
        return S(pfx + "B" + fmt).pack(d.kind, d.value)
    return encode_var(pfx, _code(p, RciCode.CStSn, p.form), sub, p.items, p.form, item)


_CGTMTRP = int(RciCode.CGtMtRp)
_tnew = tuple.__new__
_DC = int(MotorType.DC)


def _reply_layout_for(base, sub, d):
    t = type(d)
    if t is StatusData:
        return _L_STATUS
    if base == _CGTMTRP:
        if t is MotorData:
            if sub == _DC:
                if d.mposval is not None:
                    raise ProtocolError("CGtMtRp: DC motor data carries no mposval")
                return _L_MT_DC
            if d.mposval is None:
                raise ProtocolError("CGtMtRp: PSERVO motor data needs an mposval")
            return _L_MT_PS
        raise ProtocolError(f"CGtMtRp: bad item data {d!r}")
    s = _SN_DATA_TYPE.get(t)
    if s is None or s != sub:
        raise ProtocolError(f"CGtSnRp: item data {d!r} does not fit {sub.name}")
    return _SN_DATA[s]


def _enc_reply(base):
    # (id_sub_code, item data type) -> (sub-code enum, Layout) for the item types
    # whose layout follows from the type alone (not MotorData: DC vs PSERVO)
    fast = {}
    for s in _SUBS[base].values():
        fast[(int(s), StatusData)] = (s, _L_STATUS)
        if base != _CGTMTRP:
            fast[(int(s), _SN_DATA[s].cls)] = (s, _SN_DATA[s])
    group_code = base | _FLAG_GROUP

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
                            group_code | (_FLAG_RQ_ACK if p.rq_ack else 0), sub, n, first,
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


_ENCODERS = {
    IIId: _enc_iiid,
    IInCp: lambda pfx, p: S(pfx + "H").pack(RciCode.IInCp),
    ICaIq: _enc_icaiq,
    ICaRp: _enc_icarp,
    CStIq: _enc_simple("H", RciCode.CStIq, ("control_id",)),
    CStRp: _enc_simple("HB", RciCode.CStRp, ("control_id", "status"), _CSTRP),
    CSvTm: _enc_simple("H", RciCode.CSvTm, ("term_code",), _TERM),
    CCnAc: _enc_simple("H", RciCode.CCnAc, ("control_id",)),
    CRs: _enc_simple("", RciCode.CRs, ()),
    CBsTmIq: _enc_simple("", RciCode.CBsTmIq, ()),
    CBsTm: _enc_cbstm,
    CAcMt: _enc_fixed(RciCode.CAcMt, _L_ACT),
    CStMt: _enc_cstmt,
    CGtMtIq: _enc_fixed(RciCode.CGtMtIq, _L_MTIQ),
    CGtMtRp: _enc_reply(RciCode.CGtMtRp),
    CAcSn: _enc_fixed(RciCode.CAcSn, _L_ACT),
    CStSn: _enc_cstsn,
    CGtSnIq: _enc_fixed(RciCode.CGtSnIq, _L_SNIQ),
    CGtSnRp: _enc_reply(RciCode.CGtSnRp),
}


def encode_rci(packet, byteorder: str = "big") -> bytes:
    """Encode one RCI packet. Raises :class:`ProtocolError` if it cannot be encoded."""
    enc = _ENCODERS.get(type(packet))
    if enc is None:
        raise ProtocolError(f"not an RCI packet: {type(packet).__name__}")
    pfx = prefix_of(byteorder)
    try:
        return enc(pfx, packet)
    except ProtocolError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError,
            struct.error) as exc:
        raise ProtocolError(f"cannot encode {type(packet).__name__}: {exc!r}") from None


# ====================================================================== decoding
_VALID: dict = {}


def _valid_codes(allowed: frozenset) -> dict:
    """id_code -> (base, flags) for every id_code that passes the header checks of
    :meth:`RciDecoder._parse` for a decoder receiving ``allowed`` base codes."""
    table = _VALID.get(allowed)
    if table is None:
        table = {}
        for base in allowed:
            for flags in (0, _FLAG_RQ_ACK, _FLAG_POLY, _FLAG_POLY | _FLAG_RQ_ACK, _FLAG_GROUP,
                          _FLAG_GROUP | _FLAG_RQ_ACK):
                if (flags & (_FLAG_POLY | _FLAG_GROUP)) and not base & 0x0200:
                    continue
                if (flags & _FLAG_RQ_ACK) and base < 0x0100:
                    continue
                table[base | flags] = (base, flags)
        _VALID[allowed] = table
    return table


_INQUIRY_TYPES = (ICaIq, CGtMtIq, CGtSnIq, CStIq)
MAX_PENDING = 256


class RciDecoder(StreamDecoder):
    """Streaming RCI decoder (see the module docstring).

    ``role``: ``"server"`` decodes what a control application sends (the
    gateway side), ``"client"`` what the control process sends, ``"any"``
    accepts every packet (for dump tools). A packet not valid in that direction
    is a :class:`ProtocolError`.
    """

    def __init__(self, byteorder: str = "big", role: str = "server"):
        super().__init__(byteorder)
        if role == "server":
            self._allowed = SERVER_RECEIVES
        elif role == "client":
            self._allowed = CLIENT_RECEIVES
        elif role == "any":
            self._allowed = ALL_CODES
        else:
            raise ValueError(f"role must be 'server', 'client' or 'any', not {role!r}")
        self.role = role
        self._pending: deque = deque()
        self._valid = _valid_codes(self._allowed)
        pfx = self._pfx
        self._u16 = S(pfx + "H")
        self._parsers = {
            RciCode.IIId: self._p_iiid, RciCode.IInCp: self._p_bare,
            RciCode.ICaIq: self._p_icaiq, RciCode.ICaRp: self._p_icarp,
            RciCode.CStIq: self._p_cstiq, RciCode.CStRp: self._p_cstrp,
            RciCode.CSvTm: self._p_csvtm, RciCode.CCnAc: self._p_ccnac,
            RciCode.CRs: self._p_bare, RciCode.CBsTmIq: self._p_bare,
            RciCode.CBsTm: self._p_cbstm,
            RciCode.CAcMt: self._p_fixed(_L_ACT), RciCode.CAcSn: self._p_fixed(_L_ACT),
            RciCode.CGtMtIq: self._p_fixed(_L_MTIQ), RciCode.CGtSnIq: self._p_fixed(_L_SNIQ),
            RciCode.CStMt: self._p_cstmt, RciCode.CStSn: self._p_cstsn,
            RciCode.CGtMtRp: self._p_reply, RciCode.CGtSnRp: self._p_reply,
        }

    # --------------------------------------------------------- context API
    def expect_reply(self, inquiry) -> None:
        """Register an inquiry we sent (ICaIq, CGtMtIq, CGtSnIq or CStIq) so that
        its reply can be decoded. Call it before feeding the reply's bytes."""
        t = type(inquiry)
        if t is CGtSnIq or t is CGtMtIq:     # fast path, the common inquiries
            pending = self._pending
            if len(pending) >= MAX_PENDING:
                pending.popleft()
            pending.append([inquiry, _reply_context(inquiry.sub_code, list(inquiry.items))])
            return
        if not isinstance(inquiry, _INQUIRY_TYPES):
            raise TypeError(f"expect_reply takes ICaIq, CGtMtIq, CGtSnIq or CStIq, "
                            f"not {type(inquiry).__name__}")
        if len(self._pending) >= MAX_PENDING:
            self._pending.popleft()
        ctx = None
        if isinstance(inquiry, (CGtMtIq, CGtSnIq)):
            # precompute the reply context: uniform status code, asked ids
            items = list(inquiry.items)
            ctx = _reply_context(inquiry.sub_code, items)
        self._pending.append([inquiry, ctx])

    def clear_expectations(self) -> None:
        self._pending.clear()

    def _consume(self, entry) -> None:
        self._pending.remove(entry)      # identity matches first: entries are lists

    @property
    def expected(self) -> list:
        """Inquiries still waiting for an answer, oldest first."""
        return [e[0] for e in self._pending]

    def reset(self) -> None:
        super().reset()
        self.clear_expectations()

    # ------------------------------------------------------------- parsing
    def _parse(self, buf, pos):
        (code,) = self._u16.unpack_from(buf, pos)
        hdr = self._valid.get(code)
        if hdr is not None:                 # a valid id_code: one lookup for all checks
            base, flags = hdr
            return self._parsers[base](buf, pos, base, flags)
        base = code & ~_FLAGS
        if base not in ALL_CODES:
            raise Bad(f"unknown RCI code 0x{code:04x}", pos, 2)
        if base not in self._allowed:
            raise Bad(f"{RciCode(base).name} not valid towards the {self.role}", pos, 2)
        flags = code & _FLAGS
        if flags:
            if (flags & _FLAG_POLY) and (flags & _FLAG_GROUP):
                raise Bad(f"both POLY and GROUP bits in 0x{code:04x}", pos, 2)
            if (flags & (_FLAG_POLY | _FLAG_GROUP)) and not base & 0x0200:
                raise Bad(f"poly/group on non-multi code 0x{code:04x}", pos, 2)
            if (flags & _FLAG_RQ_ACK) and base < 0x0100:
                raise Bad(f"RQ_ACK on initialization packet 0x{code:04x}", pos, 2)
        return self._parsers[base](buf, pos, base, flags)

    def _p_bare(self, buf, pos, base, flags):
        cls = CLASS_OF[base]
        if base == RciCode.IInCp:
            # an entity may leave capability inquiries unanswered (001 4.5.5)
            if any(isinstance(e[0], ICaIq) for e in self._pending):
                self._pending = deque(e for e in self._pending if not isinstance(e[0], ICaIq))
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
            if t not in _INQ:
                raise Bad(f"bad inq_type 0x{t:02x}", pos + 3 + 3 * i + 2)
        return ICaIq([(c, _INQ[t]) for c, t in items]), pos + 3 + 3 * n

    def _p_icarp(self, buf, pos, base, flags):
        entry = next((e for e in self._pending if isinstance(e[0], ICaIq)), None)
        if entry is None:
            raise Bad("ICaRp without a pending ICaIq (call expect_reply)", pos, 2)
        n = buf[pos + 2]
        if n == 0:
            raise Bad("zero count", pos + 2)
        asked: dict = {}
        for cid, t in entry[0].items:
            asked.setdefault(cid, deque()).append(t)
        p = pos + 3
        u16 = self._u16
        items = []
        for _ in range(n):
            (cid,) = u16.unpack_from(buf, p)
            q = asked.get(cid)
            if not q:
                raise Bad(f"ICaRp answers 0x{cid:04x}, which was not asked", p, 2)
            t = q.popleft()
            if t == CapInquiry.VERSION:
                items.append((cid, VersionReply(buf[p + 2], buf[p + 3])))
                p += 4
            else:
                r = buf[p + 2]
                if r not in _CAPREPLY:
                    raise Bad(f"bad capability reply 0x{r:02x}", p + 2)
                items.append((cid, _CAPREPLY[r]))
                p += 3
        self._consume(entry)
        return ICaRp(items), p

    def _p_cstiq(self, buf, pos, base, flags):
        return CStIq(self._u16.unpack_from(buf, pos + 2)[0], bool(flags)), pos + 4

    def _p_ccnac(self, buf, pos, base, flags):
        return CCnAc(self._u16.unpack_from(buf, pos + 2)[0], bool(flags)), pos + 4

    def _p_csvtm(self, buf, pos, base, flags):
        (t,) = self._u16.unpack_from(buf, pos + 2)
        if t not in _TERM:
            raise Bad(f"bad term_code 0x{t:04x}", pos + 2, 2)
        return CSvTm(_TERM[t], bool(flags)), pos + 4

    def _p_cstrp(self, buf, pos, base, flags):
        cid, st = S(self._pfx + "HB").unpack_from(buf, pos + 2)
        if st not in _CSTRP:
            raise Bad(f"bad status_resp 0x{st:02x}", pos + 4)
        # a CStRp answers the oldest pending CStIq about cid, or an inquiry
        # (CGtMtIq/CGtSnIq) the CP could not serve
        for e in self._pending:
            q = e[0]
            if isinstance(q, CStIq):
                if q.control_id == cid:
                    self._consume(e)
                    break
            elif not isinstance(q, ICaIq) and CODE_OF[type(q)] == cid:
                self._consume(e)
                break
        return CStRp(cid, _CSTRP[st], bool(flags)), pos + 5

    def _p_cbstm(self, buf, pos, base, flags):
        sec, usec = S(self._pfx + "ii").unpack_from(buf, pos + 2)
        return CBsTm(Timeval(sec, usec), bool(flags)), pos + 10

    @staticmethod
    def _form(flags):
        if flags & _FLAG_GROUP:
            return F_GROUP
        if flags & _FLAG_POLY:
            return F_POLY
        return F_GENERAL

    def _sub_of(self, buf, pos, base):
        s = buf[pos + 2]
        sub = _SUBS[base].get(s)
        if sub is None:
            raise Bad(f"bad id_sub_code 0x{s:02x} for {RciCode(base).name}", pos + 2)
        return sub

    def _p_fixed(self, lay):
        def parse(buf, pos, base, flags):
            sub = self._sub_of(buf, pos, base)
            form = self._form(flags)
            items, end = decode_fixed(buf, pos + 3, form, lay, self._pfx)
            return CLASS_OF[base](sub, items, form, bool(flags & _FLAG_RQ_ACK)), end
        return parse

    def _p_cstmt(self, buf, pos, base, flags):
        sub = self._sub_of(buf, pos, base)
        u16 = self._u16

        def item(b, p, ident):
            c = b[p]
            kind = _MOTOR_CMD_KIND.get((sub, c))
            if kind is None:
                raise Bad(f"bad motor command byte 0x{c:02x} for {sub.name}", p)
            if kind == MotorCommandKind.RESET:
                return MotorCommand(kind, 0), p + 1
            return MotorCommand(kind, u16.unpack_from(b, p + 1)[0]), p + 3
        form = self._form(flags)
        items, end = decode_var(buf, pos + 3, form, item, self._pfx)
        return CStMt(sub, items, form, bool(flags & _FLAG_RQ_ACK)), end

    def _p_cstsn(self, buf, pos, base, flags):
        sub = self._sub_of(buf, pos, base)
        pfx = self._pfx

        def item(b, p, ident):
            c = b[p]
            spec = _SENSOR_CMD_BY_BYTE.get((sub, c))
            if spec is None:
                raise Bad(f"bad sensor command byte 0x{c:02x} for {sub.name}", p)
            kind, fmt = spec
            if not fmt:
                return SensorCommand(kind, 0), p + 1
            st = S(pfx + fmt)
            return SensorCommand(kind, st.unpack_from(b, p + 1)[0]), p + 1 + st.size
        form = self._form(flags)
        items, end = decode_var(buf, pos + 3, form, item, pfx)
        return CStSn(sub, items, form, bool(flags & _FLAG_RQ_ACK)), end

    def _p_reply(self, buf, pos, base, flags):
        if base == _CGTMTRP:
            qtype, table = CGtMtIq, _MT_REPLY
        else:
            qtype, table = CGtSnIq, _SN_REPLY
        pending = self._pending
        for entry in pending:
            if type(entry[0]) is qtype:
                break
        else:
            raise Bad(f"{RciCode(base).name} without a pending {qtype.__name__} "
                      f"(call expect_reply)", pos, 2)
        sub_code, uniform, ids, id_range, asked_items = entry[1]
        s = buf[pos + 2]
        sub = _SUBS[base].get(s)
        if sub is None:
            raise Bad(f"bad id_sub_code 0x{s:02x} for {RciCode(base).name}", pos + 2)
        if sub != sub_code:
            raise Bad(f"reply subcode 0x{sub:02x} differs from the inquiry's", pos + 2)
        form = F_GROUP if flags & _FLAG_GROUP else (F_POLY if flags & _FLAG_POLY else F_GENERAL)
        if uniform is not None:
            lay = table.get((sub, uniform))
            if lay is None:
                raise Bad(f"no reply layout for status code 0x{uniform:02x}", pos, 2)
            if form is F_GROUP and id_range is not None and lay.kind == "named":
                # the common reply, inlined: a group answering an inquiry about
                # consecutive ids (same steps as decode_fixed, then a range check)
                p = pos + 3
                if p >= len(buf):
                    raise Incomplete
                n = buf[p]
                if n == 0:
                    raise Bad("zero count", p)
                pfx = self._pfx
                st = lay.grp_dec[pfx].get(n) or lay.grp_dec_struct(pfx, n)
                vals = st.unpack_from(buf, p + 1)
                first = vals[0]
                if first + n - 1 > 0xFFFF:
                    raise Bad("group ids run past 0xFFFF", p + 1, 2)
                k = lay.k
                datas = zip(vals[1:]) if k == 1 else zip(*([iter(vals[1:])] * k))
                items = list(zip(range(first, first + n), map(_tnew, repeat(lay.cls), datas)))
                end = p + 1 + st.size
                ok = id_range[0] <= first and first + n <= id_range[1]
            else:
                items, end = decode_fixed(buf, pos + 3, form, lay, self._pfx)
                if form is F_GROUP and id_range is not None:
                    first = items[0][0]
                    ok = id_range[0] <= first and first + len(items) <= id_range[1]
                else:
                    ok = frozenset(ids).issuperset(map(_get0, items))
            if not ok:
                raise Bad("reply carries an id that was not asked", pos + 3, 3)
        else:
            asked: dict = {}
            for ident, st in asked_items:
                asked.setdefault(ident, deque()).append(st)
            pfx = self._pfx

            def item(b, p, ident):
                q = asked.get(ident)
                if not q:
                    raise Bad(f"reply item id {ident} was not asked", max(p - 2, pos), 2)
                lay = table.get((sub, q.popleft()))
                if lay is None:
                    raise Bad("no reply layout for TIME status code", p, 1)
                st = S(pfx + lay.fmt)
                return lay.one(st.unpack_from(b, p)), p + st.size
            items, end = decode_var(buf, pos + 3, form, item, pfx)
        if pending[0] is entry:
            pending.popleft()
        else:
            self._consume(entry)
        return CLASS_OF[base](sub, items, form, bool(flags & _FLAG_RQ_ACK)), end


def _reply_context(sub_code, items) -> tuple:
    """(sub_code, uniform status code or None, asked ids, (first, stop) if the asked
    ids are consecutive else None, items) of a motor/sensor inquiry."""
    n = len(items)
    try:
        ids, statuses = zip(*items)
    except (TypeError, ValueError):      # malformed or empty inquiry: the general way
        ids = tuple(map(_get0, items))
        sts = set(map(_get1, items))
        return (sub_code, next(iter(sts)) if len(sts) == 1 else None, ids, None, items)
    s0 = statuses[0]
    uniform = s0 if statuses.count(s0) == n else None
    first = ids[0]
    id_range = None
    if type(first) is int and ids == tuple(range(first, first + n)):
        id_range = (first, first + n)
    return (sub_code, uniform, ids, id_range, items)


def decode_rci(data: bytes, byteorder: str = "big", role: str = "any",
               expect=()) -> list:
    """Decode a complete byte string (leftover bytes are an error)."""
    dec = RciDecoder(byteorder, role)
    for q in expect:
        dec.expect_reply(q)
    out = dec.feed(data)
    dec.feed_eof()
    return out
