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

"""Legacy programs drive a robot we did not write: ir-sim's car-like robot
behind a tricycle_controller adapter (irsim_base.py), through the shipped
``tricycle`` profile.

The bridge (``brak_bringup --bus-backend ros_base --base-profile tricycle
--namespace brak``: the profile's topics are at the root, the bridge's own in
/brak) runs in its own process, the adapter and ir-sim in this one. The
control applications are second processes speaking the wire (the book's
listing, built from the seed) or this process's RCI client. What they read
is checked against ir-sim's own state and geometry, not against our model.
"""

import importlib.util
import math
import re
import subprocess
import threading
import time

import pytest

from bsal_ros.core.units import delay_to_range
from bsal_ros.hardware import load_description
from bsal_ros.protocol.constants import GetSensorStatus, RdiSensorType, SensorType
from bsal_ros.protocol.rci import CAcSn, CCnAc, CGtSnIq, CGtSnRp, RelEncoderData
from bsal_ros.protocol.rdi import RdiOrientEgo, RdiSensor
from bsal_ros.protocol.values import statval_fields
from bsal_ros.rci.users import DEMO_KEY
import test_book_listing
from test_bringup import Bridge, read_rdi

# ir-sim comes from PyPI only (no rosdep key): a ROS user's workspace may lack it
if importlib.util.find_spec("irsim") is None:     # not imported here: ir-sim prints at import
    pytest.skip("ir-sim is installed by make setup (requirements/project.txt)",
                allow_module_level=True)

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(300)]
#: the seed's listing, extracted and built as test_book_listing does (skips without the seed)
book_app = test_book_listing.book_app

DESCRIPTION = load_description()["robot"]
SONARS = {d["id"]: d["pose"] for d in DESCRIPTION["devices"]["ultrasonic"].values()}
#: the sonars whose axis meets a wall of the room square on at the start (ahead,
#: left, behind, right): their nearest return in the cone is the one on the axis
SQUARE_ON = (0, 3, 6, 9)
GEOMETRY = DESCRIPTION["geometry"]
METRES_PER_COUNT = 2 * math.pi * GEOMETRY["wheel_radius"] / GEOMETRY["drive_encoder_cpr"]


@pytest.fixture(scope="module")
def rig():
    from irsim_base import IrSimTricycle
    base = IrSimTricycle()
    bridge = None
    try:
        bridge = Bridge("--bus-backend", "ros_base", "--base-profile", "tricycle",
                        "--namespace", "brak")
        bridge.wait_for(re.compile(r"every mapped input topic heard \(3\)"), timeout=30)
        yield base, bridge
    finally:
        if bridge is not None:
            rc = bridge.stop()
            assert rc == 0, "\n".join(bridge.lines)
        base.close()


def bridge_log(bridge) -> str:
    """The bridge's last 60 lines, what it has printed so far read first."""
    while bridge.read_available(0.05):
        pass
    return "\n".join(bridge.lines[-60:])


def login(port):
    from two_hosts.clients import ControlApp
    return ControlApp("127.0.0.1", int(port), "demo", DEMO_KEY.hex())


def sonars_when_ready(ca, timeout: float = 30.0) -> dict[int, float | None]:
    """{id: range m or None} of the 12 sonars once each is ok (its topic heard)."""
    deadline = time.monotonic() + timeout
    while True:
        st = ca.request("status", CGtSnIq.group(SensorType.ULTRASONIC, 0,
                                                [GetSensorStatus.STATUS] * 12))
        data = ca.request("data", CGtSnIq.group(SensorType.ULTRASONIC, 0,
                                                [GetSensorStatus.DATA] * 12))
        assert isinstance(st, CGtSnRp) and isinstance(data, CGtSnRp), (st, data)
        ok = [statval_fields(s.statval)[2] for _, s in st.items]
        ranges = {i: delay_to_range(d.delay, 343.0) if d.delay else None for i, d in data.items}
        if (all(ok) and all(ranges[i] is not None for i in SQUARE_ON)) \
                or time.monotonic() > deadline:
            return ranges
        time.sleep(0.2)


def encoder_count(ca) -> int:
    rp = ca.request("encoder", CGtSnIq.one(SensorType.RELENCODER, 0, GetSensorStatus.DATA))
    assert isinstance(rp, CGtSnRp) and isinstance(rp.items[0][1], RelEncoderData), rp
    return rp.items[0][1].count


def at_rest(base, seconds: float = 0.3):
    """Wait until ir-sim's robot has not moved for ``seconds``."""
    def still():
        recent = [s for s in base.states if s[0] >= time.monotonic() - seconds]
        return len(recent) >= 3 and all(abs(s[4]) < 1e-9 for s in recent)
    base.wait("the robot at rest", still, 15)


def test_the_sonars_facing_a_wall_read_its_distance_from_the_simulator(rig):
    base, bridge = rig
    ca = login(bridge.ports[0])
    try:
        at_rest(base)
        got = sonars_when_ready(ca)
        for i in SQUARE_ON:
            expected = base.ray_to_wall(tuple(SONARS[i]))
            assert got[i] == pytest.approx(expected, rel=0.10), (i, got[i], expected, got)
    finally:
        ca.close()


def test_the_encoder_and_the_rdi_stream_agree_with_the_simulator(rig):
    """A drive forward at 30 %: the drive encoder read over RCI, and a GUI
    client's RDI stream (the pose and the sonar ahead), against ir-sim."""
    base, bridge = rig
    ca = login(bridge.ports[0])
    try:
        assert ca.prepare() == "ack"
        assert isinstance(ca.request("encoder on", CAcSn.one(SensorType.RELENCODER, 0, 1,
                                                             rq_ack=True)), CCnAc)
        at_rest(base)
        count0, travelled0 = encoder_count(ca), base.travelled
        stream: list = []
        reader = threading.Thread(target=lambda: stream.extend(read_rdi(bridge.ports[1], 6.0)))
        reader.start()
        try:
            time.sleep(1.0)                  # the GUI client sees the robot at rest first
            ca.drive(30.0)
            base.wait("0.15 m forward", lambda: base.travelled - travelled0 > 0.15, 20)
            assert ca.stop_driving() == "ack"
            at_rest(base)
        finally:
            reader.join(30)
        # the board's data block follows at its next poll
        time.sleep(0.3)
        moved_m = base.travelled - travelled0
        read_m = (encoder_count(ca) - count0) * METRES_PER_COUNT
        assert read_m == pytest.approx(moved_m, rel=0.05), (read_m, moved_m)
    finally:
        ca.close()
    poses = [p for p in stream if isinstance(p, RdiOrientEgo)]
    assert len(poses) >= 2, stream[:20]
    shown_m = math.hypot(poses[-1].xpos - poses[0].xpos, poses[-1].ypos - poses[0].ypos)
    assert shown_m == pytest.approx(moved_m, rel=0.10), (shown_m, moved_m)
    ahead = [item for p in stream if isinstance(p, RdiSensor)
             and p.sub_code == RdiSensorType.ULTRASONIC for i, item in p.items if i == 0]
    assert ahead and ahead[-1].delay, stream[:20]
    expected = base.ray_to_wall(tuple(SONARS[0]))
    assert delay_to_range(ahead[-1].delay, 343.0) == pytest.approx(expected, rel=0.10), \
        (ahead[-1], expected)


# it times a bound: the base's 20 Hz topics must reach the bridge within their 0.5 s
# timeout through the whole drive, or the bridge stops the motors (homing too)
@pytest.mark.alone
def test_the_book_listing_drives_the_irsim_base_backwards(rig, book_app):
    base, bridge = rig
    at_rest(base)
    x0, y0, yaw0 = base.pose()
    with base.lock:
        start = len(base.commands)
    r = subprocess.run([str(book_app), f"127.0.0.1:{bridge.ports[0]}"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr + bridge_log(bridge)
    with base.lock:
        seen = base.commands[start:]
    # MOTOR_REVERSE at 20 %
    assert any(vx < 0 for _, vx, _ in seen), f"{seen[:20]}\n" + bridge_log(bridge)
    base.wait("the stop", lambda: base.commands[-1][1:] == (0.0, 0.0), 10)
    at_rest(base)
    x, y, _ = base.pose()
    along = (x - x0) * math.cos(yaw0) + (y - y0) * math.sin(yaw0)
    # 20 % of the profile's full_speed (0.5 m/s) for the listing's 2.5 s and more
    assert along < -0.15, f"{(x0, y0, x, y)}\n" + bridge_log(bridge)
