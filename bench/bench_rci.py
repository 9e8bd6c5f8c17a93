"""RCI gateway latency against floors measured in the same run.

    scripts/with_env.sh python bench/bench_rci.py [--n 2000]

One process: hardware node (simulated Brak) + RCI gateway node in one
MultiThreadedExecutor thread, the gateway's asyncio loop in its own thread,
a blocking TCP client in the main thread (the same as the tests use).

(a) a 12-ultrasonic group Get Sensor inquiry (RCI-CGtSnIq DATA) to its
    RCI-CGtSnRp, against a bare asyncio TCP echo round trip on loopback run
    under the same load (same process, nodes spinning).
    Goal: p50 and p99 within 2x the TCP floor + 0.2 ms, i.e. the inquiry is
    answered from the topic cache, not through a service call.
(b) a Set Motor with RQ_ACK (RCI-CStMt DC SPVAL) to its RCI-CCnAc, against a
    bare rclpy service round trip (std_srvs/Trigger, client and server in the
    same executor, the caller waiting on call_async from a non-executor thread).
    Goal: p50 and p99 within 1.3x the service floor.

Prints Markdown (bench/run_all.py collects it into docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import rclpy  # noqa: E402
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from bsal_ros.nodes.hardware_node import HardwareNode  # noqa: E402
from bsal_ros.nodes.rci_gateway import RciGatewayNode  # noqa: E402
from bsal_ros.protocol.constants import GetSensorStatus, MotorType, RciCode, SensorType  # noqa: E402
from bsal_ros.protocol.rci import (CAcMt, CCnAc, CGtSnIq, CGtSnRp, CStMt, MotorCommand,  # noqa: E402
                                   MotorCommandKind, encode_rci)
from bsal_ros.protocol.values import speedval_pack  # noqa: E402
from bsal_ros.rci.client import RciClient  # noqa: E402
from bsal_ros.rci.users import DEMO_KEY  # noqa: E402


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100.0 * (len(xs) - 1))))]


def ms(x):
    return f"{x * 1e3:.3f}"


class EchoServer:
    """Bare asyncio TCP echo on loopback, in its own thread (like the gateway)."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(10)

    def _run(self):
        asyncio.set_event_loop(self.loop)

        async def handle(reader, writer):
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
            writer.close()

        self.server = self.loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def tcp_echo_sampler(port, payload):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def sample(n):
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            s.sendall(payload)
            got = 0
            while got < len(payload):
                got += len(s.recv(65536))
            out.append(time.perf_counter() - t0)
        return out
    return sample, s.close


def service_sampler(cli, make_request, check=None):
    """Round trips of a service client awaited from this (non-executor) thread."""
    assert cli.wait_for_service(10)
    ev = threading.Event()

    def sample(n):
        out = []
        for i in range(n):
            req = make_request(i)
            ev.clear()
            t0 = time.perf_counter()
            fut = cli.call_async(req)
            fut.add_done_callback(lambda f: ev.set())
            assert ev.wait(5)
            out.append(time.perf_counter() - t0)
            if check is not None:
                check(fut.result())
        return out
    return sample


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--executor", choices=["single", "multi"], default="single",
                    help="executor of all nodes (brak_bringup's default: single)")
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--ca-states-max-hz", type=float, default=10.0,
                    help="the gateway's rci/ca_states rate cap (default as deployed)")
    a = ap.parse_args(argv)
    n, warm = a.n, a.warmup

    ctx = rclpy.context.Context()
    rclpy.init(context=ctx)
    ns = "/bench_" + uuid.uuid4().hex[:6]
    ex = (SingleThreadedExecutor(context=ctx) if a.executor == "single"
          else MultiThreadedExecutor(num_threads=4, context=ctx))
    hw = HardwareNode(context=ctx, namespace=ns, auto_home=False)
    gw = RciGatewayNode(context=ctx, namespace=ns,
                        parameter_overrides=[Parameter("port", value=0),
                                             Parameter("watchdog_s", value=30.0),
                                             Parameter("ca_states_max_hz",
                                                       value=a.ca_states_max_hz)])
    floor_srv = Node("bench_floor_server", context=ctx, namespace=ns)
    floor_srv.create_service(Trigger, "bench_floor_trigger",
                             lambda req, resp: (setattr(resp, "success", True), resp)[1])
    floor_cli = Node("bench_floor_client", context=ctx, namespace=ns)
    for nd in (hw, gw, floor_srv, floor_cli):
        ex.add_node(nd)
    stop = threading.Event()
    spin = threading.Thread(target=lambda: [ex.spin_once(timeout_sec=0.05)
                                            for _ in iter(stop.is_set, True)], daemon=True)
    spin.start()
    port = gw.start()
    echo = EchoServer()
    try:
        deadline = time.monotonic() + 30
        while (gw.robot.cached("ultrasonic", list(range(12))) is None
               or not gw.robot.device_list_known):
            assert time.monotonic() < deadline, "no sonar data in the gateway's cache"
            time.sleep(0.05)

        c = RciClient("127.0.0.1", port, timeout=10)
        c.handshake("demo", DEMO_KEY)
        inq = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)
        inq_bytes = encode_rci(inq)

        from bsal_interfaces.msg import MotorCommand as MC
        from bsal_interfaces.srv import SetMotors

        def a_sample(k):
            out = []
            for _ in range(k):
                t0 = time.perf_counter()
                rp = c.request(inq)
                out.append(time.perf_counter() - t0)
                assert isinstance(rp, CGtSnRp) and len(rp.items) == 12
            return out

        def b_sample(k):
            out = []
            for i in range(k):
                pktm = CStMt.one(MotorType.DC, 0, MotorCommand(
                    MotorCommandKind.SPVAL, speedval_pack(True, 10.0 if i % 2 else 12.0)),
                    rq_ack=True)
                t0 = time.perf_counter()
                rp = c.request(pktm)
                out.append(time.perf_counter() - t0)
                assert rp == CCnAc(RciCode.CStMt), rp
            return out

        tcp_sample, tcp_close = tcp_echo_sampler(echo.port, inq_bytes)
        srv_sample = service_sampler(floor_cli.create_client(Trigger, "bench_floor_trigger"),
                                     lambda i: Trigger.Request())

        def check_ok(resp):
            assert resp.result.code == 0, resp.result.message
        direct_sample = service_sampler(
            floor_cli.create_client(SetMotors, "set_motors"),
            lambda i: SetMotors.Request(device_class="dc_motor", commands=[
                MC(id=0, mode=MC.MODE_DUTY_CYCLE, value=10.0 if i % 2 else 12.0)]), check_ok)
        assert c.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcMt)

        # Interleaved blocks: the machine's noise hits measurements and floors alike.
        samplers = {"a": a_sample, "tcp": tcp_sample, "b": b_sample, "srv": srv_sample,
                    "direct": direct_sample}
        res = {k: [] for k in samplers}
        for k, f in samplers.items():
            f(warm)
        blocks = 10
        for _ in range(blocks):
            for k, f in samplers.items():
                res[k] += f(max(1, n // blocks))
        a_lat, tcp, b_lat, srv, direct = (res[k] for k in ("a", "tcp", "b", "srv", "direct"))
        c.request(CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                          speedval_pack(True, 0.0)), rq_ack=True))
        c.close()
        tcp_close()
    finally:
        echo.stop()
        gw.stop()
        stop.set()
        spin.join(5)
        for nd in (gw, hw, floor_srv, floor_cli):
            ex.remove_node(nd)
            nd.destroy_node()
        ex.shutdown()
        rclpy.shutdown(context=ctx)

    a50, a99 = pct(a_lat, 50), pct(a_lat, 99)
    t50, t99 = pct(tcp, 50), pct(tcp, 99)
    b50, b99 = pct(b_lat, 50), pct(b_lat, 99)
    s50, s99 = pct(srv, 50), pct(srv, 99)
    goal_a50, goal_a99 = 2 * t50 + 0.0002, 2 * t99 + 0.0002
    goal_b50, goal_b99 = 1.3 * s50, 1.3 * s99

    def ok(x, g):
        return "met" if x <= g else "MISSED"

    print(f"{n} samples per figure after {warm} warm-up round trips, taken in 10 interleaved "
          f"blocks (measurement, floor, measurement, ...); times in ms.\n")
    print("| measurement | p50 | p99 | floor p50 | floor p99 | ratio p50 | ratio p99 "
          "| goal p50 / p99 | result |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| (a) 12-sonar group CGtSnIq -> CGtSnRp | {ms(a50)} | {ms(a99)} | {ms(t50)} "
          f"| {ms(t99)} | {a50 / t50:.2f} | {a99 / t99:.2f} | <= 2 x floor + 0.2: "
          f"{ms(goal_a50)} / {ms(goal_a99)} | {ok(a50, goal_a50)} / {ok(a99, goal_a99)} |")
    print(f"| (b) CStMt DC + RQ_ACK -> CCnAc | {ms(b50)} | {ms(b99)} | {ms(s50)} | {ms(s99)} "
          f"| {b50 / s50:.2f} | {b99 / s99:.2f} | <= 1.3 x floor: {ms(goal_b50)} / "
          f"{ms(goal_b99)} | {ok(b50, goal_b50)} / {ok(b99, goal_b99)} |")
    d50, d99 = pct(direct, 50), pct(direct, 99)
    print(f"| reference: hardware node's set_motors service called directly | {ms(d50)} "
          f"| {ms(d99)} | {ms(s50)} | {ms(s99)} | {d50 / s50:.2f} | {d99 / s99:.2f} | - | - |")
    print()
    print(f"Gateway's own share of (b): p50 {ms(b50 - d50)} ms over the direct service call "
          f"({b50 / d50:.2f}x).\n")
    print("Floors: (a) bare asyncio TCP echo on loopback with the same payload size, in the "
          "same process while the nodes spin; (b) bare rclpy std_srvs/Trigger round trip "
          "between two nodes of the same executor, awaited from a non-executor thread. "
          f"Mean (a) {ms(statistics.fmean(a_lat))}, (b) {ms(statistics.fmean(b_lat))}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
