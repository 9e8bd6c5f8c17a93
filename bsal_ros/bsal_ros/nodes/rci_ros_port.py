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

"""The RCI gateway's :class:`~bsal_ros.rci.port.RobotPort` over rclpy.

* service clients created once at start-up on the gateway's node, called
  from the asyncio thread with ``call_async`` and the homing action client
  with ``send_goal_async``; both awaited with a timeout through
  :class:`FutureBridge` (never from an executor callback), so the loop
  serves other connections while an answer is awaited (issue 40: public
  rclpy calls only);
* a cache of the hardware node's ``device_states`` topic, so Get inquiries are
  answered without a service call when the data is no older than one board
  cycle (otherwise ``get_device_states`` is called);
* what was delivered to the control application is republished on
  ``rci/ca_states`` (the RDI control-application stream, 001 1.1), and session
  changes on ``rci/session`` (:mod:`.ca_states_publisher`).

Threads: the rclpy futures complete on executor threads;
:class:`FutureBridge` hands their results to the asyncio loop with
``loop.call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import Sequence

from bsal_interfaces.action import HomeSteering
from bsal_interfaces.msg import DeviceStateArray, MotorCommand
from bsal_interfaces.msg import SonarTiming as SonarTimingMsg
from bsal_interfaces.srv import (ActivateDevices, ClearEncoders, GetDeviceStates, ListDevices,
                                 Reset, SetMotors, SetSonarTiming, SimControl)
from builtin_interfaces.msg import Time
from rclpy.action import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy

from bsal_ros.core.device_classes import (ABSOLUTE_ENCODER, PSERVO_MOTOR, RELATIVE_ENCODER,
                                          ULTRASONIC)
from bsal_ros.core.result import Result
from bsal_ros.kinds import device_classes
from bsal_ros.nodes.ca_states_publisher import CaStatesPublisher
from bsal_ros.nodes.device_state_msg import from_msg
from bsal_ros.nodes.gateway_params import namespaced, RciGatewayParams
from bsal_ros.nodes.motor_lease import MotorLeaseKeeper
from bsal_ros.nodes.rci_state_cache import CachedState, StateCache  # noqa: F401
from bsal_ros.rci.port import MotorSetting, PortUnavailable, RobotPort


class FutureBridge:
    """Awaiting rclpy futures from asyncio.

    The future's done callback runs on an executor thread; it only hands the
    outcome to the loop with ``call_soon_threadsafe``. rclpy's own done
    callbacks (one drops the request from the client's pending table) run
    as usual, so nothing is left behind.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop

    async def wait(self, rfut, timeout: float, what: str):
        """The result of ``rfut``; PortUnavailable on an exception or no answer
        within ``timeout`` (then the rclpy future is cancelled)."""
        afut = self.loop.create_future()

        def transfer(f):
            if afut.done():
                return
            exc = f.exception()
            if exc is not None:
                afut.set_exception(PortUnavailable(f"{what}: {exc!r}"))
            else:
                afut.set_result(f.result())

        loop = self.loop

        def hand_over(f):
            try:
                loop.call_soon_threadsafe(transfer, f)
            except RuntimeError:       # gateway stopped: the loop is closed
                pass
        rfut.add_done_callback(hand_over)
        try:
            return await asyncio.wait_for(afut, timeout)
        except asyncio.TimeoutError:
            rfut.cancel()
            raise PortUnavailable(f"{what}: no answer within {timeout:.2f} s") from None


class RosRobotPort(RobotPort):
    """RobotPort over the hardware node's ROS interface."""

    def __init__(self, node, params: RciGatewayParams):
        self.node = node
        cbg = ReentrantCallbackGroup()
        hw = namespaced(params.hardware_namespace)
        self.timeout = params.service_timeout_s
        # a control application's stop waits longer (docs/PROTOCOL.md section 10)
        self.stop_timeout = max(params.stop_timeout_s, params.service_timeout_s)
        self.home_timeout = params.home_timeout_s

        def client(srv_type, name):
            # named by its graph name, as the logs and count_services read it
            return node.create_client(srv_type, node.resolve_service_name(hw(name)),
                                      callback_group=cbg)
        self.cli = {
            "reset": client(Reset, hw("reset")),
            "activate": client(ActivateDevices, hw("activate_devices")),
            "set_motors": client(SetMotors, hw("set_motors")),
            "clear": client(ClearEncoders, hw("clear_encoders")),
            "timing": client(SetSonarTiming, hw("set_sonar_timing")),
            "get": client(GetDeviceStates, hw("get_device_states")),
            "list": client(ListDevices, hw("list_devices")),
            "sim": client(SimControl, hw("sim_control")),
        }
        self.home = ActionClient(node, HomeSteering, hw("home_steering"), callback_group=cbg)
        self.home_name = node.resolve_service_name(hw("home_steering"))   # its graph name
        # Motors this gateway set running stop by themselves if the gateway
        # dies: every speed is leased and the keeper renews it while we live.
        self.lease = MotorLeaseKeeper(node, lease_s=params.motor_lease_s,
                                      renew_period_s=params.motor_lease_renew_s,
                                      callback_group=cbg,
                                      hardware_namespace=params.hardware_namespace)
        self.cache = StateCache(params.cache_max_age_cycles, params.cache_min_age_s)
        self._ids: dict[str, frozenset[int]] = {}
        #: set (asyncio thread) once the device list is received: :meth:`ready`
        self._known = asyncio.Event()
        self._base_ns: int | None = None
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(Time, hw("base_time"), self._on_base_time, latched,
                                 callback_group=cbg)
        node.create_subscription(DeviceStateArray, hw("device_states"), self._on_states,
                                 qos_profile_sensor_data if params.states_qos_sensor_data
                                 else QoSProfile(depth=20), callback_group=cbg)
        self.ca_view = CaStatesPublisher(node, params.ca_states_max_hz)
        self._bridge: FutureBridge | None = None

    def _on_states(self, msg: DeviceStateArray) -> None:
        self.cache.on_states([from_msg(m) for m in msg.states])

    def _on_base_time(self, msg: Time) -> None:
        self._base_ns = int(msg.sec) * 1_000_000_000 + int(msg.nanosec)

    def base_time_ns(self) -> int | None:
        """The hardware node's base time (``base_time`` topic), ns."""
        return self._base_ns

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Use ``loop`` to await rclpy futures (the gateway's asyncio loop)."""
        self._bridge = FutureBridge(loop)

    def close(self) -> None:
        """Stop renewing leases and the publisher thread (the service
        clients go with the gateway's node)."""
        self.lease.close()
        self.ca_view.close()

    # ------------------------------------------------------------ device list
    @property
    def device_list_known(self) -> bool:
        """True once list_devices has answered."""
        return bool(self._ids)

    def waiting_for(self) -> str:
        """What a new session waits for before its control phase ("": the
        device list has been received, which is asked only once every
        interface of :meth:`undiscovered` is matched)."""
        if self._ids:
            return ""
        missing = self.undiscovered()
        if missing:
            return "not discovered: " + ", ".join(missing)
        return "its device list (list_devices) not received yet"

    async def ready(self) -> None:
        """Return once the device list has been received (asyncio thread)."""
        await self._known.wait()

    def undiscovered(self) -> list[str]:
        """The hardware node services the gateway calls (renew_lease too) and
        its homing action not matched yet. DDS matches each on its own:
        list_devices may answer while activate_devices is unseen, and a
        command sent then is ABORTed (``_request`` does not wait for it)."""
        out = [c.srv_name for c in self.cli.values() if not c.service_is_ready()]
        out += [] if self.lease.service_ready() else [self.lease.service_name]
        return out + ([] if self.home.server_is_ready() else [self.home_name])

    def duplicated(self) -> list[str]:
        """The hardware node services the gateway calls, and its homing action,
        that more than one server offers: two hardware nodes in one domain and
        namespace (both carry out every command; see :meth:`home_steering`)."""
        names = [c.srv_name for c in self.cli.values()] + [self.lease.service_name]
        out = [n for n in names if self.node.count_services(n) > 1]
        return out + ([self.home_name] if self._home_servers() > 1 else [])

    def _home_servers(self) -> int:
        # every action server publishes its goals' status
        return self.node.count_publishers(f"{self.home_name}/_action/status")

    @property
    def interface_count(self) -> int:
        """How many names :meth:`undiscovered` may return (all: none is seen)."""
        return len(self.cli) + 2

    def device_ids(self, device_class: str) -> frozenset[int]:
        """The ids from list_devices, else those seen on device_states."""
        known = self._ids.get(device_class)
        if known is not None:
            return known
        seen = self.cache.seen.get(device_class)
        if seen:
            return seen
        raise PortUnavailable("device list not known yet (hardware node not seen)")

    async def refresh_device_list(self) -> bool:
        """Ask list_devices; False when the hardware node does not answer."""
        try:
            res = await self._request("list", ListDevices.Request())
        except PortUnavailable:
            return False
        ids: dict[str, set[int]] = collections.defaultdict(set)
        for d in res.devices:
            ids[d.device_class].add(d.id)
        self._ids = {k: frozenset(v) for k, v in ids.items()}
        for cls in device_classes():       # every registered kind, a plugin's too
            self._ids.setdefault(cls, frozenset())
        self._known.set()                  # sessions held in their init phase go on
        return True

    # ------------------------------------------------------------------ state
    def cached(self, device_class: str, ids: Sequence[int]):
        """Fresh states from the device_states cache, or None."""
        return self.cache.fresh(device_class, ids)

    async def fetch(self, device_class: str, ids: Sequence[int]):
        """States from get_device_states (kept in the cache: they are current
        at the moment of the request)."""
        asked_at = time.time()
        res = await self._request("get", GetDeviceStates.Request(device_class=device_class,
                                                                 ids=list(ids)))
        if res.result.code != 0:
            raise PortUnavailable(f"get_device_states: {res.result.message}")
        by_id = {m.id: from_msg(m) for m in res.states}
        try:
            out = [by_id[i] for i in ids]
        except KeyError as exc:
            raise PortUnavailable(f"get_device_states: no state for id {exc}") from None
        self.cache.fetched(out, asked_at)
        return out

    # --------------------------------------------------------------- requests
    async def _request(self, name: str, req, timeout: float | None = None):
        cli = self.cli[name]
        if not cli.service_is_ready():
            raise PortUnavailable(f"service {cli.srv_name} not available")
        return await self._bridge.wait(cli.call_async(req), timeout or self.timeout,
                                       cli.srv_name)

    @staticmethod
    def _result(res) -> Result:
        r = res.result
        return Result(int(r.code), str(r.message))

    async def _command(self, name: str, req, device_class: str, ids,
                       timeout: float | None = None) -> Result:
        """Call a command service; the devices it touches (class "": all) are
        fenced when it ends, and the post-command states its answer carries
        serve the next reads (issue 31; no answer: the next read fetches)."""
        res = None
        try:
            res = await self._request(name, req, timeout)
            return self._result(res)
        finally:
            states = [from_msg(m) for m in res.states] if res is not None else []
            self.cache.answered(device_class, ids, states)

    async def reset(self) -> Result:
        """Call the reset service."""
        return await self._command("reset", Reset.Request(), "", None)

    async def activate(self, device_class, ids, active) -> Result:
        """Call activate_devices."""
        req = ActivateDevices.Request(device_class=device_class, ids=list(ids),
                                      active=[bool(a) for a in active])
        return await self._command("activate", req, device_class, ids)

    async def set_motors(self, device_class, settings, timeout: float | None = None) -> Result:
        """Call set_motors with a lease; renew the lease while running.

        A stop (every value 0) waits ``stop_timeout_s`` for its answer, not
        ``service_timeout_s``: over a lossy link DDS repairs a lost request or
        answer within its heartbeat period, and a stop the robot carried out
        must not be answered ABORT. Not sent twice: a second request on the
        same reliable, ordered DDS writer is delivered after the lost one is
        repaired, never sooner (set_motors sets absolute values, so a
        duplicate would be harmless)."""
        cmds = [MotorCommand(id=s.id, mode=MotorCommand.MODE_DUTY_CYCLE if s.duty
                             else MotorCommand.MODE_VELOCITY, value=float(s.value))
                for s in settings]
        if timeout is None and not any(s.value for s in settings):
            timeout = self.stop_timeout
        res = await self._command("set_motors", SetMotors.Request(
            device_class=device_class, commands=cmds, lease_s=self.lease.lease_s),
            device_class, [s.id for s in settings], timeout)
        if res.ok or not any(s.value for s in settings):
            # a stop the board latched counts too: the node dropped that lease
            self.lease.update(device_class, [(s.id, s.value) for s in settings])
        return res

    async def clear_encoders(self, ids) -> Result:
        """Call clear_encoders."""
        return await self._command("clear", ClearEncoders.Request(ids=list(ids)),
                                   RELATIVE_ENCODER, ids)

    async def set_sonar_timing(self, timings) -> Result:
        """Call set_sonar_timing."""
        req = SetSonarTiming.Request(timings=[
            SonarTimingMsg(id=t.id, firing_slot=t.firing_slot, interval_ms=t.interval_ms)
            for t in timings])
        return await self._command("timing", req, ULTRASONIC, [t.id for t in timings])

    async def sim_teleport(self, sub_code: int, items) -> Result:
        """Call sim_control teleport with the last item's pose (mm, mrad -> m, rad)."""
        if any(i != 0 for i, _ in items):
            return Result(Result.INVALID_ID, "the simulated robot is id 0")
        if not items:
            return Result(Result.OK, "no pose")
        x, y, yaw = items[-1][1]
        req = SimControl.Request(command="teleport", values=[x / 1000.0, y / 1000.0,
                                                             yaw / 1000.0])
        return self._result(await self._request("sim", req))

    async def home_steering(self, motor_id: int) -> Result:
        """Run the home_steering action; cancelled with the awaiting task."""
        if not self.home.server_is_ready():
            raise PortUnavailable("action home_steering not available")
        if self._home_servers() > 1:
            # both would accept the goal, with one id: rclpy's action client
            # then raises in the executor ("Two goals were accepted with the
            # same ID"), which ends the gateway's process
            raise PortUnavailable("action home_steering has more than one server")
        goal = HomeSteering.Goal(id=motor_id, timeout_s=float(self.home_timeout))
        handle = await self._bridge.wait(self.home.send_goal_async(goal), self.timeout,
                                         "home_steering goal")
        if not handle.accepted:
            return Result(Result.BUSY, "homing goal rejected")
        try:
            wrapped = await self._bridge.wait(handle.get_result_async(), self.home_timeout + 5.0,
                                              "home_steering result")
        except (asyncio.CancelledError, PortUnavailable):
            handle.cancel_goal_async()
            raise
        r = wrapped.result.result
        self.cache.fence(PSERVO_MOTOR, [motor_id])
        self.cache.fence(ABSOLUTE_ENCODER)
        return Result(int(r.code), str(r.message))

    async def stop_motors(self, device_class: str) -> bool:
        """Zero every motor of the class, one request per motor (so one refused
        motor does not block the others). A motor that is off (REFUSED: not
        active) or unknown counts as stopped; a board fault or no answer does not."""
        ids = sorted(self._ids.get(device_class) or self.cache.seen.get(device_class) or ())
        ok = True
        for i in ids:
            try:
                # service_timeout_s: a safety stop must not hold the session's end
                # (the command lease stops a motor whose stop was lost)
                res = await self.set_motors(device_class, [MotorSetting(i, True, 0.0)],
                                            self.timeout)
            except Exception as exc:   # noqa: BLE001 - PortUnavailable and friends
                self.node.get_logger().warning(f"safety stop: {device_class} {i}: {exc}")
                ok = False
                continue
            if res.code in (Result.HARDWARE_FAULT, Result.BUSY):
                self.node.get_logger().warning(
                    f"safety stop: {device_class} {i} not stopped: {res.message}")
                ok = False
        return ok

    # ------------------------------------------------- control-application view
    def delivered(self, device_class, states, what) -> None:
        """Republish on rci/ca_states (worker thread)."""
        self.ca_view.delivered(device_class, states, what)

    def session_event(self, event: str, detail: str = "") -> None:
        """Publish on rci/session (worker thread)."""
        self.ca_view.session_event(event, detail)
