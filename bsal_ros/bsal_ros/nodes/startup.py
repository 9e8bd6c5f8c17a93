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

"""An executable's command line to an rclpy context, or one line saying why
not; and a node that refuses to start leaves nothing behind.

rcl reports a missing or malformed params file, a bad ``-p`` or ``-r`` as an
exception carrying its C source positions, after logging a line of its own;
an option that is no ROS argument it ignores. Here each becomes one reason
(:func:`init_rclpy`), which :func:`bsal_ros.nodes.runtime.run` logs as one
fatal line before exiting with code 2.

The executables refuse a bad parameter before any node exists (``check``:
:mod:`.preflight`). A node built in code whose constructor raises after
``Node.__init__`` is destroyed at once (:func:`destroyed_if_refused`), which
can still meet Fast DDS's deadlock (docs/DEVELOPING.md).
"""

from __future__ import annotations

import functools
import sys


def init_rclpy(args: list[str] | None, check=None) -> str:
    """``rclpy.init`` with our signal handling; returns why it cannot start
    ("" : started): a params file that is missing or malformed, a bad ROS
    argument, an option that is not a ROS argument, or ``check(argv)``'s
    reason (:mod:`.preflight`); the context is then shut down again."""
    import rclpy
    import rclpy.logging
    from rclpy.signals import SignalHandlerOptions
    from rclpy.utilities import remove_ros_args
    argv = sys.argv if args is None else args
    # rcl logs its own "Failed to parse global arguments" before raising: the
    # reason is said once, below, in one line
    rclpy.logging.set_logger_level("rcl", rclpy.logging.LoggingSeverity.FATAL)
    try:
        rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as exc:   # noqa: BLE001 - rclpy's RCLError, not importable by name
        # rcl appends the C source positions: ", at /path/parser.c:271, at ..."
        text = " ".join(str(exc).split(", at /")[0].split())
        return f"cannot start: {text}"
    finally:
        if not any(a.startswith("rcl:=") for a in argv):
            rclpy.logging.set_logger_level("rcl", rclpy.logging.LoggingSeverity.UNSET)
    unknown = remove_ros_args(argv)[1:]
    why = (f"unknown option {unknown[0]!r}: this program takes ROS arguments only "
           "(--ros-args -p name:=value, --params-file FILE, -r ...)") if unknown else ""
    why = why or (check(argv) if check else "")
    if why:
        rclpy.try_shutdown()
    return why


def destroyed_if_refused(init):
    """Decorate a Node subclass's ``__init__``: when it raises once the rclpy
    node exists, the node is destroyed (rclpy's own ``destroy_node``, not the
    subclass's, which expects a whole node) before the error goes on."""
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        try:
            init(self, *args, **kwargs)
        except BaseException:
            _destroy_half_built(self)
            raise
    return wrapper


def _destroy_half_built(node) -> None:
    from rclpy.node import Node
    try:
        node.handle                 # AttributeError: Node.__init__ never made it
    except Exception:   # noqa: BLE001
        return
    try:
        Node.destroy_node(node)
    except Exception:   # noqa: BLE001 - the constructor's error is the one to report
        pass
