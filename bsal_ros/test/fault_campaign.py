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

"""Fault campaign (issue 7): the whole bridge on the simulated Brak, driven by
control applications, under injected faults. Bounded, loopback only, stops
by itself, cleans up every process it started (by PID).

    scripts/with_env.sh python bsal_ros/test/fault_campaign.py            # long (make faults)
    scripts/with_env.sh python bsal_ros/test/fault_campaign.py --quick    # short (tests)
    ... [--json report.json] [--logdir DIR] [--keep-logs] [--seed 7]

Processes (each its own OS process, in a private namespace /faults_<pid>,
ROS_DOMAIN_ID from the environment, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST):
hardware_node (sim), rci_gateway, rdi_gateway, and control applications
(``python -m faults.ca``) where killing them is the point; this
process runs a small rclpy monitor (``/diagnostics``, ``device_states``,
``sim_control``) and the in-process control applications.

Steps (docs/FAULTS.md explains each figure):

A. I2C faults through ``sim_control``: error rate, stuck board, missing board;
   time from injection to the device's ERROR on /diagnostics (and to the
   first not-ok ``device_states``), from clear to OK again; what a control
   application driving meanwhile is answered.
C. SIGKILL of a control application that is driving (closed socket), and a
   control application that goes silent (watchdog): time until
   ``device_states`` shows the drive motor stopped.
C3. A control application that leaves while the drive board is faulted: is
   the drive stopped once the board is back? (docs/FAULTS.md, known bug)
D. RDI clients connecting and disconnecting (plain, after the base time,
   with RST, after a frame), a well-behaved client checked periodically.
E. A seeded corpus of malformed RCI input (faults.corpus), each entry
   followed by a well-behaved client that must be served; then a client that
   floods inquiries and never reads.
B. SIGKILL of the hardware node while a control application drives through
   the RCI gateway; restart; what the application sees and when its
   commands work again.

Report: crashes (processes alive, no Traceback / internal error in the logs,
exit codes after SIGTERM), fd / thread / RSS before and after, every time
figure (p50 / max where repeated). Markdown on stdout, JSON with ``--json``.
"""

from __future__ import annotations

import argparse
from collections import Counter
import json
import os
from pathlib import Path
import platform
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = Path(__file__).resolve().parent  # test/: the helper packages (faults) beside it
ROOT = HERE.parents[1]  # the repository: the bridge's processes run there
sys.path.insert(0, str(HERE))

# Loopback discovery always; the domain is the caller's (with_env.sh / make set it).
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))

from bsal_ros.paths import shipped  # noqa: E402
from bsal_ros.protocol import ProtocolError, RdiBaseTime, RdiDecoder, RdiSensor  # noqa: E402
from bsal_ros.protocol.constants import (CStRpStatus, GetSensorStatus, MotorType,  # noqa: E402
                                         RciCode, SensorType, TermCode)
from bsal_ros.protocol.rci import (CAcMt, CCnAc, CGtSnIq, CGtSnRp, CStIq, CStMt,  # noqa: E402
                                   CStRp, CSvTm, encode_rci, IIId, IInCp, MotorCommand,
                                   MotorCommandKind, RciDecoder)
from bsal_ros.protocol.values import speedval_pack  # noqa: E402
from bsal_ros.rci.client import RciClient  # noqa: E402
from child_process import die_with_parent, LoggedProcess  # noqa: E402
from faults import stats as S  # noqa: E402
from faults.corpus import build_corpus, CONTROL  # noqa: E402

DEMO_KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")
HOST = "127.0.0.1"
#: the device whose /diagnostics status is timed for a fault on each board
BOARD_DEVICE = {"drive": ("dc_motor", 0), "steering": ("pservo_motor", 0),
                "accel": ("accelerometer", 0), "sonar_a": ("ultrasonic", 0),
                "sonar_b": ("ultrasonic", 6)}
OK_LEVEL, ERROR_LEVEL = 0, 2


def now() -> float:
    return time.monotonic()


# =========================================================================== processes
class Child(LoggedProcess):
    """A process we started: log file, PID, bounded waits, clean stop."""

    def __init__(self, name: str, cmd: list[str], logdir: Path, env: dict,
                 json_stdout: bool = False, cwd: Path = ROOT):
        self.name = name
        self.cmd = cmd
        self.log_path = logdir / f"{name}.log"
        self._logf = open(self.log_path, "wb")
        self.events: list[dict] = []
        self._ev_cond = threading.Condition()
        self.popen = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if json_stdout else self._logf, stderr=self._logf,
            preexec_fn=die_with_parent)   # a campaign that dies takes them along
        self.pid = self.popen.pid
        self.started = now()
        self.expected_death = False
        self.returncode = None
        self._reader_done = not json_stdout
        if json_stdout:
            threading.Thread(target=self._read_events, daemon=True,
                             name=f"events-{name}").start()

    def _read_events(self):
        for raw in self.popen.stdout:
            line = raw.decode("utf-8", "replace").strip()
            try:
                ev = json.loads(line)
            except ValueError:
                ev = {"event": "text", "text": line, "t": now()}
            with self._ev_cond:
                self.events.append(ev)
                self._ev_cond.notify_all()
        with self._ev_cond:
            self._reader_done = True
            self._ev_cond.notify_all()

    def wait_event(self, name: str, timeout: float) -> dict | None:
        deadline = now() + timeout
        with self._ev_cond:
            while True:
                for ev in self.events:
                    if ev.get("event") == name:
                        return ev
                left = deadline - now()
                if left <= 0 or self._reader_done:
                    return None
                self._ev_cond.wait(min(left, 0.1))

    def wait_log(self, pattern: str, timeout: float, after: int = 0):
        rx = re.compile(pattern)
        deadline = now() + timeout
        while now() < deadline:
            m = rx.search(self.text(), after)
            if m:
                return m
            if not self.alive():
                return rx.search(self.text(), after)
            time.sleep(0.05)
        return None

    def kill(self) -> float:
        """SIGKILL by PID; returns the monotonic time just before the signal."""
        self.expected_death = True
        t = now()
        os.kill(self.pid, signal.SIGKILL)
        return t

    def wait(self, timeout: float) -> int | None:
        try:
            self.returncode = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.returncode

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM, then SIGKILL after ``timeout``; returns the exit status."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self.returncode = self.popen.returncode
        self._logf.close()
        return self.returncode


# ============================================================================ monitor
class Watch:

    def __init__(self, pred, not_before_wall: float):
        self.pred = pred
        self.not_before = not_before_wall
        self.event = threading.Event()
        self.hit = None            # (recv monotonic, stamp wall, item)


class Monitor:
    """rclpy side of the campaign: /diagnostics, device_states, sim_control."""

    def __init__(self, ns: str):
        from bsal_interfaces.msg import DeviceStateArray
        from bsal_interfaces.srv import SimControl
        from diagnostic_msgs.msg import DiagnosticArray
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import MultiThreadedExecutor
        from rclpy.node import Node
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
        self.rclpy = rclpy
        self.SimControl = SimControl
        self.ctx = Context()
        rclpy.init(args=["fault_campaign"], context=self.ctx)
        self.node = Node("fault_campaign_monitor", namespace=ns, context=self.ctx)
        self.hw_fqn = f"{ns}/hardware_node"
        rel = lambda depth: QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,  # noqa: E731
                                       reliability=ReliabilityPolicy.RELIABLE)
        self._lock = threading.Lock()
        self._watches = {"states": [], "diag": []}
        self.counts = Counter()
        self.last_states = now()
        self.node.create_subscription(DeviceStateArray, "device_states", self._on_states, rel(50))
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diag, rel(10))
        self.sim = self.node.create_client(SimControl, "sim_control")
        self.executor = MultiThreadedExecutor(num_threads=2, context=self.ctx)
        self.executor.add_node(self.node)
        self._stop = False
        self._thread = threading.Thread(target=self._spin, daemon=True, name="monitor-spin")
        self._thread.start()

    def _spin(self):
        while not self._stop and self.ctx.ok():
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:  # noqa: BLE001 - shutting down
                if self._stop:
                    return
                raise

    @staticmethod
    def _wall(stamp) -> float:
        return stamp.sec + stamp.nanosec * 1e-9

    def _dispatch(self, kind, items, t, wall):
        with self._lock:
            ws = self._watches[kind]
            if not ws:
                return
            for w in list(ws):
                if wall < w.not_before:
                    continue
                for it in items:
                    if w.pred(it):
                        w.hit = (t, wall, it)
                        w.event.set()
                        ws.remove(w)
                        break

    def _on_states(self, msg):
        t = now()
        self.counts["states"] += 1
        self.last_states = t
        self._dispatch("states", msg.states, t, self._wall(msg.header.stamp))

    def _on_diag(self, msg):
        t = now()
        mine = [s for s in msg.status if s.name.startswith(self.hw_fqn + ":")]
        if not mine:
            return
        self.counts["diag"] += 1
        self._dispatch("diag", mine, t, self._wall(msg.header.stamp))

    def watch(self, kind: str, pred, not_before_wall: float | None = None) -> Watch:
        w = Watch(pred, time.time() if not_before_wall is None else not_before_wall)
        with self._lock:
            self._watches[kind].append(w)
        return w

    def wait(self, w: Watch, timeout: float):
        w.event.wait(max(0.0, timeout))
        if w.hit is None:
            with self._lock:
                for ws in self._watches.values():
                    if w in ws:
                        ws.remove(w)
        return w.hit

    # predicates
    def diag_level(self, device, level):
        name = f"{self.hw_fqn}: {device[0]} {device[1]}"
        return lambda s: s.name == name and s.level[0] == level

    @staticmethod
    def state_bad(device):
        return lambda s: (s.device_class, s.id) == device and not (s.up and s.ok)

    @staticmethod
    def state_good(device):
        return lambda s: (s.device_class, s.id) == device and s.up and s.ok

    @staticmethod
    def drive_stopped(s):
        return s.device_class == "dc_motor" and s.id == 0 and (s.speedval & 0x7FF) == 0

    @staticmethod
    def drive_moving(s):
        return s.device_class == "dc_motor" and s.id == 0 and (s.speedval & 0x7FF) != 0

    def sim_control(self, command, target="", fault="", values=(), timeout=5.0):
        if not self.sim.wait_for_service(timeout_sec=timeout):
            return None, "sim_control not available"
        req = self.SimControl.Request(command=command, target=target, fault=fault,
                                      values=[float(v) for v in values])
        done = threading.Event()
        fut = self.sim.call_async(req)
        fut.add_done_callback(lambda f: done.set())
        if not done.wait(timeout):
            fut.cancel()
            return None, "no answer"
        res = fut.result().result
        return int(res.code), str(res.message)

    def close(self):
        self._stop = True
        self._thread.join(5)
        try:
            self.executor.shutdown()
            self.node.destroy_node()
        finally:
            if self.ctx.ok():
                self.rclpy.shutdown(context=self.ctx)


# ======================================================== in-process control application
def _outcome(reply) -> str:
    if isinstance(reply, CCnAc):
        return "ok"
    if isinstance(reply, CGtSnRp):
        return "ok"
    if isinstance(reply, CStRp):
        try:
            return CStRpStatus(reply.status).name
        except ValueError:
            return f"status {reply.status}"
    if isinstance(reply, CSvTm):
        try:
            return "CSvTm " + TermCode(reply.term_code).name
        except ValueError:
            return f"CSvTm {reply.term_code}"
    return type(reply).__name__


class DrivingCA(threading.Thread):
    """A control application in a thread: (re)connects, activates the drive,
    then Set Motor (RQ_ACK) and a 12-sonar Get Sensor every ``period``.
    Every answer is recorded with its time and the campaign's current tag."""

    def __init__(self, port: int, duty: float, period: float, inquiry: bool = True):
        super().__init__(daemon=True, name="driving-ca")
        self.port, self.period, self.inquiry = port, period, inquiry
        self.duty = duty
        self.events: list[tuple] = []      # (t, what, outcome, tag)
        self.tag = None
        self.stop_ev = threading.Event()
        self.driving = threading.Event()
        self.lock = threading.Lock()

    def log(self, what, outcome):
        with self.lock:
            self.events.append((now(), what, outcome, self.tag))

    def snapshot(self):
        with self.lock:
            return list(self.events)

    def _request(self, c, pkt):
        try:
            return _outcome(c.request(pkt, timeout=8.0))
        except EOFError:
            return "eof"
        except TimeoutError:
            return "timeout"
        except OSError as exc:
            return type(exc).__name__

    def run(self):
        c = None
        need_activate = True
        spd = CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                      speedval_pack(True, self.duty)), rq_ack=True)
        act = CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)
        inq = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)
        while not self.stop_ev.is_set():
            if c is None:
                try:
                    c = RciClient(HOST, self.port, timeout=5.0)
                    sid, _, _ = c.handshake("demo", DEMO_KEY)
                    if not isinstance(sid, IIId):
                        self.log("connect", "refused " + _outcome(sid))
                        c.close()
                        c = None
                        self.stop_ev.wait(0.1)
                        continue
                    self.log("connect", "ok")
                    need_activate = True
                except (OSError, EOFError, TimeoutError, ProtocolError) as exc:
                    self.log("connect", type(exc).__name__)
                    if c is not None:
                        c.close()
                    c = None
                    self.stop_ev.wait(0.2)
                    continue
            if need_activate:
                out = self._request(c, act)
                self.log("CAcMt", out)
                need_activate = out != "ok"
            else:
                out = self._request(c, spd)
                self.log("CStMt", out)
                if out == "ok":
                    self.driving.set()
                if self.inquiry and out in ("ok", "ABORT"):
                    out = self._request(c, inq)
                    self.log("CGtSnIq", out)
            if out.startswith("CSvTm") or out in ("eof", "timeout") or "Error" in out:
                c.close()
                c = None
            self.stop_ev.wait(self.period)
        if c is not None:
            try:
                c.request(CStMt.one(MotorType.DC, 0, MotorCommand(
                    MotorCommandKind.SPVAL, speedval_pack(True, 0.0)), rq_ack=True), timeout=3.0)
            except (OSError, EOFError, TimeoutError):
                pass
            c.close()

    def stop(self):
        self.stop_ev.set()
        self.join(15)


# ============================================================================ campaign
class Campaign:

    def __init__(self, args):
        self.a = args
        self.quick = args.quick
        self.rng = random.Random(args.seed)
        self.t_start = now()
        self.deadline = self.t_start + args.max_seconds
        self.ns = f"/faults_{os.getpid()}"
        self.children: list[Child] = []
        self.hw: Child | None = None
        self.hw_instances: list[Child] = []
        self.rci = self.rdi = None
        self.monitor: Monitor | None = None
        self.report: dict = {"config": {}, "steps": {}, "snapshots": {}, "notes": []}
        self.rss_samples: dict = {}
        self._sampling = threading.Event()
        self.cut_short: list[str] = []
        if args.logdir:
            self.logdir = Path(args.logdir)
            self.logdir.mkdir(parents=True, exist_ok=True)
            self._own_logdir = False
        else:
            self.logdir = Path(tempfile.mkdtemp(prefix="bsal-faults-"))
            self._own_logdir = True
        self.env = dict(os.environ)
        self.env.update(ROS_LOG_DIR=str(self.logdir / "ros"), RCUTILS_COLORIZED_OUTPUT="0",
                        PYTHONUNBUFFERED="1")

    # ------------------------------------------------------------------ helpers
    def left(self) -> float:
        return self.deadline - now()

    def budget(self, step: str, need: float) -> bool:
        if self.left() < need:
            if step not in self.cut_short:
                self.cut_short.append(step)
            return False
        return True

    def log(self, msg: str):
        print(f"[faults {now() - self.t_start:6.1f}s] {msg}", file=sys.stderr, flush=True)

    def spawn(self, name, cmd, json_stdout=False, cwd=ROOT) -> Child:
        c = Child(name, cmd, self.logdir, self.env, json_stdout, cwd)
        self.children.append(c)
        return c

    def ros_cmd(self, module, *ros_args):
        return [sys.executable, "-m", module, "--ros-args", "-r", f"__ns:={self.ns}", *ros_args]

    def start_hw(self) -> Child:
        n = len(self.hw_instances)
        hw = self.spawn(f"hardware_node_{n}", self.ros_cmd(
            "bsal_ros.nodes.hardware_node", "--params-file", str(shipped("config", "brak.yaml")),
            "-p", f"diagnostics_period:={self.a.diag_period}"))
        self.hw_instances.append(hw)
        self.hw = hw
        return hw

    def _sampler(self):
        """RSS of every bridge process once a second (memory growth over time)."""
        while not self._sampling.wait(1.0):
            for name, ch in (("hardware_node", self.hw), ("rci_gateway", self.rci),
                             ("rdi_gateway", self.rdi)):
                if ch is not None and ch.alive():
                    snap = S.snapshot(ch.pid)
                    if snap:
                        self.rss_samples.setdefault(ch.name, []).append(
                            (now() - self.t_start, snap.rss))

    def memory_trend(self) -> dict:
        out = {}
        for name, xs in self.rss_samples.items():
            if len(xs) < 4:
                continue
            out[name] = {"samples": len(xs), "first_mib": xs[0][1] / 1048576,
                         "max_mib": max(r for _, r in xs) / 1048576,
                         "last_mib": xs[-1][1] / 1048576}
        return out

    def snap_all(self, label: str):
        snaps = {}
        for name, ch in (("hardware_node", self.hw), ("rci_gateway", self.rci),
                         ("rdi_gateway", self.rdi)):
            if ch is not None:
                s = S.snapshot(ch.pid)
                snaps[name] = s.to_dict() if s else None
                if s:
                    snaps[name]["instance"] = ch.name
        self.report["snapshots"][label] = snaps
        return snaps

    # ---------------------------------------------------------------- start-up
    def start(self):
        a = self.a
        gw_cfg = str(shipped("config", "gateways.yaml"))
        self.log(f"namespace {self.ns}, ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, "
                 f"logs in {self.logdir}")
        self.start_hw()
        self.rci = self.spawn("rci_gateway", self.ros_cmd(
            "bsal_ros.nodes.rci_gateway", "--params-file", gw_cfg, "-p", "port:=0",
            "-p", f"watchdog_s:={a.watchdog}", "-p", f"hardware_gone_s:={a.hardware_gone}",
            "-p", f"idle_limit_s:={a.watchdog + 1.0}"))   # silent CAs: stop, then CSvTm NOACK
        self.rdi = self.spawn("rdi_gateway", self.ros_cmd(
            "bsal_ros.nodes.rdi_gateway", "--params-file", gw_cfg, "-p", "realtime_port:=0",
            "-p", "ca_port:=0"))
        m = self.rci.wait_log(r"RCI gateway ready on 127\.0\.0\.1:(\d+)", 60)
        if not m:
            raise RuntimeError("RCI gateway did not start:\n" + self.rci.text()[-2000:])
        self.rci_port = int(m.group(1))
        m = self.rdi.wait_log(r"real-time stream on 127\.0\.0\.1:(\d+), control-application "
                              r"stream on 127\.0\.0\.1:(\d+)", 60)
        if not m:
            raise RuntimeError("RDI gateway did not start:\n" + self.rdi.text()[-2000:])
        self.rdi_ports = {"realtime": int(m.group(1)), "ca": int(m.group(2))}
        if not self.hw.wait_log(r"hardware node: backend sim", 60):
            raise RuntimeError("hardware node did not start:\n" + self.hw.text()[-2000:])
        self.monitor = Monitor(self.ns)
        deadline = now() + 60
        while self.monitor.counts["diag"] < 1 or self.monitor.counts["states"] < 5:
            if now() > deadline:
                raise RuntimeError("no /diagnostics or device_states from the hardware node")
            time.sleep(0.05)
        self.hw.wait_log(r"auto-home (done|failed)", 30)
        ok, _, _ = self.rci_check(timeout=60)
        if not ok:
            raise RuntimeError("the RCI gateway does not serve a control application")
        self.log(f"bridge up: RCI :{self.rci_port}, RDI {self.rdi_ports}")

    def session(self, timeout=10.0) -> RciClient:
        """A connected, initialized control application; retries while the
        previous session is still being released (the gateway serves one)."""
        deadline = now() + timeout
        while True:
            c = RciClient(HOST, self.rci_port, timeout=5)
            try:
                sid, _, _ = c.handshake("demo", DEMO_KEY)
            except (OSError, EOFError, TimeoutError, ProtocolError):
                sid = None
            if isinstance(sid, IIId):
                return c
            c.close()
            if now() > deadline:
                raise RuntimeError("the RCI gateway refused a control application for "
                                   f"{timeout:.0f} s")
            time.sleep(0.02)

    def warm_up(self):
        # every lazily created thing (executor threads, DDS readers, sockets) once
        c = self.session()
        c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True))
        c.request(CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                          speedval_pack(True, 0.0)), rq_ack=True))
        c.close()
        for port in self.rdi_ports.values():
            self.rdi_check(port, need_sensor=False, timeout=3)
        # concurrent service calls: the executors' thread pools grow lazily
        calls = [threading.Thread(target=self.monitor.sim_control, args=("clear_faults",))
                 for _ in range(8)]
        for t in calls:
            t.start()
        for t in calls:
            t.join(10)
        time.sleep(1.5)

    # --------------------------------------------------------------- checks
    def rci_check(self, timeout=10.0):
        """A well-behaved control application: handshake, a 12-sonar Get Sensor,
        a Status Inquiry. Retries while refused (previous session releasing).
        Returns (served, seconds, refusals)."""
        t0 = now()
        refusals = 0
        while now() - t0 < timeout:
            c = None
            try:
                c = RciClient(HOST, self.rci_port, timeout=5)
                sid, _, _ = c.handshake("demo", DEMO_KEY)
                if not isinstance(sid, IIId):
                    refusals += 1
                    c.close()
                    time.sleep(0.01)
                    continue
                r1 = c.request(CGtSnIq.group(SensorType.ULTRASONIC, 0,
                                             [GetSensorStatus.DATA] * 12))
                r2 = c.request(CStIq(int(RciCode.CStIq)))
                c.close()
                if isinstance(r1, (CGtSnRp, CStRp)) and isinstance(r2, CStRp):
                    return True, now() - t0, refusals
            except (OSError, EOFError, TimeoutError, ProtocolError):
                pass
            finally:
                if c is not None:
                    c.close()
            time.sleep(0.05)
        return False, now() - t0, refusals

    def rdi_check(self, port, need_sensor=True, timeout=3.0) -> bool:
        dec = RdiDecoder()
        seen_base = seen_sensor = False
        try:
            with socket.create_connection((HOST, port), timeout=timeout) as s:
                deadline = now() + timeout
                while now() < deadline:
                    s.settimeout(max(0.01, deadline - now()))
                    try:
                        data = s.recv(65536)
                    except socket.timeout:
                        break
                    if not data:
                        break
                    for p in dec.feed(data):
                        seen_base |= isinstance(p, RdiBaseTime)
                        seen_sensor |= isinstance(p, RdiSensor)
                    if seen_base and (seen_sensor or not need_sensor):
                        return True
        except (OSError, ProtocolError):
            return False
        return False

    # ============================================================== step A
    def step_faults(self):
        a = self.a
        mon = self.monitor
        boards = ["drive", "accel", "sonar_a"] if self.quick else list(BOARD_DEVICE)
        faults = [("error_rate", [a.error_rate]), ("stuck", []), ("missing", [])]
        schedule = []
        if self.quick:
            schedule = [(f, v, b) for (f, v), b in zip(faults, boards)]
        else:
            for _ in range(a.fault_reps):
                for f, v in faults:
                    for b in boards:
                        schedule.append((f, v, b))
        ca = DrivingCA(self.rci_port, duty=10.0, period=0.1)
        ca.start()
        ca.driving.wait(15)
        rows = []
        for fault, values, board in schedule:
            if not self.budget("A", 25):
                break
            dev = BOARD_DEVICE[board]
            base = mon.wait(mon.watch("diag", mon.diag_level(dev, OK_LEVEL)), 10)
            # inject at a random phase of the 1 s diagnostics period (the wait
            # above returns right after a publication)
            time.sleep(self.rng.uniform(0.0, a.diag_period))
            ca.tag = f"{fault}:{board}"
            w_state = mon.watch("states", mon.state_bad(dev))
            w_diag = mon.watch("diag", mon.diag_level(dev, ERROR_LEVEL))
            t0 = now()
            code, msg = mon.sim_control("set_fault", board, fault, values)
            t_ack = now()
            hs = mon.wait(w_state, 10)
            hd = mon.wait(w_diag, 10)
            time.sleep(a.fault_hold + self.rng.uniform(0.0, a.diag_period))
            w_state_ok = mon.watch("states", mon.state_good(dev))
            w_ok = mon.watch("diag", mon.diag_level(dev, OK_LEVEL))
            t1 = now()
            mon.sim_control("clear_faults", board)
            hso = mon.wait(w_state_ok, 15)
            ho = mon.wait(w_ok, 15)
            ca.tag = None
            row = {"fault": fault, "board": board, "device": f"{dev[0]} {dev[1]}",
                   "baseline_ok": base is not None, "sim_control": [code, msg],
                   "sim_control_rtt": t_ack - t0,
                   "to_state_bad": hs[0] - t0 if hs else None,
                   "to_error": hd[0] - t0 if hd else None,
                   "error_message": hd[2].message if hd else None,
                   "clear_to_state_ok": hso[0] - t1 if hso else None,
                   "clear_to_ok": ho[0] - t1 if ho else None}
            rows.append(row)
            self.log(f"A {fault:10s} {board:8s}: ERROR after {_ms(row['to_error'])} ms, "
                     f"OK {_ms(row['clear_to_ok'])} ms after clear")
        ca.stop()
        mon.sim_control("clear_faults")
        # what the control application was answered during each fault
        seen: dict = {}
        for t, what, out, tag in ca.snapshot():
            if tag is None or what not in ("CStMt", "CGtSnIq"):
                continue
            seen.setdefault(tag, Counter())[f"{what} {out}"] += 1
        summary = {}
        for f, _ in faults:
            sub = [r for r in rows if r["fault"] == f]
            summary[f] = {k: S.summary([r[k] for r in sub])
                          for k in ("to_state_bad", "to_error", "clear_to_state_ok", "clear_to_ok")}
        self.report["steps"]["A_i2c_faults"] = {
            "injections": rows, "summary": summary, "error_rate": a.error_rate,
            "hold_s": a.fault_hold, "diag_period_s": a.diag_period,
            "ca_answers": {k: dict(v) for k, v in seen.items()},
            "recovered_all": all(r["clear_to_ok"] is not None for r in rows) and bool(rows),
            "detected_all": all(r["to_error"] is not None for r in rows) and bool(rows)}

    # ============================================================== step C
    def ca_process(self, mode, i, duty=30.0):
        return self.spawn(f"ca_{mode}_{i}", [
            sys.executable, "-m", "faults.ca", "--port", str(self.rci_port),
            "--mode", mode, "--duty", str(duty), "--max-seconds", "40"], json_stdout=True,
            cwd=HERE)  # python -m faults.ca: the package is in test/

    def step_kill_ca(self):
        a = self.a
        mon = self.monitor
        kills, silents = [], []
        for i in range(a.ca_kills):
            if not self.budget("C", 20):
                break
            ca = self.ca_process("drive", i)
            row = {"i": i}
            if ca.wait_event("commanding", 20) is None:
                row["error"] = "control application did not start driving: " + \
                    json.dumps(ca.events[-3:])
                ca.stop(5)
                kills.append(row)
                continue
            moving = mon.wait(mon.watch("states", mon.drive_moving, time.time() - 1.0), 5)
            time.sleep(self.rng.uniform(0.05, 0.3))
            w = mon.watch("states", mon.drive_stopped)
            wall_kill = time.time()
            t_kill = ca.kill()
            ca.wait(5)
            hit = mon.wait(w, 10)
            row.update(moving_seen=moving is not None,
                       kill_to_stopped=hit[0] - t_kill if hit else None,
                       kill_to_stopped_board_stamp=_board_stamp(hit) - wall_kill if hit else None)
            kills.append(row)
            self.log(f"C kill #{i}: drive stopped {_ms(row['kill_to_stopped'])} ms after SIGKILL")
        for i in range(a.ca_silent):
            if not self.budget("C", a.watchdog + 20):
                break
            ca = self.ca_process("silent", i)
            row = {"i": i}
            ev = ca.wait_event("silent", 20)
            if ev is None:
                row["error"] = "control application did not start: " + json.dumps(ca.events[-3:])
                ca.stop(5)
                silents.append(row)
                continue
            w = mon.watch("states", mon.drive_stopped)
            t_last = ev["t"]
            hit = mon.wait(w, a.watchdog + 15)
            closed = ca.wait_event("closed", a.watchdog + 15)
            rc = ca.wait(10)
            row.update(silence_to_stopped=hit[0] - t_last if hit else None,
                       silence_to_term=closed["t"] - t_last if closed else None,
                       terms=closed.get("term_names") if closed else None, exit=rc)
            silents.append(row)
            self.log(f"C silent #{i}: drive stopped {_ms(row['silence_to_stopped'])} ms after "
                     f"the last packet, CSvTm {row['terms']}")
        wd_check = min(max(0.01, a.watchdog / 4), 0.25)
        ks = S.summary([r.get("kill_to_stopped") for r in kills])
        ss = S.summary([r.get("silence_to_stopped") for r in silents])
        self.report["steps"]["C_kill_ca"] = {
            "closed_socket": kills, "silent": silents,
            "closed_summary": ks,
            "closed_board_stamp_summary": S.summary([r.get("kill_to_stopped_board_stamp")
                                                     for r in kills]),
            "silent_summary": ss,
            "silent_term_summary": S.summary([r.get("silence_to_term") for r in silents]),
            "watchdog_s": a.watchdog, "watchdog_check_s": wd_check,
            "goal_closed_s": 0.1, "goal_silent_s": a.watchdog + wd_check + 0.1,
            "all_stopped": bool(kills) and bool(silents)
            and all(r.get("kill_to_stopped") is not None for r in kills)
            and all(r.get("silence_to_stopped") is not None for r in silents),
            "goal_closed_met": ks.get("max", 1e9) < 0.1,
            "goal_silent_met": ss.get("max", 1e9) <= a.watchdog + wd_check + 0.1}

    def step_fault_then_disconnect(self):
        """The control application leaves while the drive board is faulted (its
        safety stop cannot reach the board); does the drive stop once the board
        is back on the bus?"""
        a = self.a
        mon = self.monitor
        faults = ["missing"] if self.quick else ["missing", "stuck", "missing", "stuck"]
        rows = []
        for fault in faults:
            if not self.budget("C3", 30):
                break
            row = {"fault": fault}
            c = self.session()
            row["activate"] = _outcome(c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)))
            row["set_30"] = _outcome(c.request(CStMt.one(MotorType.DC, 0, MotorCommand(
                MotorCommandKind.SPVAL, speedval_pack(True, 30.0)), rq_ack=True)))
            row["moving"] = mon.wait(mon.watch("states", mon.drive_moving), 5) is not None
            row["sim_control"] = mon.sim_control("set_fault", "drive", fault)
            row["board_faulted"] = mon.wait(mon.watch("states", mon.state_bad(("dc_motor", 0))),
                                            5) is not None
            c.close()
            t_close = now()
            time.sleep(1.0)                     # the session ends, its safety stop runs
            w_back = mon.watch("states", mon.state_good(("dc_motor", 0)))
            t_clear = now()
            mon.sim_control("clear_faults", "drive")
            back = mon.wait(w_back, 10)
            row["board_back_after_clear"] = back[0] - t_clear if back else None
            row["speed_when_back"] = float(back[2].speed) if back else None
            w_stop = mon.watch("states", mon.drive_stopped)
            hit = mon.wait(w_stop, a.stop_wait)
            row["stopped_after_close"] = hit[0] - t_close if hit else None
            row["still_running_after_s"] = None if hit else (now() - t_close)
            rows.append(row)
            self.log(f"C3 {fault}: client left while the drive board was faulted; drive "
                     + (f"stopped {_ms(row['stopped_after_close'])} ms after" if hit else
                        f"STILL RUNNING at {row['speed_when_back'] or 0:.1f} % "
                        f"{now() - t_close:.1f} s after"))
            # leave the robot stopped for the next step (a session's own stop)
            c = self.session()
            c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True))
            c.request(CStMt.one(MotorType.DC, 0, MotorCommand(
                MotorCommandKind.SPVAL, speedval_pack(True, 0.0)), rq_ack=True))
            c.close()
            mon.wait(mon.watch("states", mon.drive_stopped), 5)
        self.report["steps"]["C3_disconnect_during_board_fault"] = {
            "cases": rows, "stop_wait_s": a.stop_wait,
            "all_stopped": bool(rows) and all(r["stopped_after_close"] is not None
                                              for r in rows)}

    # ============================================================== step D
    def step_rdi(self):
        a = self.a
        before = mid = S.snapshot(self.rdi.pid)
        modes = ["close", "after_base_time", "reset", "after_frame"]
        errors = Counter()
        done = Counter()
        checks = []
        t0 = now()
        check_every = max(1, a.rdi_cycles // 10)
        for i in range(a.rdi_cycles):
            if not self.budget("D", 15):
                break
            stream = "realtime" if i % 2 == 0 else "ca"
            mode = modes[(i // 2) % len(modes)]
            try:
                self._rdi_cycle(self.rdi_ports[stream], mode)
                done[mode] += 1
            except OSError as exc:
                errors[f"{mode}: {type(exc).__name__}"] += 1
            if i + 1 == a.rdi_cycles // 2:
                mid = S.snapshot(self.rdi.pid)
            if (i + 1) % check_every == 0 or i + 1 == a.rdi_cycles:
                checks.append(self.rdi_check(self.rdi_ports["realtime"]) and
                              self.rdi_check(self.rdi_ports["ca"], need_sensor=False))
        elapsed = now() - t0
        time.sleep(1.5)       # let the gateway finish closing
        after = S.snapshot(self.rdi.pid)
        self.report["steps"]["D_rdi_churn"] = {
            "cycles": sum(done.values()), "by_mode": dict(done), "errors": dict(errors),
            "seconds": elapsed, "checks": len(checks), "checks_passed": sum(checks),
            "rss_first_half": (mid.rss - before.rss) if mid and before else None,
            "rss_second_half": (after.rss - mid.rss) if mid and after else None,
            "before": before.to_dict() if before else None,
            "after": after.to_dict() if after else None,
            "leak": S.leak_check(before.to_dict() if before else None,
                                 after.to_dict() if after else None)}
        self.log(f"D {sum(done.values())} RDI connect/disconnect cycles in {elapsed:.1f} s, "
                 f"{sum(checks)}/{len(checks)} checks passed, errors {dict(errors)}")

    @staticmethod
    def _rdi_cycle(port, mode):
        s = socket.create_connection((HOST, port), timeout=3)
        try:
            if mode == "after_base_time":
                s.recv(64)
            elif mode == "reset":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif mode == "after_frame":
                s.settimeout(0.3)
                got = 0
                deadline = now() + 0.3
                while now() < deadline and got < 200:
                    try:
                        data = s.recv(65536)
                    except socket.timeout:
                        break
                    if not data:
                        break
                    got += len(data)
        finally:
            s.close()

    # ============================================================== step E
    def step_corpus(self):
        a = self.a
        corpus = build_corpus(a.corpus, a.seed)
        before = mid = S.snapshot(self.rci.pid)
        rows = []
        served_t = []
        not_served = []
        outcomes: dict = {}
        for k, entry in enumerate(corpus):
            if not self.budget("E", 15):
                break
            out = self._replay(entry)
            ok, dt, refusals = self.rci_check(timeout=10)
            served_t.append(dt if ok else None)
            if not ok:
                not_served.append(entry.describe())
            outcomes.setdefault(entry.category, Counter())[out] += 1
            if k + 1 == len(corpus) // 2:
                mid = S.snapshot(self.rci.pid)
            rows.append({"entry": entry.describe(), "outcome": out, "served": ok,
                         "served_after": dt, "refusals": refusals})
        time.sleep(1.0)       # let the last session finish closing
        after = S.snapshot(self.rci.pid)
        flood = self._flood() if self.budget("E", 20) else None
        self.report["steps"]["E_rci_corpus"] = {
            "entries": len(rows), "seed": a.seed,
            "outcomes": {k: dict(v) for k, v in outcomes.items()},
            "served": sum(1 for r in rows if r["served"]), "not_served": not_served,
            "served_after": S.summary(served_t),
            "before": before.to_dict() if before else None,
            "after": after.to_dict() if after else None,
            "leak": S.leak_check(before.to_dict() if before else None,
                                 after.to_dict() if after else None),
            "rss_first_half": (mid.rss - before.rss) if mid and before else None,
            "rss_second_half": (after.rss - mid.rss) if mid and after else None,
            "flood": flood, "rows": rows}
        self.log(f"E {len(rows)} malformed inputs, well-behaved client served after each: "
                 f"{sum(1 for r in rows if r['served'])}/{len(rows)}")

    def _replay(self, entry) -> str:
        """Send one corpus entry; returns what the gateway did."""
        for _attempt in range(50):
            c = None
            try:
                c = RciClient(HOST, self.rci_port, timeout=5)
                if entry.phase == CONTROL:
                    sid, _, _ = c.handshake("demo", DEMO_KEY)
                    if not isinstance(sid, IIId):
                        c.close()
                        time.sleep(0.02)
                        continue          # the previous session is still being released
                try:
                    c.sock.sendall(entry.data)
                except OSError as exc:
                    return f"send failed ({type(exc).__name__})"
                got = self._read_until_closed(c.sock, 0.3 if entry.category == "truncated"
                                              else 0.6)
                if got == "busy":
                    c.close()
                    time.sleep(0.02)
                    continue
                return got
            except (OSError, EOFError, TimeoutError, ProtocolError) as exc:
                return f"client error {type(exc).__name__}"
            finally:
                if c is not None:
                    c.close()
        return "gateway busy (50 tries)"

    @staticmethod
    def _read_until_closed(sock, timeout) -> str:
        dec = RciDecoder(role="client")
        pkts = []
        deadline = now() + timeout
        eof = False
        while now() < deadline:
            sock.settimeout(max(0.01, deadline - now()))
            try:
                data = sock.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                eof = True
                break
            if not data:
                eof = True
                break
            try:
                pkts += dec.feed(data)
            except ProtocolError as err:   # replies to inquiries we did not register
                pkts += err.packets
                dec.reset()
        if pkts[:2] == [IInCp(), CSvTm(TermCode.ACCESS)]:
            return "busy"
        terms = [p for p in pkts if isinstance(p, CSvTm)]
        if terms:
            return _outcome(terms[0]) + ("" if eof else " (open)")
        # no termination: what the last answer was (IIId: the entry's own
        # identification was accepted and the rest is incomplete)
        said = ""
        if pkts:
            last = pkts[-1]
            said = f"answered {type(last).__name__}" + (
                f" {_outcome(last)}" if isinstance(last, CStRp) else "") + ", "
        return said + ("closed by the gateway" if eof else "left open (client closed)")

    def _flood(self) -> dict:
        """A client that floods Get inquiries and never reads the replies."""
        n = self.a.flood_bytes
        pkt = encode_rci(CGtSnIq.one(SensorType.RELENCODER, 0, GetSensorStatus.DATA))
        blob = pkt * (n // len(pkt))
        before = S.snapshot(self.rci.pid)
        c = self.session()
        sent = 0
        blocked = False
        t0 = now()
        try:
            c.sock.settimeout(5.0)
            view = memoryview(blob)
            while sent < len(blob):
                try:
                    sent += c.sock.send(view[sent:sent + 65536])
                except socket.timeout:
                    blocked = True
                    break
            # let the gateway work through what it read: until its CPU use settles
            busy_until = now()
            last = S.snapshot(self.rci.pid)
            during = last
            for _ in range(40):
                time.sleep(0.5)
                cur = S.snapshot(self.rci.pid)
                if cur is None or last is None:
                    break
                during = cur if cur.rss >= during.rss else during
                if cur.cpu_s - last.cpu_s < 0.15:
                    break
                busy_until = now()
                last = cur
        finally:
            c.close()
        elapsed = now() - t0
        time.sleep(1.5)
        after = S.snapshot(self.rci.pid)
        ok, dt, _ = self.rci_check(timeout=20)
        res = {"bytes_offered": len(blob), "bytes_sent": sent, "inquiries": sent // len(pkt),
               "sender_blocked": blocked, "seconds": elapsed, "gateway_busy_s": busy_until - t0,
               "rss_before": before.rss if before else None,
               "rss_during": during.rss if during else None,
               "rss_after_close": after.rss if after else None,
               "served_after": dt if ok else None}
        self.log(f"E flood: {sent} B of inquiries never read; gateway RSS "
                 f"{_mib(res['rss_before'])} -> {_mib(res['rss_during'])} -> "
                 f"{_mib(res['rss_after_close'])} MiB")
        return res

    # ============================================================== step B
    def step_kill_hw(self):
        a = self.a
        mon = self.monitor
        delays = [a.restart_delay] if self.quick else \
            [a.restart_delay, a.hardware_gone + 2.0, 0.2, a.restart_delay]
        ca = DrivingCA(self.rci_port, duty=20.0, period=0.05)
        ca.start()
        ca.driving.wait(15)
        rows = []
        gw_before = {n: S.snapshot(ch.pid) for n, ch in (("rci_gateway", self.rci),
                                                         ("rdi_gateway", self.rdi))}
        for k in range(a.hw_kills):
            delay = delays[k % len(delays)]
            if not self.budget("B", delay + 45):
                break
            time.sleep(1.0)                 # steady driving before the kill
            old = self.hw
            t_kill = old.kill()
            old.wait(10)
            time.sleep(delay)
            w_states = mon.watch("states", lambda s: True)    # only the new node publishes
            t_restart = now()
            hw = self.start_hw()
            up = hw.wait_log(r"hardware node: backend sim", 60)
            t_up = now() if up else None
            hs = mon.wait(w_states, 30)
            # commands work again: the first acknowledged Set Motor after the restart
            t_ok = None
            deadline = now() + 45
            while now() < deadline and t_ok is None:
                for t, what, out, _ in ca.snapshot():
                    if t > t_restart and what == "CStMt" and out == "ok":
                        t_ok = t
                        break
                else:
                    time.sleep(0.05)
            ev = [e for e in ca.snapshot() if t_kill < e[0] <= (t_ok or now())]
            seen = Counter(f"{what} {out}" for _, what, out, _ in ev)
            first_bad = next((e for e in ev if e[2] != "ok"), None)
            terms = [(e[0] - t_kill, e[2]) for e in ev if e[2].startswith("CSvTm")]
            row = {"restart_delay": delay,
                   "kill_to_first_failure": first_bad[0] - t_kill if first_bad else None,
                   "first_failure": f"{first_bad[1]} {first_bad[2]}" if first_bad else None,
                   "kill_to_term": terms[0][0] if terms else None,
                   "terms": [x[1] for x in terms],
                   "restart_to_node_up": t_up - t_restart if t_up else None,
                   "restart_to_states": hs[0] - t_restart if hs else None,
                   "restart_to_commands_ok": t_ok - t_restart if t_ok else None,
                   "kill_to_commands_ok": t_ok - t_kill if t_ok else None,
                   "seen": dict(seen)}
            rows.append(row)
            self.log(f"B kill #{k} (restart after {delay:.1f} s): CA saw {dict(seen)}; "
                     f"commands ok {_ms(row['restart_to_commands_ok'])} ms after the restart")
            if t_ok is None:        # what the gateway and the new node said, for the reader
                for ch in (self.rci, hw):
                    tail = ch.log_path.read_text(errors="replace").splitlines()[-25:]
                    self.log(f"B kill #{k}: no acked Set Motor; {ch.log_path.name} ends:\n  "
                             + "\n  ".join(tail))
        ca.stop()
        rdi_ok = (self.rdi_check(self.rdi_ports["realtime"], timeout=5) and
                  self.rdi_check(self.rdi_ports["ca"], need_sensor=False, timeout=5))
        gw_after = {n: S.snapshot(ch.pid) for n, ch in (("rci_gateway", self.rci),
                                                        ("rdi_gateway", self.rdi))}
        self.report["steps"]["B_kill_hardware"] = {
            "kills": rows, "hardware_gone_s": a.hardware_gone,
            "summary": {k: S.summary([r[k] for r in rows])
                        for k in ("kill_to_first_failure", "restart_to_node_up",
                                  "restart_to_states", "restart_to_commands_ok",
                                  "kill_to_commands_ok")},
            "recovered_all": bool(rows) and all(r["restart_to_commands_ok"] is not None
                                                for r in rows),
            "rdi_serves_after_restarts": rdi_ok,
            "gateways_across_restarts": {
                n: S.leak_check(gw_before[n].to_dict() if gw_before[n] else None,
                                gw_after[n].to_dict() if gw_after[n] else None)
                for n in gw_before}}

    # ============================================================== crashes
    def crash_report(self, final: bool) -> dict:
        out = {}
        for ch in self.children:
            txt = ch.text()
            tb = txt.count("Traceback")
            internal = len(re.findall(r"internal error|unexpected error", txt))
            alive = ch.alive()
            is_ca = ch.name.startswith("ca_")
            expected_dead = ch.expected_death or (is_ca and ch.returncode == 0)
            out[ch.name] = {"pid": ch.pid, "alive": alive, "returncode": ch.popen.returncode,
                            "expected_death": ch.expected_death, "tracebacks": tb,
                            "internal_errors": internal,
                            "shutdown_warnings": txt.count("Task was destroyed but it is pending"),
                            "crashed": tb > 0 or internal > 0 or (
                                not alive and not expected_dead and not final)}
        return out

    # ================================================================= run
    def run(self) -> dict:
        a = self.a
        self.report["config"] = {
            "quick": self.quick, "seed": a.seed, "watchdog_s": a.watchdog,
            "hardware_gone_s": a.hardware_gone, "error_rate": a.error_rate,
            "ca_kills": a.ca_kills, "ca_silent": a.ca_silent, "hw_kills": a.hw_kills,
            "rdi_cycles": a.rdi_cycles, "corpus": a.corpus, "flood_bytes": a.flood_bytes,
            "max_seconds": a.max_seconds, "namespace": self.ns,
            "ros_domain_id": os.environ["ROS_DOMAIN_ID"],
            "discovery_range": os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"],
            "command": "scripts/with_env.sh python bsal_ros/test/fault_campaign.py"
                       + (" --quick" if self.quick else ""),
            "machine": machine()}
        try:
            self.start()
            self.warm_up()
            self.snap_all("baseline")
            threading.Thread(target=self._sampler, daemon=True, name="rss-sampler").start()
            self.step_faults()
            self.snap_all("after_A")
            self.step_kill_ca()
            self.step_fault_then_disconnect()
            self.snap_all("after_C")
            self.step_rdi()
            self.snap_all("after_D")
            self.step_corpus()
            self.snap_all("after_E")
            self.step_kill_hw()
            time.sleep(2.0)
            self.snap_all("final")
            self.report["crashes_during_run"] = self.crash_report(final=False)
        except Exception as exc:   # noqa: BLE001 - report what we have, then clean up
            import traceback
            self.report["campaign_error"] = "".join(traceback.format_exception(exc))
            self.log("campaign error: " + repr(exc))
        finally:
            self.shutdown()
        self.report["elapsed_s"] = now() - self.t_start
        self.report["cut_short"] = self.cut_short
        self.summarize()
        return self.report

    def shutdown(self):
        self._sampling.set()
        self.report["memory_trend"] = self.memory_trend()
        if self.monitor is not None:
            try:
                self.monitor.close()
            except Exception as exc:  # noqa: BLE001
                self.report["notes"].append(f"monitor close: {exc!r}")
        exits = {}
        for ch in reversed(self.children):
            if ch.alive():
                exits[ch.name] = ch.stop()
            else:
                ch.stop()
        self.report["exit_codes_after_sigterm"] = exits
        self.report["crashes_after_shutdown"] = self.crash_report(final=True)
        leftovers = [ch.pid for ch in self.children if ch.alive()]
        self.report["processes_left"] = leftovers

    # ============================================================== summary
    def summarize(self):
        r = self.report
        during = r.get("crashes_during_run", {})
        after = r.get("crashes_after_shutdown", {})
        crashes = sorted({n for n, c in during.items() if c["crashed"]} |
                         {n for n, c in after.items() if c["tracebacks"] or c["internal_errors"]})
        unclean = {n: rc for n, rc in r.get("exit_codes_after_sigterm", {}).items() if rc != 0}
        snaps = r["snapshots"]
        leaks = {}
        base = snaps.get("baseline", {})
        fin = snaps.get("final", {})
        pre_b = snaps.get("after_E", {})
        for n in ("rci_gateway", "rdi_gateway"):
            leaks[n] = S.leak_check(base.get(n), fin.get(n))
        leaks["hardware_node"] = S.leak_check(base.get("hardware_node"),
                                              pre_b.get("hardware_node"))
        r["leaks"] = leaks
        steps = r["steps"]
        r["verdict"] = {
            "crashes": crashes, "crash_count": len(crashes), "unclean_exits": unclean,
            "fd_leaks": [n for n, l in leaks.items() if l.get("fd_leak")],
            "thread_leaks": [n for n, l in leaks.items() if l.get("thread_leak")],
            "faults_detected": steps.get("A_i2c_faults", {}).get("detected_all", False),
            "faults_recovered": steps.get("A_i2c_faults", {}).get("recovered_all", False),
            "motors_stopped_after_killed_client":
                steps.get("C_kill_ca", {}).get("all_stopped", False),
            "motors_stopped_after_disconnect_during_board_fault":
                steps.get("C3_disconnect_during_board_fault", {}).get("all_stopped", False),
            "commands_work_after_hw_restart":
                steps.get("B_kill_hardware", {}).get("recovered_all", False),
            "rdi_checks_passed": (steps.get("D_rdi_churn", {}).get("checks_passed", -1)
                                  == steps.get("D_rdi_churn", {}).get("checks", -2)),
            "rci_served_after_every_entry": (
                steps.get("E_rci_corpus", {}).get("entries", 0) > 0
                and not steps.get("E_rci_corpus", {}).get("not_served")),
            "campaign_error": "campaign_error" in r,
            "processes_left": r.get("processes_left", [])}

    def cleanup_logs(self, keep: bool):
        if self._own_logdir and not keep:
            shutil.rmtree(self.logdir, ignore_errors=True)


# ============================================================================ report
def _ms(x) -> str:
    return "-" if x is None else f"{x * 1e3:.0f}"


def _mib(x) -> str:
    return "-" if x is None else f"{x / 1048576:.1f}"


def _board_stamp(hit) -> float:
    st = hit[2].header.stamp
    return st.sec + st.nanosec * 1e-9


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} cores ({model or platform.machine()}), "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}")


def _sum_cell(s: dict) -> str:
    if not s or not s.get("n"):
        return "-" + (f" ({s['failed']} failed)" if s and s.get("failed") else "")
    out = f"{S.fmt_ms(s, 'p50')} / {S.fmt_ms(s, 'max')}"
    if s.get("failed"):
        out += f" ({s['failed']} never)"
    return out


def markdown(r: dict) -> str:
    c = r["config"]
    v = r.get("verdict", {})
    L = []
    w = L.append
    w(f"Fault campaign ({'quick' if c.get('quick') else 'long'} version): "
      f"`{c.get('command')}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
      f"{c.get('machine')}, {r.get('elapsed_s', 0):.0f} s, seed {c.get('seed')}, "
      f"ROS_AUTOMATIC_DISCOVERY_RANGE={c.get('discovery_range')}.")
    w("")
    w("Verdict")
    w("")
    w(f"- crashes: **{v.get('crash_count')}** {v.get('crashes') or ''}; unclean exits after "
      f"SIGTERM: {v.get('unclean_exits') or 'none'}; processes left: "
      f"{v.get('processes_left') or 'none'}")
    w(f"- fd leaks: {v.get('fd_leaks') or 'none'}; thread leaks: "
      f"{v.get('thread_leaks') or 'none'} (tolerance +{S.FD_TOLERANCE} fds, "
      f"+{S.THREAD_TOLERANCE} threads)")
    w(f"- I2C faults detected: {v.get('faults_detected')}, recovered: "
      f"{v.get('faults_recovered')}; motors stopped after every killed / silent client: "
      f"{v.get('motors_stopped_after_killed_client')}; drive stopped after a client left "
      f"during a drive-board fault: {v.get('motors_stopped_after_disconnect_during_board_fault')}"
      f"; commands work after every hardware "
      f"node restart: {v.get('commands_work_after_hw_restart')}")
    w(f"- RDI checks passed: {v.get('rdi_checks_passed')}; well-behaved RCI client served "
      f"after every malformed input: {v.get('rci_served_after_every_entry')}")
    if r.get("cut_short"):
        w(f"- steps cut short by the time budget: {r['cut_short']}")
    if r.get("campaign_error"):
        w("- campaign error:\n\n```\n" + r["campaign_error"][-3000:] + "\n```")
    st = r["steps"]
    A = st.get("A_i2c_faults")
    if A:
        w("")
        w(f"A. I2C faults (sim_control set_fault, error rate {A['error_rate']}; injected at a "
          f"random phase of the {A['diag_period_s']:g} s diagnostics period, held "
          f"{A['hold_s']} s + a random part of a period after ERROR), ms p50 / max over "
          f"{len(A['injections'])} injections:")
        w("")
        w("| fault | injection -> device_states not ok | injection -> /diagnostics ERROR | "
          "clear -> device_states ok | clear -> /diagnostics OK |")
        w("|---|---|---|---|---|")
        for f, s in A["summary"].items():
            w(f"| {f} | {_sum_cell(s['to_state_bad'])} | {_sum_cell(s['to_error'])} | "
              f"{_sum_cell(s['clear_to_state_ok'])} | {_sum_cell(s['clear_to_ok'])} |")
        w("")
        w("Per injection (ms): " + "; ".join(
            f"{x['fault']} {x['board']}: {_ms(x['to_error'])} / {_ms(x['clear_to_ok'])}"
            for x in A["injections"]))
        if A["ca_answers"]:
            w("")
            w("A control application driving meanwhile (Set Motor drive 10 %, 12-sonar Get "
              "every 0.1 s) was answered: " + "; ".join(
                  f"{tag}: {', '.join(f'{k} x{n}' for k, n in sorted(cnt.items()))}"
                  for tag, cnt in A["ca_answers"].items()))
    C = st.get("C_kill_ca")
    if C:
        w("")
        w("C. Control application killed / silent -> drive motor stopped (first "
          "`device_states` with speedval 0, received by the monitor), ms p50 / max:")
        w("")
        w("| case | n | time | goal | met |")
        w("|---|---|---|---|---|")
        w(f"| SIGKILL while driving (closed socket) | {C['closed_summary'].get('n', 0)} | "
          f"{_sum_cell(C['closed_summary'])} (board reading stamped "
          f"{_sum_cell(C['closed_board_stamp_summary'])}) | < 100 | {C['goal_closed_met']} |")
        w(f"| silent (last packet -> stopped) | {C['silent_summary'].get('n', 0)} | "
          f"{_sum_cell(C['silent_summary'])} (CSvTm at {_sum_cell(C['silent_term_summary'])}) | "
          f"<= watchdog {C['watchdog_s']:.1f} s + check {C['watchdog_check_s']:.2f} s + 100 ms "
          f"| {C['goal_silent_met']} |")
        terms = Counter(str(x.get("terms")) for x in C["silent"])
        w("")
        w(f"Silent clients were sent: {dict(terms)}.")
    C3 = st.get("C3_disconnect_during_board_fault")
    if C3:
        w("")
        w("C3. The control application (drive at 30 %) leaves while the drive board is "
          "faulted, the fault is cleared 1 s later; is the drive stopped within "
          f"{C3['stop_wait_s']:g} s after the board is back?")
        w("")
        w("| fault | board back after clear (ms) | speed when back | drive stopped "
          "(ms after the client left) |")
        w("|---|---|---|---|")
        for x in C3["cases"]:
            spd = "-" if x["speed_when_back"] is None else f"{x['speed_when_back']:.1f} %"
            stopped = (_ms(x["stopped_after_close"]) if x["stopped_after_close"] is not None
                       else f"**no: still {spd} {x['still_running_after_s']:.1f} s later**")
            w(f"| {x['fault']} | {_ms(x['board_back_after_clear'])} | {spd} | {stopped} |")
    D = st.get("D_rdi_churn")
    if D:
        lk = D["leak"]
        w("")
        w(f"D. RDI: {D['cycles']} connect/disconnect cycles in {D['seconds']:.1f} s "
          f"({D['by_mode']}), errors {D['errors'] or 'none'}; well-behaved client checks "
          f"{D['checks_passed']}/{D['checks']}; rdi_gateway fds {lk.get('fds'):+d}, threads "
          f"{lk.get('threads'):+d}, RSS {_mib(lk.get('rss'))} MiB (first half of the cycles "
          f"{_mib(D['rss_first_half'])}, second half {_mib(D['rss_second_half'])})."
          if lk.get("checked") else f"D. RDI: {D}")
    E = st.get("E_rci_corpus")
    if E:
        lk = E["leak"]
        w("")
        w(f"E. Malformed RCI input: {E['entries']} entries (seed {E['seed']}); a well-behaved "
          f"client was served after {E['served']}/{E['entries']} (time to served p50 / max "
          f"{_sum_cell(E['served_after'])} ms); rci_gateway fds {lk.get('fds', 0):+d}, "
          f"threads {lk.get('threads', 0):+d}, RSS {_mib(lk.get('rss'))} MiB (first half of "
          f"the entries {_mib(E['rss_first_half'])}, second half {_mib(E['rss_second_half'])}). "
          "Outcomes:")
        w("")
        w("| category | what the gateway did (count) |")
        w("|---|---|")
        for cat, cnt in E["outcomes"].items():
            w(f"| {cat} | {', '.join(f'{k} x{n}' for k, n in sorted(cnt.items()))} |")
        if E["not_served"]:
            w("")
            w("Not served after: " + "; ".join(E["not_served"]))
        f = E.get("flood")
        if f:
            w("")
            w(f"Flood: a client sent {f['bytes_sent']} B ({f['inquiries']} Get inquiries) "
              f"and never read a reply (sender blocked: {f['sender_blocked']}; the gateway "
              f"worked on them for about {f['gateway_busy_s']:.1f} s); rci_gateway RSS "
              f"{_mib(f['rss_before'])} -> "
              f"{_mib(f['rss_during'])} MiB while connected -> {_mib(f['rss_after_close'])} MiB "
              f"after close; next client served after {_ms(f['served_after'])} ms.")
    B = st.get("B_kill_hardware")
    if B:
        w("")
        w(f"B. hardware_node SIGKILLed while a control application drives (Set Motor + Get "
          f"every 50 ms), restarted after a delay; hardware_gone_s {B['hardware_gone_s']} s. "
          "ms p50 / max:")
        w("")
        s = B["summary"]
        w("| kill -> first failed answer | restart -> node up | restart -> device_states | "
          "restart -> commands ok | kill -> commands ok |")
        w("|---|---|---|---|---|")
        w(f"| {_sum_cell(s['kill_to_first_failure'])} | {_sum_cell(s['restart_to_node_up'])} | "
          f"{_sum_cell(s['restart_to_states'])} | {_sum_cell(s['restart_to_commands_ok'])} | "
          f"{_sum_cell(s['kill_to_commands_ok'])} |")
        w("")
        w(f"After the restarts both RDI streams still serve a well-behaved client: "
          f"{B.get('rdi_serves_after_restarts')}.")
        w("")
        for k in B["kills"]:
            w(f"- restart after {k['restart_delay']:.1f} s: first failure {k['first_failure']} "
              f"at {_ms(k['kill_to_first_failure'])} ms; CSvTm {k['terms'] or 'none'}"
              f"{' at ' + _ms(k['kill_to_term']) + ' ms' if k['kill_to_term'] else ''}; "
              f"commands ok {_ms(k['kill_to_commands_ok'])} ms after the kill; the application "
              f"saw {k['seen']}")
    mt = r.get("memory_trend") or {}
    if mt:
        w("")
        w("Memory over the run (RSS sampled every second): " + "; ".join(
            f"{n}: {m['first_mib']:.1f} -> {m['last_mib']:.1f} MiB (max {m['max_mib']:.1f})"
            for n, m in mt.items()))
    w("")
    w("Resources (fds / threads / RSS MiB / TCP sockets):")
    w("")
    labels = list(r["snapshots"])
    w("| process | " + " | ".join(labels) + " |")
    w("|---|" + "---|" * len(labels))
    for n in ("hardware_node", "rci_gateway", "rdi_gateway"):
        cells = []
        for lab in labels:
            x = r["snapshots"][lab].get(n)
            cells.append("-" if not x else
                         f"{x['fds']} / {x['threads']} / {x['rss'] / 1048576:.1f} / {x['tcp']}"
                         + ("*" if x.get("instance", "").endswith(tuple("123456789")) else ""))
        w(f"| {n} | " + " | ".join(cells) + " |")
    w("")
    w("(* a restarted hardware node instance; its leak check uses baseline -> after_E, the "
      "first instance.)")
    w("")
    lk = r.get("leaks", {})
    w("Leak check (baseline -> final; hardware node baseline -> after_E): " + "; ".join(
        f"{n}: fds {l['fds']:+d}, threads {l['threads']:+d}, RSS {l['rss'] / 1048576:+.1f} MiB"
        for n, l in lk.items() if l.get("checked")))
    return "\n".join(L)


# ============================================================================== main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a short version (the test suite's)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", help="write the full report as JSON here")
    p.add_argument("--logdir", help="process logs here (default: a temporary folder)")
    p.add_argument("--keep-logs", action="store_true", help="keep the temporary log folder")
    p.add_argument("--watchdog", type=float, default=2.0, help="rci_gateway watchdog_s")
    p.add_argument("--hardware-gone", type=float, default=3.0, help="rci_gateway hardware_gone_s")
    p.add_argument("--error-rate", type=float, default=0.9, help="injected I2C error rate")
    p.add_argument("--fault-hold", type=float, default=0.3,
                   help="s a fault stays after its ERROR was seen (plus a random part of "
                        "the diagnostics period)")
    p.add_argument("--diag-period", type=float, default=1.0,
                   help="hardware_node diagnostics_period (the shipped default)")
    p.add_argument("--fault-reps", type=int, default=2, help="long version: rounds of faults")
    p.add_argument("--ca-kills", type=int)
    p.add_argument("--ca-silent", type=int)
    p.add_argument("--hw-kills", type=int)
    p.add_argument("--restart-delay", type=float, default=1.0)
    p.add_argument("--stop-wait", type=float,
                   help="C3: s to wait for the drive to stop after the board is back")
    p.add_argument("--rdi-cycles", type=int)
    p.add_argument("--corpus", type=int)
    p.add_argument("--flood-bytes", type=int)
    p.add_argument("--max-seconds", type=float)
    a = p.parse_args(argv)
    quick = {"ca_kills": 2, "ca_silent": 1, "hw_kills": 1, "rdi_cycles": 60, "corpus": 24,
             "flood_bytes": 32 * 1024, "stop_wait": 2.0, "max_seconds": 150.0}
    long = {"ca_kills": 20, "ca_silent": 5, "hw_kills": 4, "rdi_cycles": 1000, "corpus": 240,
            "flood_bytes": 1024 * 1024, "stop_wait": 5.0, "max_seconds": 1200.0}
    for k, v in (quick if a.quick else long).items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    return a


def main(argv=None) -> int:
    a = parse_args(argv)
    camp = Campaign(a)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    try:
        report = camp.run()
    except KeyboardInterrupt:
        camp.shutdown()
        print("[faults] interrupted; every process started was stopped", file=sys.stderr)
        return 130
    text = markdown(report)
    print(text)
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1, default=str))
    v = report["verdict"]
    bad = v["crash_count"] or v["campaign_error"] or v["processes_left"]
    camp.cleanup_logs(keep=a.keep_logs or bool(bad))
    if bad:
        print(f"[faults] logs kept in {camp.logdir}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
