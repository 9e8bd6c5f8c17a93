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

"""RDI gateway node: BSAL's two GUI processes (001 section 1.1) as RDI streams
(001 chapter 5) for legacy display clients.

* **real-time stream** (``realtime_port``, default 7651): the robot as the
  hardware node reads it: ``device_states`` (every device, raw BSAL values),
  ``base_time``, ``pose`` (ego-centric orientation) and ``odom`` (omni-centric
  direction and speed);
* **control-application stream** (``ca_port``, default 7652): only what the
  control application has been told over RCI, from the RCI gateway's
  ``rci/ca_states`` (data and status answers, merged per device) and
  ``rci/session`` (the view is emptied when a session ends, so the next
  control application starts from nothing), plus the base time.

Thin: state, frames, queues and sockets live in :mod:`bsal_ros.rdi` (no ROS).
Threads: the rclpy executor spins in its own thread; the streams run in an
asyncio loop in another; subscription callbacks only convert messages to plain
values and hand them over with ``loop.call_soon_threadsafe``; no executor
thread ever touches a socket. See docs/RDI.md.

    rdi_gateway --ros-args -p realtime_rate_hz:=20.0 -p max_clients:=32
"""

from __future__ import annotations

from bsal_interfaces.msg import DeviceStateArray
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from bsal_ros.core.units import quaternion_to_yaw
from bsal_ros.kinds import data_fields, status_fields
from bsal_ros.nodes import params
from bsal_ros.nodes.device_state_msg import from_msg
from bsal_ros.nodes.gateway_params import namespaced, RdiGatewayParams
from bsal_ros.nodes.preflight import destroyed_if_refused
from bsal_ros.nodes.ros_logging import python_logger_for
from bsal_ros.protocol import Timeval
from bsal_ros.rdi import RdiGateway, StreamConfig

REALTIME, CA = "realtime", "ca"

RELIABLE = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE)
STATES_QOS = QoSProfile(depth=50, history=HistoryPolicy.KEEP_LAST,
                        reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)

# which DeviceState fields a control application learns from each answer: the
# kinds declare them (bsal_ros/kinds); these are the kinds known at import
DATA_FIELDS = data_fields()
STATUS_FIELDS = status_fields()


def stamp_s(t) -> float:
    """builtin_interfaces/Time -> seconds (the zero time is 0.0)."""
    return float(t.sec) + float(t.nanosec) * 1e-9


def yaw_of(q) -> float:
    """Heading (rad) of a geometry_msgs/Quaternion: the rotation about z."""
    return quaternion_to_yaw(q.x, q.y, q.z, q.w)


class RdiGatewayNode(Node):
    """The RDI gateway. ``start()`` opens both streams (asyncio thread) and
    returns their ports; the caller spins the node in an executor."""

    @destroyed_if_refused
    def __init__(self, node_name: str = "rdi_gateway", **kwargs):
        # every override is declared, so one that no parameter reads is refused by name
        kwargs.setdefault("automatically_declare_parameters_from_overrides", True)
        super().__init__(node_name, **kwargs)
        self.p = p = params.declare(RdiGatewayParams, self, "RDI gateway")
        common = {"host": p.host, "byteorder": p.byteorder, "max_clients": int(p.max_clients),
                  "queue_frames": int(p.client_queue_frames),
                  "max_lag_s": float(p.max_client_lag_s),
                  "write_buffer_bytes": int(p.write_buffer_bytes),
                  "socket_send_buffer": int(p.socket_send_buffer)}
        configs = [StreamConfig(REALTIME, port=int(p.realtime_port),
                                rate_hz=float(p.realtime_rate_hz), **common),
                   StreamConfig(CA, port=int(p.ca_port), rate_hz=float(p.ca_rate_hz),
                                **common)]
        for c in configs:
            c.validate()          # ValueError: refuse to start with a bad parameter
        self._pylog = python_logger_for(self, "bsal_ros.rdi")
        self.gateway = RdiGateway(configs, log=self._pylog,
                                  pservo_id_offset=int(p.pservo_motor_rdi_id_offset))
        self.ports: dict[str, int] = {}

        hwn = namespaced(p.hardware_namespace)
        rcin = namespaced(p.rci_namespace)
        grp = MutuallyExclusiveCallbackGroup()
        sub = self.create_subscription
        sub(DeviceStateArray, hwn("device_states"), self._on_states, STATES_QOS,
            callback_group=grp)
        sub(Time, hwn("base_time"), self._on_base_time, LATCHED, callback_group=grp)
        sub(PoseWithCovarianceStamped, hwn("pose"), self._on_pose, RELIABLE, callback_group=grp)
        sub(Odometry, hwn("odom"), self._on_odom, RELIABLE, callback_group=grp)
        sub(DeviceStateArray, rcin("rci/ca_states"), self._on_ca_states, RELIABLE,
            callback_group=grp)
        sub(String, rcin("rci/session"), self._on_session, LATCHED, callback_group=grp)
        self.received = {"device_states": 0, "base_time": 0, "pose": 0, "odom": 0,
                         "ca_states": 0, "session": 0}

    # ------------------------------------------------------------ life cycle
    def start(self, timeout: float = 10.0) -> dict[str, int]:
        """Open both streams; returns {stream name: bound port}."""
        self.ports = self.gateway.start(timeout)
        self.get_logger().info(f"RDI gateway: real-time stream on {self.p['host']}:"
                               f"{self.ports[REALTIME]}, control-application stream on "
                               f"{self.p['host']}:{self.ports[CA]}")
        return self.ports

    def stop(self) -> None:
        """Close every stream and join the loop thread (idempotent; nothing to
        close when a refused parameter stopped the start before the streams existed)."""
        gateway = getattr(self, "gateway", None)
        if gateway is not None:
            gateway.stop()

    def destroy_node(self):
        """Stop the streams, then destroy the node."""
        self.stop()
        return super().destroy_node()

    def stats(self) -> dict:
        """Counters of both streams (clients, frames, drops)."""
        return self.gateway.stats()

    # --------------------------------------------- ROS callbacks (executor)
    # Each converts the message to plain values and hands them to the loop.
    def _on_states(self, msg: DeviceStateArray) -> None:
        self.received["device_states"] += 1
        devs = [from_msg(m) for m in msg.states]
        self.gateway.call(REALTIME, "update_devices", devs)

    def _on_base_time(self, msg: Time) -> None:
        self.received["base_time"] += 1
        tv = Timeval(int(msg.sec), int(msg.nanosec) // 1000)
        self.gateway.call_all("set_base_time", tv)

    def _on_pose(self, msg: PoseWithCovarianceStamped) -> None:
        self.received["pose"] += 1
        p = msg.pose.pose
        self.gateway.call(REALTIME, "set_ego", p.position.x, p.position.y, yaw_of(p.orientation),
                          stamp_s(msg.header.stamp))

    def _on_odom(self, msg: Odometry) -> None:
        self.received["odom"] += 1
        self.gateway.call(REALTIME, "set_omni_from_twist", yaw_of(msg.pose.pose.orientation),
                          msg.twist.twist.linear.x, stamp_s(msg.header.stamp))

    def _on_ca_states(self, msg: DeviceStateArray) -> None:
        self.received["ca_states"] += 1
        status = msg.header.frame_id == "status"
        fields = status_fields() if status else data_fields()
        st = self.gateway
        for m in msg.states:
            d = from_msg(m)
            if status:
                d.d_statval = d.statval      # the CA receives one statval per device
            st.call(CA, "merge_device", d, fields)

    def _on_session(self, msg: String) -> None:
        self.received["session"] += 1
        # A session that ends empties the view, so the next control application
        # starts from nothing. (Not on "connected": rci/session and rci/ca_states
        # are separate topics, so that event may be handled after the new
        # session's first answers.)
        if msg.data.startswith("closed"):
            self.gateway.call(CA, "clear")


def main(args=None, hard_exit: bool = True, stop=None) -> int:
    """Run the RDI gateway until SIGINT/SIGTERM; exit code 0 (2: it cannot start).
    Start-up and the clean stop: :mod:`bsal_ros.nodes.runtime`. ``stop``: the
    request the console script's entry point made (:mod:`bsal_ros.entry_points`)."""
    from bsal_ros.nodes.preflight import one_node
    from bsal_ros.nodes.runtime import run, StartupError

    def build(nodes) -> None:
        try:
            node = RdiGatewayNode(context=nodes.context)
        except ValueError as exc:
            raise StartupError(f"bad parameter: {exc}") from None
        nodes.add(node, stop=node.stop)
        try:
            node.start()
        except OSError as exc:
            raise StartupError(f"cannot open the RDI streams: {exc}") from None

    return run("rdi_gateway", build, args=args, hard_exit=hard_exit,
               check=one_node("rdi_gateway", "bad parameter: "), stop=stop)


if __name__ == "__main__":
    raise SystemExit(main())
