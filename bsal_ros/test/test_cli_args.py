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

"""brak_bringup and brak_drive take ROS arguments like every ROS executable."""
import os
from pathlib import Path
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from bsal_ros.nodes.cli import split_ros_args

ROOT = Path(__file__).resolve().parents[1]


def test_split_ros_args_takes_every_block_and_keeps_our_options():
    ours, ros = split_ros_args(["0.2", "--ros-args", "-r", "__ns:=/b2", "--", "0.1",
                                "--seconds", "2", "--ros-args", "-p", "x:=1"])
    assert ours == ["0.2", "0.1", "--seconds", "2"]
    assert ros == ["-r", "__ns:=/b2", "-p", "x:=1"]
    assert split_ros_args(["--duration", "3"]) == (["--duration", "3"], [])
    assert split_ros_args(["--", "--ros-args", "-p", "x:=1"]) == ([], ["-p", "x:=1"])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.ros
def test_bringup_applies_a_params_file_given_after_ros_args(tmp_path):
    port = free_port()
    params = tmp_path / "mine.yaml"
    params.write_text(f"rci_gateway:\n  ros__parameters:\n    port: {port}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "bsal_ros.nodes.bringup", "--rdi-realtime-port", "0",
         "--rdi-ca-port", "0", "--foxglove-port", "0", "--page-port", "0",
         "--duration", "60", "--ros-args", "--params-file", str(params)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=os.environ.copy())
    lines = []
    try:
        deadline = time.monotonic() + 60
        up = None
        while up is None and time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline()
            lines.append(line.rstrip())
            up = re.search(r"Brak is up: .*RCI 127\.0\.0\.1:(\d+)", line)
        assert up, "\n".join(lines)
        assert int(up.group(1)) == port, "\n".join(lines)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in out, out


@pytest.mark.ros
def test_brak_drive_honours_a_namespace_remap(ros_context):
    from geometry_msgs.msg import Twist
    import rclpy.executors
    node = rclpy.create_node("remap_listener", namespace="drive_remap", context=ros_context)
    got = []
    node.create_subscription(Twist, "cmd_vel", lambda m: got.append(m.linear.x), 10)
    executor = rclpy.executors.SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    proc = subprocess.Popen([sys.executable, "-m", "bsal_ros.tools.drive", "0.25", "0.0",
                             "--seconds", "1.5", "--ros-args", "-r", "__ns:=/drive_remap"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        for _ in range(10):
            executor.spin_once(timeout_sec=0.05)
        out = proc.communicate(timeout=10)[0]
        assert proc.returncode == 0, out
        assert "/drive_remap/cmd_vel" in out, out
        assert 0.25 in got and got[-1] == 0.0, got[-5:]
    finally:
        if proc.poll() is None:
            proc.kill()
        executor.shutdown()
        node.destroy_node()
