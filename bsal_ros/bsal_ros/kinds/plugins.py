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
"""The one loader of device-kind plugins: every process (hardware node, both
gateways, viewer, wire tools) gets its kinds and board types from the
entry-point group :data:`GROUP`, Brak's own included (bsal_ros/setup.py).

An entry point names a module (importing it registers its kinds) or a
function of no argument (called once). A plugin that fails to load is left
out, named in one logged error and in :func:`plugin_errors`; the others
load, and the process goes on (a description naming the missing kind is then
refused with KindError, naming the registered ones).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import pkgutil

from . import codes, registry

GROUP = "bsal_ros.device_kinds"
#: ``BSAL_ROS_KIND_PLUGINS=builtin``: load Brak's own kinds only, not those of
#: other installed packages (the generators of checked-in files run so)
ONLY_ENV = "BSAL_ROS_KIND_PLUGINS"
#: modules of this package that are not kinds (the fallback walk skips them)
_NOT_KINDS = frozenset({"base", "registry", "convert", "plugins", "diagnostics_config", "codes",
                        "board_hint"})

_log = logging.getLogger("bsal_ros.kinds")
_loaded: dict[str, str] = {}      # entry-point name -> its value ("module[:function]")
_errors: dict[str, str] = {}      # entry-point name -> the one-line error
#: entry-point name -> the board types and device kinds it registered
_registered: dict[str, frozenset[str]] = {}
#: entry-point name -> the name of the package (distribution) that installed it
_packages: dict[str, str] = {}


def _entry_points(entry_points=None):
    if entry_points is not None:
        return list(entry_points)
    eps = list(importlib.metadata.entry_points(group=GROUP))
    if os.environ.get(ONLY_ENV) == "builtin":
        eps = [ep for ep in eps if ep.value.startswith("bsal_ros.")]
    return codes.load_order(eps)


def _load_one(name: str, value: str, load, package: str = "") -> None:
    before = set(registry.board_types()) | set(registry.device_classes())
    try:
        with codes.claiming(name, value):   # its wire codes: in the plugins' range, its own
            obj = load()
            if callable(obj) and not isinstance(obj, type):
                obj()
    except Exception as exc:  # noqa: BLE001  (any fault of a plugin is its own, not ours)
        # what it registered before failing goes too: no board type left
        # carrying a kind that never came
        for half in (set(registry.board_types()) | set(registry.device_classes())) - before:
            registry.unregister(half)
        first = str(exc).splitlines()[0] if str(exc) else ""
        _errors[name] = (f"device-kind plugin {name!r} ({value}) not loaded: "
                         f"{type(exc).__name__}: {first}")
        _log.error(_errors[name])
        return
    _loaded[name] = value
    _registered[name] = frozenset(set(registry.board_types())
                                  | set(registry.device_classes())) - before
    _packages[name] = package


def load_plugins(entry_points=None) -> dict[str, str]:
    """Load every entry point of :data:`GROUP` not loaded yet (``entry_points``:
    a list to use instead of the installed ones, tests); returns the loaded
    ones, name -> value. When no entry point of bsal_ros itself is found (a
    source tree used without ``pip install``), Brak's own kinds are imported
    from this package so the bridge still knows its six classes."""
    eps = _entry_points(entry_points)
    for ep in eps:
        if ep.name not in _loaded and ep.name not in _errors:
            _load_one(ep.name, ep.value, ep.load, _package_of(ep))
    if entry_points is None and not any(ep.value.startswith("bsal_ros.") for ep in eps):
        for mod in pkgutil.iter_modules(_package_path()):
            if mod.name not in _NOT_KINDS and mod.name not in _loaded:
                ref = f"{__package__}.{mod.name}"
                _load_one(mod.name, ref, lambda r=ref: importlib.import_module(r))
    return dict(_loaded)


def _package_of(ep) -> str:
    """The name of the package that installed entry point ``ep`` ("": not known)."""
    dist = getattr(ep, "dist", None)
    return getattr(dist, "name", "") or ""


def plugin_of(name: str) -> tuple[str, str, str] | None:
    """(entry-point name, its value, its package) of the loaded plugin that
    registered the device kind or board type ``name``; None: none did (a
    declaration registered outside a plugin, e.g. by a test)."""
    for ep_name, value in _loaded.items():
        if name in _registered.get(ep_name, ()):
            return ep_name, value, _packages.get(ep_name, "")
    return None


def _package_path():
    return importlib.import_module(__package__).__path__


def plugin_errors() -> dict[str, str]:
    """Plugins that failed to load: entry-point name -> the logged error."""
    return dict(_errors)


def loaded_plugins() -> dict[str, str]:
    """Plugins loaded so far: entry-point name -> ``module[:function]``."""
    return dict(_loaded)
