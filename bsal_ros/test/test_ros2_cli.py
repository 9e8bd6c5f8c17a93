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

"""Every `ros2 ...` command README.md shows, run word for word.

The commands are parsed out of the README's code blocks, so the README and
this test cannot drift: a new `ros2` command in the README without an
expectation here fails `test_every_readme_command_has_an_expectation`.

- `ros2 launch ...` commands run with free ports and
  `robot_state_publisher:=false` appended (a later argument wins in
  `ros2 launch`; robot_state_publisher is C++ and not installable here), and
  with stand-ins for rviz2 / diagnostic_aggregator (test_ros2_launch.py).
- The other commands run against one graph, started by the README's plain
  `ros2 launch bsal_ros brak.launch.py` (module-scoped); commands that run
  until Ctrl-C (`topic hz`, `topic pub -r`) get SIGINT once they have shown
  what they are for. The last test Ctrl-Cs that graph: every node ends cleanly.

Needs ../shared/ros2-tools (see test_ros2_launch.py); skips without it.
"""
import contextlib
import os
from pathlib import Path
import re
import shlex
import signal
import subprocess
import time
import warnings

import pytest

from test_ros2_launch import (check_clean_shutdown, Launch, launch, port_args, read_records, READY,
                              REPO, require_ros2_tools, stand_in_env, write_config)

# untraced: it runs no line of bsal_ros that another module does not (scripts/coverage_unique.py)
pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(240),
              pytest.mark.untraced]

README = REPO / "README.md"
COMMAND_S = 60.0
#: one attempt of a command that runs to its end. `ros2 param list` waits
#: without a timeout for the parameter service's answer (ros2param's
#: call_list_parameters spins until the future completes); when Fast DDS drops
#: the answer because the server had not yet matched the brand-new client's
#: reply reader (rmw_fastrtps waits 100 ms for that match, then "client will
#: not receive response"), that attempt never ends. A user runs it again; so
#: does this test, and a failure names what the hardware node logged about it.
ATTEMPT_S = 20.0
HOMED = r"auto-home done"
#: the session of every command run (each starts one); the ros2 daemon that
#: the first graph query spawns stays in that command's session
SESSIONS: set[int] = set()


def readme_commands():
    """Every `ros2 ...` command line of the README's code blocks (continuations
    joined, comments dropped), in order, each once."""
    text = README.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "ros2":
                command = shlex.join(words)
                if command not in out:
                    out.append(command)
    return out


# ---- what each README command must show ---------------------------------------
# key: the start of the command; the longest matching key applies.
# ("run", regexes): runs to its end, exit 0, stdout matches every regex
# ("until", regexes): runs until stdout matches every regex, then SIGINT
# ("launch", regexes): a launch command, its log matches every regex
CLI = {
    "ros2 node list": ("run", [r"^/hardware_node$", r"^/rci_gateway$", r"^/rdi_gateway$"]),
    "ros2 service call /list_devices": ("run", [r"17 devices", r"device_class='ultrasonic'"]),
    "ros2 service call /set_motors": ("run", [r"code=0", r"dc_motor"]),
    "ros2 action send_goal --feedback /home_steering": (
        "run", [r"Feedback:", r"Goal finished with status: SUCCEEDED"]),
    "ros2 param list /hardware_node": ("run", [r"^\s+bus_backend$", r"^\s+frame_prefix$"]),
    "ros2 param get /hardware_node bus_backend": ("run", [r"String value is: sim"]),
    "ros2 topic echo --once --qos-profile sensor_data /sonar_03": (
        "run", [r"frame_id: sonar_03_link", r"max_range: 5\.0"]),
    "ros2 topic hz /odom": ("until", [r"average rate: \d+\.\d+"]),
    "ros2 topic pub -r 10 /cmd_vel": ("until", [r"publishing #3:"]),
}
LAUNCH = {
    "ros2 launch bsal_ros brak.launch.py": ("launch", READY),
    "ros2 launch bsal_ros brak.launch.py bus_backend:=smbus2 i2c_bus:=1": (
        "launch", [r"/dev/i2c-1"]),
    "ros2 launch bsal_ros brak.launch.py config:=real.yaml": ("launch", [r"/dev/i2c-1"]),
    "ros2 launch bsal_ros brak.launch.py rviz:=true diagnostics_aggregator:=true": (
        "launch", READY),
    "ros2 launch bsal_ros brak.launch.py namespace:=brak2 "
    "rci_port:=7660 rdi_realtime_port:=7661 rdi_ca_port:=7662 foxglove_port:=8775 "
    "page_port:=8776": (
        "launch", [r"\[brak2\.hardware_node\]: hardware node: backend sim",
                   r"\[brak2\.rci_gateway\]: RCI gateway ready"]),
}


def expectation(command):
    table = LAUNCH if command.startswith("ros2 launch ") else CLI
    if command.startswith("ros2 launch "):
        return table.get(command)
    keys = [k for k in table if command == k or command.startswith(k + " ")]
    return table[max(keys, key=len)] if keys else None


def test_every_readme_command_has_an_expectation():
    commands = readme_commands()
    assert len(commands) >= 10, commands
    missing = [c for c in commands if expectation(c) is None]
    assert not missing, f"README commands this test does not know: {missing}"
    # and no expectation for a command the README no longer shows
    shown = set(commands)
    for key in LAUNCH:
        assert key in shown, f"{key} is no longer in README.md"
    for key in CLI:
        assert any(c == key or c.startswith(key + " ") for c in shown), \
            f"{key} is no longer in README.md"


def cli_commands():
    return [c for c in readme_commands() if not c.startswith("ros2 launch ")]


def launch_commands():
    return [c for c in readme_commands() if c.startswith("ros2 launch ")]


def run_cli(command, kind, patterns, out_path, graph_log=None):
    """Run one README command; returns its output. Graph queries are retried
    until they match (discovery is eventually consistent), an attempt that
    hangs after ATTEMPT_S included."""
    deadline = time.monotonic() + COMMAND_S
    attempts = []

    def matches(text):
        return all(re.search(p, text, flags=re.M) for p in patterns)

    while True:
        with open(out_path, "w", encoding="utf-8") as sink:
            proc = subprocess.Popen(shlex.split(command), stdout=sink, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        SESSIONS.add(proc.pid)
        try:
            if kind == "run":
                try:
                    proc.wait(timeout=min(ATTEMPT_S, max(1.0, deadline - time.monotonic())))
                except subprocess.TimeoutExpired:
                    pass
                out = out_path.read_text(encoding="utf-8", errors="replace")
                ok = proc.returncode == 0 and matches(out)
                attempts.append("ok" if ok else
                                "hung" if proc.returncode is None else f"exit {proc.returncode}")
            else:  # until: wait for the output, then Ctrl-C
                while (not matches(out_path.read_text(encoding="utf-8", errors="replace"))
                       and proc.poll() is None and time.monotonic() < deadline):
                    time.sleep(0.2)
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
                out = out_path.read_text(encoding="utf-8", errors="replace")
                ok = matches(out)
        finally:
            # the command alone, not its process group: the ros2 daemon that
            # the first command spawned is in that group (ros2cli does not
            # detach it on Linux) and must live on, as for a user. Killed with
            # the group after every command, each later graph query spawned a
            # new one and fell back to a direct node's 0.5 s of discovery:
            # `ros2 node list` printed nothing 17 times in a row under load
            # (2026-11-28). The graph fixture stops the daemon.
            proc.kill()
            proc.wait(timeout=10)
        assert "Traceback" not in out, f"{command}:\n{out}"
        if ok or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    assert ok, (f"{command} (attempts: {', '.join(attempts) or 'one'}) did not show {patterns}:"
                f"\n{out[-3000:]}{answers_lost(graph_log)}")
    return out


def answers_lost(graph_log):
    """What the graph's nodes logged about service answers they could not send."""
    if graph_log is None:
        return ""
    lines = [line for line in graph_log.text().splitlines()
             if re.search(r"send response|will not receive|RuntimeWarning", line)]
    return "\ngraph log on unsent answers:\n" + ("\n".join(lines[-10:]) or "(nothing)")


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    """The README's `ros2 launch bsal_ros brak.launch.py` (free ports appended)."""
    ros2 = require_ros2_tools()
    command = "ros2 launch bsal_ros brak.launch.py"
    assert command in launch_commands()
    log = tmp_path_factory.mktemp("graph") / "launch.log"
    run = Launch([ros2, *shlex.split(command)[1:], *port_args(), "robot_state_publisher:=false"],
                 log)
    try:
        run.wait_for(*READY, HOMED)
        yield run
    finally:
        if run.returncode is None:
            run.kill()
        # a command like `ros2 node list` starts the ros2 daemon of this domain
        stop_daemon(ros2)


def stop_daemon(ros2):
    """`ros2 daemon stop`; a daemon that has not stopped 30 s later is killed by
    PID. The daemon destroys its node before it closes its socket, and
    ros2cli's stop then waits for it without a timeout: in cc62 that
    destruction deadlocked inside Fast DDS (docs/DEVELOPING.md, "The ros2
    daemon that did not stop")."""
    try:
        subprocess.run([ros2, "daemon", "stop"], capture_output=True, timeout=30)
        return
    except subprocess.TimeoutExpired:
        pass
    daemons = started_daemons()
    for pid in daemons:
        with contextlib.suppress(ProcessLookupError):   # ended meanwhile
            os.kill(pid, signal.SIGKILL)
    warnings.warn(f"ros2 daemon stop: no end in 30 s; the daemon killed (PID {daemons})")


def started_daemons():
    """PIDs of the ros2 daemons in the sessions of the commands run here."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            pid = int(entry.name)
            if (os.getsid(pid) in SESSIONS
                    and b"ros2cli.daemon" in (entry / "cmdline").read_bytes()):
                found.append(pid)
        except OSError:     # gone meanwhile
            continue
    return found


@pytest.mark.parametrize("command", cli_commands() or ["(no ros2 command in README.md)"])
def test_readme_command_against_the_launched_graph(graph, command, tmp_path):
    expected = expectation(command)
    assert expected is not None, command
    kind, patterns = expected
    run_cli(command, kind, patterns, tmp_path / "out.txt", graph_log=graph)


def test_ctrl_c_ends_every_node_of_the_graph(graph):
    rc = graph.stop()
    check_clean_shutdown(graph, rc)


@pytest.mark.parametrize("command", [c for c in launch_commands()
                                     if c != "ros2 launch bsal_ros brak.launch.py"])
def test_readme_launch_command(command, tmp_path, request):
    ros2 = require_ros2_tools()
    kind, patterns = expectation(command)
    env, records = stand_in_env(request.getfixturevalue("stand_in_prefix"), tmp_path / "rec")
    if "config:=real.yaml" in command:
        # what the README says to do first: a copy of config/brak.yaml, edited
        write_config(tmp_path / "real.yaml", {"bus_backend": "smbus2", "i2c_bus": 1})
    words = shlex.split(command)
    run = launch(ros2, [*words[4:], *port_args(), "robot_state_publisher:=false"],
                 tmp_path / "launch.log", env=env, cwd=tmp_path)
    try:
        text = run.wait_for(*patterns)
        if "smbus2" in command or "real.yaml" in command:
            assert "backend sim" not in text
        if "rviz:=true" in command:
            assert read_records(records, "rviz2") and read_records(records, "diagnostic_aggregator")
    finally:
        rc = run.stop()
    if "smbus2" not in command and "real.yaml" not in command:
        check_clean_shutdown(run, rc)


# the stand-ins' scratch prefix, shared with test_ros2_launch.py
from test_ros2_launch import stand_in_prefix  # noqa: E402,F401
