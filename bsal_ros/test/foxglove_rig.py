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

"""The processes of bench/bench_foxglove.py and what it reads of them (no tests here).

    python foxglove_rig.py publish RATE TOPIC   # from bsal_ros/test/
    python foxglove_rig.py floor TOPIC
    python foxglove_rig.py traced TOPIC FILE BRAK_BRINGUP_ARGS...

``publish``: a ``std_msgs/msg/Header`` on TOPIC (reliable, depth 10) at RATE
Hz, its stamp the publish time (CLOCK_REALTIME, taken just before
``publish``), its ``frame_id`` a sequence number, until stdin closes.

``floor``: a bare rclpy subscriber of TOPIC (DDS only, the EventsExecutor
every bsal_ros executable spins), its latency = receipt time - stamp; on
stdin ``start`` clears the samples, ``stop`` prints them (JSON), end of input
ends it. Both print ``{"ready": true}`` first.

``traced``: brak_bringup whose Foxglove channel of TOPIC is timed inside the
gateway (``foxglove.Channel.log`` wrapped; nothing else changes): for each
message, its wall time, stamp -> the gateway's callback (the CDR Header's
stamp read in place) and the time ``log`` took; written to FILE (JSON) when
the bridge stops.

In the benchmark's process: :class:`Processes` (every child, stopped by PID),
:class:`Bridge` (brak_bringup on free ports), :func:`start_peers` (the probe
and its floor), :class:`CpuWindow` and :func:`thread_cpu` (CPU from /proc),
:func:`rss_kb`, :func:`slope_per_min`, :func:`load` and :class:`LegacyLoop`
(legacy/build/client-app again and again).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import re
import select
import signal
import statistics
import subprocess
import sys
import threading
import time

from child_process import Child, cpu_seconds, die_with_parent

ROOT = Path(__file__).resolve().parents[2]
UP = re.compile(r"Brak is up: .*RCI 127\.0\.0\.1:(\d+), "
                r"RDI 127\.0\.0\.1 \(realtime :(\d+), ca :(\d+)\)")
FOXGLOVE = re.compile(r"Foxglove gateway: wss?://127\.0\.0\.1:(\d+)")
ERROR_LINE = re.compile(r"\[ERROR\]|Traceback \(most recent call last\)")


def say(obj) -> None:
    """One JSON line on stdout."""
    print(json.dumps(obj), flush=True)


def publish(rate: float, topic: str) -> None:
    """Publish the probe at ``rate`` Hz until stdin closes."""
    import rclpy
    from std_msgs.msg import Header
    rclpy.init()
    node = rclpy.create_node("bench_probe_publisher")
    pub = node.create_publisher(Header, topic, 10)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    say({"ready": True})
    period, nxt, seq = 1.0 / rate, time.monotonic(), 0
    while not done.is_set() and rclpy.ok():
        msg = Header(frame_id=str(seq))
        msg.stamp.sec, msg.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        try:
            pub.publish(msg)
        except Exception:     # noqa: BLE001 - SIGTERM shut the context down meanwhile
            break
        seq += 1
        nxt += period
        done.wait(max(0.0, nxt - time.monotonic()))
    node.destroy_node()
    rclpy.try_shutdown()


def floor(topic: str) -> None:
    """Receive the probe as a bare rclpy node, under ``start``/``stop`` on stdin.
    One thread: the executor is spun in slices and stdin looked at between them
    (a reader thread beside EventsExecutor.spin() was starved of the GIL)."""
    import rclpy
    from std_msgs.msg import Header
    from bsal_ros.nodes.runtime import make_executor
    rclpy.init()
    node = rclpy.create_node("bench_probe_floor")
    lat: list[float] = []

    def got(msg):
        t = time.time_ns()
        lat.append((t - msg.stamp.sec * 1_000_000_000 - msg.stamp.nanosec) / 1e6)

    node.create_subscription(Header, topic, got, 10)
    executor = make_executor()
    executor.add_node(node)
    say({"ready": True})
    try:
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.05)
            if not select.select([sys.stdin], [], [], 0)[0]:
                continue
            line = sys.stdin.readline()
            if not line:
                break
            if line.strip() == "start":
                lat.clear()
                say({"started": True})
            elif line.strip() == "stop":
                say({"latency_ms": [round(x, 3) for x in lat]})
    except KeyboardInterrupt:
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


def traced(topic: str, out: str, argv: list[str]) -> int:
    """Run brak_bringup with ``argv``, the channel of ``topic`` timed (see above)."""
    import atexit
    import struct
    from foxglove.channel import Channel
    rows: list[tuple[float, float, float]] = []
    log = Channel.log

    def timed(self, msg, **kw):
        if self.topic() != topic:
            return log(self, msg, **kw)
        t0 = time.time_ns()
        sec, nsec = struct.unpack_from("<iI", msg, 4)     # after the CDR header
        log(self, msg, **kw)
        rows.append((t0 / 1e9, (t0 - sec * 1_000_000_000 - nsec) / 1e6,
                     (time.time_ns() - t0) / 1e6))

    Channel.log = timed
    atexit.register(lambda: Path(out).write_text(json.dumps(rows)))
    from bsal_ros.nodes import bringup
    return bringup.main(argv, hard_exit=False)


class LegacyLoop:
    """legacy/build/client-app (the book's example program: connect, home,
    drive, read, stop) run again and again against an RCI port, in a thread."""

    def __init__(self, client_app, port: int):
        from bsal_ros.rci.users import DEMO_KEY
        self.cmd = [str(client_app), "127.0.0.1", str(port), "demo", DEMO_KEY.hex()]
        self.runs = 0
        self.failed: list[str] = []
        self._stopping = threading.Event()
        self._proc = None
        self._lock = threading.Lock()      # no run starts once stop() has begun
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while True:
            with self._lock:
                if self._stopping.is_set():
                    return
                self._proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT, text=True,
                                              preexec_fn=die_with_parent)
            try:
                out, _ = self._proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                out, _ = self._proc.communicate()
                self.failed.append(f"timed out: {out[-300:]!r}")
                continue
            if self._stopping.is_set() and self._proc.returncode == -signal.SIGTERM:
                break           # ended by stop(), mid-run
            self.runs += 1
            if self._proc.returncode != 0:
                self.failed.append(f"exit {self._proc.returncode}: {out[-300:]!r}")

    def stop(self) -> None:
        """End the loop; the run in progress gets SIGTERM (SIGKILL after 30 s)."""
        with self._lock:
            self._stopping.set()
            p = self._proc
        if p is not None and p.poll() is None:
            p.terminate()
        self._thread.join(30)
        if p is not None and p.poll() is None:
            p.kill()
            p.wait(5)


# ---------------------------------------------------- in the benchmark's process
def load() -> str:
    """The load average now, for the heading of a part."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} (1 / 5 / 15 min)"


def slope_per_min(samples):
    """Least-squares slope of (t_s, value) samples, per minute."""
    if len(samples) < 2:
        return float("nan")
    mt = statistics.fmean(t for t, _ in samples)
    mv = statistics.fmean(v for _, v in samples)
    den = sum((t - mt) ** 2 for t, _ in samples)
    return 60 * sum((t - mt) * (v - mv) for t, v in samples) / den if den else float("nan")


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of a process's threads, summed by thread name (digits dropped)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            raw = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        name = raw[raw.index("(") + 1:raw.rindex(")")].rstrip("0123456789-#.")
        fields = raw.rsplit(")", 1)[1].split()
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def rss_kb(pid: int) -> int:
    """Resident set size of a process, kB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class CpuWindow:
    """CPU seconds of some processes between ``open()`` and ``close()``, as % of one core."""

    def __init__(self, **pids):
        self.pids = pids
        self.t0 = self.t1 = 0.0
        self.c0: dict = {}
        self.c1: dict = {}

    def open(self):
        """Start the window."""
        self.t0 = time.monotonic()
        self.c0 = {k: cpu_seconds(p) for k, p in self.pids.items()}
        return self

    def close(self):
        """End the window."""
        self.t1 = time.monotonic()
        self.c1 = {k: cpu_seconds(p) for k, p in self.pids.items()}
        return self

    def pct(self, key) -> float:
        """% of one core ``key`` used in the window."""
        return 100 * (self.c1[key] - self.c0[key]) / (self.t1 - self.t0)


# ------------------------------------------------------------ child processes
def read_line(child: Child, timeout: float) -> dict:
    """The next JSON line a piped child writes (RuntimeError on timeout or exit)."""
    ready, _, _ = select.select([child.popen.stdout], [], [], timeout)
    line = child.popen.stdout.readline() if ready else ""
    if not line:
        raise RuntimeError(f"{child.name}: no answer within {timeout:.0f} s"
                           f" (exit {child.popen.poll()}); log tail:\n{child.text()[-2000:]}")
    return json.loads(line)


def ask(child: Child, command: str, timeout: float = 60.0) -> dict:
    """One command line to a piped child, its JSON answer back."""
    child.popen.stdin.write(command + "\n")
    child.popen.stdin.flush()
    return read_line(child, timeout)


class Processes:
    """Every child this run starts, stopped by PID in reverse order at the end."""

    def __init__(self, logdir: Path):
        self.logdir = logdir
        self.children: list[Child] = []
        self.serial = 0

    def start(self, name, cmd, pipes=False, env=None) -> Child:
        """Start ``cmd``; its output goes to ``logdir/name-N.log``."""
        self.serial += 1
        c = Child(f"{name}-{self.serial}", [str(x) for x in cmd], self.logdir, ROOT,
                  env=env, pipes=pipes)
        self.children.append(c)
        return c

    def stop(self, child: Child, timeout: float = 10.0):
        """Stop one child (SIGTERM, SIGKILL after ``timeout``); returns its exit status."""
        if child in self.children:
            self.children.remove(child)
        return child.stop(timeout)

    def stop_all(self):
        """Stop every child still running, newest first."""
        for c in reversed(list(self.children)):
            self.stop(c)


def start_peers(procs: Processes, rate: float, topic: str):
    """(probe publisher, floor subscriber) of ``topic`` (this file's ``publish``
    and ``floor``), both ready."""
    probe = procs.start("probe", [sys.executable, __file__, "publish", rate, topic], pipes=True)
    floor = procs.start("floor", [sys.executable, __file__, "floor", topic], pipes=True)
    for k in (probe, floor):
        read_line(k, 60)
    return probe, floor


class Bridge:
    """brak_bringup on the simulated robot, every port free."""

    def __init__(self, procs: Processes, foxglove: bool = True, rdi_clients: int = 0,
                 trace: tuple[str, Path] | None = None):
        self.procs = procs
        cmd = [sys.executable, *(["-m", "bsal_ros.nodes.bringup"] if trace is None else
                                 [__file__, "traced", *trace]),
               "--rci-port", "0", "--rdi-realtime-port", "0", "--rdi-ca-port", "0"]
        # the gateway serves Brak's page too (issue 51): a free port for it as well
        cmd += ["--foxglove-port", "0", "--page-port", "0"] if foxglove else ["--no-foxglove"]
        if rdi_clients > 64:        # the RDI gateway's max_clients default
            import yaml
            from bsal_ros.paths import shipped
            cfg = yaml.safe_load(shipped("config", "gateways.yaml").read_text())
            cfg["/**/rdi_gateway"]["ros__parameters"]["max_clients"] = rdi_clients
            path = procs.logdir / "gateways.yaml"
            path.write_text(yaml.safe_dump(cfg))
            cmd += ["--gateways-config", path]
        self.child = procs.start("bridge", cmd)
        self.pid = self.child.pid
        m = self.child.wait_log(UP.pattern, 120)
        self.rci, self.rdi_realtime, self.rdi_ca = (int(g) for g in m.groups())
        self.foxglove = int(self.child.wait_log(FOXGLOVE.pattern, 30).group(1)) if foxglove else 0

    @property
    def url(self) -> str:
        """The gateway's WebSocket address."""
        return f"ws://127.0.0.1:{self.foxglove}"

    def errors(self, since: int = 0, until: int | None = None) -> list[str]:
        """The ERROR lines (and tracebacks) of the bridge's log, from character
        ``since`` to ``until`` (the end)."""
        text = self.child.text()[since:until]
        return [ln for ln in text.splitlines() if ERROR_LINE.search(ln)]

    def stop(self):
        """SIGTERM by PID; returns its exit status."""
        return self.procs.stop(self.child, 30)


if __name__ == "__main__":
    if sys.argv[1] == "publish":
        publish(float(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "traced":
        sys.exit(traced(sys.argv[2], sys.argv[3], sys.argv[4:]))
    else:
        floor(sys.argv[2])
