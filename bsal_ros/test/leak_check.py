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

"""pytest plugin: the test that leaves an rclpy context alive fails, naming it;
so does a test that makes one without the ``ros`` mark.

A context left initialised keeps its DDS participant (and its nodes' entities)
alive for the rest of the test process: the next tests' discovery traffic
then reaches it, which is how a participant's destruction met Fast DDS's
deadlock (docs/DEVELOPING.md). Every ``rclpy.context.Context.init`` is
recorded with who made it: the test, or a fixture and its scope. When a test's
teardown ends, the contexts it or its function-scoped fixtures made must be
shut down; when a module's last test ends, those of its module- and
class-scoped fixtures too; when the session ends, every one. A leak is an
error at that teardown, with where the context was made and its nodes' names;
the context is then shut down, so one leak does not spread.

``conftest.py`` loads it (``pytest_plugins``); a test tree of its own
(test_run_suite.py) can load it with ``-p leak_check``.
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.machinery
import sys
import traceback
import weakref

import pytest


@dataclasses.dataclass
class Made:
    """Who made a context: the test's node id, the fixture scope ("function"
    for the test itself), the module, and the line that called ``init``."""

    test: str | None
    scope: str
    module: str | None
    where: str
    nodes: list = dataclasses.field(default_factory=list)


_made: "weakref.WeakKeyDictionary[object, Made]" = weakref.WeakKeyDictionary()
_scopes: list[str] = []
_item = None


def _caller() -> str:
    """The innermost frame outside rclpy and this plugin: where init was called."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        path = frame.filename.replace("\\", "/")
        if "/rclpy/" not in path and not path.endswith("leak_check.py"):
            return f"{path.rsplit('/', 1)[-1]}:{frame.lineno} in {frame.name}"
    return "?"


def unmarked(item) -> bool:
    """``item`` is not marked ``ros`` in a suite that declares the mark (the
    toy trees of test_run_suite.py declare none)."""
    declared = any(line.split(":")[0].strip() == "ros" for line in item.config.getini("markers"))
    return declared and item.get_closest_marker("ros") is None


def _wrap_context(module) -> None:
    """Context.init records who made the context, and refuses a test not
    marked ``ros``: `make test-fast` runs those in one process, where the
    participants of earlier tests would meet it (docs/DEVELOPING.md)."""
    context_init = module.Context.init

    def init(self, *args, **kwargs):
        item = _item
        if item is not None and unmarked(item):
            pytest.fail(f"{item.nodeid} starts rclpy (a Context, at {_caller()}) but is not "
                        "marked ros: mark it (pytestmark = pytest.mark.ros), so make "
                        "test-fast leaves it out and one pytest hands its module to the "
                        "runner", pytrace=False)
        context_init(self, *args, **kwargs)
        _made[self] = Made(item.nodeid if item is not None else None,
                           _scopes[-1] if _scopes else "function",
                           getattr(getattr(item, "module", None), "__name__", None),
                           _caller())
    module.Context.init = init


def _wrap_node(module) -> None:
    """Node.__init__ records the node with its context's record."""
    node_init = module.Node.__init__

    def node_made(self, *args, **kwargs):
        node_init(self, *args, **kwargs)
        made = _made.get(getattr(self, "context", None))
        if made is not None:
            made.nodes.append((self.get_fully_qualified_name(), weakref.ref(self)))
    module.Node.__init__ = node_made


_WRAPS = {"rclpy.context": _wrap_context, "rclpy.node": _wrap_node}


class _WrapOnImport(importlib.abc.MetaPathFinder):
    """Wraps rclpy's Context and Node when (and only if) a test imports them:
    a module that never touches ROS does not pay rclpy's import time."""

    def find_spec(self, fullname, path, target=None):
        """rclpy's own spec, its loader wrapping the module once executed."""
        if fullname not in _WRAPS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_wrap(module):
            exec_module(module)
            _WRAPS[fullname](module)
        spec.loader.exec_module = exec_and_wrap
        return spec


def pytest_configure(config):
    """Start recording before any test module is imported."""
    for name, wrap in _WRAPS.items():
        if name in sys.modules:
            wrap(sys.modules[name])
    sys.meta_path.insert(0, _WrapOnImport())


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """Contexts made while a fixture sets up belong to its scope."""
    _scopes.append(fixturedef.scope)
    try:
        return (yield)
    finally:
        _scopes.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Remember which test is running."""
    global _item
    _item = item
    try:
        return (yield)
    finally:
        _item = None


def leaked(item, nextitem) -> list[tuple[object, Made]]:
    """The live contexts that should be gone once ``item``'s teardown ended."""
    module = getattr(getattr(item, "module", None), "__name__", None)
    last_of_module = nextitem is None or getattr(
        getattr(nextitem, "module", None), "__name__", None) != module
    found = []
    for context, made in list(_made.items()):
        if not context.ok():
            continue
        if made.scope == "function" and made.test == item.nodeid:
            found.append((context, made))
        elif last_of_module and made.scope in ("class", "module") and made.module == module:
            found.append((context, made))
        elif nextitem is None:
            found.append((context, made))
    return found


def describe(made: Made) -> str:
    """One line: who made the context, where, and its nodes still alive."""
    alive = [name for name, ref in made.nodes if ref() is not None]
    owner = "the test" if made.scope == "function" else f"a {made.scope}-scoped fixture"
    return (f"an rclpy context made by {owner} at {made.where}"
            f" (test {made.test or 'none: at import'}), nodes: {', '.join(alive) or 'none'}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After the test's teardown: fail it for every context it left alive."""
    result = yield
    found = leaked(item, nextitem)
    if found:
        lines = [describe(made) for _, made in found]
        for context, _ in found:
            _made.pop(context, None)
            try:
                context.try_shutdown()   # so one leak does not spread to the next tests
            except Exception:   # noqa: BLE001 - the leak is the error to report
                pass
        pytest.fail(f"{item.nodeid} left {len(lines)} rclpy context(s) alive (shut them "
                    "down: the ros_context fixture, or rclpy.try_shutdown(context=...)):\n  "
                    + "\n  ".join(lines), pytrace=False)
    return result
