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

"""Drive the robot with cmd_vel for a while, then stop it (no ros2 CLI needed).

    brak_drive 0.2 0.0 --seconds 3            # 0.2 m/s straight ahead for 3 s
    brak_drive 0.15 0.3 --seconds 5 --namespace brak2
    brak_drive 0.2 0.0 --ros-args -r __ns:=/brak2   # ROS arguments, as anywhere

The hardware node stops the robot by itself 0.5 s after the last cmd_vel;
this tool publishes at 10 Hz and sends a final zero Twist when it ends.
"""
import sys
import time

from bsal_ros.core.cli import OneLineParser
from bsal_ros.nodes.cli import ROS_ARGS, split_ros_args
from bsal_ros.nodes.stop_request import ignore_late_signals, install_signal_handlers, StopRequest


#: seconds brak_drive waits for a cmd_vel subscriber before it gives up (exit 1)
DISCOVERY_S = 15.0


def main(argv=None) -> int:
    """Publish the Twist for ``--seconds``, then a zero Twist; exit code 0
    (1: nobody subscribes to cmd_vel within ``DISCOVERY_S``)."""
    p = OneLineParser(prog="brak_drive", description=__doc__.split("\n\n")[0])
    p.add_argument("linear", type=float, help="forward speed, m/s")
    p.add_argument("angular", type=float, help="turn rate, rad/s (positive: left)")
    p.add_argument("--seconds", type=float, default=3.0, help="how long to drive")
    p.add_argument("--namespace", default="", help="the robot\'s namespace")
    p.add_argument("--rate", type=float, default=10.0, help="messages per second")
    ours, ros_args = split_ros_args(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(ours)

    # SIGINT and SIGTERM only set a flag (bsal_ros.nodes.stop_request): rclpy's own
    # handlers would invalidate the context before the final zero Twist.
    stop = StopRequest()
    install_signal_handlers(stop)
    from geometry_msgs.msg import Twist
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    rclpy.init(args=["brak_drive", ROS_ARGS, *ros_args] if ros_args else None,
               signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("brak_drive", namespace=args.namespace or None)
    try:
        pub = node.create_publisher(Twist, "cmd_vel", 10)
        cmd = Twist()
        cmd.linear.x = args.linear
        cmd.angular.z = args.angular
        log = node.get_logger()
        # Wait for the subscriber so the first messages are not lost; discovery
        # of a new process can take seconds on a loaded machine.
        deadline = time.monotonic() + DISCOVERY_S
        while (pub.get_subscription_count() == 0 and time.monotonic() < deadline
               and not stop.requested):
            time.sleep(0.05)
        if pub.get_subscription_count() == 0:
            if stop.requested:
                return 0
            log.error(f"no subscriber on {pub.topic_name}: is the hardware node running "
                      f"(same ROS_DOMAIN_ID)?")
            return 1
        log.info(f"driving {args.linear:.2f} m/s, {args.angular:.2f} rad/s "
                 f"for {args.seconds:.1f} s on {pub.topic_name}")
        end = time.monotonic() + args.seconds
        try:
            while time.monotonic() < end and not stop.requested:
                pub.publish(cmd)
                time.sleep(1.0 / args.rate)
        finally:
            pub.publish(Twist())
            log.info("stopped (zero Twist sent)" + (f" on {stop.reason}" if stop.requested else ""))
            time.sleep(0.2)
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        ignore_late_signals()


if __name__ == "__main__":
    raise SystemExit(main())
