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

"""The RCI gateway's limits (docs/SECURITY.md), one test or more per limit:
login throttle (pure, with an injectable clock; and on sockets, with an
injectable sleep so that no test depends on timing), the bound on connections
that are not the session, the guest role, the demo-key refusal, the largest
packet, keys never logged. Loopback only (127.0.0.1 and 127.0.0.2, both
loopback), every loop bounded. The RDI limits are tested in
test_rdi_server.py / test_rdi_state.py; the watchdog, the init timeout and the
write buffer in test_rci_gateway.py (SECURITY.md names each test)."""

from __future__ import annotations

import logging
import os
import re
import socket
import time

import pytest

from bsal_ros.protocol._items import MAX_PACKET
from bsal_ros.protocol.constants import (CapInquiry, CStRpStatus, GetMotorStatus, GetSensorStatus,
                                         MotorType, RciCode, SensorCommandCode, SensorType,
                                         TermCode)
from bsal_ros.protocol.rci import (CAcMt, CAcSn, CBsTm, CBsTmIq, CCnAc, CGtMtIq, CGtMtRp, CGtSnIq,
                                   CGtSnRp, CRs, CStIq, CStMt, CStRp, CStSn, CSvTm, encode_rci,
                                   ICaIq, IIId, IInCp, MotorCommand, MotorCommandKind, RciDecoder,
                                   SensorCommand)
from bsal_ros.rci import (address_key, check_bind_allowed, LoginThrottle, PendingLimit, RciServer,
                          Users, UsersFileError)
from bsal_ros.rci.client import RciClient
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.users import DEMO_KEY

from conftest import RciServerThread

pytestmark = pytest.mark.timeout(120)

OPS_KEY = bytes.fromhex("ffeeddccbbaa99887766554433221100")
WRONG_KEY = bytes.fromhex("5ec4e75ec4e75ec4e75ec4e75ec4e7aa")
GUEST_KEY = bytes(16)
USERS_YAML = f"""
users:
  - {{name: guest, role: guest, key: "{GUEST_KEY.hex()}"}}
  - {{name: ops, role: operator, key: "{OPS_KEY.hex()}"}}
"""
OTHER = "127.0.0.2"          # a second source address, still loopback


#: what a connection over max_pending reads before the close: IInCp, CSvTm ACCESS
REFUSAL = bytes.fromhex("0011" "0102" "0010")


def wait_for(cond, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


class ServerThread(RciServerThread):
    """The shared server thread with this file's users; throttle waits gated."""

    def __init__(self, users_yaml=USERS_YAML, **cfg):
        super().__init__(users_yaml, gate=True, **{"linger_s": 0.05, **cfg})


@pytest.fixture
def gw():
    s = ServerThread()
    yield s
    s.stop()


def login(gw, user="ops", key=OPS_KEY, source=None) -> RciClient:
    c = RciClient("127.0.0.1", gw.port, source=source)
    server_id, _, base = c.handshake(user, key)
    assert isinstance(server_id, IIId), server_id
    assert isinstance(base, CBsTm)
    return c


def wrong_login(gw, source=None, user=b"ops", key=WRONG_KEY):
    c = RciClient("127.0.0.1", gw.port, source=source)
    c.send(IIId(0, 3, user, key))
    return c


def refused_login(gw, source=None, user=b"ops", key=WRONG_KEY, term=TermCode.AUTHENTICATE):
    """A wrong login answered at once: the server ends it with CSvTm ``term``."""
    c = wrong_login(gw, source, user, key)
    assert c.wait_closed() == [CSvTm(term)]
    c.close()


def nothing_received(c: RciClient, wait_s: float = 1.0) -> bool:
    """True when no byte arrives within ``wait_s`` (a peek: nothing is consumed).
    Passing cannot depend on the machine's load; a byte that was coming
    (the defect) has that long to arrive."""
    c.sock.settimeout(wait_s)
    try:
        c.sock.recv(1, socket.MSG_PEEK)     # a byte, or the connection closed (b"")
        return False
    except TimeoutError:
        return True
    finally:
        c.sock.settimeout(c.timeout)


# ===================================================== login throttle (pure)
class Clock:

    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_throttle_after_n_failures_doubles_up_to_the_cap():
    clk = Clock()
    th = LoginThrottle(max_failures=3, window_s=60, base_delay_s=1, max_delay_s=30, clock=clk)
    a = "192.0.2.7"
    starts = []
    for _ in range(3):
        assert th.attempt(a) == 0.0           # the first N failures are answered at once
        starts.append(th.failed(a))
        clk.t += 1
    assert starts == [False, False, True]      # the Nth failure starts the episode
    delays = []
    for _ in range(8):
        d = th.attempt(a)
        delays.append(d)
        clk.t += d                             # the wait, then the answer
        assert th.failed(a) is False           # one episode line only
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]
    assert th.is_throttled(a)


def test_throttle_counts_only_failures_within_the_window():
    clk = Clock()
    th = LoginThrottle(max_failures=3, window_s=60, clock=clk)
    for _ in range(6):                         # one failure every 61 s: never throttled
        assert th.attempt("a") == 0.0
        assert not th.failed("a")
        clk.t += 61
    assert not th.is_throttled("a")
    for _ in range(3):                         # three within 60 s: throttled
        th.attempt("a")
        th.failed("a")
        clk.t += 29
    assert th.attempt("a") == 1.0


def test_throttle_success_resets_and_other_addresses_unaffected():
    clk = Clock()
    th = LoginThrottle(max_failures=2, window_s=60, base_delay_s=1, max_delay_s=8, clock=clk)
    for _ in range(4):
        th.attempt("a")
        th.failed("a")
    assert th.delay_for("a") == 4.0
    assert th.attempt("b") == 0.0              # another address
    assert th.attempt("a") == 4.0              # a success still waits its turn ...
    th.succeeded("a")                          # ... and then resets the address
    assert "a" not in th and th.attempt("a") == 0.0
    assert th.failed("a") is False and th.failed("a") is True   # a new episode


def test_throttle_entries_expire_after_a_quiet_window():
    clk = Clock()
    th = LoginThrottle(max_failures=1, window_s=60, base_delay_s=1, max_delay_s=30, clock=clk)
    th.failed("a")
    assert th.attempt("a") == 1.0
    clk.t += 1
    th.failed("a")
    clk.t += 60.5                              # quiet for longer than the window
    assert th.attempt("a") == 0.0 and len(th) == 0


def test_throttle_cap_longer_than_window_still_counts_the_failure():
    clk = Clock()
    th = LoginThrottle(max_failures=1, window_s=10, base_delay_s=40, max_delay_s=80, clock=clk)
    th.failed("a")
    assert th.attempt("a") == 40.0
    clk.t += 40                                # the wait is longer than the window
    th.failed("a")                             # not forgotten meanwhile
    assert th.attempt("a") == 80.0


def test_throttle_table_is_bounded():
    clk = Clock()
    th = LoginThrottle(max_failures=3, window_s=60, max_entries=64, clock=clk)
    for i in range(5000):
        th.failed(f"10.0.{i // 256}.{i % 256}")
        clk.t += 0.001
    assert len(th) == 64
    assert th.evicted == 5000 - 64
    assert "10.0.19.135" in th                 # the most recent one is kept (i = 4999)
    clk.t += 61                                # and everything expires
    th.failed("x")
    assert len(th) == 1


def test_throttle_disabled_and_validation():
    th = LoginThrottle(max_failures=0)
    for _ in range(10):
        th.failed("a")
        assert th.attempt("a") == 0.0
    with pytest.raises(ValueError):
        LoginThrottle(base_delay_s=10, max_delay_s=1)
    with pytest.raises(ValueError):
        LoginThrottle(window_s=0)


def test_address_key_groups_ipv6_by_64():
    assert address_key("127.0.0.2") == "127.0.0.2"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:192.0.2.1") == "192.0.2.1"
    assert address_key("fe80::1%eth0") == address_key("fe80::2")


def test_pending_limit_total_per_address_and_quiet_log():
    clk = Clock()
    p = PendingLimit(max_total=5, max_per_address=2, log_every_s=60, clock=clk)
    assert [p.enter("a") for _ in range(3)] == [None, None, "address"]
    assert [p.enter(k) for k in ("b", "b", "c", "d")] == [None, None, None, "total"]
    assert p.total == 5 and p.refused == 2
    assert p.should_log("a", "address") and not p.should_log("a", "address")
    assert p.should_log("d", "total") and not p.should_log("e", "total")
    clk.t += 61
    assert p.should_log("a", "address")        # once per period, not once forever
    p.leave("a")
    assert p.enter("d") is None and p.count("a") == 1


# =============================================== login throttle on sockets
def test_throttled_attempt_answered_after_the_delay_other_address_not_delayed(caplog):
    caplog.set_level(logging.DEBUG, logger="bsal_ros.rci")
    gw = ServerThread(login_max_failures=3, login_delay_s=1.0, login_max_delay_s=30.0)
    try:
        for _ in range(3):                     # N wrong keys: answered at once
            refused_login(gw)
        assert gw.gate.calls == []
        gw.gate.hold = True
        held = wrong_login(gw)                 # N+1: waits before it is answered
        wait_for(lambda: gw.gate.calls == [1.0], "the throttle's wait")
        assert nothing_received(held)          # not answered during the wait
        assert gw.server.session is None       # and it does not hold the slot
        # another address: not throttled, gets in and drives meanwhile
        other = login(gw, source=OTHER)
        assert other.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
        other.close()
        wait_for(lambda: gw.server.session is None, "the session to end")
        refused_login(gw, source=OTHER)
        assert gw.gate.calls == [1.0]          # neither was delayed
        assert nothing_received(held)
        gw.release()                           # the wait ends: now the answer
        assert held.wait_closed() == [CSvTm(TermCode.AUTHENTICATE)]
        held.close()
        gw.gate.hold = False
        refused_login(gw)                      # the next one waits twice as long
        assert gw.gate.calls == [1.0, 2.0]
        wait_for(lambda: gw.server.failed_logins == 6, "the count of failed logins")
    finally:
        gw.stop()
    # one line per throttled address per episode, not one per attempt
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("throttled" in r.getMessage() for r in lines) == 1
    assert sum("refused user" in r.getMessage() for r in lines) == 4   # 3 + 127.0.0.2's
    assert sum("refused user" in r.getMessage() for r in caplog.records) == 6


def test_throttle_success_resets_and_a_late_success_may_find_the_slot_taken():
    gw = ServerThread(login_max_failures=2, login_delay_s=0.5)
    try:
        for _ in range(2):
            refused_login(gw)
        gw.gate.hold = True
        late = RciClient("127.0.0.1", gw.port)
        late.send(IIId(0, 3, b"ops", OPS_KEY))           # right key, but throttled
        wait_for(lambda: gw.gate.calls == [0.5], "the throttle's wait")
        first = login(gw, source=OTHER)                   # takes the slot meanwhile
        gw.release()
        assert late.wait_closed() == [IInCp(), CSvTm(TermCode.ACCESS)]   # one at a time
        late.close()
        assert first.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
        first.close()
        wait_for(lambda: gw.server.session is None, "the session to end")
        gw.gate.hold = False
        # the right key was a success (refused only because the slot was taken):
        # the address is reset, its next logins are not delayed
        assert "127.0.0.1" not in gw.server.throttle
        login(gw).close()
        wait_for(lambda: gw.server.session is None, "the session to end")
        refused_login(gw)
        assert gw.gate.calls == [0.5]                     # counting anew
    finally:
        gw.stop()


def test_unknown_users_count_as_failures_too():
    gw = ServerThread(login_max_failures=2, login_delay_s=0.25)
    try:
        for name in (b"nobody", b"root", b"admin"):
            refused_login(gw, user=name, key=OPS_KEY, term=TermCode.USER)
        assert gw.gate.calls == [0.25]
    finally:
        gw.stop()


@pytest.fixture
def held_throttle():
    """A server that throttles every login after one failure, that failure
    made, and the throttle's waits held until the test releases them."""
    gw = ServerThread(login_max_failures=1, login_delay_s=0.5)
    try:
        refused_login(gw)
        gw.gate.hold = True
        yield gw
    finally:
        gw.stop()


def test_throttled_client_cannot_queue_much_while_it_waits(held_throttle):
    gw = held_throttle
    c = RciClient("127.0.0.1", gw.port)
    c.sock.settimeout(10)
    c.send_raw(encode_rci(IIId(0, 3, b"ops", WRONG_KEY)) + encode_rci(CBsTmIq()) * 20000)
    wait_for(lambda: gw.gate.calls == [0.5], "the throttle's wait")
    (s,) = list(gw.server.logins)
    assert s.transport.queued <= 30      # one identification's worth decoded
    assert s.transport.decoder.pending <= MAX_PACKET
    gw.release()
    assert c.wait_closed() == [CSvTm(TermCode.AUTHENTICATE)]
    c.close()


def test_failed_login_never_touches_the_robot_of_the_session(held_throttle):
    gw = held_throttle
    held = wrong_login(gw)                         # waiting, before the key check
    wait_for(lambda: gw.gate.calls == [0.5], "the throttle's wait")
    ca = login(gw, source=OTHER)                   # a control application drives
    assert ca.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
    assert ca.request(CStMt.one(MotorType.DC, 0, MotorCommand(
        MotorCommandKind.SPVAL, 0x8100), rq_ack=True)) == CCnAc(RciCode.CStMt)
    stops = len(gw.robot.stop_calls)
    gw.release()
    assert held.wait_closed() == [CSvTm(TermCode.AUTHENTICATE)]
    held.close()
    assert gw.robot.moving() and len(gw.robot.stop_calls) == stops   # still driving
    # no session event of the refused login: the one session's, who, from where, since when
    assert [(e, d.split(" at ")[0]) for e, d in gw.robot.events] == [
        ("connected", f"ops from {OTHER}:{ca.sock.getsockname()[1]}")]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",
                        gw.robot.events[0][1].split(" at ")[1])
    assert ca.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
    ca.close()


def test_keys_are_compared_in_constant_time(monkeypatch):
    """Every check goes through hmac.compare_digest, for known and unknown users."""
    import hmac

    from bsal_ros.rci import users as users_mod
    seen = []
    real = hmac.compare_digest

    def spy(a, b):
        seen.append((len(a), len(b)))
        return real(a, b)
    monkeypatch.setattr(users_mod.hmac, "compare_digest", spy)
    users = Users.from_yaml_text(USERS_YAML)
    assert users.authenticate(b"ops", OPS_KEY)[0].name == "ops"
    assert users.authenticate(b"ops", WRONG_KEY) == (None, "AUTHENTICATE")
    assert users.authenticate(b"nobody", WRONG_KEY) == (None, "USER")
    assert users.authenticate(b"ops", b"short") == (None, "AUTHENTICATE")
    assert seen == [(16, 16)] * 4


# ================================= connections that are not the session
def test_idle_connection_does_not_keep_the_control_application_out(gw):
    idle = RciClient("127.0.0.1", gw.port)          # connects, says nothing
    wait_for(lambda: gw.server.pending.total == 1, "the idle connection")
    c = login(gw)                                   # the real client gets in at once
    assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
    c.close()
    assert nothing_received(idle)
    idle.close()


def test_flood_of_idle_connections_is_bounded_and_the_real_client_gets_in(caplog):
    caplog.set_level(logging.DEBUG, logger="bsal_ros.rci")
    gw = ServerThread(max_pending=6, max_pending_per_address=3, init_timeout_s=60.0)
    flood = []
    try:
        fds_before = len(os.listdir("/proc/self/fd"))
        for _ in range(40):                          # idle connects from one address
            flood.append(RciClient("127.0.0.1", gw.port, source=OTHER))
        wait_for(lambda: gw.server.over_limit == 37, "the refusals")
        assert gw.server.pending.count(OTHER) == 3 and gw.server.pending.total == 3
        got: dict = {}

        def is_closed(c):
            # refused: IInCp + CSvTm ACCESS (001 4.3), then closed; beyond
            # max_pending refusals in progress at once: closed unanswered
            c.sock.setblocking(False)
            try:
                while True:
                    data = c.sock.recv(64)
                    if not data:
                        assert got.get(id(c), b"") in (REFUSAL, b""), got[id(c)].hex()
                        return True
                    got[id(c)] = got.get(id(c), b"") + data
            except ConnectionResetError:
                return True
            except BlockingIOError:
                return False
        closed: set = set()                          # the refused ones are answered, closed
        deadline = time.monotonic() + 10
        while len(closed) < 37 and time.monotonic() < deadline:
            closed |= {i for i, c in enumerate(flood) if i not in closed and is_closed(c)}
            time.sleep(0.005)
        assert len(closed) == 37
        answered = sum(got.get(id(c)) == REFUSAL for c in flood)
        assert answered == gw.server.over_limit_answered >= 6      # the first ones at least
        assert answered + gw.server.over_limit_reset == 37
        assert gw.server.refusing_peak <= 6                        # bounded: max_pending
        assert not any(is_closed(c) for i, c in enumerate(flood) if i not in closed)
        # the gateway holds 3 sockets for the flood, not 40
        for c in flood:
            c.close()
        flood.clear()
        c = login(gw)                                # from another address: in at once
        assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
        c.close()
        wait_for(lambda: gw.server.pending.total == 0 and gw.server.session is None,
                 "every connection closed")
        assert len(os.listdir("/proc/self/fd")) <= fds_before + 2
        # the total: several addresses fill it, the next connection is closed
        for src in ("127.0.0.3", "127.0.0.4"):
            for _ in range(3):
                flood.append(RciClient("127.0.0.1", gw.port, source=src))
        wait_for(lambda: gw.server.pending.total == 6, "the total")
        extra = RciClient("127.0.0.1", gw.port, source="127.0.0.5")
        extra.sock.settimeout(5)
        answer = b""
        while chunk := extra.sock.recv(64):
            answer += chunk
        assert answer == REFUSAL
        extra.close()
        assert gw.server.pending.total == 6
        for c in flood:                              # once they leave, room again
            c.close()
        wait_for(lambda: gw.server.pending.total == 0, "the flood to close")
        login(gw).close()
    finally:
        for c in flood:
            c.close()
        gw.stop()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("max_pending_per_address" in m for m in warnings) == 1   # not 37 lines
    assert sum("(max_pending;" in m for m in warnings) == 1


def test_second_client_refusals_are_not_a_log_flood(gw, caplog):
    caplog.set_level(logging.DEBUG, logger="bsal_ros.rci")
    first = login(gw)
    for _ in range(10):
        c = RciClient("127.0.0.1", gw.port, source=OTHER)
        assert c.wait_closed() == [IInCp(), CSvTm(TermCode.ACCESS)]
        c.close()
    assert first.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
    first.close()
    assert gw.server.refused == 10
    lines = [r for r in caplog.records if "another control application" in r.getMessage()]
    assert len(lines) == 10 and sum(r.levelno >= logging.WARNING for r in lines) == 1


# ============================================================ guest role
WRITES = {
    "CRs": CRs(rq_ack=True),
    "CAcMt": CAcMt.one(MotorType.DC, 0, 1, rq_ack=True),
    "CStMt": CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL, 100), rq_ack=True),
    "CAcSn": CAcSn.one(SensorType.ULTRASONIC, 0, 1, rq_ack=True),
    "CStSn": CStSn.one(SensorType.RELENCODER, 0,
                       SensorCommand(SensorCommandCode.RELENCODER_CLEAR), rq_ack=True),
}


@pytest.mark.parametrize("what", sorted(WRITES))
def test_guest_may_read_but_every_write_ends_the_session(gw, what):
    c = login(gw, "guest", GUEST_KEY)
    # what a guest may do: inquiries, status, base time
    rp = c.request(CGtSnIq.one(SensorType.ULTRASONIC, 0, GetSensorStatus.DATA))
    assert isinstance(rp, CGtSnRp)
    rp = c.request(CGtMtIq.one(MotorType.DC, 0, GetMotorStatus.STATUS))
    assert isinstance(rp, CGtMtRp)
    assert c.request(CStIq(RciCode.CStIq)) == CStRp(RciCode.CStIq, CStRpStatus.IDLE)
    assert isinstance(c.request(CBsTmIq()), CBsTm)
    c.send(WRITES[what])                             # a command that changes the robot
    assert c.wait_closed() == [CSvTm(TermCode.ACCESS)]
    c.close()
    wait_for(lambda: gw.server.session is None, "the session to end")
    assert gw.robot.calls == []                      # nothing reached the robot
    assert not gw.robot.speed
    login(gw).close()                                # the gateway serves the next one


# ======================================================= demo-key refusal
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "robot.example.org"])
def test_demo_key_refused_on_a_non_loopback_bind(host):
    users = Users.from_yaml_text(
        f"users: [{{name: demo, key: '{DEMO_KEY.hex()}'}}, {{name: ops, key: '{OPS_KEY.hex()}'}}]")
    with pytest.raises(UsersFileError, match="demo key") as ei:
        RciServer(FakeRobotPort(), users, host, 0)
    assert DEMO_KEY.hex() not in str(ei.value)
    for ok in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        check_bind_allowed(ok, users)
    # a guest holding the demo key (read-only) does not block; an operator does
    guest_only = Users.from_yaml_text(
        f"users: [{{name: guest, role: guest, key: '{DEMO_KEY.hex()}'}}]")
    check_bind_allowed(host, guest_only)


def test_users_file_readable_by_others_is_reported(tmp_path):
    from bsal_ros.rci.users import file_permission_warning
    f = tmp_path / "users.yaml"
    f.write_text(USERS_YAML)
    users = Users.load(str(f))
    f.chmod(0o644)
    w = file_permission_warning(str(f), users)
    assert w and "chmod 600" in w and OPS_KEY.hex() not in w
    f.chmod(0o600)
    assert file_permission_warning(str(f), users) is None
    demo_only = Users.from_yaml_text(
        f"users: [{{name: demo, key: '{DEMO_KEY.hex()}'}}, {{name: guest, role: guest, "
        f"key: '{GUEST_KEY.hex()}'}}]")
    f.chmod(0o644)                       # nothing private in it: no warning
    assert file_permission_warning(str(f), demo_only) is None


# ================================================= largest packet buffered
def test_largest_rci_packet_is_accepted_and_the_buffer_is_bounded(gw):
    items = [(i, MotorCommand(MotorCommandKind.SPVAL, 0)) for i in range(255)]
    biggest = encode_rci(CStMt.poly(MotorType.DC, items, rq_ack=True))
    assert len(biggest) == 1279 < MAX_PACKET == 4096
    assert len(encode_rci(ICaIq([(RciCode.CStMt, CapInquiry.ACCESS)] * 255))) < len(biggest)
    c = login(gw)
    c.send_raw(biggest[:-1])                  # all but the last byte: buffered, waiting
    wait_for(lambda: gw.server.session is not None
             and gw.server.session.transport.decoder.pending == len(biggest) - 1,
             "the partial packet")
    c.send_raw(biggest[-1:])
    assert c.recv() == CStRp(RciCode.CStMt, CStRpStatus.INVALID_ID)    # decoded, answered
    c.close()
    dec = RciDecoder(role="server")           # the decoder never buffers more than 4096
    dec.feed(biggest[:-1])
    assert dec.pending <= MAX_PACKET


# ================================================= keys never logged
def test_keys_never_appear_in_the_log(caplog):
    caplog.set_level(logging.DEBUG, logger="bsal_ros.rci")
    gw = ServerThread(login_max_failures=2, login_delay_s=0.01, init_timeout_s=0.3)
    try:
        login(gw).close()                                        # a good key
        wait_for(lambda: gw.server.session is None, "the session to end")
        for _ in range(4):                                       # wrong keys, throttled
            refused_login(gw)
        # an unknown user with a real key
        refused_login(gw, user=b"nobody", key=OPS_KEY, term=TermCode.USER)
        c = login(gw, "guest", GUEST_KEY, source=OTHER)          # guest, then a write
        c.send(CRs(rq_ack=True))
        assert c.wait_closed() == [CSvTm(TermCode.ACCESS)]
        c.close()
        c = RciClient("127.0.0.1", gw.port, source=OTHER)        # IIId with bad flags
        bad = bytearray(encode_rci(IIId(0, 3, b"ops", OPS_KEY)))
        bad[0] |= 0x08
        c.send_raw(bytes(bad))
        assert c.wait_closed() == [CSvTm(TermCode.ERROR)]
        c.close()
        c = RciClient("127.0.0.1", gw.port, source=OTHER)        # IIId then garbage
        c.send_raw(encode_rci(IIId(0, 3, b"ops", OPS_KEY)) + b"\xff" * 40)
        c.wait_closed()
        c.close()
        wait_for(lambda: gw.server.session is None, "the session to end")
    finally:
        gw.stop()
    text = caplog.text + "".join(repr(r.args) for r in caplog.records)
    assert "throttled" in text and "refused user 'nobody'" in text   # the log did run
    for key in (OPS_KEY, WRONG_KEY):
        for form in (key.hex(), key.hex().upper(), key.hex(" "), repr(key)[2:-1],
                     key[:8].hex(), key[8:].hex()):
            assert form not in text, form


# ===================================================== node parameters
@pytest.mark.ros
def test_node_declares_the_limits_with_the_documented_defaults(ros_context, tmp_path):
    from pathlib import Path

    from rclpy.parameter import Parameter
    import yaml

    from bsal_ros.nodes.rci_gateway import RciGatewayNode
    root = Path(__file__).resolve().parents[1]
    params = yaml.safe_load((root / "config" / "gateways.yaml").read_text())
    params = params["/**/rci_gateway"]["ros__parameters"]
    names = ("login_max_failures", "login_window_s", "login_delay_s", "login_max_delay_s",
             "max_pending", "max_pending_per_address")
    node = RciGatewayNode(context=ros_context, parameter_overrides=[Parameter("port", value=0)])
    try:
        for n in names:
            assert node.p[n] == params[n], n
        assert node.p["host"] == "127.0.0.1" == params["host"]
        doc = (root.parent / "docs" / "INTERFACES.md").read_text()
        for n in names:
            assert f"| `{n}` |" in doc, n
    finally:
        node.destroy_node()
    with pytest.raises(UsersFileError, match="demo key"):
        RciGatewayNode(context=ros_context, parameter_overrides=[
            Parameter("host", value="0.0.0.0"), Parameter("port", value=0)])
