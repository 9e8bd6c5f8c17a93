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

"""Motor safety through the node (docs/HARDWARE.md section 14): a stop sent
through `set_motors` to a faulted board is latched and applied when the
board is back; a hung poll thread leaves the motor to the board's watchdog."""
import pytest

pytest.importorskip("rclpy")

from bsal_interfaces.msg import DeviceStateArray, Result  # noqa: E402, I100
from bsal_interfaces.srv import SimControl  # noqa: E402

from bsal_ros.protocol.values import speedval_sign  # noqa: E402

from hardware_helpers import speedval_from_duty  # noqa: E402
from hardware_node_helpers import drive_state, set_drive, wait_for  # noqa: E402

pytestmark = pytest.mark.ros
NS = "hw_safety_test"
THIRTY = speedval_from_duty(30.0)


LISTEN = [(DeviceStateArray, "device_states", {"keep": 200})]


@pytest.fixture(scope="module")
def env(hardware_node_env):
    """The module's hardware node and probe (conftest: hardware node fixtures)."""
    return hardware_node_env


def sim(p, **kw):
    return p.call(SimControl, "sim_control", SimControl.Request(**kw)).result


def test_stop_through_set_motors_to_a_missing_board_is_latched_and_applied(env):
    node, p = env.node, env.probe
    vb, b = node.robot.bus.device(0x30), node.robot.boards["drive"]
    assert set_drive(p, 30.0).code == Result.OK
    assert p.wait_msg("device_states", lambda a: (s := drive_state(a)) is not None
                      and s.speedval == THIRTY and s.ok)
    assert sim(p, command="set_fault", target="drive", fault="missing").code == Result.OK
    p.clear("device_states")
    assert p.wait_msg("device_states", lambda a: (s := drive_state(a)) is not None and not s.up)
    # a speed stays refused, a stop is latched and said so
    r = set_drive(p, 20.0)
    assert r.code == Result.HARDWARE_FAULT and "nothing changed" in r.message
    r = set_drive(p, 0.0)
    assert r.code == Result.HARDWARE_FAULT and "ENXIO" in r.message
    assert "stop latched: re-sent when the board answers" in r.message
    assert "watchdog stops the motor within 500 ms" in r.message
    p.clear("device_states")
    assert p.wait_msg("device_states", lambda a: (s := drive_state(a)) is not None
                      and "stop latched" in s.fault)
    assert sim(p, command="clear_faults", target="drive").code == Result.OK
    p.clear("device_states")
    arr = p.wait_msg("device_states", lambda a: (s := drive_state(a)) is not None and s.ok
                     and s.up and speedval_sign(s.speedval) == 0 and "stop latched" not in s.fault)
    assert arr is not None
    assert wait_for(lambda: not b.stop_pending)
    assert b.stop_resends >= 1 or b.stops_latched >= 1
    assert speedval_sign(vb.speed_set) == 0 and node.robot.bus.simulation.world.drive_cmd[1] == 0.0
    assert set_drive(p, 0.0).code == Result.OK


def test_hung_poll_thread_leaves_the_stop_to_the_board_watchdog(env):
    node, p = env.node, env.probe
    vb = node.robot.bus.device(0x30)
    assert set_drive(p, 30.0).code == Result.OK
    assert wait_for(lambda: vb.speed_set == THIRTY)
    node.poller.stop()                  # no more polls, no more keep-alives
    try:
        # the simulated board runs on its own clock (synced here, no bus write)
        assert wait_for(lambda: node.robot.bus.simulation.ground_truth() is not None
                        and speedval_sign(vb.speed_set) == 0)
        assert vb.watchdog_trips >= 1 and node.robot.bus.simulation.world.drive_cmd == (True, 0.0)
    finally:
        node.poller.start()
    p.clear("device_states")
    s = drive_state(p.wait_msg("device_states", lambda a: (s := drive_state(a)) is not None
                               and "watchdog" in s.fault))
    assert speedval_sign(s.speedval) == 0
    assert set_drive(p, 0.0).code == Result.OK
