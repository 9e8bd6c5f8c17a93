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

"""RDI (Robot Display Interface, seed 001 chapter 5): packets, encoder, decoder.

The stream is one-way (GUI process -> display client). Packet classes:

============== ========= ========================================================
class          code      item data (``items = [(id, data)]``)
============== ========= ========================================================
RdiSensor      0x0010    ULTRASONIC :class:`UltrasonicReading` (delay, status),
                         RELENCODER :class:`RelEncoderReading` (d_count, d_status,
                         count, status), ABSENCODER :class:`AbsEncoderReading`
                         (count, status), ACCEL :class:`AccelReading` (accel, status)
RdiMotor       0x0020    DC :class:`DcMotorReading` (speed, status)
RdiActuator    0x0030    STEER :class:`SteerReading` (angle, status),
                         DRIVE :class:`DriveReading` (rotations, status)
RdiOrientEgo   0x0040/1  no id: xpos, ypos, angle, status
RdiOrientOmni  0x0040/2  no id: direction, speed, status
RdiBaseTime    0x0800/1  no id: time (:class:`Timeval`)
============== ========= ========================================================

``status`` / ``d_status`` are raw statval (guint32), ``speed`` a raw speedval;
floats are IEEE single. Sensor, motor and actuator packets come in general,
poly and group form (RDI_POLY 0x4000, RDI_GROUP 0x8000); orientation and
base-time packets have no ``id`` field, so they exist in general form only.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter
import struct
from typing import NamedTuple, Union

# _items and _stream are private to this package: its codecs share them
from ._items import (Bad, decode_fixed, encode_fixed, encode_packet, F_GENERAL, F_GROUP, F_POLY,
                     IdPacketForms, Layout, prefix_of, S)
from ._stream import StreamDecoder
from .constants import (Form, RdiActuatorType, RdiCode, RdiMiscType, RdiMotorType, RdiOrientType,
                        RdiSensorType)
from .errors import ProtocolError
from .values import Timeval

__all__ = [
    "UltrasonicReading", "RelEncoderReading", "AbsEncoderReading", "AccelReading",
    "DcMotorReading", "SteerReading", "DriveReading", "RdiSensor", "RdiMotor", "RdiActuator",
    "RdiOrientEgo", "RdiOrientOmni", "RdiBaseTime", "RdiPacket", "encode_rdi",
    "encode_rdi_frame", "decode_rdi", "RdiDecoder",
]

_POLY, _GROUP = 0x4000, 0x8000
_FORM_FLAG = {Form.GENERAL: 0, Form.POLY: _POLY, Form.GROUP: _GROUP}


class UltrasonicReading(NamedTuple):
    """RDI-Sn ULTRASONIC item: delay (us) and statval."""

    delay: int       # guint16 us
    status: int      # statval


class RelEncoderReading(NamedTuple):
    """RDI-Sn RELENCODER item: change, its statval, count, statval."""

    d_count: int     # gint16
    d_status: int    # statval
    count: int       # gint16
    status: int      # statval


class AbsEncoderReading(NamedTuple):
    """RDI-Sn ABSENCODER item: count and statval."""

    count: int       # gint16
    status: int


class AccelReading(NamedTuple):
    """RDI-Sn ACCEL item: acceleration (g) and statval."""

    accel: float     # gravities
    status: int


class DcMotorReading(NamedTuple):
    """RDI-Mt DC item: speedval and statval."""

    speed: int       # speedval
    status: int


class SteerReading(NamedTuple):
    """RDI-Ac STEER item: steering angle (rad) and statval."""

    angle: float     # rad
    status: int


class DriveReading(NamedTuple):
    """RDI-Ac DRIVE item: wheel rotations and statval."""

    rotations: float  # wheel rotations
    status: int


@dataclass(slots=True)
class _RdiIdPacket(IdPacketForms):
    """The shape of RDI-Sn, RDI-Mt and RDI-Ac."""

    sub_code: int
    items: list
    form: Form = Form.GENERAL


@dataclass(slots=True)
class RdiSensor(_RdiIdPacket):
    """RDI-Sn (0x0010)."""


@dataclass(slots=True)
class RdiMotor(_RdiIdPacket):
    """RDI-Mt (0x0020)."""


@dataclass(slots=True)
class RdiActuator(_RdiIdPacket):
    """RDI-Ac (0x0030)."""


@dataclass(slots=True)
class RdiOrientEgo:
    """RDI-RbOr / RDI_ORIENT_EGO: position (m) and heading (rad) + statval."""

    xpos: float = 0.0
    ypos: float = 0.0
    angle: float = 0.0
    status: int = 0


@dataclass(slots=True)
class RdiOrientOmni:
    """RDI-RbOr / RDI_ORIENT_OMNI: direction of motion (rad), speed (m/s) + statval."""

    direction: float = 0.0
    speed: float = 0.0
    status: int = 0


@dataclass(slots=True)
class RdiBaseTime:
    """RDI-Ms / RDI_MISC_BASETIME: absolute base time (timeval)."""

    time: Timeval = Timeval(0, 0)


RdiPacket = Union[RdiSensor, RdiMotor, RdiActuator, RdiOrientEgo, RdiOrientOmni, RdiBaseTime]

_LAYOUTS = {
    (RdiCode.Sn, RdiSensorType.ULTRASONIC): Layout("HI", "named", UltrasonicReading),
    (RdiCode.Sn, RdiSensorType.RELENCODER): Layout("hIhI", "named", RelEncoderReading),
    (RdiCode.Sn, RdiSensorType.ABSENCODER): Layout("hI", "named", AbsEncoderReading),
    (RdiCode.Sn, RdiSensorType.ACCEL): Layout("fI", "named", AccelReading),
    (RdiCode.Mt, RdiMotorType.DC): Layout("HI", "named", DcMotorReading),
    (RdiCode.Ac, RdiActuatorType.STEER): Layout("fI", "named", SteerReading),
    (RdiCode.Ac, RdiActuatorType.DRIVE): Layout("fI", "named", DriveReading),
}
_LAYOUT_BY_INT = {(int(c), int(s)): lay for (c, s), lay in _LAYOUTS.items()}
_SUB_ENUM = {RdiCode.Sn: RdiSensorType, RdiCode.Mt: RdiMotorType, RdiCode.Ac: RdiActuatorType}
_SUB_BY_INT = {(int(c), int(s)): s for (c, s) in _LAYOUTS}
_ID_CLASS = {RdiSensor: RdiCode.Sn, RdiMotor: RdiCode.Mt, RdiActuator: RdiCode.Ac}
_CLASS_OF = {int(v): k for k, v in _ID_CLASS.items()}
ALL_CODES = frozenset(int(c) for c in RdiCode)


def _enc_id(base):
    ibase = int(base)
    # id_sub_code -> (sub-code enum, Layout, item class, general-form Structs per byte order)
    subs = {s: (_SUB_BY_INT[(c, s)], lay, lay.cls, lay.gen_enc)
            for (c, s), lay in _LAYOUT_BY_INT.items() if c == ibase}

    def enc(pfx, p):
        try:
            sub, lay, icls, gen = subs[p.sub_code]
            flag = _FORM_FLAG[p.form]
        except (KeyError, TypeError):
            raise ProtocolError(f"RDI {base.name}: bad id_sub_code {p.sub_code!r} "
                                f"or form {p.form!r}") from None
        items = p.items
        # fast paths for well-formed general and group packets; anything else
        # takes encode_fixed, which raises the exact error
        if flag == 0:
            if p.form is F_GENERAL and len(items) == 1:
                it = items[0]
                if type(it) is tuple and len(it) == 2 and type(it[1]) is icls:
                    try:
                        return gen[pfx].pack(ibase, sub, it[0], *it[1])
                    except (struct.error, TypeError, ValueError, OverflowError):
                        pass
        elif flag == _GROUP and p.form is F_GROUP and type(items) is list:
            try:
                ids, datas = zip(*items)
            except (TypeError, ValueError):
                ids = ()
            n = len(ids)
            if 0 < n <= 255:
                first = ids[0]
                if (type(first) is int and ids == tuple(range(first, first + n))
                        and set(map(type, datas)) == lay.clsset):
                    try:
                        return (lay.grp_enc[pfx].get(n) or lay.grp_enc_struct(pfx, n)).pack(
                            ibase | _GROUP, sub, n, first, *chain.from_iterable(datas))
                    except (struct.error, TypeError, ValueError, OverflowError):
                        pass
        return encode_fixed(pfx, ibase | flag, sub, items, p.form, lay)
    return enc


def _enc_plain(fmt, code, sub, attrs):
    structs = {p: struct.Struct(p + "HB" + fmt) for p in "<>"}
    get = attrgetter(*attrs)

    def enc(pfx, p):
        try:
            return structs[pfx].pack(code, sub, *get(p))
        except (struct.error, TypeError, OverflowError) as exc:
            raise ProtocolError(f"{type(p).__name__}: {exc}") from None
    return enc


def _enc_basetime(pfx, p):
    try:
        sec, usec = Timeval(*p.time).clamped()
        return S(pfx + "HBii").pack(RdiCode.Ms, RdiMiscType.BASETIME, sec, usec)
    except (struct.error, TypeError, ValueError) as exc:
        raise ProtocolError(f"RdiBaseTime: {exc}") from None


_ENCODERS = {
    RdiSensor: _enc_id(RdiCode.Sn),
    RdiMotor: _enc_id(RdiCode.Mt),
    RdiActuator: _enc_id(RdiCode.Ac),
    RdiOrientEgo: _enc_plain("fffI", RdiCode.RbOr, RdiOrientType.EGO,
                             ("xpos", "ypos", "angle", "status")),
    RdiOrientOmni: _enc_plain("ffI", RdiCode.RbOr, RdiOrientType.OMNI,
                              ("direction", "speed", "status")),
    RdiBaseTime: _enc_basetime,
}


def encode_rdi(packet, byteorder: str = "big") -> bytes:
    """Encode one RDI packet.

    :param packet: an RDI packet (:class:`RdiSensor`, :class:`RdiOrientEgo` ...).
    :param byteorder: ``"big"`` (the wire's default) or ``"little"``, else ValueError.
    :returns: its bytes.
    :raises ProtocolError: not an RDI packet, or a field that does not fit.
    """
    return encode_packet(_ENCODERS, packet, byteorder, "RDI")


def encode_rdi_frame(packets, byteorder: str = "big") -> bytes:
    """Encode several packets back to back (one state frame).

    :param packets: RDI packets, in frame order.
    :param byteorder: ``"big"`` (the wire's default) or ``"little"``, else ValueError.
    :returns: their bytes, joined.
    :raises ProtocolError: one is not an RDI packet or has a field that does not fit.
    """
    pfx = prefix_of(byteorder)
    out = []
    try:
        for p in packets:
            out.append(_ENCODERS[type(p)](pfx, p))
    except ProtocolError:
        raise
    except KeyError:
        raise ProtocolError(f"not an RDI packet: {type(p).__name__}") from None
    except (TypeError, ValueError, AttributeError, IndexError, OverflowError,
            struct.error) as exc:
        raise ProtocolError(f"cannot encode {type(p).__name__}: {exc!r}") from None
    return b"".join(out)


_tnew = tuple.__new__


def _plans(pfx: str) -> dict:
    """Decode plans of the valid (id_code, id_sub_code) pairs, keyed by ``id_code
    << 8 | id_sub_code``: one lookup replaces the header's checks (an invalid
    header takes :meth:`RdiDecoder._parse_checked`, for the exact error)."""
    plans = {}
    for (base, sub), lay in _LAYOUT_BY_INT.items():
        cls, sub_e = _CLASS_OF[base], _SUB_BY_INT[(base, sub)]
        gen = struct.Struct(pfx + "xxxH" + lay.fmt)
        plans[base << 8 | sub] = (0, cls, sub_e, lay, gen, lay.cls, gen.size)
        plans[(base | _POLY) << 8 | sub] = (1, cls, sub_e, lay, None, None, 0)
        plans[(base | _GROUP) << 8 | sub] = (2, cls, sub_e, lay, None, lay.cls, lay.k)
    plans[0x0040 << 8 | 1] = (3, RdiOrientEgo, None, None, struct.Struct(pfx + "xxxfffI"), None, 19)
    plans[0x0040 << 8 | 2] = (3, RdiOrientOmni, None, None, struct.Struct(pfx + "xxxffI"), None, 15)
    plans[0x0800 << 8 | 1] = (4, RdiBaseTime, None, None, struct.Struct(pfx + "xxxii"), None, 11)
    return plans


_PLANS = {p: _plans(p) for p in "<>"}


def layout_of(code: int, sub: int) -> Layout | None:
    """The item layout of an id-carrying RDI packet.

    :param code: RDI-Sn, -Mt or -Ac.
    :param sub: its id_sub_code.
    :returns: the layout, or None when the pair is not legal.
    """
    return _LAYOUT_BY_INT.get((int(code), int(sub)))


def item_keys() -> tuple:
    """Every legal (code, sub-code) pair of RDI-Sn, -Mt and -Ac.

    :returns: the pairs."""
    return tuple(_LAYOUT_BY_INT)


def add_layout(code: int, sub: int, layout: Layout) -> None:
    """Add an item layout (:mod:`.wire_kinds` checks it first): the tables,
    the encoder of that code and the decode plans are rebuilt.

    :param code: RDI-Sn, -Mt or -Ac.
    :param sub: the new id_sub_code.
    :param layout: its items' layout.
    :raises ValueError: ``code`` is not an RDI code."""
    base = RdiCode(code)
    _LAYOUTS[(base, sub)] = layout
    _LAYOUT_BY_INT[(int(code), int(sub))] = layout
    _SUB_BY_INT[(int(code), int(sub))] = sub
    _ENCODERS[_CLASS_OF[int(code)]] = _enc_id(base)
    for pfx, plans in _PLANS.items():
        plans.update(_plans(pfx))     # in place: running decoders hold this dict


class RdiDecoder(StreamDecoder):
    """Streaming RDI decoder: ``feed(data) -> list[packet]`` (see StreamDecoder).

    :param byteorder: ``"big"`` (the wire's default) or ``"little"``, else ValueError.
    """

    def __init__(self, byteorder: str = "big"):
        super().__init__(byteorder)
        pfx = self._pfx
        self._u16 = S(pfx + "H")
        self._hb = S(pfx + "HB")
        self._plans = _PLANS[pfx]
        self._ego = S(pfx + "fffI")
        self._omni = S(pfx + "ffI")
        self._tv = S(pfx + "ii")

    def _parse(self, buf, pos):
        try:
            code, sub = self._hb.unpack_from(buf, pos)
        except struct.error:
            return self._parse_checked(buf, pos)
        plan = self._plans.get(code << 8 | sub)
        if plan is None:
            return self._parse_checked(buf, pos)
        kind, cls, sub_e, lay, st, icls, k = plan
        if kind == 0:                       # general form: one Struct for the packet
            v = st.unpack_from(buf, pos)
            return cls(sub_e, [(v[0], _tnew(icls, v[1:]))], F_GENERAL), pos + k
        if kind == 2:                       # group form
            p = pos + 3
            n = buf[p]
            if n == 0:
                raise Bad("zero count", p)
            st = lay.grp_dec[self._pfx].get(n) or lay.grp_dec_struct(self._pfx, n)
            v = st.unpack_from(buf, p + 1)
            first = v[0]
            if first + n - 1 > 0xFFFF:
                raise Bad("group ids run past 0xFFFF", p + 1, 2)
            if k == 1:
                datas = zip(v[1:])
            else:
                it = iter(v)
                next(it)
                datas = zip(*([it] * k))
            return cls(sub_e, list(zip(range(first, first + n), map(_tnew, repeat(icls), datas))),
                       F_GROUP), p + 1 + st.size
        if kind == 3:                       # orientation
            return cls(*st.unpack_from(buf, pos)), pos + k
        if kind == 4:                       # base time
            return RdiBaseTime(_tnew(Timeval, st.unpack_from(buf, pos))), pos + k
        items, end = decode_fixed(buf, pos + 3, F_POLY, lay, self._pfx)
        return cls(sub_e, items, F_POLY), end

    def _parse_checked(self, buf, pos):
        (code,) = self._u16.unpack_from(buf, pos)
        base = code & 0x3FFF
        if base not in ALL_CODES:
            raise Bad(f"unknown RDI code 0x{code:04x}", pos, 2)
        flags = code & 0xC000
        sub = buf[pos + 2]
        cls = _CLASS_OF.get(base)
        if cls is not None:
            if flags == 0xC000:
                raise Bad(f"both POLY and GROUP bits in 0x{code:04x}", pos, 2)
            lay = _LAYOUT_BY_INT.get((base, sub))
            if lay is None:
                raise Bad(f"bad id_sub_code 0x{sub:02x} for code 0x{base:04x}", pos + 2)
            form = F_GROUP if flags & _GROUP else (F_POLY if flags else F_GENERAL)
            items, end = decode_fixed(buf, pos + 3, form, lay, self._pfx)
            return cls(_SUB_BY_INT[(base, sub)], items, form), end
        if flags:
            raise Bad(f"poly/group on an RDI packet without id 0x{code:04x}", pos, 2)
        if base == 0x0040:          # RDI-RbOr
            if sub == 1:            # RDI_ORIENT_EGO
                return RdiOrientEgo(*self._ego.unpack_from(buf, pos + 3)), pos + 19
            if sub == 2:            # RDI_ORIENT_OMNI
                return RdiOrientOmni(*self._omni.unpack_from(buf, pos + 3)), pos + 15
        elif sub == 1:              # RDI-Ms / RDI_MISC_BASETIME
            return RdiBaseTime(Timeval(*self._tv.unpack_from(buf, pos + 3))), pos + 11
        raise Bad(f"bad id_sub_code 0x{sub:02x} for code 0x{base:04x}", pos + 2)


def decode_rdi(data: bytes, byteorder: str = "big") -> list:
    """Decode a complete byte string.

    :param data: whole RDI packets.
    :param byteorder: ``"big"`` (the wire's default) or ``"little"``, else ValueError.
    :returns: the packets.
    :raises ProtocolError: bad bytes, or bytes left over after the last packet.
    """
    dec = RdiDecoder(byteorder)
    out = dec.feed(data)
    dec.feed_eof()
    return out
