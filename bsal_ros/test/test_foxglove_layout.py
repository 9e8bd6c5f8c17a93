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

"""config/brak.foxglove.json, the shipped Foxglove/Lichtblick layout, against the running bridge.

Neither app runs here, so the file is read as they read a layout they import
(the layout file of Foxglove's desktop app and of Lichtblick: ``configById``
holds each panel's settings under ``"<panel type>!<id>"``, ``layout`` arranges
those ids in splits) and compared with what ``brak_bringup``'s Foxglove
gateway advertises to a client of Foxglove's own libraries: every topic a
panel names is a channel of the bridge, of the type the panel reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bsal_ros.paths import share_dir
from foxglove_agent import NodeClient
from test_bringup import Bridge
from test_foxglove_client import foxglove_url, tf_available

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = ROOT / "config" / "brak.foxglove.json"

#: the panel types built into Foxglove's app and Lichtblick, as a layout names them
#: (Lichtblick's panel catalogue, packages/suite-base/src/panels/index.ts; Foxglove's
#: documentation lists the same panels)
PANEL_TYPES = {"3D", "DiagnosticStatusPanel", "DiagnosticSummary", "Image", "Indicator",
               "Gauge", "Teleop", "map", "Parameters", "Plot", "Publish", "CallService",
               "RawMessages", "RosOut", "StateTransitions", "Table", "TopicGraph", "SourceInfo",
               "GlobalVariableSliderPanel", "NodePlayground", "Tab"}
#: what the layout must show (issue 50): panel type -> what it is for
REQUIRED = {"3D": "the robot model, transforms, sonar cones, odometry path",
            "Plot": "drive speed and steering angle", "DiagnosticSummary": "diagnostics",
            "Teleop": "driving on /cmd_vel", "RawMessages": "the RCI session"}
#: the ROS 2 types Lichtblick's 3D panel draws (packages/suite-base/src/panels/
#: ThreeDeeRender/ros.ts, inherited from Foxglove Studio; its URDF layer also reads
#: /robot_description, a std_msgs/String): neither sensor_msgs/Range nor nav_msgs/Odometry
#: is one, hence brak_markers' MarkerArray and Path, which Foxglove's 3D panel draws too
THREE_D_TYPES = {f"{t.split('/')[0]}/msg/{t.split('/')[1]}" for t in (
    "tf2_msgs/TFMessage", "geometry_msgs/TransformStamped", "visualization_msgs/Marker",
    "visualization_msgs/MarkerArray", "nav_msgs/OccupancyGrid", "sensor_msgs/PointCloud2",
    "sensor_msgs/LaserScan", "geometry_msgs/PoseStamped",
    "geometry_msgs/PoseWithCovarianceStamped", "geometry_msgs/PoseArray", "nav_msgs/Path",
    "sensor_msgs/CameraInfo", "sensor_msgs/Image", "sensor_msgs/CompressedImage",
    "geometry_msgs/PolygonStamped", "sensor_msgs/JointState")}
#: the 3D panel's topics: the model, the sonar cones and the odometry path (brak_markers)
THREE_D = {"/robot_description": "std_msgs/msg/String",
           "/sonar_cones": "visualization_msgs/msg/MarkerArray",
           "/odom_path": "nav_msgs/msg/Path"}
#: the hardware node's cmd_vel timeout (s) and top speed (m/s: 2.047 rad/s x 0.1 m)
CMD_VEL_TIMEOUT_S = 0.5
MAX_SPEED = 0.2047


@pytest.fixture(scope="module")
def layout():
    return json.loads(LAYOUT.read_text(encoding="utf-8"))


def panels(layout) -> dict[str, list[dict]]:
    """panel type -> the settings of each panel of that type."""
    out: dict[str, list[dict]] = {}
    for key, config in layout["configById"].items():
        out.setdefault(key.split("!", 1)[0], []).append(config)
    return out


def leaves(node) -> list[str]:
    """The panel ids a ``layout`` tree arranges."""
    if isinstance(node, str):
        return [node]
    return leaves(node["first"]) + leaves(node["second"])


def topic_of(path: str) -> str:
    """The topic of a message path (``/joint_states.velocity[1]`` -> ``/joint_states``)."""
    return path.split(".", 1)[0]


def named_topics(layout) -> dict[str, str]:
    """Every topic a panel names -> the panel type naming it."""
    out = {}
    for kind, configs in panels(layout).items():
        for c in configs:
            names = {"3D": lambda c: list(c.get("topics", {})),
                     "Plot": lambda c: [topic_of(p["value"]) for p in c["paths"]],
                     "DiagnosticSummary": lambda c: [c["topicToRender"]],
                     "Teleop": lambda c: [c["topic"]],
                     "RawMessages": lambda c: [topic_of(c["topicPath"])]}[kind](c)
            out.update({n: kind for n in names})
    return out


# ------------------------------------------------------------------ the file
def test_the_layout_is_shipped_with_the_package():
    shipped = share_dir() / "config" / LAYOUT.name
    assert shipped.is_file(), f"{shipped}: not installed (setup.py data_files)"
    assert shipped.read_bytes() == LAYOUT.read_bytes()


def test_the_layout_arranges_exactly_its_panels_of_documented_types(layout):
    assert set(layout) >= {"configById", "layout", "globalVariables", "userNodes",
                           "playbackConfig"}
    ids = leaves(layout["layout"])
    assert sorted(ids) == sorted(layout["configById"]), "panels arranged != panels configured"
    kinds = set(panels(layout))
    assert kinds <= PANEL_TYPES, kinds - PANEL_TYPES
    assert set(REQUIRED) <= kinds, set(REQUIRED) - kinds


def test_the_panels_show_what_issue_50_asks(layout):
    p = panels(layout)
    three_d = p["3D"][0]["topics"]
    assert set(three_d) == set(THREE_D)
    assert set(THREE_D.values()) - {"std_msgs/msg/String"} <= THREE_D_TYPES
    assert all(three_d[t]["visible"] for t in three_d)
    assert p["3D"][0]["followTf"] == "base_link"
    assert p["DiagnosticSummary"][0]["topicToRender"] == "/diagnostics"
    assert p["RawMessages"][0]["topicPath"] == "/rci/session"
    plotted = {path["value"] for plot in p["Plot"] for path in plot["paths"]}
    assert plotted == {"/joint_states.velocity[1]", "/joint_states.position[0]"}
    teleop = p["Teleop"][0]
    assert teleop["topic"] == "/cmd_vel"
    # two messages or more within the hardware node's cmd_vel timeout: the drive never
    # stops between them while a button is held
    assert teleop["publishRate"] * CMD_VEL_TIMEOUT_S >= 2, teleop
    for button in ("upButton", "downButton", "leftButton", "rightButton"):
        field, value = teleop[button]["field"], teleop[button]["value"]
        assert field in ("linear-x", "angular-z"), teleop[button]
        assert field != "linear-x" or abs(value) <= MAX_SPEED, teleop[button]


# -------------------------------------------------------- against the bridge
@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_every_topic_the_layout_names_is_advertised_by_the_running_bridge(layout):
    bridge = Bridge()
    try:
        with NodeClient() as fg:
            fg.connect(foxglove_url(bridge))
            named = named_topics(layout)
            wanted = set(named) | ({"/tf", "/tf_static"} if tf_available() else set())
            fg.wait("advertise", lambda e: wanted <= set(fg.channels()), timeout=30)
            channels = fg.channels()
            # the types the panels read
            types = {t: channels[t]["schemaName"] for t in wanted}
            assert types["/robot_description"] == "std_msgs/msg/String"
            assert types["/diagnostics"] == "diagnostic_msgs/msg/DiagnosticArray"
            assert types["/cmd_vel"] == "geometry_msgs/msg/Twist"       # Teleop's type
            assert types["/joint_states"] == "sensor_msgs/msg/JointState"
            assert {t: types[t] for t in THREE_D} == THREE_D
            # what the 3D panel gets on them, decoded by Foxglove's own libraries: a cone
            # per sonar that heard an echo, in its own frame; the path in the odometry's
            fg.send("subscribe", topics=["/sonar_cones", "/odom_path"])
            cones = fg.wait("message", lambda e: e["topic"] == "/sonar_cones" and any(
                m["action"] == 0 for m in e["value"]["markers"]), timeout=30)["value"]
            drawn = [m for m in cones["markers"] if m["action"] == 0]
            for m in drawn:
                assert (m["ns"], m["type"]) == ("sonar", 11)      # TRIANGLE_LIST
                assert m["header"]["frame_id"] == f"sonar_{m['id']:02d}_link"
                assert len(m["points"]) == 3 * 8
            path = fg.wait("message", lambda e: e["topic"] == "/odom_path"
                           and e["value"]["poses"], timeout=30)["value"]
            assert path["header"]["frame_id"] == "odom"
            assert path["poses"][-1]["header"]["frame_id"] == "odom"
            # the plotted indices are the joints the plots' titles name
            fg.send("subscribe", topics=["/joint_states"])
            joints = fg.wait("message", lambda e: e["topic"] == "/joint_states")["value"]
            assert joints["name"][:2] == ["steering_joint", "drive_wheel_joint"]
    finally:
        assert bridge.stop() == 0, bridge.recent()
    plot_titles = {path["value"]: path["label"] for plot in panels(layout)["Plot"]
                   for path in plot["paths"]}
    assert plot_titles["/joint_states.position[0]"].startswith("steering_joint")
    assert plot_titles["/joint_states.velocity[1]"].startswith("drive_wheel_joint")
