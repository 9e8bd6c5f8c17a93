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

"""The floors of bench/bench_rci.py, one process each (``python floors.py MODE``).

echo            loopback TCP server (asyncio, like the gateway): a connection
                sends two big-endian uint32 (request size, reply size), then
                each request of that size gets that many bytes back; prints
                "ECHO PORT <n>".
trigger-server  std_srvs/Trigger server on ``--executor``; "TRIGGER SERVER READY".
trigger-client  reads "<n>" lines on stdin, answers each with one JSON line of n
                call_async + spin_until_future_complete round trips (ns).
relay-server    SetMotors servers that do no work: ``relay_bare`` answers
                empty, ``relay_states`` with ``--states`` DeviceStates built
                once; "RELAY SERVER READY".
relay           the architecture's floor: a TCP server (as echo, with a third
                uint32: 0 bare, 1 states) that turns each request into one
                SetMotors call made as the gateway makes it (call_async awaited
                through FutureBridge); "RELAY PORT <n>".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import socket
import struct
import sys
import time


class _SizedEcho(asyncio.Protocol):

    def connection_made(self, transport):
        self.t = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.sizes = None

    def data_received(self, data):
        self.buf += data
        if self.sizes is None:
            if len(self.buf) < 8:
                return
            self.sizes = struct.unpack("!II", self.buf[:8])
            self.reply = b"\x55" * self.sizes[1]
            self.buf = self.buf[8:]
        req = self.sizes[0]
        while len(self.buf) >= req:
            self.buf = self.buf[req:]
            self.t.write(self.reply)


def echo() -> int:
    async def serve():
        server = await asyncio.get_running_loop().create_server(_SizedEcho, "127.0.0.1", 0)
        print(f"ECHO PORT {server.sockets[0].getsockname()[1]}", flush=True)
        await server.serve_forever()
    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


def _executor(kind, context):
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    if kind == "events":
        from rclpy.experimental.events_executor import EventsExecutor
        return EventsExecutor(context=context)
    if kind == "multi":
        return MultiThreadedExecutor(num_threads=4, context=context)
    return SingleThreadedExecutor(context=context)


@contextlib.contextmanager
def _spun_by(node, kind: str):
    """An executor of ``kind`` with ``node`` on it (added after the node's
    entities: an EventsExecutor registers them then). Ctrl-C or a context shut
    down elsewhere ends the block quietly; the executor, the node and rclpy
    are shut down after it."""
    import rclpy
    from rclpy.executors import ExternalShutdownException
    ex = _executor(kind, rclpy.get_default_context())
    ex.add_node(node)
    try:
        yield ex
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        ex.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


def _serve(node, kind: str, ready: str) -> int:
    """Spin ``node``'s servers on an executor of ``kind`` until SIGINT/SIGTERM
    (rclpy's handlers shut the context down), after printing ``ready``."""
    import rclpy
    context = rclpy.get_default_context()
    with _spun_by(node, kind) as ex:
        print(ready, flush=True)
        # a spin_once loop: EventsExecutor.spin() of rclpy 9.1.2 left requests
        # from other processes unanswered here (spin_once serves them)
        while context.ok():
            ex.spin_once(timeout_sec=0.2)
    return 0


def trigger(role: str, kind: str, namespace: str) -> int:
    import rclpy
    from std_srvs.srv import Trigger
    rclpy.init()
    node = rclpy.create_node(f"bench_trigger_{role}", namespace=namespace)
    if role == "server":
        def answer(req, resp):
            resp.success = True
            return resp
        node.create_service(Trigger, "bench_trigger", answer)
        return _serve(node, kind, "TRIGGER SERVER READY")
    cli = node.create_client(Trigger, "bench_trigger")
    with _spun_by(node, kind) as ex:
        if not cli.wait_for_service(timeout_sec=20.0):
            print("no trigger server", file=sys.stderr, flush=True)
            return 2
        print("TRIGGER CLIENT READY", file=sys.stderr, flush=True)
        req = Trigger.Request()
        clock = time.perf_counter_ns
        for line in sys.stdin:
            n = int(line)
            out = []
            for _ in range(n):
                t0 = clock()
                fut = cli.call_async(req)
                ex.spin_until_future_complete(fut, timeout_sec=5.0)
                out.append(clock() - t0)
                if not fut.done() or not fut.result().success:
                    print("trigger call failed", file=sys.stderr, flush=True)
                    return 2
            print(json.dumps(out), flush=True)
    return 0


def relay_server(states: int, namespace: str) -> int:
    import rclpy
    from bsal_interfaces.msg import DeviceState
    from bsal_interfaces.srv import SetMotors
    rclpy.init()
    node = rclpy.create_node("bench_relay_server", namespace=namespace)
    answer = []
    for i in range(states):      # the drive board: its motor and its encoder
        m = DeviceState()
        m.header.frame_id = ("drive_motor", "drive_encoder")[i % 2]
        m.device_class = (DeviceState.CLASS_DC_MOTOR, DeviceState.CLASS_RELATIVE_ENCODER)[i % 2]
        m.id, m.on, m.up, m.ok, m.statval = 0, True, True, True, 0x2a07
        answer.append(m)

    def with_states(req, resp):
        resp.states = answer        # result: a new response's code is already OK
        return resp
    node.create_service(SetMotors, "relay_bare", lambda req, resp: resp)
    node.create_service(SetMotors, "relay_states", with_states)
    return _serve(node, "events", "RELAY SERVER READY")


def relay(namespace: str) -> int:
    import threading

    import rclpy
    from bsal_interfaces.msg import MotorCommand
    from bsal_interfaces.srv import SetMotors
    from bsal_ros.nodes.rci_ros_port import FutureBridge
    from bsal_ros.rci.port import PortUnavailable
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.signals import SignalHandlerOptions
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)   # the loop's own, below
    node = rclpy.create_node("bench_relay", namespace=namespace)
    # as the gateway: clients on a node an EventsExecutor spins in another
    # thread, call_async awaited through FutureBridge
    cbg = ReentrantCallbackGroup()
    clients = [node.create_client(SetMotors, name, callback_group=cbg)
               for name in ("relay_bare", "relay_states")]
    req = SetMotors.Request(device_class="dc_motor", lease_s=1.0,
                            commands=[MotorCommand(id=0, mode=MotorCommand.MODE_DUTY_CYCLE,
                                                   value=10.0)])
    done = threading.Event()

    async def serve():
        bridge = FutureBridge(asyncio.get_running_loop())

        async def call(client, timeout):
            return await bridge.wait(client.call_async(req), timeout, client.srv_name)

        async def session(reader, writer):
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,
                                                       1)
            try:
                req_size, rep_size, which = struct.unpack("!III", await reader.readexactly(12))
                client, reply = clients[which], b"\x55" * rep_size
                while True:
                    await reader.readexactly(req_size)
                    await call(client, 1.0)
                    writer.write(reply)
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()

        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        for client in clients:           # a new server's first request can be lost
            for _ in range(40):
                try:
                    await call(client, 0.5)
                    break
                except PortUnavailable:
                    pass
            else:
                print(f"relay: {client.srv_name} never answered", file=sys.stderr, flush=True)
                return 2
        server = await asyncio.start_server(session, "127.0.0.1", 0)
        print(f"RELAY PORT {server.sockets[0].getsockname()[1]}", flush=True)
        await stop.wait()
        server.close()
        return 0

    with _spun_by(node, "events") as ex:
        def spin():
            while not done.is_set():
                ex.spin_once(timeout_sec=0.1)
        spinner = threading.Thread(target=spin, name="relay-executor")
        spinner.start()
        try:
            return asyncio.run(serve())
        finally:
            done.set()
            spinner.join(5.0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["echo", "trigger-server", "trigger-client",
                                     "relay-server", "relay"])
    ap.add_argument("--executor", choices=["single", "multi", "events"], default="single")
    ap.add_argument("--namespace", default="/bench_floor")
    ap.add_argument("--states", type=int, default=2)
    a = ap.parse_args(argv)
    if a.what == "echo":
        return echo()
    if a.what == "relay-server":
        return relay_server(a.states, a.namespace)
    if a.what == "relay":
        return relay(a.namespace)
    return trigger(a.what.split("-")[1], a.executor, a.namespace)


if __name__ == "__main__":
    raise SystemExit(main())
