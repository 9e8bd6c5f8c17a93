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

"""Route the pure layers' Python logging into a node's ROS logger.

The protocol, hardware, rci and rdi layers log with the standard `logging`
module (they import no ROS); a node gives them a logger made here, so their
lines appear in the node's ROS log (console, /rosout) with the node's name.
"""
import logging

_LEVELS = ((logging.ERROR, "error"), (logging.WARNING, "warning"),
           (logging.INFO, "info"), (logging.NOTSET, "debug"))


class RosLogHandler(logging.Handler):
    """A logging handler writing each record to `node.get_logger()`."""

    def __init__(self, node):
        super().__init__()
        self.node = node
        # The message, plus the traceback of logger.exception() calls.
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        """Forward one record to the node's logger (never raises)."""
        try:
            msg = self.format(record)
            method = next(name for level, name in _LEVELS if record.levelno >= level)
            getattr(self.node.get_logger(), method)(msg)
        except Exception:   # noqa: BLE001 - logging must never raise
            pass


def python_logger_for(node, layer: str, level: int = logging.INFO) -> logging.Logger:
    """A logger named after `layer` and the node's full name, writing to the node.

    One per node: two gateways in one process (two robots, tests) each get
    their own, and a node created again under the same name takes it over.
    """
    suffix = node.get_fully_qualified_name().strip("/").replace("/", ".")
    logger = logging.getLogger(f"{layer}.{suffix}")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.addHandler(RosLogHandler(node))
    logger.setLevel(level)
    logger.propagate = False
    return logger
