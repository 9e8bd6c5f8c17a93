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

"""What rosbag2 reads from an MCAP file besides the messages, as its MCAP
storage plugin (rosbag2_storage_mcap, Jazzy and later) writes it.

* Each ROS channel's metadata: ``offered_qos_profiles``, the QoS of every
  publisher of the topic as a YAML sequence (policies by name, durations as
  ``{sec, nsec}``: rosbag2's metadata version 9), which ``ros2 bag play``
  offers again; and ``topic_type_hash``, the type's REP-2011 hash
  (``RIHS01_...``).
* At the end, a metadata record named ``rosbag2`` whose key
  ``serialized_metadata`` holds the bag's metadata as YAML (what
  ``metadata.yaml`` holds beside a rosbag2 bag): its version tells rosbag2
  how to read the QoS text, and ``ros2 bag info`` shows its ROS distribution.

Everything else ``ros2 bag info`` prints (counts, start, duration, topics and
types) rosbag2 takes from the MCAP summary. No ROS here: a QoS profile is read
through the attributes rclpy's ``QoSProfile`` has (docs/RECORDING.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import os

import yaml

#: the bag metadata version whose QoS policies are names (rosbag2 since Jazzy)
METADATA_VERSION = 9
#: name and key of the metadata record rosbag2 writes when it closes a file
METADATA_NAME, METADATA_KEY = "rosbag2", "serialized_metadata"
STORAGE_ID = "mcap"
#: rosbag2's order of a profile's fields (its YAML encoder's)
POLICIES = ("history", "depth", "reliability", "durability", "deadline", "lifespan",
            "liveliness", "liveliness_lease_duration", "avoid_ros_namespace_conventions")
DURATIONS = ("deadline", "lifespan", "liveliness_lease_duration")
NS = 1_000_000_000


class _PlainDumper(yaml.SafeDumper):
    """PyYAML's safe dumper without anchors and aliases (an object used twice is
    written twice, as rosbag2's own YAML writer does)."""

    def ignore_aliases(self, data) -> bool:
        """Never an alias."""
        return True


def _dump(data) -> str:
    return yaml.dump(data, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False)


def _policy_name(policy) -> str:
    # rclpy's enums are named as rmw's strings, upper case: KEEP_LAST -> keep_last
    name = getattr(policy, "name", None)
    return name.lower() if isinstance(name, str) else "unknown"


def _duration(value) -> dict:
    ns = int(getattr(value, "nanoseconds", value or 0))
    return {"sec": ns // NS, "nsec": ns % NS}


def qos_profile(qos) -> dict:
    """One publisher's QoS (an rclpy ``QoSProfile``) as rosbag2 writes it."""
    out = {}
    for key in POLICIES:
        value = getattr(qos, key)
        if key in DURATIONS:
            out[key] = _duration(value)
        elif key == "depth":
            out[key] = int(value)
        elif key == "avoid_ros_namespace_conventions":
            out[key] = bool(value)
        else:
            out[key] = _policy_name(value)
    return out


def offered_qos_profiles(profiles: list[dict]) -> str:
    """The ``offered_qos_profiles`` text of a channel: ``profiles`` (each from
    :func:`qos_profile`) as a YAML sequence; ``[]`` for none."""
    return _dump(list(profiles))


def channel_metadata(profiles: list[dict], type_hash: str) -> dict[str, str]:
    """The metadata of a ROS channel: its publishers' QoS and the type's hash."""
    return {"offered_qos_profiles": offered_qos_profiles(profiles),
            "topic_type_hash": type_hash}


@dataclass
class TopicRecord:
    """One channel of the file, for the bag metadata."""

    name: str
    type: str
    serialization_format: str
    profiles: list = field(default_factory=list)
    type_hash: str = ""
    message_count: int = 0


def bag_metadata(file_name: str, topics: list[TopicRecord], start_ns: int, end_ns: int,
                 ros_distro: str | None = None) -> str:
    """The YAML of the ``rosbag2`` metadata record: every field rosbag2's
    reader asks for at version :data:`METADATA_VERSION` (yaml.hpp's BagMetadata).

    :param file_name: the file's name (``relative_file_paths``).
    :param topics: every channel, with its message count.
    :param start_ns: log time of the first message (ns since the epoch; 0: none).
    :param end_ns: log time of the last one.
    :param ros_distro: the ROS distribution (default: ``$ROS_DISTRO``, else "").
    :returns: the YAML text.
    """
    count = sum(t.message_count for t in topics)
    duration = {"nanoseconds": max(0, end_ns - start_ns)}
    start = {"nanoseconds_since_epoch": start_ns}
    info = {
        "version": METADATA_VERSION,
        "storage_identifier": STORAGE_ID,
        "duration": duration,
        "starting_time": start,
        "message_count": count,
        "topics_with_message_count": [
            {"topic_metadata": {"name": t.name, "type": t.type,
                                "serialization_format": t.serialization_format,
                                "offered_qos_profiles": list(t.profiles),
                                "type_description_hash": t.type_hash},
             "message_count": t.message_count} for t in topics],
        "compression_format": "",
        "compression_mode": "",
        "relative_file_paths": [file_name],
        "files": [{"path": file_name, "starting_time": start, "duration": duration,
                   "message_count": count}],
        "custom_data": {"recorder": "brak_record"},
        "ros_distro": os.environ.get("ROS_DISTRO", "") if ros_distro is None else ros_distro,
    }
    return _dump(info)
