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

"""ROS 2 message definitions as Foxglove and rosbag2 write them (``ros2msg``).

A schema is the type's own ``.msg`` text, then each type it uses, depth
first and once each, behind a separator line and ``MSG: <type>``::

    <sensor_msgs/msg/Range.msg>
    ================================================================================
    MSG: std_msgs/Header
    <std_msgs/msg/Header.msg>
    ================================================================================
    MSG: builtin_interfaces/Time
    ...

The texts are read from the ``.msg`` and ``.srv`` files every interface
package installs under ``share/<package>/msg`` (ament's
``rosidl_interfaces`` index lists them), so a plugin kind's own messages
work as Brak's do. Nothing here imports ROS: ``share_of`` finds a package's
share folder (bsal_ros.nodes.ros_types.ament_share: ament's index).
"""

from __future__ import annotations

from pathlib import Path
import re
from typing import Callable

SEPARATOR = "=" * 80
PRIMITIVES = frozenset({
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16",
    "int32", "uint32", "int64", "uint64", "string", "wstring"})
# the type of a field line: "geometry_msgs/Vector3[] name", "Header header", "string<=8 s"
FIELD_TYPE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_/]*)(?:<=\d+)?(?:\[[^\]]*\])?\s+[A-Za-z]")
TYPE_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)/(?:(msg|srv|action)/)?([A-Za-z][A-Za-z0-9_]*)$")
SERVICE_PARTS = ("_Request", "_Response")


class DefinitionNotFound(LookupError):
    """No ``.msg`` or ``.srv`` file for a type name (the message says which)."""


def split_type(name: str) -> tuple[str, str, str]:
    """``"pkg/msg/Type"`` or ``"pkg/Type"`` -> (package, folder, type); folder
    defaults to ``msg``. ValueError for anything else."""
    m = TYPE_NAME.match(name.strip())
    if not m:
        raise ValueError(f"not a ROS interface type name: {name!r}")
    return m.group(1), m.group(2) or "msg", m.group(3)


def dependencies(text: str, package: str) -> list[str]:
    """The non-primitive types a ``.msg`` text uses, in order of first use;
    a bare name (``Header``) is of ``package``."""
    seen: list[str] = []
    for line in text.splitlines():
        # comments go; constants ("uint8 OK=0") have primitive types
        m = FIELD_TYPE.match(line.split("#", 1)[0])
        if not m:
            continue
        kind = m.group(1)
        if kind in PRIMITIVES:
            continue
        if "/" not in kind:
            kind = f"{package}/{kind}"
        if kind not in seen:
            seen.append(kind)
    return seen


class MessageDefinitions:
    """Full ``ros2msg`` texts of message and service types, read once each."""

    def __init__(self, share_of: Callable[[str], Path]):
        self._share_of = share_of
        self._texts: dict[tuple[str, str, str], str] = {}
        self._full: dict[str, str] = {}

    def _file_text(self, package: str, folder: str, name: str) -> str:
        key = (package, folder, name)
        if key not in self._texts:
            path = self._share_of(package) / folder / f"{name}.{folder}"
            try:
                self._texts[key] = path.read_text(encoding="utf-8")
            except OSError:
                raise DefinitionNotFound(f"no {folder}/{name}.{folder} in package "
                                         f"{package!r}") from None
        return self._texts[key]

    def _message_text(self, type_name: str) -> tuple[str, str]:
        """(the type's own text, its package)."""
        package, folder, name = split_type(type_name)
        if folder == "srv":
            for part, index in zip(SERVICE_PARTS, (0, 1)):
                if name.endswith(part):
                    return self.service_parts(f"{package}/srv/{name[:-len(part)]}")[index], package
            raise DefinitionNotFound(f"{type_name}: a service type's message ends in _Request "
                                     "or _Response")
        if folder != "msg":
            raise DefinitionNotFound(f"{type_name}: only msg and srv types are read")
        return self._file_text(package, "msg", name), package

    def service_parts(self, service_type: str) -> tuple[str, str]:
        """(request text, response text) of ``pkg/srv/Name``: its ``.srv`` file
        split at the ``---`` line."""
        package, folder, name = split_type(service_type)
        if folder != "srv":
            raise ValueError(f"not a service type: {service_type!r}")
        text = self._file_text(package, "srv", name)
        lines = text.splitlines(keepends=True)
        for i, line in enumerate(lines):
            if line.strip() == "---":
                return "".join(lines[:i]), "".join(lines[i + 1:])
        raise DefinitionNotFound(f"{service_type}: its .srv file has no --- line")

    def full_text(self, type_name: str) -> str:
        """The ``ros2msg`` schema of a message type (``pkg/msg/Type``, or a
        service's ``pkg/srv/Name_Request`` / ``_Response``): its text and every
        type it uses, depth first, once each. DefinitionNotFound names the
        first file missing."""
        if type_name in self._full:
            return self._full[type_name]
        seen: set[str] = set()

        def text_of(name: str) -> str:
            own, package = self._message_text(name)
            out = own
            for dep in dependencies(own, package):
                d_package, _, d_name = split_type(dep)
                canonical = f"{d_package}/{d_name}"
                if canonical in seen:
                    continue
                seen.add(canonical)
                out += f"\n{SEPARATOR}\nMSG: {canonical}\n" + text_of(f"{d_package}/msg/{d_name}")
            return out

        self._full[type_name] = text = text_of(type_name)
        return text
