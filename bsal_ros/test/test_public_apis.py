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

"""The package reaches asyncio and rclpy through their public names only
(issue 40): a scan of every module's syntax tree.

What the scan finds (:func:`private_uses`):

* an import of ``rclpy.impl``, of a module or name with a leading underscore
  under ``asyncio`` or ``rclpy``, and the name ``_rclpy`` anywhere;
* ``asyncio._x`` / ``rclpy.node._x``: a private attribute reached through a
  module name bound to asyncio or rclpy;
* in a class deriving from an asyncio or rclpy class, ``self._x`` where the
  base class (any of its asyncio/rclpy ancestors) defines ``_x``: using or
  overwriting the base's private state;
* ``obj._x`` on any other object, where ``_x`` is a private name asyncio's or
  rclpy's own classes define and this package defines nowhere (a name that
  both define cannot be told apart by a source scan).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
import re

PACKAGE = Path(__file__).resolve().parents[1] / "bsal_ros"
LIBRARIES = ("asyncio", "rclpy")
#: the namedtuple API (public despite its underscore)
PUBLIC_UNDERSCORED = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})
SELF_PRIVATE = re.compile(r"\bself\.(_[A-Za-z]\w*)")
DEF_PRIVATE = re.compile(r"^\s*def (_[A-Za-z]\w*)", re.M)
ASSIGNED_PRIVATE = re.compile(r"^\s*(_[A-Za-z]\w*)\s*[:=]", re.M)


def is_private(name: str) -> bool:
    """A leading underscore, not a dunder."""
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_UNDERSCORED


def of_library(dotted: str) -> bool:
    """``dotted`` names asyncio, rclpy or something inside them."""
    return dotted.split(".")[0] in LIBRARIES


def library_private_names() -> frozenset:
    """Every private method and instance attribute the classes of asyncio's
    and rclpy's Python sources define."""
    names = set()
    for lib in LIBRARIES:
        root = Path(importlib.import_module(lib).__file__).parent
        for f in root.rglob("*.py"):
            text = f.read_text(errors="replace")
            names.update(SELF_PRIVATE.findall(text))
            names.update(DEF_PRIVATE.findall(text))
    return frozenset(n for n in names if is_private(n))


def package_private_names(sources) -> frozenset:
    """The private names this package's own code defines."""
    names = set()
    for text in sources:
        names.update(SELF_PRIVATE.findall(text))
        names.update(DEF_PRIVATE.findall(text))
        names.update(ASSIGNED_PRIVATE.findall(text))
    return frozenset(n for n in names if is_private(n))


def private_names_of_base(dotted: str) -> frozenset:
    """The private names the asyncio/rclpy class ``dotted`` and its
    asyncio/rclpy ancestors define (class members, ``self._x`` in their source)."""
    module, _, attr = dotted.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return frozenset()
    names = set()
    for klass in getattr(cls, "__mro__", ()):
        if not of_library(klass.__module__):
            continue
        names.update(n for n in vars(klass) if is_private(n))
        try:
            names.update(n for n in SELF_PRIVATE.findall(inspect.getsource(klass))
                         if is_private(n))
        except (OSError, TypeError):
            pass
    return frozenset(names)


def dotted_name(node, bound: dict) -> str | None:
    """``a.b.c`` of a Name/Attribute chain, its root replaced by what it is
    bound to by an import (None: not a chain, or a root no import binds)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bound:
        return None
    return ".".join([bound[node.id], *reversed(parts)])


def _imports(tree) -> tuple[dict, list]:
    """(local name -> the dotted name it is bound to, private imports found)."""
    bound, found = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else \
                    a.name.split(".")[0]
                if of_library(a.name) and (any(map(is_private, a.name.split(".")))
                                           or a.name.startswith("rclpy.impl")):
                    found.append((node.lineno, f"import {a.name}"))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                bound[a.asname or a.name] = full
                if of_library(node.module) and (any(map(is_private, full.split(".")))
                                                or full.startswith("rclpy.impl")):
                    found.append((node.lineno, f"from {node.module} import {a.name}"))
    return bound, found


def _class_uses(tree, bound: dict) -> list:
    """``self._x`` in classes deriving from asyncio/rclpy classes, where the
    base defines ``_x``."""
    found = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        private = set()
        for base in cls.bases:
            dotted = dotted_name(base, bound)
            if dotted and of_library(dotted):
                private |= private_names_of_base(dotted)
        if not private:
            continue
        for node in ast.walk(cls):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "self" and node.attr in private):
                found.append((node.lineno, f"{cls.name}: self.{node.attr} is its "
                                           f"asyncio/rclpy base's private name"))
    return found


def private_uses(source: str, library_names: frozenset = frozenset(),
                 ours: frozenset = frozenset()) -> list[tuple[int, str]]:
    """(line, what) of every use of a private asyncio or rclpy name in
    ``source`` (see the module docstring); ``library_names``: the libraries'
    private names, ``ours``: those this package defines itself."""
    tree = ast.parse(source)
    bound, found = _imports(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "_rclpy":
            found.append((node.lineno, "the name _rclpy"))
        elif isinstance(node, ast.Attribute):
            dotted = dotted_name(node, bound)
            if dotted is not None and of_library(dotted):
                if any(map(is_private, dotted.split("."))) or ".impl" in dotted:
                    found.append((node.lineno, dotted))
                continue
            root = node.value
            if isinstance(root, ast.Name) and root.id in ("self", "cls"):
                continue
            if dotted is not None and not of_library(dotted):
                continue        # another module's name (os._exit, sys._getframe)
            if is_private(node.attr) and node.attr in library_names and node.attr not in ours:
                found.append((node.lineno, f"._{node.attr.lstrip('_')} (a private name of "
                                           f"asyncio's or rclpy's objects)"))
    found.extend(_class_uses(tree, bound))
    return sorted(set(found))


def package_sources() -> dict:
    """path -> source of every module of the package."""
    return {p: p.read_text() for p in sorted(PACKAGE.rglob("*.py"))}


def test_the_package_uses_public_asyncio_and_rclpy_names_only():
    sources = package_sources()
    lib, ours = library_private_names(), package_private_names(sources.values())
    found = [f"{p.relative_to(PACKAGE.parent)}:{line}: {what}"
             for p, text in sources.items() for line, what in private_uses(text, lib, ours)]
    assert not found, "\n".join(found)


def test_the_scan_sees_a_private_rclpy_import():
    assert private_uses("from rclpy.impl.implementation_singleton import "
                        "rclpy_implementation as _rclpy\n")
    assert private_uses("import rclpy.impl.rcutils_logger\n")
    assert private_uses("from rclpy.executors import _rclpy\n")
    assert private_uses("import rclpy\nrclpy.node._x = 1\n")
    assert private_uses("from rclpy import node\nnode._helper()\n")


def test_the_scan_sees_a_private_asyncio_name():
    assert private_uses("import asyncio\nasyncio._get_running_loop()\n")
    assert private_uses("from asyncio import _get_running_loop\n")
    assert private_uses("import asyncio.base_events\nasyncio.base_events._format_pipe\n")


def test_the_scan_sees_a_subclass_reaching_into_its_asyncio_base():
    planted = ("import asyncio\n\n"
               "class Reader(asyncio.StreamReader):\n"
               "    def divert(self):\n"
               "        data = bytes(self._buffer)\n"
               "        self._buffer.clear()\n"
               "        self._maybe_resume_transport()\n"
               "        return data\n")
    whats = " ".join(what for _, what in private_uses(planted))
    assert "self._buffer" in whats and "self._maybe_resume_transport" in whats


def test_the_scan_sees_a_subclass_reaching_into_its_rclpy_base():
    planted = ("from rclpy.node import Node\n\n"
               "class Gateway(Node):\n"
               "    def names(self):\n"
               "        return list(self._clients)\n")
    assert private_uses(planted)


def test_the_scan_sees_a_private_name_reached_on_a_library_object():
    lib = library_private_names()
    assert "_maybe_resume_transport" in lib
    assert private_uses("def f(reader):\n    reader._maybe_resume_transport()\n", lib)
    # the same name defined by the package itself cannot be told apart
    assert not private_uses("def f(reader):\n    reader._maybe_resume_transport()\n", lib,
                            frozenset({"_maybe_resume_transport"}))


def test_the_scan_lets_public_and_own_names_through():
    clean = ("import asyncio\nimport os\nfrom collections import namedtuple\n\n"
             "class Stream(asyncio.Protocol):\n"
             "    def __init__(self):\n"
             "        self._chunks = bytearray()\n"
             "    def connection_made(self, transport):\n"
             "        transport.pause_reading()\n"
             "        self._chunks.clear()\n\n"
             "P = namedtuple('P', 'x')\n"
             "print(P(1)._replace(x=2), asyncio.get_running_loop)\n"
             "os._exit(0)\n")
    assert private_uses(clean, library_private_names()) == []
