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

"""The settings of the RCI sessions and of the server that runs them,
declared once.

:class:`RciSessionParams` is the declaration of every RCI gateway parameter a
session or the server reads (name, type, default, meaning, range: a
:mod:`bsal_ros.core.params` record, no ROS); the gateway's own record
(``nodes/gateway_params.py``) extends it, so the node declares these
parameters and the sessions read the very record the node holds.
:class:`SessionConfig` adds the fixed limits no parameter sets and reads the
parameters through to the record.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..core.params import param, ParamRecord
from ..protocol.values import STATVAL_MS_MAX

BYTEORDERS = ("big", "little")
HOUR_S = 3600.0
DAY_S = 86400.0


@dataclass(frozen=True)
class RciSessionParams(ParamRecord):
    """The RCI gateway's parameters that its sessions and server read
    (docs/INTERFACES.md, docs/SECURITY.md)."""

    byteorder: str = param("big", "byte order on the wire: big (network order) or little",
                           choices=BYTEORDERS)
    watchdog_s: float = param(2.0, "s without a packet after which the motors a session set "
                              "running are stopped (the session stays open)", 0.01, HOUR_S,
                              dynamic=True)
    init_timeout_s: float = param(10.0, "s allowed for a session's initialization phase",
                                  0.01, HOUR_S)
    hardware_gone_s: float = param(0.0, "s the hardware node may stay unreachable before a "
                                   "session ends with CSvTm ERROR (meanwhile: ABORT); 0: never",
                                   0.0, HOUR_S)
    hardware_wait_s: float = param(20.0, "s a session's initialization phase waits for the "
                                   "hardware node to be known (its interfaces discovered, its "
                                   "device list received; our IInCp is held meanwhile) before "
                                   "the session is refused with CSvTm ERROR", 0.01, HOUR_S)
    login_max_failures: int = param(3, "failed logins per address in login_window_s before "
                                    "logins are slowed down (0: no throttle)", 0, 1000000)
    login_window_s: float = param(60.0, "s over which failed logins are counted", 0.0, DAY_S)
    login_delay_s: float = param(1.0, "first delay of a throttled login in s", 0.0, HOUR_S)
    login_max_delay_s: float = param(30.0, "longest delay of a throttled login in s",
                                     0.0, HOUR_S)
    max_pending: int = param(16, "connections between accept and the end of their login",
                             1, 100000)
    max_pending_per_address: int = param(4, "of those, from one address", 1, 100000)
    init_quiet_s: float = param(0.5, "s of silence after our IIId before we send IInCp first "
                                "(0: only after the client's)", 0.0, HOUR_S)
    idle_limit_s: float = param(0.0, "s of silence after which a session is ended with CSvTm "
                                "NOACK (0: never)", 0.0, DAY_S, dynamic=True)


#: the names of the parameters a session reads
SESSION_PARAMETERS = frozenset(f.name for f in dataclasses.fields(RciSessionParams))


@dataclass
class SessionConfig:
    """What the sessions and the server read: the gateway's parameters
    (``params``: :class:`RciSessionParams` or a record extending it; read
    through, ``cfg.watchdog_s`` is ``cfg.params.watchdog_s``) and the fixed
    limits below. One object is shared by the server and its sessions; a
    run-time change replaces ``params`` (loop thread), which every session
    reads at its next check."""

    params: RciSessionParams = field(default_factory=RciSessionParams)
    #: length of the statval time window; the base time moves (and CBsTm is
    #: sent) before it is used up. 2**24-1 ms = about 4.66 h (001 4.7.3).
    base_time_span_ms: int = STATVAL_MS_MAX
    #: how long a closing socket is drained so the peer reads our last packet
    linger_s: float = 0.5
    server_name: bytes = b"bsal_ros"
    #: answers buffered for a CA that does not read before we stop reading it
    max_write_buffer: int = 64 * 1024
    #: how long such a CA may take to catch up before CSvTm NOACK
    drain_timeout_s: float = 5.0
    #: addresses the login throttle remembers at most (least recently active forgotten)
    login_table_size: int = 1024

    @classmethod
    def of(cls, **values) -> SessionConfig:
        """Settings from keyword values: parameter names go to a
        :class:`RciSessionParams` (its defaults for the rest), the others to
        the fixed limits. Raises TypeError naming an unknown name."""
        params = {k: v for k, v in values.items() if k in SESSION_PARAMETERS}
        rest = {k: v for k, v in values.items() if k not in SESSION_PARAMETERS}
        return cls(RciSessionParams(**params), **rest)

    def __getattr__(self, name: str):
        # only names that are not attributes of the settings themselves: the parameters
        if name in SESSION_PARAMETERS:
            return getattr(self.params, name)
        raise AttributeError(f"{type(self).__name__} has no setting {name!r}")
