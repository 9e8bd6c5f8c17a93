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

"""Every thread's stacks, native and Python, of a process and its descendants.

For a hung test module: a deadlock inside Fast DDS or rcl holds no Python
frame that faulthandler or pytest-timeout could show, and its signal is never
handled while the main thread is in C. ``py-spy dump --native`` (PyPI,
requirements/project.txt) reads the stacks from outside through ptrace, C
frames included; a process that is not Python gets gdb's backtrace when gdb
is installed.
"""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import subprocess
import sys

#: seconds one dump may take (a process with hundreds of threads takes a few)
DUMP_TIMEOUT_S = 60.0


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it, parents first (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: the fields follow the last ')'
        fields = text[text.rindex(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    order, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        order.append(p)
        todo += sorted(children.get(p, []))
    return order


def session_members(sid: int) -> list[int]:
    """The processes still in session ``sid`` (the module's pytest made it:
    what it started and left running, unless that made a session of its own)."""
    members = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if os.getsid(int(proc.name)) == sid:
                members.append(int(proc.name))
        except OSError:
            continue
    return sorted(members)


def command_line(pid: int) -> str:
    """The process's command line, or "?" once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(raw.decode(errors="replace").split("\0")).strip()


def py_spy() -> str | None:
    """The py-spy beside this interpreter, or on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


def dump_one(pid: int) -> str:
    """The stacks of one process: py-spy for Python, gdb for the rest."""
    spy = py_spy()
    attempts = []
    if spy:
        attempts.append([spy, "dump", "--native", "--pid", str(pid)])
    if shutil.which("gdb"):
        attempts.append(["gdb", "-p", str(pid), "-batch", "-nx", "-ex",
                         "thread apply all bt"])
    if not attempts:
        return "  (neither py-spy nor gdb installed: make setup installs py-spy)\n"
    why = ""
    for cmd in attempts:
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=DUMP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            why += f"  {cmd[0]}: no answer in {DUMP_TIMEOUT_S:g} s\n"
            continue
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout
        why += f"  {Path(cmd[0]).name}: {(done.stderr or done.stdout).strip()[:300]}\n"
    return why


def dump_process_tree(pid: int) -> str:
    """The stacks of ``pid`` and of each process below it, one block each."""
    blocks = []
    for p in descendants(pid):
        blocks.append(f"--- process {p}: {command_line(p)[:300]}\n{dump_one(p)}")
    return "".join(blocks)
