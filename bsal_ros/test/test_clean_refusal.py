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

"""A start that is refused builds no node and no DDS participant (issue 38).

A wrong parameter, a params-file key no parameter reads and a bad robot
description are found from the arguments and files before the first node
exists (``bsal_ros/nodes/preflight.py``), so nothing is left to destroy (the
destruction of a context's last node can deadlock inside Fast DDS,
docs/DEVELOPING.md). A driver process runs each executable's ``main()``
with rclpy's ``Node.__init__`` counting the nodes built, and watches
``/dev/shm`` with inotify for the files Fast DDS's shared-memory transport
makes with a participant (made at creation, removed at a clean
destruction, so a listing after the fact would not see them). The driver
runs in a private ``/dev/shm`` (a user and mount namespace, ``unshare``) so
no other process's files count; the same driver shows that ``rclpy.init``
makes none of them and that a node does.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.ros

DRIVER = textwrap.dedent("""
    import ctypes, importlib, json, os, struct, sys
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    assert fd >= 0 and libc.inotify_add_watch(fd, b"/dev/shm", 0x100) >= 0   # IN_CREATE
    import rclpy, rclpy.node
    nodes = []
    real_init = rclpy.node.Node.__init__
    def counting_init(self, node_name, *args, **kwargs):
        nodes.append(node_name)
        real_init(self, node_name, *args, **kwargs)
    rclpy.node.Node.__init__ = counting_init
    mode, cases = sys.argv[1], json.loads(sys.argv[2])
    codes = []
    if mode == "init":
        rclpy.init(args=["x"]); rclpy.shutdown()
    elif mode == "node":
        rclpy.init(args=["x"]); rclpy.create_node("probe").destroy_node(); rclpy.shutdown()
    else:
        for module, argv in cases:
            codes.append(importlib.import_module(module).main(argv, hard_exit=False))
    created = []
    while True:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            break
        i = 0
        while i < len(buf):
            length = struct.unpack_from("iIII", buf, i)[3]
            created.append(buf[i + 16:i + 16 + length].rstrip(b"\\0").decode())
            i += 16 + length
    print("@@" + json.dumps({"codes": codes, "nodes": nodes,
                             "fastdds": [n for n in created if "fastdds" in n]}))
""")


def sandbox():
    """The command prefix that gives a process a private /dev/shm, or None."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    prefix = [unshare, "--user", "--map-root-user", "--mount", "sh", "-c",
              'mount -t tmpfs bsal_shm /dev/shm && exec "$0" "$@"']
    probe = subprocess.run(prefix + ["true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def drive(mode, cases=()):
    """Run the driver; returns its report and its whole output."""
    prefix = sandbox()
    if not prefix:      # as the two-host tests skip where namespaces cannot be made
        pytest.skip("no private /dev/shm: unshare --user --mount is not allowed here, "
                    "and another process's Fast DDS files would count")
    out = subprocess.run(prefix + [sys.executable, "-c", DRIVER, mode, json.dumps(cases)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=240, env=dict(os.environ, RCUTILS_COLORIZED_OUTPUT="0"))
    reports = [ln[2:] for ln in out.stdout.splitlines() if ln.startswith("@@")]
    assert out.returncode == 0 and reports, out.stdout
    return json.loads(reports[-1]), out.stdout


def test_rclpy_init_makes_no_participant_and_the_first_node_does():
    """What the check relies on (rmw_fastrtps), and that the watch sees it."""
    report, out = drive("init")
    assert report["fastdds"] == [] and report["nodes"] == [], out
    report, out = drive("node")
    assert report["nodes"] == ["probe"], out
    assert any(n.startswith("fastdds_") for n in report["fastdds"]), out


REFUSED = [
    ("bsal_ros.nodes.hardware_node", ["hardware_node", "--ros-args", "-p", "i2c_bus:=-1"]),
    ("bsal_ros.nodes.hardware_node", ["hardware_node", "--ros-args", "-p", "rate_scal:=2.0"]),
    ("bsal_ros.nodes.hardware_node",
     ["hardware_node", "--ros-args", "-p", "robot.geometry.wheel_radus:=0.1"]),
    ("bsal_ros.nodes.rci_gateway", ["rci_gateway", "--ros-args", "-p", "port:=70000"]),
    ("bsal_ros.nodes.rdi_gateway",
     ["rdi_gateway", "--ros-args", "-p", "socket_send_buffer:=-1"]),
    ("bsal_ros.nodes.foxglove_gateway",
     ["foxglove_gateway", "--ros-args", "-p", "host:=0.0.0.0"]),
    ("bsal_ros.nodes.bringup", ["--foxglove-host", "0.0.0.0"]),
    ("bsal_ros.nodes.bringup", ["--ros-args", "-p", "speed_of_sound:=-1.0"]),
    ("bsal_ros.nodes.bringup", ["--rci-port", "70000"]),
    ("bsal_ros.nodes.bringup", ["--ros-args", "-p", "realtime_rate_hz:=0.0"]),
]


def test_a_refused_start_builds_no_node_and_no_participant(tmp_path):
    params = tmp_path / "typo.yaml"
    params.write_text("/**/rci_gateway:\n  ros__parameters:\n    prot: 7650\n")
    cases = REFUSED + [("bsal_ros.nodes.rci_gateway",
                        ["rci_gateway", "--ros-args", "--params-file", str(params)]),
                       ("bsal_ros.nodes.rci_gateway",     # the users file is read first too
                        ["rci_gateway", "--ros-args", "-p",
                         f"users_file:={tmp_path / 'missing.yaml'}"])]
    report, out = drive("cases", cases)
    assert report["codes"] == [2] * len(cases), out
    assert report["nodes"] == [], out
    assert report["fastdds"] == [], out
