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

"""config/brak.rviz and config/diagnostics_analyzers.yaml against what the nodes publish.

rviz2 and diagnostic_aggregator are not installable here, so the files are
parsed (PyYAML) and compared with the topics, QoS and DiagnosticStatus names
of the hardware node and brak_markers started in-process
(test/hardware_node_capture.py).
"""
from pathlib import Path
import re

import pytest
import yaml

from hardware_node_capture import capture

ROOT = Path(__file__).resolve().parents[1]
RVIZ = ROOT / "config" / "brak.rviz"
ANALYZERS = ROOT / "config" / "diagnostics_analyzers.yaml"

# Published by other nodes of the launch file, not by ours.
ROBOT_STATE_PUBLISHER_TOPICS = {"/robot_description"}
RVIZ_QOS = {"Best Effort": "BEST_EFFORT", "Reliable": "RELIABLE"}
#: displays off by default: brak_markers' cones, which the Range displays draw already
OFF = {"rviz_default_plugins/MarkerArray"}


@pytest.fixture(scope="module")
def published():
    return capture()


@pytest.fixture(scope="module")
def rviz():
    return yaml.safe_load(RVIZ.read_text(encoding="utf-8"))


def displays(tree):
    """Every display, groups flattened."""
    for d in tree:
        if d.get("Class") == "rviz_common/Group":
            yield from displays(d.get("Displays") or [])
        else:
            yield d


def topic_properties(node, path=()):
    """(path, property dict) of every topic-like property (a dict with Value and a QoS)."""
    if isinstance(node, dict):
        if "Value" in node and "Reliability Policy" in node:
            yield path, node
        for k, v in node.items():
            yield from topic_properties(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from topic_properties(v, path + (i,))


def absolute(name):
    """rviz resolves a relative name in its own namespace; the launch file's default is /."""
    return name if name.startswith("/") else "/" + name


@pytest.mark.ros
def test_rviz_config_parses_and_fixes_the_odom_frame(rviz, published):
    vm = rviz["Visualization Manager"]
    assert vm["Global Options"]["Fixed Frame"] == published.odom_frames[0] == "odom"


@pytest.mark.ros
def test_rviz_shows_robot_model_tf_odometry_and_every_sonar(rviz, published):
    ds = list(displays(rviz["Visualization Manager"]["Displays"]))
    classes = [d["Class"] for d in ds]
    for cls in ("rviz_default_plugins/RobotModel", "rviz_default_plugins/TF",
                "rviz_default_plugins/Odometry", "rviz_default_plugins/Grid",
                "rviz_default_plugins/Path", "rviz_default_plugins/MarkerArray"):
        assert classes.count(cls) == 1, cls
    ranges = {absolute(d["Topic"]["Value"]) for d in ds
              if d["Class"] == "rviz_default_plugins/Range"}
    assert ranges == set(published.range_frames), "one Range display per sonar topic"
    assert len(ranges) == 12
    assert all(d.get("Enabled", True) == (d["Class"] not in OFF) for d in ds)
    model = next(d for d in ds if d["Class"] == "rviz_default_plugins/RobotModel")
    assert model["Description Source"] == "Topic"
    # robot_state_publisher latches robot_description: a volatile display never gets it
    assert model["Description Topic"]["Durability Policy"] == "Transient Local"
    odom = next(d for d in ds if d["Class"] == "rviz_default_plugins/Odometry")
    assert absolute(odom["Topic"]["Value"]) == "/odom"
    # brak_markers' topics: the trail of the odometry, the cones as Foxglove draws them
    path = next(d for d in ds if d["Class"] == "rviz_default_plugins/Path")
    assert absolute(path["Topic"]["Value"]) == "/odom_path"
    cones = next(d for d in ds if d["Class"] == "rviz_default_plugins/MarkerArray")
    assert absolute(cones["Topic"]["Value"]) == "/sonar_cones"
    assert cones["Namespaces"] == {"sonar": True}


@pytest.mark.ros
def test_rviz_names_only_topics_the_nodes_publish_with_matching_types_and_qos(rviz, published):
    vm = rviz["Visualization Manager"]
    wanted_type = {"rviz_default_plugins/Range": "sensor_msgs/msg/Range",
                   "rviz_default_plugins/Odometry": "nav_msgs/msg/Odometry",
                   "rviz_default_plugins/Path": "nav_msgs/msg/Path",
                   "rviz_default_plugins/MarkerArray": "visualization_msgs/msg/MarkerArray"}
    seen = 0
    for d in displays(vm["Displays"]):
        for _path, prop in topic_properties(d):
            topic = absolute(prop["Value"])
            if topic in ROBOT_STATE_PUBLISHER_TOPICS:
                continue
            assert topic in published.publishers, f'{d["Name"]}: nobody publishes {topic}'
            types, reliability = published.publishers[topic]
            if d["Class"] in wanted_type:
                assert wanted_type[d["Class"]] in types, topic
            # a reliable subscription does not match a best-effort publisher
            if prop["Reliability Policy"] == "Reliable":
                assert reliability == "RELIABLE", f"{topic}: the node publishes {reliability}"
            # nor a transient-local one a volatile publisher
            if prop.get("Durability Policy") == "Transient Local":
                assert published.durability[topic] == "TRANSIENT_LOCAL", topic
            seen += 1
    assert seen == 15  # 12 sonars, odometry, its path, the cones


@pytest.mark.ros
def test_rviz_tools_publish_only_where_the_node_listens(rviz, published):
    tools = rviz["Visualization Manager"]["Tools"]
    for _path, prop in topic_properties(tools):
        topic = absolute(prop["Value"])
        assert topic in published.subscriptions, f"the hardware node does not subscribe {topic}"
    pose_tool = [t for t in tools if t["Class"] == "rviz_default_plugins/SetInitialPose"]
    assert len(pose_tool) == 1  # "2D Pose Estimate" sets the node's pose estimate
    assert published.subscriptions[absolute(pose_tool[0]["Topic"]["Value"])] == (
        "geometry_msgs/msg/PoseWithCovarianceStamped",)


# ---- diagnostic_aggregator --------------------------------------------------

GROUPS = {"sonars": "Sonars", "motors": "Motors", "encoders": "Encoders",
          "accelerometer": "Accelerometer", "bus": "Bus"}


@pytest.fixture(scope="module")
def analyzers():
    doc = yaml.safe_load(ANALYZERS.read_text(encoding="utf-8"))
    assert list(doc) == ["/**"], "applies to the aggregator whatever its node name"
    params = doc["/**"]["ros__parameters"]
    return params


def matches(analyzer, name):
    """diagnostic_aggregator's GenericAnalyzer matching rules.

    (name, startswith, contains, regex)
    """
    def lst(key):
        v = analyzer.get(key, [])
        return [v] if isinstance(v, str) else list(v)
    return (name in lst("name") or name in lst("expected")
            or any(name.startswith(s) for s in lst("startswith"))
            or any(s in name for s in lst("contains"))
            or any(re.search(r, name) for r in lst("regex")))


def test_analyzers_parse_one_generic_tree_per_device_group(analyzers):
    groups = {k: v for k, v in analyzers.items() if isinstance(v, dict)}
    assert {k: v["path"] for k, v in groups.items()} == GROUPS
    for k, v in groups.items():
        assert v["type"] == "diagnostic_aggregator/GenericAnalyzer", k
        assert set(v) <= {"type", "path", "startswith", "contains", "name", "expected", "regex",
                          "remove_prefix", "find_and_remove_prefix", "timeout", "num_items",
                          "discard_stale"}, k
    assert analyzers["path"] == "Brak"


@pytest.mark.ros
def test_every_status_of_the_node_lands_in_exactly_one_tree(analyzers, published):
    groups = {k: v for k, v in analyzers.items() if isinstance(v, dict)}
    names = published.diagnostic_names
    by_group = {k: set() for k in groups}
    for name in names:
        hits = [k for k, a in groups.items() if matches(a, name)]
        assert len(hits) == 1, f'{name!r} matched by {hits} (0: it would land in "Other")'
        by_group[hits[0]].add(name)
    assert len(by_group["sonars"]) == 12
    assert len(by_group["motors"]) == 2 and len(by_group["encoders"]) == 2
    assert len(by_group["accelerometer"]) == 1
    # The bus tree holds one bus-wide status, "<node>: bus". The node does not
    # publish it yet (bus faults show per device: errno, poll_failures), so
    # the tree may be empty; nothing else may land there.
    assert by_group["bus"] <= {f"{published.node_name}: bus"}
    assert matches(groups["bus"], f"{published.node_name}: bus")


@pytest.mark.ros
def test_analyzers_match_namespaced_robots_too(analyzers, published):
    groups = {k: v for k, v in analyzers.items() if isinstance(v, dict)}
    for name in published.diagnostic_names:
        ns_name = "/brak2" + name  # "/brak2/hardware_node: ultrasonic 3"
        assert sum(matches(a, ns_name) for a in groups.values()) == 1, ns_name


@pytest.mark.ros
def test_the_node_publishes_diagnostics_where_the_aggregator_listens(published):
    # diagnostic_aggregator subscribes the absolute /diagnostics
    assert published.publishers["/diagnostics"][0] == ("diagnostic_msgs/msg/DiagnosticArray",)
