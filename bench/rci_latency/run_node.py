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

"""Start one of bsal_ros's console entry points with opt-in experiments.

    python bench/rci_latency/run_node.py ENTRY [--switch-interval S]
        [--trace FILE] [--no-states] [--gc-freeze S] [--slow-smbus2] [--executor K]
        -- <the entry point's own arguments>

ENTRY: hardware_node, rci_gateway, rdi_gateway or brak_bringup. Without
options this is the same as the console script. The options change this
process only, from outside the package (nothing in bsal_ros is edited):
  --switch-interval S  sys.setswitchinterval(S) (Python's default: 0.005 s)
  --trace FILE         timestamps along the acked-command path (tracemarks.py)
  --no-states          the RCI gateway does not subscribe to device_states (its
                       topic is renamed to one nobody publishes): what the
                       gateway pays for deserialising them; Get inquiries then
                       go through the get_device_states service
  --gc-freeze S        S seconds after start (the nodes are up), one full
                       garbage collection, then gc.freeze(): what lives then
                       is never scanned again, so later collections of the
                       oldest generation are short (every executable has done
                       this itself at start since bcd61cb: it still matters
                       for bench_rci.py --before-src with older code)
  --slow-smbus2        bus_backend smbus2 is Smbus2Bus over the simulated boards,
                       each transfer taking its wire time at 100 kHz
                       (bsal_ros/test/hardware_helpers.py, wire_timed_smbus2)
  --executor K         the runtime spins the nodes on rclpy's single, multi
                       (4 threads) or events executor (the executables' own)
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys

ENTRIES = {
    "hardware_node": "bsal_ros.nodes.hardware_node",
    "rci_gateway": "bsal_ros.nodes.rci_gateway",
    "rdi_gateway": "bsal_ros.nodes.rdi_gateway",
    "brak_bringup": "bsal_ros.nodes.bringup",
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("entry", choices=sorted(ENTRIES))
    ap.add_argument("--switch-interval", type=float)
    ap.add_argument("--trace")
    ap.add_argument("--no-states", action="store_true")
    ap.add_argument("--gc-freeze", type=float)
    ap.add_argument("--slow-smbus2", action="store_true")
    ap.add_argument("--executor", choices=["single", "multi", "events"])
    a = ap.parse_args(argv)
    if a.gc_freeze:
        import gc
        import threading

        def freeze():
            gc.collect()
            gc.freeze()
        threading.Timer(a.gc_freeze, freeze).start()
    if a.switch_interval:
        sys.setswitchinterval(a.switch_interval)
    import importlib

    module = importlib.import_module(ENTRIES[a.entry])
    if a.no_states:
        from bsal_ros.nodes import rci_gateway
        subscribe = rci_gateway.RciGatewayNode.create_subscription

        def create_subscription(self, msg_type, topic, *args, **kwargs):
            if topic.endswith("device_states"):
                topic += "_bench_unused"
            return subscribe(self, msg_type, topic, *args, **kwargs)
        rci_gateway.RciGatewayNode.create_subscription = create_subscription
    if a.slow_smbus2:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bsal_ros" / "test"))
        from hardware_helpers import wire_timed_smbus2

        from bsal_ros.hardware.backends import register_backend
        register_backend("smbus2", wire_timed_smbus2)
    if a.executor in ("single", "multi"):
        from rclpy import executors

        from bsal_ros.nodes import runtime
        runtime.make_executor = lambda context=None: (
            executors.SingleThreadedExecutor(context=context) if a.executor == "single"
            else executors.MultiThreadedExecutor(num_threads=4, context=context))
    if a.trace:
        from tracemarks import install      # this script's folder is on sys.path
        install(a.trace)
    sys.argv = [a.entry] + rest
    return module.main() or 0


if __name__ == "__main__":
    raise SystemExit(main())
