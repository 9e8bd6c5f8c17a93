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
"""Wireshark/tshark dissector for RCI (TCP 7650) and RDI (TCP 7651, 7652).

The dissector is the Lua plugin ``bsal.lua`` next to this file, installed to
``share/bsal_ros/wireshark/bsal.lua`` (docs/WIRE.md). Its code tables and item
layouts are generated from :mod:`bsal_ros.protocol` by :mod:`.gen_lua`, so the
dissector and the codec cannot drift.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["lua_path"]


def lua_path() -> Path:
    """Path of the dissector: the source tree's copy, else the installed share/ one."""
    here = Path(__file__).with_name("bsal.lua")
    if here.exists():
        return here
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory("bsal_ros")) / "wireshark" / "bsal.lua"
