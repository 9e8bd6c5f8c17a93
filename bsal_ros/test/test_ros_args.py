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

"""bsal_ros.nodes.ros_args reads the ROS arguments as rcl and rclpy do.

For each command line, the overrides :func:`overrides_for` computes without
a node are compared with the parameters a real rclpy node of that name gets
(``automatically_declare_parameters_from_overrides``): values as rcl's YAML
parser types them, params-file node names with wildcards and namespaces,
the order of ``-p`` and ``--params-file``, ``__node`` and ``__ns`` remaps.
The real nodes are built in a process of their own, which ends without
destroying them (docs/DEVELOPING.md: the hang at a node's destruction).
"""
import json
import subprocess
import sys
import textwrap

import pytest

from bsal_ros.nodes.ros_args import overrides_for, scalar

pytestmark = pytest.mark.ros

PARAMS = textwrap.dedent("""
    /**:
      ros__parameters:
        wild: 1
        order: 1
    /**/hardware_node:
      ros__parameters:
        any_depth: 2
        order: 2
    /*/hardware_node:
      ros__parameters:
        one_level: 3
    hardware_node:
      ros__parameters:
        relative: 4
        order: 4
    /ns/hardware_node:
      ros__parameters:
        absolute_ns: 5
        robot:
          geometry:
            wheel_radius: 0.1
    ns:
      hardware_node:
        ros__parameters:
          nested: [1, 2]
          plain: 1e3
          quoted: "010"
          octal: 010
          words: [yes, no, On]
          texts: ["a", b]
    /*:
      ros__parameters:
        star: 7
""")

SCALARS = ["a:=1e3", "b:=010", "c:=0x1F", "d:=1_000", "e:=yes", "f:=Off", "g:='5'", "h:=.inf",
           "i:=+5", "j:=[1, 2]", "k:=~", "l:=99999999999999999999", "m:=5.0f", "n:=!!str 5",
           "o:=0x1p3", "q:=y", "r:=tRue", "s:=-0x10", "t:=08", "u:=Infinity", "v:=1.", "w:=null"]


def cases(path):
    """(arguments, node name, namespace in code) of each comparison."""
    f = ["--params-file", str(path)]
    scalars = [a for s in SCALARS for a in ("-p", s)]
    return [
        (scalars, "hardware_node", None),
        (f, "hardware_node", None),
        (f, "hardware_node", "/ns"),
        (f, "hardware_node", "ns"),
        (f, "hardware_node", "/a/b"),
        (f + ["-r", "__ns:=/ns"], "hardware_node", None),
        (f + ["-r", "__ns:=/ns", "-r", "__ns:=/a"], "hardware_node", None),
        (f + ["-r", "other:__ns:=/ns"], "hardware_node", None),
        (f + ["-r", "hardware_node:__ns:=/ns"], "hardware_node", "/x"),
        (f + ["-r", "__node:=renamed"], "hardware_node", "/ns"),
        (["-p", "order:=9"] + f, "hardware_node", None),
        (f + ["-p", "order:=9"], "hardware_node", None),
        (["-p", "hardware_node:order:=8", "-p", "order:=9"], "hardware_node", None),
        (["-p", "order:=9", "-p", "hardware_node:order:=8"], "hardware_node", None),
        (["-p", "other:order:=8"], "hardware_node", None),
        (f + ["--params-file", str(path), "-p", "relative:=0", "--log-level", "warn"],
         "hardware_node", None),
    ]


REAL = textwrap.dedent("""
    import json, os, sys
    import rclpy, rclpy.context
    from rclpy.node import Node
    out = []
    for args, name, ns in json.loads(sys.argv[1]):
        context = rclpy.context.Context()
        rclpy.init(args=["x", "--ros-args", *args], context=context)
        node = Node(name, namespace=ns, context=context,
                    automatically_declare_parameters_from_overrides=True)
        values = {n: p.value for n, p in node.get_parameters_by_prefix("").items()
                  if n not in ("use_sim_time", "start_type_description_service")}
        out.append([node.get_fully_qualified_name(), values])
    print("@@" + json.dumps(out, default=list))
    sys.stdout.flush()
    os._exit(0)          # the nodes are never destroyed (module docstring)
""")


def test_overrides_are_what_a_real_node_gets(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS)
    todo = cases(path)
    run = subprocess.run([sys.executable, "-c", REAL, json.dumps(todo)], capture_output=True,
                         text=True, timeout=240)
    lines = [ln[2:] for ln in run.stdout.splitlines() if ln.startswith("@@")]
    assert lines, run.stdout + run.stderr
    real = json.loads(lines[0])
    for (args, name, ns), (fqn, values) in zip(todo, real):
        ours_fqn, ours = overrides_for(["x", "--ros-args", *args], name, ns)
        ours = json.loads(json.dumps(ours))       # as the real values came: through JSON
        assert (ours_fqn, ours) == (fqn, values), args


@pytest.mark.parametrize("text,value", [
    ("true", True), ("Off", False), ("tRue", "tRue"), ("010", 8), ("0x1F", 31), ("08", 8.0),
    ("1e3", 1000.0), ("1_000", "1_000"), ("-.inf", float("-inf")), ("0x1p3", 8.0),
    ("2", 2), ("2.5", 2.5), ("abc", "abc"), ("", ""),
])
def test_a_plain_scalar_is_typed_as_rcl_types_it(text, value):
    got = scalar(text)
    assert got == value and type(got) is type(value)
