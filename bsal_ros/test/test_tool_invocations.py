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
"""Every generator and tool answers a bad invocation with one line on stderr
that names the fix, exit code 2 and no traceback (issue 41): the generators
(gen_lua, gen_cpp, gen_docs, the aggregator config, the URDF), brak_wire and
its fuzzer, rdi_viewer, brak_drive and brak_record, each run as its own process."""

import os
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

from bsal_ros.tools import gen_cpp
from bsal_ros.wireshark import gen_lua

#: the package folder of the code under test
ROOT = Path(__file__).resolve().parents[1]

#: case -> (module run with ``python -m``, its arguments ({tmp}: a scratch
#: folder holding plain.txt, a file of neither kind), what the line must say)
BAD = {
    "gen_lua, --lua names no file": (
        "bsal_ros.wireshark.gen_lua", ["--lua", "{tmp}/bsal.lua"], "copy it there first"),
    "gen_lua, --lua names a file without the markers": (
        "bsal_ros.wireshark.gen_lua", ["--lua", "{tmp}/plain.txt"],
        "generated-block markers not found"),
    "gen_lua, an unknown option": (
        "bsal_ros.wireshark.gen_lua", ["--bogus"], "unrecognized arguments: --bogus"),
    "gen_cpp, --out names a file": (
        "bsal_ros.tools.gen_cpp", ["--out", "{tmp}/plain.txt"], "is a file: name a folder"),
    "gen_cpp, --out under a file": (
        "bsal_ros.tools.gen_cpp", ["--out", "{tmp}/plain.txt/include"],
        "name a folder this user can write to"),
    "gen_docs, --root is not the repository": (
        "bsal_ros.tools.gen_docs", ["--root", "{tmp}"], "--root names the repository"),
    "diagnostics_config, an unknown option": (
        "bsal_ros.kinds.diagnostics_config", ["--bogus"], "unrecognized arguments"),
    "description, --config names no file": (
        "bsal_ros.description", ["--config", "{tmp}/robot.yaml"], "a robot description YAML"),
    "description, --config is not YAML": (
        "bsal_ros.description", ["--config", "{tmp}/bad.yaml"], "is not valid YAML"),
    "description, --check names no file": (
        "bsal_ros.description", ["--check", "{tmp}/brak.urdf"], "write it first"),
    "description, -o in a folder that does not exist": (
        "bsal_ros.description", ["-o", "{tmp}/none/brak.urdf"], "a folder that exists"),
    "brak_wire, an unknown command": (
        "bsal_ros.tools.wire", ["bogus"], "invalid choice"),
    "brak_wire replay, no such recording": (
        "bsal_ros.tools.wire", ["replay", "{tmp}/s.jsonl", "--target", "127.0.0.1:7650"],
        "a recording: brak_wire record --out"),
    "brak_wire pcap, not a recording": (
        "bsal_ros.tools.wire", ["pcap", "{tmp}/plain.txt", "{tmp}/s.pcap"],
        "is not a recording"),
    "brak_wire replay, --target is not HOST:PORT": (
        "bsal_ros.tools.wire", ["replay", "{tmp}/plain.txt", "--target", "localhost"],
        "is not HOST:PORT (e.g. 127.0.0.1:7650)"),
    "brak_wire record, --out in a folder that does not exist": (
        "bsal_ros.tools.wire", ["record", "--target", "127.0.0.1:7650", "--protocol", "rci",
                                "--out", "{tmp}/none/s.jsonl"], "create it first"),
    "brak_wire fuzz, --sessions names no folder": (
        "bsal_ros.tools.wire", ["fuzz", "--sessions", "{tmp}/none"], "the recorded sessions"),
    "wire_fuzz, an unknown option": (
        "bsal_ros.tools.wire_fuzz", ["--bogus"], "unrecognized arguments"),
    "rdi_viewer, a bad --size": (
        "bsal_ros.viewer", ["--size", "3"], "argument --size"),
    "brak_drive, a speed that is not a number": (
        "bsal_ros.tools.drive", ["fast", "0"], "invalid float value: 'fast'"),
    "brak_record, --output names a file that exists": (
        "bsal_ros.nodes.record", ["--output", "{tmp}/plain.txt"],
        "exists: name another file (--output) or remove it"),
    "brak_record, --output in a folder that does not exist": (
        "bsal_ros.nodes.record", ["--output", "{tmp}/none/x.mcap"], "create it first"),
    "brak_record, --output under a file": (
        "bsal_ros.nodes.record", ["--output", "{tmp}/plain.txt/x.mcap"],
        "name a file in a folder you can write to"),
    "brak_record, --wire-targets is not three ports": (
        "bsal_ros.nodes.record", ["--wire", "--wire-targets", "7650,7651"],
        "three ports RCI,REALTIME,CA, e.g. 7650,7651,7652"),
    "brak_record, a negative --duration": (
        "bsal_ros.nodes.record", ["--duration", "-1"], "--duration -1: not negative"),
}


def run(module: str, args: list, tmp: Path) -> subprocess.CompletedProcess:
    """``python -m module args`` in ``tmp``, ``{tmp}`` replaced by it, with the
    package under test first on the path: under ``colcon test`` the workspace's
    installed copy would run instead, which has no legacy/ beside it (gen_cpp)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", module,
                           *(a.replace("{tmp}", str(tmp)) for a in args)],
                          capture_output=True, text=True, timeout=120, cwd=tmp, env=env)


@pytest.fixture
def scratch(tmp_path):
    """A folder with a plain text file and a file that is not YAML."""
    (tmp_path / "plain.txt").write_text("neither a recording nor a dissector\n",
                                        encoding="utf-8")
    (tmp_path / "bad.yaml").write_text("robot: [1\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("case", BAD)
def test_a_bad_invocation_is_one_line_naming_the_fix_and_exit_2(scratch, case):
    module, args, says = BAD[case]
    done = run(module, args, scratch)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and says in lines[0], lines
    assert done.stdout == ""


def test_gen_lua_regenerates_a_copy_of_the_dissector(scratch):
    """The fix the line names works: a copy of bsal.lua is regenerated in place."""
    copy = scratch / "bsal.lua"
    shutil.copyfile(gen_lua.LUA, copy)
    copy.write_text(copy.read_text(encoding="utf-8").replace("local RCI_CODES", "local X"),
                    encoding="utf-8")
    done = run("bsal_ros.wireshark.gen_lua", ["--lua", str(copy)], scratch)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "local RCI_CODES" in copy.read_text(encoding="utf-8")


def test_gen_cpp_says_which_include_folder_to_build_with(scratch):
    include = scratch / "include"
    done = run("bsal_ros.tools.gen_cpp", ["--out", str(include)], scratch)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert sorted(p.name for p in include.iterdir()) == [gen_cpp.PROTOCOLS, gen_cpp.TABLES]
    assert done.stdout.splitlines() == [
        f"python -m bsal_ros.tools.gen_cpp: {gen_cpp.PROTOCOLS} and {gen_cpp.TABLES} written "
        f"to {include}: build the rci-client library and its programs with -I{include} ahead "
        f"of -I{gen_cpp.INCLUDE}"]
