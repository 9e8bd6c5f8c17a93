"""The ROS parameters of the two gateways as small typed records.

Each field is one parameter: its name, type and default. ``declare(node)``
declares every field on the node and returns the values it got (overrides
from the command line or a parameters file included). The parameters are
documented in docs/INTERFACES.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


class NodeParams:
    """Base of the parameter records: declaration and read access by name."""

    @classmethod
    def declare(cls, node):
        """Declare every field as a parameter of ``node`` (default: the field's)."""
        values = {f.name: node.declare_parameter(f.name, f.default).value
                  for f in dataclasses.fields(cls)}
        return cls(**values)

    def __getitem__(self, name: str):
        # read by name as well: the gateways' start-up and shutdown code (kept
        # as it is while that moves into the shared runtime) reads p["host"]
        return getattr(self, name)


@dataclass(frozen=True)
class RciGatewayParams(NodeParams):
    """Parameters of the RCI gateway node."""

    host: str = "127.0.0.1"
    port: int = 7650
    users_file: str = ""
    byteorder: str = "big"
    watchdog_s: float = 2.0
    init_timeout_s: float = 10.0
    hardware_gone_s: float = 3.0
    service_timeout_s: float = 1.0
    home_timeout_s: float = 30.0
    cache_max_age_cycles: float = 1.5
    cache_min_age_s: float = 0.02
    states_qos_sensor_data: bool = False
    hardware_namespace: str = ""
    ca_states_max_hz: float = 10.0
    motor_lease_s: float = 1.0
    motor_lease_renew_s: float = 0.3
    # limits (docs/SECURITY.md)
    login_max_failures: int = 3
    login_window_s: float = 60.0
    login_delay_s: float = 1.0
    login_max_delay_s: float = 30.0
    max_pending: int = 16
    max_pending_per_address: int = 4
    # seed 001 fidelity (docs/PROTOCOL.md "Where we differ from the book")
    init_quiet_s: float = 0.5
    idle_limit_s: float = 0.0


@dataclass(frozen=True)
class RdiGatewayParams(NodeParams):
    """Parameters of the RDI gateway node (meanings: docs/RDI.md)."""

    #: bind address of both streams (loopback by default)
    host: str = "127.0.0.1"
    #: TCP port of the real-time state stream (0: any free port)
    realtime_port: int = 7651
    #: TCP port of the control-application view stream (0: any free port)
    ca_port: int = 7652
    #: frames per second on the real-time stream (0.1..200)
    realtime_rate_hz: float = 10.0
    #: frames per second on the control-application stream (0.1..200)
    ca_rate_hz: float = 10.0
    #: "big" (network order, default) or "little"
    byteorder: str = "big"
    #: clients per stream; the next one is refused with a log line
    max_clients: int = 64
    #: frames queued per client; when full the oldest is dropped
    client_queue_frames: int = 8
    #: a client whose oldest unsent frame is older is disconnected
    max_client_lag_s: float = 5.0
    #: per-client transport buffer high-water mark
    write_buffer_bytes: int = 16384
    #: per-client SO_SNDBUF (0: kernel default)
    socket_send_buffer: int = 16384
    #: RDI-Mt id of pseudo-servo motor n = offset + n (RDI has only the DC
    #: subclass); high so it never meets a DC motor id (a DC motor wins if it does)
    pservo_motor_rdi_id_offset: int = 256
    #: namespace of the hardware node's topics ("" = ours)
    hardware_namespace: str = ""
    #: namespace of the RCI gateway's rci/* topics ("" = ours)
    rci_namespace: str = ""


def namespaced(namespace: str):
    """A function that puts a name under ``namespace`` ("" : leaves it as is)."""
    ns = namespace.rstrip("/")
    return (lambda name: f"{ns}/{name}") if ns else (lambda name: name)
