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
"""The robot and the lab PC as two network namespaces joined by a veth pair.

    hosts = TwoHosts()                 # unique names: bsal22r<pid>x<n>, bsal22l<pid>x<n>
    hosts.create()                     # NetnsUnavailable(reason) when not allowed
    try:
        env = hosts.ros_env("robot", base_env)   # DDS on 10.77.0.0/24 only
        subprocess.Popen(hosts.wrap("robot", ["brak_bringup", ...]), env=env)
        hosts.impair(loss_pct=2, rate="10mbit")  # both ends, each way
        hosts.cut(); ...; hosts.restore()         # drop everything on the link
    finally:
        hosts.delete()                 # namespaces, veth, nft tables and qdiscs with them

Nothing outside the two namespaces is touched: the veth pair is created
directly inside them, neither has a default route, and the only addresses
are 10.77.0.1 (robot) and 10.77.0.2 (lab). Loss uses nftables
(``numgen random mod 100 < N drop``; this kernel has no netem), rate a tbf
qdisc, a cut an nftables ``drop`` on the veth, each way. Deleting a
namespace deletes its veth end, nft tables and qdiscs.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess

SUBNET = "10.77.0"
ADDRESSES = {"robot": f"{SUBNET}.1", "lab": f"{SUBNET}.2"}
_COUNTER = itertools.count()
_TABLE = "bsal22"


class NetnsUnavailable(RuntimeError):
    """Namespaces cannot be made here (not root, no CAP_NET_ADMIN, no ip/nft/tc)."""


def _run(argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=stdin, text=True, capture_output=True, timeout=20)


def _check(argv: list[str], stdin: str | None = None) -> None:
    r = _run(argv, stdin)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip() or r.returncode}")


def unavailable_reason() -> str:
    """Why two namespaces cannot be made here ("" when they can)."""
    missing = [p for p in ("ip", "nft", "tc") if shutil.which(p) is None]
    if missing:
        return (f"{', '.join(missing)} not installed (apt-get install iproute2 nftables; "
                f"scripts/setup.sh does)")
    if os.geteuid() != 0:
        return "network namespaces need root (CAP_NET_ADMIN)"
    return ""


def sweep_stale() -> list[str]:
    """Delete namespaces this module made in a run that died (SIGKILL: no
    finalizer ran), recognised by their prefix and the dead process id."""
    gone = []
    listing = _run(["ip", "netns", "list"]).stdout.split()
    for name in listing:
        if not name.startswith(("bsal22r", "bsal22l")) or "x" not in name:
            continue
        pid = name[7:].split("x", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}") and int(pid) != os.getpid():
            if _run(["ip", "netns", "del", name]).returncode == 0:
                gone.append(name)
    return gone


class TwoHosts:
    """Two namespaces, ``robot`` (10.77.0.1/24) and ``lab`` (10.77.0.2/24), one veth pair."""

    def __init__(self, tag: str | None = None):
        tag = tag or f"{os.getpid()}x{next(_COUNTER)}"
        self.ns = {"robot": f"bsal22r{tag}", "lab": f"bsal22l{tag}"}
        # interface names: at most 15 characters
        self.dev = {"robot": f"b22r{tag}"[:15], "lab": f"b22l{tag}"[:15]}
        self.addr = dict(ADDRESSES)
        self.created: list[str] = []
        self.impaired = False

    # ------------------------------------------------------------ life cycle
    def create(self) -> "TwoHosts":
        """Make both namespaces and the link; NetnsUnavailable when denied."""
        why = unavailable_reason()
        if why:
            raise NetnsUnavailable(why)
        sweep_stale()
        r = _run(["ip", "netns", "add", self.ns["robot"]])
        if r.returncode != 0:
            raise NetnsUnavailable(f"ip netns add failed: {r.stderr.strip()}")
        self.created.append(self.ns["robot"])
        try:
            _check(["ip", "netns", "add", self.ns["lab"]])
            self.created.append(self.ns["lab"])
            _check(["ip", "link", "add", self.dev["robot"], "netns", self.ns["robot"], "type",
                    "veth", "peer", "name", self.dev["lab"], "netns", self.ns["lab"]])
            for side in ("robot", "lab"):
                ip = ["ip", "-n", self.ns[side]]
                _check(ip + ["addr", "add", f"{self.addr[side]}/24", "dev", self.dev[side]])
                _check(ip + ["link", "set", "lo", "up"])
                _check(ip + ["link", "set", self.dev[side], "up"])
                # DDS's discovery multicast (239.255.0.1) leaves by the veth, not by a
                # default route (there is none)
                _check(ip + ["route", "add", "224.0.0.0/4", "dev", self.dev[side]])
        except Exception:
            self.delete()
            raise
        return self

    def delete(self) -> list[str]:
        """Delete what :meth:`create` made; returns the errors (never raises)."""
        errors = []
        for ns in reversed(self.created):
            r = _run(["ip", "netns", "del", ns])
            if r.returncode != 0:
                errors.append(f"ip netns del {ns}: {r.stderr.strip()}")
        self.created.clear()
        return errors

    def __enter__(self):
        return self.create()

    def __exit__(self, *exc):
        self.delete()

    # ------------------------------------------------------------ processes
    def wrap(self, side: str, argv: list[str]) -> list[str]:
        """``argv`` run inside ``side``'s namespace."""
        return ["ip", "netns", "exec", self.ns[side]] + list(argv)

    def ros_env(self, side: str, base: dict | None = None, udp_only: bool = True) -> dict:
        """Environment of a ROS process in ``side``: DDS discovery on the subnet,
        the other host as a static peer, and (``udp_only``) UDP only: Fast DDS's
        shared-memory transport would join the two "hosts" through /dev/shm,
        past the link. A process given the shipped Fast DDS profile leaves
        ``udp_only`` off: the profile must do that by itself."""
        env = dict(os.environ if base is None else base)
        other = "lab" if side == "robot" else "robot"
        env.update(ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET", ROS_STATIC_PEERS=self.addr[other],
                   BSAL_ALLOW_NETWORK_DISCOVERY="1")
        if udp_only:
            env["FASTDDS_BUILTIN_TRANSPORTS"] = "UDPv4"
        else:
            env.pop("FASTDDS_BUILTIN_TRANSPORTS", None)
        return env

    # ------------------------------------------------------------ the link
    def _nft(self, side: str, script: str) -> None:
        _check(["ip", "netns", "exec", self.ns[side], "nft", "-f", "-"], script)

    def _rule(self, side: str, chain: str, rule: str) -> str:
        dev = self.dev[side]
        return (f"table inet {_TABLE}{chain} {{\n  chain out {{\n"
                f"    type filter hook output priority 0; policy accept;\n"
                f'    oifname "{dev}" {rule}\n  }}\n}}\n')

    def impair(self, loss_pct: int = 0, rate: str | None = None,
               burst: str = "32kbit", latency: str = "50ms") -> None:
        """Random loss (percent, each way) and a rate limit on both ends."""
        for side in ("robot", "lab"):
            if loss_pct:
                self._nft(side, self._rule(side, "loss",
                                           f"numgen random mod 100 < {int(loss_pct)} drop"))
            if rate:
                _check(["ip", "netns", "exec", self.ns[side], "tc", "qdisc", "add", "dev",
                        self.dev[side], "root", "tbf", "rate", rate, "burst", burst,
                        "latency", latency])
        self.impaired = True

    def clear_impairment(self) -> None:
        """Undo :meth:`impair` (loss rules and rate limits)."""
        for side in ("robot", "lab"):
            _run(["ip", "netns", "exec", self.ns[side], "nft", "delete", "table", "inet",
                  f"{_TABLE}loss"])
            _run(["ip", "netns", "exec", self.ns[side], "tc", "qdisc", "del", "dev",
                  self.dev[side], "root"])
        self.impaired = False

    def cut(self) -> None:
        """Drop every packet on the link, each way (a Wi-Fi drop-out)."""
        for side in ("robot", "lab"):
            self._nft(side, self._rule(side, "cut", "drop"))

    def restore(self) -> None:
        """End :meth:`cut`."""
        for side in ("robot", "lab"):
            _run(["ip", "netns", "exec", self.ns[side], "nft", "delete", "table", "inet",
                  f"{_TABLE}cut"])

    def tables(self, side: str) -> str:
        """``nft list ruleset`` of ``side`` (for checks)."""
        return _run(["ip", "netns", "exec", self.ns[side], "nft", "list", "ruleset"]).stdout
