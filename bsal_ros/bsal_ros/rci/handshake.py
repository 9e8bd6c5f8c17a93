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
            silence, whichever is first (ICaIq still answered after it),
            and never before the robot is known (``hardware_wait_s``, then
            the CP's refusal: IInCp + CSvTm ERROR);
            CA IInCp -> CBsTm (control phase)

:class:`Handshake` is an object of its own, made by the session with what it
needs (the connection, the users, the robot port, the settings, the login
throttle); loop thread only.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

from .port import RobotPort
from .settings import SessionConfig
from .transport import RciTransport, SessionEnd
from .users import Users
from ..protocol.constants import (CapInquiry, CapReply, RCI_VERSION_MAJOR, RCI_VERSION_MINOR,
                                  TermCode)
from ..protocol.rci import ICaIq, ICaRp, IIId, IInCp, VersionReply
from ..protocol.rci_packets import FLAGS
from ..protocol.rci_registry import command

# Who may send what (the guest rule: a command declared ``writes``), what the
# CP accepts from a CA and what only the CP sends come from each code's
# declaration (bsal_ros/protocol/rci_commands.py).
#: flag bits that make a control id poly or group
_MULTI_FLAGS = 0xC000


class Handshake:
    """Identification, login throttle, authentication and capability answers
    of one connection."""

    def __init__(self, transport: RciTransport, users: Users, port: RobotPort,
                 cfg: SessionConfig, log: logging.Logger, throttle=None, throttle_key: str = "",
                 sleep: Callable = asyncio.sleep):
        self.transport = transport
        self.users = users
        self.port = port
        self.cfg = cfg
        self.log = log
        self.peer = transport.peer
        #: the login throttle (None: none) and this peer's key in it
        self.throttle = throttle
        self.throttle_key = throttle_key
        #: how the throttle's wait is slept (injectable: tests)
        self.sleep = sleep
        #: the authenticated user (None until login() accepted it)
        self.user = None
        #: the protocol version both sides speak (the lower of the two)
        self.version = (RCI_VERSION_MAJOR, RCI_VERSION_MINOR)
        #: seconds this login waited because of the throttle
        self.throttled_for = 0.0
        #: why a refused login ended ("" : it did not)
        self.end_reason = ""
        self._init_used = 0.0

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
        self.transport.send_term(end.term)
        await self.transport.close(self.cfg.linger_s)

    async def initialize(self, forced_end: Callable[[], bool]) -> None:
        """The initialization phase within the rest of ``init_timeout_s``
        (the throttle's wait not counted), CSvTm NOACK past it; returns once
        both IInCp are exchanged (the caller sends CBsTm at once). While the
        robot is not known yet the wait for it (bounded by ``hardware_wait_s``)
        does not count against the CA's time. ``forced_end()``: the session
        is being ended from another task (a time-out then is that end's
        cancellation, not the CA's slowness)."""
        left = max(self.cfg.init_timeout_s - self._init_used, 0.05)
        waiting = self.port.waiting_for()
        if waiting:
            left += self.cfg.hardware_wait_s
        try:
            await asyncio.wait_for(self._init_phase(waiting), left)
        except asyncio.TimeoutError:
            if forced_end():
                raise asyncio.CancelledError from None
            raise SessionEnd("initialization not completed in time", TermCode.NOACK,
                             logging.WARNING) from None

    async def _init_phase(self, waiting: str = "") -> None:
        """Our IIId, then capability answers until both IInCp are exchanged.

        001 4.5.3 lets either side send IInCp "at any time following the
        exchange of RCI-IIId packets", so a CA may wait for ours: we send it
        when the CA's arrives or after ``init_quiet_s`` without a packet from
        the CA, whichever comes first, and keep answering ICaIq until the CA's
        IInCp ends the phase (then CBsTm, 001 4.6.15).

        ``waiting`` (the port's :meth:`~bsal_ros.rci.port.RobotPort.waiting_for`
        at the start): the robot is not known yet, so ours is held until it is
        (a read sent before would be answered ABORT for a device the robot
        has); past ``hardware_wait_s`` the CP refuses service: IInCp, then
        CSvTm ERROR (001 4.5: the CP's refusal of service)."""
        user = self.user             # authenticated by login()
        send = self.transport.send
        send(IIId(RCI_VERSION_MAJOR, RCI_VERSION_MINOR, self.cfg.server_name))
        self.log.info("RCI client %s: user %s (%s), protocol %d.%d", self.peer, user.name,
                      user.role, *self.version)
        loop = asyncio.get_running_loop()
        robot = loop.create_task(self._robot_known(waiting)) if waiting else None
        quiet = self.cfg.init_quiet_s
        quiet_at = loop.time() + quiet if quiet > 0 else None
        ours_sent = ca_done = False
        reading = None
        try:
            while True:
                if robot is not None and robot.done():
                    try:
                        robot.result()
                    except SessionEnd:
                        if not ours_sent:
                            send(IInCp())      # the CP's refusal of service: IInCp, CSvTm
                        raise
                    robot = None
                if robot is None and not ours_sent and (
                        ca_done or (quiet_at is not None and loop.time() >= quiet_at)):
                    send(IInCp())
                    ours_sent = True
                    if not ca_done:            # the CA waits for us (001 4.5.3): ours first
                        self.log.debug("RCI client %s: quiet for %.2f s after IIId: IInCp "
                                       "sent first", self.peer, quiet)
                if ca_done and ours_sent:
                    return
                if reading is None and not ca_done:
                    # after the CA's IInCp its next packets are the control phase's
                    reading = loop.create_task(self.transport.next())
                timeout = None
                if robot is None and not ours_sent and quiet_at is not None:
                    timeout = max(quiet_at - loop.time(), 0.0)
                done, _ = await asyncio.wait([t for t in (reading, robot) if t is not None],
                                             timeout=timeout,
                                             return_when=asyncio.FIRST_COMPLETED)
                if reading is None or reading not in done:
                    continue
                pkt, reading = reading.result(), None
                if quiet_at is not None:
                    quiet_at = loop.time() + quiet
                if isinstance(pkt, ICaIq):
                    if pkt.items:
                        send(ICaRp([(cid, self._capability(cid, t)) for cid, t in pkt.items]))
                elif isinstance(pkt, IInCp):
                    ca_done = True
                else:
                    raise SessionEnd(f"bad input: {type(pkt).__name__} in the initialization "
                                     f"phase", TermCode.ERROR, logging.WARNING)
        finally:
            for task in (reading, robot):
                if task is not None:
                    task.cancel()
                    if task.done() and not task.cancelled():
                        task.exception()       # retrieved: no "never retrieved" warning

    async def _robot_known(self, waiting: str) -> None:
        """Until the port knows the robot (one log line saying what it waits
        for); SessionEnd (CSvTm ERROR) when it does not within ``hardware_wait_s``."""
        bound = self.cfg.hardware_wait_s
        t0 = asyncio.get_running_loop().time()
        self.log.info("RCI client %s: waiting for the hardware node: %s (IInCp held, at most "
                      "%.1f s: hardware_wait_s)", self.peer, waiting, bound)
        try:
            await asyncio.wait_for(self.port.ready(), bound)
        except asyncio.TimeoutError:
            raise SessionEnd(f"the hardware node is not known after {bound:.1f} s "
                             f"(hardware_wait_s): {self.port.waiting_for() or waiting}",
                             TermCode.ERROR, logging.WARNING) from None
        self.log.info("RCI client %s: hardware node known after %.2f s", self.peer,
                      asyncio.get_running_loop().time() - t0)

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
