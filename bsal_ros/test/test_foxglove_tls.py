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

"""The Foxglove gateway off loopback: TLS or no start (issue 50, Security).

* Without TLS on a non-loopback address, ``brak_bringup`` and
  ``foxglove_gateway`` are refused with one line and exit 2, before any
  socket is bound: the port they were given is taken, and they still say
  why TLS is needed, not that the port is taken; where ``strace`` is
  installed, the refused process makes no ``bind`` at all.
* With a self-signed certificate made here (``openssl``), the gateway serves
  ``wss://`` on 127.0.0.1 (TLS on loopback is allowed) and the Node client
  (Foxglove's own libraries) connects trusting that certificate; without
  trusting it, or over plain ``ws://``, it cannot.
* The same on 10.77.0.1 in a network namespace made here and joined to a
  second one (the lab) by a veth pair with no route out (test/two_hosts/
  netns.py): the lab connects over ``wss://``, and since the gateway is off
  loopback without ``remote_control`` it offers neither driving nor service
  calls. Skipped with the reason where namespaces cannot be made.
"""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import socket
import subprocess
import sys

import pytest

from foxglove_agent import NodeClient
from test_bringup import Bridge, ROOT
from test_foxglove_client import foxglove_url

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(240)]

REFUSAL = ("foxglove gateway: host {host} is not loopback and tls is false: set tls:=true "
           "with certfile and keyfile (PEM), or bind 127.0.0.1 and reach it over SSH "
           "(docs/SECURITY.md)")
NETNS_ADDRESS = "10.77.0.1"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """(certificate, PKCS#8 key) for 127.0.0.1 and 10.77.0.1, made with the
    ``openssl`` command, or skip with the reason."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test certificate (Debian: openssl)")
    cert, key = folder / "cert.pem", folder / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                           "-keyout", str(key), "-out", str(cert), "-days", "1",
                           "-subj", "/CN=bsal_ros test",
                           "-addext", f"subjectAltName=IP:127.0.0.1,IP:{NETNS_ADDRESS}"],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert key.read_text().startswith("-----BEGIN PRIVATE KEY-----")      # PKCS#8
    return cert, key


def tls_args(cert: Path, key: Path) -> list[str]:
    """brak_bringup's ROS arguments for a gateway with TLS."""
    return ["--ros-args", "-p", "foxglove_gateway:tls:=true",
            "-p", f"foxglove_gateway:certfile:={cert}", "-p", f"foxglove_gateway:keyfile:={key}"]


def refused(argv: list[str], prefix: list[str] = ()) -> subprocess.CompletedProcess:
    """Run a start that must be refused; its result (stdout and stderr together)."""
    return subprocess.run([*prefix, sys.executable, "-m", *argv], cwd=ROOT, env=os.environ.copy(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=60)


STARTS = {
    "brak_bringup": ["bsal_ros.nodes.bringup", "--rci-port", "0", "--rdi-realtime-port", "0",
                     "--rdi-ca-port", "0", "--foxglove-host", "0.0.0.0", "--foxglove-port",
                     "{port}", "--duration", "30"],
    "foxglove_gateway": ["bsal_ros.nodes.foxglove_gateway", "--ros-args", "-p",
                         "host:=0.0.0.0", "-p", "port:={port}"],
}


@pytest.mark.parametrize("program", sorted(STARTS))
def test_a_start_off_loopback_without_tls_is_refused_with_one_line_before_binding(program):
    # the port is taken on loopback (bound, not listening: nothing can connect to
    # it), which a bind of 0.0.0.0 on it conflicts with: a start that tried to bind
    # would say so instead
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        result = refused([a.format(port=port) for a in STARTS[program]])
    assert result.returncode == 2, result.stdout
    lines = result.stdout.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].endswith(REFUSAL.format(host="0.0.0.0")), lines


@pytest.mark.parametrize("program", sorted(STARTS))
def test_a_refused_start_binds_no_socket(program, tmp_path):
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed: the refused start's system calls are not "
                    "traced (the taken-port test above still holds)")
    trace = tmp_path / "strace.txt"
    result = refused([a.format(port=0) for a in STARTS[program]],
                     prefix=["strace", "-f", "-qq", "-e", "trace=bind,listen", "-o", str(trace)])
    assert result.returncode == 2, result.stdout
    calls = trace.read_text().splitlines()
    assert not [c for c in calls if "AF_INET" in c or "listen(" in c], calls


def test_with_a_certificate_the_node_client_connects_over_wss_on_loopback(tmp_path):
    cert, key = self_signed(tmp_path)
    bridge = Bridge(*tls_args(cert, key))
    try:
        url = foxglove_url(bridge)
        assert url.startswith("wss://127.0.0.1:"), url
        with NodeClient("trusting") as fg:
            info = fg.connect(url, ca=str(cert))
            assert {"clientPublish", "services"} <= set(info["capabilities"])   # loopback
            fg.send("subscribe", topics=["/odom"])
            odom = fg.wait("message", lambda e: e["topic"] == "/odom")["value"]
            assert odom["header"]["frame_id"] == "odom"
        with NodeClient("not trusting") as fg:
            fg.send("connect", url=url)
            assert "self-signed certificate" in fg.wait("error")["message"]
            assert not fg.select("serverInfo")
        with NodeClient("plain ws") as fg:
            fg.send("connect", url=url.replace("wss://", "ws://"))
            fg.wait("close")
            assert not fg.select("serverInfo")
    finally:
        assert bridge.stop() == 0, bridge.recent()


class NetnsBridge(Bridge):
    """brak_bringup inside the robot's network namespace (``prefix``), with ``env``."""

    def __init__(self, prefix: list[str], env: dict, *extra):
        cmd = [*prefix, sys.executable, "-m", "bsal_ros.nodes.bringup", "--rci-port", "0",
               "--rdi-realtime-port", "0", "--rdi-ca-port", "0", "--foxglove-port", "0",
               "--page-port", "0", "--duration", "120", *extra]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env)
        self.lines = []
        self._partial = b""
        self._complete: list[str] = []
        from test_bringup import UP
        self.ports = self.wait_for(UP, timeout=60).groups()


def test_off_loopback_in_a_network_namespace_the_lab_connects_over_wss(tmp_path):
    from two_hosts import netns
    cert, key = self_signed(tmp_path)
    hosts = netns.TwoHosts()
    try:
        hosts.create()
    except netns.NetnsUnavailable as exc:
        pytest.skip(f"no network namespaces here: {exc}")
    bridge = None
    try:
        bridge = NetnsBridge(hosts.wrap("robot", []), hosts.ros_env("robot"),
                             "--foxglove-host", NETNS_ADDRESS, *tls_args(cert, key))
        url = foxglove_url(bridge)
        assert url.startswith(f"wss://{NETNS_ADDRESS}:"), url
        assert any("driving and service calls are off" in ln for ln in bridge.lines), \
            bridge.recent()
        with NodeClient("lab", prefix=hosts.wrap("lab", [])) as fg:
            info = fg.connect(url, ca=str(cert))
            # off loopback without remote_control: it watches, it does not drive
            assert not {"clientPublish", "services"} & set(info["capabilities"]), info
            fg.send("subscribe", topics=["/odom"])
            assert fg.wait("message", lambda e: e["topic"] == "/odom")["value"]["header"][
                "frame_id"] == "odom"
    finally:
        code = bridge.stop() if bridge is not None else 0
        errors = hosts.delete()
    assert not errors, errors
    assert code == 0, bridge.recent()
