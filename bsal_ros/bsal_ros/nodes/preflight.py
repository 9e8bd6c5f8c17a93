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

"""A start that would be refused is refused before the first node exists.

A node refused in its constructor (a wrong parameter, a params-file key no
parameter reads, a bad robot description) has built the process's DDS
participant by then (rmw_fastrtps builds it with the context's first node),
and destroying it can deadlock inside Fast DDS (docs/DEVELOPING.md). So
:func:`bsal_ros.nodes.runtime.run` asks :func:`refusal` first, once
``rclpy.init`` has checked the arguments' syntax and read the params files
(``rclpy.init`` builds no participant): the overrides each node would get
(:mod:`bsal_ros.nodes.ros_args`) are checked by the nodes' own rules
(:func:`bsal_ros.nodes.params.checked`, the hardware node's
:func:`~bsal_ros.nodes.hardware_params.assemble`), so the line is the one
the node's constructor would have raised. The constructors keep their
checks, for nodes built in code.

The RCI gateway's users file is read here too (and again by the gateway).
A node built in code that refuses anyway is destroyed at once
(:func:`destroyed_if_refused`).
"""

from __future__ import annotations

import functools

from bsal_ros.nodes import ros_args

#: how a refusal names each node (its constructor's words)
LABELS = {"hardware_node": "hardware node", "rci_gateway": "RCI gateway",
          "rdi_gateway": "RDI gateway", "foxglove_gateway": "Foxglove gateway"}


def checked(node: str, argv: list[str], namespace: str | None = None,
            in_code: dict | None = None) -> dict:
    """The parameter values the node ``node`` (its default name: a key of
    ``NODE_RECORDS``) would declare in a process started with ``argv``;
    ``in_code``: its ``parameter_overrides`` by name. ValueError (one line)
    where its constructor would refuse to start."""
    from bsal_ros.nodes import params
    from bsal_ros.nodes.records import NODE_RECORDS
    _, given = ros_args.overrides_for(argv, node, namespace, in_code)
    values = params.checked(NODE_RECORDS[node], given, LABELS[node])
    if node == "hardware_node":
        from bsal_ros.nodes.hardware_params import assemble
        assemble(values, {n: v for n, v in given.items() if n.startswith("robot.")})
    elif node == "rci_gateway":
        from bsal_ros.nodes.rci_gateway import load_users, resolve_users_file
        from bsal_ros.rci.users import UsersFileError
        try:
            load_users(resolve_users_file(values["users_file"]), values["host"])
        except UsersFileError as exc:
            raise ValueError(str(exc)) from None
    elif node == "foxglove_gateway":
        from bsal_ros.foxglove.access import Access
        why = Access(host=values["host"], tls=values["tls"], certfile=values["certfile"],
                     keyfile=values["keyfile"]).refusal()
        if why:
            raise ValueError(why)
    return values


def refusal(argv: list[str], nodes, prefix: str = "") -> str:
    """Why the process started with ``argv`` cannot build ``nodes`` (("" : it
    can), ``prefix`` + the first node's refusal. ``nodes``: (default name,
    namespace, overrides in code) of each node, in the order they are built."""
    for node, namespace, in_code in nodes:
        try:
            checked(node, argv, namespace, in_code)
        except ValueError as exc:
            return prefix + str(exc)
    return ""


def one_node(node: str, prefix: str):
    """The check of an executable that builds the node ``node`` alone."""
    return lambda argv: refusal(argv, [(node, None, None)], prefix)


def destroyed_if_refused(init):
    """Decorate a Node subclass's ``__init__``: if it raises once the rclpy
    node exists, rclpy's own ``Node.destroy_node`` runs before the error goes on."""
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        try:
            init(self, *args, **kwargs)
        except BaseException:
            from rclpy.node import Node
            try:
                self.handle             # AttributeError: Node.__init__ never made it
                Node.destroy_node(self)
            except Exception:   # noqa: BLE001 - the constructor's error is the one to report
                pass
            raise
    return wrapper
