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

"""The node executables' console scripts: the signal handlers first, the nodes after.

A console script (``setup.py`` ``entry_points``) imports the module that
holds its function, and everything that module imports at module level,
before it calls the function. The node modules import rclpy and the
messages (about a second on the 2-core machine): a Ctrl-C then raised
``KeyboardInterrupt`` inside an import (a traceback, exit 130), and a
SIGTERM killed the process by the signal. So each function here installs
the stop request's handlers (:mod:`bsal_ros.nodes.stop_request`) as its
first act, and imports the node's module only after: a signal during the
import sets the request, and :func:`bsal_ros.nodes.runtime.run` then stops
before building anything, with its one stop line and exit code 0.

This module imports nothing else at module level. What comes before its first
instruction is Python's own (docs/DEVELOPING.md, "Signals before the first
instruction"). ``python -m bsal_ros.nodes.<node>`` imports the node's module
first, as any module run that way; ``ros2 run`` and ``ros2 launch`` start the
console scripts.
"""

from bsal_ros.nodes.stop_request import install_signal_handlers, StopRequest


def _run(module: str) -> int:
    """Handlers, then the import of ``module``, then its ``main(stop=...)``."""
    stop = StopRequest()
    install_signal_handlers(stop)
    import importlib
    return importlib.import_module(module).main(stop=stop)


def hardware_node() -> int:
    """The ``hardware_node`` executable (:func:`bsal_ros.nodes.hardware_node.main`)."""
    return _run("bsal_ros.nodes.hardware_node")


def rci_gateway() -> int:
    """The ``rci_gateway`` executable (:func:`bsal_ros.nodes.rci_gateway.main`)."""
    return _run("bsal_ros.nodes.rci_gateway")


def rdi_gateway() -> int:
    """The ``rdi_gateway`` executable (:func:`bsal_ros.nodes.rdi_gateway.main`)."""
    return _run("bsal_ros.nodes.rdi_gateway")


def foxglove_gateway() -> int:
    """The ``foxglove_gateway`` executable (:func:`bsal_ros.nodes.foxglove_gateway.main`)."""
    return _run("bsal_ros.nodes.foxglove_gateway")


def brak_markers() -> int:
    """The ``brak_markers`` executable (:func:`bsal_ros.nodes.markers.main`)."""
    return _run("bsal_ros.nodes.markers")


def brak_bringup() -> int:
    """The ``brak_bringup`` executable (:func:`bsal_ros.nodes.bringup.main`)."""
    return _run("bsal_ros.nodes.bringup")


def brak_record() -> int:
    """The ``brak_record`` executable (:func:`bsal_ros.nodes.record.main`)."""
    return _run("bsal_ros.nodes.record")
