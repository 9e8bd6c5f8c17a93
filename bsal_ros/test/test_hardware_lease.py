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

"""Command leases on motors (docs/HARDWARE.md section 14): a motor set with
``lease_s`` > 0 is stopped by the robot when no new command or renewal comes
within lease_s; lease 0 keeps today's behaviour; a reset, a stop or a
command without lease clears the lease; a renewal never restarts a motor.
The simulated boards run on a fake clock: deterministic."""
import math

from bsal_ros.core.result import BAD_REQUEST, HARDWARE_FAULT, INVALID_ID, OK, REFUSED
from bsal_ros.hardware import diagnostics as D
from bsal_ros.hardware.commands import MODE_DUTY_CYCLE, MODE_VELOCITY
from bsal_ros.protocol.values import speedval_sign

from hardware_helpers import (make_robot, run, run_until, speedval_from_duty,
                              speedval_from_rad_s)

DRIVE, STEER = 0x30, 0x31
THIRTY = speedval_from_duty(30.0)
DC = "dc_motor"


def drive(robot, duty=30.0, lease_s=0.0):
    return robot.set_motors(DC, [(0, MODE_DUTY_CYCLE, duty)], lease_s)


def lease_events(robot):
    return [e.message for e in robot.drain_events() if "lease" in e.message]


def test_a_leased_motor_stops_when_its_lease_runs_out():
    robot, clock = make_robot()
    vb = robot.bus.device(DRIVE)
    res = drive(robot, lease_s=0.5)
    assert res.ok and "lease 0.5 s: dc_motor_00" in res.message
    t_cmd = clock.t
    assert robot.next_due() <= t_cmd + 0.5            # the poll thread wakes for the deadline
    run(robot, clock, 0.4)
    assert vb.speed_set == THIRTY and robot.bus.simulation.world.w > 0.1
    assert run_until(robot, clock, lambda: speedval_sign(vb.speed_set) == 0, limit=5.0)
    assert t_cmd + 0.5 <= clock.t <= t_cmd + 0.5 + 0.011   # at the deadline (one 10 ms step)
    assert robot.leases == {} and robot.lease_expiries == 1
    msgs = lease_events(robot)
    assert len(msgs) == 1, msgs
    assert "dc_motor_00: command lease of 0.5 s ran out" in msgs[0] and "stopping it" in msgs[0]
    # diagnostics say why the motor stopped, until its next command
    dd = {x.name: x for x in D.device_diagnostics(robot, clock.t)}["dc_motor 0"]
    assert dd.level == D.WARN and "lease of 0.5 s ran out" in dd.message
    assert dd.values["lease"] == "none" and dd.values["lease_stopped"] is True
    assert D.BusDiagnostics()(robot, clock.t).values["lease_expiries"] == 1
    run(robot, clock, 2.0)
    assert speedval_sign(vb.speed_set) == 0 and abs(robot.bus.simulation.world.w) < 0.05
    assert lease_events(robot) == []                  # one log line, not a flood
    assert drive(robot, lease_s=0.0).ok               # a new command clears the note
    dd = {x.name: x for x in D.device_diagnostics(robot, clock.t)}["dc_motor 0"]
    assert dd.level == D.OK and dd.values["lease_stopped"] is False


def test_a_renewed_or_re_sent_lease_keeps_the_motor_running():
    robot, clock = make_robot()
    vb = robot.bus.device(DRIVE)
    assert drive(robot, lease_s=0.5).ok
    for _ in range(10):                       # renew every 0.3 s for 3 s
        run(robot, clock, 0.3)
        res, not_held = robot.renew_lease(DC, [0])
        assert res.code == OK and not_held == []
    for _ in range(10):                       # re-sending the same command renews too
        run(robot, clock, 0.3)
        assert drive(robot, lease_s=0.5).ok
    assert vb.speed_set == THIRTY and robot.lease_expiries == 0
    dd = {x.name: x for x in D.device_diagnostics(robot, clock.t)}["dc_motor 0"]
    assert dd.values["lease"].startswith("0.500 s, ") and "20 renewals" in dd.values["lease"]
    assert D.BusDiagnostics()(robot, clock.t).values["leases"] == "dc_motor_00 (0.5 s)"
    # a renewal can lengthen the lease
    assert robot.renew_lease(DC, [0], 2.0)[0].ok
    run(robot, clock, 1.5)
    assert vb.speed_set == THIRTY
    t_last = clock.t - 1.5
    assert run_until(robot, clock, lambda: speedval_sign(vb.speed_set) == 0, limit=5.0)
    assert t_last + 2.0 <= clock.t <= t_last + 2.0 + 0.011


def test_lease_zero_never_stops_the_motor():
    robot, clock = make_robot()
    vb = robot.bus.device(DRIVE)
    assert drive(robot).ok                            # the default: no lease
    run(robot, clock, 5.0)
    assert vb.speed_set == THIRTY and robot.leases == {} and robot.lease_expiries == 0
    # a leased command followed by one without lease: the lease is cleared
    assert drive(robot, lease_s=0.3).ok and robot.leases
    run(robot, clock, 0.2)
    assert drive(robot, lease_s=0.0).ok and robot.leases == {}
    run(robot, clock, 3.0)
    assert vb.speed_set == THIRTY and robot.lease_expiries == 0
    dd = {x.name: x for x in D.device_diagnostics(robot, clock.t)}["dc_motor 0"]
    assert dd.values["lease"] == "none" and dd.level == D.OK


def test_reset_stop_and_switching_off_clear_the_lease():
    robot, clock = make_robot()
    vb = robot.bus.device(DRIVE)
    assert drive(robot, lease_s=0.3).ok
    assert robot.reset().ok and robot.leases == {}
    run(robot, clock, 1.0)
    assert robot.lease_expiries == 0 and lease_events(robot) == []
    assert robot.activate(DC, [0], [True]).ok
    assert drive(robot, lease_s=0.3).ok
    assert drive(robot, 0.0, lease_s=0.3).ok and robot.leases == {}   # a stop holds no lease
    run(robot, clock, 1.0)
    assert robot.lease_expiries == 0
    assert drive(robot, lease_s=0.3).ok
    assert robot.activate(DC, [0], [False]).ok and robot.leases == {}
    run(robot, clock, 1.0)
    assert robot.lease_expiries == 0 and speedval_sign(vb.speed_set) == 0


def test_a_renewal_never_restarts_a_stopped_motor():
    robot, clock = make_robot()
    vb = robot.bus.device(DRIVE)
    res, not_held = robot.renew_lease(DC, [0])
    assert res.code == REFUSED and not_held == [0] and "holds no lease" in res.message
    assert drive(robot, lease_s=0.2).ok
    run(robot, clock, 0.5)
    assert speedval_sign(vb.speed_set) == 0
    res, not_held = robot.renew_lease(DC, [0])
    assert res.code == REFUSED and not_held == [0]
    assert "lease of 0.2 s ran out" in res.message and "never restarts" in res.message
    run(robot, clock, 0.5)
    assert speedval_sign(vb.speed_set) == 0
    # a renewal that comes after the deadline but before the next poll is too late too
    assert drive(robot, lease_s=0.2).ok
    clock.t += 0.25
    res, not_held = robot.renew_lease(DC, [0])
    assert res.code == REFUSED and not_held == [0] and speedval_sign(vb.speed_set) == 0


def test_lease_and_renewal_requests_are_validated():
    robot, clock = make_robot()
    for bad in (-1.0, math.nan, math.inf):
        res = drive(robot, lease_s=bad)
        assert res.code == BAD_REQUEST and "lease_s" in res.message
        assert robot.renew_lease(DC, [0], bad)[0].code == BAD_REQUEST
    assert robot.bus.device(DRIVE).speed_set != THIRTY and robot.leases == {}
    assert robot.renew_lease("ultrasonic", [0])[0].code == BAD_REQUEST
    assert robot.renew_lease(DC, [])[0].code == BAD_REQUEST
    assert robot.renew_lease(DC, [7])[0].code == INVALID_ID
    # a refused command takes no lease
    assert robot.activate(DC, [0], [False]).ok
    assert drive(robot, lease_s=0.5).code == REFUSED and robot.leases == {}


def test_the_lease_stop_of_a_faulted_board_is_latched():
    robot, clock = make_robot({"robot": {"boards": {"drive": {"command_timeout_ms": 0}}}})
    b, vb = robot.boards["drive"], robot.bus.device(DRIVE)
    assert drive(robot, lease_s=0.5).ok
    run(robot, clock, 0.2)
    assert robot.bus.simulation.control("set_fault", "drive", "missing").ok
    assert run_until(robot, clock, lambda: b.stop_pending, limit=5.0)   # the lease ran out
    assert vb.speed_set == THIRTY                   # watchdog off, board unreachable
    msgs = lease_events(robot)
    assert any("ran out" in m and "stop latched" in m for m in msgs), msgs
    assert robot.bus.simulation.control("clear_faults", "drive").ok
    assert run_until(robot, clock, lambda: not b.stop_pending, limit=5.0)
    assert speedval_sign(vb.speed_set) == 0


def test_leases_are_per_motor_and_cmd_vel_takes_the_drive_over():
    robot, clock = make_robot()
    assert robot.start_homing(0).ok       # cmd_vel drives the wheel of a homed steering only
    assert run_until(robot, clock, lambda: robot.homing_status(0)["done"])
    robot.homing_finished(0)
    vd, vs = robot.bus.device(DRIVE), robot.bus.device(STEER)
    assert robot.set_motors("pservo_motor", [(0, MODE_VELOCITY, 0.3)], 0.4).ok
    assert drive(robot, lease_s=1.0).ok
    assert run_until(robot, clock, lambda: speedval_sign(vs.speed_set) == 0, limit=5.0)
    assert vd.speed_set == THIRTY                   # the drive's lease still runs
    assert robot.lease_expiries == 1 and ("dc_motor", 0) in robot.leases
    robot.drive(0.1, 0.0)                           # cmd_vel: its own 0.5 s timeout applies
    assert robot.leases == {}
    run(robot, clock, 0.2)
    assert vd.speed_set == speedval_from_rad_s(0.1 / float(robot.geo["wheel_radius"]))
    assert robot.lease_expiries == 1


def test_stop_result_codes_are_unchanged_without_lease():
    robot, clock = make_robot()
    assert drive(robot).code == OK
    robot.bus.simulation.control("set_fault", "drive", "missing")
    run(robot, clock, 0.2)
    assert drive(robot, 0.0).code == HARDWARE_FAULT
