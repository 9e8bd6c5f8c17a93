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

"""The gateway logic is pure Python and its imports go one way: core and
protocol import nothing above them, rci and rdi import no ROS, no hardware
code and no node (docs/ARCHITECTURE.md)."""
import os
from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parent  # the repository: legacy/, docs/, bench/ beside the packages
ROS_PREFIXES = ("rclpy", "rcl_interfaces", "builtin_interfaces", "std_msgs", "sensor_msgs",
                "geometry_msgs", "nav_msgs", "diagnostic_msgs", "bsal_interfaces", "tf2",
                "launch", "ament_index_python", "rosidl", "action_msgs")


def _loaded_by(modules: str) -> set[str]:
    code = (f"import sys; import {modules}; "
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'bsal_ros' "
            f"or m.split('.')[0] in {ROS_PREFIXES!r})))")
    # the layers of this package: an installed plugin kind (the test bumper) may
    # import the hardware layer for its own board classes, in any process
    env = {**os.environ, "BSAL_ROS_KIND_PLUGINS": "builtin"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env=env)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_rci_and_rdi_load_no_ros_no_hardware_no_node():
    loaded = _loaded_by("bsal_ros.rci, bsal_ros.rci.fake, bsal_ros.rci.client, bsal_ros.rdi")
    assert "bsal_ros.rci.session" in loaded and "bsal_ros.rdi.state" in loaded
    bad = {m for m in loaded if m.split(".")[0] in ROS_PREFIXES
           or m.startswith(("bsal_ros.hardware", "bsal_ros.nodes"))}
    assert bad == set()


def test_core_and_protocol_import_nothing_above_them():
    loaded = _loaded_by("bsal_ros.core, bsal_ros.protocol")
    assert "bsal_ros.protocol.rci_decode" in loaded and "bsal_ros.core.device_state" in loaded
    above = {m for m in loaded if m.startswith(("bsal_ros.rci", "bsal_ros.rdi", "bsal_ros.nodes",
                                                "bsal_ros.hardware"))}
    assert above == set()
    assert not any(m.split(".")[0] in ROS_PREFIXES for m in loaded)


def test_fault_campaign_helpers_are_not_installed_with_the_package():
    from setuptools import find_packages
    shipped = find_packages(str(ROOT), exclude=["test", "test.*", "bench", "bench.*"])
    assert "bsal_ros.rci" in shipped
    assert not any("faults" in name for name in shipped)
    assert (ROOT / "test" / "faults" / "corpus.py").exists()
