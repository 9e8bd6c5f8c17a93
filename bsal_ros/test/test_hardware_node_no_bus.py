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

"""The hardware node on the smbus2 backend without the i2c device, run as a
process the way ``make run RUN_ARGS="--bus-backend smbus2 --i2c-bus N"`` does:
it does not crash, logs the reason once, publishes an ERROR diagnostic with
the reason for every board, and ends cleanly on Ctrl-C."""
import os
import signal
import subprocess
import sys

import pytest

pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402, I100

from child_process import stopped  # noqa: E402
from hardware_node_helpers import Probe, RosEnv  # noqa: E402

pytestmark = pytest.mark.ros

BUS = 97   # no machine here has /dev/i2c-97
REASON = f"cannot open /dev/i2c-{BUS}"
ERROR = DiagnosticStatus.ERROR[0] if isinstance(DiagnosticStatus.ERROR, bytes) else 2


def test_node_without_the_i2c_device_keeps_running_and_reports_why():
    assert not os.path.exists(f"/dev/i2c-{BUS}")
    proc = subprocess.Popen(
        [sys.executable, "-m", "bsal_ros.nodes.hardware_node", "--ros-args",
         "-r", "__ns:=/no_bus_test", "-p", "bus_backend:=smbus2", "-p", f"i2c_bus:={BUS}",
         "-p", "diagnostics_period:=0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    env = RosEnv()
    try:
        probe = env.add(Probe(env))
        probe.listen(DiagnosticArray, "/diagnostics")

        def board_errors(arr):
            mine = [s for s in arr.status if s.name.startswith("/no_bus_test/")]
            devices = [s for s in mine if not s.name.endswith(": bus")]
            return devices and all(s.level[0] == ERROR and REASON in s.message
                                   for s in devices)
        arr = probe.wait_msg("/diagnostics", board_errors, timeout=60.0)
        assert arr is not None, "no ERROR diagnostic with the reason"
        assert proc.poll() is None, "the node exited"
    finally:
        env.close()
        out = stopped(proc, signal.SIGINT)
    assert "Traceback" not in out and "AttributeError" not in out, out
    assert sum(REASON in line for line in out.splitlines()) == 1, out
