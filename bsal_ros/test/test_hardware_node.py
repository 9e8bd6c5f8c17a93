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

"""The hardware node in-process on the simulated bus: every topic, every
service, the home_steering action with feedback, rejection and cancel,
cmd_vel with its timeout, and the settable pose."""
import contextlib
import math

import pytest

pytest.importorskip("rclpy")

from action_msgs.msg import GoalStatus  # noqa: E402, I100 - after importorskip / the fixtures above
from bsal_interfaces.action import HomeSteering  # noqa: E402
from bsal_interfaces.msg import DeviceStateArray, MotorCommand, Result, SonarTiming  # noqa: E402
from bsal_interfaces.srv import (ActivateDevices, ClearEncoders, GetDeviceStates,  # noqa: E402
                                 ListDevices, Reset, SetMotors, SetSonarTiming, SimControl)
from builtin_interfaces.msg import Time  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import PoseWithCovarianceStamped, Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import Imu, JointState, Range  # noqa: E402

from bsal_ros.protocol.values import statval_fields  # noqa: E402

from hardware_node_helpers import wait_for  # noqa: E402

pytestmark = pytest.mark.ros

NS = "hw_node_test"
FAST = {"rate_scale": 2.0, "diagnostics_period": 0.25,
        "robot": {"sim": {"homing_speed": 4.0, "initial_steering": 0.2}}}


NODE_KW = dict(auto_home=False, **FAST)
LISTEN = [(Range, f"sonar_{i:02d}", {"qos": "sensor"}) for i in range(12)] + [
    (JointState, "joint_states", {}), (Odometry, "odom", {}), (Odometry, "ground_truth", {}),
    (PoseWithCovarianceStamped, "pose", {}), (Imu, "imu", {"qos": "sensor"}),
    (DeviceStateArray, "encoders", {}), (DeviceStateArray, "motor_states", {}),
    (DeviceStateArray, "device_states", {"keep": 200}), (Time, "base_time", {"qos": "latched"}),
    (DiagnosticArray, "/diagnostics", {})]


@pytest.fixture(scope="module")
def env(hardware_node_env):
    """The module's hardware node and probe (conftest: hardware node fixtures)."""
    return hardware_node_env


def states(probe, cls, ids=()):
    resp = probe.call(GetDeviceStates, "get_device_states",
                      GetDeviceStates.Request(device_class=cls, ids=list(ids)))
    return resp


def home(probe):
    cli = probe.action_client(HomeSteering, "home_steering")
    gh = probe.wait_future(cli.send_goal_async(HomeSteering.Goal(id=0, timeout_s=20.0)))
    assert gh.accepted
    res = probe.wait_future(gh.get_result_async())
    return res


def test_sonar_ranges_frames_and_qos(env):
    p = env.probe
    m = p.wait_msg("sonar_00", lambda m: math.isfinite(m.range))
    assert m.header.frame_id == "sonar_00_link"
    assert m.radiation_type == Range.ULTRASOUND
    assert m.range == pytest.approx(4.47, abs=0.1)      # the wall at x = 5 m
    assert m.min_range == pytest.approx(0.15) and m.max_range == pytest.approx(5.0)
    assert p.wait_msg("sonar_11") is not None
    pubs = env.node.get_publishers_info_by_topic(f"/{NS}/sonar_05")
    assert pubs and pubs[0].qos_profile.reliability.name == "BEST_EFFORT"


def test_state_topics_and_base_time(env):
    p = env.probe
    js = p.wait_msg("joint_states")
    assert list(js.name) == ["steering_joint", "drive_wheel_joint"]
    assert js.position[0] == pytest.approx(0.2, abs=0.02)
    odom = p.wait_msg("odom")
    assert (odom.header.frame_id, odom.child_frame_id) == ("odom", "base_link")
    assert p.wait_msg("pose").header.frame_id == "map"
    assert p.wait_msg("ground_truth") is not None
    imu = p.wait_msg("imu")
    assert imu.orientation_covariance[0] == -1.0 and imu.header.frame_id == "accelerometer_link"
    enc = p.wait_msg("encoders")
    assert {s.device_class for s in enc.states} <= {"relative_encoder", "absolute_encoder"}
    mot = p.wait_msg("motor_states")
    assert {s.device_class for s in mot.states} <= {"dc_motor", "pservo_motor"}
    base = p.wait_msg("base_time")
    assert base is not None and base.sec == int(env.node.robot.base_time)
    arr = p.wait_msg("device_states",
                     lambda a: any(s.device_class == "ultrasonic" for s in a.states))
    s = [s for s in arr.states if s.device_class == "ultrasonic"][0]
    on, up, ok, ms = statval_fields(s.statval)
    assert on and up and ok and s.on and s.up and s.ok
    stamp = s.header.stamp.sec + s.header.stamp.nanosec * 1e-9
    assert ms == pytest.approx((stamp - (base.sec + base.nanosec * 1e-9)) * 1000.0, abs=1.0)


def test_diagnostics_one_status_per_device(env):
    def dc_ok(a):
        return len(a.status) == 18 and any(
            s.name == f"/{NS}/hardware_node: dc_motor 0" and s.level == DiagnosticStatus.OK
            for s in a.status)
    arr = env.probe.wait_msg("/diagnostics", dc_ok)
    names = [s.name for s in arr.status]
    assert f"/{NS}/hardware_node: ultrasonic 0" in names
    assert f"/{NS}/hardware_node: pservo_motor 0" in names
    bus = {s.name: s for s in arr.status}[f"/{NS}/hardware_node: bus"]    # one bus-wide status
    assert bus.level == DiagnosticStatus.OK and bus.hardware_id == "sim"
    assert {"transactions", "errors", "boards_ok"} <= {kv.key for kv in bus.values}
    st = {s.name: s for s in arr.status}[f"/{NS}/hardware_node: dc_motor 0"]
    assert st.level == DiagnosticStatus.OK and st.hardware_id == "sim:0x30"
    assert {"statval", "age_s", "rate_hz", "speedval"} <= {kv.key for kv in st.values}


def test_list_devices_and_get_states(env):
    p = env.probe
    resp = p.call(ListDevices, "list_devices", ListDevices.Request())
    assert resp.result.code == Result.OK and len(resp.devices) == 17
    d = [d for d in resp.devices if d.device_class == "ultrasonic" and d.id == 7][0]
    assert (d.board, d.address, d.channel, d.frame_id) == ("sonar_b", 0x21, 1, "sonar_07_link")
    r = states(p, "ultrasonic", [0, 1])
    assert r.result.code == Result.OK and [s.id for s in r.states] == [0, 1]
    assert states(p, "ultrasonic", [40]).result.code == Result.INVALID_ID
    assert states(p, "warp_drive").result.code == Result.BAD_REQUEST
    assert len(states(p, "").states) == 17


@contextlib.contextmanager
def brak_homing_speed(env):
    """Home at Brak's own 0.8 rad/s (config/brak.yaml), not the module's 4.0:
    each phase then lasts a second or more, so a starved executor (the
    parallel phase, traced) still samples it, and a second goal or a cancel
    still finds the first goal running (at 4.0 the whole homing is about 0.6 s)."""
    sim = env.node.robot.bus.simulation.world.sim
    fast = sim["homing_speed"]
    sim["homing_speed"] = 0.8
    try:
        yield
    finally:
        sim["homing_speed"] = fast


def test_action_homes_with_feedback_rejects_a_second_goal(env):
    group = env.node.homing._group
    before = len(group.entities)
    with brak_homing_speed(env):
        homes_with_feedback_and_rejects_a_second_goal(env)
    # the goal's check timer left the server's group with the goal (rclpy's
    # destroy_timer keeps a reference there for good: one per goal, a soak's
    # slow growth; nodes/ros_entities.py)
    assert len(group.entities) == before, group.entities


def homes_with_feedback_and_rejects_a_second_goal(env):
    p = env.probe
    cli = p.action_client(HomeSteering, "home_steering")
    feedback = []
    gh = p.wait_future(cli.send_goal_async(HomeSteering.Goal(id=0, timeout_s=20.0),
                                           feedback_callback=lambda f: feedback.append(f.feedback)))
    assert gh.accepted
    gh2 = p.wait_future(cli.send_goal_async(HomeSteering.Goal(id=0)))
    assert not gh2.accepted                           # rejected while one runs
    res = p.wait_future(gh.get_result_async())
    assert res.status == GoalStatus.STATUS_SUCCEEDED
    assert res.result.result.code == Result.OK and abs(res.result.angle) < 0.01
    # the phases in the board's order, seeking first; which later ones show is
    # the poll's sampling (cc40: a starved executor saw seeking, then done;
    # the whole sequence is test_hardware_robot's, on a stepped clock)
    order = ["seeking", "backing_off", "centering", "done"]
    phases = [f.phase for f in feedback]
    assert phases and phases[0] == "seeking", phases
    assert all(ph in order for ph in phases), phases
    assert [order.index(ph) for ph in phases] == sorted(order.index(ph) for ph in phases), phases
    prog = [f.progress for f in feedback]
    assert prog == sorted(prog)
    # toward the + limit switch, then back to the centre. Feedback samples the
    # polled readings, so how close to the limit one lands depends on how the
    # process was scheduled (a starved run's samples skipped 0.6-1.3 rad)
    seeking = [f.angle for f in feedback if f.phase == "seeking"]
    returning = [f.angle for f in feedback if f.phase in ("backing_off", "centering")]
    assert seeking == sorted(seeking) and returning == sorted(returning, reverse=True)
    # it moved: off centre at the start (not homed), centred at the end
    angles = [f.angle for f in feedback] + [res.result.angle]
    assert max(angles) - min(angles) > 0.05, angles
    r = states(p, "pservo_motor", [0]).states[0]
    assert r.homed and not r.homing


def test_action_cancel_and_invalid_id(env):
    p = env.probe
    cli = p.action_client(HomeSteering, "home_steering")
    seen = []
    with brak_homing_speed(env):
        gh = p.wait_future(cli.send_goal_async(HomeSteering.Goal(id=0),
                                               feedback_callback=lambda f: seen.append(f)))
        assert gh.accepted
        assert wait_for(lambda: len(seen) >= 2)
        p.wait_future(gh.cancel_goal_async())
        res = p.wait_future(gh.get_result_async())
    assert res.status == GoalStatus.STATUS_CANCELED
    assert res.result.result.code == Result.REFUSED and "cancelled" in res.result.result.message
    gh = p.wait_future(cli.send_goal_async(HomeSteering.Goal(id=9)))
    res = p.wait_future(gh.get_result_async())
    assert res.status == GoalStatus.STATUS_ABORTED and res.result.result.code == Result.INVALID_ID
    res = home(p)                                     # homing works again afterwards
    assert res.status == GoalStatus.STATUS_SUCCEEDED


def mc(i, mode, v):
    return MotorCommand(id=i, mode=mode, value=v)


def test_set_motors_and_direction_protection(env):
    p = env.probe
    ok = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[mc(0, MotorCommand.MODE_VELOCITY, 1.0)]))
    assert ok.result.code == Result.OK
    assert wait_for(lambda: states(p, "dc_motor", [0]).states[0].speedval == 1000)
    assert wait_for(lambda: p.last("joint_states") and p.last("joint_states").velocity[1] > 0.5)
    rev = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[mc(0, MotorCommand.MODE_DUTY_CYCLE, -30.0)]))
    assert rev.result.code == Result.REFUSED and "direction" in rev.result.message
    bad = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[mc(5, MotorCommand.MODE_VELOCITY, 1.0)]))
    assert bad.result.code == Result.INVALID_ID
    stop = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[mc(0, MotorCommand.MODE_VELOCITY, 0.0)]))
    assert stop.result.code == Result.OK


def the(states, cls, i):
    """The one state of device (cls, i) in a list of DeviceState messages."""
    found = [s for s in states if s.device_class == cls and s.id == i]
    assert len(found) == 1, (cls, i, found)
    return found[0]


def test_a_command_answer_carries_the_states_it_made(env):
    """Issue 31: a command's answer carries the states of the boards it changed,
    read right after it (the RCI gateway serves the next reads from them), and
    device_states shows them; a command that changed nothing carries none."""
    p = env.probe
    ok = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[mc(0, MotorCommand.MODE_VELOCITY, 1.0)]))
    assert ok.result.code == Result.OK
    motor = the(ok.states, "dc_motor", 0)
    assert motor.speedval == 1000
    answered_at = Time(sec=motor.header.stamp.sec, nanosec=motor.header.stamp.nanosec)

    def later_than_the_answer(m):
        s = [x for x in m.states if x.device_class == "dc_motor" and x.id == 0]
        return s and (s[0].header.stamp.sec, s[0].header.stamp.nanosec) >= (
            answered_at.sec, answered_at.nanosec) and s[0].speedval == 1000
    assert p.wait_msg("device_states", later_than_the_answer) is not None
    bad = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[mc(5, MotorCommand.MODE_VELOCITY, 1.0)]))
    assert bad.result.code == Result.INVALID_ID and list(bad.states) == []
    stop = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[mc(0, MotorCommand.MODE_VELOCITY, 0.0)]))
    assert the(stop.states, "dc_motor", 0).speedval & 0x07FF == 0
    clear = p.call(ClearEncoders, "clear_encoders", ClearEncoders.Request(ids=[0]))
    assert clear.result.code == Result.OK
    assert the(clear.states, "relative_encoder", 0).count == 0
    off = p.call(ActivateDevices, "activate_devices", ActivateDevices.Request(
        device_class="ultrasonic", ids=[3], active=[False]))
    assert not the(off.states, "ultrasonic", 3).on
    on = p.call(ActivateDevices, "activate_devices", ActivateDevices.Request(
        device_class="ultrasonic", ids=[3], active=[True]))
    assert the(on.states, "ultrasonic", 3).on


def test_clear_encoders_sonar_timing_activate(env):
    p = env.probe
    assert p.call(ClearEncoders, "clear_encoders",
                  ClearEncoders.Request(ids=[0])).result.code == Result.OK
    assert p.call(ClearEncoders, "clear_encoders",
                  ClearEncoders.Request(ids=[4])).result.code == Result.INVALID_ID
    t = [SonarTiming(id=i, firing_slot=i % 3, interval_ms=20) for i in range(6)]
    r = p.call(SetSonarTiming, "set_sonar_timing", SetSonarTiming.Request(timings=t))
    assert r.result.code == Result.OK, r.result.message
    r = p.call(SetSonarTiming, "set_sonar_timing", SetSonarTiming.Request(
        timings=[SonarTiming(id=0, firing_slot=8, interval_ms=-1)]))
    assert r.result.code == Result.BAD_REQUEST
    r = p.call(ActivateDevices, "activate_devices", ActivateDevices.Request(
        device_class="ultrasonic", ids=[3], active=[False]))
    assert r.result.code == Result.OK
    assert wait_for(lambda: not states(p, "ultrasonic", [3]).states[0].on)
    p.clear("sonar_03")
    assert wait_for(lambda: p.last("sonar_00") is not None)
    assert p.call(ActivateDevices, "activate_devices", ActivateDevices.Request(
        device_class="ultrasonic", ids=[3], active=[True])).result.code == Result.OK
    r = p.call(ActivateDevices, "activate_devices", ActivateDevices.Request(
        device_class="ultrasonic", ids=[3, 4], active=[True]))
    assert r.result.code == Result.BAD_REQUEST


def test_cmd_vel_drives_the_tricycle_and_times_out(env):
    p = env.probe
    home(p)
    pub = p.create_publisher(Twist, "cmd_vel", 10)
    start = p.wait_msg("ground_truth").pose.pose.position
    tw = Twist()
    tw.linear.x, tw.angular.z = 0.15, 0.2

    def moved():
        pub.publish(tw)
        pos = p.last("ground_truth").pose.pose.position
        return math.hypot(pos.x - start.x, pos.y - start.y) > 0.3
    assert wait_for(moved, step=0.05)
    # odometry follows the ground truth
    gt = p.last("ground_truth").pose.pose.position
    od = p.last("pose").pose.pose.position
    assert math.hypot(gt.x - od.x, gt.y - od.y) < 0.05 + 0.05 * 0.3 * 10
    js = p.last("joint_states")
    assert js.position[0] == pytest.approx(math.atan(0.2 * 0.5 / 0.15), abs=0.1)
    # no more cmd_vel: the drive stops after the 0.5 s timeout
    assert wait_for(lambda: abs(p.last("ground_truth").twist.twist.linear.x) < 1e-3)


def test_pose_is_settable_from_initialpose_and_set_pose(env):
    p = env.probe
    for topic, x in (("initialpose", 1.25), ("set_pose", -2.5)):
        pub = p.create_publisher(PoseWithCovarianceStamped, topic, 10)
        m = PoseWithCovarianceStamped()
        m.header.frame_id = "map"
        m.pose.pose.position.x, m.pose.pose.position.y = x, 2.0
        m.pose.pose.orientation.z, m.pose.pose.orientation.w = math.sin(0.25), math.cos(0.25)
        m.pose.covariance[0] = 0.04
        assert wait_for(lambda: pub.get_subscription_count() > 0)
        pub.publish(m)
        got = p.wait_msg("pose", lambda q: abs(q.pose.pose.position.x - x) < 0.01)
        assert got is not None and got.pose.covariance[0] >= 0.04
        yaw = 2 * math.atan2(got.pose.pose.orientation.z, got.pose.pose.orientation.w)
        assert yaw == pytest.approx(0.5, abs=0.01)

    # A pose with a NaN is ignored: the estimate stays where set_pose put it.
    p.clear("pose")
    bad = PoseWithCovarianceStamped()
    bad.pose.pose.position.x, bad.pose.pose.orientation.w = float("nan"), 1.0
    pub.publish(bad)
    marker = PoseWithCovarianceStamped()
    marker.pose.pose.position.x, marker.pose.pose.orientation.w = 3.5, 1.0
    pub.publish(marker)          # same topic, so it arrives after the NaN one
    assert p.wait_msg("pose", lambda q: abs(q.pose.pose.position.x - 3.5) < 0.01) is not None
    with p._lock:
        seen = list(p.msgs["pose"])
    assert seen and all(math.isfinite(q.pose.pose.position.x) for q in seen)


def test_sim_control_and_reset(env):
    p = env.probe
    r = p.call(SimControl, "sim_control", SimControl.Request(
        command="add_obstacle", target="wall2", values=[1.2, -1.0, 1.4, 1.0]))
    assert r.result.code == Result.OK
    p.call(SimControl, "sim_control",
           SimControl.Request(command="teleport", values=[0.0, 0.0, 0.0]))
    assert p.wait_msg("sonar_00", lambda m: abs(m.range - (1.2 - 0.53)) < 0.1) is not None
    r = p.call(SimControl, "sim_control", SimControl.Request(command="explode"))
    assert r.result.code == Result.BAD_REQUEST and r.result.message
    r = p.call(Reset, "reset", Reset.Request())
    assert r.result.code == Result.OK
    # its answer: every device, each as the reset left it (issue 31)
    assert len(r.states) == len(states(p, "").states)
    assert not any(s.on for s in r.states)
    assert wait_for(lambda: not any(s.on for s in states(p, "").states))
    r = p.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", commands=[mc(0, MotorCommand.MODE_VELOCITY, 1.0)]))
    assert r.result.code == Result.REFUSED and "not active" in r.result.message


def test_run_time_parameters_and_read_only_ones(env):
    from rclpy.parameter import Parameter
    node, p = env.node, env.probe
    assert p.call(ActivateDevices, "activate_devices", ActivateDevices.Request(
        device_class="ultrasonic", ids=[0], active=[True])).result.code == Result.OK
    p.clear("sonar_00")
    base = p.wait_msg("sonar_00", lambda m: math.isfinite(m.range)).range
    res = node.set_parameters([Parameter("speed_of_sound", value=686)])   # an int is fine
    assert res[0].successful
    p.clear("sonar_00")
    m = p.wait_msg("sonar_00", lambda m: math.isfinite(m.range) and m.range > 1.5 * base)
    assert m.range == pytest.approx(2 * base, rel=0.1)
    assert node.set_parameters([Parameter("speed_of_sound", value=343.0)])[0].successful
    res = node.set_parameters([Parameter("bus_backend", value="smbus2")])
    assert not res[0].successful and "read-only" in res[0].reason   # declared read_only
    res = node.set_parameters([Parameter("sonar_no_return", value="zero")])
    assert not res[0].successful
    assert node.get_parameter("bus_backend").value == "sim"
    desc = node.describe_parameter("cmd_vel_timeout")
    assert "cmd_vel" in desc.description
