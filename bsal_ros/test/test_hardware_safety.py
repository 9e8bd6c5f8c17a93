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

"""Safety of the motors (docs/HARDWARE.md "Safety"): the motor boards' own
command watchdog, the keep-alive the poller sends, the latched stop that is
never refused, the per-motor stop, and the start-up check of poll rate
against timeout. The simulated boards run on a fake clock: deterministic."""
import pytest

from bsal_ros.core.result import HARDWARE_FAULT, OK
from bsal_ros.hardware import load_description, registers as regs, Robot
from bsal_ros.hardware.commands import MODE_DUTY_CYCLE, MODE_VELOCITY
from bsal_ros.hardware.description import DescriptionError
from bsal_ros.hardware.robot import scale_rates
from bsal_ros.hardware.sim import build_sim_bus
from bsal_ros.protocol.values import speedval_sign

from hardware_helpers import FakeClock, make_robot, run, run_until, speedval_from_duty

DRIVE, DRIVE2 = 0x30, 0x32
ZERO = 0x8000
THIRTY = speedval_from_duty(30.0)


def read_dc(bus, addr=DRIVE):
    block = bytes(bus.read_i2c_block_data(addr, 0x01, 8))
    st, seq, sset, smeas, count = regs.DC_BLOCK.unpack(block)
    return st, sset


# ---- the board's own watchdog, at register level ------------------------------
def test_board_watchdog_stops_the_motor_when_refreshes_stop():
    desc = load_description()["robot"]
    clock = FakeClock()
    bus = build_sim_bus(desc, clock)
    world = bus.simulation.world
    bus.write_byte_data(DRIVE, 0x40, regs.EN_MOTOR | regs.EN_ENCODER)
    assert bus.read_i2c_block_data(DRIVE, 0x4A, 2) == regs.u16(500)   # power-on default
    bus.write_i2c_block_data(DRIVE, 0x42, regs.u16(THIRTY))
    # refreshed every 100 ms for 2 s (the poller's keep-alive): keeps running
    for i in range(20):
        clock.t += 0.1
        bus.write_byte_data(DRIVE, 0x4C, i)
        st, sset = read_dc(bus)
        assert sset == THIRTY and not st & regs.ST_TIMEOUT
    assert world.w > 0.5
    last_feed = clock.t
    # no more writes (node killed, bus lost): the board stops by itself
    while clock.t < last_feed + 5.0:
        clock.t += 0.01
        world.sync()                 # the board's own clock runs without any bus traffic
        if speedval_sign(bus.device(DRIVE).speed_set) == 0:
            break
    assert bus.device(DRIVE).speed_set == ZERO
    assert clock.t - last_feed >= 0.5          # not before the timeout
    assert clock.t - last_feed <= 0.5 + 0.02   # within the timeout (+ the physics step)
    st, sset = read_dc(bus)
    assert sset == ZERO and st & regs.ST_TIMEOUT and world.drive_cmd == (True, 0.0)
    clock.t += 2.0
    world.sync()
    assert abs(world.w) < 1e-3                 # the wheel has spun down
    # a new speed write clears ST_TIMEOUT and drives again
    bus.write_i2c_block_data(DRIVE, 0x42, regs.u16(THIRTY))
    clock.t += 0.1
    st, sset = read_dc(bus)
    assert sset == THIRTY and not st & regs.ST_TIMEOUT
    # TIMEOUT 0 switches the watchdog off
    bus.write_i2c_block_data(DRIVE, 0x4A, regs.u16(0))
    clock.t += 3.0
    assert read_dc(bus)[1] == THIRTY


def test_watchdog_of_a_stuck_board_still_stops_the_motor():
    """stuck = the register image the master reads is frozen and its writes are
    lost; the board's control loop (and its watchdog) keep running, so with no
    write arriving the motor stops while the frozen image still says 30 %."""
    desc = load_description()["robot"]
    clock = FakeClock()
    bus = build_sim_bus(desc, clock)
    world = bus.simulation.world
    bus.write_byte_data(DRIVE, 0x40, regs.EN_MOTOR)
    bus.write_i2c_block_data(DRIVE, 0x42, regs.u16(THIRTY))
    clock.t += 0.3
    read_dc(bus)
    bus.set_fault(DRIVE, "stuck")
    assert read_dc(bus)[1] == THIRTY
    for i in range(30):                    # the keep-alives are lost
        clock.t += 0.05
        bus.write_byte_data(DRIVE, 0x4C, i)
        world.sync()
    assert read_dc(bus)[1] == THIRTY        # what the master sees (frozen)
    assert bus.device(DRIVE).speed_set == ZERO and world.drive_cmd == (True, 0.0)


def test_the_poller_keeps_the_watchdog_fed_and_the_motor_running():
    robot, clock = make_robot()
    assert robot.bus.device(DRIVE).timeout_ms == 500       # written at start-up
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 30.0)]).ok
    run(robot, clock, 5.0)
    b = robot.boards["drive"]
    assert robot.bus.device(DRIVE).speed_set == THIRTY and not b.timed_out
    assert robot.bus.device(DRIVE).watchdog_trips == 0 and b.keepalives >= 99
    # the poll thread stops (node hung or killed): the board stops the motor itself
    t_last = clock.t
    clock.t += 1.0
    robot.bus.simulation.world.sync()
    assert robot.bus.device(DRIVE).speed_set == ZERO
    run(robot, clock, 0.2)
    assert b.timed_out
    s = robot.get_states("dc_motor", [0])[1][0]
    assert speedval_sign(s.speedval) == 0 and "watchdog" in s.fault and s.watchdog_stopped
    assert clock.t > t_last


# ---- the latched stop ---------------------------------------------------------------
def record_writes(robot, addr):
    log = []
    bus = robot.bus
    orig_block, orig_byte = bus.write_i2c_block_data, bus.write_byte_data

    def block(a, reg, data):
        orig_block(a, reg, data)          # raises on a bus fault: not recorded
        if a == addr:
            log.append((reg, list(data)))

    def byte(a, reg, value):
        orig_byte(a, reg, value)
        if a == addr:
            log.append((reg, [value]))
    bus.write_i2c_block_data, bus.write_byte_data = block, byte
    return log


@pytest.mark.parametrize("fault", ["missing", "stuck"])
@pytest.mark.parametrize("timeout_ms", [0, 500])
def test_stop_to_a_faulted_board_is_latched_and_applied_when_it_answers(fault, timeout_ms):
    robot, clock = make_robot({"robot": {"boards": {"drive": {"command_timeout_ms": timeout_ms}}}})
    b, vb = robot.boards["drive"], robot.bus.device(DRIVE)
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 30.0)]).ok
    run(robot, clock, 1.0)
    assert robot.bus.simulation.control("set_fault", "drive", fault).ok
    assert run_until(robot, clock, lambda: not (b.up and b.ok), limit=5.0)
    # a speed is still refused (nothing changed) ...
    res = robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 20.0)])
    assert res.code == HARDWARE_FAULT and "nothing changed" in res.message
    # ... a stop is not: latched, and the answer says what happened
    res = robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 0.0)])
    assert res.code == HARDWARE_FAULT
    assert "stop latched: re-sent when the board answers" in res.message
    if timeout_ms:
        assert "the board's own watchdog stops the motor within 500 ms" in res.message
    else:
        assert "watchdog is off" in res.message
    assert b.stop_pending
    s = robot.get_states("dc_motor", [0])[1][0]
    assert s.stop_pending and "stop latched" in s.fault
    run(robot, clock, 1.0)                      # the fault lasts 1 s
    if timeout_ms == 0:
        assert vb.speed_set == THIRTY           # only the latch can stop it now
    writes = record_writes(robot, DRIVE)
    robot.bus.simulation.control("clear_faults", "drive")
    assert run_until(robot, clock, lambda: not b.stop_pending and b.ok, limit=10.0)
    assert writes and writes[0] == (0x42, regs.u16(ZERO))   # the stop goes first
    assert vb.speed_set == ZERO and robot.bus.simulation.world.drive_cmd == (True, 0.0)
    run(robot, clock, 2.0)
    assert abs(robot.bus.simulation.world.w) < 0.01
    s = robot.get_states("dc_motor", [0])[1][0]
    assert speedval_sign(s.speedval) == 0 and not s.stop_pending
    assert any("latched stop applied" in e.message for e in robot.drain_events())
    # the motor can be driven again
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 20.0)]).ok


def test_nothing_is_written_before_the_latched_stop():
    """A command to a board that came back, before the poller re-sent the stop,
    still writes the stop first."""
    robot, clock = make_robot({"robot": {"boards": {"drive": {"command_timeout_ms": 0}}}})
    b = robot.boards["drive"]
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 30.0)]).ok
    run(robot, clock, 0.5)
    robot.bus.simulation.control("set_fault", "drive", "missing")
    assert run_until(robot, clock, lambda: not b.up, limit=5.0)
    assert robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 0.0)]).code == HARDWARE_FAULT
    robot.bus.simulation.control("clear_faults", "drive")
    writes = record_writes(robot, DRIVE)
    b.up, b.ok = True, True          # as if a poll had just seen it (no refresh yet)
    assert robot.clear_encoders([0]).ok
    # stop (rad/s form), then clear
    assert writes[0] == (0x42, regs.u16(0)) and writes[1][0] == 0x41


def test_stop_of_the_steering_while_homing_aborts_homing():
    robot, clock = make_robot()
    assert robot.start_homing(0).ok
    run(robot, clock, 0.3)
    assert robot.set_motors("pservo_motor", [(0, MODE_VELOCITY, 0.0)]).code == OK
    run(robot, clock, 0.3)
    st = robot.homing_status(0)
    assert st["failed"] and st["phase"] == "cancelled"
    assert abs(robot.bus.simulation.world.steer_rate) < 0.05


# ---- multi-motor stop -----------------------------------------------------------------
TWO_DRIVES = {"robot": {
    "boards": {"drive2": {"type": "dc_motor", "address": DRIVE2, "update_hz": 25.0,
                          "poll_hz": 20.0, "command_timeout_ms": 0}},
    "devices": {"dc_motor": {"aux_motor": {"id": 1, "board": "drive2", "channel": 0}}}}}


def test_multi_motor_stop_stops_every_motor_it_can():
    robot, clock = make_robot(TWO_DRIVES)
    both = [(0, MODE_DUTY_CYCLE, 30.0), (1, MODE_DUTY_CYCLE, 30.0)]
    assert robot.set_motors("dc_motor", both).ok
    run(robot, clock, 0.5)
    v1, v2 = robot.bus.device(DRIVE), robot.bus.device(DRIVE2)
    assert v1.speed_set == THIRTY and v2.speed_set == THIRTY
    robot.bus.simulation.control("set_fault", "drive2", "missing")
    b2 = robot.boards["drive2"]
    assert run_until(robot, clock, lambda: not b2.up, limit=5.0)
    # a non-stop command stays all-or-nothing
    res = robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 40.0), (1, MODE_DUTY_CYCLE, 40.0)])
    assert res.code == HARDWARE_FAULT and "nothing changed" in res.message
    assert v1.speed_set == THIRTY
    # a stop of both: the healthy one is stopped now, the faulted one latched
    res = robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 0.0), (1, MODE_DUTY_CYCLE, 0.0)])
    assert res.code == HARDWARE_FAULT
    assert "dc_motor_01" in res.message and "stop latched" in res.message
    assert "stopped: dc_motor_00" in res.message
    assert v1.speed_set == ZERO and v2.speed_set == THIRTY
    assert not robot.boards["drive"].stop_pending and b2.stop_pending
    robot.bus.simulation.control("clear_faults", "drive2")
    assert run_until(robot, clock, lambda: not b2.stop_pending, limit=10.0)
    assert v2.speed_set == ZERO


def test_stop_of_a_motor_that_is_off_is_not_refused():
    robot, clock = make_robot()
    assert robot.activate("dc_motor", [0], [False]).ok
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 0.0)]).ok
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 10.0)]).code != OK


# ---- configuration ----------------------------------------------------------------------
def test_poll_rate_must_beat_the_command_timeout():
    with pytest.raises(DescriptionError) as exc:
        load_description(overrides={"robot": {"boards": {"drive": {"poll_hz": 3.0}}}})
    msg = str(exc.value)
    assert "board drive" in msg and "command_timeout_ms 500" in msg and "333 ms" in msg
    assert "poll_hz >= 4" in msg
    # a longer timeout, or the watchdog off, makes the same rate acceptable
    load_description(overrides={"robot": {"boards": {"drive": {"poll_hz": 3.0,
                                                               "command_timeout_ms": 1000}}}})
    load_description(overrides={"robot": {"boards": {"drive": {"poll_hz": 3.0,
                                                               "command_timeout_ms": 0}}}})
    for bad in (-1, 70000, 0.5, "fast"):
        with pytest.raises(DescriptionError, match="command_timeout_ms"):
            load_description(overrides={"robot": {"boards": {"steering":
                                                             {"command_timeout_ms": bad}}}})
    # the rates as scaled at start-up are checked too (Robot refuses them)
    desc = load_description()["robot"]
    with pytest.raises(DescriptionError, match="does not beat command_timeout_ms"):
        Robot(scale_rates(desc, rate_scale=0.05), clock=FakeClock(), wall=FakeClock())


def test_bus_status_names_pending_stops():
    from bsal_ros.hardware import diagnostics as D
    robot, clock = make_robot()
    robot.bus.simulation.control("set_fault", "drive", "missing")
    run(robot, clock, 0.2)
    robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 0.0)])
    d = D.BusDiagnostics()(robot, clock.t)
    assert d.values["stops_pending"] == "drive"
    dd = {x.name: x for x in D.device_diagnostics(robot, clock.t)}["dc_motor 0"]
    assert dd.level == D.ERROR and dd.values["stop_pending"] is True
    robot.bus.simulation.control("clear_faults", "drive")
    assert run_until(robot, clock, lambda: not robot.boards["drive"].stop_pending, limit=10.0)
    assert D.BusDiagnostics()(robot, clock.t).values["stops_pending"] == "none"


def test_timeout_register_is_written_when_a_board_comes_back_or_after_a_reset():
    desc = load_description()["robot"]
    clock = FakeClock()
    robot = Robot(desc, clock=clock, wall=clock)
    vb = robot.bus.device(DRIVE)
    vb.default_timeout_ms = vb.timeout_ms = 2000     # a board whose own default differs
    robot.bus.simulation.control("set_fault", "drive", "missing")
    robot.start(activate=True)
    run(robot, clock, 0.5)
    assert vb.timeout_ms == 2000
    robot.bus.simulation.control("clear_faults", "drive")
    assert run_until(robot, clock, lambda: vb.timeout_ms == 500, limit=5.0)
    assert robot.reset().ok and vb.timeout_ms == 2000            # reset: board default
    assert run_until(robot, clock, lambda: vb.timeout_ms == 500, limit=5.0)
