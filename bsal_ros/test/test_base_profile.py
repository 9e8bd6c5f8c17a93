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

"""Base profiles: one declaration per robot, checked against the description and the graph."""

from pathlib import Path

import pytest
import yaml

from bsal_ros.hardware import load_description, Robot
from bsal_ros.hardware.base_profile import (check_profile, graph_conflicts, LASER_SCAN,
                                            load_profile, ProfileError, RANGE, TWIST,
                                            TWIST_STAMPED, VIRTUAL)

CONFIG = Path(__file__).resolve().parents[1] / "config"
SHIPPED = sorted(CONFIG.glob("base_*.yaml"))


@pytest.fixture(scope="module")
def description():
    return load_description()["robot"]


def double_profile():
    return yaml.safe_load((CONFIG / "base_twist_range.yaml").read_text())


def test_the_three_profiles_are_shipped_and_map_every_device(description):
    assert [p.name for p in SHIPPED] == ["base_tricycle.yaml", "base_twist_lidar.yaml",
                                         "base_twist_range.yaml"]
    described = {n for devs in description["devices"].values() for n in devs}
    for path in SHIPPED:
        profile = load_profile(path, description)
        assert set(profile.mappings) == described, path
        assert profile.name == path.stem.removeprefix("base_")
    tricycle = load_profile(CONFIG / "base_tricycle.yaml", description)
    assert tricycle.command().type == TWIST_STAMPED
    assert tricycle.mappings["sonar_07"].type == LASER_SCAN
    double = load_profile(CONFIG / "base_twist_range.yaml", description)
    assert double.command().type == TWIST and double.command().topic == "/base/cmd_vel"
    assert double.mappings["sonar_11"].type == RANGE
    assert double.mappings["sonar_11"].topic == "/base/sonar_11"
    assert double.mappings["steering_encoder"].type == VIRTUAL
    assert double.of_device("ultrasonic", 4).device == "sonar_04"
    assert len(double.inputs()) == 14          # 12 sonars, odometry, imu


@pytest.mark.parametrize("edit,message", [
    (lambda p: p.update(robot="brak"), "top level: unknown key 'robot'"),
    (lambda p: p["devices"]["sonar_03"].update(topc="x"),
     "devices.sonar_03: unknown key 'topc' (did you mean 'topic'?)"),
    (lambda p: p["devices"].pop("sonar_05"), "devices: device sonar_05 is not mapped"),
    (lambda p: p["devices"].update(sonar_12={"topic": "s", "type": RANGE}),
     "devices.sonar_12: no such device in the robot description"),
    (lambda p: p["devices"]["accelerometer"].update(type=RANGE),
     "devices.accelerometer: type 'sensor_msgs/msg/Range' cannot serve a accelerometer"),
    (lambda p: p["devices"]["steering_motor"].update(topic="other"),
     "drive and steering motors must share one velocity command topic"),
    (lambda p: p["devices"]["drive_encoder"].update(timeout=0), "timeout must be > 0"),
    (lambda p: p["devices"]["drive_encoder"].update(type="sensor_msgs/msg/JointState"),
     "sensor_msgs/msg/JointState needs joint"),
    (lambda p: p["devices"]["sonar_00"].pop("topic"), "devices.sonar_00: needs a topic"),
    (lambda p: p["devices"]["steering_encoder"].update(topic="x"),
     "devices.steering_encoder: unknown key 'topic'"),
])
def test_a_wrong_profile_is_one_line_naming_the_fault(description, edit, message):
    data = double_profile()
    edit(data)
    with pytest.raises(ProfileError) as ei:
        check_profile(data, description, "my_base.yaml")
    text = str(ei.value)
    assert message in text and text.startswith("base profile my_base.yaml: ")
    assert "\n" not in text
    assert isinstance(ei.value, ValueError)    # the nodes refuse a ValueError: exit 2


def test_a_file_that_cannot_be_read_or_parsed_is_named(tmp_path, description):
    with pytest.raises(ProfileError, match="cannot read it"):
        load_profile(tmp_path / "none.yaml", description)
    bad = tmp_path / "bad.yaml"
    bad.write_text("devices: [\n")
    with pytest.raises(ProfileError, match=r"bad.yaml: not YAML \(line"):
        load_profile(bad, description)


def test_graph_types_against_the_profile(description):
    data = double_profile()
    data["devices"]["accelerometer"]["topic"] = "imu"      # relative: in the node's namespace
    profile = check_profile(data, description, "double.yaml")
    graph = [("/base/sonar_03", [RANGE]), ("/base/odom", ["nav_msgs/msg/Odometry"]),
             ("/base/cmd_vel", [TWIST]), ("/brak/imu", ["sensor_msgs/msg/Imu"])]
    assert graph_conflicts(profile, graph, "/brak") == []
    # a topic not on the graph yet is no conflict: it is waited for
    assert graph_conflicts(profile, [], "/") == []
    wrong = graph[:3] + [("/brak/imu", ["sensor_msgs/msg/MagneticField"])]
    assert graph_conflicts(profile, wrong, "/brak") == [
        "base profile double.yaml: topic /brak/imu carries sensor_msgs/msg/MagneticField, "
        "the profile says sensor_msgs/msg/Imu"]
    stamped = [("/base/cmd_vel", [TWIST_STAMPED])]
    assert "topic /base/cmd_vel carries geometry_msgs/msg/TwistStamped" in \
        graph_conflicts(profile, stamped, "/")[0]


def test_the_ros_base_backend_needs_a_profile(description):
    with pytest.raises(ProfileError, match="ros_base needs base_profile"):
        Robot(description, backend="ros_base")
    with pytest.raises(ProfileError, match="cannot read it"):
        Robot(description, backend="ros_base", base_profile="/nonexistent/base.yaml")
