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

"""pytest plugin: what a test module changes for the whole process is put back
when the module ends, so modules can share one pytest process in any order.

``make test`` runs each module in a process of its own, but `make test-fast`
and a plain ``pytest test/`` run many in one. The package keeps a few
process-wide tables that a test may extend: the device kinds and board types
(:mod:`bsal_ros.kinds`), the plugin loader's and the wire codes' records, the
RCI sensor sub-codes and RDI item layouts (:mod:`bsal_ros.protocol.wire_kinds`),
the RCI commands and their handlers. Some of them keep an entry on purpose
once it is made (``registry.unregister`` leaves a sub-code legal), so a kind
one module registers would refuse another module's kind of the same code.
:data:`TABLES` names every such table; :func:`snapshot` copies them and
:meth:`Snapshot.restore` puts each back in place (the same dict: other modules
and running decoders hold it) and rebuilds what is derived from them. The
process environment, the working directory, ``sys.path`` and the logging
levels of the root and the ``bsal_ros`` loggers are put back too, and the
module's cyclic garbage is collected before the next module starts.

``conftest.py`` loads it (``pytest_plugins``): :func:`module_state` is an
autouse fixture of module scope, so it is set up before a module's own
module-scoped fixtures and torn down after them.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import logging
import os
import sys

import pytest

#: module -> its process-wide tables (dicts or lists) a test may change
TABLES = {
    "bsal_ros.kinds.registry": ("_BOARD_TYPES", "_KINDS", "RCI_SENSOR_CLASS", "RDI_KIND"),
    "bsal_ros.kinds.plugins": ("_loaded", "_errors", "_registered", "_packages"),
    "bsal_ros.kinds.codes": ("_holders",),
    "bsal_ros.protocol.rci_tables": ("SENSOR_SUBS", "SENSOR_DATA", "SENSOR_DATA_TYPE",
                                     "SENSOR_REPLY"),
    "bsal_ros.protocol.rdi": ("_LAYOUTS", "_LAYOUT_BY_INT", "_SUB_BY_INT", "_ENCODERS"),
    "bsal_ros.protocol.rci_registry": ("_SPECS", "_NAMES", "_listeners"),
    "bsal_ros.rci.handlers": ("HANDLERS",),
}
#: loggers whose level a test may set (caplog puts its own back)
LOGGERS = ("", "bsal_ros", "foxglove")


@dataclasses.dataclass
class Snapshot:
    """The tables' objects and contents, and the process settings, at one moment."""

    tables: list[tuple[object, str, object, object]]
    environ: dict[str, str]
    cwd: str
    path: list[str]
    levels: dict[str, int]

    def restore(self) -> list[str]:
        """Put everything back as it was; returns what had changed, one
        ``module.attribute`` (or setting) each."""
        changed = []
        for module, name, obj, content in self.tables:
            now = getattr(module, name)
            if now is not obj or _content(obj) != content:
                changed.append(f"{module.__name__}.{name}")
                setattr(module, name, obj)
                obj.clear()
                (obj.update if isinstance(obj, dict) else obj.extend)(content)
        if any(c.startswith("bsal_ros.protocol.rci_registry.") for c in changed):
            from bsal_ros.protocol import rci_registry
            rci_registry._rebuild()         # the derived tables and the encoders
        if any(c.startswith("bsal_ros.protocol.rdi.") for c in changed):
            from bsal_ros.protocol import rdi
            for pfx, plans in rdi._PLANS.items():
                plans.clear()               # in place: running decoders hold it
                plans.update(rdi._plans(pfx))
        if dict(os.environ) != self.environ:
            changed.append("os.environ")
            os.environ.clear()
            os.environ.update(self.environ)
        if os.getcwd() != self.cwd:
            changed.append("the working directory")
            os.chdir(self.cwd)
        if sys.path != self.path:
            changed.append("sys.path")
            sys.path[:] = self.path
        for name, level in self.levels.items():
            if logging.getLogger(name).level != level:
                changed.append(f"the level of logger {name or 'root'!r}")
                logging.getLogger(name).setLevel(level)
        return changed


def _content(obj):
    return dict(obj) if isinstance(obj, dict) else list(obj)


def snapshot() -> Snapshot:
    """Copy every table of :data:`TABLES` and the process settings."""
    tables = []
    for module_name, names in TABLES.items():
        module = importlib.import_module(module_name)
        for name in names:
            obj = getattr(module, name)
            tables.append((module, name, obj, _content(obj)))
    return Snapshot(tables, dict(os.environ), os.getcwd(), list(sys.path),
                    {name: logging.getLogger(name).level for name in LOGGERS})


@pytest.fixture(scope="module", autouse=True)
def module_state():
    """Every module starts from the tables and settings the one before it
    found, whatever it registers, sets or changes."""
    before = snapshot()
    yield
    before.restore()
    # the module's garbage in reference cycles is finalised here, in this
    # thread, not by a collection a later module's thread happens to start
    # (an RDI gateway's loop thread freed a PIL font while the main thread
    # drew text: a fatal abort in one process, seed 1 of the random order)
    gc.collect()
