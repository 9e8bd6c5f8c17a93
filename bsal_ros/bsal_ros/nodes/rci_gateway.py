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

"""RCI gateway node: legacy control applications (BSAL rci-client, 001 ch. 3/4)
drive the ROS robot through the hardware node's services, action and topics.

Thin: the protocol state machine, the TCP server, the users file and the
safety rules live in :mod:`bsal_ros.rci` (no ROS); the robot port over rclpy
(service and action clients, the state cache, the ``rci/ca_states`` and
``rci/session`` publishers) is :mod:`bsal_ros.nodes.rci_ros_port`; the
parameters are :class:`~bsal_ros.nodes.gateway_params.RciGatewayParams`.

Threads: the rclpy executor spins in its own thread; the asyncio loop (sockets,
sessions) in another; ROS callbacks hand results over with
``loop.call_soon_threadsafe`` only. See docs/INTERFACES.md, "RCI gateway".
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
import time

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node

from bsal_ros.loop_thread import LoopThread
from bsal_ros.nodes import params
from bsal_ros.nodes.gateway_params import RciGatewayParams
from bsal_ros.nodes.preflight import destroyed_if_refused
from bsal_ros.nodes.rci_ros_port import RosRobotPort
from bsal_ros.nodes.ros_logging import python_logger_for
from bsal_ros.rci.server import RciServer
from bsal_ros.rci.session import SessionConfig
from bsal_ros.rci.users import (check_bind_allowed, file_permission_warning, unchecked_key_warning,
                                Users, UsersFileError)

#: s a hardware node may be seen in part (some of its services discovered,
#: not all) before the gateway names what is missing
PARTIAL_WARN_S = 5.0


class RciGatewayNode(Node):
    """The RCI gateway. ``start()`` runs the asyncio server in its own thread;
    the caller spins the node in an executor (see ``main``)."""

    @destroyed_if_refused
    def __init__(self, **kwargs):
        # every override is declared, so one that no parameter reads is refused by name
        kwargs.setdefault("automatically_declare_parameters_from_overrides", True)
        super().__init__("rci_gateway", **kwargs)
        self.server: RciServer | None = None   # before anything can fail: destroy_node reads it
        self.p = params.declare(RciGatewayParams, self, "RCI gateway")   # ValueError: no start
        users_path = resolve_users_file(self.p.users_file)
        self.users = load_users(users_path, self.p.host)     # UsersFileError: no start
        warning = file_permission_warning(users_path, self.users)
        if warning:
            self.get_logger().warning(warning)
        unchecked = unchecked_key_warning(self.users)   # key_check: none (BSAL 0.1.0)
        if unchecked:
            self.get_logger().warning(unchecked)
        self.robot = RosRobotPort(self, self.p)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = LoopThread("rci-asyncio")
        self._pylog = python_logger_for(self, "bsal_ros.rci")
        # after the declaration: rclpy calls these callbacks for declarations too
        self.add_on_set_parameters_callback(self._on_set_parameters)

    def _on_set_parameters(self, params) -> SetParametersResult:
        """A run-time ``ros2 param set``: refused with the reason, or applied
        (watchdog_s, idle_limit_s: at once, also in open sessions)."""
        why, changes = RciGatewayParams.check_change(params)
        if why:
            self.get_logger().warning(f"parameter change refused: {why}")
            return SetParametersResult(successful=False, reason=why)
        if changes:
            self.p = dataclasses.replace(self.p, **changes)
            loop = self.loop   # None: _open has not read self.p yet
            if loop is not None:
                try:
                    loop.call_soon_threadsafe(self._apply_to_server, self.p)
                except RuntimeError:   # the loop has closed: nothing left to apply to
                    pass
            self.get_logger().info("parameters changed: " + ", ".join(
                f"{name} {value!r}" for name, value in changes.items()))
        return SetParametersResult(successful=True)

    def _apply_to_server(self, params: RciGatewayParams) -> None:
        """Loop thread: the server and its sessions read ``params`` from now on
        (they read the shared SessionConfig's parameters at every check)."""
        if self.server is not None:
            self.server.cfg.params = params

    # --------------------------------------------------------------- asyncio side
    def start(self, timeout: float = 10.0) -> int:
        """Start the asyncio thread and the TCP server in it; returns the bound port."""
        return self._loop_thread.start(self._open(), timeout)

    async def _open(self) -> int:
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.robot.bind_loop(loop)
        # the sessions read the node's own record: no copy, no second default
        self.server = RciServer(self.robot, self.users, self.p["host"], self.p["port"],
                                SessionConfig(self.p), self._pylog)
        await self.server.start()
        loop.create_task(self._device_list_task())
        return self.server.bound_port

    async def _device_list_task(self) -> None:
        """Learn the device list once every hardware node service is
        discovered; retry until it answers, and again whenever it comes back
        after an outage. A hardware node seen only in part for
        :data:`PARTIAL_WARN_S` is named once, with what is missing."""
        have = warned = False
        partial_since = None
        doubled: list[str] = []
        while True:
            try:
                missing = self.robot.undiscovered()
            except Exception:   # noqa: BLE001 - re-raised unless we are shutting down
                # SIGTERM invalidates the context before stop() ends this loop.
                if not self.context.ok():
                    return
                raise
            if not missing:
                partial_since, warned = None, False
                if not have:
                    have = await self.robot.refresh_device_list()
                    if have:
                        self.get_logger().info("RCI gateway: device list received")
            else:
                have = False
                if len(missing) == self.robot.interface_count:     # none seen: not running
                    partial_since = None
                elif partial_since is None:
                    partial_since = time.monotonic()
                elif not warned and time.monotonic() - partial_since >= PARTIAL_WARN_S:
                    warned = True
                    self.get_logger().warning(
                        f"RCI gateway: the hardware node is seen in part for "
                        f"{time.monotonic() - partial_since:.1f} s; not discovered: "
                        f"{', '.join(missing)} (the device list is asked once they are)")
            doubled = self._warn_doubled(doubled)
            await asyncio.sleep(0.5 if have else 0.1)

    def _warn_doubled(self, before: list[str]) -> list[str]:
        """Warn when the set of interfaces served twice changes to a non-empty one."""
        doubled = self.robot.duplicated()
        if doubled and doubled != before:
            self.get_logger().warning(
                f"RCI gateway: more than one server offers {', '.join(doubled)}: two hardware "
                f"nodes in one ROS domain and namespace? Each carries out every command; "
                f"homing is refused (ABORT) while this lasts")
        return doubled

    def stop_serving(self, timeout: float = 3.0) -> None:
        """Close the TCP server and every session within ``timeout`` s and join
        the asyncio thread. The sessions' safety stops are service calls:
        the caller's executor must still spin meanwhile. Idempotent."""
        server = self.server
        closing = server.close if server is not None else None
        if not self._loop_thread.stop(closing, timeout):
            self.get_logger().warning("RCI gateway: the asyncio thread did not end")
        elif self._loop_thread.close_error is not None:
            self.get_logger().warning(f"RCI gateway: closing: {self._loop_thread.close_error!r}")
            self._loop_thread.close_error = None

    def stop(self, timeout: float = 3.0) -> None:
        """``stop_serving``, then the lease keeper (its timer and client are
        destroyed: call this once no executor spins the node any more, or
        rclpy's executor may use them meanwhile) and the ca_states publisher."""
        self.stop_serving(timeout)
        self.robot.close()

    def destroy_node(self):
        """Stop serving and close the port, then destroy the node."""
        if hasattr(self, "robot"):      # not when the constructor refused to start
            self.stop()
        return super().destroy_node()


def resolve_users_file(users_file: str) -> str:
    """The users file: the parameter, else the installed or source config/users.yaml."""
    if users_file:
        return users_file
    try:
        from ament_index_python.packages import get_package_share_directory
        cand = Path(get_package_share_directory("bsal_ros")) / "config" / "users.yaml"
        if cand.exists():
            return str(cand)
    except Exception:   # noqa: BLE001 - not installed with ament: use the source tree
        pass
    return str(Path(__file__).resolve().parents[2] / "config" / "users.yaml")


def load_users(path: str, host: str) -> Users:
    """The users of ``path``, allowed on ``host``.

    Raises UsersFileError (one line) when the file is missing or malformed,
    or when its users may not be served on ``host`` (``key_check: none`` off
    loopback)."""
    try:
        users = Users.load(path)
    except UsersFileError as exc:
        raise UsersFileError(f"parameter users_file ({path!r}): {exc}") from None
    check_bind_allowed(host, users)
    return users


def main(args=None, hard_exit: bool = True, stop=None) -> int:
    """Run the RCI gateway until SIGINT/SIGTERM; exit code 0 (2: it cannot start).
    Start-up and the clean stop: :mod:`bsal_ros.nodes.runtime`. ``stop``: the
    request the console script's entry point made (:mod:`bsal_ros.entry_points`)."""
    from bsal_ros.nodes.preflight import one_node
    from bsal_ros.nodes.runtime import run, StartupError

    def build(nodes) -> None:
        try:
            node = RciGatewayNode(context=nodes.context)
        except (UsersFileError, ValueError) as exc:
            raise StartupError(str(exc)) from None
        nodes.add(node, stop=node.stop_serving, close=node.stop)
        try:
            port = node.start()
        except OSError as exc:
            raise StartupError(f"cannot open the RCI port: {exc}") from None
        node.get_logger().info(f"RCI gateway ready on {node.p['host']}:{port}")

    return run("rci_gateway", build, args=args, hard_exit=hard_exit,
               check=one_node("rci_gateway", ""), stop=stop)


if __name__ == "__main__":
    raise SystemExit(main())
