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

Installed only by run_node.py --trace FILE (the nodes' code is unchanged and
pays nothing when not traced). Every mark is (perf_counter_ns, name); the
clock is CLOCK_MONOTONIC, shared by all processes of the machine, so marks of
the gateway, the hardware node and the client go on one time line. At exit
(atexit or os._exit) the marks go to FILE as JSON.

Marks (in path order):
  gw_rx        gateway: bytes from the socket handed to the RCI decoder
  gw_call      gateway: Client.call_async entered for set_motors
  gw_sent      gateway: call_async returned (request published)
  hw_cb_start  hardware node: HardwareNode._srv_set_motors entered
  hw_cb_end    hardware node: callback returned (response not yet sent)
  gw_resp      gateway: the executor thread sets the answer (Future.set_result)
  gw_resumed   gateway: FutureBridge.wait returns in the session's coroutine
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

    from bsal_ros.nodes import rci_ros_port
    wait = rci_ros_port.FutureBridge.wait

    async def traced_wait(self, rfut, timeout, what):
        res = await wait(self, rfut, timeout, what)
        if what.endswith("set_motors"):
            _mark("gw_resumed")
        return res
    rci_ros_port.FutureBridge.wait = traced_wait

    on_states = rci_ros_port.StateCache.on_states

    def traced_on_states(self, msg):
        t0 = _clock()
        on_states(self, msg)
        t1 = _clock()
        s = _states
        s["n"] += 1
        s["ns"] += t1 - t0
        s["items"] += len(msg)      # the cache takes a list of converted states
        s["first"] = s["first"] or t0
        s["last"] = t1
    # RosRobotPort's subscription converts the array, then calls the cache's
    # on_states, looked up at each call: the conversion is not in this time
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
