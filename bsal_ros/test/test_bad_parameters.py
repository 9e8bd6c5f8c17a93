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

"""Bad parameters never trace: one line naming what is wrong, exit code 2.

The wrong values are generated from the parameter declarations themselves
(``HardwareNodeParams``, ``RciGatewayParams``, ``RdiGatewayParams``): for
every parameter a value of the wrong type, one below and one above its range,
one outside its choices. Each case runs the executable's own ``main()`` in a
driver process (one process for all cases: starting the executables one by
one would take minutes), which prints a marker and the exit code after each;
a few cases run the real executables as a user would, to prove the driver
sees what they print.
"""
import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

MODULES = {
    "hardware_node": "bsal_ros.nodes.hardware_node",
    "rci_gateway": "bsal_ros.nodes.rci_gateway",
    "rdi_gateway": "bsal_ros.nodes.rdi_gateway",
    "brak_bringup": "bsal_ros.nodes.bringup",
}
MARK = "@@case"

DRIVER = textwrap.dedent(f"""
    import faulthandler, importlib, json, os, signal, sys
    cases = json.loads(sys.argv[1])
    # a crash, or a case that starts the node for real and never returns (the
    # alarm), leaves every thread's stack in the output before the process ends
    faulthandler.enable()
    faulthandler.register(signal.SIGALRM, all_threads=True, chain=True)
    signal.alarm(20)
    for i, (module, args) in enumerate(cases):
        signal.alarm(20)
        main = importlib.import_module(module).main
        try:
            code = main(args, hard_exit=False)
        except SystemExit as exc:          # argparse
            code = exc.code
        sys.stdout.flush(); sys.stderr.flush()
        os.write(2, f"{MARK} {{i}} {{code}}\\n".encode())
""")


def record(executable):
    """The parameter record of a node executable (the one the node declares)."""
    from bsal_ros.nodes.records import NODE_RECORDS
    return NODE_RECORDS[executable]


def _num(x):
    return repr(float(x)) if isinstance(x, float) else str(int(x))


def wrong_values(default, spec):
    """(value as a ROS command line writes it, what the message must name) pairs."""
    out = []
    if isinstance(default, bool):
        out += [("7", "7"), ("abc", "abc")]
    elif isinstance(default, int):
        out += [("abc", "abc"), ("1.5", "1.5")]
    elif isinstance(default, float):
        out += [("abc", "abc"), ("true", "True")]
    else:
        out += [("7", "7")]
    if spec.choices:
        out.append(("nonsense", "nonsense"))
    if spec.low is not None:
        step = 1 if isinstance(default, int) else max(1.0, abs(spec.low) * 0.5)
        below = spec.low - step
        out.append((_num(type(default)(below)), _num(type(default)(below))))
        if spec.high is not None and math.isfinite(spec.high) and spec.high < 2**31 - 1:
            above = spec.high + step
            out.append((_num(type(default)(above)), _num(type(default)(above))))
    return out


def generated_cases():
    """(executable, parameter, argv, what the line must name) for every parameter."""
    cases = []
    for exe in ("hardware_node", "rci_gateway", "rdi_gateway"):
        for name, (default, spec) in record(exe).specs().items():
            for value, shown in wrong_values(default, spec):
                cases.append((exe, name, [exe, "--ros-args", "-p", f"{name}:={value}"], shown))
    return cases


def extra_cases(tmp_path):
    """Files and options: missing or malformed files, an unknown option."""
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("a: [\n")
    missing = str(tmp_path / "missing.yaml")
    cases = []
    for exe in MODULES:
        cases += [
            (exe, "--params-file", [exe, "--ros-args", "--params-file", missing], "missing.yaml"),
            (exe, "--params-file", [exe, "--ros-args", "--params-file", str(bad_yaml)],
             "bad.yaml"),
            (exe, "option", [exe, "--no-such-option"], "--no-such-option"),
        ]
    cases += [
        ("hardware_node", "robot_description_file",
         ["hardware_node", "--ros-args", "-p", f"robot_description_file:={missing}"],
         "missing.yaml"),
        ("hardware_node", "robot_description_file",
         ["hardware_node", "--ros-args", "-p", f"robot_description_file:={bad_yaml}"],
         "bad.yaml"),
        ("rci_gateway", "users_file",
         ["rci_gateway", "--ros-args", "-p", f"users_file:={missing}"], "missing.yaml"),
        ("brak_bringup", "--config", ["brak_bringup", "--config", missing], "missing.yaml"),
        ("brak_bringup", "speed_of_sound",
         ["brak_bringup", "--ros-args", "-p", "speed_of_sound:=-1.0"], "-1.0"),
    ]
    return cases


def run_driver(cases):
    """Run every case's main() in one process: {case index: (exit code, lines)}."""
    # a node's main() takes the whole argv (rclpy's form); brak_bringup's, its arguments
    payload = [[MODULES[exe], argv[1:] if exe == "brak_bringup" else argv]
               for exe, _, argv, _ in cases]
    env = dict(os.environ, RCUTILS_COLORIZED_OUTPUT="0")
    out = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(payload)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=280)
    results, lines = {}, []
    for line in out.stdout.splitlines():
        if line.startswith(MARK):
            _, i, code = line.split()
            results[int(i)] = (None if code == "None" else int(code), lines)
            lines = []
        elif line.strip():
            lines.append(line)
    return results, f"{out.stdout}\n(the driver's exit code: {out.returncode})"


def test_every_wrong_parameter_is_one_line_and_exit_2(tmp_path):
    cases = generated_cases() + extra_cases(tmp_path)
    assert len(cases) > 100, len(cases)
    results, raw = run_driver(cases)
    failures = []
    for i, (exe, name, argv, shown) in enumerate(cases):
        if i not in results:
            failures.append(f"{exe} {argv[1:]}: no result (the node started, or the driver "
                            f"died); output tail:\n{raw[-4000:]}")
            break
        code, lines = results[i]
        text = " ".join(lines)
        if code != 2 or len(lines) != 1 or "Traceback" in text:
            failures.append(f"{exe} {argv[1:]}: exit {code}, {len(lines)} lines: {lines[:4]}")
        elif name.startswith("-") and shown not in text:
            failures.append(f"{exe} {argv[1:]}: the line does not name {shown!r}: {text}")
        elif not name.startswith("-") and not (name in text and shown in text):
            failures.append(f"{exe} {argv[1:]}: the line does not name {name} and "
                            f"{shown!r}: {text}")
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} of {len(cases)})"


def test_wrong_values_cover_every_declared_parameter():
    """Generated from the records: a new parameter gets its cases without a test edit."""
    names = {(exe, name) for exe, name, _, _ in generated_cases()}
    for exe in ("hardware_node", "rci_gateway", "rdi_gateway"):
        assert {(exe, n) for n in record(exe).specs()} <= names


@pytest.mark.parametrize("argv", [
    ["hardware_node", "--ros-args", "-p", "bus_backend:=nonsense"],
    ["rci_gateway", "--ros-args", "-p", "port:=70000"],
    ["rdi_gateway", "--ros-args", "-p", "byteorder:=middle"],
    ["brak_bringup", "--no-such-option"],
    ["brak_drive", "fast", "0"],
    ["brak_record", "--no-such-option"],
    ["rdi_viewer", "--no-such-option"],
])
def test_the_executables_themselves_print_one_line_and_exit_2(argv):
    """What a user sees: the console scripts, not the driver."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=60, env=dict(os.environ, RCUTILS_COLORIZED_OUTPUT="0"))
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    assert out.returncode == 2, out.stdout
    assert len(lines) == 1 and "Traceback" not in out.stdout, out.stdout
