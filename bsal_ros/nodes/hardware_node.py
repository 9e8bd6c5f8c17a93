"""The hardware node: BSAL's control process as a ROS 2 node (001 chapter 2).

It owns the I2C boards (real through smbus2, or the simulated Brak), polls
them from a dedicated thread (polling never runs in a ROS callback; a
command's own short register writes do, in its service callback), and
publishes what it reads in SI units; its services and action carry out every
RCI control command with a success or a reason. Every name is relative (except
``/diagnostics``), so robots run side by side under namespaces. See
docs/INTERFACES.md for the full interface and docs/HARDWARE.md for the boards.

    hardware_node --ros-args --params-file config/brak.yaml -r __ns:=/brak1

In-process (bring-up, tests): ``HardwareNode(context=ctx, rate_scale=4.0,
robot={"sim": {"homing_speed": 4.0}})``.
"""

from __future__ import annotations

import math
import threading
import time

import rclpy
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)
from rclpy.task import Future
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseWithCovarianceStamped, Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState, Range

from bsal_interfaces.action import HomeSteering
from bsal_interfaces.msg import DeviceStateArray
from bsal_interfaces.srv import (ActivateDevices, ClearEncoders, GetDeviceStates, ListDevices,
                                 RenewLease, Reset, SetMotors, SetSonarTiming, SimControl)

from bsal_ros.hardware import diagnostics as hwdiag
from bsal_ros.hardware.description import (DEFAULT_DESCRIPTION, DescriptionError,
                                           check_motor_watchdogs, deep_merge, load_description,
                                           unflatten, validate)
from bsal_ros.hardware.robot import (BUSY, HARDWARE_FAULT, OK, REFUSED, Result, Robot,
                                     scale_rates)
from bsal_ros.hardware.poller import Poller
from bsal_ros.nodes.hardware_msgs import (device_info_msg, device_state_msg, diag_status_msg,
                                          result_msg, to_time, yaw_to_quat)

G = 9.80665

# name -> description (defaults: DEFAULT_DESCRIPTION["hardware_node"] == config/brak.yaml)
PARAMETERS = {
    "bus_backend": "I2C bus backend: 'sim' (simulated Brak, default) or 'smbus2' (/dev/i2c-N)",
    "i2c_bus": "bus number N of /dev/i2c-N for the smbus2 backend",
    "robot_description_file": "optional robot description file (ROS params format, like "
                              "config/brak.yaml); merged over the built-in description, "
                              "robot.* parameters go over it",
    "sim_seed": "seed of the simulated world's random numbers; -1 = robot.sim.seed",
    "speed_of_sound": "m/s used to turn echo delays into ranges (343 at 20 C)",
    "sonar_no_return": "Range.range when a sonar hears no echo: 'inf' (REP-117) or "
                       "'max_range' (what Nav2's range layer clears on)",
    "cmd_vel_timeout": "s without a cmd_vel message before the drive is stopped",
    "diagnostics_period": "s between DiagnosticArray messages on /diagnostics",
    "stale_factor": "a device that is on is STALE after this many poll periods without data",
    "rate_scale": "multiplies every board's update and poll rate (tests run faster)",
    "all_boards_hz": "> 0: poll every board at this rate instead of the description's",
    "activate_on_start": "switch every motor and sensor on at start-up",
    "auto_home": "home the steering at start-up (cmd_vel steers only a homed steering)",
    "frame_prefix": "prefix of every frame id (e.g. 'brak1/' for two robots in one TF tree)",
    "odom_frame": "frame of the odometry (REP-105)",
    "map_frame": "frame of the pose estimate and the sim ground truth",
    "base_frame": "robot body frame (middle of the rear axle)",
    "publish_ground_truth": "simulated bus only: publish the true pose on ground_truth",
    "publish_tf": "broadcast odom -> base_link when tf2_ros is available",
    "base_time_rollover_s": "move the statval base time forward after this many s "
                            "(must stay below the 24-bit ms field's 4.66 h)",
    "odom_noise_per_m": "odometry translation noise, m per sqrt(m) travelled",
    "odom_heading_noise_per_rad": "odometry heading noise, rad per sqrt(rad) turned",
}

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE)


def _flatten(prefix: str, value, out: dict) -> dict:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}", v, out)
    else:
        out[prefix] = value
    return out


class HardwareNode(Node):
    """The hardware node. Keyword overrides become parameter overrides:
    ``HardwareNode(rate_scale=4.0, robot={"sim": {"seed": 7}})``."""

    def __init__(self, node_name: str = "hardware_node", *, namespace: str | None = None,
                 context=None, parameter_overrides: list | None = None,
                 start: bool = True, **overrides):
        params = list(parameter_overrides or [])
        for k, v in overrides.items():
            if k == "robot" and isinstance(v, dict):
                params += [Parameter(n, value=x) for n, x in _flatten("robot", v, {}).items()]
            else:
                params.append(Parameter(k, value=v))
        super().__init__(node_name, namespace=namespace, context=context,
                         parameter_overrides=params)
        defaults = DEFAULT_DESCRIPTION["hardware_node"]
        for name, text in PARAMETERS.items():
            # float parameters also take integers (speed_of_sound:=343 on a command line)
            is_float = isinstance(defaults[name], float)
            self.declare_parameter(name, defaults[name], ParameterDescriptor(
                description=text, dynamic_typing=is_float))
        p = {name: self.get_parameter(name).value for name in PARAMETERS}
        for name in PARAMETERS:
            if isinstance(defaults[name], float):
                try:
                    p[name] = float(p[name])
                except (TypeError, ValueError):
                    raise ValueError(f"parameter {name} must be a number, not {p[name]!r}")
        self.p = p
        self.log = self.get_logger()
        self.add_on_set_parameters_callback(self._on_set_parameters)

        # robot description: built-in, then robot_description_file, then robot.* parameters
        desc = load_description(p["robot_description_file"] or None)
        robot_params = {n: v.value for n, v in self._parameter_overrides.items()
                        if n.startswith("robot.")}
        for n, v in sorted(robot_params.items()):
            self.declare_parameter(n, v, ParameterDescriptor(
                description="robot description entry (docs/HARDWARE.md)", read_only=True))
        robot = deep_merge(desc["robot"], unflatten(robot_params))
        try:
            validate(robot)
        except DescriptionError as exc:
            raise ValueError(f"robot description: {exc}") from exc
        robot = scale_rates(robot, float(p["rate_scale"]), float(p["all_boards_hz"]))
        try:   # the scaled poll rates must still beat the motor boards' command timeouts
            check_motor_watchdogs(robot)
        except DescriptionError as exc:
            raise ValueError(f"robot description (with rate_scale {p['rate_scale']:g}, "
                             f"all_boards_hz {p['all_boards_hz']:g}): {exc}") from exc
        self.desc = robot
        fp = p["frame_prefix"]
        self.frame = {k: fp + p[f"{k}_frame"] for k in ("odom", "map", "base")}
        if p["sonar_no_return"] not in ("inf", "max_range"):
            raise ValueError("sonar_no_return must be 'inf' or 'max_range'")

        self.robot = Robot(robot, backend=p["bus_backend"], i2c_bus=int(p["i2c_bus"]),
                           seed=int(p["sim_seed"]), speed_of_sound=float(p["speed_of_sound"]),
                           cmd_timeout=float(p["cmd_vel_timeout"]),
                           odom_noise=(float(p["odom_noise_per_m"]),
                                       float(p["odom_heading_noise_per_rad"])),
                           base_time_rollover_s=float(p["base_time_rollover_s"]))
        geo = robot["geometry"]
        self._g = geo

        # ---- publishers (relative names; /diagnostics absolute) ----------
        sensor = qos_profile_sensor_data
        self.sonar_pubs = {}
        self.sonar_frames = {}
        for d in self.robot.devices_of("ultrasonic"):
            topic = f"sonar_{d.id:02d}"
            self.sonar_pubs[d.id] = self.create_publisher(Range, topic, sensor)
            self.sonar_frames[d.id] = fp + (d.cfg.get("frame") or f"{topic}_link")
        self.pub_states = self.create_publisher(DeviceStateArray, "device_states", 50)
        self.pub_encoders = self.create_publisher(DeviceStateArray, "encoders", RELIABLE)
        self.pub_motors = self.create_publisher(DeviceStateArray, "motor_states", RELIABLE)
        self.pub_joints = self.create_publisher(JointState, "joint_states", RELIABLE)
        self.pub_imu = self.create_publisher(Imu, "imu", sensor)
        self.pub_odom = self.create_publisher(Odometry, "odom", RELIABLE)
        self.pub_pose = self.create_publisher(PoseWithCovarianceStamped, "pose", RELIABLE)
        self.pub_base_time = self.create_publisher(Time, "base_time", LATCHED)
        self.pub_diag = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE)
        self.pub_truth = None
        if self.robot.world is not None and p["publish_ground_truth"]:
            self.pub_truth = self.create_publisher(Odometry, "ground_truth", RELIABLE)
        try:
            from bsal_ros.nodes.odom_tf import make_odom_tf_publisher
            self._odom_tf = make_odom_tf_publisher(self, enabled=bool(p["publish_tf"]))
        except ImportError:  # pragma: no cover - the lead's helper is part of the package
            self._odom_tf = None

        # ---- subscriptions, services, action -------------------------------
        cmd_group = MutuallyExclusiveCallbackGroup()
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, RELIABLE,
                                 callback_group=cmd_group)
        for topic in ("initialpose", "set_pose"):
            self.create_subscription(PoseWithCovarianceStamped, topic, self._on_set_pose,
                                     RELIABLE, callback_group=cmd_group)
        srv_group = MutuallyExclusiveCallbackGroup()
        self.create_service(Reset, "reset", self._srv_reset, callback_group=srv_group)
        self.create_service(ActivateDevices, "activate_devices", self._srv_activate,
                            callback_group=srv_group)
        self.create_service(SetMotors, "set_motors", self._srv_set_motors,
                            callback_group=srv_group)
        # lease renewals in their own group: a slow command never delays them
        self.create_service(RenewLease, "renew_lease", self._srv_renew_lease,
                            callback_group=MutuallyExclusiveCallbackGroup())
        self.create_service(GetDeviceStates, "get_device_states", self._srv_get_states,
                            callback_group=srv_group)
        self.create_service(ClearEncoders, "clear_encoders", self._srv_clear_encoders,
                            callback_group=srv_group)
        self.create_service(SetSonarTiming, "set_sonar_timing", self._srv_sonar_timing,
                            callback_group=srv_group)
        self.create_service(ListDevices, "list_devices", self._srv_list_devices,
                            callback_group=srv_group)
        self.create_service(SimControl, "sim_control", self._srv_sim_control,
                            callback_group=srv_group)
        self._action_group = ReentrantCallbackGroup()
        self._homing_lock = threading.Lock()
        self._homing_goal = None
        self._auto_homing = False
        self.home_action = ActionServer(
            self, HomeSteering, "home_steering", execute_callback=self._execute_home,
            goal_callback=self._goal_home, cancel_callback=self._cancel_home,
            callback_group=self._action_group)
        self._bus_diag = hwdiag.BusDiagnostics()
        self.create_timer(float(p["diagnostics_period"]), self._on_diagnostics,
                          callback_group=MutuallyExclusiveCallbackGroup())

        # ---- state of the publishing side (poller thread) --------------------
        self._steer_prev: tuple[float, float] | None = None
        self._steer_rate = 0.0
        self.cycles_published = 0
        self.poller = Poller(self.robot, listener=self._on_cycle,
                             name=f"bsal-hw-poll{self.get_namespace().replace('/', '-')}")
        self._closed = False
        if start:
            self.start()

    # ---- life cycle --------------------------------------------------------
    def start(self) -> None:
        self.robot.start(activate=bool(self.p["activate_on_start"]))
        self._publish_base_time()
        self._log_events()
        up = [b.name for b in self.robot.boards.values() if b.up]
        down = [b.name for b in self.robot.boards.values() if not b.up]
        self.log.info(f"hardware node: backend {self.p['bus_backend']} ({self.robot.bus.name}), "
                      f"{len(self.robot.boards)} boards ({len(up)} up"
                      + (f", down: {', '.join(down)}" if down else "") + f"), "
                      f"{len(self.robot.devices)} devices")
        if self.p["auto_home"] and self.robot.device("pservo_motor", 0) is not None:
            res = self.robot.start_homing(0)
            self._auto_homing = res.ok
            self._log("info" if res.ok else "warn",
                      f"auto-home: {res.message}" if res.ok
                      else f"auto-home not started: {res.message}")
        self.poller.start()

    def end_homing_goals(self, timeout: float = 1.0) -> None:
        """Shutdown step, run while the executor still spins: abort a running
        home_steering goal and wait (at most ``timeout`` s) until its execute
        callback has answered the client. A goal left pending when the node
        is destroyed has its coroutine closed by the garbage collector, and
        its clean-up then uses the destroyed action server (a traceback)."""
        with self._homing_lock:
            goal = self._homing_goal
        if goal is None or goal == "reserved":
            return
        res = self.robot.abort_homing(goal.request.id)
        self.log.info(f"shutting down: home_steering {goal.request.id} aborted ({res.message})")
        deadline = time.monotonic() + timeout
        while self._homing_goal is not None and time.monotonic() < deadline:
            time.sleep(0.02)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.poller.stop()
        self.robot.close()

    def destroy_node(self):
        self.close()
        return super().destroy_node()

    DYNAMIC = ("speed_of_sound", "sonar_no_return", "cmd_vel_timeout", "stale_factor")

    def _on_set_parameters(self, params) -> SetParametersResult:
        """A few parameters change at run time; the others need a restart."""
        if not hasattr(self, "robot"):
            return SetParametersResult(successful=True)  # declaration at start-up
        for prm in params:
            if prm.name not in self.DYNAMIC:
                return SetParametersResult(successful=False, reason=(
                    f"{prm.name} is read at start-up: restart the node to change it "
                    f"(run-time: {', '.join(self.DYNAMIC)})"))
            v = prm.value
            if prm.name == "sonar_no_return" and v not in ("inf", "max_range"):
                return SetParametersResult(successful=False,
                                           reason="sonar_no_return must be 'inf' or 'max_range'")
            if prm.name != "sonar_no_return" and (not isinstance(v, (int, float)) or v <= 0):
                return SetParametersResult(successful=False, reason=f"{prm.name} must be > 0")
        with self.robot.lock:
            for prm in params:
                self.p[prm.name] = (prm.value if prm.name == "sonar_no_return"
                                    else float(prm.value))
                if prm.name == "speed_of_sound":
                    self.robot.speed_of_sound = float(prm.value)
                elif prm.name == "cmd_vel_timeout":
                    self.robot.cmd_timeout = float(prm.value)
        return SetParametersResult(successful=True)

    # ---- helpers ---------------------------------------------------------------
    def _log(self, level: str, msg: str) -> None:
        # one call site per severity: rclpy refuses a severity change at one call site
        if level == "error":
            self.log.error(msg)
        elif level == "warn":
            self.log.warning(msg)
        else:
            self.log.info(msg)

    def _log_events(self) -> None:
        for ev in self.robot.drain_events():
            self._log(ev.level, ev.message)

    def _publish_base_time(self) -> None:
        self.pub_base_time.publish(to_time(self.robot.base_time))

    def _frame_of(self, dev) -> str:
        if dev.device_class == "ultrasonic":
            return self.sonar_frames.get(dev.id, "")
        return self.p["frame_prefix"] + dev.frame

    # ---- poller thread: publish what a cycle read -------------------------------
    def _on_cycle(self, updates) -> None:
        r = self.robot
        states = []
        for u in updates:
            b = u.board
            devs = r.by_board[b.name]
            msgs = [device_state_msg(s, self._frame_of(d)) for d, s in zip(devs, u.snapshots)]
            states += msgs
            if not u.fresh:
                continue
            if b.type == "ultrasonic":
                self._publish_sonars(devs, u.snapshots)
            elif b.type == "dc_motor":
                self._publish_drive(u, msgs)
            elif b.type == "pservo_motor":
                self._publish_steering(u, msgs)
            elif b.type == "accelerometer":
                self._publish_imu(devs, u.snapshots)
        if states:
            arr = DeviceStateArray()
            arr.header.stamp = self.get_clock().now().to_msg()
            arr.states = states
            self.pub_states.publish(arr)
        self.cycles_published += 1
        if r.events or any(b.events for b in r.boards.values()):
            self._log_events()

    def _publish_sonars(self, devs, snaps) -> None:
        g = self._g
        for d, s in zip(devs, snaps):
            if not s.on or d.id not in self.sonar_pubs:
                continue
            m = Range()
            m.header.stamp = to_time(s.stamp)
            m.header.frame_id = self.sonar_frames[d.id]
            m.radiation_type = Range.ULTRASOUND
            m.field_of_view = float(g["sonar_field_of_view"])
            m.min_range = float(g["sonar_min_range"])
            m.max_range = float(g["sonar_max_range"])
            rng = s.range_m
            if math.isinf(rng):
                rng = math.inf if self.p["sonar_no_return"] == "inf" else m.max_range
            m.range = float(rng)
            m.variance = 0.01 ** 2
            self.sonar_pubs[d.id].publish(m)

    def _split(self, u, msgs):
        enc = [m for m in msgs if m.device_class.endswith("encoder")]
        mot = [m for m in msgs if m.device_class.endswith("motor")]
        stamp = to_time(u.board.stamp)
        for arr_msgs, pub in ((enc, self.pub_encoders), (mot, self.pub_motors)):
            if arr_msgs:
                arr = DeviceStateArray(states=arr_msgs)
                arr.header.stamp = stamp
                pub.publish(arr)
        return stamp

    def _publish_steering(self, u, msgs) -> None:
        self._split(u, msgs)
        b = u.board
        angle = b.count * 2.0 * math.pi / self.robot.steer_cpr
        if self._steer_prev is not None and b.mono is not None and b.mono > self._steer_prev[1]:
            self._steer_rate = (angle - self._steer_prev[0]) / (b.mono - self._steer_prev[1])
        self._steer_prev = (angle, b.mono)

    def _publish_drive(self, u, msgs) -> None:
        stamp = self._split(u, msgs)
        r = self.robot
        b = u.board
        with r.lock:
            steer = r._steer_angle()
            wheel = b.total * 2.0 * math.pi / r.drive_cpr
            od = r.odometry
            o = (od.odom.x, od.odom.y, od.odom.th, od.odom.cov6(), od.vx, od.wz)
            pe = (od.pose.x, od.pose.y, od.pose.th, od.pose.cov6())
            truth = r.world.pose() if r.world is not None else None
            truth_tw = r.world.twist() if r.world is not None else None
        js = JointState()
        js.header.stamp = stamp
        js.name = ["steering_joint", "drive_wheel_joint"]
        js.position = [float(steer), float(wheel)]
        js.velocity = [float(self._steer_rate), float(b.speed_meas)]
        self.pub_joints.publish(js)

        odom = Odometry()
        odom.header.stamp = stamp
        odom.header.frame_id = self.frame["odom"]
        odom.child_frame_id = self.frame["base"]
        self._fill_pose(odom.pose, o[0], o[1], o[2], o[3])
        odom.twist.twist.linear.x = float(o[4])
        odom.twist.twist.angular.z = float(o[5])
        tc = [0.0] * 36
        tc[0], tc[7], tc[14], tc[21], tc[28], tc[35] = 1e-3, 1e-6, 1e6, 1e6, 1e6, 1e-3
        odom.twist.covariance = tc
        self.pub_odom.publish(odom)
        if self._odom_tf is not None:
            self._odom_tf.publish(odom)

        pose = PoseWithCovarianceStamped()
        pose.header.stamp = stamp
        pose.header.frame_id = self.frame["map"]
        self._fill_pose(pose.pose, *pe)
        self.pub_pose.publish(pose)

        if self.pub_truth is not None and truth is not None:
            gt = Odometry()
            gt.header.stamp = stamp
            gt.header.frame_id = self.frame["map"]
            gt.child_frame_id = self.frame["base"]
            self._fill_pose(gt.pose, truth[0], truth[1], truth[2], [0.0] * 36)
            gt.twist.twist.linear.x, gt.twist.twist.angular.z = truth_tw
            self.pub_truth.publish(gt)

    @staticmethod
    def _fill_pose(pwc, x, y, th, cov) -> None:
        pwc.pose.position.x = float(x)
        pwc.pose.position.y = float(y)
        q = yaw_to_quat(th)
        o = pwc.pose.orientation
        o.x, o.y, o.z, o.w = q
        pwc.covariance = [float(c) for c in cov]

    def _publish_imu(self, devs, snaps) -> None:
        for d, s in zip(devs, snaps):
            if not s.on:
                continue
            m = Imu()
            m.header.stamp = to_time(s.stamp)
            m.header.frame_id = self._frame_of(d)
            m.orientation_covariance[0] = -1.0       # no orientation
            m.angular_velocity_covariance[0] = -1.0  # no gyro
            m.linear_acceleration.x = float(s.accel_g) * G
            noise = float(self.desc["sim"]["accel_noise_g"]) * G
            cov = [0.0] * 9
            cov[0], cov[4], cov[8] = max(noise * noise, 1e-6), 1e6, 1e6  # y, z not measured
            m.linear_acceleration_covariance = cov
            self.pub_imu.publish(m)

    # ---- timers ----------------------------------------------------------------
    def _on_diagnostics(self) -> None:
        r = self.robot
        if r.maybe_roll_base_time():
            self.log.info(f"base time moved to {r.base_time:.0f}")
            self._publish_base_time()
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        prefix = f"{self.get_fully_qualified_name()}: "
        now = r.clock()
        diags = [self._bus_diag(r, now)]
        diags += hwdiag.device_diagnostics(r, now, float(self.p["stale_factor"]))
        arr.status = [diag_status_msg(dd, prefix) for dd in diags]
        self.pub_diag.publish(arr)
        if self._auto_homing:
            st = r.homing_status(0)
            if st["done"] or st["failed"]:
                self._auto_homing = False
                r.homing_finished(0)
                outcome = "done" if st["done"] else "failed: " + self._homing_failure(st)
                self._log("info" if st["done"] else "error",
                          f"auto-home {outcome} (steering at {st['angle']:.3f} rad)")
        self._log_events()

    def _homing_failure(self, st: dict) -> str:
        """Why the start-up homing failed, never empty: the robot's reason, else
        what the steering board's phase and state say."""
        if st["reason"]:
            return st["reason"]
        res, snaps = self.robot.get_states("pservo_motor", [0])
        fault = getattr(snaps[0], "fault", "") if res.ok and snaps else ""
        if not st["up"]:
            why = "the steering board stopped answering"
        elif st["phase"] == "cancelled":
            why = ("the steering board cancelled homing (its command watchdog expired, "
                   "its motor was switched off, or homing was aborted)")
        else:
            why = f"homing ended in phase {st['phase']!r}"
        return f"{why}; board: {fault}" if fault else why

    # ---- subscriptions -------------------------------------------------------------
    def _on_cmd_vel(self, msg: Twist) -> None:
        self.robot.drive(float(msg.linear.x), float(msg.angular.z))

    def _on_set_pose(self, msg: PoseWithCovarianceStamped) -> None:
        p = msg.pose.pose
        q = p.orientation
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        c = list(msg.pose.covariance)
        idx = (0, 1, 5)
        cov3 = [[float(c[idx[i] * 6 + idx[j]]) for j in range(3)] for i in range(3)]
        values = [p.position.x, p.position.y, yaw] + [v for row in cov3 for v in row]
        if not all(math.isfinite(v) for v in values):
            # A NaN would poison the estimate (and pose, odom, RDI) until the next set_pose.
            self.log.warning("set_pose ignored: position, orientation or covariance is not "
                             "finite", throttle_duration_sec=5.0)
            return
        with self.robot.lock:
            self.robot.odometry.set_pose(float(p.position.x), float(p.position.y), yaw, cov3)
        self.log.info(f"pose set to ({p.position.x:.3f}, {p.position.y:.3f}, {yaw:.3f})")

    # ---- services --------------------------------------------------------------------
    def _answer(self, response, res: Result, what: str):
        response.result = result_msg(res)
        if not res.ok:
            self.log.warning(f"{what} refused: {res.message}")
        return response

    def _srv_reset(self, req, resp):
        res = self.robot.reset()
        self._auto_homing = False
        self.log.info(f"reset: {res.message}")
        return self._answer(resp, res, "reset")

    def _srv_activate(self, req, resp):
        res = self.robot.activate(req.device_class, list(req.ids), list(req.active))
        return self._answer(resp, res, "activate_devices")

    def _srv_set_motors(self, req, resp):
        cmds = [(c.id, c.mode, c.value) for c in req.commands]
        res = self.robot.set_motors(req.device_class, cmds, float(req.lease_s))
        return self._answer(resp, res, "set_motors")

    def _srv_renew_lease(self, req, resp):
        res, not_held = self.robot.renew_lease(req.device_class, list(req.ids),
                                               float(req.lease_s))
        resp.not_held = [int(i) for i in not_held]
        resp.result = result_msg(res)
        if not res.ok and res.code != REFUSED:   # REFUSED (lease gone) is the client's news
            self.log.warning(f"renew_lease refused: {res.message}")
        return resp

    def _srv_get_states(self, req, resp):
        res, snaps = self.robot.get_states(req.device_class, list(req.ids))
        resp.states = [device_state_msg(s, self._frame_of(self.robot.device(s.device_class, s.id)))
                       for s in snaps]
        resp.result = result_msg(res)
        return resp

    def _srv_clear_encoders(self, req, resp):
        return self._answer(resp, self.robot.clear_encoders(list(req.ids)), "clear_encoders")

    def _srv_sonar_timing(self, req, resp):
        t = [(x.id, x.firing_slot, x.interval_ms) for x in req.timings]
        return self._answer(resp, self.robot.set_sonar_timing(t), "set_sonar_timing")

    def _srv_list_devices(self, req, resp):
        devs = self.robot.list_devices()
        resp.devices = [
            device_info_msg(d, self._frame_of(self.robot.device(d["device_class"], d["id"])))
            for d in devs]
        resp.result = result_msg(Result(OK, f"{len(devs)} devices"))
        return resp

    def _srv_sim_control(self, req, resp):
        res = self.robot.sim_control(req.command, req.target, req.fault, list(req.values))
        if res.ok:
            self.log.info(f"sim_control {req.command} {req.target} {req.fault}: {res.message}")
        return self._answer(resp, res, f"sim_control {req.command}")

    # ---- home_steering action -----------------------------------------------------------
    def _goal_home(self, goal) -> GoalResponse:
        with self._homing_lock:
            if self._homing_goal is not None:
                self.log.warning("home_steering goal rejected: a homing goal is running")
                return GoalResponse.REJECT
            self._homing_goal = "reserved"
            return GoalResponse.ACCEPT

    def _cancel_home(self, goal_handle) -> CancelResponse:
        return CancelResponse.ACCEPT

    async def _execute_home(self, goal_handle):
        req = goal_handle.request
        result = HomeSteering.Result()
        r = self.robot
        t0 = r.clock()
        try:
            with self._homing_lock:
                self._homing_goal = goal_handle
            res = r.start_homing(req.id)
            if not res.ok:
                if res.code == BUSY and self._auto_homing:
                    res = Result(BUSY, res.message + " (start-up auto-home)")
                self.log.warning(f"home_steering {req.id} refused: {res.message}")
                goal_handle.abort()
                result.result = result_msg(res)
                result.angle = r._steer_angle()
                return result
            timeout = float(req.timeout_s) if req.timeout_s > 0 else 30.0
            self.log.info(f"home_steering {req.id}: started at {r._steer_angle():.3f} rad "
                          f"(timeout {timeout:.1f} s)")
            done = Future()
            state = {"phase": "", "stamp": None}

            def check():
                if done.done():
                    return
                st = r.homing_status(req.id)
                if goal_handle.is_cancel_requested:
                    r.abort_homing(req.id)
                    done.set_result(("cancelled", st))
                    return
                if st["fresh_stamp"] != state["stamp"]:
                    state["stamp"] = st["fresh_stamp"]
                    fb = HomeSteering.Feedback(angle=float(st["angle"]),
                                               progress=float(st["progress"]),
                                               phase=st["phase"])
                    goal_handle.publish_feedback(fb)
                if st["phase"] != state["phase"]:
                    state["phase"] = st["phase"]
                    self.log.info(f"home_steering {req.id}: phase {st['phase']} at "
                                  f"{st['angle']:.3f} rad, {100.0 * st['progress']:.0f} %")
                if st["done"]:
                    done.set_result(("done", st))
                elif st["failed"]:
                    done.set_result(("failed", st))
                elif r.clock() - t0 > timeout:
                    r.abort_homing(req.id)
                    done.set_result(("timeout", st))

            period = min(0.05, max(0.01, self.robot.boards[
                r.device("pservo_motor", req.id).board.name].poll_period() / 2.0))
            timer = self.create_timer(period, check, callback_group=self._action_group)
            try:
                outcome, st = await done
            finally:
                timer.cancel()
                self.destroy_timer(timer)
            result.angle = float(st["angle"])
            result.duration_s = float(r.clock() - t0)
            if outcome == "done":
                goal_handle.succeed()
                result.result = result_msg(Result(OK, f"homed in {result.duration_s:.2f} s"))
            elif outcome == "cancelled":
                goal_handle.canceled()
                result.result = result_msg(Result(REFUSED, "homing cancelled by the client "
                                                  f"at {st['angle']:.3f} rad"))
            elif outcome == "timeout":
                goal_handle.abort()
                result.result = result_msg(Result(HARDWARE_FAULT,
                                                  f"homing timed out after {timeout:.1f} s"))
            else:
                goal_handle.abort()
                result.result = result_msg(Result(HARDWARE_FAULT, st["reason"] or "homing failed"))
            self._log("info" if outcome == "done" else "warn",
                      f"home_steering {req.id}: {outcome}: {result.result.message}")
            return result
        finally:
            r.homing_finished(req.id)
            with self._homing_lock:
                self._homing_goal = None


def main(args=None) -> int:
    """Run the hardware node until SIGINT/SIGTERM; exit code 0 (2: bad parameter).
    Start-up and the clean stop: :mod:`bsal_ros.nodes.runtime`."""
    from bsal_ros.nodes.runtime import StartupError, run

    def build(nodes) -> None:
        try:
            node = HardwareNode(context=nodes.context)
        except (ValueError, DescriptionError) as exc:   # bad parameter or robot description
            raise StartupError(f"hardware node: {exc}") from None
        nodes.add(node, stop=node.end_homing_goals, close=node.close)

    return run("hardware_node", build, args=args, executor="multi", num_threads=4)


if __name__ == "__main__":
    raise SystemExit(main())
