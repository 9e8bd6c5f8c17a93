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
"""The battery-monitor plugin (test/plugins/bsal_battery), the third worked
example of docs/EXTENDING.md (issue 52): a kind that gives its device's
/diagnostics level itself, from its state (the pack voltage, its board's
``battery_cells``) and its own run-time parameter
``battery_low_volts_per_cell``. WARN below cells x threshold with the values
in the message, OK again when ``ros2 param set`` moves the threshold; its
board key refused in one line; an RDI frame, the viewer, the C++ tables and
the dissector regenerated with it; and a bridge started with the plugin
installed but no battery board says so once, with the YAML that adds one,
which this test then gives to a hardware node. It is installed by
``make setup`` with every package under test/plugins."""

import copy
import os
from pathlib import Path
import re
import sys
import time
import uuid

import pytest
import yaml

from bsal_ros.core import DeviceState
from bsal_ros.hardware import load_description, Robot
from bsal_ros.hardware.diagnostics import default_params, device_diagnostics, OK, WARN
from bsal_ros.kinds import device_classes, kind, Level, loaded_plugins
from bsal_ros.kinds.board_hint import hint, NODE_KEY
from bsal_ros.nodes.records import NODE_RECORDS
from bsal_ros.protocol import encode_rdi_frame, RdiDecoder
from bsal_ros.protocol.rdi import RdiSensor
from bsal_ros.rdi.state import StreamState
from bsal_ros.viewer.model import describe, ViewerModel
from child_process import Child
from ros2_param_cli import ros2_param

try:
    import bsal_battery as battery
except ImportError:
    sys.path.insert(0, str(Path(__file__).parent / "plugins" / "bsal_battery"))
    import bsal_battery as battery

INSTALLED = loaded_plugins().get("battery") == "bsal_battery"
PKG = Path(__file__).resolve().parents[1]
#: the simulated pack: 4 cells at 3.7 V
PACK_V = 4 * battery.NOMINAL_CELL_MV / 1000.0


def battery_robot(**board):
    """The built-in description with the battery board (its entry updated by
    ``board``; a None value leaves the key out)."""
    desc = copy.deepcopy(battery.DESCRIPTION)
    desc["boards"]["battery"].update(board)
    desc["boards"]["battery"] = {k: v for k, v in desc["boards"]["battery"].items()
                                 if v is not None}
    return load_description(overrides={"robot": desc})["robot"]


def battery_status(robot, params=None):
    """The battery's /diagnostics status (ROS-free) with the node parameters ``params``."""
    return {d.name: d for d in device_diagnostics(robot, robot.clock(), params=params)}["battery 0"]


def test_the_battery_plugin_is_installed_with_its_configuration():
    assert INSTALLED, "make setup installs every plugin package under test/plugins"
    assert "battery" in device_classes() and kind("battery").params is battery.BatteryNodeParams
    default, spec = NODE_RECORDS["hardware_node"].specs()["battery_low_volts_per_cell"]
    assert (default, spec.low, spec.high, spec.dynamic) == (3.3, 2.5, 4.5, True)
    assert default_params()["battery_low_volts_per_cell"] == 3.3


@pytest.mark.parametrize("cells", [4, None])        # None: its declared default, 4
def test_the_kind_warns_below_its_threshold_and_clears_when_the_parameter_moves(cells):
    now = [0.0]
    r = Robot(battery_robot(battery_cells=cells), seed=1, clock=lambda: now[0])
    try:
        r.start(activate=True)
        (vb,) = [b for b in r.bus.attached() if isinstance(b, battery.VirtualBatteryBoard)]
        vb.pack_mv, vb.temperature_dc = 13100, 312
        for _ in range(5):
            now[0] += 0.2
            r.cycle()
        _, (state,) = r.get_states("battery")
        assert state.extra == {"pack_mv": 13100, "temperature_dc": 312, "cells": 4}
        # the declared default threshold, 3.3 V per cell: 13.1 V < 13.2 V
        low = battery_status(r)
        assert low.level == WARN, low
        assert low.message == ("battery low: pack 13.10 V below 4 x 3.30 V = 13.20 V "
                               "(3.275 V per cell)")
        assert {k: low.values[k] for k in ("pack_v", "cell_v", "temperature_c", "cells")} == {
            "pack_v": "13.10", "cell_v": "3.275", "temperature_c": "31.2", "cells": 4}
        # the node's parameters as they are at the update: a lower threshold is OK
        params = {**default_params(), "battery_low_volts_per_cell": 3.2}
        ok = battery_status(r, params)
        assert (ok.level, ok.message) == (OK, "pack 13.10 V, 3.275 V per cell (low below 3.20 V)")
        params["battery_low_volts_per_cell"] = 3.4
        assert battery_status(r, params).level == WARN
        # a device that is off says nothing of its charge
        assert r.activate("battery", [0], [False]).ok
        now[0] += 0.2
        r.cycle()
        off = battery_status(r, params)
        assert (off.level, off.message) == (OK, "off")
    finally:
        r.close()


def test_a_wrong_cell_count_is_refused_when_the_description_is_read():
    with pytest.raises(ValueError, match=r"^board battery: battery_cells must be in 1\.\.16, "
                                         r"not 0$"):
        battery_robot(battery_cells=0)


def test_the_battery_in_an_rdi_frame_and_the_viewer():
    st = StreamState()
    st.update_devices([DeviceState("battery", 0, on=True, statval=0x700, stamp=1.0,
                                   extra={"pack_mv": 14800.0, "temperature_dc": -15.0,
                                          "cells": 4.0})])
    (p,) = RdiDecoder().feed(encode_rdi_frame(st.build_frame()))
    assert isinstance(p, RdiSensor) and p.sub_code == battery.RDI_SUB
    assert p.items == [(0, battery.BatteryReading(14800, -15, 4, 0x700))]
    m = ViewerModel(layout={})
    m.apply(p)
    assert m.sensors["battery"][0].pack_mv == 14800
    assert describe(p).startswith("RDI-Sn BATTERY general n=1 0:pack=14800mV temp=-1.5C cells=4")
    assert kind("battery").viewer_line(0, p.items[0][1]) == "battery 0: 14.80 V -1.5 C"


def test_the_cpp_tables_and_the_dissector_regenerated_with_it(tmp_path):
    from bsal_ros.tools import gen_cpp
    from bsal_ros.wireshark import gen_lua, lua_path
    assert gen_cpp.main(["--out", str(tmp_path)]) == 0
    header = (tmp_path / gen_cpp.PROTOCOLS).read_text(encoding="utf-8")
    assert re.search(r"^#define RCI_SENSOR_BATTERY +0x12$", header, re.M), header
    tables = (tmp_path / gen_cpp.TABLES).read_text(encoding="utf-8")
    # CGtSnRp (0x0213) DATA (4) of sub-code 0x12: guint16 + gint16 + guint8
    assert re.search(r"case 0x\w{4}1204: return 5; +/\* BATTERY BatteryData \*/", tables), tables
    lua = tmp_path / "bsal.lua"
    lua.write_text(lua_path().read_text(encoding="utf-8"), encoding="utf-8")
    assert gen_lua.main(["--lua", str(lua)]) == 0
    text = lua.read_text(encoding="utf-8")
    assert '"BATTERY"' in text and '{"temperature_dc", "h", "int", ""}' in text


# ----------------------------------------------------- through ROS, its own processes
def hint_line(lines) -> list[str]:
    """The start-up lines that name the battery kind as having no board."""
    return [ln for ln in lines if "device kind 'battery'" in ln]


@pytest.mark.ros
@pytest.mark.timeout(240)
def test_a_bridge_with_no_battery_board_says_so_once_with_the_yaml_of_one(tmp_path, ros_context):
    """brak_bringup with the shipped description (no battery board): one INFO
    line naming the kind, its package and the params-file YAML of a board,
    nested as ``--config`` reads it; the same line this process builds."""
    from test_bringup import Bridge
    assert INSTALLED
    bridge = Bridge("--namespace", "/battery_hint_" + uuid.uuid4().hex[:8])   # waits: up
    rc = bridge.stop()
    assert rc == 0, "\n".join(bridge.lines)
    (line,) = hint_line(bridge.lines)
    assert "[INFO]" in line and "package bsal-battery" in line, line
    assert line.endswith(hint(kind("battery"))), line
    given = yaml.safe_load(line[line.index(NODE_KEY):])
    assert given == {NODE_KEY: {"ros__parameters": {"robot": battery.DESCRIPTION}}}, given


def battery_params_file(tmp_path, low: float) -> Path:
    """The YAML of the start-up hint, with the threshold ``low`` added."""
    line = hint(kind("battery"))
    doc = yaml.safe_load(line[line.index(NODE_KEY):])
    doc[NODE_KEY]["ros__parameters"].update(
        {"auto_home": False, "diagnostics_period": 0.5, "battery_low_volts_per_cell": low})
    path = tmp_path / "battery.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


@pytest.mark.ros
@pytest.mark.timeout(240)
def test_ros2_param_set_clears_the_battery_warning(tmp_path, ros_context):
    """hardware_node (its own process, the battery known by its entry point,
    its board from the hint's YAML) with a threshold above the pack: WARN with
    the values; ``ros2 param set`` below it: OK at the next /diagnostics; a
    value outside the declared range is refused and the level stays."""
    from test_ros2_launch import require_ros2_tools
    ros2 = require_ros2_tools()
    assert INSTALLED
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import BatteryState

    ns = "/battery_" + uuid.uuid4().hex[:8]
    node_name = f"{ns}/hardware_node"
    status, volts = [], []
    probe = rclpy.create_node("battery_probe", namespace=ns, context=ros_context)
    probe.create_subscription(
        DiagnosticArray, "/diagnostics",
        lambda m: status.extend((s.level, s.message) for s in m.status
                                if s.name == f"{node_name}: battery 0"), 50)
    probe.create_subscription(BatteryState, "battery_00",
                              lambda m: volts.append(round(m.voltage, 3)), 10)
    ex = SingleThreadedExecutor(context=ros_context)
    ex.add_node(probe)
    hw = Child("hardware_node", ["hardware_node", "--ros-args", "-r", f"__ns:={ns}",
                                 "--params-file", str(battery_params_file(tmp_path, 3.8))],
               tmp_path, PKG, env=dict(os.environ, RCUTILS_COLORIZED_OUTPUT="0"))

    def seen(level: Level, message: str, what: str):
        del status[:]
        end = time.monotonic() + 60
        while (bytes([level]), message) not in status:
            assert hw.alive(), hw.text()[-2000:]
            assert time.monotonic() < end, f"no {what} on /diagnostics (got {status[-3:]})"
            ex.spin_once(timeout_sec=0.1)

    try:
        seen(Level.WARN, f"battery low: pack {PACK_V:.2f} V below 4 x 3.80 V = 15.20 V "
                         f"(3.700 V per cell)", "WARN below 4 x 3.8 V")
        while PACK_V not in volts:      # its topic, in V
            assert hw.alive(), hw.text()[-2000:]
            ex.spin_once(timeout_sec=0.1)
        accepted = ros2_param(ros2, "set", node_name, "battery_low_volts_per_cell", "3.5")
        assert "Set parameter successful" in accepted, accepted
        ok = f"pack {PACK_V:.2f} V, 3.700 V per cell (low below 3.50 V)"
        seen(Level.OK, ok, "OK below the new threshold")
        refused = ros2_param(ros2, "set", node_name, "battery_low_volts_per_cell", "9.0")
        assert "Setting parameter failed" in refused, refused
        seen(Level.OK, ok, "the last accepted threshold")
    finally:
        assert hw.stop() == 0, hw.text()[-2000:]
        ex.remove_node(probe)
        probe.destroy_node()
        ex.shutdown()
    assert hint_line(hw.text().splitlines()) == [], "a battery board was given: no hint"
