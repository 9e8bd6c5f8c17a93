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

"""Each RCI connection is answered in its own byte order, on every path.

The first two bytes of a control application's IIId (code 0x0010) say its
byte order: ``00 10`` big-endian, ``10 00`` little-endian. Here two raw
clients of opposite orders (plain sockets, bytes typed below) talk to one
gateway side by side, on the paths that answer before or without a session:
the first program, the second program refused while another session is live
(issue 29: a little-endian one read ``00 11 ...``), a connection over the
pending limits, a bad key, an unknown user, an unknown code, a newer protocol
version and an identification that never completes.
"""

from __future__ import annotations

import time

import pytest

from conftest import RciServerThread
from test_book_fidelity import RawCA

pytestmark = pytest.mark.timeout(120)

USERS_YAML = """
users:
  - {name: demo, role: operator, key: "0123456789abcdef0123456789abcdef"}
"""
KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")
ORDERS = ("big", "little")

# What the CP sends, typed per byte order (001 4.5 / 4.6.2; codes in the
# connection's order, one-byte fields as they are).
CP_IIID_HEAD = {"big": "0010 00 03", "little": "1000 00 03"}
IINCP = {"big": "0011", "little": "1100"}
CSVTM = {  # RCI-CSvTm (0x0102) with term_code (a guint16)
    "big": {"ACCESS": "0102 0010", "AUTHENTICATE": "0102 0011", "ERROR": "0102 0013",
            "NOACK": "0102 0014", "USER": "0102 0015"},
    "little": {"ACCESS": "0201 1000", "AUTHENTICATE": "0201 1100", "ERROR": "0201 1300",
               "NOACK": "0201 1400", "USER": "0201 1500"},
}
CBSTM_CODE = {"big": "0107", "little": "0701"}
# what the CA sends
CA_IIID_CODE = {"big": "0010", "little": "1000"}
UNKNOWN_CODE = {"big": "7fee", "little": "ee7f"}


def h(text: str) -> bytes:
    """Hex with spaces -> bytes."""
    return bytes.fromhex(text.replace(" ", ""))


def iiid(order: str, user: str = "demo", key: bytes = KEY, major: int = 0,
         minor: int = 3) -> bytes:
    """RCI-IIId (001 4.5.2): code, versions, user_id[16], auth_key[16], reserved[24]."""
    return (h(CA_IIID_CODE[order]) + bytes([major, minor]) + user.encode().ljust(16, b"\0")
            + key + bytes(24))


class Raw(RawCA):
    """A client that writes and reads bytes only (test_book_fidelity's), with a
    longer wait for what a refusal sends before it closes."""

    def __init__(self, port: int):
        super().__init__(port, timeout=10.0)

    def until_closed(self, timeout: float = 20.0) -> bytes:
        """Everything the CP sends until it closes."""
        return self.rest_until_closed(timeout)


def log_in(port: int, order: str) -> Raw:
    """A live control application in ``order``: IIId, IInCp, CBsTm read."""
    c = Raw(port)
    c.send(iiid(order))
    theirs = c.read(60)
    assert theirs[:4] == h(CP_IIID_HEAD[order]), theirs.hex()
    c.send(h(IINCP[order]))
    got = c.read(2 + 2 + 8)
    assert got[:4] == h(IINCP[order] + CBSTM_CODE[order]), got.hex()
    return c


@pytest.fixture
def gateway():
    gw = RciServerThread(USERS_YAML, init_timeout_s=1.0)
    yield gw
    gw.stop()


@pytest.mark.parametrize("live,refused", [("big", "little"), ("little", "big")])
def test_second_program_refused_in_its_own_order(gateway, live, refused):
    first = log_in(gateway.port, live)
    try:
        # the refused one connects and identifies at once, like a CA
        second = Raw(gateway.port)
        second.send(iiid(refused))
        assert second.until_closed() == h(IINCP[refused] + CSVTM[refused]["ACCESS"])
        # one that has typed nothing when it is refused is waited for: its order counts too
        third = Raw(gateway.port)
        deadline = time.monotonic() + 10
        while gateway.server.refused < 2:      # counted as the refusal starts
            assert time.monotonic() < deadline, "the third connection was not refused"
            time.sleep(0.005)
        third.send(iiid(refused)[:2])
        assert third.until_closed() == h(IINCP[refused] + CSVTM[refused]["ACCESS"])
        # the live one is untouched, still answered in its order: CBsTmIq -> CBsTm
        first.send(h({"big": "0106", "little": "0601"}[live]))
        assert first.read(10)[:2] == h(CBSTM_CODE[live])
    finally:
        first.close()
    gateway.wait_idle()
    assert gateway.server.refused == 2


def test_both_orders_as_first_program_one_after_the_other(gateway):
    for order in ORDERS + ORDERS:
        c = log_in(gateway.port, order)
        c.close()
        gateway.wait_idle()


def test_over_the_pending_limit_refused_in_its_own_order():
    gw = RciServerThread(USERS_YAML, max_pending=4, max_pending_per_address=1)
    silent = Raw(gw.port)          # holds the one place of 127.0.0.1 (says nothing)
    try:
        deadline = time.monotonic() + 10
        while not gw.server.logins:
            assert time.monotonic() < deadline, "the silent connection was not accepted"
            time.sleep(0.01)
        for order in ORDERS:
            c = Raw(gw.port)
            c.send(iiid(order))
            assert c.until_closed() == h(IINCP[order] + CSVTM[order]["ACCESS"]), order
            c.close()
        assert gw.server.over_limit_answered == 2
    finally:
        silent.close()
        gw.stop()


@pytest.mark.parametrize("case", ["bad key", "unknown user"])
def test_login_refusals_side_by_side(gateway, case):
    clients = {order: Raw(gateway.port) for order in ORDERS}
    for order, c in clients.items():
        if case == "bad key":
            c.send(iiid(order, key=bytes(16)))
        else:
            c.send(iiid(order, user="nobody"))
    term = "AUTHENTICATE" if case == "bad key" else "USER"
    for order, c in clients.items():
        assert c.until_closed() == h(CSVTM[order][term]), (order, case)
        c.close()


def test_unknown_code_after_the_identification_side_by_side(gateway):
    for order in ORDERS:
        c = log_in(gateway.port, order)
        c.send(h(UNKNOWN_CODE[order]))
        assert c.until_closed().endswith(h(CSVTM[order]["ERROR"])), order
        c.close()
        gateway.wait_idle()


def test_newer_protocol_version_answered_in_its_own_order(gateway):
    for order in ORDERS:
        c = Raw(gateway.port)
        c.send(iiid(order, major=0, minor=9))
        theirs = c.read(60)
        assert theirs[:4] == h(CP_IIID_HEAD[order]), (order, theirs.hex())
        c.close()
        gateway.wait_idle()


def test_identification_never_completed_side_by_side(gateway):
    """Half an IIId, then silence: CSvTm NOACK after init_timeout_s (1 s here)."""
    clients = {order: Raw(gateway.port) for order in ORDERS}
    for order, c in clients.items():
        c.send(iiid(order)[:30])
    for order, c in clients.items():
        assert c.until_closed() == h(CSVTM[order]["NOACK"]), order
        c.close()
