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

"""Answering an inquiry (Get Sensor, Get Motor): from the port's cache at
once when it can, else from states fetched from the robot side; the reply
kept and sent again while nothing it depends on changed (:class:`Replies`).
"""

from __future__ import annotations

from operator import is_
from typing import Callable, NamedTuple, Sequence

from .ca_view import CaView
from .port import PortUnavailable, RobotPort
from .session_parts import Answers, CaState, RobotCalls
from .transport import RciTransport
from ..core.device_state import DeviceState
from ..protocol.constants import CStRpStatus
from ..protocol.rci import CCnAc


class Reply(NamedTuple):
    """An inquiry's reply as sent: its bytes, "data" or "status", and the
    DATA item of each state (None where there was none)."""

    encoded: bytes
    what: str
    data: Sequence | None


class Replies:
    """The last reply to each inquiry, sent again while the request, the
    state objects (the port's cache hands out the same object until a newer
    reading replaces it) and the CA's view are the same: a control
    application polling at kHz rates asks for one reading hundreds of times,
    and building and encoding the reply was a third of the answer's time in
    the gateway's loop (issue 31)."""

    __slots__ = ("_last",)
    #: requests remembered; a CA asks a handful of different ones
    SIZE = 64

    def __init__(self):
        self._last: dict = {}

    def get(self, request: tuple, states: Sequence, view: tuple) -> Reply | None:
        """The reply kept for ``request`` if made from these very state
        objects and this view, else None."""
        hit = self._last.get(request)
        if hit is None or hit[1] != view:
            return None
        old = hit[0]
        if len(old) != len(states) or not all(map(is_, old, states)):
            return None
        return hit[2]

    def put(self, request: tuple, states: Sequence, view: tuple, reply: Reply) -> None:
        """Keep ``reply`` for ``request`` (all forgotten when full)."""
        if len(self._last) >= self.SIZE and request not in self._last:
            self._last.clear()
        self._last[request] = (list(states), view, reply)


#: ``build(pkt, states)`` -> (reply packet, "data"/"status", DATA item per
#: state or None), or None when it answered otherwise
Build = Callable[[object, Sequence[DeviceState]], tuple | None]


class Inquiries:
    """The steps every inquiry handler takes; one per session (its
    :class:`Replies` are the session's)."""

    def __init__(self, out: RciTransport, port: RobotPort, answers: Answers, calls: RobotCalls,
                 ca: CaState):
        self.out = out
        self.port = port
        self.answers = answers
        self.calls = calls
        self.ca = ca
        self._replies = Replies()

    def ids(self, base: int, device_class: str, pkt) -> list[int] | None:
        """The ids of an inquiry; None when an id is invalid (then answered:
        CStRp INVALID_ID)."""
        ids = [i for i, _ in pkt.items]
        if self.ca.invalid(device_class, ids):
            self.answers.inquiry_failed(base, CStRpStatus.INVALID_ID,
                                        f"no {device_class} among ids {sorted(set(ids))}")
            return None
        return ids

    def now(self, base: int, device_class: str, pkt, build: Build) -> bool:
        """An inquiry's at-once part: refuse invalid ids, or answer from the
        port's cache; False, having sent nothing, when the states must be
        fetched (:meth:`fetched`). Raises PortUnavailable before anything
        is sent (the device list is not known)."""
        ids = self.ids(base, device_class, pkt)
        if ids is None:
            return True
        states = self.port.cached(device_class, ids)
        if states is None:
            return False
        self.answer(base, device_class, pkt, states, build)
        return True

    async def fetched(self, base: int, device_class: str, pkt, build: Build) -> None:
        """Answer an inquiry from states fetched from the robot side; CStRp
        ABORT when it does not answer."""
        try:
            states = await self.port.fetch(device_class, [i for i, _ in pkt.items])
        except PortUnavailable as exc:
            self.calls.unreachable(exc)
            self.answers.inquiry_failed(base, CStRpStatus.ABORT, f"robot not answering: {exc}")
            return
        self.calls.reachable()
        self.answer(base, device_class, pkt, states, build)

    def answer(self, base: int, device_class: str, pkt, states, build: Build) -> None:
        """Send the reply to ``pkt`` from ``states``: the kept one while the
        request, the state objects and the CA's view are the same, else
        ``build(pkt, states)``'s; then CCnAc when asked, and the port is told
        what the control application now knows."""
        request = (base, pkt.sub_code, pkt.form, tuple(pkt.items))
        view = self.ca.view(device_class)
        reply = self._replies.get(request, states, view)
        if reply is None:
            built = build(pkt, states)
            if built is None:
                return
            packet, what, data = built
            reply = Reply(self.out.encode(packet), what, data)
            self._replies.put(request, states, view, reply)
        self.out.send_encoded(reply.encoded)
        self.answers.status[base] = CStRpStatus.IDLE
        if pkt.rq_ack:
            self.out.send(CCnAc(base))
        self.port.delivered(device_class, CaView(states, view[0], reply.data), reply.what)
