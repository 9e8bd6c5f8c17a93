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

"""ROS interface types by name, and the QoS that hears every publisher of a topic.

Shared by the nodes that subscribe to topics they learn from the graph (the
Foxglove gateway, brak_record) and publish types they are told by name.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from bsal_ros.foxglove.definitions import DefinitionNotFound, MessageDefinitions, split_type


def ament_share(package: str) -> Path:
    """The share folder of an installed ROS package (ament's index)."""
    from ament_index_python.packages import get_package_share_directory, PackageNotFoundError
    try:
        return Path(get_package_share_directory(package))
    except PackageNotFoundError:
        raise DefinitionNotFound(f"package {package!r} is not installed") from None


def message_definitions() -> MessageDefinitions:
    """The ``ros2msg`` texts of the types installed in this ROS environment."""
    return MessageDefinitions(ament_share)


def interface_class(type_name: str):
    """The Python class of ``pkg/msg/Type`` (or ``pkg/srv/Type``); None when not importable."""
    try:
        package, folder, name = split_type(type_name)
        return getattr(importlib.import_module(f"{package}.{folder}"), name)
    except (ImportError, AttributeError, ValueError):
        return None


def canonical_type(name: str) -> str:
    """``geometry_msgs/Twist`` or ``geometry_msgs/msg/Twist`` -> ``geometry_msgs/msg/Twist``."""
    package, folder, kind = split_type(name)
    return f"{package}/{folder}/{kind}"


def publisher_qos(infos, depth_default: int = 10) -> tuple[QoSProfile, bool]:
    """(QoS to subscribe with, latched) matching every publisher of a topic:
    best effort if any publisher is, transient local only if all are (then
    deep enough for all of them), as foxglove_bridge decides."""
    depth, best_effort, latched = 0, False, bool(infos)
    for info in infos:
        q = info.qos_profile
        best_effort |= q.reliability == ReliabilityPolicy.BEST_EFFORT
        latched &= q.durability == DurabilityPolicy.TRANSIENT_LOCAL
        depth += max(1, int(q.depth or 1))
    qos = QoSProfile(history=HistoryPolicy.KEEP_LAST,
                     depth=max(depth if latched else depth_default, 1),
                     reliability=(ReliabilityPolicy.BEST_EFFORT if best_effort
                                  else ReliabilityPolicy.RELIABLE),
                     durability=(DurabilityPolicy.TRANSIENT_LOCAL if latched
                                 else DurabilityPolicy.VOLATILE))
    return qos, latched
