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

"""Login and initialization phase of an RCI session (seed 001 4.5).

login:      CA IIId -> login throttle wait -> user and key checked
            (before the server gives the connection the control-application
            slot; a refusal never touches the robot)
init phase: our IIId; CA ICaIq* -> ICaRp (every item answered);
            our IInCp when the CA's arrives or after ``init_quiet_s`` of
            silence, whichever is first (ICaIq still answered after it);
            CA IInCp -> CBsTm (control phase)

A mix-in of :class:`~bsal_ros.rci.session.RciSession`; it reads and writes the
session's state.
"""

from __future__ import annotations

import asyncio
import logging

from .transport import SessionEnd
from ..protocol.constants import (CapInquiry, CapReply, RCI_VERSION_MAJOR, RCI_VERSION_MINOR,
                                  TermCode)
from ..protocol.rci import CSvTm, ICaIq, ICaRp, IIId, IInCp, VersionReply
from ..protocol.rci_packets import FLAGS
from ..protocol.rci_registry import command

# Who may send what (the guest rule: a command declared ``writes``), what the
# CP accepts from a CA and what only the CP sends come from each code's
# declaration (bsal_ros/protocol/rci_commands.py).
#: flag bits that make a control id poly or group
_MULTI_FLAGS = 0xC000


class Handshake:
    """Identification, login throttle, authentication and capability answers."""

    async def login(self) -> bool:
        """Identification, before the server gives this connection the
        control-application slot: read RCI-IIId (within ``init_timeout_s``),
        wait what the login throttle says, check user and key.

        True: accepted (``user`` set, nothing answered yet: :meth:`run`
        answers). False: refused, answered with CSvTm and closed; the robot is
        never touched and no session event is sent."""
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        try:
            try:
                pkt = await asyncio.wait_for(self.transport.next(), self.cfg.init_timeout_s)
            except asyncio.TimeoutError:
                raise SessionEnd("initialization not completed in time (no RCI-IIId)",
                                 TermCode.NOACK, logging.WARNING) from None
            if not isinstance(pkt, IIId):
                raise SessionEnd(f"bad input: {type(pkt).__name__} before RCI-IIId",
                                 TermCode.ERROR, logging.WARNING)
            self._init_used = loop.time() - t0
            th, key = self.throttle, self.throttle_key
            delay = th.attempt(key) if th is not None else 0.0
            if delay > 0:
                # answered only after the wait; the slot is not held meanwhile
                self.throttled_for = delay
                await self.sleep(delay)
            user, why = self.users.authenticate(pkt.user_id, pkt.auth_key)
            if user is None:
                self._refuse_login(pkt, why, delay)
            if th is not None:
                th.succeeded(key)
            self.transport.logged_in()
            ours = (RCI_VERSION_MAJOR, RCI_VERSION_MINOR)
            self.version = min(ours, (pkt.vers_major, pkt.vers_minor))
            self.user = user
            self._logged_in = True
            return True
        except SessionEnd as e:
            await self._finish_login(e)
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            await self._finish_login(SessionEnd(f"connection lost ({exc.__class__.__name__})"))
        except asyncio.CancelledError:
            self.transport.abort()
            raise
        return False

    def _refuse_login(self, pkt: IIId, why: str, delay: float) -> None:
        """Count a failed login with the throttle and end with CSvTm USER or
        AUTHENTICATE (logged once per throttling episode, not per attempt)."""
        th, key = self.throttle, self.throttle_key
        name = pkt.user_id.decode("utf-8", "replace")[:16]
        started = th.failed(key) if th is not None else False
        if started:
            self.log.warning(
                "RCI logins from %s throttled: %d failed within %.0f s; each further "
                "attempt from there waits %.1f s, doubling up to %.1f s, until a login "
                "succeeds or %.0f s pass without one", key, th.max_failures,
                th.window_s, th.base_delay_s, th.max_delay_s, th.window_s)
        term = TermCode.USER if why == "USER" else TermCode.AUTHENTICATE
        # while throttled, one line per episode (above), not one per attempt
        raise SessionEnd(f"refused user {name!r}: "
                         f"{'unknown user' if why == 'USER' else 'bad authentication key'}",
                         term, logging.DEBUG if delay > 0 else logging.WARNING)

    async def _finish_login(self, end: SessionEnd) -> None:
        self.end_reason = end.reason
        self.log.log(end.level, "RCI client %s (-): session ends: %s%s", self.peer, end.reason,
                     f"; sent CSvTm {TermCode(end.term).name}" if end.term else "")
        self._send_term(end)
        await self.transport.close(self.cfg.linger_s)

    def _send_term(self, end: SessionEnd) -> None:
        """Send the CSvTm of an ending session, if any; nothing may follow it."""
        if end.term is not None and not self.transport.closed:
            self.transport.send(CSvTm(end.term))
            self.term_sent = int(end.term)
        self.transport.ending = True

    async def _init_phase(self) -> None:
        """Our IIId, then capability answers until the CA's IInCp.

        001 4.5.3 lets either side send IInCp "at any time following the
        exchange of RCI-IIId packets", so a CA may wait for ours: we send it
        when the CA's arrives or after ``init_quiet_s`` without a packet from
        the CA, whichever comes first, and keep answering ICaIq until the CA's
        IInCp ends the phase (then CBsTm, 001 4.6.15)."""
        user = self.user             # authenticated by login()
        send = self.transport.send
        send(IIId(RCI_VERSION_MAJOR, RCI_VERSION_MINOR, self.cfg.server_name))
        self.log.info("RCI client %s: user %s (%s), protocol %d.%d", self.peer, user.name,
                      user.role, *self.version)
        quiet = self.cfg.init_quiet_s
        ours_sent = False
        while True:
            if ours_sent or quiet <= 0:
                pkt = await self.transport.next()
            else:
                try:
                    pkt = await asyncio.wait_for(self.transport.next(), quiet)
                except asyncio.TimeoutError:
                    # the CA waits for us (001 4.5.3): ours first
                    send(IInCp())
                    ours_sent = True
                    self.log.debug("RCI client %s: quiet for %.2f s after IIId: IInCp sent "
                                   "first", self.peer, quiet)
                    continue
            if isinstance(pkt, ICaIq):
                if pkt.items:
                    send(ICaRp([(cid, self._capability(cid, t)) for cid, t in pkt.items]))
            elif isinstance(pkt, IInCp):
                if not ours_sent:
                    send(IInCp())
                self.control_phase = True
                self._rebase(send=True)
                return
            else:
                raise SessionEnd(f"bad input: {type(pkt).__name__} in the initialization phase",
                                 TermCode.ERROR, logging.WARNING)

    def _capability(self, control_id: int, inq: int):
        """The answer to one capability inquiry item (001 4.5.4)."""
        base, flags = control_id & ~FLAGS, control_id & FLAGS
        spec = command(base)
        known = spec is not None and not ((flags & _MULTI_FLAGS) and not base & 0x0200) \
            and not (flags & _MULTI_FLAGS == _MULTI_FLAGS)
        if not known:
            return CapReply.ERROR       # 001 4.5.5: for any inquiry type, one byte
        if inq == CapInquiry.VERSION:
            return VersionReply(*self.version)
        if inq == CapInquiry.SUPPORT:
            # "is it implemented?", whoever asks (a guest too): the CP accepts
            # it from a CA -> PERMISSION, else (packets only the CP sends, a
            # code declared unsupported) NO_SUPPORT
            return CapReply.PERMISSION if spec.server_receives else CapReply.NO_SUPPORT
        if not spec.server_receives:
            return CapReply.NO_SUPPORT
        if self.user.read_only and spec.writes:
            return CapReply.NO_PERMISSION
        return CapReply.PERMISSION
