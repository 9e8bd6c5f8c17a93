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

"""Opt-in timestamps along the acked-command path, patched in from outside.

Installed only by run_node.py --trace FILE (so the nodes' code is unchanged and
costs nothing when not traced). Every mark is (perf_counter_ns, name); the
clock is CLOCK_MONOTONIC, shared by all processes of the machine, so marks of
the gateway, the hardware node and the client can be put on one time line.
At exit (atexit or os._exit) the marks go to FILE as JSON.

Marks (in path order):
  gw_rx        gateway: bytes from the socket handed to the RCI decoder
               (RciTransport.next -> RciDecoder.feed)
  gw_call      gateway: the set_motors request is about to be sent
               (Client.call_async entered; issue 31's direct calls, until
               issue 40: DirectCalls._send entered)
  gw_sent      gateway: request published (_send / call_async returned)
  hw_cb_start  hardware node: HardwareNode._srv_set_motors entered
  hw_cb_end    hardware node: callback returned (response not yet sent)
  gw_resp      gateway: the answer is in (the executor thread sets it on
               the rclpy future, Future.set_result; direct calls:
               DirectCalls._take returns it)
  gw_resumed   gateway: the answer is back in the session's coroutine
               (FutureBridge.wait returns; direct calls: DirectCalls.call)
  gw_tx        gateway: RciTransport.send encoded the reply, about to write it
Plus totals: the gateway's device_states callbacks (StateCache.on_states:
count, ns inside), and every garbage collection of the process (generation,
ns: the pauses a read may wait for).
"""

from __future__ import annotations

import atexit
import json
import os
import time

_marks: list = []
_states = {"n": 0, "ns": 0, "items": 0, "first": None, "last": None}
_gc: list = []          # (generation, ns) of each collection
_clock = time.perf_counter_ns
_gc_start = [0]


def _on_gc(phase, info):
    if phase == "start":
        _gc_start[0] = _clock()
    else:
        _gc.append((info["generation"], _clock() - _gc_start[0]))


def _mark(name: str) -> None:
    _marks.append((_clock(), name))


def _dump(path: str) -> None:
    with open(path, "w") as f:
        json.dump({"marks": _marks, "states": _states, "gc": _gc}, f)


def install(path: str) -> None:
    """Patch the gateway and hardware-node classes of this process."""
    from rclpy.client import Client
    from rclpy.task import Future

    from bsal_ros.protocol.rci import RciDecoder

    import gc
    gc.callbacks.append(_on_gc)
    atexit.register(_dump, path)
    # The executables end with os._exit once stopped (nodes/runtime.py),
    # which skips atexit: dump first.
    hard_exit = os._exit

    def dump_then_exit(code):
        _dump(path)
        hard_exit(code)
    os._exit = dump_then_exit

    feed = RciDecoder.feed

    def traced_feed(self, data):
        _mark("gw_rx")
        return feed(self, data)
    RciDecoder.feed = traced_feed

    call_async = Client.call_async

    def traced_call_async(self, request):
        if not self.srv_name.endswith("set_motors"):
            return call_async(self, request)
        _mark("gw_call")
        fut = call_async(self, request)
        _mark("gw_sent")
        fut._bench_traced = True
        return fut
    Client.call_async = traced_call_async

    set_result = Future.set_result

    def traced_set_result(self, result):
        if getattr(self, "_bench_traced", False):
            _mark("gw_resp")
        return set_result(self, result)
    Future.set_result = traced_set_result

    try:
        from bsal_ros.nodes import rci_ros_port
    except ImportError:
        rci_ros_port = None
    if rci_ros_port is not None:
        wait = rci_ros_port.FutureBridge.wait

        async def traced_wait(self, rfut, timeout, what):
            res = await wait(self, rfut, timeout, what)
            if what.endswith("set_motors"):
                _mark("gw_resumed")
            return res
        rci_ros_port.FutureBridge.wait = traced_wait

        try:
            from bsal_ros.nodes import direct_calls
        except ImportError:      # a tree without the direct calls (before issue 31, after 40)
            direct_calls = None
        if direct_calls is not None:
            _patch_direct_calls(direct_calls.DirectCalls)

        on_states = rci_ros_port.StateCache.on_states

        def traced_on_states(self, msg):
            t0 = _clock()
            on_states(self, msg)
            t1 = _clock()
            s = _states
            s["n"] += 1
            s["ns"] += t1 - t0
            # the cache takes converted states since issue 21 (a list)
            s["items"] += len(getattr(msg, "states", msg))
            s["first"] = s["first"] or t0
            s["last"] = t1
        # RosRobotPort's subscription converts the array and calls its
        # cache's on_states, looked up at each call (so this patch applies;
        # the conversion is no longer in the measured time)
        rci_ros_port.StateCache.on_states = traced_on_states

        from bsal_ros.rci import transport

        def traced_send(self, pkt):
            # RciTransport.send with the mark between encoding and the write
            # (after the write the client may already have the reply)
            if self.closed or self.ending:
                return
            data = transport.encode_rci(pkt, self.byteorder)
            _mark("gw_tx")
            self.writer.write(data)
        transport.RciTransport.send = traced_send

    from bsal_ros.nodes import hardware_node
    srv = hardware_node.HardwareNode._srv_set_motors

    def traced_srv(self, req, resp):
        _mark("hw_cb_start")
        try:
            return srv(self, req, resp)
        finally:
            _mark("hw_cb_end")
    hardware_node.HardwareNode._srv_set_motors = traced_srv


def _patch_direct_calls(cls) -> None:
    """Marks gw_call, gw_sent, gw_resp and gw_resumed for set_motors calls."""
    def traced(client) -> bool:
        return client.srv_name.endswith("set_motors")

    send = cls._send

    def traced_send(client, request):
        if not traced(client):
            return send(client, request)
        _mark("gw_call")
        seq = send(client, request)
        _mark("gw_sent")
        return seq
    cls._send = staticmethod(traced_send)

    take = cls._take

    def traced_take(self, client, key, wait_ns):
        answer = take(self, client, key, wait_ns)
        if answer is not None and traced(client):
            _mark("gw_resp")
        return answer
    cls._take = traced_take

    call = cls.call

    async def traced_call(self, client, request, timeout):
        answer = await call(self, client, request, timeout)
        if traced(client):
            _mark("gw_resumed")
        return answer
    cls.call = traced_call
