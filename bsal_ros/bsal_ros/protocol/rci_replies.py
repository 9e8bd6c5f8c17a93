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

"""RCI replies decoded against the inquiry they answer (seed 001 4.5.4, 4.6).

RCI-ICaRp, RCI-CGtMtRp and RCI-CGtSnRp carry no item types or status codes of
their own: their length and layout follow from the inquiry. A decoder keeps the
inquiries sent and not yet answered (oldest first, at most
:data:`MAX_PENDING`); :class:`ReplyMatching` holds that queue and the parsers
of the replies, and :class:`~bsal_ros.protocol.rci_decode.RciDecoder` mixes
it in. A pending inquiry is consumed by its reply, or by an ``RCI-CStRp``
whose ``control_id`` is the inquiry's base code (the control process answers
an inquiry it cannot serve with a status reply instead).
"""

from __future__ import annotations

from collections import deque
from itertools import repeat

# _items and _stream are private to this package: its codecs share them
from ._items import (Bad, decode_fixed, decode_var, F_GENERAL, F_GROUP, F_POLY, get0, get1,
                     Incomplete, S)
from .constants import CapInquiry, CapReply, RciCode
from .rci_packets import (CGtMtIq, CGtSnIq, CStIq, CStRp, FLAG_GROUP, FLAG_POLY, FLAG_RQ_ACK, ICaIq,
                          ICaRp, VersionReply)
from .rci_registry import CLASS_OF, CODE_OF, SUB_CODES
from .rci_tables import CAP_REPLIES, CSTRP_STATUS, MOTOR_REPLY, SENSOR_REPLY

__all__ = ["ReplyMatching", "MAX_PENDING"]

_INQUIRY_TYPES = (ICaIq, CGtMtIq, CGtSnIq, CStIq)
_CGTMTRP = int(RciCode.CGtMtRp)
_tnew = tuple.__new__
#: inquiries remembered at most; the oldest is forgotten first
MAX_PENDING = 256


class ReplyMatching:
    """The pending inquiries of a decoder and the parsers of their replies.

    A mix-in for :class:`~bsal_ros.protocol.rci_decode.RciDecoder`, which
    creates ``self._pending`` (a deque) and ``self._u16``.
    """

    # --------------------------------------------------------- context API
    def expect_reply(self, inquiry) -> None:
        """Register an inquiry we sent so that its reply can be decoded; call
        it before feeding the reply's bytes. Past 256 pending inquiries
        the oldest is forgotten.

        :param inquiry: an ICaIq, CGtMtIq, CGtSnIq or CStIq.
        :raises TypeError: another packet.
        """
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
        if t is ICaIq:
            self._icaiq_pending = True
        if isinstance(inquiry, (CGtMtIq, CGtSnIq)):
            # precompute the reply context: uniform status code, asked ids
            items = list(inquiry.items)
            ctx = _reply_context(inquiry.sub_code, items)
        self._pending.append([inquiry, ctx])

    def clear_expectations(self) -> None:
        """Forget every pending inquiry."""
        self._pending.clear()
        self._icaiq_pending = False

    def _consume(self, entry) -> None:
        self._pending.remove(entry)      # identity matches first: entries are lists

    @property
    def expected(self) -> list:
        """Inquiries still waiting for an answer.

        :returns: them, oldest first.
        """
        return [e[0] for e in self._pending]

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
            if t == CapInquiry.VERSION and buf[p + 2] == CapReply.ERROR:
                # 001 4.5.5: ERROR "may be returned in response to any" inquiry,
                # a one-byte answer also to VERSION (so vers_major 0x20 is not used)
                items.append((cid, CapReply.ERROR))
                p += 3
            elif t == CapInquiry.VERSION:
                items.append((cid, VersionReply(buf[p + 2], buf[p + 3])))
                p += 4
            else:
                r = buf[p + 2]
                if r not in CAP_REPLIES:
                    raise Bad(f"bad capability reply 0x{r:02x}", p + 2)
                items.append((cid, CAP_REPLIES[r]))
                p += 3
        self._consume(entry)
        return ICaRp(items), p

    def _p_cstrp(self, buf, pos, base, flags):
        cid, st = S(self._pfx + "HB").unpack_from(buf, pos + 2)
        if st not in CSTRP_STATUS:
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
        return CStRp(cid, CSTRP_STATUS[st], bool(flags)), pos + 5

    def _p_reply(self, buf, pos, base, flags):
        if base == _CGTMTRP:
            qtype, table = CGtMtIq, MOTOR_REPLY
        else:
            qtype, table = CGtSnIq, SENSOR_REPLY
        pending = self._pending
        for entry in pending:
            if type(entry[0]) is qtype:
                break
        else:
            raise Bad(f"{RciCode(base).name} without a pending {qtype.__name__} "
                      f"(call expect_reply)", pos, 2)
        sub_code, uniform, ids, id_range, asked_items = entry[1]
        s = buf[pos + 2]
        sub = SUB_CODES[base].get(s)
        if sub is None:
            raise Bad(f"bad id_sub_code 0x{s:02x} for {RciCode(base).name}", pos + 2)
        if sub != sub_code:
            raise Bad(f"reply subcode 0x{sub:02x} differs from the inquiry's", pos + 2)
        form = F_GROUP if flags & FLAG_GROUP else (F_POLY if flags & FLAG_POLY else F_GENERAL)
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
                    ok = frozenset(ids).issuperset(map(get0, items))
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
        return CLASS_OF[base](sub, items, form, bool(flags & FLAG_RQ_ACK)), end


def _reply_context(sub_code, items) -> tuple:
    """(sub_code, uniform status code or None, asked ids, (first, stop) if the asked
    ids are consecutive else None, items) of a motor/sensor inquiry."""
    n = len(items)
    try:
        ids, statuses = zip(*items)
    except (TypeError, ValueError):      # malformed or empty inquiry: the general way
        ids = tuple(map(get0, items))
        sts = set(map(get1, items))
        return (sub_code, next(iter(sts)) if len(sts) == 1 else None, ids, None, items)
    s0 = statuses[0]
    uniform = s0 if statuses.count(s0) == n else None
    first = ids[0]
    id_range = None
    if type(first) is int and ids == tuple(range(first, first + n)):
        id_range = (first, first + n)
    return (sub_code, uniform, ids, id_range, items)
