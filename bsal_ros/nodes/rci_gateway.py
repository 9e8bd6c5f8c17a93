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
import threading
from pathlib import Path

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rcl_interfaces.msg import SetParametersResult

from bsal_ros.nodes.gateway_params import RciGatewayParams
from bsal_ros.nodes.rci_ros_port import RosRobotPort
from bsal_ros.nodes.ros_logging import python_logger_for
from bsal_ros.rci.server import RciServer
from bsal_ros.rci.session import SessionConfig
from bsal_ros.rci.users import (Users, UsersFileError, check_bind_allowed,
                                file_permission_warning, unchecked_key_warning)


class RciGatewayNode(Node):
    """The RCI gateway. ``start()`` runs the asyncio server in its own thread;
    the caller spins the node in an executor (see ``main``)."""

    def __init__(self, **kwargs):
        super().__init__("rci_gateway", **kwargs)
        self.p = RciGatewayParams.declare(self)   # ValueError: refuse to start
        users_path = self._users_path()
        self.users = Users.load(users_path)
        check_bind_allowed(self.p.host, self.users)    # UsersFileError: refuse to start
        warning = file_permission_warning(users_path, self.users)
        if warning:
            self.get_logger().warning(warning)
        unchecked = unchecked_key_warning(self.users)   # key_check: none (BSAL 0.1.0)
        if unchecked:
            self.get_logger().warning(unchecked)
        self.robot = RosRobotPort(self, self.p)
        self.server: RciServer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
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
            loop = self.loop   # None: _run_loop has not read self.p yet
            if loop is not None:
                try:
                    loop.call_soon_threadsafe(self._apply_to_server, changes)
                except RuntimeError:   # the loop has closed: nothing left to apply to
                    pass
            self.get_logger().info("parameters changed: " + ", ".join(
                f"{name} {value!r}" for name, value in changes.items()))
        return SetParametersResult(successful=True)

    def _apply_to_server(self, changes: dict) -> None:
        """Loop thread: the sessions read the server's SessionConfig on every check."""
        if self.server is not None:
            for name, value in changes.items():
                setattr(self.server.cfg, name, value)

    def _users_path(self) -> str:
        """The users file: the parameter, else the installed or source config/users.yaml."""
        path = self.p.users_file
        if path:
            return path
        try:
            from ament_index_python.packages import get_package_share_directory
            cand = Path(get_package_share_directory("bsal_ros")) / "config" / "users.yaml"
            if cand.exists():
                return str(cand)
        except Exception:   # noqa: BLE001 - not installed with ament: use the source tree
            pass
        return str(Path(__file__).resolve().parents[2] / "config" / "users.yaml")

    # --------------------------------------------------------------- asyncio side
    def start(self, timeout: float = 10.0) -> int:
        """Start the TCP server thread; returns the bound port."""
        self._thread = threading.Thread(target=self._run_loop, name="rci-asyncio", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("RCI gateway did not start")
        if self._error is not None:
            raise self._error
        return self.server.bound_port

    def _run_loop(self) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        asyncio.set_event_loop(loop)
        self.robot.bind_loop(loop)
        p = self.p
        cfg = SessionConfig(byteorder=p["byteorder"], watchdog_s=p["watchdog_s"],
                            init_timeout_s=p["init_timeout_s"],
                            hardware_gone_s=p["hardware_gone_s"],
                            login_max_failures=int(p["login_max_failures"]),
                            login_window_s=float(p["login_window_s"]),
                            login_delay_s=float(p["login_delay_s"]),
                            login_max_delay_s=float(p["login_max_delay_s"]),
                            max_pending=int(p["max_pending"]),
                            max_pending_per_address=int(p["max_pending_per_address"]),
                            init_quiet_s=float(p["init_quiet_s"]),
                            idle_limit_s=float(p["idle_limit_s"]))
        try:
            self.server = RciServer(self.robot, self.users, self.p["host"], self.p["port"], cfg,
                                    self._pylog)
            loop.run_until_complete(self.server.start())
        except BaseException as exc:   # noqa: BLE001 - reported to start()
            self._error = exc
            self._ready.set()
            loop.close()
            return
        loop.create_task(self._device_list_task())
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            try:
                loop.run_until_complete(self.server.close())
                tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for t in tasks:
                    t.cancel()
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            finally:
                loop.close()

    async def _device_list_task(self) -> None:
        """Learn the device list; retry until the hardware node answers, and
        again whenever it comes back after an outage."""
        have = False
        while True:
            try:
                ready = self.robot.device_list_ready()
            except Exception:   # noqa: BLE001 - re-raised unless we are shutting down
                # SIGTERM invalidates the context before stop() ends this loop.
                if not self.context.ok():
                    return
                raise
            if ready and not have:
                have = await self.robot.refresh_device_list()
                if have:
                    self.get_logger().info("RCI gateway: device list received")
            elif not ready:
                have = False
            await asyncio.sleep(0.5 if have else 0.1)

    def stop(self) -> None:
        if self.loop is not None and self._thread is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10.0)
        self.robot.close()

    def destroy_node(self):
        self.stop()
        return super().destroy_node()


def main(args=None) -> int:
    rclpy.init(args=args)
    node = None
    executor = MultiThreadedExecutor(num_threads=2)
    try:
        try:
            node = RciGatewayNode()
        except UsersFileError as exc:
            rclpy.logging.get_logger("rci_gateway").fatal(str(exc))
            return 2
        executor.add_node(node)
        port = node.start()
        node.get_logger().info(f"RCI gateway ready on {node.p['host']}:{port}")
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        executor.shutdown()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
