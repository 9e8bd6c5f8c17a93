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

"""The shipped Fast DDS profile (config/fastdds_robot.xml, issue 28): its
values, and who gets it (brak_bringup, brak.launch.py; a user's own
FASTDDS_DEFAULT_PROFILES_FILE wins; the switch turns it off). Whether Fast
DDS applies it is shown by test_two_hosts.py (no shared-memory port mapped,
no ABORT over a lossy link)."""
from pathlib import Path
import xml.etree.ElementTree as ET

import pytest

from bsal_ros.dds_profile import describe, profile_env, profile_path, PROFILES_VAR, SWITCH_VAR
from bsal_ros.nodes.gateway_params import RciGatewayParams

ROOT = Path(__file__).resolve().parents[1]
NS = {"d": "http://www.eprosima.com"}
XSD_NAME = "fastdds_profiles.xsd"


def _seconds(el) -> float:
    return float(el.findtext("d:sec", "0", NS)) + float(el.findtext("d:nanosec", "0", NS)) / 1e9


@pytest.fixture(scope="module")
def profiles():
    return ET.parse(profile_path()).getroot().find("d:profiles", NS)


def _default(profiles, tag):
    found = [e for e in profiles.findall(f"d:{tag}", NS) if e.get("is_default_profile") == "true"]
    assert len(found) == 1, tag
    return found[0]


def test_the_profile_is_the_shipped_file():
    assert profile_path() == ROOT / "config" / "fastdds_robot.xml"
    assert profile_path().is_file()


def test_reliable_writers_repair_a_lost_sample_well_within_the_service_timeout(profiles):
    times = _default(profiles, "data_writer").find("d:times", NS)
    heartbeat = _seconds(times.find("d:heartbeat_period", NS))
    nack = _seconds(times.find("d:nack_response_delay", NS))
    reader = _default(profiles, "data_reader").find("d:times", NS)
    answer = _seconds(reader.find("d:heartbeat_response_delay", NS))
    service_timeout = RciGatewayParams.static_defaults()["service_timeout_s"]
    # one repair: a heartbeat, the reader's NACK, the writer's resend
    repair = heartbeat + answer + nack
    assert repair <= service_timeout / 5, (heartbeat, answer, nack)


def test_the_participant_uses_udp_only(profiles):
    rtps = _default(profiles, "participant").find("d:rtps", NS)
    assert rtps.findtext("d:builtinTransports", None, NS) == "UDPv4"


def test_the_profile_sets_no_ros_qos(profiles):
    """ROS QoS (reliability, durability, history) stays the nodes' own."""
    for tag in ("data_writer", "data_reader"):
        assert _default(profiles, tag).find("d:qos", NS) is None, tag


def test_the_profile_matches_fast_dds_schema():
    """Validated against the XSD the Fast DDS wheel ships (xmllint, where installed)."""
    import shutil
    import subprocess
    import sys
    xsd = next(Path(sys.prefix).glob(f"share/fastdds/{XSD_NAME}"), None)
    if xsd is None or shutil.which("xmllint") is None:
        pytest.skip(f"needs xmllint and {XSD_NAME} under {sys.prefix}/share/fastdds")
    r = subprocess.run(["xmllint", "--noout", "--schema", str(xsd), str(profile_path())],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_the_bridge_gets_the_shipped_profile_by_default():
    assert profile_env({}) == {PROFILES_VAR: str(profile_path())}
    assert profile_env({}, path="/x/fastdds_robot.xml") == {PROFILES_VAR: "/x/fastdds_robot.xml"}


def test_a_users_own_profile_file_wins():
    assert profile_env({PROFILES_VAR: "/etc/my_dds.xml"}) == {}


@pytest.mark.parametrize("value", ["0", "false", "OFF", "no"])
def test_the_switch_turns_it_off(value):
    assert profile_env({SWITCH_VAR: value}) == {}
    assert profile_env({}, flag=False) == {}
    assert profile_env({SWITCH_VAR: "1"}) != {}


def test_the_start_up_line_names_the_profile():
    assert describe({}) == "Fast DDS profile: none (defaults)"
    assert describe(profile_env({})) == "Fast DDS profile: shipped (fastdds_robot.xml)"
    assert describe({PROFILES_VAR: "/etc/my_dds.xml"}) == "Fast DDS profile: /etc/my_dds.xml"


def test_brak_bringup_sets_it_before_rclpy_and_has_the_switch():
    from bsal_ros.nodes import bringup
    assert bringup.parse_args(["--no-dds-profile"]).no_dds_profile
    assert not bringup.parse_args([]).no_dds_profile
