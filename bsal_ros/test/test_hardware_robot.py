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

"""The robot core on the simulated bus: polling, caching, every command's
success or reason, homing, cmd_vel, sim control."""
import math

import pytest

from bsal_ros.core.result import BAD_REQUEST, BUSY, INVALID_ID, NOT_SUPPORTED, OK, REFUSED
from bsal_ros.hardware.commands import MODE_DUTY_CYCLE, MODE_VELOCITY
from bsal_ros.hardware.robot import Robot, scale_rates
from bsal_ros.protocol.values import statval_fields

from hardware_helpers import make_robot, run, run_until


def test_one_block_read_per_board_per_poll_at_the_board_rates():
    robot, clock = make_robot()
    t0 = robot.bus.stats.transactions
    updates = run(robot, clock, 10.0, dt=0.005)
    polls = {}
    for u in updates:
        polls[u.board.name] = polls.get(u.board.name, 0) + 1
    # sonar boards: 8.33 Hz update, polled 4 % slower (8.0 Hz); others 20 Hz
    assert polls["sonar_a"] in (79, 80, 81) and polls["sonar_b"] in (79, 80, 81)
    assert polls["drive"] in (199, 200, 201) and polls["accel"] in (199, 200, 201)
    # one block read per poll, plus one keep-alive write per motor-board poll
    keepalives = polls["drive"] + polls["steering"]
    assert robot.bus.stats.transactions - t0 == sum(polls.values()) + keepalives
    assert all(b.ok and b.up for b in robot.boards.values())
    assert all(u.fresh for u in updates)  # the board always had new data


def test_devices_read_the_cache_in_si_units_with_statval():
    robot, clock = make_robot()
    run(robot, clock, 1.0)
    res, states = robot.get_states("ultrasonic", [0])
    assert res.code == OK
    s = states[0]
    # sonar 0 looks along +x from 0.53 m to the wall at 5 m
    assert s.range_m == pytest.approx(4.47, abs=0.05)
    assert s.range_m == pytest.approx(s.delay_us * 1e-6 * 343.0 / 2.0)
    on, up, ok, ms = statval_fields(s.statval)
    assert (on, up, ok) == (True, True, True)
    assert ms == int((s.stamp - robot.base_time) * 1000)
    t = robot.bus.stats.transactions
    robot.get_states("", [])   # reads come from the cache: no bus traffic
    assert robot.bus.stats.transactions == t
    res, _ = robot.get_states("", [1])
    assert res.code == BAD_REQUEST
    assert robot.get_states("ultrasonic", [12])[0].code == INVALID_ID
    assert robot.get_states("laser", [])[0].code == BAD_REQUEST


def test_sonar_sees_an_added_obstacle_and_no_echo_is_inf():
    robot, clock = make_robot()
    assert robot.bus.simulation.control("add_obstacle", "box1", values=[1.5, -0.5, 1.7, 0.5]).ok
    run(robot, clock, 1.0)
    s = robot.get_states("ultrasonic", [0])[1][0]
    assert s.range_m == pytest.approx(1.5 - 0.53, abs=0.05)
    assert robot.bus.simulation.control("remove_obstacle", "box1").ok
    assert robot.bus.simulation.control("remove_obstacle", "box1").code == INVALID_ID
    robot.bus.simulation.control("teleport", values=[0.0, 0.0, 0.0])
    robot.bus.simulation.world.room = [-50.0, -50.0, 50.0, 50.0]
    robot.bus.simulation.world.obstacles.clear()
    run(robot, clock, 1.0)
    s = robot.get_states("ultrasonic", [0])[1][0]
    assert s.delay_us == 0 and math.isinf(s.range_m)


def test_activate_is_all_or_nothing_and_writes_the_enable_register():
    robot, clock = make_robot(activate=False)
    assert robot.activate("ultrasonic", [0, 13], [True, True]).code == INVALID_ID
    assert not robot.device("ultrasonic", 0).on
    assert robot.activate("ultrasonic", [0, 1], [True]).code == BAD_REQUEST
    assert robot.activate("laser", [0], [True]).code == BAD_REQUEST
    res = robot.activate("ultrasonic", [0, 7], [True, True])
    assert res.ok, res.message
    assert robot.bus.device(0x20).enable == 0x01 and robot.bus.device(0x21).enable == 0x02
    assert robot.activate("ultrasonic", [0], [False]).ok
    assert robot.bus.device(0x20).enable == 0x00


def test_set_motors_validation_and_protections():
    robot, clock = make_robot(activate=False)
    assert robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 1.0)]).code == REFUSED  # not active
    assert robot.activate("dc_motor", [0], [True]).ok
    assert robot.set_motors("dc_motor", [(1, MODE_VELOCITY, 1.0)]).code == INVALID_ID
    assert robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 3.0)]).code == BAD_REQUEST
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 101.0)]).code == BAD_REQUEST
    assert robot.set_motors("dc_motor", [(0, 7, 1.0)]).code == BAD_REQUEST
    assert robot.set_motors("dc_motor", [(0, MODE_VELOCITY, float("nan"))]).code == BAD_REQUEST
    assert robot.set_motors("ultrasonic", [(0, MODE_VELOCITY, 1.0)]).code == BAD_REQUEST
    assert robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 1.5)]).ok
    run(robot, clock, 1.0)
    assert robot.bus.simulation.world.w == pytest.approx(1.5, abs=0.02)
    s = robot.get_states("dc_motor", [0])[1][0]
    assert s.speedval == 1500 and not s.duty_mode and s.speed == pytest.approx(1.5)
    # direction change while moving: refused with the reason, nothing changed
    res = robot.set_motors("dc_motor", [(0, MODE_VELOCITY, -1.0)])
    assert res.code == REFUSED and "direction change while moving" in res.message
    assert robot.bus.device(0x30).speed_set == 1500
    # stop, wait until stopped, then reverse is allowed
    assert robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 0.0)]).ok
    assert run_until(robot, clock, lambda: abs(robot.bus.simulation.world.w) < 0.01)
    run(robot, clock, 0.2)
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, -50.0)]).ok
    run(robot, clock, 1.0)
    assert robot.bus.simulation.world.w == pytest.approx(-1.5, abs=0.05)  # 50 % of 3 rad/s no-load


def test_clear_encoders_and_accumulated_counts():
    robot, clock = make_robot()
    robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 2.0)])
    run(robot, clock, 2.0)
    s = robot.get_states("relative_encoder", [0])[1][0]
    assert s.count > 0 and s.position == pytest.approx(robot.bus.simulation.world.phi, abs=0.1)
    assert robot.clear_encoders([]).ok
    robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 0.0)])
    run(robot, clock, 0.05)
    s = robot.get_states("relative_encoder", [0])[1][0]
    assert abs(s.count) < 40
    assert robot.clear_encoders([3]).code == INVALID_ID


def test_sonar_timing_changes_the_board_rate():
    robot, clock = make_robot()
    assert robot.boards["sonar_a"].update_hz() == pytest.approx(1000 / 120)
    res = robot.set_sonar_timing([(i, i % 2, 25) for i in range(6)])
    assert res.ok, res.message
    b = robot.bus.device(0x20)
    assert b.interval_ms == 25 and b.slots == [0, 1, 0, 1, 0, 1]
    assert robot.boards["sonar_a"].update_hz() == pytest.approx(20.0)
    assert robot.set_sonar_timing([(0, 9, -1)]).code == BAD_REQUEST
    assert robot.set_sonar_timing([(0, -1, 2)]).code == BAD_REQUEST
    assert robot.set_sonar_timing([(0, -1, 30), (1, -1, 40)]).code == BAD_REQUEST
    assert robot.set_sonar_timing([(99, 0, -1)]).code == INVALID_ID
    run(robot, clock, 2.0)
    assert robot.boards["sonar_a"].ok


def test_homing_sequence_feedback_and_refusals():
    robot, clock = make_robot()
    assert robot.start_homing(3).code == INVALID_ID
    run(robot, clock, 0.1)
    assert robot.steer_angle() == pytest.approx(0.1, abs=0.01)  # not homed, off centre
    assert robot.start_homing(0).ok
    assert robot.start_homing(0).code == BUSY
    assert robot.set_motors("pservo_motor", [(0, MODE_VELOCITY, 0.5)]).code == REFUSED
    assert robot.activate("pservo_motor", [0], [False]).code == REFUSED
    phases, progress = [], []

    def watch():
        st = robot.homing_status(0)
        if not phases or phases[-1] != st["phase"]:
            phases.append(st["phase"])
        progress.append(st["progress"])

    assert run_until(robot, clock, lambda: robot.homing_status(0)["done"], each=watch)
    assert phases == ["seeking", "backing_off", "centering", "done"]
    assert progress == sorted(progress) and progress[-1] == 1.0
    robot.homing_finished(0)
    s = robot.get_states("pservo_motor", [0])[1][0]
    assert s.homed and not s.homing and s.motor_position == 0.0
    assert robot.bus.simulation.world.steer == 0.0


def test_homing_aborts_when_the_steering_motor_stalls():
    robot, clock = make_robot()
    run(robot, clock, 0.1)
    assert robot.start_homing(0).ok
    run(robot, clock, 0.3)
    assert robot.bus.simulation.control("set_fault", "steering", "stall").ok
    assert run_until(robot, clock, lambda: robot.homing_status(0)["failed"], limit=5.0)
    st = robot.homing_status(0)
    assert st["phase"] == "aborted" and "stalled" in st["reason"]
    assert not robot.get_states("pservo_motor", [0])[1][0].homed


def test_cmd_vel_drives_steers_and_times_out():
    robot, clock = make_robot()
    robot.start_homing(0)
    assert run_until(robot, clock, lambda: robot.homing_status(0)["done"])
    robot.homing_finished(0)
    w, a = robot.drive(0.15, 0.15)
    assert a == pytest.approx(math.atan(0.15 * 0.5 / 0.15))
    run(robot, clock, 2.0, each=lambda: robot.drive(0.15, 0.15))
    assert robot.bus.simulation.world.steer == pytest.approx(a, abs=0.02)
    assert robot.bus.simulation.world.w == pytest.approx(w, abs=0.05)
    run(robot, clock, 2.0)   # no more cmd_vel: stops after the timeout
    assert abs(robot.bus.simulation.world.w) < 0.05
    events = [e.message for e in robot.drain_events()]
    assert sum("cmd_vel timeout" in m for m in events) == 1
    # reversing through cmd_vel stops first, then goes backwards
    run(robot, clock, 1.0, each=lambda: robot.drive(0.15, 0.0))
    run(robot, clock, 3.0, each=lambda: robot.drive(-0.15, 0.0))
    assert robot.bus.simulation.world.w == pytest.approx(-1.5, abs=0.05)


def test_a_non_finite_cmd_vel_is_a_stop_and_polling_goes_on():
    robot, clock = make_robot()
    robot.start_homing(0)
    assert run_until(robot, clock, lambda: robot.homing_status(0)["done"])
    robot.homing_finished(0)
    run(robot, clock, 2.0, each=lambda: robot.drive(0.15, 0.0))
    assert robot.bus.simulation.world.w > 1.0
    robot.drain_events()
    assert robot.drive(float("nan"), 0.0) == robot.drive(0.0, 0.0)
    polls = len(run(robot, clock, 2.0, each=lambda: robot.drive(float("nan"), 0.1)))
    assert polls > 0                    # every cycle still polls the boards
    assert abs(robot.bus.simulation.world.w) < 0.05    # and the drive has stopped
    # two episodes (the single NaN, then the stream after a finite twist),
    # one line each, not one per message
    assert sum("not finite: stopping" in e.message for e in robot.drain_events()) == 2


def test_cmd_vel_needs_a_homed_steering_and_active_motors():
    robot, clock = make_robot()
    run(robot, clock, 0.5, each=lambda: robot.drive(0.1, 0.3))
    # not homed: steering untouched
    assert robot.bus.simulation.world.steer == pytest.approx(0.1, abs=0.01)
    assert any("not homed" in e.message for e in robot.drain_events())
    robot.activate("dc_motor", [0], [False])
    run(robot, clock, 0.5, each=lambda: robot.drive(0.1, 0.0))
    assert any("not active" in e.message for e in robot.drain_events())


def test_reset_stops_everything():
    robot, clock = make_robot()
    robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 40.0)])
    run(robot, clock, 0.5)
    res = robot.reset()
    assert res.ok, res.message
    assert not any(d.on for d in robot.devices.values())
    assert all(b.enable_mask == 0 for b in robot.boards.values())
    run(robot, clock, 1.5)
    assert abs(robot.bus.simulation.world.w) < 0.01
    assert robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 40.0)]).code == REFUSED


def test_sim_control_errors_and_not_supported_on_a_real_bus():
    from bsal_ros.hardware.simulation import not_simulated, simulation_of
    robot, clock = make_robot()
    sim = simulation_of(robot.bus)
    assert sim.control("teleport", values=[1.0]).code == BAD_REQUEST
    assert sim.control("fly").code == BAD_REQUEST
    assert sim.control("set_fault", "nope", "missing").code == INVALID_ID
    assert sim.control("set_fault", "accel", "stall").code == BAD_REQUEST
    assert sim.control("set_fault", "accel", "error_rate", [2.0]).code == BAD_REQUEST
    assert sim.control("set_fault", "accel", "melt").code == BAD_REQUEST
    assert sim.control("add_obstacle", "x", values=[1.0, 2.0]).code == BAD_REQUEST
    assert sim.control("teleport", values=[1.0, 2.0, 0.5]).ok
    assert sim.ground_truth() == pytest.approx((1.0, 2.0, 0.5))

    from bsal_ros.hardware import load_description

    from test_hardware_bus import FakeSMBus
    real = Robot(load_description()["robot"], backend="smbus2", smbus_factory=FakeSMBus)
    assert simulation_of(real.bus) is None
    assert not_simulated(real.backend).code == NOT_SUPPORTED


def test_rate_scaling_for_tests_and_the_bench():
    robot, _ = make_robot()
    desc = robot.desc
    fast = scale_rates(desc, rate_scale=2.0)
    assert fast["boards"]["drive"]["poll_hz"] == 40.0
    assert fast["boards"]["sonar_a"]["interval_ms"] == 20
    at50 = scale_rates(desc, all_boards_hz=50.0)
    for b in at50["boards"].values():
        if b["type"] == "ultrasonic":
            period = b["poll_margin"] * b["interval_ms"] * (max(b["slots"]) + 1) / 1000.0
            assert period == pytest.approx(0.02)
        else:
            assert b["poll_hz"] == 50.0 and b["update_hz"] > 50.0


def test_base_time_moves_before_the_statval_ms_field_wraps():
    robot, clock = make_robot()
    base = robot.base_time
    assert not robot.maybe_roll_base_time(base + 3600.0)
    assert robot.maybe_roll_base_time(base + 14400.5)
    assert robot.base_time == math.floor(base + 14400.5)
    # the rollover never exceeds what 24 bits of milliseconds hold (4.66 h)
    r2, _ = make_robot(base_time_rollover_s=1e9)
    assert r2.base_time_rollover_s < (1 << 24) / 1000.0


def test_same_seed_same_world_bit_for_bit_and_another_seed_differs():
    def ranges(seed):
        robot, clock = make_robot(seed=seed)
        run(robot, clock, 2.0)
        return [s.delay_us for s in robot.get_states("ultrasonic")[1]]
    assert ranges(5) == ranges(5)
    assert ranges(5) != ranges(6)


class SimBehindSmbus:
    """A fake smbus2.SMBus whose devices are the simulated boards: the smbus2
    backend then runs the very same board code against register bytes."""

    sim = None

    def __init__(self, n):
        self.n = n

    def read_byte_data(self, a, r):
        return self.sim.read_byte_data(a, r)

    def write_byte_data(self, a, r, v):
        self.sim.write_byte_data(a, r, v)

    def read_i2c_block_data(self, a, r, n):
        return self.sim.read_i2c_block_data(a, r, n)

    def write_i2c_block_data(self, a, r, d):
        self.sim.write_i2c_block_data(a, r, d)


def test_smbus2_backend_drives_the_same_board_code():
    from bsal_ros.hardware import load_description
    from bsal_ros.hardware.sim import build_sim_bus

    from hardware_helpers import FakeClock
    clock = FakeClock()
    desc = load_description()["robot"]
    SimBehindSmbus.sim = build_sim_bus(desc, clock)
    world = SimBehindSmbus.sim.simulation.world
    robot = Robot(desc, backend="smbus2", i2c_bus=2, smbus_factory=SimBehindSmbus,
                  clock=clock, wall=clock)
    robot.start(activate=True)
    assert robot.bus.name == "i2c-2"
    assert robot.set_motors("dc_motor", [(0, MODE_VELOCITY, 1.0)]).ok
    run(robot, clock, 1.0)
    assert world.w == pytest.approx(1.0, abs=0.02)
    s = robot.get_states("ultrasonic", [0])[1][0]
    assert s.range_m == pytest.approx(5.0 - 0.53 - world.x, abs=0.1)
    assert robot.bus.stats.transactions > 50 and all(b.ok for b in robot.boards.values())
