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
"""The bridge deployed on the two hosts, in one of two placements, with a
probe agent on each side (used by test/test_two_hosts.py and
bench/bench_two_hosts.py).

* ``robot``: the whole bridge on the robot (``brak_bringup --rci-host
  10.77.0.1 --rdi-host 10.77.0.1``), the lab reaches RCI/RDI over TCP;
* ``split``: ``hardware_node`` on the robot, ``rci_gateway`` and
  ``rdi_gateway`` in the lab (bound to 10.77.0.2): DDS carries the control path.

``dds_profile`` (default True): the bridge's processes run with the
shipped Fast DDS profile (config/fastdds_robot.xml), as ``brak_bringup`` and
``brak.launch.py`` give it; False: Fast DDS's defaults (``--no-dds-profile``).
The probe agents never get it (they stand for the lab's own tools).

The users file is written here: an operator ``lab`` with a random key (never
the public demo key) and ``guest``, mode 600.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import secrets
import shutil
import sys
import threading

from bsal_ros.dds_profile import profile_env, PROFILES_VAR
from child_process import Child

from .netns import TwoHosts

#: test/, the folder of the helper packages: the probe agents and peers run there
#: (``python -m two_hosts.agent``)
TEST = Path(__file__).resolve().parents[1]
REPO = TEST.parents[1]
CONFIG = REPO / "bsal_ros" / "config"
RCI_PORT, RDI_RT_PORT, RDI_CA_PORT = 7650, 7651, 7652


def users_file(folder: Path) -> tuple[Path, str, str]:
    """(path, user, key hex) of a fresh users file with a random operator key."""
    key = secrets.token_hex(16)
    path = folder / "users.yaml"
    path.write_text("users:\n  - name: guest\n    role: guest\n"
                    '    key: "00000000000000000000000000000000"\n'
                    f'  - name: lab\n    role: operator\n    key: "{key}"\n')
    os.chmod(path, 0o600)
    return path, "lab", key


def _exe(name: str) -> str:
    found = shutil.which(name) or str(Path(sys.executable).parent / name)
    return found


class Agent:
    """A probe agent (two_hosts.agent) in one namespace."""

    def __init__(self, hosts: TwoHosts, side: str, logdir: Path, env: dict, tf: bool = True,
                 rr: int = 0):
        argv = realtime(rr, [sys.executable, "-m", "two_hosts.agent"] + ([] if tf else ["--no-tf"]))
        self.child = Child(f"agent_{side}", hosts.wrap(side, argv), logdir, TEST,
                           hosts.ros_env(side, env), pipes=True)
        self._lock = threading.Lock()
        first = self.child.popen.stdout.readline()
        if "AGENT READY" not in first:
            raise RuntimeError(f"agent {side} did not start: {first!r}\n"
                               f"{self.child.text()[-2000:]}")

    def ask(self, op: str, **kw) -> dict:
        """One request; RuntimeError when the agent answers with an error."""
        with self._lock:
            ans = json.loads(self.child.ask(json.dumps({"op": op, **kw})))
        if not ans.pop("ok"):
            raise RuntimeError(f"agent {op}: {ans['error']}")
        return ans

    def stop(self) -> int | None:
        """quit, then SIGTERM by PID if needed."""
        try:
            self.child.popen.stdin.write('{"op": "quit"}\n')
            self.child.popen.stdin.flush()
            self.child.popen.wait(5)
        except Exception:   # noqa: BLE001 - stop() below ends it anyway
            pass
        return self.child.stop()


def niced(nice: int, argv: list[str]) -> list[str]:
    """``argv`` at nice value ``nice`` (0: as it is). Below 0 needs root, as
    the namespaces do; without it nice(1) says so and runs ``argv`` as it is."""
    return ["nice", "-n", str(nice)] + argv if nice else argv


def realtime(rr: int, argv: list[str]) -> list[str]:
    """``argv`` under SCHED_RR at priority ``rr`` (0: as it is): each of its
    threads runs as soon as it wakes, ahead of every process of the normal
    policy; the kernel still keeps 5 % of each second for those. Needs root,
    as the namespaces do."""
    return ["chrt", "--rr", str(rr)] + argv if rr else argv


class Deployment:
    """The bridge in ``placement`` on ``hosts``, plus a probe agent on each side.

    ``rr``: the bridge's processes and the agents run under SCHED_RR at that
    priority (a test that times the bridge gives it and the control
    application the CPU before anything else on the machine: what it
    measures is the bridge)."""

    def __init__(self, hosts: TwoHosts, placement: str, logdir: Path, env: dict,
                 gateway_args: tuple[str, ...] = (), dds_profile: bool = True, rr: int = 0):
        self.hosts, self.placement, self.dds_profile = hosts, placement, dds_profile
        self.rr = rr
        env = {k: v for k, v in env.items() if k != PROFILES_VAR}
        self._bridge_env = dict(env, **profile_env(env, dds_profile))
        self.users, self.user, self.key = users_file(logdir)
        self.procs: list[Child] = []
        self.agents: dict[str, Agent] = {}
        gw_side = "robot" if placement == "robot" else "lab"
        self.gw_host = hosts.addr[gw_side]
        rci_params = ["-p", f"users_file:={self.users}"] + list(gateway_args)
        try:
            if placement == "robot":
                self._start("bringup", "robot", env, [
                    _exe("brak_bringup"), "--rci-host", self.gw_host, "--rdi-host", self.gw_host]
                    + ([] if dds_profile else ["--no-dds-profile"]) + ["--ros-args"] + rci_params)
            else:
                self._start("hardware_node", "robot", env, [
                    _exe("hardware_node"), "--ros-args", "--params-file",
                    str(CONFIG / "brak.yaml")])
                gw = ["--ros-args", "--params-file", str(CONFIG / "gateways.yaml"),
                      "-p", f"host:={self.gw_host}"]
                self._start("rci_gateway", "lab", env, [_exe("rci_gateway")] + gw + rci_params)
                self._start("rdi_gateway", "lab", env, [_exe("rdi_gateway")] + gw)
            self.agents["robot"] = Agent(hosts, "robot", logdir, env, tf=False, rr=rr)
            self.agents["lab"] = Agent(hosts, "lab", logdir, env, tf=True, rr=rr)
        except BaseException:
            self.stop()
            raise

    def _start(self, name: str, side: str, env: dict, argv: list[str]) -> None:
        """A bridge process: brak_bringup adds the profile itself, the single
        nodes get it here (the split placement starts them without launch)."""
        env = env if name == "bringup" else self._bridge_env
        self.procs.append(Child(name, self.hosts.wrap(side, realtime(self.rr, argv)),
                                Path(self.users.parent),
                                REPO, self.hosts.ros_env(side, env,
                                                         udp_only=not self.dds_profile)))

    @property
    def lab(self) -> Agent:
        """The lab's agent."""
        return self.agents["lab"]

    @property
    def robot(self) -> Agent:
        """The robot's agent."""
        return self.agents["robot"]

    def login(self, **kw) -> dict:
        """The lab's control application logs in as the test operator."""
        return self.lab.ask("rci_login", host=self.gw_host, port=RCI_PORT, user=self.user,
                            key=self.key, **kw)

    def wait_up(self, timeout: float = 60.0) -> None:
        """Until the gateways listen (their start-up log lines)."""
        ready = {"bringup": r"Brak is up", "hardware_node": r"hardware node: backend",
                 "rci_gateway": r"RCI gateway ready", "rdi_gateway": r"RDI gateway: real-time"}
        for p in self.procs:
            p.wait_log(ready[p.name], timeout)

    def logs(self) -> str:
        """Every process's log tail, for assertion messages."""
        return "\n".join(f"--- {p.name}\n{p.text()[-1500:]}" for p in self.procs)

    def stop(self) -> dict:
        """Stop the agents and the bridge (by PID); exit statuses by name."""
        codes = {}
        for side, a in list(self.agents.items()):
            codes[f"agent_{side}"] = a.stop()
        for p in reversed(self.procs):
            codes[p.name] = p.stop()
        return codes
