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

"""Helpers of the hardware node tests (no tests here): a private context with
an executor spinning in a thread, a probe node that records topics, and
blocking service/action calls with generous timeouts (no timed assertions)."""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("rclpy")  # the project venv has it (make test)

import rclpy  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
import rclpy.context  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import (DurabilityPolicy, qos_profile_sensor_data, QoSProfile,  # noqa: E402
                       ReliabilityPolicy)

from bsal_ros.nodes.runtime import make_executor  # noqa: E402

TIMEOUT = 20.0


def wait_for(cond, timeout=TIMEOUT, step=0.01):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


class RosEnv:

    def __init__(self):
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)
        # the executor the executables build (the EventsExecutor)
        self.executor = make_executor(self.context)
        self.nodes = []
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self._stop = False
        self.thread.start()

    def _spin(self):
        while not self._stop and self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:  # shutdown races
                if self._stop:
                    return
                raise

    def add(self, node):
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def close(self):
        self._stop = True
        self.thread.join(5)
        for n in reversed(self.nodes):
            if hasattr(n, "close"):
                n.close()
            self.executor.remove_node(n)
            n.destroy_node()
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)


class Probe(Node):
    """Subscribes to topics, keeps the messages, calls services and actions."""

    def __init__(self, env: RosEnv, name="probe", namespace=""):
        super().__init__(name, namespace=namespace, context=env.context)
        self.env = env
        self.msgs: dict[str, list] = {}
        self._lock = threading.Lock()
        self._svc_clients = {}
        self._action_nodes = 0       # nodes of action_client()

    def listen(self, msg_type, topic, qos=10, keep=50):
        self.msgs.setdefault(topic, [])

        def cb(m, topic=topic):
            with self._lock:
                lst = self.msgs[topic]
                lst.append(m)
                if len(lst) > keep:
                    del lst[0]
        if qos == "sensor":
            qos = qos_profile_sensor_data
        elif qos == "latched":
            qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        return self.create_subscription(msg_type, topic, cb, qos)

    def last(self, topic):
        with self._lock:
            lst = self.msgs.get(topic) or []
            return lst[-1] if lst else None

    def wait_msg(self, topic, cond=lambda m: True, timeout=TIMEOUT):
        def check():
            with self._lock:
                for m in reversed(self.msgs.get(topic) or []):
                    if cond(m):
                        return m
            return None
        return wait_for(check, timeout)

    def kept(self, topic):
        """A copy of the messages kept on ``topic`` (the newest ``keep``), oldest first."""
        with self._lock:
            return list(self.msgs.get(topic) or [])

    def clear(self, topic):
        with self._lock:
            self.msgs[topic] = []

    def call(self, srv_type, name, request, timeout=TIMEOUT):
        cli = self._svc_clients.get(name)
        if cli is None:
            cli = self._svc_clients[name] = self.create_client(srv_type, name)
        assert cli.wait_for_service(timeout_sec=timeout), f"no service {name}"
        fut = cli.call_async(request)
        assert wait_for(fut.done, timeout), f"{name} did not answer"
        return fut.result()

    def action_client(self, action_type, name):
        # on a node of its own, added to the spinning executor once the client
        # is whole: rclpy's ActionClient joins its node before it has its lock,
        # and an executor looking at it in that window fails (ros2/rclpy#1589,
        # fixed in rclpy 9.1.5; the wheels here have 9.1.2)
        self._action_nodes += 1
        node = Node(f"{self.get_name()}_action_{self._action_nodes}",
                    namespace=self.get_namespace(), context=self.env.context)
        cli = ActionClient(node, action_type, name)
        self.env.add(node)
        assert cli.wait_for_server(timeout_sec=TIMEOUT), f"no action server {name}"
        return cli

    @staticmethod
    def wait_future(fut, timeout=TIMEOUT):
        assert wait_for(fut.done, timeout), "future not done"
        return fut.result()


def set_drive(probe, duty, lease_s=0.0):
    """set_motors on the drive (dc_motor 0) at ``duty`` percent through
    ``probe``, with a command lease of ``lease_s`` (0: none); its Result."""
    from bsal_interfaces.msg import MotorCommand
    from bsal_interfaces.srv import SetMotors
    return probe.call(SetMotors, "set_motors", SetMotors.Request(
        device_class="dc_motor", lease_s=lease_s,
        commands=[MotorCommand(id=0, mode=MotorCommand.MODE_DUTY_CYCLE, value=duty)])).result


def drive_state(arr):
    """The drive's (dc_motor 0) state in a DeviceStateArray; None when it is not in it."""
    return next((s for s in arr.states if s.device_class == "dc_motor" and s.id == 0), None)
