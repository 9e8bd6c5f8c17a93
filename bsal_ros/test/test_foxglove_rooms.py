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

"""The Foxglove gateway's ROS-free parts (bsal_ros/foxglove): the ros2msg schemas
read from the installed interface files, the access rules and TLS refusal, which
topics are the robot's, the assets a client may fetch; and the URDF joint
transforms brak_bringup's state publisher sends (bsal_ros/description/joints.py).

The schemas are checked against the installed ``.msg`` files themselves (each
dependency's text appears once, behind rosbag2's separator), and parsed by
Foxglove's own parser (``@foxglove/rosmsg``, from npm) where Node.js and the
package are installed, which is what a Foxglove client does with them.
"""

import json
import math
import os
from pathlib import Path
import shutil
import subprocess

import pytest

from bsal_ros.description.joints import joints_of, quaternion_from_rpy, rotate
from bsal_ros.foxglove.access import absolute, Access, name_list
from bsal_ros.foxglove.assets import asset_path, AssetRefused, read_asset
from bsal_ros.foxglove.definitions import (DefinitionNotFound, dependencies,
                                           MessageDefinitions, SEPARATOR, split_type)
from bsal_ros.foxglove.topics import changes, TopicFilter, Watchers

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web" / "node_modules"


def ament_share(package: str) -> Path:
    """An installed package's share folder, from ament's index (as the nodes find it)."""
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory(package))


# ------------------------------------------------------------------ definitions
def test_a_type_name_splits_into_package_folder_and_name():
    assert split_type("sensor_msgs/msg/Range") == ("sensor_msgs", "msg", "Range")
    assert split_type("std_msgs/Header") == ("std_msgs", "msg", "Header")
    assert split_type("bsal_interfaces/srv/SetMotors") == ("bsal_interfaces", "srv", "SetMotors")
    for bad in ("Range", "a/b/c/d", "sensor_msgs/msg/", "9pkg/Type"):
        with pytest.raises(ValueError):
            split_type(bad)


def test_dependencies_are_the_non_primitive_field_types_once_each():
    text = ("# a comment naming geometry_msgs/Point\n"
            "uint8 OK=0\n"
            "std_msgs/Header header\n"
            "Vector3[] points   # relative: this package\n"
            "string<=8 label\n"
            "builtin_interfaces/Time[<=3] stamps\n"
            "std_msgs/Header again\n"
            "wstring w\n")
    assert dependencies(text, "geometry_msgs") == [
        "std_msgs/Header", "geometry_msgs/Vector3", "builtin_interfaces/Time"]


def test_a_schema_holds_each_dependency_once_behind_the_separator():
    defs = MessageDefinitions(ament_share)
    text = defs.full_text("nav_msgs/msg/Odometry")
    own = (ament_share("nav_msgs") / "msg" / "Odometry.msg").read_text()
    assert text.startswith(own)
    blocks = text.split("\n" + SEPARATOR + "\n")[1:]
    names = [b.split("\n", 1)[0] for b in blocks]
    assert all(n.startswith("MSG: ") for n in names)
    names = [n[5:] for n in names]
    assert len(names) == len(set(names))
    for must in ("std_msgs/Header", "builtin_interfaces/Time", "geometry_msgs/PoseWithCovariance",
                 "geometry_msgs/Pose", "geometry_msgs/Point", "geometry_msgs/Quaternion",
                 "geometry_msgs/TwistWithCovariance", "geometry_msgs/Twist",
                 "geometry_msgs/Vector3"):
        assert must in names
    for block in blocks:       # each block is its package's own file, unchanged
        name, body = block.split("\n", 1)
        package, _, kind = split_type(name[5:])
        assert body == (ament_share(package) / "msg" / f"{kind}.msg").read_text()


def test_a_service_schema_is_each_half_of_its_srv_file():
    defs = MessageDefinitions(ament_share)
    request, response = defs.service_parts("bsal_interfaces/srv/SetMotors")
    srv = (ament_share("bsal_interfaces") / "srv" / "SetMotors.srv").read_text()
    assert srv.startswith(request) and srv.endswith(response)
    full = defs.full_text("bsal_interfaces/srv/SetMotors_Response")
    assert full.startswith(response) and "MSG: bsal_interfaces/Result" in full


def test_a_missing_definition_is_named():
    from bsal_ros.nodes.ros_types import message_definitions    # the nodes' own
    defs = message_definitions()
    with pytest.raises(DefinitionNotFound, match="no_such_msgs"):
        defs.full_text("no_such_msgs/msg/Thing")
    with pytest.raises(DefinitionNotFound, match="Nothing.msg"):
        defs.full_text("std_msgs/msg/Nothing")
    with pytest.raises(DefinitionNotFound, match="_Request or _Response"):
        defs.full_text("bsal_interfaces/srv/SetMotors_Other")


def test_a_file_is_read_once(tmp_path):
    (tmp_path / "msg").mkdir()
    (tmp_path / "msg" / "A.msg").write_text("B b\nB c\n")
    (tmp_path / "msg" / "B.msg").write_text("int32 x\n")
    reads = []

    def share(package):
        reads.append(package)
        return tmp_path
    defs = MessageDefinitions(share)
    text = defs.full_text("p/msg/A")
    assert text == f"B b\nB c\n\n{SEPARATOR}\nMSG: p/B\nint32 x\n"
    assert defs.full_text("p/msg/A") == text and reads == ["p", "p"]


@pytest.mark.skipif(not (WEB / "@foxglove" / "rosmsg").is_dir() or not shutil.which("node"),
                    reason="Node.js or bsal_ros/web/node_modules missing (make setup)")
def test_foxglove_s_own_parser_reads_every_schema_the_robot_serves():
    """@foxglove/rosmsg (what Foxglove and Lichtblick parse schemas with) parses each
    full text, and its first definition has the fields of the type's own file."""
    defs = MessageDefinitions(ament_share)
    types = ["sensor_msgs/msg/Range", "nav_msgs/msg/Odometry", "sensor_msgs/msg/JointState",
             "sensor_msgs/msg/Imu", "diagnostic_msgs/msg/DiagnosticArray",
             "geometry_msgs/msg/PoseWithCovarianceStamped", "std_msgs/msg/String",
             "bsal_interfaces/msg/DeviceStateArray", "builtin_interfaces/msg/Time",
             "bsal_interfaces/srv/SetMotors_Request", "bsal_interfaces/srv/ListDevices_Response"]
    texts = {t: defs.full_text(t) for t in types}
    script = ("const {parse} = require('@foxglove/rosmsg');"
              "const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "const out = {};"
              "for (const [t, text] of Object.entries(texts)) {"
              "  const defs = parse(text, {ros2: true});"
              "  out[t] = defs[0].definitions.filter(f => !f.isConstant).map(f => f.name); }"
              "console.log(JSON.stringify(out));")
    r = subprocess.run([shutil.which("node"), "-e", script], input=json.dumps(texts),
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NODE_PATH": str(WEB)})
    assert r.returncode == 0, r.stderr
    fields = json.loads(r.stdout)
    assert fields["sensor_msgs/msg/Range"] == ["header", "radiation_type", "field_of_view",
                                               "min_range", "max_range", "range", "variance"]
    assert fields["nav_msgs/msg/Odometry"] == ["header", "child_frame_id", "pose", "twist"]
    assert fields["std_msgs/msg/String"] == ["data"]
    assert fields["bsal_interfaces/srv/SetMotors_Request"][:2] == ["device_class", "commands"]


# ----------------------------------------------------------------------- access
def test_names_are_resolved_in_the_namespace():
    assert absolute("cmd_vel", "/") == "/cmd_vel"
    assert absolute("cmd_vel", "/brak2") == "/brak2/cmd_vel"
    assert absolute("/cmd_vel", "/brak2") == "/cmd_vel"
    assert name_list(" cmd_vel, ,/tf,cmd_vel", "/brak2") == ("/brak2/cmd_vel", "/tf")
    assert name_list("", "/") == ()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "brak.local"])
def test_off_loopback_without_tls_is_refused(host):
    why = Access(host=host).refusal()
    assert host in why and "tls" in why


def test_tls_needs_both_files(tmp_path):
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("c")
    assert "keyfile is empty" in Access(host="0.0.0.0", tls=True, certfile=str(cert)).refusal()
    assert "not a readable file" in Access(host="0.0.0.0", tls=True, certfile=str(cert),
                                           keyfile=str(key)).refusal()
    key.write_text("k")
    ok = Access(host="0.0.0.0", tls=True, certfile=str(cert), keyfile=str(key))
    assert ok.refusal() == "" and ok.tls_material() == (b"c", b"k")
    assert Access(host="127.0.0.1").refusal() == "" and Access(host="::1").tls_material() is None


def test_off_loopback_control_needs_remote_control():
    rules = {"publish_topics": ("/cmd_vel",), "services": ("/reset",),
             "param_writes": ("/hardware_node.cmd_*",)}
    here = Access(host="127.0.0.1", **rules)
    assert here.may_publish("/cmd_vel") and not here.may_publish("/odom")
    assert here.may_call("/reset") and not here.may_call("/set_motors")
    assert here.may_set("/hardware_node.cmd_vel_timeout")
    assert not here.may_set("/hardware_node.speed_of_sound")
    away = Access(host="10.0.0.2", tls=True, **rules)
    assert not (away.may_publish("/cmd_vel") or away.may_call("/reset")
                or away.may_set("/hardware_node.cmd_vel_timeout"))
    assert "remote_control is false" in away.control_off_reason()
    allowed = Access(host="10.0.0.2", tls=True, remote_control=True, **rules)
    assert allowed.may_publish("/cmd_vel") and allowed.control_off_reason() == ""
    assert not Access(host="127.0.0.1").may_set("/hardware_node.x")     # none by default


# ----------------------------------------------------------------------- topics
def test_the_robot_s_topics_are_its_namespace_s_and_the_shared_ones():
    graph = [("/brak2/odom", ["nav_msgs/msg/Odometry"]), ("/brak3/odom", ["nav_msgs/msg/Odometry"]),
             ("/tf", ["tf2_msgs/msg/TFMessage"]), ("/diagnostics", ["d/msg/D"]),
             ("/brak2/home_steering/_action/status", ["a/msg/S"]),
             ("/brak2/mixed", ["a/msg/A", "b/msg/B"]), ("/chatter", ["std_msgs/msg/String"])]
    picked, mixed = TopicFilter("/brak2").pick(graph)
    assert picked == {"/brak2/odom": "nav_msgs/msg/Odometry", "/tf": "tf2_msgs/msg/TFMessage",
                      "/diagnostics": "d/msg/D"}
    assert mixed == [("/brak2/mixed", ["a/msg/A", "b/msg/B"])]
    everything, _ = TopicFilter("/").pick(graph)
    assert "/chatter" in everything and "/brak3/odom" in everything
    assert "/brak2/home_steering/_action/status" not in everything


def test_a_type_change_withdraws_and_advertises_again():
    new, gone = changes({"/a": "t/msg/A", "/b": "t/msg/B"}, {"/b": "t/msg/C", "/c": "t/msg/C"})
    assert sorted(gone) == ["/a", "/b"] and new == {"/b": "t/msg/C", "/c": "t/msg/C"}


def test_watchers_count_clients_and_keep_a_latched_topic_s_last_messages():
    w = Watchers()
    assert w.add(7, 1) and not w.add(7, 2) and w.count(7) == 2
    assert not w.remove(7, 1) and w.remove(7, 2) and w.count(7) == 0
    assert not w.remove(7, 2)       # twice: not the last one again
    w.remember(7, b"x", 1)          # not latched: nothing kept
    assert w.latched(7) == []
    w.keep_latched(7, 2)
    for i in range(3):
        w.remember(7, bytes([i]), i)
    assert w.latched(7) == [(b"\x01", 1), (b"\x02", 2)]
    w.drop(7)
    assert w.latched(7) == [] and w.count(7) == 0


# ----------------------------------------------------------------------- assets
def test_only_files_of_the_package_s_share_folder_are_served(tmp_path):
    share = tmp_path / "share" / "bsal_ros"
    (share / "urdf").mkdir(parents=True)
    (share / "urdf" / "wheel.stl").write_bytes(b"solid")
    (tmp_path / "secret").write_text("no")
    (share / "link").symlink_to(tmp_path / "secret")
    assert read_asset("package://bsal_ros/urdf/wheel.stl", share) == b"solid"
    assert asset_path("package://bsal_ros/urdf/wheel%2Estl", share).name == "wheel.stl"
    refused = {"package://bsal_ros/../secret": "outside", "package://bsal_ros/link": "outside",
               "package://other_pkg/urdf/wheel.stl": "only files of package",
               "file:///etc/passwd": "only package://", "package://bsal_ros/": "outside",
               "package://bsal_ros/urdf/none.stl": "no such file",
               "package://bsal_ros/urdf": "not a model file",
               "package://bsal_ros/config/users.yaml": "not a model file",
               "package://bsal_ros/package.xml": "not a model file"}
    (share / "config").mkdir()
    (share / "config" / "users.yaml").write_text("users: {brak: {key: secret}}")
    (share / "package.xml").write_text("<package/>")
    kinds = set()
    for uri, why in refused.items():
        with pytest.raises(AssetRefused, match=why) as refusal:
            read_asset(uri, share)
        kinds.add(refusal.value.kind)
    assert kinds == {"outside", "package", "scheme", "missing", "not a model file"}


# ----------------------------------------------------------------------- joints
URDF = """<robot name="r">
  <link name="base"/><link name="arm"/><link name="s"/><link name="slide"/>
  <joint name="fixed_s" type="fixed"><parent link="base"/><child link="s"/>
    <origin xyz="0.3 -0.1 0" rpy="0 0 1.5707963267948966"/></joint>
  <joint name="steer" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 0 1"/></joint>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="slide"/>
    <origin xyz="0 0 1" rpy="0 1.5707963267948966 0"/><axis xyz="0 0 1"/></joint>
</robot>"""


def _close(a, b, tol=1e-9):
    return all(abs(x - y) < tol for x, y in zip(a, b))


def test_a_fixed_joint_is_its_origin():
    j = {j.name: j for j in joints_of(URDF)}["fixed_s"]
    assert j.fixed and (j.parent, j.child) == ("base", "s")
    xyz, q = j.transform(5.0)       # a position does not move a fixed joint
    assert _close(xyz, (0.3, -0.1, 0.0))
    assert _close(rotate(q, (1.0, 0.0, 0.0)), (0.0, 1.0, 0.0))   # yaw +90 degrees


def test_a_revolute_joint_turns_about_its_axis_and_a_prismatic_one_slides():
    joints = {j.name: j for j in joints_of(URDF)}
    xyz, q = joints["steer"].transform(math.pi / 2)
    assert _close(xyz, (0.5, 0.0, 0.0)) and _close(rotate(q, (1.0, 0.0, 0.0)), (0.0, 1.0, 0.0))
    xyz, q = joints["lift"].transform(0.2)
    # pitched +90 degrees, its z axis points along the parent's x
    assert _close(xyz, (0.2, 0.0, 1.0))


def test_rpy_is_urdf_s_fixed_axis_roll_pitch_yaw():
    q = quaternion_from_rpy(0.1, -0.2, 0.3)
    cr, sr, cp, sp, cy, sy = (math.cos(0.1), math.sin(0.1), math.cos(-0.2), math.sin(-0.2),
                              math.cos(0.3), math.sin(0.3))
    # the rotation matrix R = Rz(yaw) Ry(pitch) Rx(roll), applied to the x axis
    expected_x = (cy * cp, sy * cp, -sp)
    expected_z = (cy * sp * cr + sy * sr, sy * sp * cr - cy * sr, cp * cr)
    assert _close(rotate(q, (1.0, 0.0, 0.0)), expected_x)
    assert _close(rotate(q, (0.0, 0.0, 1.0)), expected_z)
