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
"""The cliff-sensor plugin (test/plugins/bsal_cliff), a worked example of
docs/EXTENDING.md with configuration of its own: its board's description key
``threshold_mm`` and its run-time hardware node parameter ``cliff_offset_mm``
work as the package's own (read with their defaults, a wrong value refused
in one line with exit 2, ``ros2 param describe``, ``ros2 param set``), and
its detectors reach the simulated robot, /diagnostics, the RDI stream and the
viewer. It is installed by ``make setup`` with every package under
test/plugins; a tree set up before it existed imports it from its folder."""

import copy
import os
from pathlib import Path
import subprocess
import sys
import time
import uuid

import pytest
import yaml

from bsal_ros.core import DeviceState
from bsal_ros.hardware import load_description, Robot
from bsal_ros.hardware.diagnostics import device_diagnostics
from bsal_ros.kinds import device_classes, kind, loaded_plugins
from bsal_ros.nodes.records import NODE_RECORDS
from bsal_ros.protocol import encode_rdi_frame, RdiDecoder
from bsal_ros.protocol.rdi import RdiSensor
from bsal_ros.rdi.state import StreamState
from bsal_ros.viewer.model import describe, ViewerModel
from child_process import Child
from ros2_param_cli import ros2_param

try:
    import bsal_cliff as cliff
except ImportError:
    sys.path.insert(0, str(Path(__file__).parent / "plugins" / "bsal_cliff"))
    import bsal_cliff as cliff

INSTALLED = loaded_plugins().get("cliff") == "bsal_cliff"
PKG = Path(__file__).resolve().parents[1]


def cliff_robot(**board):
    """The built-in description with the cliff board (its entry updated by
    ``board``; a None value leaves the key out)."""
    desc = copy.deepcopy(cliff.DESCRIPTION)
    desc["boards"]["cliff"].update(board)
    desc["boards"]["cliff"] = {k: v for k, v in desc["boards"]["cliff"].items() if v is not None}
    return load_description(overrides={"robot": desc})["robot"]


def cycled(robot, now, distances):
    """The cliff states after the simulated detectors saw ``distances`` (mm)."""
    (vb,) = [b for b in robot.bus.attached() if isinstance(b, cliff.VirtualCliffBoard)]
    vb.distances = list(distances)
    for _ in range(5):
        now[0] += 0.1
        robot.cycle()
    res, states = robot.get_states("cliff")
    assert res.ok
    return states


def test_the_cliff_plugin_is_installed_with_its_configuration():
    assert INSTALLED, "make setup installs every plugin package under test/plugins"
    assert "cliff" in device_classes() and kind("cliff").params is cliff.CliffNodeParams
    default, spec = NODE_RECORDS["hardware_node"].specs()["cliff_offset_mm"]
    assert (default, spec.low, spec.high, spec.dynamic) == (0, -100, 100, True)


@pytest.mark.parametrize("threshold,flags", [(80, [0, 1, 0]), (None, [0, 1, 1])])
def test_a_detector_sees_a_cliff_beyond_its_board_s_threshold(threshold, flags):
    entry = cliff_robot(threshold_mm=threshold)     # None: its declared default, 60 mm
    now = [0.0]
    r = Robot(entry, seed=1, clock=lambda: now[0])
    try:
        r.start(activate=True)
        states = cycled(r, now, [30, 100, 70])
        assert [s.extra for s in states] == [
            {"distance_mm": d, "cliff": f} for d, f in zip([30, 100, 70], flags)]
        diag = {d.name: d.values for d in device_diagnostics(r, r.clock())}
        assert diag["cliff 1"] == {**diag["cliff 1"], "distance_mm": 100, "cliff": True}
    finally:
        r.close()


def test_a_wrong_threshold_is_refused_when_the_description_is_read():
    with pytest.raises(ValueError, match=r"^board cliff: threshold_mm must be in 10\.\.1000, "
                                         r"not 5$"):
        cliff_robot(threshold_mm=5)


def test_the_detectors_in_an_rdi_frame_and_the_viewer():
    st = StreamState()
    st.update_devices([DeviceState("cliff", 2, on=True, statval=0x700, stamp=1.0,
                                   extra={"distance_mm": 95.0, "cliff": 1.0})])
    (p,) = RdiDecoder().feed(encode_rdi_frame(st.build_frame()))
    assert isinstance(p, RdiSensor) and p.sub_code == cliff.RDI_SUB
    assert p.items == [(2, cliff.CliffReading(95, 1, 0x700))]
    m = ViewerModel(layout={})
    m.apply(p)
    assert m.sensors["cliff"][2].distance_mm == 95
    assert describe(p).startswith("RDI-Sn CLIFF general n=1 2:distance=95mm cliff=1")


def params_file(tmp_path, **board) -> Path:
    """A params file adding the cliff board to the built-in description."""
    desc = copy.deepcopy(cliff.DESCRIPTION)
    desc["boards"]["cliff"].update(board)
    path = tmp_path / "cliff.yaml"
    path.write_text(yaml.safe_dump({"/**/hardware_node": {"ros__parameters": {
        "auto_home": False, "robot": desc}}}), encoding="utf-8")
    return path


def test_hardware_node_refuses_a_wrong_threshold_in_one_line_exit_2(tmp_path):
    assert INSTALLED, "the hardware node process knows the cliff board only when installed"
    out = subprocess.run(["hardware_node", "--ros-args", "--params-file",
                          str(params_file(tmp_path, threshold_mm=5000))],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=60, env=dict(os.environ, RCUTILS_COLORIZED_OUTPUT="0"))
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    assert out.returncode == 2, out.stdout
    assert len(lines) == 1 and "Traceback" not in out.stdout, out.stdout
    assert "board cliff: threshold_mm must be in 10..1000, not 5000" in lines[0], lines


@pytest.mark.ros
@pytest.mark.timeout(240)
def test_ros2_param_set_changes_the_cliff_topic_at_run_time(tmp_path, ros_context):
    """hardware_node (its own process, the cliff known by its entry point):
    ``ros2 param describe`` shows the plugin's parameter, ``ros2 param set``
    moves every distance on ``cliff_00`` at once, a value outside the
    declared range is refused naming it, and the topic keeps the last good one."""
    from test_ros2_launch import require_ros2_tools
    ros2 = require_ros2_tools()
    assert INSTALLED
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Range

    ns = "/cliff_" + uuid.uuid4().hex[:8]
    node_name = f"{ns}/hardware_node"
    got = []
    probe = rclpy.create_node("cliff_probe", namespace=ns, context=ros_context)
    probe.create_subscription(Range, "cliff_00", lambda m: got.append(round(m.range, 4)),
                              qos_profile_sensor_data)
    ex = SingleThreadedExecutor(context=ros_context)
    ex.add_node(probe)
    hw = Child("hardware_node", ["hardware_node", "--ros-args", "-r", f"__ns:={ns}",
                                 "--params-file", str(params_file(tmp_path))],
               tmp_path, PKG)

    def seen(value, what):
        del got[:]
        end = time.monotonic() + 60
        while value not in got:
            assert hw.alive(), hw.text()[-2000:]
            assert time.monotonic() < end, f"no {what} on {ns}/cliff_00 (got {got[-5:]})"
            ex.spin_once(timeout_sec=0.1)

    try:
        seen(0.03, "the floor at 30 mm")
        described = ros2_param(ros2, "describe", node_name, "cliff_offset_mm")
        assert "mm added to every cliff distance" in described, described
        assert "Min value: -100" in described and "Max value: 100" in described, described
        assert "Read only" not in described, described     # changeable at run time
        accepted = ros2_param(ros2, "set", node_name, "cliff_offset_mm", "50")
        assert "Set parameter successful" in accepted, accepted
        seen(0.08, "30 mm + cliff_offset_mm 50")
        refused = ros2_param(ros2, "set", node_name, "cliff_offset_mm", "500")
        # refused by its descriptor's declared range, as the package's own are
        assert "Setting parameter failed" in refused and "Min: -100, Max: 100" in refused, \
            refused
        seen(0.08, "the last accepted offset")
    finally:
        assert hw.stop() == 0, hw.text()[-2000:]
        ex.remove_node(probe)
        probe.destroy_node()
        ex.shutdown()
