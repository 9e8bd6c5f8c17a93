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

"""The session's side of the RCI command registry
(:mod:`bsal_ros.protocol.rci_registry`): the handler and the robot-port
methods each spec names, resolved and checked.

A spec names its handler as a method of the session (``"_h_cstmt"``), as
``"module:function"`` or as a callable; either way it is called as
``handler(session, packet)``. A name that does not resolve, or a port
method the port does not have, is a :class:`RciCommandError` naming the code
and the name, raised when the session module is imported (Brak's own
commands against :class:`~bsal_ros.rci.port.RobotPort`) or when a session is
built (every registered command against that session's port): never a
silent NO_SUPPORT or PERMISSION.
"""

from __future__ import annotations

import importlib
from typing import Callable

from ..protocol.rci_registry import commands, generation, RciCommandError, RciCommandSpec

__all__ = ["resolve_handler", "check_port_methods", "dispatch_table", "build_dispatch",
           "check_commands"]

_TABLES: dict = {}


def resolve_handler(spec: RciCommandSpec, session_cls: type) -> Callable:
    """The function that runs ``spec`` (called ``fn(session, packet)``)."""
    h = spec.handler
    if callable(h):
        return h
    if ":" in h:
        mod, _, attr = h.partition(":")
        try:
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as exc:
            raise RciCommandError(f"{spec.label}: handler {h!r} does not resolve "
                                  f"({exc})") from None
    else:
        fn = getattr(session_cls, h, None)
        if fn is None:
            raise RciCommandError(f"{spec.label}: handler {h!r} not found on "
                                  f"{session_cls.__name__}")
    if not callable(fn):
        raise RciCommandError(f"{spec.label}: handler {h!r} is not callable")
    return fn


def check_port_methods(spec: RciCommandSpec, port_cls: type) -> None:
    """Every port method ``spec`` names exists on ``port_cls``."""
    for name in spec.port_methods:
        if not callable(getattr(port_cls, name, None)):
            raise RciCommandError(f"{spec.label}: port method {name!r} not found on "
                                  f"{port_cls.__name__}")


def dispatch_table(session_cls: type, port_cls: type) -> dict:
    """packet class -> (spec, handler) of every command the session runs,
    checked against ``port_cls``; built once per registry state."""
    key = (session_cls, port_cls)
    hit = _TABLES.get(key)
    if hit is not None and hit[0] == generation():
        return hit[1]
    table = build_dispatch(commands(), session_cls, port_cls)
    _TABLES[key] = (generation(), table)
    return table


def build_dispatch(specs, session_cls: type, port_cls: type) -> dict:
    """packet class -> (spec, handler) of the ``specs`` a session runs (those
    with a handler), every name resolved (RciCommandError names the first
    that does not)."""
    table = {}
    for spec in specs:
        if spec.handler is None:
            continue
        fn = resolve_handler(spec, session_cls)
        check_port_methods(spec, port_cls)
        table[spec.packet] = (spec, fn)
    return table


def check_commands(session_cls: type, port_cls: type) -> None:
    """Resolve every registered command's names (raises RciCommandError)."""
    dispatch_table(session_cls, port_cls)
