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

"""The ROS parameters of the two gateways as typed records (:mod:`bsal_ros.core.params`).

Each field is one parameter: its name, type and default, and a Spec (what it
means, its range or choices, and whether a change at run time is applied).
Documented in docs/INTERFACES.md. No ROS here: the nodes declare them with
:func:`bsal_ros.nodes.params.declare`.
"""

from __future__ import annotations

from dataclasses import dataclass

from bsal_ros.core.params import param, ParamRecord
from bsal_ros.rci.settings import BYTEORDERS, HOUR_S, RciSessionParams
from bsal_ros.rdi.server import MAX_RATE_HZ, MIN_RATE_HZ

MAX_PORT = 65535
BUFFER_MAX = 2**31 - 1


@dataclass(frozen=True)
class RciGatewayParams(RciSessionParams):
    """Parameters of the RCI gateway node (docs/INTERFACES.md, docs/SECURITY.md): those
    its sessions read (:class:`~bsal_ros.rci.settings.RciSessionParams`, declared
    there once) and the node's own."""

    host: str = param("127.0.0.1", "bind address of the RCI server; a non-loopback address is "
                      "refused while the users file holds the public demo key")
    port: int = param(7650, "TCP port of the RCI server (0: any free port)", 0, MAX_PORT)
    users_file: str = param("", 'users file ("": the installed config/users.yaml)')
    service_timeout_s: float = param(1.0, "s to wait for a hardware node service answer",
                                     0.01, HOUR_S)
    stop_timeout_s: float = param(4.0, "s to wait for the answer to a Set Motor that stops "
                                  "every motor it names (a stop the robot carried out must not "
                                  "be answered ABORT because DDS repaired a lost sample late)",
                                  0.01, HOUR_S)
    home_timeout_s: float = param(30.0, "s to wait for the home_steering action", 0.01, HOUR_S)
    cache_max_age_cycles: float = param(1.5, "cached device states older than this many board "
                                        "cycles are asked for again", 0.0, 1000.0)
    cache_min_age_s: float = param(0.02, "lower bound of that age in s", 0.0, HOUR_S)
    states_qos_sensor_data: bool = param(False, "subscribe to device_states with the "
                                         "sensor-data QoS (best effort)")
    hardware_namespace: str = param("", 'namespace of the hardware node ("": ours)')
    ca_states_max_hz: float = param(10.0, "most rci/ca_states messages per second",
                                    0.0, 1000.0)
    motor_lease_s: float = param(1.0, "s a motor command lease lasts without renewal",
                                 0.01, HOUR_S)
    motor_lease_renew_s: float = param(0.3, "s between lease renewals", 0.01, HOUR_S)


@dataclass(frozen=True)
class RdiGatewayParams(ParamRecord):
    """Parameters of the RDI gateway node (meanings: docs/RDI.md); all read at start-up."""

    host: str = param("127.0.0.1", "bind address of both streams (loopback by default)")
    realtime_port: int = param(7651, "TCP port of the real-time state stream (0: any free "
                               "port)", 0, MAX_PORT)
    ca_port: int = param(7652, "TCP port of the control-application view stream (0: any free "
                         "port)", 0, MAX_PORT)
    realtime_rate_hz: float = param(10.0, "frames per second on the real-time stream",
                                    MIN_RATE_HZ, MAX_RATE_HZ)
    ca_rate_hz: float = param(10.0, "frames per second on the control-application stream",
                              MIN_RATE_HZ, MAX_RATE_HZ)
    byteorder: str = param("big", "byte order on the wire: big (network order) or little",
                           choices=BYTEORDERS)
    max_clients: int = param(64, "clients per stream; the next one is refused with a log line",
                             1, 100000)
    client_queue_frames: int = param(8, "frames queued per client; when full the oldest is "
                                     "dropped", 1, 100000)
    max_client_lag_s: float = param(5.0, "a client whose oldest unsent frame is older is "
                                    "disconnected (s)", 0.001, HOUR_S)
    write_buffer_bytes: int = param(16384, "per-client transport buffer high-water mark",
                                    0, BUFFER_MAX)
    socket_send_buffer: int = param(16384, "per-client SO_SNDBUF (0: kernel default)",
                                    0, BUFFER_MAX)
    # high so it never meets a DC motor id (a DC motor wins if it does)
    pservo_motor_rdi_id_offset: int = param(256, "RDI-Mt id of pseudo-servo motor n is this "
                                            "offset + n (RDI has only the DC subclass)",
                                            0, MAX_PORT)
    hardware_namespace: str = param("", "namespace of the hardware node's topics (\"\": ours)")
    rci_namespace: str = param("", "namespace of the RCI gateway's rci/* topics (\"\": ours)")


#: the hardware node's services a Foxglove client may call (docs/INTERFACES.md)
FOXGLOVE_SERVICES = ("set_motors,reset,activate_devices,clear_encoders,get_device_states,"
                     "list_devices,set_sonar_timing,renew_lease")


@dataclass(frozen=True)
class FoxgloveGatewayParams(ParamRecord):
    """Parameters of the Foxglove gateway node (docs/INTERFACES.md, docs/SECURITY.md);
    all read at start-up. Name lists are comma-separated ROS names, relative ones
    resolved in the gateway's namespace."""

    host: str = param("127.0.0.1", "bind address of the Foxglove WebSocket server; a "
                      "non-loopback address needs tls")
    port: int = param(8765, "TCP port of the Foxglove WebSocket server (0: any free port)",
                      0, MAX_PORT)
    tls: bool = param(False, "serve wss:// with certfile and keyfile (needed off loopback)")
    certfile: str = param("", "PEM certificate for tls")
    keyfile: str = param("", "PEM private key (PKCS#8) for tls")
    remote_control: bool = param(False, "off loopback, let clients publish and call "
                                 "services (on loopback they always may)")
    client_publish: str = param("cmd_vel", "topics clients may publish on")
    services: str = param(FOXGLOVE_SERVICES, "services clients may call (those the graph "
                          "offers are advertised)")
    param_writes: str = param("", "parameters clients may set, as /node.name patterns "
                              "(fnmatch; empty: none)")
    topic_namespace: str = param("", "namespace whose topics are advertised, with /tf, "
                                 "/tf_static, /diagnostics and /rosout (empty: ours)")
    graph_period_s: float = param(0.5, "s between looks at the ROS graph (topics and services "
                                  "come and go within twice this)", 0.05, 10.0)
    service_timeout_s: float = param(5.0, "s to wait for a service's answer", 0.01, HOUR_S)
    client_backlog: int = param(1024, "messages queued per client; when full the oldest is "
                                "dropped", 16, 100000)
    latched_depth: int = param(10, "last messages kept per latched topic for clients that "
                               "come later", 1, 1000)
    page: bool = param(True, "serve Brak's page over HTTP (HTTPS with tls) on host, "
                       "page_port (docs/PAGE.md)")
    page_port: int = param(8766, "TCP port of Brak's page (0: any free port)", 0, MAX_PORT)


def namespaced(namespace: str):
    """A function that puts a name under ``namespace`` ("" : leaves it as is)."""
    ns = namespace.rstrip("/")
    return (lambda name: f"{ns}/{name}") if ns else (lambda name: name)
