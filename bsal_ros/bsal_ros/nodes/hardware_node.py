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

The node's parts: :mod:`.hardware_params` (parameters and the robot
description), :mod:`.hardware_publishers` (topics and message building),
:mod:`.homing_action` (the home_steering action and the auto-home).
"""

from __future__ import annotations

import math

from bsal_interfaces.srv import (ActivateDevices, ClearEncoders, GetDeviceStates, ListDevices,
                                 RenewLease, Reset, SetMotors, SetSonarTiming, SimControl)
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseWithCovarianceStamped, Twist, TwistStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node

from bsal_ros.core.result import BAD_REQUEST, INVALID_ID, OK, REFUSED, Result
from bsal_ros.core.units import quaternion_to_yaw
from bsal_ros.hardware import diagnostics as hwdiag
from bsal_ros.hardware.description import DescriptionError
from bsal_ros.hardware.poller import Poller
from bsal_ros.hardware.robot import Robot
from bsal_ros.hardware.simulation import not_simulated, simulation_of
from bsal_ros.kinds.board_hint import hints as board_hints
from bsal_ros.nodes import hardware_params, ros_base_link
from bsal_ros.nodes.device_state_msg import to_msg
from bsal_ros.nodes.hardware_msgs import device_info_msg, diag_status_msg, result_msg
from bsal_ros.nodes.hardware_params import DYNAMIC, PARAMETERS  # noqa: F401
from bsal_ros.nodes.hardware_publishers import HardwarePublishers, RELIABLE
from bsal_ros.nodes.homing_action import HomingSupervisor
from bsal_ros.nodes.preflight import destroyed_if_refused


class HardwareNode(Node):
    """The hardware node. Keyword overrides become parameter overrides:
    ``HardwareNode(rate_scale=4.0, robot={"sim": {"seed": 7}})``."""

    DYNAMIC = DYNAMIC

    @destroyed_if_refused
    def __init__(self, node_name: str = "hardware_node", *, namespace: str | None = None,
                 context=None, parameter_overrides: list | None = None,
                 start: bool = True, **overrides):
        self._closed = True          # nothing to close until the robot exists
        # every override is declared (public rclpy API), so the robot.* entries of a
        # params file or command line can be listed by prefix
        super().__init__(node_name, namespace=namespace, context=context,
                         parameter_overrides=hardware_params.overrides_list(
                             parameter_overrides, overrides),
                         automatically_declare_parameters_from_overrides=True)
        self.log = self.get_logger()
        self.p = p = hardware_params.declare(self)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.desc = hardware_params.robot_description(self, p)
        self.robot = Robot(self.desc, backend=p["bus_backend"], i2c_bus=int(p["i2c_bus"]),
                           seed=int(p["sim_seed"]), speed_of_sound=float(p["speed_of_sound"]),
                           cmd_timeout=float(p["cmd_vel_timeout"]),
                           odom_noise=(float(p["odom_noise_per_m"]),
                                       float(p["odom_heading_noise_per_rad"])),
                           base_time_rollover_s=float(p["base_time_rollover_s"]),
                           base_profile=ros_base_link.profile_path(p["base_profile"]))
        self.sim = simulation_of(self.robot.bus)   # None on a real bus
        self.frame = {k: p["frame_prefix"] + p[f"{k}_frame"] for k in ("odom", "map", "base")}
        self.out = HardwarePublishers(self, self.robot, self.sim, p, self.frame)
        self._create_interfaces()
        # after the node's own topics: a profile topic that is one of them is refused
        self.base_link = ros_base_link.attach(self, self.robot.bus)   # ros_base only
        self.homing = HomingSupervisor(self, self.robot)
        self._bus_diag = hwdiag.BusDiagnostics()
        self.create_timer(float(p["diagnostics_period"]), self._on_diagnostics,
                          callback_group=MutuallyExclusiveCallbackGroup())
        self.poller = Poller(self.robot, listener=self._on_cycle,
                             name=f"bsal-hw-poll{self.get_namespace().replace('/', '-')}")
        self._closed = False
        if start:
            self.start()

    def _create_interfaces(self) -> None:
        """cmd_vel and pose subscriptions, the command services."""
        cmd_group = MutuallyExclusiveCallbackGroup()
        if self.p["cmd_vel_stamped"]:
            self.create_subscription(TwistStamped, "cmd_vel",
                                     lambda m: self._on_cmd_vel(m.twist), RELIABLE,
                                     callback_group=cmd_group)
        else:
            self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, RELIABLE,
                                     callback_group=cmd_group)
        for topic in ("initialpose", "set_pose"):
            self.create_subscription(PoseWithCovarianceStamped, topic, self._on_set_pose,
                                     RELIABLE, callback_group=cmd_group)
        srv_group = MutuallyExclusiveCallbackGroup()
        for srv_type, name, handler in (
                (Reset, "reset", self._srv_reset),
                (ActivateDevices, "activate_devices", self._srv_activate),
                (SetMotors, "set_motors", self._srv_set_motors),
                (GetDeviceStates, "get_device_states", self._srv_get_states),
                (ClearEncoders, "clear_encoders", self._srv_clear_encoders),
                (SetSonarTiming, "set_sonar_timing", self._srv_sonar_timing),
                (ListDevices, "list_devices", self._srv_list_devices),
                (SimControl, "sim_control", self._srv_sim_control)):
            self.create_service(srv_type, name, handler, callback_group=srv_group)
        # lease renewals in their own group: a slow command never delays them
        self.create_service(RenewLease, "renew_lease", self._srv_renew_lease,
                            callback_group=MutuallyExclusiveCallbackGroup())

    # ---- life cycle --------------------------------------------------------
    def start(self) -> None:
        """Start the boards, publish the base time, auto-home, start polling."""
        self.robot.start(activate=bool(self.p["activate_on_start"]))
        self.out.publish_base_time()
        self._log_events()
        up = [b.name for b in self.robot.boards.values() if b.up]
        down = [b.name for b in self.robot.boards.values() if not b.up]
        self.log.info(f"hardware node: backend {self.p['bus_backend']} ({self.robot.bus.name}), "
                      f"{len(self.robot.boards)} boards ({len(up)} up"
                      + (f", down: {', '.join(down)}" if down else "") + f"), "
                      f"{len(self.robot.devices)} devices")
        for line in board_hints(self.desc):     # a plugin's kind that no board carries
            self.log.info(line)
        if self.p["auto_home"]:
            self.homing.start_auto_home()
        self.poller.start()

    def close(self) -> None:
        """Stop polling and close the robot (motors stopped); safe to call twice,
        and on a node whose start-up failed."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self.poller.stop()
        self.robot.close()
        if self.base_link is not None:
            self.base_link.close()

    def destroy_node(self):
        """Close the robot, then destroy the node."""
        self.close()
        return super().destroy_node()

    def _on_set_parameters(self, params) -> SetParametersResult:
        """A few parameters change at run time; the others need a restart."""
        if not hasattr(self, "robot"):
            return SetParametersResult(successful=True)  # declaration at start-up
        why, changes = hardware_params.record().check_change(params)
        if why:
            return SetParametersResult(successful=False, reason=why)
        self.p.update(changes)          # rclpy's own (use_sim_time) are not in the record
        # each declaration says where its change goes (hardware/node_params.py)
        hardware_params.record().apply_change(self, changes)
        return SetParametersResult(successful=True)

    # ---- logging ---------------------------------------------------------------
    def log_at(self, level: str, msg: str) -> None:
        """One log line at "error", "warn" or "info"."""
        # one call site per severity: rclpy refuses a severity change at one call site
        if level == "error":
            self.log.error(msg)
        elif level == "warn":
            self.log.warning(msg)
        else:
            self.log.info(msg)

    def _log_events(self) -> None:
        for ev in self.robot.drain_events():
            self.log_at(ev.level, ev.message)

    # ---- poller thread, timers --------------------------------------------------
    def _on_cycle(self, updates) -> None:
        self.out.on_cycle(updates)
        if self.robot.has_events():
            self._log_events()

    def _on_diagnostics(self) -> None:
        r = self.robot
        if r.maybe_roll_base_time():
            self.log.info(f"base time moved to {r.base_time:.0f}")
            self.out.publish_base_time()
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        prefix = f"{self.get_fully_qualified_name()}: "
        now = r.clock()
        diags = [self._bus_diag(r, now)]
        # the parameters as they are now: a kind's run-time change shows at once
        diags += hwdiag.device_diagnostics(r, now, float(self.p["stale_factor"]), self.p)
        arr.status = [diag_status_msg(dd, prefix) for dd in diags]
        self.out.pub_diag.publish(arr)
        self.homing.check_auto_home()
        self._log_events()

    # ---- subscriptions -------------------------------------------------------------
    def _on_cmd_vel(self, msg: Twist) -> None:
        self.robot.drive(float(msg.linear.x), float(msg.angular.z))

    def _on_set_pose(self, msg: PoseWithCovarianceStamped) -> None:
        p = msg.pose.pose
        q = p.orientation
        yaw = quaternion_to_yaw(q.x, q.y, q.z, q.w)
        c = list(msg.pose.covariance)
        idx = (0, 1, 5)
        cov3 = [[float(c[idx[i] * 6 + idx[j]]) for j in range(3)] for i in range(3)]
        values = [p.position.x, p.position.y, yaw] + [v for row in cov3 for v in row]
        if not all(math.isfinite(v) for v in values):
            # A NaN would poison the estimate (and pose, odom, RDI) until the next set_pose.
            self.log.warning("set_pose ignored: position, orientation or covariance is not "
                             "finite", throttle_duration_sec=5.0)
            return
        self.robot.set_pose(float(p.position.x), float(p.position.y), yaw, cov3)
        self.log.info(f"pose set to ({p.position.x:.3f}, {p.position.y:.3f}, {yaw:.3f})")

    # ---- services --------------------------------------------------------------------
    def _answer(self, response, res: Result, what: str):
        response.result = result_msg(res)
        if not res.ok:
            self.log.warning(f"{what} refused: {res.message}")
        return response

    def _srv_reset(self, req, resp):
        res = self.robot.reset()
        resp.states = self.out.command_states(self.robot.after_command())
        self.homing.auto_homing = False
        self.log.info(f"reset: {res.message}")
        return self._answer(resp, res, "reset")

    def _srv_activate(self, req, resp):
        res = self.robot.activate(req.device_class, list(req.ids), list(req.active))
        resp.states = self._changed(res, req.device_class, req.ids)
        return self._answer(resp, res, "activate_devices")

    def _srv_set_motors(self, req, resp):
        cmds = [(c.id, c.mode, c.value) for c in req.commands]
        res = self.robot.set_motors(req.device_class, cmds, float(req.lease_s))
        resp.states = self._changed(res, req.device_class, [c.id for c in req.commands])
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
        resp.states = [to_msg(s, self.out.frame_of(self.robot.device(s.device_class, s.id)))
                       for s in snaps]
        resp.result = result_msg(res)
        return resp

    def _srv_clear_encoders(self, req, resp):
        res = self.robot.clear_encoders(list(req.ids))
        resp.states = self._changed(res, "relative_encoder", req.ids)
        return self._answer(resp, res, "clear_encoders")

    def _srv_sonar_timing(self, req, resp):
        t = [(x.id, x.firing_slot, x.interval_ms) for x in req.timings]
        res = self.robot.set_sonar_timing(t)
        resp.states = self._changed(res, "ultrasonic", [x[0] for x in t])
        return self._answer(resp, res, "set_sonar_timing")

    def _changed(self, res: Result, device_class: str, ids) -> list:
        """The states of the boards a command changed, read after it, for its
        answer (none when it changed nothing): the RCI gateway serves the next
        reads from them (issue 31). ``device_states`` gets them right after
        the answer, and never an older reading after them (issue 21)."""
        if res.code in (BAD_REQUEST, INVALID_ID):
            return []
        return self.out.command_states(self.robot.after_command(device_class, list(ids)))

    def _srv_list_devices(self, req, resp):
        devs = self.robot.list_devices()
        resp.devices = [
            device_info_msg(d, self.out.frame_of(self.robot.device(d["device_class"], d["id"])))
            for d in devs]
        resp.result = result_msg(Result(OK, f"{len(devs)} devices"))
        return resp

    def _srv_sim_control(self, req, resp):
        if self.sim is None:
            res = not_simulated(self.robot.backend)
        else:
            res = self.sim.control(req.command, req.target, req.fault, list(req.values))
        if res.ok:
            self.log.info(f"sim_control {req.command} {req.target} {req.fault}: {res.message}")
        return self._answer(resp, res, f"sim_control {req.command}")


def main(args=None, hard_exit: bool = True, stop=None) -> int:
    """Run the hardware node until SIGINT/SIGTERM; exit code 0 (2: bad parameter).
    Start-up and the clean stop: :mod:`bsal_ros.nodes.runtime`. ``stop``: the
    request the console script's entry point made (:mod:`bsal_ros.entry_points`)."""
    from bsal_ros.nodes.preflight import one_node
    from bsal_ros.nodes.runtime import run, StartupError

    def build(nodes) -> None:
        try:
            node = HardwareNode(context=nodes.context)
        except (ValueError, DescriptionError) as exc:   # bad parameter or robot description
            raise StartupError(f"hardware node: {exc}") from None
        nodes.add(node, stop=node.homing.end_goals, close=node.close)

    return run("hardware_node", build, args=args, hard_exit=hard_exit,
               check=one_node("hardware_node", "hardware node: "), stop=stop)


if __name__ == "__main__":
    raise SystemExit(main())
