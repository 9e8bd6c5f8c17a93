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

"""bsal_ros.protocol is pure: no ROS, no sockets, no event loops (docs/DEVELOPING.md, Layers)."""

import ast
import pathlib

import bsal_ros.protocol

FORBIDDEN_TOP = {"rclpy", "rcl", "rclcpp", "rosidl_runtime_py", "launch", "launch_ros",
                 "socket", "socketserver", "asyncio", "selectors", "ssl", "bsal_interfaces",
                 "builtin_interfaces", "std_msgs", "sensor_msgs", "geometry_msgs", "nav_msgs",
                 "diagnostic_msgs", "rcl_interfaces", "ament_index_python"}
#: what the ROS-free layers beyond the protocol may use (the page server, the SDK's loop)
NETWORK = {"socket", "socketserver", "asyncio", "selectors", "ssl"}


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
            if node.args and isinstance(node.args[0], ast.Constant):
                yield str(node.args[0].value)


def assert_no_ros(files):
    for f in files:
        for name in _imports(ast.parse(f.read_text(), str(f))):
            top = name.split(".")[0]
            assert top not in FORBIDDEN_TOP - NETWORK, f"{f.name} imports {name}"
            assert not top.endswith(("_msgs", "_srvs", "_interfaces")), f"{f.name} imports {name}"
            assert not top.startswith(("rcl", "ros", "ament")), f"{f.name} imports {name}"
            assert not name.startswith("bsal_ros.nodes"), f"{f.name} imports {name}"


def test_the_foxglove_scene_joint_and_hint_layers_import_no_ros():
    # what the gateway, the recorder, brak_markers and the hardware node share that
    # a test (or another front end) uses without a ROS install
    package = pathlib.Path(bsal_ros.protocol.__file__).parents[1]
    files = sorted((package / "foxglove").glob("*.py")) + [
        package / "scene.py", package / "description" / "joints.py",
        package / "kinds" / "board_hint.py"]
    assert len(files) >= 12 and all(f.is_file() for f in files), files
    assert_no_ros(files)


def test_protocol_imports_no_ros_or_sockets():
    root = pathlib.Path(bsal_ros.protocol.__file__).parent
    files = sorted(root.rglob("*.py"))
    assert len(files) >= 5
    for f in files:
        for name in _imports(ast.parse(f.read_text(), str(f))):
            top = name.split(".")[0]
            assert top not in FORBIDDEN_TOP, f"{f.name} imports {name}"
            assert not top.endswith(("_msgs", "_srvs", "_interfaces")), f"{f.name} imports {name}"
            assert not top.startswith(("rcl", "ros")), f"{f.name} imports {name}"
