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

"""The hardware layer is pure Python: no module imports rclpy or a ROS package."""
import ast
from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).resolve().parents[1]
HW = ROOT / "bsal_ros" / "hardware"
ROS_PREFIXES = ("rclpy", "rcl_interfaces", "builtin_interfaces", "std_msgs", "sensor_msgs",
                "geometry_msgs", "nav_msgs", "diagnostic_msgs", "bsal_interfaces", "tf2",
                "launch", "ament_index_python", "rosidl", "action_msgs")


def test_no_ros_imports_in_the_source():
    offenders = []
    for path in sorted(HW.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for n in names:
                if n.split(".")[0] in ROS_PREFIXES or n.startswith("bsal_ros.nodes"):
                    offenders.append(f"{path.name}: {n}")
    assert offenders == []


def test_importing_the_layer_loads_no_ros_module():
    code = ("import sys; import bsal_ros.hardware, bsal_ros.hardware.sim, "
            "bsal_ros.hardware.poller, bsal_ros.hardware.diagnostics; "
            f"bad = [m for m in sys.modules if m.split('.')[0] in {ROS_PREFIXES!r}]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
