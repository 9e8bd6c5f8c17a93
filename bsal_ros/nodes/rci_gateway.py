"""RCI gateway node: legacy control applications (BSAL rci-client, 001 ch. 3/4)
drive the ROS robot through the hardware node's services, action and topics.

Thin: the protocol state machine, the TCP server, the users file and the
safety rules live in :mod:`bsal_ros.rci` (no ROS). This module implements the
:class:`~bsal_ros.rci.port.RobotPort` with rclpy:

* service/action clients created once at start-up, called with
  ``call_async`` / ``send_goal_async`` from the asyncio thread and awaited with
  a timeout (never ``Client.call()``, never from an executor callback);
* a cache of the hardware node's ``device_states`` topic, so Get inquiries are
  answered without a service call when the data is no older than one board
  cycle (otherwise ``get_device_states`` is called);
* what was delivered to the control application is republished on
  ``rci/ca_states`` (the RDI control-application stream, 001 1.1) by a worker
  thread with a bounded queue, and session changes on ``rci/session``.

Threads: the rclpy executor spins in its own thread; the asyncio loop (sockets,
sessions) in another; ROS callbacks hand results over with
``loop.call_soon_threadsafe`` only. See docs/INTERFACES.md, "RCI gateway".
"""

from __future__ import annotations

import asyncio
import collections
import copy
import os
import threading
import time
from pathlib import Path
from typing import Iterable, Sequence

import rclpy
from rclpy.action import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)

from bsal_interfaces.action import HomeSteering
from bsal_interfaces.msg import DeviceStateArray, MotorCommand
from bsal_interfaces.srv import (ActivateDevices, ClearEncoders, GetDeviceStates, ListDevices,
                                 Reset, SetMotors, SetSonarTiming)
from bsal_interfaces.msg import SonarTiming as SonarTimingMsg
from std_msgs.msg import String

from bsal_ros.loop_thread import LoopThread
from bsal_ros.nodes.motor_lease import MotorLeaseKeeper
from bsal_ros.nodes.ros_logging import python_logger_for
from bsal_ros.protocol.values import speedval_pack
from bsal_ros.rci import port as P
from bsal_ros.rci.server import RciServer
from bsal_ros.rci.session import SessionConfig
from bsal_ros.rci.users import (Users, UsersFileError, check_bind_allowed,
                                file_permission_warning)

_DELIVERED_QUEUE = 64


class RosSnapshot(P.DeviceSnapshot):
    """A DeviceSnapshot that remembers the DeviceState message it came from."""

    __slots__ = ("msg",)


def snapshot_from_msg(m) -> RosSnapshot:
    st = m.header.stamp
    s = RosSnapshot(m.device_class, m.id, m.on, m.up, m.ok, st.sec * 1_000_000_000 + st.nanosec,
                    m.delay_us, m.d_count, m.count, m.accel_g, m.speedval, m.mposval, m.homing,
                    m.homed)
    s.msg = m
    return s


class _Bridge:
    """Awaiting rclpy futures from asyncio (done callbacks hop threads safely)."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop

    async def wait(self, rfut, timeout: float, what: str):
        afut = self.loop.create_future()

        def transfer(f):
            if afut.done():
                return
            exc = f.exception()
            if exc is not None:
                afut.set_exception(P.PortUnavailable(f"{what}: {exc!r}"))
            else:
                afut.set_result(f.result())

        loop = self.loop

        def hand_over(f):
            try:
                loop.call_soon_threadsafe(transfer, f)
            except RuntimeError:       # gateway stopped: the loop is closed
                pass
        # rclpy runs done callbacks as new executor tasks: one more wait-set
        # round trip (~0.5 ms) per command. Handing the result to asyncio is
        # thread-safe, so it is done where the executor sets the result; then
        # rclpy's own scheduling runs as before, so its callbacks (one drops
        # the request from the client's pending table) still run: no leak.
        scheduler = getattr(rfut, "_schedule_or_invoke_done_callbacks", None)
        if scheduler is None:           # another rclpy: the plain, slower way
            rfut.add_done_callback(hand_over)
        else:
            def schedule(*args, **kwargs):
                hand_over(rfut)
                return scheduler(*args, **kwargs)
            rfut._schedule_or_invoke_done_callbacks = schedule
            if rfut.done():
                hand_over(rfut)
        try:
            return await asyncio.wait_for(afut, timeout)
        except asyncio.TimeoutError:
            rfut.cancel()
            raise P.PortUnavailable(f"{what}: no answer within {timeout:.2f} s") from None


class RosRobotPort(P.RobotPort):
    """RobotPort over the hardware node's ROS interface."""

    def __init__(self, node: "RciGatewayNode"):
        self.node = node
        p = node.p
        cbg = ReentrantCallbackGroup()
        n = node.hw_name
        self.timeout = p["service_timeout_s"]
        self.home_timeout = p["home_timeout_s"]
        self.cli = {
            "reset": node.create_client(Reset, n("reset"), callback_group=cbg),
            "activate": node.create_client(ActivateDevices, n("activate_devices"),
                                           callback_group=cbg),
            "set_motors": node.create_client(SetMotors, n("set_motors"), callback_group=cbg),
            "clear": node.create_client(ClearEncoders, n("clear_encoders"), callback_group=cbg),
            "timing": node.create_client(SetSonarTiming, n("set_sonar_timing"),
                                         callback_group=cbg),
            "get": node.create_client(GetDeviceStates, n("get_device_states"),
                                      callback_group=cbg),
            "list": node.create_client(ListDevices, n("list_devices"), callback_group=cbg),
        }
        self.home = ActionClient(node, HomeSteering, n("home_steering"), callback_group=cbg)
        # Motors this gateway set running stop by themselves if the gateway
        # dies: every speed is leased and the keeper renews it while we live.
        self.lease = MotorLeaseKeeper(node, lease_s=p["motor_lease_s"],
                                      renew_period_s=p["motor_lease_renew_s"],
                                      callback_group=cbg,
                                      hardware_namespace=p["hardware_namespace"])
        self._cache: dict[tuple[str, int], tuple[RosSnapshot, float]] = {}
        self._interval: dict[tuple[str, int], float] = {}
        self._ids: dict[str, frozenset[int]] = {}
        self._seen: dict[str, frozenset[int]] = {}
        self.max_age_factor = p["cache_max_age_cycles"]
        self.min_age = p["cache_min_age_s"]
        node.create_subscription(DeviceStateArray, n("device_states"), self._on_states,
                                 qos_profile_sensor_data if p["states_qos_sensor_data"]
                                 else QoSProfile(depth=20), callback_group=cbg)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                              history=HistoryPolicy.KEEP_LAST)
        self.pub_ca = node.create_publisher(DeviceStateArray, "rci/ca_states", reliable)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.pub_session = node.create_publisher(String, "rci/session", latched)
        self._bridge: _Bridge | None = None
        self._out: collections.deque = collections.deque(maxlen=_DELIVERED_QUEUE)
        self._latest: dict = {}
        self._published: dict = {}
        self._out_event = threading.Event()
        self._out_stop = False
        self.dropped = 0
        self._publisher = threading.Thread(target=self._publish_loop, name="rci-ca-publisher",
                                           daemon=True)
        self._publisher.start()

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        self._bridge = _Bridge(loop)

    def close(self) -> None:
        self.lease.close()
        self._out_stop = True
        self._out_event.set()
        self._publisher.join(2.0)

    # --------------------------------------------------------------- cache
    def _on_states(self, msg: DeviceStateArray) -> None:
        now = time.monotonic()
        cache, interval = self._cache, self._interval
        for m in msg.states:
            key = (m.device_class, m.id)
            old = cache.get(key)
            if old is not None:
                dt = now - old[1]
                if dt > 0:
                    prev = interval.get(key)
                    interval[key] = dt if prev is None else 0.8 * prev + 0.2 * dt
            cache[key] = (snapshot_from_msg(m), now)
            seen = self._seen.get(m.device_class, frozenset())
            if m.id not in seen:      # replaced, never mutated: readers in other threads
                self._seen[m.device_class] = seen | {m.id}

    def now_ns(self) -> int:
        return time.time_ns()

    def cached(self, device_class: str, ids: Sequence[int]):
        now = time.monotonic()
        out = []
        cache, interval = self._cache, self._interval
        for i in ids:
            key = (device_class, i)
            e = cache.get(key)
            if e is None:
                return None
            limit = interval.get(key, 0.5) * self.max_age_factor
            if now - e[1] > (limit if limit > self.min_age else self.min_age):
                return None
            out.append(e[0])
        return out

    async def fetch(self, device_class: str, ids: Sequence[int]):
        res = await self._request("get", GetDeviceStates.Request(device_class=device_class,
                                                                  ids=list(ids)))
        if res.result.code != 0:
            raise P.PortUnavailable(f"get_device_states: {res.result.message}")
        by_id = {m.id: snapshot_from_msg(m) for m in res.states}
        try:
            return [by_id[i] for i in ids]
        except KeyError as exc:
            raise P.PortUnavailable(f"get_device_states: no state for id {exc}") from None

    def device_ids(self, device_class: str) -> frozenset[int]:
        known = self._ids.get(device_class)
        if known is not None:
            return known
        seen = self._seen.get(device_class)
        if seen:
            return seen
        raise P.PortUnavailable("device list not known yet (hardware node not seen)")

    async def refresh_device_list(self) -> bool:
        try:
            res = await self._request("list", ListDevices.Request())
        except P.PortUnavailable:
            return False
        ids: dict[str, set[int]] = collections.defaultdict(set)
        for d in res.devices:
            ids[d.device_class].add(d.id)
        self._ids = {k: frozenset(v) for k, v in ids.items()}
        for cls in P.SENSOR_CLASSES + P.MOTOR_CLASSES:
            self._ids.setdefault(cls, frozenset())
        return True

    # ------------------------------------------------------------- requests
    async def _request(self, name: str, req, timeout: float | None = None):
        cli = self.cli[name]
        if not cli.service_is_ready():
            raise P.PortUnavailable(f"service {cli.srv_name} not available")
        return await self._bridge.wait(cli.call_async(req), timeout or self.timeout,
                                       cli.srv_name)

    @staticmethod
    def _result(res) -> P.Result:
        r = res.result
        return P.Result(int(r.code), str(r.message))

    async def reset(self) -> P.Result:
        return self._result(await self._request("reset", Reset.Request()))

    async def activate(self, device_class, ids, active) -> P.Result:
        req = ActivateDevices.Request(device_class=device_class, ids=list(ids),
                                      active=[bool(a) for a in active])
        return self._result(await self._request("activate", req))

    async def set_motors(self, device_class, settings) -> P.Result:
        cmds = [MotorCommand(id=s.id, mode=MotorCommand.MODE_DUTY_CYCLE if s.duty
                             else MotorCommand.MODE_VELOCITY, value=float(s.value))
                for s in settings]
        res = self._result(await self._request(
            "set_motors", SetMotors.Request(device_class=device_class, commands=cmds,
                                            lease_s=self.lease.lease_s)))
        if res.ok or not any(s.value for s in settings):
            # a stop the board latched counts too: the node dropped that lease
            self.lease.update(device_class, [(s.id, s.value) for s in settings])
        if res.ok:
            # the next board cycle will report it; until then Get Motor answers
            # with what was commanded, not the setting before it
            for s in settings:
                key = (device_class, s.id)
                e = self._cache.get(key)
                if e is not None:
                    snap = copy.copy(e[0])
                    snap.speedval = speedval_pack(s.duty, s.value)
                    # The executor thread may have stored a newer reading
                    # meanwhile: only replace the entry this was built from.
                    if self._cache.get(key) is e:
                        self._cache[key] = (snap, e[1])
        return res

    async def clear_encoders(self, ids) -> P.Result:
        return self._result(await self._request("clear", ClearEncoders.Request(ids=list(ids))))

    async def set_sonar_timing(self, timings) -> P.Result:
        req = SetSonarTiming.Request(timings=[
            SonarTimingMsg(id=t.id, firing_slot=t.firing_slot, interval_ms=t.interval_ms)
            for t in timings])
        return self._result(await self._request("timing", req))

    async def home_steering(self, motor_id: int) -> P.Result:
        if not self.home.server_is_ready():
            raise P.PortUnavailable("action home_steering not available")
        goal = HomeSteering.Goal(id=motor_id, timeout_s=float(self.home_timeout))
        handle = await self._bridge.wait(self.home.send_goal_async(goal), self.timeout,
                                         "home_steering goal")
        if not handle.accepted:
            return P.Result(P.Result.BUSY, "homing goal rejected")
        try:
            wrapped = await self._bridge.wait(handle.get_result_async(), self.home_timeout + 5.0,
                                              "home_steering result")
        except asyncio.CancelledError:
            handle.cancel_goal_async()
            raise
        except P.PortUnavailable:
            handle.cancel_goal_async()
            raise
        r = wrapped.result.result
        return P.Result(int(r.code), str(r.message))

    async def stop_motors(self, device_class: str) -> bool:
        """Zero every motor of the class, one request per motor (so one refused
        motor does not block the others). A motor that is off (REFUSED: not
        active) or unknown counts as stopped; a board fault or no answer does not."""
        ids = sorted(self._ids.get(device_class) or self._seen.get(device_class) or ())
        ok = True
        for i in ids:
            try:
                res = await self.set_motors(device_class, [P.MotorSetting(i, True, 0.0)])
            except Exception as exc:   # noqa: BLE001 - PortUnavailable and friends
                self.node.get_logger().warning(f"safety stop: {device_class} {i}: {exc}")
                ok = False
                continue
            if res.code in (P.Result.HARDWARE_FAULT, P.Result.BUSY):
                self.node.get_logger().warning(
                    f"safety stop: {device_class} {i} not stopped: {res.message}")
                ok = False
        return ok

    # ------------------------------------------------- control-application view
    def delivered(self, device_class, snapshots, what) -> None:
        # newest wins per (class, kind); the worker publishes at most
        # ca_states_max_hz batches per second, so a control application
        # polling at kHz rates costs the gateway nothing extra
        key = (device_class, what)
        if key in self._latest:
            self.dropped += 1
        self._latest[key] = snapshots
        self._out_event.set()

    def session_event(self, event: str, detail: str = "") -> None:
        self._out.append(f"{event} {detail}".strip())
        self._out_event.set()

    def _publish_loop(self) -> None:
        period = 1.0 / max(self.node.p["ca_states_max_hz"], 0.1)
        last = 0.0
        while not self._out_stop:
            self._out_event.wait(0.5)
            self._out_event.clear()
            try:
                while self._out:
                    self.pub_session.publish(String(data=self._out.popleft()))
                if not self._latest:
                    continue
                wait = last + period - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                latest, self._latest = self._latest, {}
                last = time.monotonic()
                stamp = self.node.get_clock().now().to_msg()
                for (cls, what), snaps in latest.items():
                    # the same readings delivered again change nothing in the view
                    sig = tuple((x.id, x.stamp_ns, x.speedval) for x in snaps)
                    if self._published.get((cls, what)) == sig:
                        continue
                    self._published[(cls, what)] = sig
                    arr = DeviceStateArray()
                    arr.header.stamp = stamp
                    arr.header.frame_id = what
                    arr.states = [x.msg for x in snaps if getattr(x, "msg", None) is not None]
                    self.pub_ca.publish(arr)
            except Exception as exc:   # noqa: BLE001 - the thread must outlive one bad array
                if not self.node.context.ok():
                    return          # shutting down
                self.node.get_logger().error(f"rci/ca_states publisher: {exc!r}",
                                             throttle_duration_sec=10.0)


class RciGatewayNode(Node):
    """The RCI gateway. ``start()`` runs the asyncio server in its own thread;
    the caller spins the node in an executor (see ``main``)."""

    def __init__(self, **kwargs):
        super().__init__("rci_gateway", **kwargs)
        d = self.declare_parameter
        self.p = {
            "host": d("host", "127.0.0.1").value,
            "port": d("port", 7650).value,
            "users_file": d("users_file", "").value,
            "byteorder": d("byteorder", "big").value,
            "watchdog_s": d("watchdog_s", 2.0).value,
            "init_timeout_s": d("init_timeout_s", 10.0).value,
            "hardware_gone_s": d("hardware_gone_s", 3.0).value,
            "service_timeout_s": d("service_timeout_s", 1.0).value,
            "home_timeout_s": d("home_timeout_s", 30.0).value,
            "cache_max_age_cycles": d("cache_max_age_cycles", 1.5).value,
            "cache_min_age_s": d("cache_min_age_s", 0.02).value,
            "states_qos_sensor_data": d("states_qos_sensor_data", False).value,
            "hardware_namespace": d("hardware_namespace", "").value,
            "ca_states_max_hz": d("ca_states_max_hz", 10.0).value,
            "motor_lease_s": d("motor_lease_s", 1.0).value,
            "motor_lease_renew_s": d("motor_lease_renew_s", 0.3).value,
            # limits (docs/SECURITY.md)
            "login_max_failures": d("login_max_failures", 3).value,
            "login_window_s": d("login_window_s", 60.0).value,
            "login_delay_s": d("login_delay_s", 1.0).value,
            "login_max_delay_s": d("login_max_delay_s", 30.0).value,
            "max_pending": d("max_pending", 16).value,
            "max_pending_per_address": d("max_pending_per_address", 4).value,
        }
        ns = self.p["hardware_namespace"].rstrip("/")
        self.hw_name = (lambda s: f"{ns}/{s}") if ns else (lambda s: s)
        if self.p["byteorder"] not in ("big", "little"):
            raise ValueError("parameter byteorder must be 'big' or 'little'")
        users_path = self._users_path()
        self.users = Users.load(users_path)
        check_bind_allowed(self.p["host"], self.users)    # UsersFileError: refuse to start
        warning = file_permission_warning(users_path, self.users)
        if warning:
            self.get_logger().warning(warning)
        self.robot = RosRobotPort(self)
        self.server: RciServer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = LoopThread("rci-asyncio")
        self._pylog = python_logger_for(self, "bsal_ros.rci")

    def _users_path(self) -> str:
        path = self.p["users_file"]
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
        """Start the asyncio thread and the TCP server in it; returns the bound port."""
        return self._loop_thread.start(self._open(), timeout)

    async def _open(self) -> int:
        loop = asyncio.get_running_loop()
        self.loop = loop
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
                            max_pending_per_address=int(p["max_pending_per_address"]))
        self.server = RciServer(self.robot, self.users, self.p["host"], self.p["port"], cfg,
                                self._pylog)
        await self.server.start()
        loop.create_task(self._device_list_task())
        return self.server.bound_port

    async def _device_list_task(self) -> None:
        """Learn the device list; retry until the hardware node answers, and
        again whenever it comes back after an outage."""
        have = False
        while True:
            try:
                ready = self.robot.cli["list"].service_is_ready()
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
        self.stop()
        return super().destroy_node()


def main(args=None) -> int:
    """Run the RCI gateway until SIGINT/SIGTERM; exit code 0 (2: it cannot start).
    Start-up and the clean stop: :mod:`bsal_ros.nodes.runtime`."""
    from bsal_ros.nodes.runtime import StartupError, run

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

    return run("rci_gateway", build, args=args, executor="multi", num_threads=2)


if __name__ == "__main__":
    raise SystemExit(main())
