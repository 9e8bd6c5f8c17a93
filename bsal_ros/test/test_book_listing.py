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

"""The book's own example program (seed 001, section 3.3) runs unchanged.

The listing connects as user ``ken`` with an uninitialised ``auth_key``
(BSAL 0.1.0 did not check keys, 001 3.2.1). The shipped users file has
``ken`` as an operator with ``key_check: none``; such a user blocks a
non-loopback bind like the public demo key and is named in a start-up
warning. The listing is not stored in the repository: ``make -C legacy book``
extracts it from the seed with scripts/book_listing.py (which checks it) into
legacy/build/book-3.3.cc, compiles it as printed (``g++ -fpermissive``) and
the tests run it against the fake robot (no ROS) and against the simulated
robot (``brak_bringup``), watched over ROS. Without the seed those tests skip
with the reason.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
import re
import subprocess
import threading
import time

import pytest

from bsal_ros.rci.client import RciClient
from bsal_ros.rci.users import (check_bind_allowed, DEMO_KEY, file_permission_warning,
                                unchecked_key_warning, Users, UsersFileError)
from conftest import build_legacy
from spun_node import SpunNode

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/, bench/ beside the packages
BOOK_SOURCE = REPO / "legacy" / "build" / "book-3.3.cc"
BOOK_APP = REPO / "legacy" / "build" / "book-3.3"
SHIPPED_USERS = ROOT / "config" / "users.yaml"


def _load_book_listing():
    spec = importlib.util.spec_from_file_location("book_listing",
                                                  REPO / "scripts" / "book_listing.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


book_listing = _load_book_listing()


# ------------------------------------------------------------------ the listing
def seed_001() -> Path:
    """Seed 001, or a skip that says where it was looked for."""
    seed = book_listing.find_seed()
    if seed is None:
        pytest.skip("seed 001 (001_*.txt) not found in "
                    + ", ".join(str(d) for d in book_listing.seed_dirs())
                    + ": the book's listing is not stored in the repository, so it cannot "
                    "be extracted, built or run here (set BSAL_SEEDS_DIR)")
    return seed


def numbered_seed(body: list[str]) -> str:
    """A seed-like text holding ``body`` as a numbered listing in two code blocks."""
    half = len(body) // 2
    first = "\n".join(f"{i} {ln}".rstrip() for i, ln in enumerate(body[:half], 1))
    rest = "\n".join(f"{i} {ln}".rstrip() for i, ln in enumerate(body[half:], half + 1))
    return (f"## 3.3 Example program - client-app.cc\n\n```\n{first}\n```\n\n```\n\n"
            f"{rest}\n```\n\nLine 61 initiates the connection.\n")


def test_listing_extracted_from_the_seed_is_the_book_listing():
    body = book_listing.extract(seed_001().read_text(encoding="utf-8"))
    assert len(body) == 97                                  # the book numbers 1..97
    assert body[33] == "main ( int argc, unsigned char *argv[] )"
    assert body[35] == '    string id = "ken";'
    assert not any(ln.startswith("```") or re.match(r"^\d+ ", ln) for ln in body)
    # the page furniture between the code blocks is not part of the program
    assert body[46] == "" and body[47] == "    //"           # book lines 47-48


def test_extraction_refuses_a_listing_that_is_not_the_book_one():
    body = book_listing.extract(seed_001().read_text(encoding="utf-8"))
    assert book_listing.extract(numbered_seed(body)) == body
    changed = list(body)
    changed[86] = changed[86].replace("counts", "distances")  # one word of line 87
    with pytest.raises(book_listing.ListingError, match="SHA-256"):
        book_listing.extract(numbered_seed(changed))
    with pytest.raises(book_listing.ListingError, match="not 1..97"):
        book_listing.extract(numbered_seed(body[:-1]))
    with pytest.raises(book_listing.ListingError, match="line 61"):
        book_listing.extract(numbered_seed(body[:60] + ["    // gone"] + body[61:]))
    with pytest.raises(book_listing.ListingError, match="heading"):
        book_listing.extract("no listing here\n")


def test_extraction_without_the_seed_says_where_it_looked(tmp_path):
    out = tmp_path / "book-3.3.cc"
    r = subprocess.run(["python3", str(REPO / "scripts" / "book_listing.py"), str(out),
                        "--seeds", str(tmp_path / "none")], capture_output=True, text=True)
    assert r.returncode == 2 and "not found in" in r.stderr and str(tmp_path) in r.stderr
    assert not out.exists()


@pytest.fixture(scope="module")
def book_app():
    seed_001()
    build_legacy()
    r = subprocess.run(["make", "-s", "-C", str(REPO / "legacy"), "book"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert BOOK_APP.exists() and BOOK_SOURCE.exists()
    return BOOK_APP


def test_make_book_writes_the_seed_listing_into_the_build_folder(book_app):
    body = book_listing.extract(seed_001().read_text(encoding="utf-8"))
    assert BOOK_SOURCE.read_text(encoding="utf-8") == book_listing.text_of(body)
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files", "--error-unmatch",
                              str(BOOK_SOURCE)], capture_output=True, text=True)
    assert tracked.returncode != 0, "the extracted listing must not be tracked"


def test_listing_compiles_as_printed_with_fpermissive_only(book_app, tmp_path):
    """Plain `g++ -fpermissive` and the library's headers, nothing else: no
    include or define shim in front of the book's text."""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "glib-2.0"], check=True,
                           capture_output=True, text=True).stdout.split()
    out = tmp_path / "book"
    r = subprocess.run(["g++", "-fpermissive", "-I", str(REPO / "legacy" / "include"),
                        str(BOOK_SOURCE), "-o", str(out),
                        str(REPO / "legacy" / "build" / "librci-client.a"), *flags],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # what g++ says is only about the book's pre-standard main
    errors = [ln for ln in r.stderr.splitlines() if "error" in ln]
    assert not errors, r.stderr


# ------------------------------------------------------------------ users file
def test_shipped_users_file_has_ken_without_key_check():
    users = Users.load(str(SHIPPED_USERS))
    ken = users.lookup("ken")
    assert ken is not None and not ken.read_only and not ken.key_checked
    for key in (bytes(16), DEMO_KEY, os.urandom(16), b"\xff" * 16, b""):
        user, why = users.authenticate(b"ken", key)
        assert why is None and user.name == "ken"
    # the others are still checked
    assert users.authenticate(b"demo", bytes(16)) == (None, "AUTHENTICATE")
    assert users.authenticate(b"kenny", bytes(16)) == (None, "USER")
    assert users.unchecked_operators() == ["ken"]


def test_unchecked_operator_refuses_a_non_loopback_bind():
    only_ken = Users.from_yaml_text("users: [{name: ken, key_check: none}]")
    assert not only_ken.has_demo_key()
    for host in ("0.0.0.0", "::", "192.0.2.10", "robot.example.org"):
        with pytest.raises(UsersFileError, match="ken") as ei:
            check_bind_allowed(host, only_ken)
        assert "key_check: none" in str(ei.value)
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        check_bind_allowed(host, only_ken)
    # with the demo key as well (the shipped file) both are named
    shipped = Users.load(str(SHIPPED_USERS))
    with pytest.raises(UsersFileError) as ei:
        check_bind_allowed("0.0.0.0", shipped)
    assert "demo key" in str(ei.value) and "ken" in str(ei.value)
    assert DEMO_KEY.hex() not in str(ei.value)
    # an unchecked guest cannot drive: it does not block (like a guest with the demo key)
    guest = Users.from_yaml_text("users: [{name: guest, role: guest, key_check: none}, "
                                 "{name: ops, key: 'ffeeddccbbaa99887766554433221100'}]")
    check_bind_allowed("0.0.0.0", guest)
    assert guest.unchecked_operators() == [] and guest.unchecked_users() == ["guest"]


def test_start_up_warning_names_the_unchecked_users(tmp_path):
    w = unchecked_key_warning(Users.load(str(SHIPPED_USERS)))
    assert w is not None and "\n" not in w and "ken" in w and "demo" not in w
    assert "key_check: none" in w
    assert unchecked_key_warning(Users.from_yaml_text(
        "users: [{name: ops, key: 'ffeeddccbbaa99887766554433221100'}]")) is None
    # a users file whose only operator is unchecked holds no secret: no chmod warning
    f = tmp_path / "users.yaml"
    f.write_text("users: [{name: ken, key_check: none}]")
    f.chmod(0o644)
    assert file_permission_warning(str(f), Users.load(str(f))) is None


@pytest.mark.parametrize("text,message", [
    ("users: [{name: ken, key_check: maybe}]", "key_check must be one of"),
    ("users: [{name: ken, key_check: none, key: '0123456789abcdef0123456789abcdef'}]",
     "key_check: none takes no key"),
    ("users: [{name: ken}]", "key must be 32 hex digits"),
])
def test_key_check_errors(text, message):
    with pytest.raises(UsersFileError, match=message) as ei:
        Users.from_yaml_text(text)
    assert "0123456789abcdef" not in str(ei.value)


def test_ken_logs_in_with_any_key_through_the_gateway_logic():
    from test_rci_gateway import ServerThread
    gw = ServerThread()
    gw.server.users = Users.load(str(SHIPPED_USERS))
    try:
        for key in (os.urandom(16), bytes(16)):
            with RciClient("127.0.0.1", gw.port) as c:
                c.handshake("ken", key)          # raises unless the CP's IInCp came
            gw.wait_idle()
    finally:
        gw.stop()


# ------------------------------------------------------- the listing, running
def test_book_listing_runs_against_the_fake_robot(book_app):
    from test_rci_gateway import ServerThread
    from test_rci_legacy import MovingRobot
    gw = ServerThread(MovingRobot())
    gw.server.users = Users.load(str(SHIPPED_USERS))
    try:
        r = subprocess.run([str(book_app), f"127.0.0.1:{gw.port}"], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        kinds = [c[0] for c in gw.robot.calls]
        assert kinds[0] == "reset" and "home" in kinds, kinds
        gw.wait_idle()
        assert gw.robot.stop_calls
    finally:
        gw.stop()


class Watcher(SpunNode):
    """Collects the hardware node's `encoders` and `motor_states` in a thread."""

    def __init__(self):
        from bsal_interfaces.msg import DeviceStateArray
        import rclpy
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
        self.start_context()
        self.node = rclpy.create_node("book_listing_watcher", context=self.context)
        qos = QoSProfile(depth=50, history=HistoryPolicy.KEEP_LAST,
                         reliability=ReliabilityPolicy.RELIABLE)
        self.lock = threading.Lock()
        self.encoder = []       # (monotonic time, count, d_count) of relative encoder 0
        self.drive = []         # (monotonic time, speedval) of DC motor 0
        self.node.create_subscription(DeviceStateArray, "encoders", self._on_encoders, qos)
        self.node.create_subscription(DeviceStateArray, "motor_states", self._on_motors, qos)
        self.spin()

    def _on_encoders(self, msg):
        now = time.monotonic()
        with self.lock:
            for s in msg.states:
                if s.device_class == "relative_encoder" and s.id == 0:
                    self.encoder.append((now, s.count, s.d_count))

    def _on_motors(self, msg):
        now = time.monotonic()
        with self.lock:
            for s in msg.states:
                if s.device_class == "dc_motor" and s.id == 0:
                    self.drive.append((now, s.speedval))

    def wait(self, what, predicate, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if predicate():
                    return
            time.sleep(0.05)
        raise AssertionError(f"{what} not seen within {timeout} s")


@pytest.mark.ros
@pytest.mark.slow
def test_book_listing_drives_the_simulated_robot(book_app):
    from test_bringup import Bridge
    bridge = Bridge()
    watcher = None
    try:
        log = "\n".join(bridge.lines)
        unchecked = [ln for ln in bridge.lines if "key is not checked" in ln]
        assert len(unchecked) == 1 and "ken" in unchecked[0] and "WARN" in unchecked[0], log
        bridge.wait_for(re.compile(r"device list received"), timeout=60)
        watcher = Watcher()
        watcher.wait("encoder data", lambda: watcher.encoder, 30)
        t0 = time.monotonic()
        r = subprocess.run([str(book_app), f"127.0.0.1:{bridge.ports[0]}"],
                           capture_output=True, text=True, timeout=120)
        t1 = time.monotonic()
        assert r.returncode == 0, r.stdout + r.stderr + "\n".join(bridge.lines)
        # the drive moved while the program ran: counts changed, in reverse
        with watcher.lock:
            during = [(t, c, d) for t, c, d in watcher.encoder if t0 <= t <= t1]
            speeds = [v for t, v in watcher.drive if t0 <= t <= t1]
        counts = [c for _, c, _ in during]
        assert len(set(counts)) > 1, counts
        assert any(d < 0 for _, _, d in during), during          # MOTOR_REVERSE
        # setDriveMotor(1, MOTOR_REVERSE, 20.0, 0.0): duty, sign bit, 20 % of 2047
        assert (0x8000 | 0x0800 | 409) in speeds, [hex(v) for v in speeds]
        # ...and stopped at the end: speed 0 and the counts settle
        watcher.wait("drive speed 0", lambda: watcher.drive[-1][0] > t1
                     and watcher.drive[-1][1] & 0x07FF == 0, 10)
        watcher.wait("encoder counts settled", lambda: len(
            [d for t, _, d in watcher.encoder if t > t1 + 1.0]) >= 3 and all(
            d == 0 for t, _, d in watcher.encoder[-3:]), 15)
        # the gateway logged the login as ken, an operator
        bridge.wait_for(re.compile(r"user ken \(operator\)"), timeout=30)
    finally:
        if watcher is not None:
            watcher.close()
        rc = bridge.stop()
    assert rc == 0, "\n".join(bridge.lines)
