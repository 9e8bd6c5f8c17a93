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

"""A gateway that dies does not leave the motors it set running.

The hardware node runs in this process; the RCI gateway runs as a separate
process that a control application uses to set the drive to 30 %. The
gateway is then SIGKILLed: nothing is left to stop the motor but the command
lease every set_motors of the gateway carries (motor_lease_s; 2 s here).
"""
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from bsal_ros.nodes.hardware_node import HardwareNode
from bsal_ros.protocol import (CAcMt, CCnAc, CStIq, CStMt, CStRp, MotorCommand, MotorCommandKind,
                               MotorType, RciCode, speedval_pack)
from bsal_ros.protocol.values import speedval_sign
from bsal_ros.rci.client import RciClient
from bsal_ros.rci.users import DEMO_KEY

from hardware_node_helpers import RosEnv, wait_for

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "lease_gateway_killed"


def test_motor_stops_after_the_gateway_is_killed():
    env = RosEnv()
    gateway = None
    try:
        # The drive board's own command watchdog off: only the lease can stop
        # the motor here (a loaded machine that starves the poll thread would
        # otherwise trip it, and "still running" could not be asserted).
        hw = env.add(HardwareNode(namespace=NS, context=env.context, auto_home=False,
                                  robot={"boards": {"drive": {"command_timeout_ms": 0}}}))
        gateway = subprocess.Popen(
            [sys.executable, "-m", "bsal_ros.nodes.rci_gateway", "--ros-args",
             "-r", f"__ns:=/{NS}", "-p", "port:=0",
             # 2 s instead of the shipped 1 s: margin for a loaded CI machine
             "-p", "motor_lease_s:=2.0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        threading.Thread(target=lambda: [lines.append(ln.rstrip()) for ln in gateway.stdout],
                         daemon=True).start()

        def port():
            for ln in lines:
                m = re.search(r"ready on [\d.]+:(\d+)", ln)
                if m:
                    return int(m.group(1))
            return None
        assert wait_for(port, 60), lines
        assert wait_for(lambda: any("device list received" in ln for ln in lines), 60), lines

        client = RciClient("127.0.0.1", port(), timeout=10)
        client.handshake("demo", DEMO_KEY)
        assert client.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
        thirty = MotorCommand(MotorCommandKind.SPVAL, speedval_pack(True, 30.0))
        reply = client.request(CStMt.one(MotorType.DC, 0, thirty, rq_ack=True))
        assert reply == CCnAc(RciCode.CStMt)
        board = hw.robot.bus.device(0x30)
        assert speedval_sign(board.speed_set) == 1

        # Renewals keep the motor running past one lease: wait until the
        # gateway's renewals have pushed the deadline two leases past the first
        # (the client keeps talking, or the gateway's 2 s watchdog would end
        # its session); the motor runs all along and no lease ran out.
        key = ("dc_motor", 0)
        first_deadline = hw.robot.leases[key].deadline
        deadline = time.monotonic() + 60
        while True:
            lease = hw.robot.leases.get(key)
            assert lease is not None and hw.robot.lease_expiries == 0, \
                "the lease ran out while the gateway was alive"
            if lease.deadline >= first_deadline + 2 * 2.0:
                break
            assert time.monotonic() < deadline, "the gateway did not renew its lease"
            assert isinstance(client.request(CStIq()), CStRp)
            assert speedval_sign(board.speed_set) == 1, "stopped while the gateway was alive"
            time.sleep(0.2)
        assert board.watchdog_trips == 0

        # ... and when the gateway dies, the lease runs out and the node stops it.
        gateway.send_signal(signal.SIGKILL)
        gateway.wait(timeout=10)
        assert wait_for(lambda: speedval_sign(board.speed_set) == 0, 10), "drive still running"
        assert hw.robot.lease_expiries >= 1
        client.close()
    finally:
        if gateway is not None and gateway.poll() is None:
            gateway.kill()
            gateway.wait(timeout=10)
        env.close()
