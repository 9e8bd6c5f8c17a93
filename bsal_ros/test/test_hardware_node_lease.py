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

"""Command leases through the node (docs/HARDWARE.md section 14): set_motors
with lease_s stops the motor when nobody renews it; the client-side
MotorLeaseKeeper keeps it running and, once it is closed (the client died),
the motor stops; a client process that is SIGKILLed stops its motor too.
No timed assertions: conditions are waited for with generous deadlines."""
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading

import pytest

pytest.importorskip("rclpy")

from bsal_interfaces.msg import DeviceStateArray, Result  # noqa: E402, I100
from bsal_interfaces.srv import RenewLease, Reset  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.node import Node  # noqa: E402

from bsal_ros.nodes.motor_lease import MotorLeaseKeeper  # noqa: E402
from bsal_ros.protocol.values import speedval_sign  # noqa: E402

from conftest import HARDWARE_NODE_KW  # noqa: E402, I100
from hardware_helpers import speedval_from_duty  # noqa: E402
from hardware_node_helpers import drive_state, set_drive, TIMEOUT, wait_for  # noqa: E402

pytestmark = pytest.mark.ros
NS = "hw_lease_test"
ROOT = Path(__file__).resolve().parents[1]
THIRTY = speedval_from_duty(30.0)


# The drive board's own command watchdog off: only a lease can stop the motor
# in these tests (a loaded machine that starves the poll thread, the board's
# keep-alive, would otherwise trip it and "still running" could not be asserted).
NODE_KW = {**HARDWARE_NODE_KW, "robot": {"boards": {"drive": {"command_timeout_ms": 0}}}}

LISTEN = [(DeviceStateArray, "device_states", {"keep": 200}),
          (DiagnosticArray, "/diagnostics", {"keep": 50})]


@pytest.fixture(scope="module")
def env(hardware_node_env):
    """The module's hardware node and probe (conftest), and a client node."""
    e = hardware_node_env
    if not hasattr(e, "client"):
        e.client = e.add(Node("lease_client", namespace=NS, context=e.context))
    return e


@pytest.fixture
def fresh(env):
    """Every test starts with the drive stopped, active, and no lease."""
    p = env.probe
    assert p.call(Reset, "reset", Reset.Request()).result.code == Result.OK
    from bsal_interfaces.srv import ActivateDevices
    r = p.call(ActivateDevices, "activate_devices", ActivateDevices.Request(
        device_class="dc_motor", ids=[0], active=[True]))
    assert r.result.code == Result.OK
    env.node.robot.lease_expiries = 0
    return env


def drive_stopped_msg(p):
    p.clear("device_states")
    return p.wait_msg("device_states", lambda a: (s := drive_state(a)) is not None
                      and speedval_sign(s.speedval) == 0)


def diag_drive(arr):
    for st in arr.status:
        if st.name.endswith(": dc_motor 0"):
            return st
    return None


def test_unrenewed_lease_through_the_service_stops_the_motor(fresh):
    node, p = fresh.node, fresh.probe
    vb = node.robot.bus.device(0x30)
    r = set_drive(p, 30.0, lease_s=0.5)
    assert r.code == Result.OK and "lease 0.5 s" in r.message
    assert p.wait_msg("device_states", lambda a: (s := drive_state(a)) is not None
                      and s.speedval == THIRTY)
    # nobody renews: the node stops the motor by itself
    assert drive_stopped_msg(p) is not None
    assert wait_for(lambda: node.robot.lease_expiries == 1)
    assert speedval_sign(vb.speed_set) == 0
    p.clear("/diagnostics")
    st = diag_drive(p.wait_msg("/diagnostics", lambda a: (d := diag_drive(a)) is not None
                               and "lease" in d.message))
    assert st.level == bytes([1]) and "lease of 0.5 s ran out" in st.message
    # the renewal of a lease that ran out is refused and names the motor
    resp = p.call(RenewLease, "renew_lease", RenewLease.Request(device_class="dc_motor",
                                                                ids=[0]))
    assert resp.result.code == Result.REFUSED and list(resp.not_held) == [0]
    assert speedval_sign(vb.speed_set) == 0
    # lease 0 (the default of every existing caller) keeps the old behaviour
    assert set_drive(p, 30.0).code == Result.OK
    assert node.robot.leases == {}
    assert set_drive(p, 0.0).code == Result.OK


def test_keeper_renews_and_the_motor_stops_after_close(fresh):
    node, p = fresh.node, fresh.probe
    vb = node.robot.bus.device(0x30)
    # A 2 s lease: on a loaded 2-core CI machine a 1 s gap between renewals
    # has been seen, and a lease that runs out is (rightly) final.
    keeper = MotorLeaseKeeper(fresh.client, lease_s=2.0, renew_period_s=0.2)
    try:
        assert set_drive(p, 30.0, lease_s=keeper.lease_s).code == Result.OK
        keeper.update("dc_motor", [(0, 30.0)])
        assert keeper.running() == {"dc_motor": [0]}
        # several lease periods of renewals (30 x 0.2 s = 3 leases): still running
        assert wait_for(lambda: keeper.renewed >= 30, timeout=60.0), \
            (keeper.failing, keeper.running(), keeper.lost, node.robot.lease_expiries)
        assert node.robot.lease_expiries == 0, "the lease ran out while renewed"
        assert ("dc_motor", 0) in node.robot.leases and keeper.failing == ""
        # still at 30 % (the board's own watchdog is off: NODE_KW)
        assert vb.speed_set == THIRTY and vb.watchdog_trips == 0, hex(vb.speed_set)
    finally:
        keeper.close()          # the client is gone: nobody renews
    assert drive_stopped_msg(p) is not None
    assert wait_for(lambda: node.robot.lease_expiries == 1)
    assert speedval_sign(vb.speed_set) == 0


def test_keeper_drops_a_motor_whose_lease_the_node_cleared(fresh):
    p = fresh.probe
    keeper = MotorLeaseKeeper(fresh.client, lease_s=2.0, renew_period_s=0.2)
    try:
        assert set_drive(p, 30.0, lease_s=2.0).code == Result.OK
        keeper.commanded("dc_motor", [0])
        assert wait_for(lambda: keeper.renewed >= 1)
        assert p.call(Reset, "reset", Reset.Request()).result.code == Result.OK
        assert wait_for(lambda: keeper.running() == {} and keeper.lost == 1)
        keeper.commanded("dc_motor", [0])
        keeper.released("dc_motor", [0])          # a stop: nothing left to renew
        assert keeper.running() == {}
    finally:
        keeper.close()


def test_keeper_reports_when_renewals_fail(fresh):
    keeper = MotorLeaseKeeper(fresh.client, lease_s=1.0, renew_period_s=0.2,
                              hardware_namespace="/no_such_robot")
    try:
        assert keeper.service_name == "/no_such_robot/renew_lease"
        assert keeper.failing == ""               # nothing to renew: nothing fails
        keeper.commanded("dc_motor", [0])
        assert wait_for(lambda: "not available" in keeper.failing)
    finally:
        keeper.close()
    with pytest.raises(ValueError):
        MotorLeaseKeeper(fresh.client, lease_s=1.0, renew_period_s=0.8)
    with pytest.raises(ValueError):
        MotorLeaseKeeper(fresh.client, lease_s=0.0)


CLIENT = r"""
import sys
import rclpy
from rclpy.executors import SingleThreadedExecutor
from bsal_interfaces.msg import MotorCommand
from bsal_interfaces.srv import SetMotors
from first_answer import call_answered, spinning
from bsal_ros.nodes.motor_lease import MotorLeaseKeeper

rclpy.init()
node = rclpy.create_node("lease_client_process", namespace=sys.argv[1])
keeper = MotorLeaseKeeper(node, lease_s=1.0, renew_period_s=0.2)
cli = node.create_client(SetMotors, "set_motors")
ex = SingleThreadedExecutor()
ex.add_node(node)
if not cli.wait_for_service(timeout_sec=60.0):
    print("no service", flush=True)
    sys.exit(1)
r = call_answered(cli, SetMotors.Request(device_class="dc_motor", lease_s=keeper.lease_s,
                  commands=[MotorCommand(id=0, mode=MotorCommand.MODE_DUTY_CYCLE, value=30.0)]),
                  spinning(ex))
print("set", r.result.code, r.result.message, flush=True)
keeper.update("dc_motor", [(0, 30.0)])
node.create_timer(0.2, lambda: print("renewed", keeper.renewed, flush=True))
ex.spin()
"""


def test_sigkilled_client_process_leaves_no_running_motor(fresh):
    node, p = fresh.node, fresh.probe
    vb = node.robot.bus.device(0x30)
    proc = subprocess.Popen([sys.executable, "-c", CLIENT, "/" + NS], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                filter(None, [os.environ.get("PYTHONPATH"), str(ROOT / "test")]))))
    lines = []

    def reader():
        for line in proc.stdout:
            lines.append(line.strip())
    threading.Thread(target=reader, daemon=True).start()

    def renewed(n):
        for ln in reversed(lines):
            if ln.startswith("renewed "):
                return int(ln.split()[1]) >= n
        return False
    try:
        assert wait_for(lambda: any(ln.startswith("set ") for ln in lines), timeout=60.0), lines
        assert [ln for ln in lines if ln.startswith("set ")][0].startswith("set 0 "), lines
        assert wait_for(lambda: vb.speed_set == THIRTY)
        # the client renews for several lease periods: the motor keeps running
        assert wait_for(lambda: renewed(12), timeout=60.0), lines[-5:]
        assert vb.speed_set == THIRTY and node.robot.lease_expiries == 0
        proc.send_signal(signal.SIGKILL)              # the client dies without a word
        proc.wait(TIMEOUT)
        assert drive_stopped_msg(p) is not None
        assert wait_for(lambda: node.robot.lease_expiries == 1)
        assert speedval_sign(vb.speed_set) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)
