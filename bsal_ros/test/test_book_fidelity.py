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

"""A control application written only from seed 001, byte by byte.

Every test here speaks raw bytes over a real TCP socket to the RCI gateway
(against a fake robot): the packets are built from the layouts of 001 chapter
4 as docs/PROTOCOL.md gives them, not with our client library, so that what
is checked is the wire a program written from the book sees (issue 13).
"""

from __future__ import annotations

import logging
import socket
import time

import pytest

from bsal_ros.rci.users import DEMO_KEY

from conftest import RciServerThread

pytestmark = pytest.mark.timeout(120)

USERS_YAML = """
users:
  - {name: guest, role: guest, key: "00000000000000000000000000000000"}
  - {name: demo, role: operator, key: "0123456789abcdef0123456789abcdef"}
"""

# --- packets from docs/PROTOCOL.md section 3 (big-endian, as the book's hex)
IINCP = "0011"
CSTIQ_ALIVE = "0100 0100"              # status of CStIq: is the CP alive?
CSTRP_ALIVE = "0101 0100 0b"           # ... IDLE
ACTIVATE_DC0_ACK = "0a00 c0 0000 01"   # CAcMt + RQ_ACK, DC motor 0 on
CCNAC_CACMT = "0103 0200"
SET_DC0_40_ACK = "0a01 c0 0000 d0 8333"   # CStMt + RQ_ACK, DC 0 at +40 % duty
SET_DC0_20_ACK = "0a01 c0 0000 d0 8199"   # ... at +20 % duty
CCNAC_CSTMT = "0103 0201"
GET_DC0_DATA = "0202 c0 0000 01"       # CGtMtIq general: DC 0 DATA


def h(text: str) -> bytes:
    """Hex as docs/PROTOCOL.md prints it (spaces ignored) -> bytes."""
    return bytes.fromhex(text.replace(" ", ""))


def iiid(user: str, key: bytes, major: int = 0, minor: int = 3) -> bytes:
    """RCI-IIId (001 4.5.2): code, versions, user_id[16], auth_key[16], reserved[24]."""
    return (h("0010") + bytes([major, minor]) + user.encode().ljust(16, b"\0") + key
            + bytes(24))


class RawCA:
    """A control application that reads and writes bytes, nothing else."""

    def __init__(self, port: int, timeout: float = 5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout

    def send(self, text_or_bytes) -> None:
        data = text_or_bytes if isinstance(text_or_bytes, bytes) else h(text_or_bytes)
        self.sock.sendall(data)

    def read(self, n: int, timeout: float | None = None) -> bytes:
        """Exactly n bytes (AssertionError when the CP closes or stays silent)."""
        self.sock.settimeout(self.timeout if timeout is None else timeout)
        buf = b""
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout:
                raise AssertionError(f"CP silent; got {buf.hex()} of {n} bytes") from None
            assert chunk, f"CP closed; got {buf.hex()} of {n} bytes"
            buf += chunk
        return buf

    def expect(self, text: str, timeout: float | None = None) -> None:
        want = h(text)
        got = self.read(len(want), timeout)
        assert got == want, f"expected {want.hex()}, got {got.hex()}"

    def nothing_for(self, seconds: float) -> bool:
        """True when the CP sends nothing (and does not close) for ``seconds``."""
        self.sock.settimeout(seconds)
        try:
            data = self.sock.recv(1)
        except socket.timeout:
            return True
        assert not data, f"CP sent {data.hex()}"
        return False          # closed

    def rest_until_closed(self, timeout: float = 10.0) -> bytes:
        """Everything the CP sends until it closes."""
        self.sock.settimeout(timeout)
        buf = b""
        while True:
            try:
                chunk = self.sock.recv(4096)
            except ConnectionResetError:
                return buf
            if not chunk:
                return buf
            buf += chunk

    def identify(self, user: str = "demo", key: bytes = DEMO_KEY) -> None:
        """Our IIId; the CP's IIId (60 bytes, RCI 0.3)."""
        self.send(iiid(user, key))
        theirs = self.read(60)
        assert theirs[:4] == h("0010 00 03"), theirs.hex()

    def expect_base_time(self) -> None:
        """RCI-CBsTm (0x0107, two gint32), close to now."""
        pkt = self.read(10)
        assert pkt[:2] == h("0107"), pkt.hex()
        assert abs(int.from_bytes(pkt[2:6], "big", signed=True) - time.time()) < 60

    def close(self) -> None:
        self.sock.close()


class Gateway(RciServerThread):
    """The RCI server with this file's users and a fake robot."""

    def __init__(self, **cfg):
        super().__init__(USERS_YAML, None, **{"linger_s": 0.2, **cfg})


@pytest.fixture
def gw():
    g = Gateway()
    yield g
    g.stop()


def control_phase_works(ca: RawCA) -> None:
    ca.send(CSTIQ_ALIVE)
    ca.expect(CSTRP_ALIVE)


# ------------------------------------------------------ item 1: handshake order
def test_handshake_ca_speaks_first(gw):
    """The CA sends ICaIq and IInCp right after the IIId exchange: the CP
    answers the inquiry, sends its IInCp after the CA's, then CBsTm."""
    ca = RawCA(gw.port)
    ca.identify()
    ca.send("0012 01 0201 18" + IINCP)        # ACCESS for CStMt?, IInCp
    ca.expect("0013 01 0201 23")               # PERMISSION
    ca.expect(IINCP)
    ca.expect_base_time()
    control_phase_works(ca)
    ca.close()


def test_handshake_ca_waits_for_cp_iincp(gw):
    """A CA that waits for the CP's IInCp before sending its own (001 4.5.3:
    "at any time following the exchange of RCI-IIId packets") gets it after
    the CP's quiet time (the default), not a CSvTm."""
    ca = RawCA(gw.port)
    ca.identify()
    ca.expect(IINCP, timeout=5.0)              # nothing sent by the CA meanwhile
    ca.send(IINCP)
    ca.expect_base_time()
    control_phase_works(ca)
    ca.close()


def test_handshake_inquiry_after_cp_iincp():
    """ICaIq sent after the CP's IInCp (and before the CA's) is still answered."""
    g = Gateway(init_quiet_s=0.2)
    try:
        ca = RawCA(g.port)
        ca.identify()
        ca.expect(IINCP)
        ca.send("0012 02 0201 18 0212 1a")     # ACCESS CStMt, VERSION CGtSnIq
        ca.expect("0013 02 0201 23 0212 00 03")
        ca.send(IINCP)
        ca.expect_base_time()
        control_phase_works(ca)
        ca.close()
    finally:
        g.stop()


def test_handshake_quiet_time_zero_waits_for_the_ca():
    """init_quiet_s 0: the CP's IInCp only answers the CA's (the old order)."""
    g = Gateway(init_quiet_s=0.0, init_timeout_s=5.0)
    try:
        ca = RawCA(g.port)
        ca.identify()
        assert ca.nothing_for(0.6)
        ca.send(IINCP)
        ca.expect(IINCP)
        ca.expect_base_time()
        control_phase_works(ca)
        ca.close()
    finally:
        g.stop()


def start_session(port: int) -> RawCA:
    """A CA in the control phase (the style that speaks first)."""
    ca = RawCA(port)
    ca.identify()
    ca.send(IINCP)
    ca.expect(IINCP)
    ca.expect_base_time()
    return ca


def drive(ca: RawCA, set_packet: str = SET_DC0_40_ACK) -> None:
    ca.send(ACTIVATE_DC0_ACK)
    ca.expect(CCNAC_CACMT)
    ca.send(set_packet)
    ca.expect(CCNAC_CSTMT)


def speeds(robot) -> dict:
    """{(class, id): percent rounded} of the fake robot's motors that run."""
    return {k: round(v) for k, (duty, v) in robot.speed.items() if v}


def wait_until(cond, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# ---------------------------------------------------------- item 2: silence
def silence_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "the session stays open" in r.getMessage()]


def test_silence_stops_motors_and_the_session_stays_open(caplog):
    """A CA sets a motor and goes silent well past the watchdog: the motor is
    stopped once (one log line, CStIq(CStMt) ABORT, a "silence" session
    event), nothing is sent to the CA, and its next command works."""
    caplog.set_level(logging.WARNING, logger="bsal_ros.rci")
    g = Gateway(watchdog_s=0.3)
    try:
        ca = start_session(g.port)
        drive(ca)
        assert speeds(g.robot) == {("dc_motor", 0): 40}
        assert ca.nothing_for(1.5)                    # 5 watchdog periods, no CSvTm
        assert not speeds(g.robot)                      # stopped
        assert len(silence_lines(caplog)) == 1        # logged once
        assert [e for e, _ in g.robot.events].count("silence") == 1
        ca.send("0100 0201")                          # CStIq about CStMt
        ca.expect("0101 0201 09")                     # ABORT: the CP cancelled it
        ca.send(SET_DC0_20_ACK)                       # the next command works
        ca.expect(CCNAC_CSTMT)
        assert speeds(g.robot) == {("dc_motor", 0): 20}
        ca.send("0100 0201")
        ca.expect("0101 0201 0b")                     # IDLE again
        assert g.server.session is not None and g.server.sessions_served == 0
        ca.close()
    finally:
        g.stop()


def test_silence_with_the_default_watchdog():
    """The shipped 2 s watchdog: 3 s of silence stop the motor, the session
    stays open and the next command works."""
    g = Gateway()
    assert g.cfg.watchdog_s == 2.0 and g.cfg.idle_limit_s == 0.0
    try:
        ca = start_session(g.port)
        drive(ca)
        assert ca.nothing_for(3.0)
        assert not speeds(g.robot)
        ca.send(SET_DC0_20_ACK)
        ca.expect(CCNAC_CSTMT)
        assert speeds(g.robot) == {("dc_motor", 0): 20}
        ca.close()
    finally:
        g.stop()


def test_idle_limit_ends_a_silent_session_when_configured():
    """idle_limit_s (off by default) still lets a site end silent sessions:
    CSvTm NOACK, motors stopped."""
    g = Gateway(watchdog_s=0.2, idle_limit_s=0.6)
    try:
        ca = start_session(g.port)
        drive(ca)
        assert ca.rest_until_closed() == h("0102 0014")   # CSvTm NOACK
        g.wait_idle()
        assert not speeds(g.robot)
    finally:
        g.stop()


@pytest.mark.slow
def test_book_program_with_ten_second_pauses():
    """Issue 13's done-when: a program written from seed 001 that pauses 10 s
    between its commands completes its work (about 20 s)."""
    g = Gateway()
    try:
        ca = start_session(g.port)
        drive(ca)                                     # activate, +40 %
        assert ca.nothing_for(10.0)                   # the operator thinks
        assert not speeds(g.robot)                      # safety: silence stopped it
        ca.send(SET_DC0_20_ACK)                       # carries on: +20 %
        ca.expect(CCNAC_CSTMT)
        ca.send(GET_DC0_DATA)
        ca.expect("0203 c0 0000 8199")                # Get Motor: +20 % duty
        assert ca.nothing_for(10.0)
        ca.send("0904")                               # CRs + RQ_ACK
        ca.expect("0103 0104")
        ca.send(CSTIQ_ALIVE)
        ca.expect(CSTRP_ALIVE)
        assert g.server.sessions_served == 0          # one session all along
        ca.close()
    finally:
        g.stop()


# ------------------------------------------------- item 4: capability replies
def test_capability_replies_version_error_and_support(gw):
    """VERSION of an unknown command: the one-byte RCI_ICARP_ERROR (001 4.5.5),
    and the next item is framed right after it; SUPPORT is its own question
    ("implemented?"): PERMISSION for what the CP accepts from a CA, NO_SUPPORT
    for what only the CP sends, ERROR for an unknown code."""
    ca = RawCA(gw.port)
    ca.identify()
    ca.send("0012 05 0999 1a 0201 1a 0201 19 0203 19 0999 19")
    ca.expect("0013 05 0999 20 0201 00 03 0201 23 0203 22 0999 20")
    ca.send(IINCP)
    ca.expect(IINCP)
    ca.expect_base_time()
    control_phase_works(ca)
    ca.close()


def test_guest_support_differs_from_access(gw):
    """A guest may not set motors (ACCESS: NO_PERMISSION) but Set Motor is
    implemented (SUPPORT: PERMISSION)."""
    ca = RawCA(gw.port)
    ca.identify("guest", bytes(16))
    ca.send("0012 02 0201 18 0201 19")
    ca.expect("0013 02 0201 21 0201 23")
    ca.close()


# ----------------------------------------- item 5: refusals carry a status
REFUSAL = "0011 0102 0010"          # IInCp, CSvTm ACCESS (001 4.5.1 refusal of service)


def read_to_eof(sock: socket.socket, timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    buf = b""
    try:
        while chunk := sock.recv(64):
            buf += chunk
    except ConnectionResetError:
        pass
    return buf


def test_connections_over_max_pending_get_a_status_before_the_close():
    """N connections identifying fill max_pending; each of k more reads
    IInCp + CSvTm ACCESS before the close (001 4.3), not a bare reset."""
    n, k = 4, 3
    g = Gateway(max_pending=n, max_pending_per_address=n, init_timeout_s=30.0)
    held = []
    try:
        for _ in range(n):                           # connected, not yet identified
            held.append(socket.create_connection(("127.0.0.1", g.port), timeout=5))
        assert wait_until(lambda: g.server.pending.total == n)
        for _ in range(k):
            s = socket.create_connection(("127.0.0.1", g.port), timeout=5)
            s.sendall(iiid("demo", DEMO_KEY))         # what a CA sends first
            assert read_to_eof(s) == h(REFUSAL)
            s.close()
        assert g.server.over_limit == g.server.over_limit_answered == k
        for s in held:
            s.close()
        assert wait_until(lambda: g.server.pending.total == 0)
        ca = start_session(g.port)                   # room again
        control_phase_works(ca)
        ca.close()
    finally:
        for s in held:
            s.close()
        g.stop()


def test_refusal_answers_are_bounded_under_a_flood():
    """40 connections over the limit at once: at most max_pending refusals
    are answered at the same time (the rest closed unanswered), each ends."""
    n, extra = 2, 40
    g = Gateway(max_pending=n, max_pending_per_address=n, init_timeout_s=30.0)
    held, flood = [], []
    try:
        for _ in range(n):
            held.append(socket.create_connection(("127.0.0.1", g.port), timeout=5))
        assert wait_until(lambda: g.server.pending.total == n)
        for _ in range(extra):
            flood.append(socket.create_connection(("127.0.0.1", g.port), timeout=5))
        answers = [read_to_eof(s) for s in flood]      # every one ends
        assert set(answers) <= {h(REFUSAL), b""}
        answered = answers.count(h(REFUSAL))
        assert answered == g.server.over_limit_answered >= n
        assert answered + g.server.over_limit_reset == extra
        assert g.server.refusing_peak <= n
    finally:
        for s in held + flood:
            s.close()
        g.stop()


# ------------------------------------------- item 7: d_count, one rule
def test_d_count_is_the_boards_on_rci_rdi_and_the_ca_view(gw):
    """RELENCODER d_count over RCI is the board's change between its two
    latest readings (001 5.4.2 pairs it with d_status), not "since this CA's
    last read": two Gets of one reading give the same d_count. RDI sends the
    same number, and the control-application view (rci/ca_states -> RDI
    port 7652) shows exactly what the CA was sent."""
    from bsal_ros.nodes.rdi_gateway import DATA_FIELDS
    from bsal_ros.protocol import RdiSensor, RelEncoderReading
    from bsal_ros.rdi import StreamState

    ca = start_session(gw.port)
    ca.send("0a10 82 0000 01")                       # CAcSn + ack: rel. encoder 0 on
    ca.expect("0103 0210")
    ca.send("0a11 82 0000 90")                       # CStSn + ack: clear it
    ca.expect("0103 0211")
    gw.robot.advance(5)                              # one board reading: +5
    ca.send("0212 82 0000 04")                       # CGtSnIq: DATA
    ca.expect("0213 82 0000 0005 0005")              # d_count 5, count 5
    ca.send("0212 82 0000 04")                       # again, same board reading
    ca.expect("0213 82 0000 0005 0005")              # still the board's 5 (not 0)
    gw.robot.advance(-3)
    ca.send("0212 82 0000 04")
    ca.expect("0213 82 0000 fffd 0002")              # -3, 2
    ca.send(CSTIQ_ALIVE)                             # the reply was delivered before
    ca.expect(CSTRP_ALIVE)
    (shown,) = gw.robot.last_delivered[("relative_encoder", "data")]
    assert (shown.d_count, shown.count) == (-3, 2)
    realtime, ca_view = StreamState(), StreamState()
    realtime.update_devices([gw.robot.snapshot("relative_encoder", 0)])
    ca_view.merge_device(shown, DATA_FIELDS)
    for st in (realtime, ca_view):
        (sn,) = [p for p in st.build_frame() if isinstance(p, RdiSensor)]
        reading = sn.items[0][1]
        assert isinstance(reading, RelEncoderReading)
        assert (reading.d_count, reading.count) == (-3, 2)
    ca.close()


# ------------------------------------ item 8: acknowledgements, one rule
def test_rq_ack_on_inquiries_gets_one_ccnac_after_the_reply(gw):
    """RQ_ACK may be set on any packet (001 4.6.1); the CP answers every CA
    command or inquiry that carries it with one CCnAc once it is complete:
    after the reply for an inquiry, CStIq included."""
    ca = start_session(gw.port)
    ca.send("0900 0100")                             # CStIq + RQ_ACK
    ca.expect(CSTRP_ALIVE + " 0103 0100")            # CStRp, then CCnAc(CStIq)
    ca.send("0906")                                  # CBsTmIq + RQ_ACK
    ca.expect_base_time()
    ca.expect("0103 0106")
    ca.send("0a02 c0 0000 01")                       # CGtMtIq + RQ_ACK: DC 0 DATA
    ca.expect("0203 c0 0000 8000 0103 0202")         # reply (0 % duty), CCnAc(CGtMtIq)
    control_phase_works(ca)
    ca.close()


def test_failed_acked_command_gets_cstrp_in_place_of_ccnac(gw):
    """Our documented difference: an acknowledged command that fails is
    answered CStRp(code, status) instead of CCnAc (4.6.5 is silent on
    failures); CStIq about it then reports the same status."""
    ca = start_session(gw.port)
    ca.send("0a00 c0 0007 01")                       # CAcMt + ack: DC motor 7 (none)
    ca.expect("0101 0200 0c")                        # CStRp INVALID_ID
    ca.send("0100 0200")                             # CStIq about CAcMt
    ca.expect("0101 0200 0c")
    ca.close()


# ------------------------------------------------------------------ the docs
def test_protocol_differences_name_existing_tests():
    """Every test named in docs/PROTOCOL.md "Where we differ from the book,
    and why" exists (so the table cannot point at a renamed or deleted test)."""
    from difference_tables import assert_named_tests_exist, REPO
    assert assert_named_tests_exist(REPO / "docs" / "PROTOCOL.md") >= 10
