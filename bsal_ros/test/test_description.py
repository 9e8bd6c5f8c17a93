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

"""Brak's URDF: generated from config/brak.yaml, and agreeing with what the node publishes.

One source of truth: config/brak.urdf is the output of
``python -m bsal_ros.description`` for config/brak.yaml (byte for byte), the
sonar joints carry the configured poses, and every frame_id and joint name
the hardware node publishes (read from the running node,
test/hardware_node_capture.py) is a link or joint of the URDF.
"""
import ast
import copy
import math
from pathlib import Path
import xml.etree.ElementTree as ET

import pytest

from bsal_ros.description import build_urdf, frames_of
from bsal_ros.description.__main__ import main as description_main
from bsal_ros.hardware.description import load_description
from hardware_node_capture import capture

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "brak.yaml"
URDF = ROOT / "config" / "brak.urdf"


@pytest.fixture(scope="module")
def desc():
    return load_description(str(CONFIG))


@pytest.fixture(scope="module")
def robot():
    return ET.parse(URDF).getroot()


def floats(text):
    return [float(v) for v in text.split()]


def links(root):
    return {e.get("name") for e in root.findall("link")}


def joints(root):
    return {e.get("name"): e for e in root.findall("joint")}


def joint_to(root, child):
    return next(j for j in root.findall("joint") if j.find("child").get("link") == child)


# ---- one source of truth -------------------------------------------------------

def test_committed_urdf_is_the_generator_output():
    assert URDF.read_text(encoding="utf-8") == build_urdf(load_description(str(CONFIG))), \
        "config/brak.urdf is stale: python -m bsal_ros.description > config/brak.urdf"


def test_command_line_checks_and_writes(tmp_path, capsys):
    assert description_main(["--config", str(CONFIG), "--check", str(URDF)]) == 0
    stale = tmp_path / "stale.urdf"
    stale.write_text(URDF.read_text(encoding="utf-8").replace("0.53", "0.54"), encoding="utf-8")
    assert description_main(["--config", str(CONFIG), "--check", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    out = tmp_path / "out.urdf"
    assert description_main(["--config", str(CONFIG), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == URDF.read_text(encoding="utf-8")


def test_generator_follows_the_description(desc):
    """Not a copy of the file: change the robot and the URDF changes with it."""
    d = copy.deepcopy(desc)
    d["robot"]["geometry"]["wheelbase"] = 0.8
    d["robot"]["devices"]["ultrasonic"]["sonar_03"]["pose"] = [0.1, 0.2, 0.3]
    d["robot"]["devices"]["ultrasonic"]["sonar_04"]["frame"] = "left_sonar"
    root = ET.fromstring(build_urdf(d))
    assert floats(joints(root)["steering_joint"].find("origin").get("xyz")) == [0.8, 0, 0]
    assert floats(joint_to(root, "sonar_03_link").find("origin").get("xyz")) == [0.1, 0.2, 0]
    assert "left_sonar" in links(root) and "sonar_04_link" not in links(root)


def test_urdf_of_a_params_file_is_what_the_launch_file_gives_robot_state_publisher(tmp_path):
    """bsal_ros.description.config.urdf_of (used by launch/brak.launch.py): the shipped
    config gives the committed URDF's links and joints; a moved sonar moves its joint, and
    robot_description_file is merged first, as the hardware node does."""
    import yaml

    from bsal_ros.description.config import urdf_of
    shipped = ET.fromstring(urdf_of(CONFIG))
    assert ET.tostring(shipped) == ET.tostring(ET.fromstring(URDF.read_text(encoding="utf-8")))
    data = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    params = data["/**/hardware_node"]["ros__parameters"]
    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump({"hardware_node": {"ros__parameters": {"robot": {
        "geometry": {"wheelbase": 0.7}}}}}), encoding="utf-8")
    robot = params["robot"]
    del robot["geometry"]  # from robot_description_file now
    robot["devices"]["ultrasonic"]["sonar_03"]["pose"] = [0.1, 0.2, 0.3]
    params["robot_description_file"] = str(base)
    custom = tmp_path / "custom.yaml"
    custom.write_text(yaml.safe_dump(data), encoding="utf-8")
    root = ET.fromstring(urdf_of(custom))
    assert floats(joint_to(root, "sonar_03_link").find("origin").get("xyz")) == [0.1, 0.2, 0]
    assert floats(joint_to(root, "steering_link").find("origin").get("xyz")) == [0.7, 0, 0]


def test_generator_imports_no_ros():
    allowed = {"__future__", "argparse", "ast", "dataclasses", "math", "pathlib", "re", "sys",
               "typing", "xml", "yaml", "bsal_ros"}
    for f in (ROOT / "bsal_ros" / "description").glob("*.py"):
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Import):
                mods = {a.name.split(".")[0] for a in n.names}
            elif isinstance(n, ast.ImportFrom) and n.level == 0:
                mods = {n.module.split(".")[0]}
                if n.module.startswith("bsal_ros"):
                    assert n.module.startswith(("bsal_ros.hardware", "bsal_ros.description",
                                                "bsal_ros.core")), n.module
            else:
                continue
            assert mods <= allowed, (f.name, mods - allowed)


# ---- a well-formed tree -----------------------------------------------------------

def test_urdf_is_a_well_formed_tree_rooted_at_base_link(robot, desc):
    assert robot.tag == "robot" and robot.get("name") == desc["robot"]["name"]
    names = [e.get("name") for e in robot.findall("link")]
    assert len(names) == len(set(names))
    jnames = [e.get("name") for e in robot.findall("joint")]
    assert len(jnames) == len(set(jnames))
    children = [j.find("child").get("link") for j in robot.findall("joint")]
    assert len(children) == len(set(children)), "a link with two parents"
    for j in robot.findall("joint"):
        assert j.find("parent").get("link") in names and j.find("child").get("link") in names
        assert j.get("type") in ("fixed", "revolute", "continuous")
        assert len(floats(j.find("origin").get("xyz"))) == 3
        assert len(floats(j.find("origin").get("rpy"))) == 3
    roots = set(names) - set(children)
    assert roots == {desc["hardware_node"]["base_frame"]} == {"base_link"}
    materials = {m.get("name") for m in robot.findall("material")}
    for m in robot.iter("material"):
        assert m.get("name") in materials


def test_base_link_is_the_middle_of_the_rear_axle(robot, desc):
    geo = desc["robot"]["geometry"]
    left = floats(joint_to(robot, "rear_left_wheel_link").find("origin").get("xyz"))
    right = floats(joint_to(robot, "rear_right_wheel_link").find("origin").get("xyz"))
    assert left[0] == right[0] == 0.0
    assert left[1] == pytest.approx(
        geo["rear_track"] / 2) and right[1] == pytest.approx(-geo["rear_track"] / 2)


def test_steering_and_drive_wheel_joints(robot, desc):
    geo = desc["robot"]["geometry"]
    j = joints(robot)
    steer = j["steering_joint"]
    assert steer.get("type") == "revolute" and steer.find("parent").get("link") == "base_link"
    assert floats(steer.find("origin").get("xyz")) == pytest.approx([geo["wheelbase"], 0, 0])
    assert floats(steer.find("axis").get("xyz")) == [0, 0, 1]
    lim = steer.find("limit")
    assert float(lim.get("lower")) == -geo["steering_limit"]
    assert float(lim.get("upper")) == geo["steering_limit"]
    drive = j["drive_wheel_joint"]
    assert drive.get("type") == "continuous"
    assert drive.find("parent").get("link") == steer.find("child").get("link")
    assert floats(drive.find("axis").get("xyz")) == [0, 1, 0]
    assert floats(drive.find("origin").get("xyz")) == [0, 0, 0]
    wheel = robot.find(f"link[@name='{drive.find('child').get('link')}']")
    radius = float(wheel.find("visual/geometry/cylinder").get("radius"))
    assert radius == geo["wheel_radius"]


def test_sonar_links_sit_at_the_configured_poses(robot, desc):
    sonars = desc["robot"]["devices"]["ultrasonic"]
    assert len(sonars) == 12
    frames = frames_of(desc)
    for name, entry in sonars.items():
        link = frames.sonars[entry["id"]]
        j = joint_to(robot, link)
        assert j.get("type") == "fixed" and j.find("parent").get("link") == "base_link"
        x, y, yaw = entry["pose"]
        assert floats(j.find("origin").get("xyz")) == [x, y, 0.0], name
        assert floats(j.find("origin").get("rpy")) == [0.0, 0.0, yaw], name


def test_accelerometer_link(robot, desc):
    acc = frames_of(desc).accelerometers()
    assert acc == ["accelerometer_link"]
    assert joint_to(robot, acc[0]).get("type") == "fixed"


# ---- what the running node publishes ---------------------------------------------

@pytest.fixture(scope="module")
def published():
    return capture()


def prefix(desc):
    return desc["hardware_node"]["frame_prefix"]


@pytest.mark.ros
def test_every_range_frame_id_is_a_sonar_link_at_its_pose(robot, desc, published):
    assert len(published.range_frames) == 12
    by_frame = {}
    for entry in desc["robot"]["devices"]["ultrasonic"].values():
        by_frame[frames_of(desc).sonars[entry["id"]]] = entry["pose"]
    for topic, frame in published.range_frames.items():
        link = frame.removeprefix(prefix(desc))
        assert link in links(robot), f"{topic}: frame {frame} is not in the URDF"
        x, y, yaw = by_frame[link]
        assert floats(joint_to(robot, link).find("origin").get("xyz")) == [x, y, 0.0]
        assert floats(joint_to(robot, link).find("origin").get("rpy")) == [0.0, 0.0, yaw]


@pytest.mark.ros
def test_every_joint_state_name_is_a_movable_joint(robot, published):
    assert published.joint_names == {"steering_joint", "drive_wheel_joint"}
    movable = {n for n, j in joints(robot).items() if j.get("type") != "fixed"}
    assert published.joint_names == movable, \
        "robot_state_publisher needs a JointState for every movable joint, and nothing else"
    # robot_state_publisher subscribes the relative joint_states
    assert published.publishers["/joint_states"][0] == ("sensor_msgs/msg/JointState",)


@pytest.mark.ros
def test_every_other_frame_id_the_node_publishes_is_in_the_urdf(robot, desc, published):
    names = links(robot)
    frames = set(published.device_frames.values()) | published.imu_frames
    frames.add(published.odom_frames[1])
    assert published.odom_frames[0] == desc["hardware_node"]["odom_frame"]
    assert published.odom_frames[1] == prefix(desc) + desc["hardware_node"]["base_frame"]
    for frame in sorted(frames):
        assert frame.removeprefix(prefix(desc)) in names, frame
    assert published.imu_frames == {"accelerometer_link"}


def test_rear_wheel_and_sonar_numbers_are_finite(robot):
    for e in robot.iter("origin"):
        assert all(math.isfinite(v) for v in floats(e.get("xyz")) + floats(e.get("rpy")))
