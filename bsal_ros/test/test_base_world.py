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

"""The ros_base backend without ROS: Brak's devices fed by a base's numbers.

Every test runs the hardware layer on a fake clock and feeds
:class:`~bsal_ros.hardware.base_world.BaseLink` as the ROS side would.
"""

import math
from pathlib import Path

import pytest

from bsal_ros.core.units import G
from bsal_ros.hardware import load_description, Robot
from bsal_ros.hardware.base_world import ZERO_REPEATS
from bsal_ros.hardware.commands import MODE_DUTY_CYCLE
from bsal_ros.hardware.simulation import simulation_of

from hardware_helpers import FakeClock, run

CONFIG = Path(__file__).resolve().parents[1] / "config"


class Base:
    """A robot on the ros_base backend and a base that answers on every step."""

    def __init__(self, profile="base_twist_range.yaml"):
        self.clock = FakeClock()
        desc = load_description()["robot"]
        self.robot = Robot(desc, backend="ros_base", base_profile=str(CONFIG / profile),
                           clock=self.clock, wall=self.clock)
        self.link = self.robot.bus.base
        self.x = 0.0
        self.ranges = {f"sonar_{i:02d}": 3.0 for i in range(12)}
        self.silent: set[str] = set()
        self.sent = []

    def feed(self):
        """What the base publishes now (a silent topic publishes nothing)."""
        if "odom" not in self.silent:
            self.link.on_odometry("/base/odom", self.x, 0.0, 0.0, 0.0)
        if "imu" not in self.silent:
            self.link.on_imu("/base/imu", 0.5 * G)
        for name, r in self.ranges.items():
            if name not in self.silent:
                self.link.on_range(f"/base/{name}", r)

    def step(self):
        """The base follows the last command, then publishes."""
        cmd = self.link.velocity_command()
        self.sent.append(cmd)
        if cmd is not None:
            self.x += cmd[0] * 0.05
        self.feed()

    def run(self, seconds):
        run(self.robot, self.clock, seconds, dt=0.05, each=self.step)

    def state(self, cls, dev_id=0):
        return self.robot.get_states(cls, [dev_id])[1][0]


@pytest.fixture
def base():
    b = Base()
    b.feed()
    b.robot.start(activate=True)
    yield b
    b.robot.close()


def test_devices_wait_for_their_topics_then_read_them(base):
    fresh = Base()
    fresh.robot.start(activate=True)
    run(fresh.robot, fresh.clock, 0.5)
    s = fresh.state("ultrasonic", 3)
    assert not s.ok and s.fault == "waiting for topic /base/sonar_03 (sensor_msgs/msg/Range)"
    assert fresh.state("dc_motor").ok          # an output has no topic to wait for
    assert simulation_of(fresh.robot.bus) is None   # no sim_control, no ground truth
    fresh.robot.close()
    base.ranges["sonar_03"] = 1.25
    base.run(1.0)
    s = base.state("ultrasonic", 3)
    assert s.ok and s.fault in ("", None)
    assert s.range_m == pytest.approx(1.25, abs=0.005)
    assert base.state("accelerometer").accel_g == pytest.approx(0.5, abs=0.002)


def test_a_held_speed_is_sent_on_every_tick_and_zero_after_the_stop(base):
    res = base.robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 20.0)])
    assert res.ok, res.message
    base.run(2.0)
    held = base.sent[-30:]
    assert all(c is not None and c[0] > 0 for c in held), held
    steer = base.robot.bus.base.world.steer
    # 20 % of full_speed 0.5 m/s (speedval: 409/2047); the modelled steering turns it
    assert held[-1][0] == pytest.approx(0.1 * math.cos(steer), rel=2e-3)
    assert held[-1][1] == pytest.approx(0.1 * math.sin(steer) / 0.5, rel=2e-3)
    base.robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 0.0)])
    base.sent.clear()
    base.run(1.0)
    assert base.sent[:ZERO_REPEATS] == [(0.0, 0.0)] * ZERO_REPEATS
    assert set(base.sent[ZERO_REPEATS:]) == {None}   # then the base is left alone


def test_the_encoder_counts_the_distance_travelled_in_book_units(base):
    base.robot.clear_encoders([0])
    base.robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, -40.0)])
    base.run(3.0)
    base.robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 0.0)])
    base.run(0.5)
    travelled = base.x
    assert travelled < -0.4                      # reverse moved it backwards
    s = base.state("relative_encoder")
    expected = travelled / (2 * math.pi * 0.1) * 2048
    assert s.count == pytest.approx(expected, abs=2)


def test_a_silent_topic_makes_its_device_not_ready_and_stops_the_base(base):
    base.robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 30.0)])
    base.run(1.0)
    assert base.sent[-1][0] > 0
    base.silent.add("sonar_07")
    base.run(0.8)
    s = base.state("ultrasonic", 7)
    assert not s.ok and "topic /base/sonar_07 silent for" in s.fault
    assert base.state("ultrasonic", 6).ok       # the others are still ready
    assert base.sent[-1] == (0.0, 0.0) or base.sent[-1] is None
    assert base.state("dc_motor").speed == 0.0   # the motor was stopped, as its watchdog would
    notes = base.link.take_notes()
    assert any("topic /base/sonar_07 silent for more than 0.5 s: sonar_07 not ready" in n
               for n in notes), notes
    base.silent.clear()
    base.run(0.5)
    assert base.state("ultrasonic", 7).ok
    assert any("topic /base/sonar_07 back" in n for n in base.link.take_notes())
    base.robot.set_motors("dc_motor", [(0, MODE_DUTY_CYCLE, 30.0)])
    base.run(0.5)
    assert base.sent[-1][0] > 0                  # a new command drives again


def test_a_scan_sector_is_the_nearest_return_in_each_sonars_cone():
    b = Base("base_twist_lidar.yaml")
    n = 360
    inc = 2 * math.pi / n
    # a wall 2 m ahead of the scanner (at base_link), nothing elsewhere
    ranges = [2.0 / math.cos(-math.pi + i * inc) if math.cos(-math.pi + i * inc) > 0.5
              else math.inf for i in range(n)]
    b.link.on_scan("/scan", -math.pi, inc, ranges, 0.1, 30.0)
    sonar_m = b.link.world.sonar_m
    # sonar_00 sits 0.53 m ahead of base_link facing +x: 1.47 m from the wall
    assert sonar_m["sonar_00"] == pytest.approx(2.0 - 0.53, abs=0.01)
    assert sonar_m["sonar_06"] == math.inf       # faces backwards: no return (REP-117)
    b.robot.close()


def test_the_rays_toward_a_cone_hold_every_ray_that_meets_it():
    """rays_toward_cone may skip only rays that cannot meet the cone: against
    every ray's point at many ranges, for sonars ahead of, beside, behind and
    around the scanner, full and partial scans."""
    import random
    from bsal_ros.core.units import wrap_angle
    from bsal_ros.hardware.base_world import rays_toward_cone
    rng = random.Random(39)
    half = 0.175
    for _ in range(300):
        pose = (rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-math.pi, math.pi))
        scanner = (rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), rng.uniform(-math.pi, math.pi))
        n = rng.choice((90, 359, 360, 720))
        span = rng.choice((2 * math.pi, math.pi, 4.0))
        angle_min = rng.uniform(-math.pi, math.pi)
        inc = span / n
        chosen = set(rays_toward_cone(pose, half, scanner, angle_min, inc, n))
        for i in range(n):
            a = scanner[2] + angle_min + i * inc
            for r in (0.05, 0.3, 1.0, 3.0, 30.0):
                dx = scanner[0] + r * math.cos(a) - pose[0]
                dy = scanner[1] + r * math.sin(a) - pose[1]
                if abs(wrap_angle(math.atan2(dy, dx) - pose[2])) <= half:
                    assert i in chosen, (pose, scanner, n, span, angle_min, i, r)
    # the point: a sonar ahead of the scanner looks at a few rays, not all
    assert len(rays_toward_cone((0.53, 0.0, 0.0), half, (0, 0, 0), -math.pi,
                                2 * math.pi / 360, 360)) < 40


def test_diagnostics_and_the_device_list_name_the_driver_and_the_silence(base):
    from bsal_ros.hardware import diagnostics as hwdiag
    base.run(1.0)
    base.silent.add("sonar_02")
    base.run(1.0)
    diags = {d.name: d for d in hwdiag.device_diagnostics(base.robot, base.clock())}
    sonar = next(d for name, d in diags.items() if name == "ultrasonic 2")
    assert sonar.level == hwdiag.ERROR and "topic /base/sonar_02 silent for" in sonar.message
    assert sonar.values["driver"] == \
        "profile twist_range: /base/sonar_02 (sensor_msgs/msg/Range)"
    assert sonar.hardware_id.startswith("ros_base:twist_range:")
    steering = next(d for name, d in diags.items() if name == "absolute_encoder 0")
    assert steering.values["driver"] == "profile twist_range: the bridge's steering model"
    assert steering.level == hwdiag.OK
    listed = {(d["device_class"], d["id"]): d for d in base.robot.list_devices()}
    assert listed[("ultrasonic", 2)]["bus"] == "ros_base:twist_range"
    assert not listed[("ultrasonic", 2)]["ok"]
    assert "silent" in listed[("ultrasonic", 2)]["fault"]
    assert listed[("ultrasonic", 1)]["ok"]


def test_the_tricycle_profile_reads_the_traction_joint_in_book_counts():
    b = Base("base_tricycle.yaml")
    link = b.link
    assert b.robot.bus.base.profile.command().type == "geometry_msgs/msg/TwistStamped"

    def feed(position):
        link.on_joint_state("/joint_states", ["steering_joint", "traction_joint"],
                            [0.2, position], [0.0, 1.0])
        link.on_imu("/imu", 0.0)
        link.on_scan("/scan", -math.pi, math.pi / 180, [4.0] * 360, 0.1, 30.0)

    feed(0.0)
    b.robot.start(activate=True)
    run(b.robot, b.clock, 0.5, dt=0.05, each=lambda: feed(0.0))
    b.robot.clear_encoders([0])
    run(b.robot, b.clock, 0.5, dt=0.05, each=lambda: feed(-3.0))   # 3 rad backwards
    s = b.state("relative_encoder")
    assert s.ok, s.fault
    # wheel_radius 0.1 m there and on Brak: the joint's angle is the wheel's
    assert s.count == pytest.approx(-3.0 / (2 * math.pi) * 2048, abs=2)
    assert b.state("ultrasonic", 0).ok
    b.robot.close()
