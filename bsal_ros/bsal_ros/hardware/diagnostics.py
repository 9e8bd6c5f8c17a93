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

"""Per-device diagnostics (what diagnostic_updater would do, reproduced).

Level from the statval bits, the age of the data and the device's kind
(:meth:`bsal_ros.kinds.DeviceKind.health`), in this order:

* ERROR - the board is down (not ``up``) or its data is not ``ok`` (bus
  errno after retries, stuck sequence counter, wrong WHO_AM_I);
* STALE - the device is on but no good data arrived for ``stale_factor``
  poll periods;
* the kind's own level when it is WARN or worse: a motor kind's (a stall, a
  latched stop not yet confirmed, the board's command watchdog stopped the
  motor, its command lease ran out and the node stopped it until its next
  command), the drive motor's (cmd_vel holds the wheel: steering not homed
  or homing), a plugin's (from its state and the node's parameters, read at
  each update); a kind whose ``health`` raises or answers neither None nor a
  (level, message) pair of a known level is ERROR, naming it, logged once;
* WARN  - the board refused the last command, or new data arrives at less
  than half the expected poll rate (frequency check);
* OK    - otherwise: the kind's OK message, else "ok" ("off": a device that is off).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Mapping
import weakref

from .node_params import HardwareNodeParams
from ..kinds import all_kinds, Health, HealthContext, Level
from ..kinds.registry import declared_params

OK, WARN, ERROR, STALE = Level.OK, Level.WARN, Level.ERROR, Level.STALE
LEVEL_NAMES = {lv: lv.name for lv in Level}
#: robot -> the kinds whose faulty ``health`` it has logged (once each)
_said: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass
class DeviceDiag:
    """One diagnostic status, ROS-free (the node turns it into DiagnosticStatus)."""

    name: str
    level: int
    message: str
    hardware_id: str
    values: dict = field(default_factory=dict)


def default_params() -> dict:
    """The hardware node's parameters at their declared defaults, every
    kind's included: what a kind reads of a robot that runs without a node."""
    out = HardwareNodeParams.static_defaults()
    for _, _, rec in declared_params():
        out.update(rec.static_defaults())
    return out


def kind_health(robot, k, s, ctx: HealthContext) -> Health | None:
    """The kind ``k``'s word on the state ``s``; a kind whose ``health`` raises or
    answers neither None nor a (level, message) pair of a known level gives
    ERROR naming the fault, logged once per robot and kind."""
    try:
        own = k.health(s, ctx)
        if own is None:
            return None
        level, message = own
        return Health(Level(level), str(message))
    except Exception as exc:  # noqa: BLE001  (a plugin's fault is its device's ERROR)
        why = f"device kind {k.name!r}: health() failed: {type(exc).__name__}: {exc}"
        said = _said.setdefault(robot, set())
        if k.name not in said:
            said.add(k.name)
            robot.report("error", why)
        return Health(Level.ERROR, why)


def device_diagnostics(robot, now_mono: float, stale_factor: float = 3.0,
                       params: Mapping | None = None) -> list[DeviceDiag]:
    """One status per device, levels as the module text says. ``params``: the
    hardware node's parameters by name, as they are now (None: the defaults)."""
    params = default_params() if params is None else params
    out = []
    with robot.lock:
        drive_held = getattr(robot, "drive_held", "")
        for k in all_kinds():
            cls = k.name
            for d in robot.devices_of(cls):
                b = d.board
                s = d.snapshot(robot.base_time, robot)
                period = b.poll_period()
                age = math.inf if b.mono is None else max(0.0, now_mono - b.mono)
                values = {"on": s.on, "up": s.up, "ok": s.ok, "statval": f"{s.statval:#010x}",
                          "board": b.name, "age_s": "never" if math.isinf(age) else f"{age:.3f}",
                          "poll_hz": f"{1.0 / period:.2f}", "rate_hz": f"{b.rate_hz:.2f}",
                          "polls": b.polls,
                          "poll_failures": b.poll_failures}
                if b.errno is not None:
                    values["errno"] = b.errno
                driver_of = getattr(b.bus, "driver_of", None)   # a bus serving another robot
                if driver_of is not None:
                    values["driver"] = driver_of(cls, d.id)
                values.update(k.diagnostics(s))    # the kind's own values
                lease_stopped = ""
                if k.motor:
                    values["command_timeout_ms"] = b.command_timeout_ms
                    values["stop_pending"] = b.stop_pending
                    values["watchdog_stopped"] = b.timed_out
                    lease = robot.lease_state(d.key, now_mono)
                    values["lease"] = lease["lease"]
                    values["lease_stopped"] = bool(lease["lease_stopped"])
                    lease_stopped = lease["lease_stopped"]
                own = None
                if not s.up or not s.ok:
                    level, msg = ERROR, s.fault or "board not ok"
                elif s.on and age > stale_factor * period:
                    level, msg = STALE, f"no data for {age:.2f} s (poll period {period:.3f} s)"
                elif (own := kind_health(robot, k, s, HealthContext(
                        params=params, desc=robot.desc, lease_stopped=lease_stopped,
                        drive_held=drive_held))) is not None and own.level != OK:
                    level, msg = own
                elif getattr(b, "refused", False):
                    level, msg = WARN, "board refused the last command"
                elif s.on and b.fresh_reads >= 5 and b.rate_hz < 0.5 / period:
                    level, msg = WARN, (f"data at {b.rate_hz:.2f} Hz, expected "
                                        f"{1.0 / period:.2f} Hz")
                elif own is not None:
                    level, msg = own
                else:
                    level, msg = OK, "ok" if s.on else "off"
                out.append(DeviceDiag(f"{cls} {d.id}", level, msg, b.hardware_id, values))
    return out


class BusDiagnostics:
    """The bus as a whole ("<node>: bus"): backend, transfer counts and rates,
    errors, retries, the boards answering, the last errno."""

    def __init__(self):
        self._prev = None  # (clock time, BusStats snapshot)

    def __call__(self, robot, now_mono: float) -> DeviceDiag:
        with robot.lock:
            st = robot.bus.stats.snapshot()
            boards = list(robot.boards.values())
            down = [b for b in boards if not (b.up and b.ok)]
            errnos = [b.errno for b in boards if b.errno is not None]
            retried = sum(b.transfers_retried for b in boards)
            pending = [b.name for b in boards if getattr(b, "stop_pending", False)]
            leases = [f"{cls}_{i:02d} ({ls.lease_s:g} s)"
                      for (cls, i), ls in sorted(getattr(robot, "leases", {}).items())]
            expiries = getattr(robot, "lease_expiries", 0)
        values = {"backend": robot.backend, "bus": robot.bus.name,
                  "transactions": st.transactions, "errors": st.errors,
                  "bytes_read": st.bytes_read, "bytes_written": st.bytes_written,
                  "transfers_retried": retried,
                  "boards_ok": f"{len(boards) - len(down)}/{len(boards)}",
                  # motor boards holding a latched stop not yet confirmed by the board
                  "stops_pending": ", ".join(pending) or "none",
                  # motors running on a command lease, and how many leases ran out
                  "leases": ", ".join(leases) or "none",
                  "lease_expiries": expiries}
        if self._prev is not None and now_mono > self._prev[0]:
            dt = now_mono - self._prev[0]
            p = self._prev[1]
            clock_hz = float(robot.desc.get("bus", {}).get("clock_hz", 100000))
            values["transactions_per_s"] = f"{(st.transactions - p.transactions) / dt:.1f}"
            values["errors_per_s"] = f"{(st.errors - p.errors) / dt:.2f}"
            values["wire_busy"] = f"{100.0 * (st.wire_bits - p.wire_bits) / clock_hz / dt:.1f} %"
        self._prev = (now_mono, st)
        if errnos:
            values["last_errno"] = errnos[-1]
        open_error = getattr(robot.bus, "open_error", "")
        if open_error:
            values["open_error"] = open_error
        if open_error:     # the bus device itself is missing or forbidden
            level, msg = ERROR, open_error
        elif not down:
            level, msg = OK, f"{len(boards)}/{len(boards)} boards answering"
        else:
            why = "; ".join(f"{b.name}: {b.fault}" for b in down)
            level = ERROR if len(down) == len(boards) else WARN
            msg = f"{len(boards) - len(down)}/{len(boards)} boards ok; {why}"
        return DeviceDiag("bus", level, msg, robot.bus.name, values)
