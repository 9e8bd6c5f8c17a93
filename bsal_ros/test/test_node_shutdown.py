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

"""Every executable stops cleanly on SIGINT and SIGTERM at any phase.

Each node (and the one-process bring-up) runs as its own process and gets one
signal at a random moment of one phase: just after its signal handlers are
installed (rclpy.init, node construction), as soon as it logs its first line
(construction, the gateways' asyncio threads starting), once it is up (the
hardware node then is in its start-up auto-home), and twice in a row (the
second one while the first stop is closing the gateways' threads). Each must
exit with code 0, print no traceback or asyncio complaint, and exit within
the runtime's bound. Another test connects an RCI client to a separate
gateway, sets a motor and stops the gateway: the safety stop is answered.

The moments are random (seed in every failure message; set
BSAL_SHUTDOWN_SEED to replay). BSAL_SHUTDOWN_ROUNDS=N runs every phase N
times (default 1, about a minute for the file on 2 cores); the soak loop in
docs uses more.
"""
import os
from pathlib import Path
import random
import re
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from bsal_ros.nodes.runtime import SHUTDOWN_BOUND_S
from first_answer import action_ready, spinning

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
SEED = int(os.environ.get("BSAL_SHUTDOWN_SEED") or random.SystemRandom().randrange(1 << 30))
ROUNDS = max(1, int(os.environ.get("BSAL_SHUTDOWN_ROUNDS", "1")))
#: a signal that lands during start-up lets the node being built finish first
STARTUP_ALLOWANCE_S = 10.0
#: what a clean stop never prints (a slow one may say how long each phase took)
UNCLEAN = re.compile(r"Traceback|never retrieved|Exception ignored|Task was destroyed|"
                     r"\[runtime\](?! [\w.-]+: the stop took )|KeyboardInterrupt|RCLError")


def command(node, ns):
    if node == "brak_bringup":
        return ["-m", "bsal_ros.nodes.bringup", "--namespace", ns, "--rci-port", "0",
                "--rdi-realtime-port", "0", "--rdi-ca-port", "0", "--foxglove-port", "0",
                "--page-port", "0"]
    extra = {"hardware_node": [],
             "rci_gateway": ["-p", "port:=0"],
             "rdi_gateway": ["-p", "realtime_port:=0", "-p", "ca_port:=0"],
             "foxglove_gateway": ["-p", "port:=0", "-p", "page_port:=0"],
             "markers": []}[node]
    return ["-m", f"bsal_ros.nodes.{node}", "--ros-args", "-r", f"__ns:=/{ns}", *extra]


#: the line each executable logs once it is up
READY = {
    "hardware_node": r"auto-home: pservo_motor_00: homing started",   # up, and homing
    "rci_gateway": r"RCI gateway ready on",
    "rdi_gateway": r"RDI gateway: real-time stream",
    "foxglove_gateway": r"Foxglove gateway: ws://",
    "markers": r"brak_markers: sonar_cones",
    "brak_bringup": r"Brak is up",
}


class Proc:
    """One executable with its output in a file (no pipe to keep drained)."""

    def __init__(self, node, tmp_path, *args):
        self.node = node
        self.ns = f"sd_{node}_{uuid.uuid4().hex[:8]}"
        self.path = tmp_path / f"{self.ns}.log"
        self.out = open(self.path, "w")
        self.proc = subprocess.Popen([sys.executable, *(args or command(node, self.ns))],
                                     cwd=ROOT, stdout=self.out, stderr=subprocess.STDOUT)
        self.started = time.monotonic()

    def text(self):
        return self.path.read_text(errors="replace")

    def wait_for(self, pattern, timeout=60.0):
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.text()):
            assert self.proc.poll() is None, f"{self.node} exited early:\n{self.text()}"
            assert time.monotonic() < deadline, f"{pattern!r} not logged:\n{self.text()}"
            time.sleep(0.02)

    def wait_for_handlers(self, timeout=60.0):
        """Until the runtime's SIGTERM handler is installed (SigCgt in /proc):
        before it a signal has its default effect, by design (the module
        docstring of bsal_ros.nodes.runtime says so)."""
        bit = 1 << (signal.SIGTERM - 1)
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, f"{self.node} exited early:\n{self.text()}"
            try:
                status = Path(f"/proc/{self.proc.pid}/status").read_text()
            except OSError:
                status = ""
            m = re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.M)
            if m and int(m.group(1), 16) & bit:
                return
            assert time.monotonic() < deadline, "signal handlers never installed"
            time.sleep(0.005)

    def signal_and_wait(self, sig, second=None, gap=0.0, timeout=30.0):
        """Send ``sig`` (and ``second`` ``gap`` s later); returns (exit code, seconds to exit)."""
        t0 = time.monotonic()
        self.proc.send_signal(sig)
        if second is not None:
            time.sleep(gap)
            if self.proc.poll() is None:
                self.proc.send_signal(second)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = None
        return rc, time.monotonic() - t0

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()


PHASES = ("handlers", "first_line", "up", "twice")


def one_run(node, sig, phase, delay, tmp_path, results):
    try:
        _one_run(node, sig, phase, delay, tmp_path, results)
    except AssertionError as exc:      # reported by check(), with the others
        results.append((node, sig.name, phase, round(delay, 3), "not signalled", 0.0, True,
                        str(exc)))


def _one_run(node, sig, phase, delay, tmp_path, results):
    p = Proc(node, tmp_path)
    other = signal.SIGINT if sig == signal.SIGTERM else signal.SIGTERM
    second = gap = None
    try:
        if phase == "handlers":
            p.wait_for_handlers()
            during_startup = True
        elif phase == "first_line":
            p.wait_for(r"\[INFO\]")
            during_startup = True
        else:
            p.wait_for(READY[node])
            during_startup = False
            if phase == "twice":
                second, gap = other, delay / 3.0
        time.sleep(delay)
        if not during_startup:
            # the bringup and gateway "up" lines come last: nothing is starting any more
            assert re.search(READY[node], p.text())
        rc, took = p.signal_and_wait(sig, second, gap or 0.0)
    finally:
        p.kill()
    results.append((node, sig.name, phase, round(delay, 3), rc, round(took, 2),
                    during_startup, p.text()))


def check(results):
    # shown with `pytest -rP`: how long the stops took (the bound's margin)
    for node, sig, phase, delay, rc, took, _, _ in sorted(results, key=lambda r: -r[5])[:3]:
        print(f"{node} {sig} {phase}+{delay} s: exit {rc} after {took} s")
    bad = []
    for node, sig, phase, delay, rc, took, during_startup, log in results:
        limit = SHUTDOWN_BOUND_S + (STARTUP_ALLOWANCE_S if during_startup else 0.0)
        unclean = UNCLEAN.search(log)
        if rc != 0 or unclean or took >= limit:
            bad.append(f"--- {node} {sig} at {phase}+{delay} s: exit {rc} after {took} s "
                       f"(limit {limit} s){', ' + unclean.group(0) if unclean else ''}\n{log}")
    assert not bad, f"seed {SEED}\n" + "\n".join(bad)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("node", sorted(READY))
def test_signal_at_every_phase_exits_cleanly(node, sig, tmp_path):
    """The phases of one node run side by side (a loaded machine is part of the test)."""
    rng = random.Random(f"{SEED}-{node}-{sig.name}")
    results = []
    for _ in range(ROUNDS):
        threads = []
        for phase in PHASES:
            delay = rng.uniform(0.0, {"handlers": 0.4, "first_line": 0.2}.get(phase, 1.2))
            t = threading.Thread(target=one_run,
                                 args=(node, sig, phase, delay, tmp_path, results))
            t.start()
            threads.append(t)
        for t in threads:
            t.join(180)
    assert len(results) == ROUNDS * len(PHASES), f"seed {SEED}: a run did not finish"
    check(results)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_gateway_stopped_with_a_driving_client_answers_its_safety_stop(sig, tmp_path):
    """A separate RCI gateway process with a client that set a motor: the
    session's safety stop is a service call to the hardware node (another
    process); it is answered before the gateway exits (no "safety stop" warning)."""
    from bsal_ros.protocol import (CAcMt, CCnAc, CStMt, MotorCommand, MotorCommandKind, MotorType,
                                   RciCode, speedval_pack)
    from bsal_ros.rci.client import RciClient
    from bsal_ros.rci.users import DEMO_KEY
    hw = Proc("hardware_node", tmp_path)
    ns = hw.ns
    gw = Proc("rci_gateway", tmp_path, *command("rci_gateway", ns))
    client = None
    try:
        hw.wait_for(READY["hardware_node"])
        gw.wait_for(r"device list received")
        gw.wait_for(READY["rci_gateway"])     # logged after the line above, or before it
        port = int(re.search(r"RCI gateway ready on 127\.0\.0\.1:(\d+)", gw.text()).group(1))
        client = RciClient("127.0.0.1", port, timeout=10)
        client.handshake("demo", DEMO_KEY)
        assert client.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)
        thirty = MotorCommand(MotorCommandKind.SPVAL, speedval_pack(True, 30.0))
        assert client.request(CStMt.one(MotorType.DC, 0, thirty, rq_ack=True)) \
            == CCnAc(RciCode.CStMt)
        time.sleep(random.Random(f"{SEED}-client-{sig.name}").uniform(0.0, 0.5))
        rc, took = gw.signal_and_wait(sig)
        log = gw.text()
        assert rc == 0 and took < SHUTDOWN_BOUND_S, (
            f"seed {SEED}: exit {rc} after {took:.2f} s\n{log}")
        assert "session ends" in log, log
        assert "safety stop" not in log, log        # answered, not refused or lost
        assert not UNCLEAN.search(log), log
        # the hardware node, its motor just stopped by the gateway, stops cleanly too
        rc, took = hw.signal_and_wait(sig)
        log = hw.text()
        assert rc == 0 and took < SHUTDOWN_BOUND_S, (
            f"seed {SEED}: exit {rc} after {took:.2f} s\n{log}")
        assert not UNCLEAN.search(log), log
    finally:
        if client is not None:
            client.close()
        gw.kill()
        hw.kill()


def test_hardware_node_stopped_during_a_homing_goal(tmp_path):
    """A home_steering goal is running when the signal comes: it is aborted
    and answered before the node is destroyed (a goal left pending had its
    coroutine closed after the action server was gone: a traceback)."""
    from bsal_interfaces.action import HomeSteering
    import rclpy
    from rclpy.action import ActionClient
    import rclpy.context
    from rclpy.executors import SingleThreadedExecutor
    rng = random.Random(f"{SEED}-homing")
    sig = rng.choice([signal.SIGINT, signal.SIGTERM])
    ns = f"sd_homing_{uuid.uuid4().hex[:8]}"
    # the action server's debug lines say, on a failure, whether the result
    # request was taken ("Result request received") before the stop
    p = Proc("hardware_node", tmp_path, *command("hardware_node", ns), "-p", "auto_home:=false",
             "--log-level", f"{ns}.hardware_node.action_server:=debug")
    p.ns = ns

    class Homing:
        """A client of its own: context (a DDS participant), node, executor."""

        def __init__(self):
            self.context = rclpy.context.Context()
            rclpy.init(context=self.context)
            self.node = rclpy.create_node("homing_client", namespace=ns, context=self.context)
            self.executor = SingleThreadedExecutor(context=self.context)
            self.executor.add_node(self.node)
            self.client = ActionClient(self.node, HomeSteering, "home_steering")

        def close(self):
            self.executor.shutdown()
            self.node.destroy_node()
            rclpy.shutdown(context=self.context)

    homing = None
    try:
        # a probe goal for a motor that does not exist (refused at once) until
        # it is answered: the goal below cannot then lose its acceptance. A
        # client whose probes stay unanswered for 20 s (seen once in CI, late
        # in the suite, cause unknown) is replaced by a new participant; the
        # node's log says whether the probes arrived.
        unanswered = []
        for _ in range(3):
            homing = Homing()
            try:
                action_ready(homing.client, HomeSteering.Goal(id=99), spinning(homing.executor),
                             total_s=20.0)
                break
            except TimeoutError as exc:
                unanswered.append(str(exc))
                homing.close()
                homing = None
        else:
            raise AssertionError(f"{unanswered}; hardware node:\n{p.text()[-4000:]}")
        client, executor = homing.client, homing.executor
        deadline = time.monotonic() + 60
        sent = client.send_goal_async(HomeSteering.Goal(id=0, timeout_s=30.0))
        while not sent.done():
            assert time.monotonic() < deadline, p.text()
            executor.spin_once(timeout_sec=0.1)
        assert sent.result().accepted
        result = sent.result().get_result_async()
        p.wait_for(r"home_steering 0: started")
        delay = rng.uniform(0.0, 1.0)
        time.sleep(delay)
        rc, took = p.signal_and_wait(sig)
        log = p.text()
        assert rc == 0 and took < SHUTDOWN_BOUND_S, (
            f"{sig.name}: exit {rc} after {took:.2f} s\n{log}")
        assert not UNCLEAN.search(log), log
        assert "home_steering 0 aborted" in log, log
        deadline = time.monotonic() + 5
        while not result.done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        # in cc12 (2026-11-27) and cc34 (2026-11-28): the node logged the abort,
        # exited 0 and the result never came (the node now serves END_LINGER_S
        # more after the goal ends)
        assert result.done(), (f"the goal was never answered ({sig.name} {delay:.3f} s "
                               f"after the start; BSAL_SHUTDOWN_SEED={SEED}); "
                               f"hardware node:\n{log[-4000:]}")
    finally:
        p.kill()
        if homing is not None:
            homing.close()
