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

"""A ros2_control tricycle base simulated by ir-sim (PyPI ``ir-sim``, a 2D
simulator we did not write): the robot of the ``tricycle`` profile. No tests
here.

The adapter node speaks as Kilted's ``tricycle_controller`` does: it takes
``/tricycle_controller/cmd_vel`` as ``geometry_msgs/TwistStamped`` only and
brakes when the newest stamp is older than ``cmd_vel_timeout`` (0.5 s); it
publishes ``/joint_states`` (``traction_joint``, the steered and driven front
wheel, and ``steering_joint``) and ``/tricycle_controller/odom``. Beside it,
ir-sim's 2D lidar as ``/scan`` and an ``/imu``. The world is
irsim_world.yaml; ir-sim's Ackermann model moves the robot, its lidar ranges
the room, and :meth:`IrSimTricycle.ray_to_wall` asks ir-sim's own geometry
where a ray meets a wall (what a sonar facing it should read).

In a test it spins in the test's process (:class:`IrSimTricycle`); run as a
program (``python irsim_base.py``) it is the base of ``make irsim-demo``.
"""

from __future__ import annotations

import collections
import contextlib
import io
import math
from pathlib import Path
import threading
import time

import yaml

from spun_node import SpunNode

WORLD = Path(__file__).resolve().parent / "irsim_world.yaml"
WHEEL_RADIUS_M = 0.1         # the traction wheel's (the profile's wheel_radius)
CMD_VEL_TIMEOUT_S = 0.5      # tricycle_controller's default
G = 9.80665


def steering_for(vx: float, wz: float, current: float, wheelbase: float, limit: float) -> float:
    """tricycle_controller's steering angle for a body twist: atan(wz L / vx); at
    vx = 0 the wheel keeps its angle (nothing moves)."""
    if abs(vx) < 1e-9:
        return current
    return max(-limit, min(limit, math.atan(wz * wheelbase / vx)))


class IrSimTricycle(SpunNode):
    """The adapter node and its ir-sim world, stepped by the node's timer at the
    world's step time, until :meth:`close`."""

    def __init__(self, world: Path = WORLD, record: Path | None = None):
        # ir-sim tries matplotlib's window backends at import and prints each
        # one that fails (every one, without a screen): its figure is never used
        with contextlib.redirect_stdout(io.StringIO()):
            import irsim
        import rclpy
        from geometry_msgs.msg import TwistStamped
        from nav_msgs.msg import Odometry
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import Imu, JointState, LaserScan
        self.env = irsim.make(str(world), display=False, headless=True, log_level="WARNING")
        # the car's wheelbase and steering limit, as the world file declares them
        # (Brak's own: the bridge's steering angle is then the base's)
        car = yaml.safe_load(world.read_text())["robot"][0]
        self.wheelbase = float(car["kinematics"]["wheelbase"])
        self.steering_limit = float(car["vel_max"][1])
        self.dt = float(self.env.step_time)
        self.start_context()
        self.node = rclpy.create_node("irsim_tricycle", context=self.context)
        self.lock = threading.Lock()
        self.cmd = (0.0, 0.0, None)              # vx, wz, stamp (rclpy Time) of the newest
        #: every command (monotonic arrival, vx, wz)
        self.commands: list[tuple[float, float, float]] = []
        #: the robot after each step of the last minute (monotonic, x, y, yaw, speed)
        self.states: collections.deque = collections.deque(maxlen=int(60.0 / self.dt))
        self.travelled = 0.0                     # signed distance of base_link, m
        self.traction = 0.0                      # the traction wheel's angle, rad
        self.steering = 0.0
        self.speed = 0.0
        self._types = (Odometry, Imu, JointState, LaserScan)
        self._record = None if record is None else open(record, "a", buffering=1)
        self.node.create_subscription(TwistStamped, "/tricycle_controller/cmd_vel",
                                      self._on_cmd, 10)
        self.pub_odom = self.node.create_publisher(Odometry, "/tricycle_controller/odom", 10)
        self.pub_joints = self.node.create_publisher(JointState, "/joint_states", 10)
        self.pub_scan = self.node.create_publisher(LaserScan, "/scan", qos_profile_sensor_data)
        self.pub_imu = self.node.create_publisher(Imu, "/imu", qos_profile_sensor_data)
        self.node.create_timer(self.dt, self._on_step)
        self.spin()

    def _on_cmd(self, msg) -> None:
        from rclpy.time import Time
        stamp = Time.from_msg(msg.header.stamp, clock_type=self.node.get_clock().clock_type)
        with self.lock:
            self.cmd = (float(msg.twist.linear.x), float(msg.twist.angular.z), stamp)
            self.commands.append((time.monotonic(), self.cmd[0], self.cmd[1]))
            if self._record is not None:
                self._record.write("%.6f %r %r\n" % self.commands[-1])

    def _on_step(self) -> None:
        now = self.node.get_clock().now()
        with self.lock:
            vx, wz, stamp = self.cmd
            # tricycle_controller brakes on a stale command (and before the first)
            if stamp is None or (now - stamp).nanoseconds * 1e-9 > CMD_VEL_TIMEOUT_S:
                vx, wz = 0.0, 0.0
            self.steering = steering_for(vx, wz, self.steering, self.wheelbase,
                                         self.steering_limit)
            before = self._pose()
            self.env.step([vx, self.steering])
            x, y, yaw = self._pose()
            moved = math.hypot(x - before[0], y - before[1])
            forward = (x - before[0]) * math.cos(before[2]) + (y - before[1]) * math.sin(before[2])
            step = math.copysign(moved, forward) if moved > 1e-12 else 0.0
            accel = (step / self.dt - self.speed) / self.dt
            self.speed = step / self.dt
            self.travelled += step
            # the front wheel rolls step / cos(steering) while base_link moves step
            self.traction += step / max(math.cos(self.steering), 1e-3) / WHEEL_RADIUS_M
            self.states.append((time.monotonic(), x, y, yaw, self.speed))
            scan = self.env.get_lidar_scan()
            joints = (self.traction, self.speed / WHEEL_RADIUS_M, self.steering)
        self._publish(now.to_msg(), (x, y, yaw), accel, joints, scan)

    def _pose(self) -> tuple[float, float, float]:
        s = self.env.get_robot_state()
        return float(s[0, 0]), float(s[1, 0]), float(s[2, 0])

    def _publish(self, stamp, pose, accel, joints, scan) -> None:
        odometry_cls, imu_cls, joint_state_cls, laser_scan_cls = self._types
        x, y, yaw = pose
        odom = odometry_cls()
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, "odom", "base_link"
        odom.pose.pose.position.x, odom.pose.pose.position.y = x, y
        odom.pose.pose.orientation.z, odom.pose.pose.orientation.w = (math.sin(yaw / 2),
                                                                      math.cos(yaw / 2))
        odom.twist.twist.linear.x = self.speed
        self.pub_odom.publish(odom)
        js = joint_state_cls()
        js.header.stamp = stamp
        js.name = ["traction_joint", "steering_joint"]
        js.position = [joints[0], joints[2]]
        js.velocity = [joints[1], 0.0]
        self.pub_joints.publish(js)
        msg = laser_scan_cls()
        msg.header.stamp, msg.header.frame_id = stamp, "laser"
        msg.angle_min, msg.angle_max = float(scan["angle_min"]), float(scan["angle_max"])
        msg.angle_increment = float(scan["angle_increment"])
        msg.scan_time, msg.range_min = float(scan["scan_time"]), float(scan["range_min"])
        msg.range_max = float(scan["range_max"])
        msg.ranges = [float(r) for r in scan["ranges"]]
        self.pub_scan.publish(msg)
        imu = imu_cls()
        imu.header.stamp, imu.header.frame_id = stamp, "base_link"
        imu.linear_acceleration.x, imu.linear_acceleration.z = accel, G
        self.pub_imu.publish(imu)

    def pose(self) -> tuple[float, float, float]:
        """(x, y, yaw) of base_link in the world now."""
        with self.lock:
            return self._pose()

    def ray_to_wall(self, pose_in_base: tuple[float, float, float]) -> float:
        """The distance from a point of the robot (x, y, yaw in base_link) along its
        axis to the nearest obstacle edge, from ir-sim's own obstacle vertices."""
        x, y, yaw = self.pose()
        sx, sy, syaw = pose_in_base
        ox = x + math.cos(yaw) * sx - math.sin(yaw) * sy
        oy = y + math.sin(yaw) * sx + math.cos(yaw) * sy
        dx, dy = math.cos(yaw + syaw), math.sin(yaw + syaw)
        best = math.inf
        for obstacle in self.env.obstacle_list:
            v = obstacle.vertices                 # 2 x N, world frame, in order
            points = list(zip(v[0], v[1]))
            for (ax, ay), (bx, by) in zip(points, points[1:] + points[:1]):
                ex, ey = bx - ax, by - ay
                den = dx * ey - dy * ex
                if abs(den) < 1e-12:
                    continue                      # the ray runs along this edge
                # origin + t d = a + u e, solved for t (along the ray) and u (on the edge)
                t = ((ax - ox) * ey - (ay - oy) * ex) / den
                u = ((ax - ox) * dy - (ay - oy) * dx) / den
                if t >= 0.0 and 0.0 <= u <= 1.0:
                    best = min(best, t)
        return best

    def close(self) -> None:
        """Stop stepping, close the node, its context and the record."""
        super().close()
        if self._record is not None:
            self._record.close()


def read_record(path: Path) -> list[tuple[float, float, float]]:
    """The commands a ``--record`` file holds: (CLOCK_MONOTONIC s, linear.x, angular.z)."""
    return [tuple(float(v) for v in line.split()) for line in path.read_text().splitlines()]


def main(argv=None) -> None:
    """Run the base until SIGINT or SIGTERM (``make irsim-demo``, bench_ros_base.py)."""
    import argparse
    import signal
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", type=Path,
                    help="append each command to this file as it comes: "
                         "'<CLOCK_MONOTONIC s> <linear.x> <angular.z>' (bench_ros_base.py)")
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)    # stopped as by Ctrl-C
    base = IrSimTricycle(record=a.record)
    print(f"ir-sim tricycle base up: world {WORLD.name}, step {base.dt} s", flush=True)

    def where() -> str:
        x, y, yaw = base.pose()
        return (f"base_link x {x:.2f} m, y {y:.2f} m, yaw {math.degrees(yaw):.0f} deg, "
                f"travelled {base.travelled:.2f} m, {len(base.commands)} commands")
    try:
        while True:
            time.sleep(5.0)
            print(where(), flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        print(f"ir-sim tricycle base stopped: {where()}", flush=True)
        base.close()


if __name__ == "__main__":
    main()
