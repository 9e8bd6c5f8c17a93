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

"""A short-lived ROS peer for bench_peer_kills: subscribes to the bridge's
busiest topics and calls its list_devices service in a loop, until it is
SIGKILLed (or ``--max-seconds`` pass: it never outlives a dead bench).

    ip netns exec <ns> python -m two_hosts.peer [--max-seconds 30]

Prints ``PEER READY`` once its subscriptions and client exist.
"""

from __future__ import annotations

import argparse
import os
import threading


def main(argv=None) -> int:
    """Subscribe, call, spin; exit after --max-seconds."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-seconds", type=float, default=30.0)
    a = ap.parse_args(argv)
    timer = threading.Timer(a.max_seconds, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    import rclpy
    from rclpy.qos import qos_profile_sensor_data

    from bsal_interfaces.msg import DeviceStateArray
    from bsal_interfaces.srv import ListDevices
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Range
    from tf2_msgs.msg import TFMessage
    rclpy.init()
    node = rclpy.create_node(f"peer_{os.getpid()}")
    node.create_subscription(Odometry, "odom", lambda _m: None, 10)
    node.create_subscription(TFMessage, "/tf", lambda _m: None, 100)
    node.create_subscription(DeviceStateArray, "motor_states", lambda _m: None, 10)
    node.create_subscription(DeviceStateArray, "device_states", lambda _m: None, 20)
    for i in range(12):
        node.create_subscription(Range, f"sonar_{i:02d}", lambda _m: None,
                                 qos_profile_sensor_data)
    client = node.create_client(ListDevices, "list_devices")
    pending = []

    def ask():
        if client.service_is_ready() and not pending:
            fut = client.call_async(ListDevices.Request())
            pending.append(fut)
            fut.add_done_callback(lambda _f: pending.clear())
    node.create_timer(0.05, ask)
    print("PEER READY", flush=True)
    rclpy.spin(node)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
