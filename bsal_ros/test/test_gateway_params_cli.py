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

"""The gateways' parameters through the real `ros2 param` command line.

Each gateway runs as its own process (`-p watchdog_s:=2`: an integer for a
float parameter); `ros2 param get/set` then show that the value was taken, that
a read-only parameter is refused with the reason, that a bad value is refused
with the reason, and that a run-time parameter (watchdog_s) changes.

Needs the ros2 command (../shared/ros2-tools, see test_ros2_launch.py); skips without it.
"""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ros2_param_cli import ros2_param
from test_ros2_launch import require_ros2_tools

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(240)]

NAMESPACE = "/params_cli"
DISCOVERY_S = 60.0


class GatewayProcess:
    """One gateway node process, its output in a file."""

    def __init__(self, module, args, log_path):
        self.log_path = log_path
        self._log = open(log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"bsal_ros.nodes.{module}", "--ros-args",
             "-r", f"__ns:={NAMESPACE}", *args],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def text(self):
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pattern):
        deadline = time.monotonic() + DISCOVERY_S
        while not re.search(pattern, self.text()):
            assert self.proc.poll() is None, f"exit {self.proc.returncode}:\n{self.text()}"
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.2)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        finally:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait(timeout=10)
            self._log.close()


@pytest.fixture(scope="module")
def ros2():
    return require_ros2_tools()


def serving(module, args, ready, folder):
    """For a fixture: the gateway ``module`` with ``args`` (its log in
    ``folder``) once its log shows ``ready``; stopped afterwards."""
    gw = GatewayProcess(module, args, folder / f"{module}.log")
    try:
        gw.wait_for(ready)
        yield gw
    finally:
        gw.stop()


@pytest.fixture(scope="module")
def rci(ros2, tmp_path_factory):
    yield from serving("rci_gateway", ["-p", "port:=0", "-p", "watchdog_s:=2"],
                       r"RCI gateway ready on", tmp_path_factory.mktemp("rci"))


@pytest.fixture(scope="module")
def rdi(ros2, tmp_path_factory):
    yield from serving("rdi_gateway", ["-p", "realtime_port:=0", "-p", "ca_port:=0",
                                       "-p", "realtime_rate_hz:=20"],
                       r"RDI gateway: real-time stream", tmp_path_factory.mktemp("rdi"))


def test_an_integer_for_a_float_parameter_starts_the_rci_gateway(ros2, rci):
    out = ros2_param(ros2, "get", f"{NAMESPACE}/rci_gateway", "watchdog_s")
    assert re.search(r"value is: 2(\.0)?$", out.strip()), out
    assert "watchdog 2.0 s" in rci.text()
    assert "Traceback" not in rci.text()


def test_a_read_only_parameter_is_refused_with_the_reason(ros2, rci, rdi):
    out = ros2_param(ros2, "set", f"{NAMESPACE}/rci_gateway", "host", "0.0.0.0")
    assert "Setting parameter failed: Trying to set a read-only parameter: host" in out
    out = ros2_param(ros2, "set", f"{NAMESPACE}/rdi_gateway", "realtime_rate_hz", "5.0")
    assert "Setting parameter failed: Trying to set a read-only parameter" in out
    out = ros2_param(ros2, "get", f"{NAMESPACE}/rci_gateway", "host")
    assert "String value is: 127.0.0.1" in out


def test_a_bad_value_is_refused_with_the_reason(ros2, rci):
    name = f"{NAMESPACE}/rci_gateway"
    out = ros2_param(ros2, "set", name, "watchdog_s", "abc")
    assert "Setting parameter failed: watchdog_s must be a number, not 'abc'" in out
    out = ros2_param(ros2, "set", name, "watchdog_s", "99999.0")
    assert "Setting parameter failed" in out and "out of range" in out, out
    out = ros2_param(ros2, "set", name, "idle_limit_s", "100000")
    assert "Setting parameter failed: idle_limit_s must be in 0..86400, not 100000" in out
    # refused changes leave the value alone, and the node logs why once
    out = ros2_param(ros2, "get", name, "watchdog_s")
    assert re.search(r"value is: 2(\.0)?$", out.strip()), out
    assert "parameter change refused: watchdog_s must be a number" in rci.text()


def test_a_run_time_parameter_changes(ros2, rci):
    name = f"{NAMESPACE}/rci_gateway"
    out = ros2_param(ros2, "set", name, "watchdog_s", "0.5")
    assert "Set parameter successful" in out, out
    assert "Double value is: 0.5" in ros2_param(ros2, "get", name, "watchdog_s")
    deadline = time.monotonic() + 10
    while "parameters changed: watchdog_s 0.5" not in rci.text():
        assert time.monotonic() < deadline, rci.text()
        time.sleep(0.1)


def test_the_descriptors_say_what_each_parameter_is(ros2, rci):
    out = ros2_param(ros2, "describe", f"{NAMESPACE}/rci_gateway", "port", "watchdog_s")
    port, watchdog = out.split("Parameter name: watchdog_s")
    assert "Read only: true" in port and "Max value: 65535" in port, out
    assert "Read only: true" not in watchdog and "Max value: 3600.0" in watchdog, out
