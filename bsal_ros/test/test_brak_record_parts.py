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

"""brak_record's parts without ROS: a legacy connection's bytes as JSON
messages (the shipped sessions of docs/WIRE.md, both byte orders, bad bytes,
the login key), and rosbag2's metadata as its reader asks for it."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from bsal_ros.foxglove import rosbag2
from bsal_ros.foxglove.wire_json import ConnectionDecoder, KEY_NOT_RECORDED, packet_fields
from bsal_ros.foxglove.wire_tap import port_list
from bsal_ros.protocol import (CGtSnIq, encode_rci, GetSensorStatus, IIId, RdiDecoder,
                               SensorType)
from bsal_ros.tools.wire_record import load

SESSIONS = Path(__file__).resolve().parent / "sessions"


def decode_session(name: str, protocol: str) -> list[dict]:
    """Every message of the first connection of a shipped recording."""
    dec = ConnectionDecoder(protocol, 0)
    out = []
    for _, direction, data in load(SESSIONS / name).connections()[0]:
        out += dec.feed(direction, data)
    return out


def test_the_client_app_session_decodes_packet_by_packet():
    msgs = decode_session("client_app.jsonl", "rci")
    assert not [m for m in msgs if "event" in m], "an error or raw chunk in a clean session"
    first = msgs[0]
    assert (first["dir"], first["packet"], first["byteorder"]) == ("c2s", "IIId", "big")
    assert first["fields"]["user_id"] == "demo"
    assert first["fields"]["auth_key"] == KEY_NOT_RECORDED
    names = [m["packet"] for m in msgs]
    # the replies decoded against their inquiries (a reply without one is a decode error)
    assert names.count("CGtSnRp") > 3 and names.count("CGtMtRp") > 0
    ultra = [m for m in msgs if m["packet"] == "CGtSnRp"
             and m["fields"]["sub_code"] == "ULTRASONIC"]
    assert all("delay" in i["data"] or "statval" in i["data"]
               for m in ultra for i in m["fields"]["items"])
    json.dumps(msgs)      # plain JSON throughout


def test_the_login_key_is_never_in_a_message():
    key = bytes(range(1, 17))
    login = IIId(user_id=b"demo", auth_key=key)
    dec = ConnectionDecoder("rci", 0)
    (msg,) = dec.feed("c2s", encode_rci(login))
    text = json.dumps(msg)
    assert key.hex() not in text and msg["fields"]["auth_key"] == KEY_NOT_RECORDED


def test_bytes_that_could_hold_a_key_are_never_written_as_hex():
    key = bytes(range(0xA1, 0xB1))
    for order in ("big", "little"):
        login = encode_rci(IIId(user_id=b"demo", auth_key=key), order)
        # a login with a bad code: nothing decoded yet
        dec = ConnectionDecoder("rci", 0)
        (err,) = dec.feed("c2s", b"\x7f\x7f" + login[2:])
        assert err["event"] == "error" and err["hex"] == KEY_NOT_RECORDED, err
        assert err["bytes"] == len(login)
        # after a good login, a chunk with a second login in it (the stream is broken)
        dec = ConnectionDecoder("rci", 0)
        dec.feed("c2s", encode_rci(IIId(user_id=b"demo"), order))
        dec.feed("c2s", b"\x7f\x7f\x00\x01")
        (raw,) = dec.feed("c2s", b"\x00" + login)
        assert raw["event"] == "raw" and raw["hex"] == KEY_NOT_RECORDED, raw
        # a good login and bad bytes in one chunk
        dec = ConnectionDecoder("rci", 0)
        msgs = dec.feed("c2s", login + b"\x7f\x7f\x00\x01")
        assert key.hex() not in json.dumps(msgs), msgs


def test_a_little_endian_client_is_decoded_in_its_order():
    inquiry = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)
    both = {}
    for order in ("little", "big"):
        dec = ConnectionDecoder("rci", 3)
        both[order] = dec.feed("c2s", encode_rci(IIId(user_id=b"demo"), order)
                               + encode_rci(inquiry, order))
        assert dec.byteorder == order
    msgs = both["little"]
    assert [m["packet"] for m in msgs] == ["IIId", "CGtSnIq"]
    assert msgs[1]["fields"]["sub_code"] == "ULTRASONIC"
    assert [m["fields"] for m in msgs] == [m["fields"] for m in both["big"]]
    assert all(m["conn"] == 3 for m in msgs)


def test_bad_bytes_end_that_direction_and_the_rest_is_kept_raw():
    dec = ConnectionDecoder("rci", 0)
    assert dec.feed("c2s", encode_rci(IIId(user_id=b"demo")))[0]["packet"] == "IIId"
    (err,) = dec.feed("c2s", b"\x7f\x7f\x00\x01")
    assert err["event"] == "error" and "7f7f" in err["error"] and err["hex"] == "7f7f0001"
    (raw,) = dec.feed("c2s", b"\x01\x02")
    assert raw["event"] == "raw" and raw["hex"] == "0102" and raw["bytes"] == 2
    # the other direction still decodes
    (reply,) = dec.feed("s2c", encode_rci(IIId(user_id=b"bsal_ros")))
    assert reply["packet"] == "IIId" and reply["dir"] == "s2c"


def test_the_rdi_viewer_session_is_the_stream_the_client_decodes():
    msgs = decode_session("rdi_viewer.jsonl", "rdi")
    packets = [m for m in msgs if "packet" in m]
    chunks = [d for _, direction, d in load(SESSIONS / "rdi_viewer.jsonl").connections()[0]
              if direction == "s2c"]
    direct = RdiDecoder().feed(b"".join(chunks))
    assert packets[0]["packet"] == "RdiBaseTime"
    assert [(m["packet"], m["fields"]) for m in packets] == [
        (type(p).__name__, packet_fields(p)) for p in direct]


def test_a_wrong_direction_or_protocol_is_refused():
    with pytest.raises(ValueError, match="rci or rdi"):
        ConnectionDecoder("rtp", 0)
    with pytest.raises(ValueError, match="c2s or s2c"):
        ConnectionDecoder("rci", 0).feed("up", b"")


def test_port_lists():
    assert port_list("7650, 7651,7652", "--wire-targets") == (7650, 7651, 7652)
    for bad in ("7650,7651", "a,b,c", "1,2,70000"):
        with pytest.raises(ValueError, match="three ports RCI,REALTIME,CA"):
            port_list(bad, "--wire-listen")


def fake_qos(reliability="RELIABLE", durability="TRANSIENT_LOCAL"):
    """What rclpy's QoSProfile offers: enum members (a name) and Durations."""
    def named(name):
        return SimpleNamespace(name=name)

    def duration(ns):
        return SimpleNamespace(nanoseconds=ns)
    return SimpleNamespace(history=named("KEEP_LAST"), depth=1, reliability=named(reliability),
                           durability=named(durability), deadline=duration(2**63 - 1),
                           lifespan=duration(1_500_000_000), liveliness=named("AUTOMATIC"),
                           liveliness_lease_duration=duration(0),
                           avoid_ros_namespace_conventions=False)


def test_a_profile_is_written_as_rosbag2_writes_it():
    profile = rosbag2.qos_profile(fake_qos())
    assert list(profile) == list(rosbag2.POLICIES)
    assert profile["reliability"] == "reliable" and profile["durability"] == "transient_local"
    assert profile["deadline"] == {"sec": 9223372036, "nsec": 854775807}
    assert profile["lifespan"] == {"sec": 1, "nsec": 500_000_000}
    text = rosbag2.offered_qos_profiles([profile, rosbag2.qos_profile(fake_qos("BEST_EFFORT"))])
    assert text.startswith("- history: keep_last\n")
    assert [p["reliability"] for p in yaml.safe_load(text)] == ["reliable", "best_effort"]


#: what rosbag2's reader (rosbag2_storage/yaml.hpp) asks of the serialized
#: metadata at version 9: a missing key is an exception there
BAG_KEYS = {"version", "storage_identifier", "duration", "starting_time", "message_count",
            "topics_with_message_count", "relative_file_paths", "compression_format",
            "compression_mode", "files", "custom_data", "ros_distro"}


def test_the_bag_metadata_has_what_rosbag2_reads():
    profile = rosbag2.qos_profile(fake_qos())
    topics = [rosbag2.TopicRecord("/odom", "nav_msgs/msg/Odometry", "cdr", [profile],
                                  "RIHS01_00", 40),
              rosbag2.TopicRecord("/robot_description", "std_msgs/msg/String", "cdr",
                                  [profile], "RIHS01_11", 1)]
    text = rosbag2.bag_metadata("x.mcap", topics, 1_000, 5_000, ros_distro="kilted")
    assert "&id" not in text and "*id" not in text, "an anchor: write each object out"
    info = yaml.safe_load(text)
    assert BAG_KEYS <= set(info)
    assert info["version"] == 9 and info["message_count"] == 41
    assert info["duration"] == {"nanoseconds": 4_000}
    assert info["starting_time"] == {"nanoseconds_since_epoch": 1_000}
    assert info["files"] == [{"path": "x.mcap", "starting_time": info["starting_time"],
                              "duration": info["duration"], "message_count": 41}]
    first = info["topics_with_message_count"][0]
    assert first["message_count"] == 40
    assert first["topic_metadata"] == {"name": "/odom", "type": "nav_msgs/msg/Odometry",
                                       "serialization_format": "cdr",
                                       "offered_qos_profiles": [profile],
                                       "type_description_hash": "RIHS01_00"}
    assert info["ros_distro"] == "kilted"
