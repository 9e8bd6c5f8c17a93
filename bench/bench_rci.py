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

"""RCI latency as a legacy program sees it: a separate client process, both
deployments, floors measured in the same run, before and after.

    scripts/with_env.sh python bench/bench_rci.py [--samples 2000]
        [--deployments one,per-node] [--no-previous] [--before-src DIR]
        [--no-breakdown] [--json FILE]
        [--switch-interval S] [--executor K] [--bus B] [--gw-no-states]
        [--gc-freeze S] [--max-seconds 480] [--quick]

This process is the control application: plain sockets and bsal_ros.protocol,
no rclpy. It starts, as child processes (stopped by PID at the end):

* the bridge, one deployment at a time:
  one      `brak_bringup` (every node in one process, as `make run`);
  per-node `hardware_node`, `rci_gateway`, `rdi_gateway`, one process each
           with the parameters the launch file gives them (as `ros2 launch`);
  each is measured as the executables are (every process on the
  EventsExecutor, bsal_ros.nodes.runtime.make_executor) and
  again with the previous release's executors (a single-threaded bring-up,
  thread pools in the nodes' own mains; ``--no-previous`` skips that), and
  with ``--before-src DIR`` again with the package code in DIR (a folder
  holding an older ``bsal_ros`` package, put first on the bridge's
  PYTHONPATH: before and after a change in one run);
* the floors: a loopback TCP server that answers each request with a reply of
  the RCI path's own sizes, and a std_srvs/Trigger server and client, each in
  its own rclpy process, with SingleThreadedExecutors (rclpy's default),
  MultiThreadedExecutors and rclpy's experimental EventsExecutor (the fastest);
  and the architecture's floor, a relay that turns each Set Motor-sized TCP
  request into one SetMotors call as the gateway makes it (call_async), to a
  server that does no work, answering empty or with the states the real
  answer carries (what is left is the bridge's own work).

Paths: (a) a 12-sonar group Get Sensor inquiry CGtSnIq -> CGtSnRp, against
the TCP floor; (b) Set Motor with RQ_ACK, CStMt -> CCnAc, against the rclpy
floor; (c) a relative-encoder clear with RQ_ACK, CStSn -> CCnAc, alone and
(d) with a Get Sensor DATA of that encoder in the same write (the first read
after a command: until CCnAc and CGtSnRp are both in), against (c) and (b).
Samples are taken in interleaved blocks (path, floor, path, ...), so the
machine's load hits both alike. The client's own protocol cost is measured
apart and printed; the request is encoded before the clock starts, the reply
decoded before it stops. Every figure is printed with its ratio to its floor.

The breakdown (on by default) repeats (b) with timestamps taken inside the
gateway and the hardware node (rci_latency/tracemarks.py, installed from
outside the package by rci_latency/run_node.py): every segment of an acked
command, on one CLOCK_MONOTONIC time line. The experiment options change only
the bridge's processes (--help).

Prints Markdown (scripts/run_bench.py collects it into docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import os
from pathlib import Path
import platform
import shutil
import signal
import socket
import statistics
import struct
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# child processes: the helper the two-host rig uses too (bsal_ros/test/child_process.py)
sys.path.insert(0, str(ROOT / "bsal_ros" / "test"))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

from bsal_ros.paths import shipped  # noqa: E402
from bsal_ros.protocol.constants import (GetSensorStatus, MotorType, RciCode,  # noqa: E402
                                         SensorCommandCode, SensorType)
from bsal_ros.protocol.rci import (CAcMt, CBsTm, CCnAc, CGtSnIq, CGtSnRp,  # noqa: E402
                                   CStSn, encode_rci, RciDecoder, SensorCommand)
from bsal_ros.rci.client import RciClient  # noqa: E402
from bsal_ros.rci.users import DEMO_KEY  # noqa: E402
from child_process import Child, cpu_seconds, STARTED  # noqa: E402
from two_hosts.clients import set_motor, sized_round_trips, sonar_inquiry  # noqa: E402

clock = time.perf_counter_ns       # CLOCK_MONOTONIC on Linux, as in tracemarks.py
RUNNER = ROOT / "bench" / "rci_latency" / "run_node.py"
FLOORS = ROOT / "bench" / "rci_latency" / "floors.py"
SEGMENTS = [
    ("client send -> gateway reads the bytes", "send", "gw_rx"),
    ("gateway: decode, session, port -> request", "gw_rx", "gw_call"),
    ("gateway: send the request (serialise, publish)", "gw_call", "gw_sent"),
    ("request -> hardware node callback starts", "gw_sent", "hw_cb_start"),
    ("hardware node set_motors callback", "hw_cb_start", "hw_cb_end"),
    ("callback end -> the gateway has the answer", "hw_cb_end", "gw_resp"),
    ("answer -> the session's coroutine resumes", "gw_resp", "gw_resumed"),
    ("gateway: finish command, encode reply", "gw_resumed", "gw_tx"),
    ("write reply -> client has decoded it", "gw_tx", "recv"),
]


# ------------------------------------------------------------------ statistics
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100.0 * (len(xs) - 1))))]


def summary(ns):
    """p50 / p99 / p99.9 / mean in ms of a list of ns."""
    return {"n": len(ns), "p50": pct(ns, 50) / 1e6, "p99": pct(ns, 99) / 1e6,
            "p999": pct(ns, 99.9) / 1e6, "mean": statistics.fmean(ns) / 1e6}


def f3(x):
    return f"{x:.3f}"


# ------------------------------------------------------------------ the client
class Client:
    """The control application: one RCI session on a plain blocking socket."""

    def __init__(self, port):
        self.rci = RciClient("127.0.0.1", port, timeout=10)
        self.rci.handshake("demo", DEMO_KEY)
        self.sock = self.rci.sock
        self.sock.settimeout(10)
        self.dec = self.rci.decoder

    def request(self, pkt, data=None):
        """(t_send_ns, t_recv_ns, reply) of one request; data: pkt pre-encoded."""
        t0, t1, out = self.request_replies(encode_rci(pkt) if data is None else data,
                                           (pkt,) if type(pkt) is CGtSnIq else (), 1)
        return t0, t1, out[0]

    def request_replies(self, data, inquiries, n):
        """(t_send_ns, t_recv_ns, replies) of pre-encoded requests answered by
        ``n`` packets; ``inquiries``: the Get inquiries among them, in order. A
        CBsTm the gateway sends on its own (the base time moved, 001 4.6.16)
        is no reply."""
        dec = self.dec
        for q in inquiries:
            dec.expect_reply(q)
        sock = self.sock
        out = []
        t0 = clock()
        sock.sendall(data)
        while len(out) < n:
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError("gateway closed the session")
            out += [p for p in dec.feed(chunk) if type(p) is not CBsTm]
        return t0, clock(), out

    def close(self):
        self.rci.close()


def encoder_clear():
    """Relative encoder 0 cleared, with RQ_ACK (CStSn -> CCnAc)."""
    return CStSn.one(SensorType.RELENCODER, 0,
                     SensorCommand(SensorCommandCode.RELENCODER_CLEAR), rq_ack=True)


def encoder_inquiry():
    """Get Sensor DATA of relative encoder 0."""
    return CGtSnIq.one(SensorType.RELENCODER, 0, GetSensorStatus.DATA)


def motor_commands():
    """The two Set Motor packets the bench alternates (DC 0, duty 10 % / 12 %)."""
    return [set_motor(10.0), set_motor(12.0)]


def client_codec_cost(n=20000):
    """ns per request of the client's own protocol work, per path."""
    inq = sonar_inquiry()
    cmds = motor_commands()
    out = {}
    dec = RciDecoder("big", role="client")
    t0 = clock()
    for _ in range(n):
        encode_rci(inq)
    out["sonar_encode"] = (clock() - t0) / n
    t0 = clock()
    for i in range(n):
        encode_rci(cmds[i & 1])
    out["motor_encode"] = (clock() - t0) / n
    ack = encode_rci(CCnAc(RciCode.CStMt))
    t0 = clock()
    for _ in range(n):
        dec.feed(ack)
    out["motor_decode"] = (clock() - t0) / n
    return out


def sonar_decode_cost(reply_bytes, n=5000):
    dec = RciDecoder("big", role="client")
    inq = sonar_inquiry()
    t0 = clock()
    for _ in range(n):
        dec.expect_reply(inq)
        dec.feed(reply_bytes)
    return (clock() - t0) / n


# ------------------------------------------------------------------ floors
class EchoLink:
    """One connection to the sized echo server: request size in, reply size out."""

    def __init__(self, port, req_size, rep_size):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(struct.pack("!II", req_size, rep_size))
        self.sizes = req_size, rep_size

    def sample(self, n):
        return sized_round_trips(self.sock, *self.sizes, n)

    def close(self):
        self.sock.close()


class RelayLink(EchoLink):
    """One connection to the relay floor: its SetMotors answer bare (0) or
    with the drive board's states (1), request and reply of the RCI sizes."""

    def __init__(self, port, req_size, rep_size, which):
        super().__init__(port, req_size, rep_size)
        self.sock.sendall(struct.pack("!I", which))   # the header's third word


#: CPUs the floors' and the bridge's processes run on (--pin); None: any
SERVER_CPUS: list | None = None


@contextlib.contextmanager
def server_affinity():
    """Processes started inside run on SERVER_CPUS (a child inherits its
    parent's CPU affinity when it is forked)."""
    if SERVER_CPUS is None:
        yield
        return
    own = os.sched_getaffinity(0)
    os.sched_setaffinity(0, SERVER_CPUS)
    try:
        yield
    finally:
        os.sched_setaffinity(0, own)


def parse_pin(text):
    """The client's CPUs and the servers' CPUs: "0/1" -> ([0], [1])."""
    try:
        client, servers = text.split("/")
        return ([int(c) for c in client.split(",")], [int(c) for c in servers.split(",")])
    except ValueError:
        raise argparse.ArgumentTypeError(f"--pin wants CLIENT/SERVERS, e.g. 0/0 or 0/1, "
                                         f"not {text!r}") from None


class Floors:
    """The floor processes: echo server, Trigger server + client per executor."""

    def __init__(self, logdir, env, kinds, ns):
        self.children = []
        self.trigger = {}
        py = sys.executable
        self.echo = self._start("echo", [py, str(FLOORS), "echo"], logdir, env)
        for kind in kinds:
            fns = f"{ns}_floor_{kind}"
            self._start(f"trigger-server-{kind}", [py, str(FLOORS), "trigger-server",
                                                   "--executor", kind, "--namespace", fns],
                        logdir, env)
            self.trigger[kind] = self._start(
                f"trigger-client-{kind}", [py, str(FLOORS), "trigger-client", "--executor", kind,
                                           "--namespace", fns], logdir, env, pipes=True)
        self._start("relay-server", [py, str(FLOORS), "relay-server", "--namespace",
                                     f"{ns}_relay"], logdir, env)
        relay = self._start("relay", [py, str(FLOORS), "relay", "--namespace", f"{ns}_relay"],
                            logdir, env)
        self.echo_port = int(self.echo.wait_log(r"ECHO PORT (\d+)", 30).group(1))
        self.relay_port = int(relay.wait_log(r"RELAY PORT (\d+)", 60).group(1))
        for kind, child in self.trigger.items():
            child.wait_log("TRIGGER CLIENT READY", 60)

    def _start(self, name, cmd, logdir, env, pipes=False):
        with server_affinity():
            c = Child(name, cmd, logdir, ROOT, env, pipes=pipes)
        self.children.append(c)
        return c

    def trigger_sample(self, kind, n):
        return json.loads(self.trigger[kind].ask(str(n)))

    def stop(self):
        for c in reversed(self.children):
            c.stop()


# ------------------------------------------------------------------ the bridge
def wrapped(entry, opts):
    """The command of one entry point: the console script, or run_node.py when
    an experiment or the tracer changes the process."""
    flags = []
    for key in ("switch_interval", "trace", "gc_freeze", "executor"):
        v = opts.get(key)
        if v not in (None, ""):
            flags += [f"--{key.replace('_', '-')}", str(v)]
    flags += [f"--{k.replace('_', '-')}" for k in ("no_states", "slow_smbus2") if opts.get(k)]
    if not flags:
        exe = shutil.which(entry)
        if exe is None:
            raise RuntimeError(f"console script {entry} not on PATH (run via scripts/with_env.sh)")
        return [exe]
    return [sys.executable, str(RUNNER), entry] + flags + ["--"]


#: the executors of the previous release: brak_bringup's single-threaded
#: executor, a thread pool in every node's own main()
PREVIOUS = {"one": "single", "per-node": "multi"}


class Bridge:
    """One deployment of the bridge as child processes. ``variant`` "now" runs
    the executables as they are (the EventsExecutor); "previous" gives them the
    executors of the previous release (``PREVIOUS``: run_node.py --executor)."""

    def __init__(self, deployment, a, logdir, env, ns, trace_dir=None, variant="now"):
        self.children = []
        self.traces = []
        self.env = env
        previous = PREVIOUS[deployment] if variant == "previous" else None
        if variant == "before":
            # the older package first on the path of every bridge process
            self.env = env = dict(env, PYTHONPATH=os.pathsep.join(
                [str(Path(a.before_src).resolve())]
                + [p for p in [env.get("PYTHONPATH")] if p]))
        # log file names: bringup.log, bringup-previous.log, bringup-traced.log, ...
        self.suffix = "-traced" if trace_dir is not None else (
            "" if variant == "now" else f"-{variant}")
        config = str(shipped("config", "brak.yaml"))
        gateways = str(shipped("config", "gateways.yaml"))
        # 30 s watchdog: a floor block between two requests is no silence to stop for
        gw_params = ["-p", "watchdog_s:=30.0"]
        backend = "smbus2" if a.bus == "slow-smbus2" else "sim"

        def opts(role):
            o = {"switch_interval": a.switch_interval, "gc_freeze": a.gc_freeze}
            o["executor"] = a.executor or previous
            o["no_states"] = a.gw_no_states and role in ("gw", "one")
            o["slow_smbus2"] = a.bus == "slow-smbus2" and role in ("hw", "one")
            if trace_dir is not None:
                path = str(Path(trace_dir) / f"trace-{deployment}-{role}.json")
                o["trace"] = path
                self.traces.append(path)
            return o

        if deployment == "one":
            # brak_bringup passes one set of ROS arguments to all its nodes: the
            # gateway's watchdog goes in a params file of its own
            watchdog = Path(logdir) / "bench_watchdog.yaml"
            watchdog.write_text("/**/rci_gateway:\n  ros__parameters:\n    watchdog_s: 30.0\n")
            o = opts("one")
            cmd = wrapped("brak_bringup", o) + [
                "--namespace", ns, "--config", config, "--gateways-config", gateways,
                "--rci-port", "0", "--rdi-realtime-port", "0", "--rdi-ca-port", "0",
                # the three-process layout has no Foxglove gateway either
                "--no-foxglove", "--bus-backend", backend,
                "--ros-args", "--params-file", str(watchdog)]
            self.gateway = self._start("bringup", cmd, logdir)
            self.port = int(self.gateway.wait_log(r"RCI [0-9.]+:(\d+)", 60).group(1))
        else:
            ros = ["--ros-args", "-r", f"__ns:={ns}"]
            hw, gw = opts("hw"), opts("gw")
            self.hardware = self._start("hardware_node", wrapped("hardware_node", hw) + ros + [
                "--params-file", config, "-p", f"bus_backend:={backend}"], logdir)
            self.gateway = self._start("rci_gateway", wrapped("rci_gateway", gw) + ros + [
                "--params-file", gateways, "-p", "port:=0"] + gw_params, logdir)
            self._start("rdi_gateway", wrapped("rdi_gateway", {"executor": a.executor or previous})
                        + ros + ["--params-file", gateways, "-p", "realtime_port:=0",
                                 "-p", "ca_port:=0"], logdir)
            self.port = int(self.gateway.wait_log(r"RCI gateway ready on [0-9.]+:(\d+)",
                                                  60).group(1))

    def _start(self, name, cmd, logdir):
        with server_affinity():
            c = Child(name + self.suffix, cmd, logdir, ROOT, self.env)
        self.children.append(c)
        return c

    def pids(self):
        return {c.name.removesuffix(self.suffix): c.pid for c in self.children}

    def stop(self):
        # gateways first: their safety stops are calls to the hardware node
        for c in reversed(self.children):
            c.stop()


def wait_ready(client, timeout=60.0):
    """Until the gateway answers the sonar group from its cache and DC motor 0
    is switched on."""
    inq = sonar_inquiry()
    deadline = time.monotonic() + timeout
    while True:
        _, _, rp = client.request(inq)
        if isinstance(rp, CGtSnRp) and len(rp.items) == 12:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"no sonar data from the gateway: {rp!r}")
        time.sleep(0.1)
    # right after start-up the gateway may not see the hardware node's services yet
    while True:
        rp = client.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True))[2]
        if rp == CCnAc(RciCode.CAcMt):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"DC motor 0 not switched on: {rp!r}")
        time.sleep(0.2)


def round_trips(what, ask, answered):
    """A sampler: ``n`` -> the times (ns) of ``n`` requests, ``ask(i)`` returning
    (t_send, t_recv, reply) of the i-th; RuntimeError at a reply ``answered``
    refuses."""
    def sample(n):
        out = []
        for i in range(n):
            t0, t1, rp = ask(i)
            if not answered(rp):
                raise RuntimeError(f"{what} answered {rp!r}")
            out.append(t1 - t0)
        return out
    return sample


def measure_deployment(deployment, a, floors, logdir, env, ns, variant="now"):
    """Interleaved blocks of both paths and all floors on one deployment."""
    bridge = Bridge(deployment, a, logdir, env, ns, variant=variant)
    client = None
    try:
        client = Client(bridge.port)
        wait_ready(client)
        inq = sonar_inquiry()
        inq_bytes = encode_rci(inq)
        cmds = motor_commands()
        cmd_bytes = [encode_rci(c) for c in cmds]
        sonar_reply = encode_rci(client.request(inq, inq_bytes)[2])
        sizes = {"sonar": (len(inq_bytes), len(sonar_reply)),
                 "motor": (len(cmd_bytes[0]), len(encode_rci(client.request(cmds[0])[2])))}
        echo = {k: EchoLink(floors.echo_port, *v) for k, v in sizes.items()}
        relays = [RelayLink(floors.relay_port, *sizes["motor"], which) for which in (0, 1)]

        ok, clear_ok = CCnAc(RciCode.CStMt), CCnAc(RciCode.CStSn)
        clear_bytes = encode_rci(encoder_clear())
        enc_inq = encoder_inquiry()
        clear_read_bytes = clear_bytes + encode_rci(enc_inq)
        sonar = round_trips("sonar inquiry", lambda i: client.request(inq, inq_bytes),
                            lambda rp: type(rp) is CGtSnRp)
        motor = round_trips("Set Motor", lambda i: client.request(cmds[i & 1], cmd_bytes[i & 1]),
                            lambda rp: rp == ok)
        clear = round_trips("encoder clear", lambda i: client.request_replies(clear_bytes, (), 1),
                            lambda rp: rp == [clear_ok])
        clear_read = round_trips(
            "encoder clear + read",
            lambda i: client.request_replies(clear_read_bytes, (enc_inq,), 2),
            lambda rp: rp[0] == clear_ok and type(rp[1]) is CGtSnRp)
        samplers = {"sonar": sonar, "tcp_sonar": echo["sonar"].sample,
                    "motor": motor, "tcp_motor": echo["motor"].sample,
                    "clear": clear, "clear_read": clear_read,
                    "relay_bare": relays[0].sample, "relay_states": relays[1].sample}
        for kind in floors.trigger:
            samplers[f"trigger_{kind}"] = (lambda k: lambda n: floors.trigger_sample(k, n))(kind)
        # idle CPU of the bridge's processes (device_states and timers, no client)
        pids = bridge.pids()
        c0 = {k: cpu_seconds(p) for k, p in pids.items()}
        t0 = time.monotonic()
        time.sleep(a.idle_s)
        dt = time.monotonic() - t0
        idle_cpu = {k: 100.0 * (cpu_seconds(p) - c0[k]) / dt for k, p in pids.items()}
        for f in samplers.values():
            f(a.warmup)
        res = {k: [] for k in samplers}
        per_block = max(1, a.samples // a.blocks)
        c0 = {k: cpu_seconds(p) for k, p in pids.items()}
        t0 = time.monotonic()
        for _ in range(a.blocks):
            for k, f in samplers.items():
                res[k] += f(per_block)
        dt = time.monotonic() - t0
        busy_cpu = {k: 100.0 * (cpu_seconds(p) - c0[k]) / dt for k, p in pids.items()}
        client.request(set_motor(0.0))
        for e in [*echo.values(), *relays]:
            e.close()
        return {"samples": res, "sizes": sizes, "idle_cpu": idle_cpu, "busy_cpu": busy_cpu,
                "sonar_reply": sonar_reply}
    finally:
        if client is not None:
            client.close()
        bridge.stop()


def measure_breakdown(deployment, a, logdir, env, ns):
    """Acked Set Motors with the tracer in the bridge: per-segment times."""
    bridge = Bridge(deployment, a, logdir, env, ns, trace_dir=logdir)
    client = None
    windows = []
    try:
        client = Client(bridge.port)
        wait_ready(client)
        cmds = motor_commands()
        cmd_bytes = [encode_rci(c) for c in cmds]
        n = a.warmup + a.breakdown_samples
        for i in range(n):
            t0, t1, rp = client.request(cmds[i & 1], cmd_bytes[i & 1])
            if i >= a.warmup:
                windows.append((t0, t1))
        client.request(set_motor(0.0))
    finally:
        if client is not None:
            client.close()
        bridge.stop()
    marks, states, gcs = [], [], {}
    for path in bridge.traces:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise RuntimeError(f"no trace from {path}: {exc}") from None
        marks += [tuple(m) for m in data["marks"]]
        gcs[Path(path).stem.rsplit("-", 1)[-1]] = data.get("gc", [])
        if data["states"]["n"]:
            states.append(data["states"])
    marks.sort()
    times = [m[0] for m in marks]
    seg = {name: [] for name, _, _ in SEGMENTS}
    total = []
    complete = 0
    missing = {}
    for t0, t1 in windows:
        lo, hi = bisect.bisect_left(times, t0), bisect.bisect_right(times, t1)
        # follow the path: each mark is the first of its name after the one before
        at = {"send": t0, "recv": t1}
        window = marks[lo:hi]
        j = 0
        for _, _, k1 in SEGMENTS[:-1]:
            while j < len(window) and window[j][1] != k1:
                j += 1
            if j == len(window):
                break
            at[k1] = window[j][0]
        if len(at) != len(SEGMENTS) + 1:
            first_missing = next(k1 for _, _, k1 in SEGMENTS if k1 not in at)
            missing[first_missing] = missing.get(first_missing, 0) + 1
            continue
        complete += 1
        for name, k0, k1 in SEGMENTS:
            seg[name].append(at[k1] - at[k0])
        total.append(t1 - t0)
    st = None
    if states:
        s = states[0]
        span = (s["last"] - s["first"]) / 1e9
        st = {"rate_hz": s["n"] / span if span > 0 else 0.0, "us_per_msg": s["ns"] / s["n"] / 1e3,
              "states_per_msg": s.get("items", 0) / s["n"],
              "cpu_pct": 100.0 * s["ns"] / 1e9 / span if span > 0 else 0.0}
    return {"gc": {role: {g: [len(d), max(d) / 1e6, sum(d) / 1e6]
                          for g in (0, 1, 2) if (d := [ns for gen, ns in c if gen == g])}
                   for role, c in gcs.items()},
            "segments": {k: summary(v) for k, v in seg.items() if v},
            "total": summary(total) if total else None, "complete": complete,
            "windows": len(windows), "missing": missing, "states": st}


# ------------------------------------------------------------------ report
DEPLOY_NAMES = {"one": "one process (`brak_bringup`)",
                "per-node": "a process per node (as the launch file)"}


def deploy_name(key):
    """Name a deployment key ("one", "per-node", "one@previous", ...) as the report does."""
    dep, _, variant = key.partition("@")
    if variant == "previous":
        return f"{DEPLOY_NAMES[dep]}, previous executors ({PREVIOUS[dep]})"
    if variant == "before":
        return f"{DEPLOY_NAMES[dep]}, code before the change (--before-src)"
    return DEPLOY_NAMES[dep]


def print_report(a, codec, runs, breakdowns, load):
    print(f"{a.samples} samples per figure after {a.warmup} warm-up round trips, in "
          f"{a.blocks} interleaved blocks (path, floors, path, ...); the client is a separate "
          f"process (plain socket + bsal_ros.protocol). Times in ms. Load average at the start: "
          f"{load[0]}, at the end: {load[1]}.\n")
    exp = {k: v for k, v in (("switch interval", a.switch_interval), ("executor", a.executor),
                             ("gateway without device_states", a.gw_no_states),
                             ("bus", a.bus if a.bus != "sim" else ""),
                             ("gc.freeze() after start, s", a.gc_freeze)) if v}
    if exp:
        print("Experiment: " + ", ".join(f"{k} {v}" for k, v in exp.items()) + ".\n")
    if runs:
        print_figures(codec, runs)
        print_architecture_floor(runs)
        print_before_after(runs)
    print_breakdowns(breakdowns)


def print_architecture_floor(runs):
    """The relay floor against the rclpy floor and the acked Set Motor: what
    the architecture leaves for the bridge's own work."""
    print("The architecture's floor: the relay (bench/rci_latency/floors.py) passes each "
          "Set Motor-sized request from TCP to one SetMotors call, made as the gateway makes "
          "it (call_async awaited through FutureBridge), to an EventsExecutor server that "
          "does no work, and answers; bare = an empty answer, states = the drive board's "
          "two DeviceState messages in it (as the real answer carries them). p50 ms.\n")
    print("| deployment | rclpy single | relay bare | relay states | acked Set Motor "
          "| relay bare / rclpy | relay states / rclpy | Set Motor / relay states "
          "| Set Motor - relay states |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, r in runs.items():
        s = {k: summary(v)["p50"] for k, v in r["samples"].items()}
        if "relay_states" not in s or "trigger_single" not in s:
            continue
        f, b, st, m = s["trigger_single"], s["relay_bare"], s["relay_states"], s["motor"]
        print(f"| {deploy_name(key)} | {f3(f)} | {f3(b)} | {f3(st)} | {f3(m)} | {b / f:.2f}x "
              f"| {st / f:.2f}x | {m / st:.2f}x | {f3(m - st)} |")
    print()


def print_before_after(runs):
    """Each figure before (the previous release's executors, or the code of
    --before-src) and after (the code as it is), same run."""
    for variant, what in (("before", "code before the change (--before-src)"),
                          ("previous", "previous executors")):
        pairs = [(d, f"{d}@{variant}") for d in DEPLOY_NAMES
                 if d in runs and f"{d}@{variant}" in runs]
        if pairs:
            print_pairs(runs, pairs, what)


def print_pairs(runs, pairs, what):
    print(f"Before ({what}) and after (today's), same run, p50 / p99 ms:\n")
    print("| figure | deployment | before | after | after / before p50, p99 |")
    print("|---|---|---|---|---|")
    for now, before in pairs:
        for label, k in (("acked Set Motor", "motor"), ("12-sonar group Get", "sonar"),
                         ("acked encoder clear", "clear"),
                         ("clear + read in one write", "clear_read")):
            if k not in runs[before]["samples"]:
                continue
            a, b = summary(runs[now]["samples"][k]), summary(runs[before]["samples"][k])
            print(f"| {label} | {DEPLOY_NAMES[now]} | {f3(b['p50'])} / {f3(b['p99'])} | "
                  f"{f3(a['p50'])} / {f3(a['p99'])} | {a['p50'] / b['p50']:.2f}, "
                  f"{a['p99'] / b['p99']:.2f} |")
        cpu = " ; ".join(
            f"{k} {runs[before]['idle_cpu'][k]:.0f} / {runs[before]['busy_cpu'][k]:.0f} -> "
            f"{runs[now]['idle_cpu'][k]:.0f} / {runs[now]['busy_cpu'][k]:.0f}"
            for k in runs[now]["idle_cpu"] if k in runs[before]["idle_cpu"])
        print(f"| CPU, % of one core, idle / sampling | {DEPLOY_NAMES[now]} | {cpu} | | |")
    print()


def print_figures(codec, runs):
    print("| path | deployment | p50 | p99 | p99.9 | floor | floor p50 / p99 / p99.9 "
          "| ratio p50 / p99 / p99.9 |")
    print("|---|---|---|---|---|---|---|---|")
    for dep, r in runs.items():
        s = {k: summary(v) for k, v in r["samples"].items()}
        rows = [("12-sonar group Get (CGtSnIq -> CGtSnRp)", "sonar", "tcp_sonar",
                 "TCP echo, same sizes")]
        for kind, label in (("single", "single-threaded"), ("multi", "multi-threaded"),
                            ("events", "EventsExecutor")):
            rows.append(("Set Motor + RQ_ACK (CStMt -> CCnAc)", "motor", f"trigger_{kind}",
                         f"rclpy Trigger, 2 processes, {label}"))
        rows.append(("Set Motor + RQ_ACK (CStMt -> CCnAc)", "motor", "tcp_motor",
                     "TCP echo, same sizes"))
        for k, label in (("relay_bare", "an empty answer"),
                         ("relay_states", "the drive board's states in the answer")):
            rows.append(("Set Motor + RQ_ACK (CStMt -> CCnAc)", "motor", k,
                         f"relay: TCP -> SetMotors call -> TCP, no work, {label}"))
        rows.append(("clear encoder + RQ_ACK (CStSn -> CCnAc)", "clear", "trigger_single",
                     "rclpy Trigger, 2 processes, single-threaded"))
        rows.append(("clear + Get Sensor DATA in one write (-> CCnAc, CGtSnRp)", "clear_read",
                     "clear", "the acked clear alone, same deployment"))
        rows.append(("clear + Get Sensor DATA in one write (-> CCnAc, CGtSnRp)", "clear_read",
                     "motor", "acked Set Motor, same deployment"))
        for label, k, fk, fl in rows:
            if fk not in s:
                continue
            m, f = s[k], s[fk]
            print(f"| {label} | {deploy_name(dep)} | {f3(m['p50'])} | {f3(m['p99'])} "
                  f"| {f3(m['p999'])} | {fl} | {f3(f['p50'])} / {f3(f['p99'])} / "
                  f"{f3(f['p999'])} | {m['p50'] / f['p50']:.1f}x / {m['p99'] / f['p99']:.1f}x / "
                  f"{m['p999'] / f['p999']:.1f}x |")
    print()
    any_run = next(iter(runs.values()))
    sz = any_run["sizes"]
    print(f"Sizes (request / reply bytes): sonar {sz['sonar'][0]} / {sz['sonar'][1]}, "
          f"Set Motor {sz['motor'][0]} / {sz['motor'][1]}. Client's own protocol work per "
          f"request (measured apart): sonar encode {codec['sonar_encode'] / 1e3:.1f} us + "
          f"decode {codec['sonar_decode'] / 1e3:.1f} us (decode inside the timed round trip), "
          f"Set Motor encode {codec['motor_encode'] / 1e3:.1f} us + decode "
          f"{codec['motor_decode'] / 1e3:.1f} us.\n")
    # the codec's weight in the fastest round trip
    fastest = min(summary(r["samples"]["sonar"])["p50"] for r in runs.values())
    codec_us = (codec["sonar_encode"] + codec["sonar_decode"]) / 1e3
    print(f"Codec share of the fastest round trip (12-sonar group Get p50, {f3(fastest)} ms): "
          f"the client's encode + decode, {codec_us:.1f} us, is {codec_us / 10 / fastest:.0f} %; "
          f"the gateway's mirror work (decode the inquiry, encode the reply) about as much.\n")
    print("CPU of the bridge's processes, % of one core: idle (connected, no requests) / "
          "while sampling: " + "; ".join(
              f"{deploy_name(d)}: " + ", ".join(
                  f"{k} {r['idle_cpu'][k]:.0f} / {r['busy_cpu'][k]:.0f}" for k in r["idle_cpu"])
              for d, r in runs.items()) + ".\n")


def print_breakdowns(breakdowns):
    for dep, b in breakdowns.items():
        print(f"Breakdown of an acked Set Motor, {deploy_name(dep)}, tracer on "
              f"({b['complete']} of {b['windows']} round trips with every mark, first mark "
              f"missing in the others: {b['missing'] or 'none'}; the tracer "
              f"adds a few us per mark):\n")
        print("| segment | p50 | p99 | mean |")
        print("|---|---|---|---|")
        for name, _, _ in SEGMENTS:
            v = b["segments"].get(name)
            if v:
                print(f"| {name} | {f3(v['p50'])} | {f3(v['p99'])} | {f3(v['mean'])} |")
        if b["total"]:
            t = b["total"]
            print(f"| whole round trip (traced) | {f3(t['p50'])} | {f3(t['p99'])} "
                  f"| {f3(t['mean'])} |")
        print()
        if b.get("gc"):
            print("Garbage collections in the traced processes (whole process life): " + "; ".join(
                f"{role}: " + ", ".join(f"gen {g} {n} x, longest {mx:.2f} ms, total {tot:.1f} ms"
                                        for g, (n, mx, tot) in sorted(per.items()))
                for role, per in b["gc"].items()) + ".\n")
        if b["states"]:
            s = b["states"]
            print(f"Gateway's device_states callback: {s['rate_hz']:.0f} messages/s of "
                  f"{s.get('states_per_msg', 0):.1f} states, "
                  f"{s['us_per_msg']:.0f} us each in the Python callback "
                  f"({s['cpu_pct']:.1f} % of one core; deserialisation not included).\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=2000, help="per figure, after warm-up")
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--deployments", default="one,per-node")
    ap.add_argument("--floor-executors", default="single,multi,events",
                    help="rclpy floors to take: single, multi, events (comma-separated)")
    ap.add_argument("--no-previous", dest="previous", action="store_false",
                    help="do not measure the deployments again with the previous release's "
                         "executors (single-threaded bring-up, thread pools per node)")
    ap.add_argument("--before-src",
                    help="also measure each deployment with the bsal_ros package in this "
                         "folder first on the bridge's PYTHONPATH (the code before a change)")
    ap.add_argument("--max-seconds", type=float, default=480.0,
                    help="the whole run stops (children stopped, exit 3) after this long")
    ap.add_argument("--no-breakdown", action="store_true")
    ap.add_argument("--breakdown-only", action="store_true")
    ap.add_argument("--breakdown-deployments",
                    help="deployments to trace (default: those of --deployments)")
    ap.add_argument("--breakdown-samples", type=int, default=1000)
    ap.add_argument("--idle-s", type=float, default=2.0,
                    help="s of idle CPU measurement before sampling")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: few samples (tests); figures mean little")
    ap.add_argument("--json", help="also write every figure to this file")
    ap.add_argument("--logdir", help="keep the children's logs here (default: a temp dir)")
    ap.add_argument("--switch-interval", type=float, help="sys.setswitchinterval in the bridge")
    ap.add_argument("--pin", type=parse_pin, metavar="CLIENT/SERVERS",
                    help="CPU affinity: the client (this process) on CLIENT, the floors and "
                         "the bridge on SERVERS, e.g. 0/0 (one core) or 0/1; a round trip "
                         "between two CPUs of this VM costs about 50 us more than on one "
                         "(docs/BENCHMARKS.md)")
    ap.add_argument("--executor", choices=["single", "multi", "events"])
    ap.add_argument("--gc-freeze", type=float,
                    help="in every bridge process, a full collection and gc.freeze() this "
                         "many s after start (see run_node.py)")
    ap.add_argument("--bus", choices=["sim", "slow-smbus2"], default="sim",
                    help="the hardware node's bus: the simulated one, or the smbus2 backend "
                         "over the simulated boards with each transfer taking its wire time at "
                         "100 kHz (run_node.py --slow-smbus2)")
    ap.add_argument("--gw-no-states", action="store_true",
                    help="the RCI gateway takes no device_states (what deserialising them costs "
                         "the acked path; sonar Gets then go through a service call)")
    a = ap.parse_args(argv)
    # SIGTERM (e.g. `timeout`) unwinds through the finally blocks: children stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    def out_of_time(*_):
        print(f"bench_rci: over --max-seconds {a.max_seconds:.0f}; stopping",
              file=sys.stderr, flush=True)
        sys.exit(3)
    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(max(1, int(a.max_seconds)))
    if a.quick:
        a.samples, a.warmup, a.blocks = min(a.samples, 50), 10, 2
        a.breakdown_samples, a.idle_s = 50, 0.3
    if a.executor:
        a.previous = False       # an executor experiment is its own comparison
    deployments = [d for d in a.deployments.split(",") if d]
    for d in deployments:
        if d not in DEPLOY_NAMES:
            ap.error(f"unknown deployment {d}")
    kinds = [k for k in a.floor_executors.split(",") if k]
    pinned = ""
    if a.pin:
        global SERVER_CPUS
        client_cpus, SERVER_CPUS = a.pin
        os.sched_setaffinity(0, client_cpus)
        pinned = (f", the client pinned to CPU {','.join(map(str, client_cpus))} and "
                  f"the floors and the bridge to {','.join(map(str, SERVER_CPUS))}")
    env = dict(os.environ)
    ns = f"/bench_rci_{os.getpid()}"
    tmp = None
    if a.logdir:
        logdir = Path(a.logdir)
        logdir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="bench_rci_")
        logdir = Path(tmp.name)
    load0 = os.getloadavg()
    started = time.monotonic()
    codec = client_codec_cost(2000 if a.quick else 20000)
    floors = None
    runs, breakdowns = {}, {}
    try:
        if not a.breakdown_only:
            floors = Floors(logdir, env, kinds, ns)
        for d in ([] if a.breakdown_only else deployments):
            runs[d] = measure_deployment(d, a, floors, logdir, env,
                                         f"{ns}_{d.replace('-', '_')}")
            if a.before_src:
                runs[f"{d}@before"] = measure_deployment(
                    d, a, floors, logdir, env, f"{ns}_{d.replace('-', '_')}_before", "before")
            if a.previous:
                runs[f"{d}@previous"] = measure_deployment(
                    d, a, floors, logdir, env, f"{ns}_{d.replace('-', '_')}_prev", "previous")
        if floors is not None:
            floors.stop()
            floors = None
        if not a.no_breakdown:
            traced = (a.breakdown_deployments or a.deployments).split(",")
            for d in [d for d in traced if d]:
                breakdowns[d] = measure_breakdown(d, a, logdir, env,
                                                  f"{ns}_{d.replace('-', '_')}_traced")
    finally:
        if floors is not None:
            floors.stop()
    codec["sonar_decode"] = (sonar_decode_cost(next(iter(runs.values()))["sonar_reply"])
                             if runs else float("nan"))
    load1 = os.getloadavg()
    print_report(a, codec, runs, breakdowns, (f"{load0[0]:.2f}", f"{load1[0]:.2f}"))
    print(f"Whole run {time.monotonic() - started:.0f} s on {os.cpu_count()} cores"
          f"{pinned}, Python {platform.python_version()}.")
    if a.json:
        out = {"load": [load0[0], load1[0]], "codec_ns": {k: v for k, v in codec.items()
                                                          if not k.startswith("_")},
               "args": dict(vars(a)),
               "runs": {d: {"summary": {k: summary(v) for k, v in r["samples"].items()},
                            "idle_cpu": r["idle_cpu"], "busy_cpu": r["busy_cpu"],
                            "sizes": r["sizes"]} for d, r in runs.items()},
               "breakdown": breakdowns, "child_pids": STARTED}
        Path(a.json).write_text(json.dumps(out, indent=1))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
