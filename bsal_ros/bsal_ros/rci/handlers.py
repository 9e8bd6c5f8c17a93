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

"""Which handler runs each RCI command code: one table, :data:`HANDLERS`
(code -> how the session makes its handler object from its parts), declared
once here for Brak's commands; a command added later registers its handler
with :func:`register_handler` next to its declaration
(:func:`bsal_ros.protocol.rci_registry.register_command`; docs/EXTENDING.md).

:func:`session_handlers` builds one session's handlers and checks the table
against the registry and the robot port: every code the control process
receives in the control phase has a handler, every handler a code it
receives, and every port method a declaration names exists on the port; a
gap is a :class:`~bsal_ros.protocol.rci_registry.RciCommandError` naming
the code, raised when the session is built (and, for Brak's commands
against :class:`~bsal_ros.rci.port.RobotPort`, at import), never a silent
NO_SUPPORT.
"""

from __future__ import annotations

import logging
from typing import Callable, NamedTuple

from .handlers_base import (BaseTimeInquiry, DeviceCommands, Forward, Handler, Ignore, Reset,
                            StatusInquiry)
from .handlers_motor import ActivateMotor, GetMotor, SetMotor
from .handlers_sensor import ActivateSensor, GetSensor, SetSensor
from .inquiries import Inquiries
from .port import RobotPort
from .session_parts import Answers, CaState, Homing, RobotCalls
from .settings import SessionConfig
from .transport import RciTransport, SessionEnd
from ..protocol.constants import RciCode
from ..protocol.rci_commands import CSMTP_CODE
from ..protocol.rci_registry import command, commands, RciCommandError, RciCommandSpec

__all__ = ["SessionParts", "HANDLERS", "forward", "ignore", "register_handler",
           "unregister_handler",
           "check_port_methods", "check_handlers", "session_handlers"]


class SessionParts(NamedTuple):
    """What one session's handlers are made from."""

    #: the session's socket side (send, encode)
    out: RciTransport
    #: the robot (ROS side) port
    port: RobotPort
    cfg: SessionConfig
    log: logging.Logger
    #: "peer (user)" for log lines
    who: Callable[[], str]
    answers: Answers
    calls: RobotCalls
    ca: CaState
    homing: Homing
    devices: DeviceCommands
    inquiries: Inquiries
    #: retries refused safety stops across sessions (None: none)
    stopper: object
    #: ends the session from another task
    force_end: Callable[[SessionEnd], None]


def ignore(parts: SessionParts) -> Handler:
    """The handler of an unsolicited reply or acknowledgement: dropped."""
    return Ignore(parts.log, parts.who)


#: RCI command code -> its handler, made from a session's parts
HANDLERS: dict[int, Callable[[SessionParts], Handler]] = {
    RciCode.CStIq: lambda p: StatusInquiry(p.out, p.answers, p.homing),
    RciCode.CStRp: ignore,
    RciCode.CCnAc: ignore,
    RciCode.CRs: lambda p: Reset(p.port, p.answers, p.calls, p.ca, p.homing, p.stopper),
    RciCode.CBsTmIq: lambda p: BaseTimeInquiry(p.out, p.ca),
    RciCode.CAcMt: lambda p: ActivateMotor(p.devices, p.homing, p.stopper),
    RciCode.CStMt: lambda p: SetMotor(p.port, p.devices, p.answers, p.calls, p.ca, p.homing,
                                      p.stopper, p.log, p.who, p.force_end),
    RciCode.CGtMtIq: lambda p: GetMotor(p.inquiries, p.ca),
    RciCode.CAcSn: lambda p: ActivateSensor(p.devices),
    RciCode.CStSn: lambda p: SetSensor(p.port, p.devices, p.calls),
    RciCode.CGtSnIq: lambda p: GetSensor(p.inquiries, p.ca),
}


def forward(parts: SessionParts) -> Handler:
    """The handler of a command that only forwards its items to its
    declaration's first port method (``register_handler(code, forward)``)."""
    return Forward(parts.port, parts.answers, parts.calls)


HANDLERS[CSMTP_CODE] = forward


def register_handler(code: int, make: Callable[[SessionParts], Handler]) -> None:
    """Make ``make(parts)`` the handler of ``code`` in every session built
    from now on. Raises RciCommandError when the code is not declared or is
    not one the control process receives in the control phase."""
    spec = command(code)
    if spec is None:
        raise RciCommandError(f"RCI command 0x{code:04x}: a handler for a code that is not "
                              f"declared (register_command first)")
    if not spec.dispatched:
        raise RciCommandError(f"{spec.label}: a handler, but the session never dispatches it "
                              f"(sent only by the control process, or an initialization packet)")
    HANDLERS[int(code)] = make


def unregister_handler(code: int) -> None:
    """Forget the handler of ``code`` (a test's added command)."""
    HANDLERS.pop(int(code), None)


def check_port_methods(spec: RciCommandSpec, port_cls: type) -> None:
    """Every port method ``spec`` names exists on ``port_cls`` (RciCommandError if not)."""
    for name in spec.port_methods:
        if not callable(getattr(port_cls, name, None)):
            raise RciCommandError(f"{spec.label}: port method {name!r} not found on "
                                  f"{port_cls.__name__}")


def check_handlers(specs, handlers: dict, port_cls: type) -> None:
    """Every spec the session dispatches has a handler in ``handlers``
    (code -> maker), every handler a dispatched spec, every port method a
    spec names is on ``port_cls``. Raises RciCommandError naming the first
    code that does not hold."""
    dispatched = {int(s.code): s for s in specs if s.dispatched}
    for code, spec in dispatched.items():
        if code not in handlers:
            raise RciCommandError(f"{spec.label}: no handler (the control process receives "
                                  f"it in the control phase; register_handler)")
        check_port_methods(spec, port_cls)
    for code in handlers:
        if code not in dispatched:
            spec = command(code)
            raise RciCommandError(f"{spec.label if spec else f'RCI command 0x{code:04x}'}: a "
                                  f"handler, but the session never dispatches it")


def session_handlers(parts: SessionParts) -> dict:
    """packet class -> (spec, handler object) for one session, after
    :func:`check_handlers` against its port."""
    specs = commands()
    check_handlers(specs, HANDLERS, type(parts.port))
    return {s.packet: (s, HANDLERS[int(s.code)](parts)) for s in specs if s.dispatched}
