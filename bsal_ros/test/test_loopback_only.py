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

"""No ROS traffic leaves loopback while nodes run (DDS discovery included).

A raw AF_PACKET socket sees every frame on every interface. Two nodes
exchange messages for a while; the capture must show their DDS traffic on
`lo` (proof that the sniffer sees it) and none on any other interface.
"""
import os
import socket
import struct
import threading
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import String

pytestmark = pytest.mark.ros

ETH_P_ALL = 0x0003
# Fast DDS: discovery on 7400 + 250 * domain (+ offsets), user traffic above;
# the default multicast group for discovery.
DDS_PORTS = range(7400, 7400 + 250 * 233)
DDS_MULTICAST = socket.inet_aton("239.255.0.1")


def udp_ports(frame: bytes):
    """(src_ip, dst_ip, src_port, dst_port) of an IPv4/UDP Ethernet frame, else None."""
    if len(frame) < 14 + 20 + 8 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0F) * 4
    if ip[9] != 17 or len(ip) < ihl + 8:
        return None
    src_port, dst_port = struct.unpack_from("!HH", ip, ihl)
    return ip[12:16], ip[16:20], src_port, dst_port


def is_dds(info):
    _, dst, sport, dport = info
    return dst == DDS_MULTICAST or sport in DDS_PORTS or dport in DDS_PORTS


@pytest.mark.skipif(os.geteuid() != 0, reason="a raw packet capture needs root (CI runs as root)")
def test_dds_traffic_stays_on_loopback(ros_context):
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    sniffer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sniffer.settimeout(0.1)
    seen = {}
    stop = threading.Event()

    def capture():
        while not stop.is_set():
            try:
                frame, address = sniffer.recvfrom(65535)
            except socket.timeout:
                continue
            info = udp_ports(frame)
            if info and is_dds(info):
                seen.setdefault(address[0], []).append(info)

    capturer = threading.Thread(target=capture, daemon=True)
    capturer.start()

    talker = rclpy.create_node("loopback_talker", context=ros_context)
    listener = rclpy.create_node("loopback_listener", context=ros_context)
    got = []
    listener.create_subscription(String, "loopback_check", lambda m: got.append(m.data), 10)
    pub = talker.create_publisher(String, "loopback_check", 10)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(talker)
    executor.add_node(listener)
    # until the nodes have discovered each other and talked (discovery and
    # data traffic both captured), with a deadline for a loaded machine
    deadline = time.monotonic() + 60.0
    n = 0
    while not (got and seen.get("lo")) and time.monotonic() < deadline:
        pub.publish(String(data=f"msg {n}"))
        n += 1
        executor.spin_once(timeout_sec=0.05)
    stop.set()
    capturer.join(timeout=2)
    sniffer.close()
    executor.shutdown()
    talker.destroy_node()
    listener.destroy_node()

    assert got, "the nodes never talked, so the capture proves nothing"
    assert seen.get("lo"), "the sniffer saw no DDS traffic on lo: capture broken"
    leaked = {iface: len(pkts) for iface, pkts in seen.items() if iface != "lo"}
    assert not leaked, f"DDS packets left loopback: {leaked}"
