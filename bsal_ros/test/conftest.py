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

"""Test configuration shared by the whole suite.

Every test process keeps DDS discovery on loopback and runs in its own ROS
domain; tests that start nodes get a private rclpy Context from `ros_context`.
"""
import os
import random
import signal

# A suite started in the background of a non-interactive shell inherits SIGINT
# ignored, and so would every process a test starts (an ignored signal
# survives exec): the Ctrl-C tests would then prove nothing. Python's default
# handler here means SIG_DFL in every child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Before anything imports rclpy: the RMW reads these when a context starts.
# `make test` (scripts/run_suite.py) gives each module's process a domain of
# its own; a hand-run pytest draws one.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 100)))

import pytest  # noqa: E402

# make test's coverage.py starts at a process's first import of bsal_ros
# (scripts/coverage_hook.py): here, before any test starts a thread
import bsal_ros  # noqa: E402, F401, I100

#: a test that leaves an rclpy context alive fails, naming it (test/leak_check.py);
#: what a module changes for the whole process is put back when it ends (test/shared_state.py);
#: ROS modules of one pytest run each in a process and a domain of their own
#: (test/suite_isolation.py: colcon test, a plain pytest test/)
pytest_plugins = ("leak_check", "shared_state", "suite_isolation")


@pytest.fixture
def ros_context():
    """A fresh, initialised rclpy Context, shut down after the test."""
    import rclpy  # the project venv has it: run tests through `make test`
    import rclpy.context
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        if context.ok():
            rclpy.shutdown(context=context)


# --- RCI fixtures (the gateway logic over real loopback sockets, no ROS)
import asyncio  # noqa: E402, I100 - after importorskip / the fixtures above
from pathlib import Path  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402


def build_legacy() -> Path:
    """Build legacy/ (the C++ rci-client library, the book's listing, the example
    programs) and return its build folder; skip with the reason where the C++
    toolchain or the glib headers are missing (package.xml declares them as test
    dependencies; make setup installs them)."""
    import shutil
    import subprocess
    legacy = Path(__file__).resolve().parents[2] / "legacy"
    missing = [tool for tool in ("g++", "make", "pkg-config") if not shutil.which(tool)]
    if not missing and subprocess.run(["pkg-config", "--exists", "glib-2.0"]).returncode:
        missing.append("glib-2.0 headers (libglib2.0-dev)")
    if missing:
        pytest.skip(f"legacy/ needs {', '.join(missing)}: not installed here "
                    "(make setup installs them; rosdep: libglib-dev, pkg-config)")
    # test modules run in parallel processes (make test): one make at a time
    import fcntl
    (legacy / "build").mkdir(exist_ok=True)
    with open(legacy / "build" / ".make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "-C", str(legacy)], check=True)
    return legacy / "build"


def run_legacy(argv, env=None) -> tuple[int, list]:
    """Run a program of legacy/build whose output is one ``kind key=value ...``
    line per event (api-check, client-app), with ``env`` added to this
    process's environment; returns (exit code, [(kind, {key: value}), ...])."""
    import subprocess
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=60,
                       env={**os.environ, **(env or {})})
    rows = []
    for line in p.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        rows.append((kind, dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)))
    return p.returncode, rows


def check_shipped_generator(module: str) -> None:
    """``python -m MODULE --check`` in a fresh interpreter, as a user regenerating
    the checked-in files would, with Brak's own kinds only (the installed bumper
    plugin and what this process registered stay out): they must be fresh."""
    import subprocess
    env = {**os.environ, "BSAL_ROS_KIND_PLUGINS": "builtin"}
    check = subprocess.run([sys.executable, "-m", module, "--check"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, f"run: python -m {module}\n{check.stdout}{check.stderr}"


class ThrottleGate:
    """Injectable sleep for the login throttle: records each delay and, while
    ``hold`` is set, waits until the test releases it (no timing involved)."""

    def __init__(self):
        self.calls: list[float] = []
        self.hold = False
        self.waiting: list[asyncio.Event] = []

    async def sleep(self, delay: float) -> None:
        self.calls.append(delay)
        if self.hold:
            ev = asyncio.Event()
            self.waiting.append(ev)
            await ev.wait()
        else:
            await asyncio.sleep(0)


class RciServerThread:
    """The RCI server (bsal_ros.rci.RciServer) on a private asyncio loop in a
    thread, with a fake robot. ``gate=True``: the login throttle's waits go
    through a :class:`ThrottleGate` (``self.gate``) instead of sleeping."""

    def __init__(self, users_yaml: str, robot=None, gate: bool = False, **cfg):
        from bsal_ros.rci import RciServer, SessionConfig, Users
        from bsal_ros.rci.fake import FakeRobotPort
        self.robot = robot or FakeRobotPort()
        self.cfg = SessionConfig.of(**cfg)
        self.loop = asyncio.new_event_loop()
        self.gate = ThrottleGate() if gate else None
        self.server = RciServer(self.robot, Users.from_yaml_text(users_yaml), "127.0.0.1", 0,
                                self.cfg)
        if self.gate is not None:
            self.server.sleep = self.gate.sleep
        started = threading.Event()

        def run():
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.server.start())
            started.set()
            self.loop.run_forever()
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert started.wait(10)
        self.port = self.server.bound_port

    def call(self, fn, *args):
        """Run fn(*args) on the server loop and wait for it."""
        done = threading.Event()
        out = []
        self.loop.call_soon_threadsafe(lambda: (out.append(fn(*args)), done.set()))
        assert done.wait(10)
        return out[0]

    def release(self):
        """Let every held throttle wait end."""
        def go():
            for ev in self.gate.waiting:
                ev.set()
            self.gate.waiting.clear()
        self.loop.call_soon_threadsafe(go)

    def wait_idle(self, timeout=10.0):
        """Wait until no session is running."""
        deadline = time.monotonic() + timeout
        while self.server.session is not None:
            assert time.monotonic() < deadline, "session did not end"
            time.sleep(0.01)

    def wait_sessions(self, n, timeout=10.0):
        """Wait until n sessions have ended."""
        deadline = time.monotonic() + timeout
        while self.server.sessions_served < n:
            assert time.monotonic() < deadline, "session did not end"
            time.sleep(0.01)

    def stop(self):
        """Close the server and end its thread."""
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


# --- hardware node fixtures
# One simulated hardware node and a probe node in a private context, per test
# module. The module says what it needs through module attributes:
#   NS       - the node's namespace (own per module: modules share a ROS domain)
#   NODE_KW  - keyword overrides of the HardwareNode (default: fast, no auto-home)
#   LISTEN   - (message type, topic, listen() keywords) the probe records
HARDWARE_NODE_KW = {"auto_home": False, "rate_scale": 2.0, "diagnostics_period": 0.2}


@pytest.fixture(scope="module")
def hardware_node_env(request):
    """A RosEnv with ``.node`` (HardwareNode) and ``.probe`` (Probe) in ``NS``."""
    from bsal_ros.nodes.hardware_node import HardwareNode

    from hardware_node_helpers import Probe, RosEnv
    module = request.module
    ns = module.NS
    env = RosEnv()
    try:
        env.node = env.add(HardwareNode(namespace=ns, context=env.context,
                                        **getattr(module, "NODE_KW", HARDWARE_NODE_KW)))
        env.probe = env.add(Probe(env, namespace=ns))
        for msg_type, topic, kw in getattr(module, "LISTEN", ()):
            env.probe.listen(msg_type, topic, **kw)
    except BaseException:
        env.close()
        raise
    yield env
    env.close()


@pytest.fixture
def empty_smbus2(monkeypatch):
    """``smbus2`` replaced by a fake SMBus on which no board answers (ENXIO)."""
    import sys
    import types

    from test_hardware_bus import FakeSMBus

    class Empty(FakeSMBus):

        def __init__(self, bus):
            super().__init__(bus)
            self.regs = {}
    monkeypatch.setitem(sys.modules, "smbus2", types.SimpleNamespace(SMBus=Empty))
    return Empty


@pytest.fixture(scope="module")
def hosts():
    """Two network namespaces joined by a veth (the robot and the lab PC), per
    module; deleted at the end, whatever happens. Skips with the reason where
    they cannot be made."""
    from two_hosts import netns
    # the lab agent's tf lookups: tf2_ros comes from ../shared/ros2-tools (make setup)
    pytest.importorskip("tf2_ros", reason="tf2_ros not installed: ../shared/ros2-tools absent")
    h = netns.TwoHosts()
    try:
        h.create()
    except netns.NetnsUnavailable as exc:
        pytest.skip(f"two hosts need network namespaces: {exc}")
    try:
        yield h
    finally:
        errors = h.delete()
        assert not errors, errors
