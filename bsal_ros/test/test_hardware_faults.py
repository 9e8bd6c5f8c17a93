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

"""Fault injection on the simulated bus: bounded retries, the board marked not
ok with the errno, commands refused with the reason, recovery by itself, and
the diagnostics levels."""
import errno

import pytest

from bsal_ros.core.result import HARDWARE_FAULT
from bsal_ros.hardware import diagnostics as D
from bsal_ros.hardware.commands import MODE_VELOCITY
from bsal_ros.protocol.values import statval_fields

from hardware_helpers import make_robot, run


def diag(robot, name):
    return {d.name: d for d in D.device_diagnostics(robot, robot.clock())}[name]


def test_missing_board_is_marked_down_with_errno_and_recovers():
    robot, clock = make_robot()
    run(robot, clock, 0.5)
    tx = robot.bus.stats.transactions
    assert robot.bus.simulation.control("set_fault", "drive", "missing").ok
    clock.t += 0.06
    robot.cycle()
    b = robot.boards["drive"]
    assert not b.up and not b.ok and b.errno == errno.ENXIO
    assert "ENXIO after 2 retries" in b.fault
    # bounded: one poll = 1 + 2 retries on the drive board (plus other boards' polls)
    assert robot.bus.stats.errors == 3
    s = robot.get_states("relative_encoder", [0])[1][0]
    on, up, ok, _ = statval_fields(s.statval)
    assert on and not up and not ok and "ENXIO" in s.fault
    d = diag(robot, "dc_motor 0")
    assert d.level == D.ERROR and "ENXIO" in d.message and d.values["errno"] == errno.ENXIO
    # commands to the failed board are refused with the reason, nothing written
    res = robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 1.0)])
    assert res.code == HARDWARE_FAULT and "ENXIO" in res.message
    assert robot.clear_encoders([0]).code == HARDWARE_FAULT
    # other boards unaffected
    assert robot.boards["sonar_a"].ok and robot.boards["steering"].ok
    # recovery by itself
    robot.bus.simulation.control("clear_faults", "drive")
    run(robot, clock, 0.2)
    assert b.up and b.ok and b.fault == ""
    assert diag(robot, "dc_motor 0").level == D.OK
    msgs = [e.message for e in robot.drain_events()]
    assert sum("not answering" in m for m in msgs) == 1       # one line per event
    assert sum("recovered" in m for m in msgs) == 1
    assert tx < robot.bus.stats.transactions


def test_error_rate_is_absorbed_by_retries():
    robot, clock = make_robot()
    robot.bus.simulation.control("set_fault", "sonar_a", "error_rate", [0.2])
    run(robot, clock, 10.0)
    b = robot.boards["sonar_a"]
    assert b.transfers_retried > 0
    # P(3 failures in a row) = 0.8 %: with ~80 polls the board is up nearly always
    assert b.polls >= 80 and b.poll_failures <= 4
    robot.bus.simulation.control("set_fault", "sonar_a", "error_rate", [1.0])
    run(robot, clock, 0.5)
    assert not b.up and b.errno in (errno.EIO, errno.EREMOTEIO, errno.ETIMEDOUT)
    robot.bus.simulation.control("clear_faults", "")
    run(robot, clock, 0.5)
    assert b.up and b.ok


def test_stuck_board_is_up_but_not_ok_and_stale_then_error():
    robot, clock = make_robot()
    run(robot, clock, 0.5)
    robot.bus.simulation.control("set_fault", "accel", "stuck")
    run(robot, clock, 0.1)
    # first polls without a new sequence number: data ages -> STALE once old enough
    clock.t += 0.0
    b = robot.boards["accel"]
    run(robot, clock, 0.2)
    assert b.up and not b.ok and "stuck" in b.fault
    assert diag(robot, "accelerometer 0").level == D.ERROR
    robot.bus.simulation.control("clear_faults", "accel")
    run(robot, clock, 0.2)
    assert b.ok
    assert diag(robot, "accelerometer 0").level == D.OK


def test_stale_when_data_stops_and_off_devices_are_not_stale():
    robot, clock = make_robot()
    run(robot, clock, 0.5)
    assert diag(robot, "ultrasonic 0").level == D.OK
    # no polling for a while (e.g. the poll thread starved): data ages
    clock.t += 2.0
    assert diag(robot, "ultrasonic 0").level == D.STALE
    robot.activate("ultrasonic", [0], [False])
    d = diag(robot, "ultrasonic 0")
    assert d.level == D.OK and d.message == "off"


def test_stalled_drive_motor_is_a_warning():
    robot, clock = make_robot()
    robot.bus.simulation.control("set_fault", "drive", "stall")
    robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 1.0)])
    run(robot, clock, 1.0)
    assert diag(robot, "dc_motor 0").level == D.WARN
    assert robot.bus.simulation.world.w == 0.0


def test_missing_board_at_start_up_node_keeps_running():
    robot, clock = make_robot(activate=False)
    robot.bus.simulation.control("set_fault", "sonar_b", "missing")
    robot2_events = robot.drain_events()
    assert robot.activate("ultrasonic", [6], [True]).code == HARDWARE_FAULT
    assert robot.activate("ultrasonic", [0], [True]).ok
    run(robot, clock, 1.0)
    assert robot.boards["sonar_a"].ok and not robot.boards["sonar_b"].up
    assert robot2_events == [] or all(e.level for e in robot2_events)


def test_frequency_check_warns_when_data_comes_too_slowly():
    robot, clock = make_robot()
    run(robot, clock, 1.0)
    assert diag(robot, "accelerometer 0").level == D.OK
    assert float(diag(robot, "accelerometer 0").values["rate_hz"]) > 19.0
    for _ in range(20):          # the poll thread gets the CPU only every 0.12 s
        clock.t += 0.12
        robot.cycle()
    d = diag(robot, "accelerometer 0")
    assert d.level == D.WARN and "expected 20.00 Hz" in d.message


def test_bus_status_counts_transfers_and_levels():
    robot, clock = make_robot()
    bd = D.BusDiagnostics()
    assert bd(robot, clock.t).level == D.OK
    run(robot, clock, 1.0)
    d = bd(robot, clock.t)
    assert d.level == D.OK and d.message == "5/5 boards answering"
    # 76 polls/s + 40 keep-alives/s (one per motor-board poll)
    assert float(d.values["transactions_per_s"]) == pytest.approx(116.0, abs=3.0)
    assert d.values["stops_pending"] == "none"
    for name in robot.boards:
        robot.bus.simulation.control("set_fault", name, "missing")
    run(robot, clock, 0.5)
    d = bd(robot, clock.t)
    assert d.level == D.ERROR and d.values["last_errno"] == errno.ENXIO
