"""One RCI control-application session: the state machine of 001 4.5 and 4.6.

Pure asyncio + the protocol library; the robot is reached through a
:class:`~bsal_ros.rci.port.RobotPort`. One session runs per TCP connection;
:class:`~bsal_ros.rci.server.RciServer` makes sure there is only one at a time.

Life of a session::

    login:         CA IIId -> login throttle wait -> auth (USER / AUTHENTICATE)
                   (``login()``, before the server gives the connection the
                   control-application slot; a refusal never touches the robot)
    init phase:    our IIId
                   CA ICaIq* -> ICaRp (every item answered)
                   CA IInCp  -> our IInCp, CBsTm          (control phase)
    control phase: every packet of 001 4.6 (see the handlers below)
    end:           EOF, watchdog (CSvTm NOACK), bad input (CSvTm ERROR),
                   guest writing (CSvTm ACCESS), robot gone (CSvTm ERROR)
                   -> homing cancelled, motors stopped, what the CA
                   activated deactivated, socket closed.

Commands are executed in the order received; only the steering homing runs in
the background (its CCnAc is sent when it ends), so that "while it runs,
steering commands get ABORT and everything else proceeds".
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from ..protocol.constants import (RCI_VERSION_MAJOR, RCI_VERSION_MINOR, CapInquiry, CapReply,
                                  CStRpStatus, Form, GetMotorStatus, GetSensorStatus,
                                  MotorType, RciCode, SensorCommandCode, SensorType, TermCode)
from ..protocol.errors import ProtocolError
from ..protocol.rci import (ALL_CODES, CODE_OF, SERVER_RECEIVES, AbsEncoderData, AccelData, CAcMt, CAcSn,
                            CBsTm, CBsTmIq, CCnAc, CGtMtIq, CGtMtRp, CGtSnIq, CGtSnRp, CRs, CStIq,
                            CStMt, CStRp, CStSn, CSvTm, ICaIq, ICaRp, IIId, IIID_SIZE, IInCp,
                            MotorCommandKind, MotorData, RciDecoder, RelEncoderData, StatusData,
                            UltrasonicData, VersionReply, encode_rci)
from ..core.result import Result
from ..protocol.values import STATVAL_MS_MAX, Statval, Timeval, speedval_unpack
from . import port as P
from .users import Users

log = logging.getLogger("bsal_ros.rci")

_FLAGS = 0x0800 | 0x4000 | 0x8000

SENSOR_CLASS = {SensorType.ULTRASONIC: P.ULTRASONIC, SensorType.RELENCODER: P.RELATIVE_ENCODER,
                SensorType.ABSENCODER: P.ABSOLUTE_ENCODER, SensorType.ACCEL: P.ACCELEROMETER}
MOTOR_CLASS = {MotorType.DC: P.DC_MOTOR, MotorType.PSERVO: P.PSERVO_MOTOR}

#: commands that change the robot: a guest may not send them
WRITE_CODES = frozenset({RciCode.CRs, RciCode.CAcMt, RciCode.CStMt, RciCode.CAcSn,
                         RciCode.CStSn})
#: packets only the CP sends (a CA asking ACCESS for them gets NO_SUPPORT)
CP_ONLY = frozenset({RciCode.CSvTm, RciCode.CBsTm, RciCode.CGtMtRp, RciCode.CGtSnRp})
#: commands whose status a CStIq reports (001 4.6.x "status inquiry" notes)
TRACKED = frozenset({RciCode.CRs, RciCode.CAcMt, RciCode.CStMt, RciCode.CGtMtIq,
                     RciCode.CAcSn, RciCode.CStSn, RciCode.CGtSnIq})

_RESULT_STATUS = {Result.OK: CStRpStatus.IDLE, Result.INVALID_ID: CStRpStatus.INVALID_ID,
                  Result.NOT_SUPPORTED: CStRpStatus.NO_SUPPORT}


def status_of(result: Result) -> CStRpStatus:
    """Port result -> CStRp status: refusals, faults, busy, bad requests = ABORT."""
    return _RESULT_STATUS.get(result.code, CStRpStatus.ABORT)


@dataclass
class SessionConfig:
    byteorder: str = "big"
    #: seconds without any packet (and no acknowledged command pending) after
    #: which the robot is stopped and the session ended with CSvTm NOACK
    watchdog_s: float = 2.0
    #: seconds allowed for the whole initialization phase
    init_timeout_s: float = 10.0
    #: seconds the robot side may stay unreachable before CSvTm ERROR
    #: (before that, commands are answered with ABORT)
    hardware_gone_s: float = 3.0
    #: length of the statval time window; the base time moves (and CBsTm is
    #: sent) before it is used up. 2**24-1 ms = about 4.66 h (001 4.7.3).
    base_time_span_ms: int = STATVAL_MS_MAX
    #: how long a closing socket is drained so the peer reads our last packet
    linger_s: float = 0.5
    server_name: bytes = b"bsal_ros"
    #: answers buffered for a CA that does not read before we stop reading it
    max_write_buffer: int = 64 * 1024
    #: how long such a CA may take to catch up before CSvTm NOACK
    drain_timeout_s: float = 5.0
    # --- server-level limits (RciServer; docs/SECURITY.md) ---
    #: failed logins from one address within login_window_s after which its
    #: further attempts wait before being answered (0: no throttle)
    login_max_failures: int = 3
    login_window_s: float = 60.0
    #: first wait; doubles with every further failure, up to login_max_delay_s
    login_delay_s: float = 1.0
    login_max_delay_s: float = 30.0
    #: addresses the throttle remembers at most (least recently active forgotten)
    login_table_size: int = 1024
    #: open connections that are not the session (identifying, throttled,
    #: refused, closing), in all and per source address (IPv6: per /64)
    max_pending: int = 16
    max_pending_per_address: int = 4


class _End(Exception):
    """End the session; ``term`` is the CSvTm code to send (None: just close)."""

    def __init__(self, reason: str, term: int | None = None, level: int = logging.INFO):
        super().__init__(reason)
        self.reason, self.term, self.level = reason, term, level


class RciSession:
    """One control application, from accept to close."""

    def __init__(self, port: P.RobotPort, users: Users, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, config: SessionConfig | None = None,
                 logger: logging.Logger | None = None):
        self.port = port
        self.users = users
        self.reader = reader
        self.writer = writer
        self.cfg = config or SessionConfig()
        self.log = logger or log
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.decoder = RciDecoder(self.cfg.byteorder, role="server")
        self._bo = self.cfg.byteorder
        self.user = None
        self.version = (RCI_VERSION_MAJOR, RCI_VERSION_MINOR)
        self.control_phase = False
        self._queue: list = []
        self._qpos = 0
        self._pending_error: ProtocolError | None = None
        self._last_rx = time.monotonic()
        self._ack_pending = 0
        self._status: dict[int, CStRpStatus] = {}
        self._activated: dict[str, set[int]] = {}
        self._home_task: asyncio.Task | None = None
        self._homing_ids: set[int] = set()
        self._port_down_since: float | None = None
        self._last_counts: dict[int, int] = {}
        self._base_ns = 0
        self._rebase_at_ns = 0
        self._closed = False
        self.end_reason = ""
        self.term_sent: int | None = None
        self._run_task: asyncio.Task | None = None
        self._forced_end: _End | None = None
        self._busy = False
        self._ending = False
        #: called once the robot is safe, before the socket's lingering close
        self.on_released = None
        #: retries refused safety stops across sessions (set by the server)
        self.stopper = None
        #: login throttle (set by the server) and this peer's key in it
        self.throttle = None
        self.throttle_key = ""
        #: how the throttle's wait is slept (injectable: tests)
        self.sleep = asyncio.sleep
        #: seconds this login waited because of the throttle
        self.throttled_for = 0.0
        self._logged_in = False
        self._init_used = 0.0
        #: bytes read at a time: one identification's worth before the login,
        #: so that a client not logged in (or throttled) never has more than a
        #: few decoded packets queued here (asyncio holds at most 128 KiB of
        #: raw bytes for it, then stops reading its socket)
        self._read_size = IIID_SIZE

    # ================================================================= login
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
                pkt = await asyncio.wait_for(self._next(), self.cfg.init_timeout_s)
            except asyncio.TimeoutError:
                raise _End("initialization not completed in time (no RCI-IIId)",
                           TermCode.NOACK, logging.WARNING) from None
            if not isinstance(pkt, IIId):
                raise _End(f"bad input: {type(pkt).__name__} before RCI-IIId", TermCode.ERROR,
                           logging.WARNING)
            self._init_used = loop.time() - t0
            th, key = self.throttle, self.throttle_key
            delay = th.attempt(key) if th is not None else 0.0
            if delay > 0:
                # answered only after the wait; the slot is not held meanwhile
                self.throttled_for = delay
                await self.sleep(delay)
            user, why = self.users.authenticate(pkt.user_id, pkt.auth_key)
            if user is None:
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
                raise _End(f"refused user {name!r}: "
                           f"{'unknown user' if why == 'USER' else 'bad authentication key'}",
                           term, logging.DEBUG if delay > 0 else logging.WARNING)
            if th is not None:
                th.succeeded(key)
            self._read_size = 65536
            ours = (RCI_VERSION_MAJOR, RCI_VERSION_MINOR)
            self.version = min(ours, (pkt.vers_major, pkt.vers_minor))
            self.user = user
            self._logged_in = True
            return True
        except _End as e:
            await self._finish_login(e)
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            await self._finish_login(_End(f"connection lost ({exc.__class__.__name__})"))
        except asyncio.CancelledError:
            self._closed = True
            try:
                self.writer.close()
            except Exception:
                pass
            raise
        return False

    async def _finish_login(self, end: _End) -> None:
        self.end_reason = end.reason
        self.log.log(end.level, "RCI client %s (-): session ends: %s%s", self.peer, end.reason,
                     f"; sent CSvTm {TermCode(end.term).name}" if end.term else "")
        if end.term is not None and not self._closed:
            self._send(CSvTm(end.term))
            self.term_sent = int(end.term)
        self._ending = True
        await self._close_socket()

    # ================================================================ driver
    async def run(self) -> None:
        if not self._logged_in and not await self.login():
            return
        self._run_task = asyncio.current_task()
        watchdog = asyncio.get_running_loop().create_task(self._watchdog())
        end: _End | None = None
        try:
            try:
                # the rest of init_timeout_s (the throttle's wait not counted)
                left = max(self.cfg.init_timeout_s - self._init_used, 0.05)
                await asyncio.wait_for(self._init_phase(), left)
            except asyncio.TimeoutError:
                if self._forced_end is not None:
                    raise asyncio.CancelledError from None
                raise _End("initialization not completed in time", TermCode.NOACK,
                           logging.WARNING) from None
            self.port.session_event("connected", self.user.name if self.user else "")
            await self._control_phase()
        except _End as e:
            end = e
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            end = _End(f"connection lost ({exc.__class__.__name__})")
        except asyncio.CancelledError:
            if self._forced_end is None:
                end = _End("gateway shutting down", TermCode.EMERGENCY)
                watchdog.cancel()
                await self._finish(end)
                raise
            end = self._forced_end
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        except Exception as exc:   # never crash the gateway: log and clean up
            self.log.exception("RCI client %s: internal error", self.peer)
            end = _End(f"internal error: {exc!r}", TermCode.ERROR, logging.ERROR)
        watchdog.cancel()
        await self._finish(end or _End("closed"))

    def _force_end(self, end: _End) -> None:
        """End the session from another task (watchdog, homing)."""
        if self._forced_end is None:
            self._forced_end = end
            if self._run_task is not None and not self._run_task.done():
                self._run_task.cancel()

    async def _finish(self, end: _End) -> None:
        self.end_reason = end.reason
        self.log.log(end.level, "RCI client %s (%s): session ends: %s%s", self.peer,
                     self.user.name if self.user else "-", end.reason,
                     f"; sent CSvTm {TermCode(end.term).name}" if end.term else "")
        if end.term is not None and not self._closed:
            self._send(CSvTm(end.term))
            self.term_sent = int(end.term)
        self._ending = True      # nothing may follow a CSvTm
        await self._safety_stop()
        self.port.session_event("closed", end.reason)
        if self.on_released is not None:
            self.on_released()        # robot safe: the next client may come in
        await self._close_socket()

    async def _safety_stop(self) -> None:
        task, self._home_task = self._home_task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.gather(task, return_exceptions=True)),
                                       2.0)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        deactivate = {cls: sorted(ids) for cls, ids in self._activated.items() if ids}
        try:
            failed = await asyncio.wait_for(self.port.stop_all(deactivate), 5.0)
        except Exception as exc:   # the port promises not to raise; be safe anyway
            self.log.error("RCI client %s: safety stop failed: %r", self.peer, exc)
            failed = set(P.MOTOR_CLASSES)
        if failed and self.stopper is not None:
            self.stopper.add(failed)
        self._activated.clear()

    async def _close_socket(self) -> None:
        if self._closed:
            return
        self._closed = True
        w = self.writer
        try:
            if w.can_write_eof():
                w.write_eof()
            await asyncio.wait_for(w.drain(), self.cfg.linger_s)
            # drain what the peer still sends so that closing does not reset
            # the connection before it has read our last packet
            deadline = time.monotonic() + self.cfg.linger_s
            while (left := deadline - time.monotonic()) > 0:
                data = await asyncio.wait_for(self.reader.read(65536), left)
                if not data:
                    break
        except (asyncio.TimeoutError, ConnectionError, OSError, RuntimeError):
            pass
        finally:
            try:
                w.close()
            except Exception:
                pass

    async def _watchdog(self) -> None:
        period = max(0.01, min(self.cfg.watchdog_s / 4, 0.25))
        while True:
            await asyncio.sleep(period)
            if not self.control_phase or self._ack_pending or self._busy:
                continue
            if time.monotonic() - self._last_rx > self.cfg.watchdog_s:
                self._force_end(_End(f"watchdog: silent for more than {self.cfg.watchdog_s:.1f} s",
                                     TermCode.NOACK, logging.WARNING))
                return

    # ============================================================== reading
    async def _next(self):
        """Next decoded packet; raises _End on EOF / bad input."""
        while self._qpos >= len(self._queue):
            if self._pending_error is not None:
                err, self._pending_error = self._pending_error, None
                raise _End(f"bad input: {err}", TermCode.ERROR, logging.WARNING)
            data = await self.reader.read(self._read_size)
            if not data:
                raise _End("control application closed the connection")
            self._last_rx = time.monotonic()
            try:
                self._queue = self.decoder.feed(data)
            except ProtocolError as err:
                self._queue = err.packets
                self._pending_error = err
            self._qpos = 0
        pkt = self._queue[self._qpos]
        self._qpos += 1
        return pkt

    def _send(self, pkt) -> None:
        if self._closed or self._ending:
            return
        self.writer.write(encode_rci(pkt, self._bo))

    # ========================================================= initialization
    async def _init_phase(self) -> None:
        user = self.user             # authenticated by login()
        self._send(IIId(RCI_VERSION_MAJOR, RCI_VERSION_MINOR, self.cfg.server_name))
        self.log.info("RCI client %s: user %s (%s), protocol %d.%d", self.peer, user.name,
                      user.role, *self.version)
        while True:
            pkt = await self._next()
            if isinstance(pkt, ICaIq):
                if pkt.items:
                    self._send(ICaRp([(cid, self._capability(cid, t)) for cid, t in pkt.items]))
            elif isinstance(pkt, IInCp):
                self._send(IInCp())
                self.control_phase = True
                self._rebase(send=True)
                return
            else:
                raise _End(f"bad input: {type(pkt).__name__} in the initialization phase",
                           TermCode.ERROR, logging.WARNING)

    def _capability(self, control_id: int, inq: int):
        base, flags = control_id & ~_FLAGS, control_id & _FLAGS
        known = base in ALL_CODES and not ((flags & 0xC000) and not base & 0x0200) \
            and not (flags & 0xC000 == 0xC000)
        if inq == CapInquiry.VERSION:
            return VersionReply(*self.version) if known else VersionReply(0, 0)
        if not known:
            return CapReply.ERROR
        if inq == CapInquiry.SUPPORT:
            return CapReply.PERMISSION if base in SERVER_RECEIVES else CapReply.NO_SUPPORT
        if base not in SERVER_RECEIVES or base in CP_ONLY:
            return CapReply.NO_SUPPORT
        if self.user.read_only and base in WRITE_CODES:
            return CapReply.NO_PERMISSION
        return CapReply.PERMISSION

    # ============================================================ base time
    def _rebase(self, send: bool) -> None:
        now = time.time_ns()
        self._base_ns = now
        span = max(int(self.cfg.base_time_span_ms), 1000)
        # move on with a margin (a tenth of the span, at most 10 minutes)
        margin = min(span // 10, 600_000)
        self._rebase_at_ns = now + (span - margin) * 1_000_000
        if send:
            self._send(CBsTm(Timeval.from_ns(now)))

    def _statval(self, state) -> int:
        """statval of a state against this session's base time (ms floored)."""
        stamp_ns = 0 if state.stamp is None else round(state.stamp * 1e9)
        ms = (stamp_ns - self._base_ns) // 1_000_000
        return Statval(state.on, state.up, state.ok, ms).pack()

    # ========================================================= control phase
    async def _control_phase(self) -> None:
        handlers = {
            CStIq: self._h_cstiq, CRs: self._h_crs, CBsTmIq: self._h_cbstmiq,
            CAcMt: self._h_cacmt, CStMt: self._h_cstmt, CGtMtIq: self._h_cgtmtiq,
            CAcSn: self._h_cacsn, CStSn: self._h_cstsn, CGtSnIq: self._h_cgtsniq,
            CStRp: self._h_ignore, CCnAc: self._h_ignore,
        }
        while True:
            pkt = await self._next()
            if time.time_ns() >= self._rebase_at_ns:
                self._rebase(send=True)
            h = handlers.get(type(pkt))
            if h is None:
                raise _End(f"bad input: {type(pkt).__name__} in the control phase",
                           TermCode.ERROR, logging.WARNING)
            self._busy = True
            try:
                await h(pkt)
                if self.writer.transport.get_write_buffer_size() > self.cfg.max_write_buffer:
                    # the CA sends faster than it reads: stop reading it until
                    # it catches up, so our buffer stays bounded
                    await self._drain()
            except P.PortUnavailable as exc:     # e.g. device list unknown: robot gone
                self._port_failed(pkt, exc)
            finally:
                self._busy = False
                self._last_rx = time.monotonic()

    async def _drain(self) -> None:
        try:
            await asyncio.wait_for(self.writer.drain(), self.cfg.drain_timeout_s)
        except asyncio.TimeoutError:
            raise _End(f"control application does not read its answers "
                       f"({self.writer.transport.get_write_buffer_size()} bytes pending for "
                       f"{self.cfg.drain_timeout_s:.1f} s)", TermCode.NOACK,
                       logging.WARNING) from None

    async def _h_ignore(self, pkt) -> None:
        self.log.debug("RCI client %s: ignoring unsolicited %s", self.peer, type(pkt).__name__)

    def _guard_write(self, base: int) -> None:
        if self.user.read_only:
            raise _End(f"guest sent {RciCode(base).name}, a command it may not use",
                       TermCode.ACCESS, logging.WARNING)

    def _finish_command(self, base: int, status: CStRpStatus, rq_ack: bool) -> None:
        self._status[base] = status
        if rq_ack:
            self._send(CCnAc(base) if status == CStRpStatus.IDLE else CStRp(base, status))

    async def _call(self, coro) -> Result:
        """Run a port command; PortUnavailable -> ABORT, or CSvTm ERROR when the
        robot side has been gone longer than hardware_gone_s."""
        try:
            res = await coro
        except P.PortUnavailable as exc:
            self._robot_unreachable(exc)
            self.log.warning("RCI client %s: robot not answering (%s): ABORT", self.peer, exc)
            return Result(Result.HARDWARE_FAULT, str(exc))
        self._port_down_since = None
        return res

    def _port_failed(self, pkt, exc: P.PortUnavailable) -> None:
        now = time.monotonic()
        if self._port_down_since is None:
            self._port_down_since = now
        if now - self._port_down_since > self.cfg.hardware_gone_s:
            raise _End(f"robot unreachable for more than {self.cfg.hardware_gone_s:.1f} s "
                       f"({exc})", TermCode.ERROR, logging.ERROR)
        base = int(CODE_OF[type(pkt)])
        self._status[base] = CStRpStatus.ABORT
        if isinstance(pkt, (CGtMtIq, CGtSnIq)) or getattr(pkt, "rq_ack", False):
            self._send(CStRp(base, CStRpStatus.ABORT))

    def _invalid(self, cls: str, ids) -> bool:
        valid = self.port.device_ids(cls)
        return any(i not in valid for i in ids)

    # ------------------------------------------------------------- status
    async def _h_cstiq(self, pkt: CStIq) -> None:
        cid = pkt.control_id
        base = cid & ~_FLAGS
        if base == RciCode.CStIq:
            st = CStRpStatus.IDLE
        elif base in TRACKED:
            if base == RciCode.CStMt and self._home_task is not None and not self._home_task.done():
                st = CStRpStatus.BUSY
            else:
                st = self._status.get(base, CStRpStatus.IDLE)
        else:
            st = CStRpStatus.NO_SUPPORT
        self._send(CStRp(cid, st))

    async def _h_cbstmiq(self, pkt: CBsTmIq) -> None:
        self._send(CBsTm(Timeval.from_ns(self._base_ns)))
        if pkt.rq_ack:
            self._send(CCnAc(RciCode.CBsTmIq))

    # -------------------------------------------------------------- reset
    async def _h_crs(self, pkt: CRs) -> None:
        self._guard_write(RciCode.CRs)
        await self._cancel_homing()
        if self.stopper is not None:
            await self.stopper.claim_all()
        self._ack_pending += 1
        try:
            res = await self._call(self.port.reset())
        finally:
            self._ack_pending -= 1
        if res.ok:
            self._activated.clear()
            self._last_counts.clear()
        self._finish_command(RciCode.CRs, status_of(res), pkt.rq_ack)

    async def _cancel_homing(self) -> None:
        task = self._home_task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    # ------------------------------------------------------------- motors
    async def _h_cacmt(self, pkt: CAcMt) -> None:
        self._guard_write(RciCode.CAcMt)
        cls = MOTOR_CLASS[pkt.sub_code]
        ids = [i for i, _ in pkt.items]
        if self._invalid(cls, ids):
            return self._finish_command(RciCode.CAcMt, CStRpStatus.INVALID_ID, pkt.rq_ack)
        if cls == P.PSERVO_MOTOR and self._homing_now():
            return self._finish_command(RciCode.CAcMt, CStRpStatus.ABORT, pkt.rq_ack)
        if self.stopper is not None:
            await self.stopper.claim(cls)
        await self._activate(RciCode.CAcMt, cls, pkt)

    async def _activate(self, base, cls, pkt) -> None:
        ids = [i for i, _ in pkt.items]
        flags = [bool(d) for _, d in pkt.items]
        self._ack_pending += pkt.rq_ack
        try:
            res = await self._call(self.port.activate(cls, ids, flags))
        finally:
            self._ack_pending -= pkt.rq_ack
        if res.ok:
            on = self._activated.setdefault(cls, set())
            for i, f in zip(ids, flags):
                (on.add if f else on.discard)(i)
        self._finish_command(base, status_of(res), pkt.rq_ack)

    def _homing_now(self) -> bool:
        return self._home_task is not None and not self._home_task.done()

    async def _h_cstmt(self, pkt: CStMt) -> None:
        self._guard_write(RciCode.CStMt)
        cls = MOTOR_CLASS[pkt.sub_code]
        ids = [i for i, _ in pkt.items]
        if self._invalid(cls, ids):
            return self._finish_command(RciCode.CStMt, CStRpStatus.INVALID_ID, pkt.rq_ack)
        resets = [i for i, d in pkt.items if d.kind == MotorCommandKind.RESET]
        if resets:
            if len(resets) != len(pkt.items) or self._homing_now():
                # mixing homing with speeds, or a second homing: protection
                return self._finish_command(RciCode.CStMt, CStRpStatus.ABORT, pkt.rq_ack)
            self._status[RciCode.CStMt] = CStRpStatus.BUSY
            self._homing_ids = set(resets)
            if pkt.rq_ack:
                self._ack_pending += 1
            self._home_task = asyncio.get_running_loop().create_task(
                self._home(resets, pkt.rq_ack))
            return
        if cls == P.PSERVO_MOTOR and self._homing_now():
            return self._finish_command(RciCode.CStMt, CStRpStatus.ABORT, pkt.rq_ack)
        settings = []
        for i, d in pkt.items:
            duty, value = speedval_unpack(d.speedval)
            settings.append(P.MotorSetting(i, duty, value))
        if self.stopper is not None:
            await self.stopper.claim(cls)
        self._ack_pending += pkt.rq_ack
        try:
            res = await self._call(self.port.set_motors(cls, settings))
        finally:
            self._ack_pending -= pkt.rq_ack
        self._finish_command(RciCode.CStMt, status_of(res), pkt.rq_ack)

    async def _home(self, ids: list[int], rq_ack: bool) -> None:
        status = CStRpStatus.ABORT
        end: _End | None = None
        try:
            # the book's CA homes right after a reset, without activating the
            # steering motor (001 3.3): the CP switches it on for the homing
            res = await self._call(self.port.activate(P.PSERVO_MOTOR, ids, [True] * len(ids)))
            if res.ok:
                self._activated.setdefault(P.PSERVO_MOTOR, set()).update(ids)
            for i in ids:
                if not res.ok:
                    break
                res = await self._call(self.port.home_steering(i))
            status = status_of(res)
        except asyncio.CancelledError:
            status = CStRpStatus.ABORT      # reset, session end: the homing was cancelled
            raise
        except _End as e:
            end = e                         # the robot stayed unreachable while homing
        except Exception:                   # never leave the session waiting for an ack
            self.log.exception("RCI client %s: homing failed", self.peer)
        finally:
            self._homing_ids = set()
            if rq_ack:
                self._ack_pending -= 1
            self._finish_command(RciCode.CStMt, status, rq_ack)
            if end is not None:
                self._force_end(end)

    async def _h_cgtmtiq(self, pkt: CGtMtIq) -> None:
        sub = pkt.sub_code
        cls = MOTOR_CLASS[sub]
        ids = [i for i, _ in pkt.items]
        if self._invalid(cls, ids):
            return self._inquiry_failed(RciCode.CGtMtIq, CStRpStatus.INVALID_ID, pkt.rq_ack)
        if any(s == GetMotorStatus.TIME for _, s in pkt.items):
            return self._inquiry_failed(RciCode.CGtMtIq, CStRpStatus.NO_SUPPORT, pkt.rq_ack)
        snaps = self.port.cached(cls, ids)
        if snaps is None:
            snaps = await self._call_fetch(cls, ids)
        if snaps is None:
            return self._inquiry_failed(RciCode.CGtMtIq, CStRpStatus.ABORT, pkt.rq_ack)
        items = []
        pservo = sub == MotorType.PSERVO
        for (i, s), snap in zip(pkt.items, snaps):
            if s == GetMotorStatus.STATUS:
                items.append((i, StatusData(self._statval(snap))))
            else:
                items.append((i, MotorData(snap.speedval & 0xFFFF,
                                           (snap.mposval & 0xFFFFFFFF) if pservo else None)))
        self._send(CGtMtRp(sub, items, pkt.form))
        self._status[RciCode.CGtMtIq] = CStRpStatus.IDLE
        if pkt.rq_ack:
            self._send(CCnAc(RciCode.CGtMtIq))
        self.port.delivered(cls, snaps, "status" if pkt.items[0][1] == GetMotorStatus.STATUS
                            else "data")

    def _inquiry_failed(self, base: int, status: CStRpStatus, rq_ack: bool) -> None:
        self._status[base] = status
        self._send(CStRp(base, status))

    async def _call_fetch(self, cls, ids):
        try:
            snaps = await self.port.fetch(cls, ids)
        except P.PortUnavailable as exc:
            self._robot_unreachable(exc)
            return None
        self._port_down_since = None
        return snaps

    def _robot_unreachable(self, exc: Exception) -> None:
        """Note a failed call; end the session (CSvTm ERROR) once the robot
        side has been gone longer than hardware_gone_s."""
        now = time.monotonic()
        if self._port_down_since is None:
            self._port_down_since = now
        if now - self._port_down_since > self.cfg.hardware_gone_s:
            raise _End(f"robot unreachable for more than {self.cfg.hardware_gone_s:.1f} s "
                       f"({exc})", TermCode.ERROR, logging.ERROR)

    # ------------------------------------------------------------ sensors
    async def _h_cacsn(self, pkt: CAcSn) -> None:
        self._guard_write(RciCode.CAcSn)
        cls = SENSOR_CLASS[pkt.sub_code]
        if self._invalid(cls, [i for i, _ in pkt.items]):
            return self._finish_command(RciCode.CAcSn, CStRpStatus.INVALID_ID, pkt.rq_ack)
        await self._activate(RciCode.CAcSn, cls, pkt)

    async def _h_cstsn(self, pkt: CStSn) -> None:
        self._guard_write(RciCode.CStSn)
        cls = SENSOR_CLASS[pkt.sub_code]
        ids = [i for i, _ in pkt.items]
        if self._invalid(cls, ids):
            return self._finish_command(RciCode.CStSn, CStRpStatus.INVALID_ID, pkt.rq_ack)
        self._ack_pending += pkt.rq_ack
        try:
            if pkt.sub_code == SensorType.RELENCODER:
                res = await self._call(self.port.clear_encoders(ids))
                if res.ok:
                    for i in ids:
                        self._last_counts[i] = 0
            else:
                timings: dict[int, P.SonarTiming] = {}
                for i, d in pkt.items:
                    t = timings.setdefault(i, P.SonarTiming(i))
                    if d.kind == SensorCommandCode.ULTRASONIC_ORDER:
                        t.firing_slot = int(d.value)
                    else:
                        t.interval_ms = int(d.value)
                res = await self._call(self.port.set_sonar_timing(list(timings.values())))
        finally:
            self._ack_pending -= pkt.rq_ack
        self._finish_command(RciCode.CStSn, status_of(res), pkt.rq_ack)

    async def _h_cgtsniq(self, pkt: CGtSnIq) -> None:
        sub = pkt.sub_code
        cls = SENSOR_CLASS[sub]
        pitems = pkt.items
        ids = [i for i, _ in pitems]
        if self._invalid(cls, ids):
            return self._inquiry_failed(RciCode.CGtSnIq, CStRpStatus.INVALID_ID, pkt.rq_ack)
        snaps = self.port.cached(cls, ids)
        if snaps is None:
            snaps = await self._call_fetch(cls, ids)
            if snaps is None:
                return self._inquiry_failed(RciCode.CGtSnIq, CStRpStatus.ABORT, pkt.rq_ack)
        DATA, STATUS = GetSensorStatus.DATA, GetSensorStatus.STATUS
        items = []
        append = items.append
        for (i, s), snap in zip(pitems, snaps):
            if s == DATA:
                if sub == SensorType.ULTRASONIC:
                    append((i, UltrasonicData(snap.delay_us & 0xFFFF)))
                elif sub == SensorType.RELENCODER:
                    count = _i16(snap.count)
                    last = self._last_counts.get(i)
                    d = 0 if last is None else _i16(count - last)
                    self._last_counts[i] = count
                    append((i, RelEncoderData(d, count)))
                elif sub == SensorType.ABSENCODER:
                    append((i, AbsEncoderData(_i16(snap.count))))
                else:
                    append((i, AccelData(float(snap.accel_g))))
            elif s == STATUS:
                append((i, StatusData(self._statval(snap))))
            else:
                return self._inquiry_failed(RciCode.CGtSnIq, CStRpStatus.NO_SUPPORT, pkt.rq_ack)
        self._send(CGtSnRp(sub, items, pkt.form))
        self._status[RciCode.CGtSnIq] = CStRpStatus.IDLE
        if pkt.rq_ack:
            self._send(CCnAc(RciCode.CGtSnIq))
        self.port.delivered(cls, snaps, "status" if pitems[0][1] == STATUS else "data")


def _i16(v: int) -> int:
    """Wrap into gint16 (encoder counts wrap on the wire as on the board)."""
    v = int(v) & 0xFFFF
    return v - 0x10000 if v & 0x8000 else v
