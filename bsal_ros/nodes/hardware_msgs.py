"""Conversions from the hardware layer's values to ROS messages (no I/O)."""

from __future__ import annotations

import math

from builtin_interfaces.msg import Time
from bsal_interfaces.msg import DeviceInfo, DeviceState, Result
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from bsal_ros.hardware import diagnostics as hwdiag


def to_time(t: float | None) -> Time:
    if t is None or not math.isfinite(t) or t < 0:
        return Time()
    sec = int(math.floor(t))
    nsec = int(round((t - sec) * 1e9))
    if nsec >= 1_000_000_000:
        sec, nsec = sec + 1, nsec - 1_000_000_000
    return Time(sec=sec, nanosec=nsec)


def result_msg(res) -> Result:
    return Result(code=int(res.code), message=str(res.message))


def yaw_to_quat(yaw: float):
    return 0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)


def _i16(v: int) -> int:
    return max(-32768, min(32767, int(v)))


def device_state_msg(s, frame_id: str = "") -> DeviceState:
    m = DeviceState()
    m.header.stamp = to_time(s.stamp)
    m.header.frame_id = frame_id
    m.device_class = s.device_class
    m.id = int(s.id)
    m.on, m.up, m.ok = bool(s.on), bool(s.up), bool(s.ok)
    m.statval = int(s.statval) & 0xFFFFFFFF
    # board faults, and on motors the latched stop / the board watchdog's stop
    m.fault = s.fault if (not s.ok or not s.up or s.extra.get("stop_pending")
                          or s.extra.get("watchdog_stopped")) else ""
    m.delay_us = int(s.delay_us) & 0xFFFF
    m.range_m = float(s.range_m)
    m.d_count = _i16(s.d_count)
    m.d_statval = int(s.d_statval) & 0xFFFFFFFF
    m.count = _i16(s.count)
    m.position = float(s.position)
    m.accel_g = float(s.accel_g)
    m.speedval = int(s.speedval) & 0xFFFF
    m.duty_mode = bool(s.duty_mode)
    m.speed = float(s.speed)
    m.mposval = int(s.mposval) & 0xFFFFFFFF
    m.motor_position = float(s.motor_position)
    m.homed = bool(s.homed)
    m.homing = bool(s.homing)
    return m


def device_info_msg(d: dict, frame_id: str) -> DeviceInfo:
    return DeviceInfo(device_class=d["device_class"], id=int(d["id"]), board=d["board"],
                      bus=d["bus"], address=int(d["address"]), channel=int(d["channel"]),
                      frame_id=frame_id, on=bool(d["on"]), up=bool(d["up"]), ok=bool(d["ok"]),
                      fault=d["fault"] if not (d["up"] and d["ok"]) else "")


def diag_status_msg(dd: hwdiag.DeviceDiag, prefix: str) -> DiagnosticStatus:
    st = DiagnosticStatus()
    st.level = bytes([dd.level])
    st.name = f"{prefix}{dd.name}"
    st.message = dd.message
    st.hardware_id = dd.hardware_id
    st.values = [KeyValue(key=str(k), value=str(v)) for k, v in dd.values.items()]
    return st
