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

"""Conversions from the hardware layer's values to ROS messages (no I/O).

Device states go through :mod:`bsal_ros.nodes.device_state_msg` (the one
converter); this module has the other small messages of the hardware node.
"""

from __future__ import annotations

from bsal_interfaces.msg import DeviceInfo, Result
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from bsal_ros.hardware import diagnostics as hwdiag


def result_msg(res) -> Result:
    """bsal_ros.core.Result -> bsal_interfaces/Result."""
    return Result(code=int(res.code), message=str(res.message))


def device_info_msg(d: dict, frame_id: str) -> DeviceInfo:
    """One entry of Robot.list_devices -> bsal_interfaces/DeviceInfo."""
    return DeviceInfo(device_class=d["device_class"], id=int(d["id"]), board=d["board"],
                      bus=d["bus"], address=int(d["address"]), channel=int(d["channel"]),
                      frame_id=frame_id, on=bool(d["on"]), up=bool(d["up"]), ok=bool(d["ok"]),
                      fault=d["fault"] if not (d["up"] and d["ok"]) else "")


def diag_status_msg(dd: hwdiag.DeviceDiag, prefix: str) -> DiagnosticStatus:
    """A ROS-free DeviceDiag -> diagnostic_msgs/DiagnosticStatus (name prefixed)."""
    st = DiagnosticStatus()
    st.level = bytes([dd.level])
    st.name = f"{prefix}{dd.name}"
    st.message = dd.message
    st.hardware_id = dd.hardware_id
    st.values = [KeyValue(key=str(k), value=str(v)) for k, v in dd.values.items()]
    return st
