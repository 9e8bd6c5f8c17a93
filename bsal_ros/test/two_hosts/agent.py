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
"""A probe process on one of the two hosts: a ROS node (topic rates, the
graph, a real tf2_ros Buffer + TransformListener, motor states, the
home_steering action) and the legacy clients of :mod:`.clients`.

    ip netns exec <ns> python -m two_hosts.agent [--ros-namespace /]

Reads one JSON request per line on stdin ({"op": ..., ...}) and answers one
JSON line on stdout ({"ok": true, ...} or {"ok": false, "error": ...}).
Prints ``AGENT READY`` first. Bounded: ``--max-seconds`` (default 300), then it
exits by itself; an empty stdin (the test died) ends it too.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
import time

from bsal_ros.nodes.startup_gc import freeze_startup_objects

SONARS = [f"sonar_{i:02d}" for i in range(12)]


class RosSide:
    """The agent's rclpy node, spun by its own executor thread."""

    def __init__(self, namespace: str, tf: bool):
        import rclpy
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import qos_profile_sensor_data

        from bsal_interfaces.action import HomeSteering
        from bsal_interfaces.msg import DeviceStateArray
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import Range
        self.rclpy = rclpy
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("two_hosts_probe", namespace=namespace,
                                      context=self.context)
        self.lock = threading.Lock()
        self.arrivals: dict[str, list[float]] = {t: [] for t in SONARS + ["odom", "motor_states"]}
        self.motor: list[tuple[float, float, int]] = []   # (t, speed rad/s, speedval)
        self.board_stamps: list[tuple[float, float]] = []  # (t, drive board read stamp)
        self.odom = None
        for t in SONARS:
            self.node.create_subscription(Range, t, self._count(t), qos_profile_sensor_data)
        self.node.create_subscription(Odometry, "odom", self._on_odom, 10)
        self.node.create_subscription(DeviceStateArray, "motor_states", self._on_motors, 10)
        self.buffer = self.listener = None
        if tf:
            import tf2_ros
            self.buffer = tf2_ros.Buffer()
            self.listener = tf2_ros.TransformListener(self.buffer, self.node, spin_thread=False)
        # Made before the executor thread starts: rclpy's ActionClient joins
        # its node before it has its lock, and a spin in that window dies
        # (AttributeError '_lock'), after which no answer is ever taken
        # (ros2/rclpy#1589, fixed in rclpy 9.1.5; the wheels here have 9.1.2).
        self.home_client = ActionClient(self.node, HomeSteering, "home_steering")
        self.home_probed = False
        self.home = {}
        self.spin_error = None
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        while self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.1)
            except Exception as exc:   # noqa: BLE001 - shutting down, or a bug
                if not self.context.ok():
                    return
                self.spin_error = f"{type(exc).__name__}: {exc}"   # every op reports it
                raise

    def _count(self, topic):
        def cb(_msg):
            with self.lock:
                self.arrivals[topic].append(time.monotonic())
        return cb

    def _on_odom(self, msg):
        with self.lock:
            self.arrivals["odom"].append(time.monotonic())
            p = msg.pose.pose
            self.odom = (p.position.x, p.position.y, _yaw(p.orientation),
                         msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)

    def _on_motors(self, msg):
        now = time.monotonic()
        with self.lock:
            self.arrivals["motor_states"].append(now)
            if any(s.device_class == "dc_motor" for s in msg.states):   # the drive board
                self.board_stamps.append((now, msg.header.stamp.sec
                                          + msg.header.stamp.nanosec * 1e-9))
            for s in msg.states:
                if s.device_class == "dc_motor" and s.id == 0:
                    self.motor.append((now, s.speed, s.speedval))

    # ------------------------------------------------------------------ ops
    def graph(self, _req):
        """Nodes (full names) and topics this host sees."""
        nodes = sorted(f"{ns.rstrip('/')}/{n}" for n, ns in
                       self.node.get_node_names_and_namespaces())
        topics = sorted(n for n, _ in self.node.get_topic_names_and_types())
        return {"nodes": nodes, "topics": topics}

    def rates(self, req):
        """Messages per second of each topic over the last ``seconds``."""
        window = float(req.get("seconds", 2.0))
        time.sleep(window)
        now = time.monotonic()
        with self.lock:
            return {"hz": {t: sum(1 for x in a if x > now - window) / window
                           for t, a in self.arrivals.items()}}

    def tf(self, req):
        """lookup_transform(odom, base_link) (latest) next to the last odom pose."""
        from rclpy.duration import Duration
        from rclpy.time import Time
        t = self.buffer.lookup_transform(req.get("target", "odom"), req.get("source", "base_link"),
                                         Time(), timeout=Duration(seconds=req.get("timeout", 5.0)))
        tr = t.transform
        with self.lock:
            odom = self.odom
        return {"tf": [tr.translation.x, tr.translation.y, _yaw(tr.rotation),
                       t.header.stamp.sec + t.header.stamp.nanosec * 1e-9],
                "odom": odom, "frames": [t.header.frame_id, t.child_frame_id]}

    def motor_log(self, req):
        """Drive motor states received since ``since`` (monotonic s)."""
        since = float(req.get("since", 0.0))
        with self.lock:
            return {"motor": [m for m in self.motor if m[0] >= since]}

    def board_gaps(self, req):
        """Gaps (s) between consecutive drive-board reading stamps of
        motor_states received since ``since``: the hardware node's poll period."""
        since = float(req.get("since", 0.0))
        with self.lock:
            stamps = sorted({st for t, st in self.board_stamps if t >= since})
        return {"gaps": [b - a for a, b in zip(stamps, stamps[1:])]}

    def home_start(self, req):
        """Send a home_steering goal; its outcome is read with ``home_status``."""
        from bsal_interfaces.action import HomeSteering
        from first_answer import action_ready, polling
        if not self.home_probed:
            # a probe goal (a motor that does not exist) until it is answered: the
            # goal below cannot lose its acceptance (test/first_answer.py)
            action_ready(self.home_client, HomeSteering.Goal(id=99), polling(),
                         total_s=float(req.get("wait", 30.0)))
            self.home_probed = True
        self.home = {"t_sent": time.monotonic()}
        goal = HomeSteering.Goal()
        goal.id = 0

        def accepted(fut):
            handle = fut.result()
            self.home["accepted"] = bool(handle.accepted)
            if handle.accepted:
                handle.get_result_async().add_done_callback(done)

        def done(fut):
            res = fut.result()
            self.home.update(t_done=time.monotonic(), status=int(res.status),
                             code=int(res.result.result.code),
                             message=res.result.result.message)
        self.home_client.send_goal_async(goal).add_done_callback(accepted)
        return {"t_sent": self.home["t_sent"]}

    def home_status(self, _req):
        """The home_steering goal's outcome so far."""
        return {"home": dict(self.home)}

    def close(self):
        """Stop the executor thread and the context."""
        if self.listener is not None:
            self.listener.unregister()
        self.context.shutdown()
        self.thread.join(5)


def _yaw(q) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


class Agent:
    """Dispatches the requests read on stdin."""

    def __init__(self, a):
        self.ros = RosSide(a.ros_namespace, tf=not a.no_tf) if not a.no_ros else None
        self.ca = None
        self.echo = None

    def handle(self, req: dict) -> dict:
        """One request -> one answer."""
        from . import clients
        op = req["op"]
        if self.ros is not None and op in ("graph", "rates", "tf", "motor_log", "home_start",
                                           "home_status", "board_gaps"):
            if self.ros.spin_error:      # nothing would be answered: say why at once
                raise RuntimeError(f"the agent's executor thread died: {self.ros.spin_error}")
            return getattr(self.ros, op)(req)
        if op == "rci_login":
            if self.ca is not None:
                self.ca.close()
            self.ca = clients.ControlApp(req["host"], req["port"], req["user"], req["key"],
                                         reply_timeout_s=req.get("reply_timeout", 30.0))
            return {"activate": self.ca.prepare()}
        if op == "rci_drive":
            self.ca.drive(float(req["duty"]), float(req.get("period", 0.1)))
            return {}
        if op == "rci_stop":
            return {"stop": self.ca.stop_driving(), "ended": self.ca.ended}
        if op == "rci_log":
            since = float(req.get("since", 0.0))
            return {"log": [e for e in self.ca.log if e[0] >= since], "ended": self.ca.ended}
        if op == "rci_close":
            if self.ca is not None:
                self.ca.close()
                self.ca = None
            return {}
        if op == "run":     # a program in this namespace (the C++ legacy client)
            import subprocess
            r = subprocess.run(req["argv"], capture_output=True, text=True,
                               timeout=float(req.get("timeout", 60.0)))
            return {"rc": r.returncode, "stdout": r.stdout[-4000:], "stderr": r.stderr[-2000:]}
        if op == "rci_bench":
            return self._rci_bench(req, clients)
        if op == "rdi":
            return {s: clients.rdi_kinds(req["host"], p, float(req.get("seconds", 2.0)))
                    for s, p in req["ports"].items()}
        if op == "echo_start":
            self.echo = clients.SizedEcho(req["host"])
            return {"port": self.echo.port}
        if op == "echo":
            return {"ns": clients.echo_samples(req["host"], req["port"], req["req"],
                                               req["rep"], int(req["n"]))}
        if op == "now":
            return {"t": time.monotonic()}
        raise ValueError(f"unknown op {op!r}")

    def _rci_bench(self, req, clients):
        """``n`` timed Get Sensor (12 sonars) and Set Motor (RQ_ACK) requests,
        with the reply sizes (for the echo floor)."""
        from bsal_ros.protocol.rci import CCnAc, CGtSnRp
        inq = clients.sonar_inquiry()
        cmds = [clients.set_motor(d) for d in (10.0, 12.0)]
        inq_b, cmd_b = clients.encoded(inq), [clients.encoded(c) for c in cmds]
        out = {"sonar": [], "motor": [], "bad": {"sonar": [], "motor": []}}

        def record(path, ns, ans, expected):
            if isinstance(ans, expected):
                out[path].append(ns)
            else:
                out["bad"][path].append([ns, clients.answer_name(ans)])
        for i in range(int(req["n"])):
            record("sonar", *self.ca.timed(inq, inq_b), CGtSnRp)
            record("motor", *self.ca.timed(cmds[i & 1], cmd_b[i & 1]), CCnAc)
        # the closing stop is timed too, so the batch has no untimed request
        # in which a stall of the gateway could hide
        t0 = time.perf_counter_ns()
        ans = self.ca.request("stop", clients.set_motor(0.0))
        record("motor", time.perf_counter_ns() - t0, ans, CCnAc)
        out["sizes"] = {"sonar": len(inq_b), "motor": len(cmd_b[0])}
        return out

    def close(self):
        """Close the clients and the ROS side."""
        if self.ca is not None:
            self.ca.close()
        if self.ros is not None:
            self.ros.close()


def main(argv=None) -> int:
    """Serve requests from stdin until it closes, ``quit`` or ``--max-seconds``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ros-namespace", default="/")
    ap.add_argument("--no-tf", action="store_true")
    ap.add_argument("--no-ros", action="store_true")
    ap.add_argument("--max-seconds", type=float, default=300.0)
    a = ap.parse_args(argv)
    timer = threading.Timer(a.max_seconds, lambda: __import__("os")._exit(3))
    timer.daemon = True
    timer.start()
    agent = Agent(a)
    # the agent times RCI answers: a full collection of its start-up objects
    # (rclpy, tf2) holds the GIL and counts as the gateway's answer time (in
    # the fifty peer kills, idle: 68-104 ms, then 6-14 ms with them frozen)
    freeze_startup_objects()
    print("AGENT READY", flush=True)
    try:
        for line in sys.stdin:
            req = json.loads(line)
            if req.get("op") == "quit":
                break
            try:
                ans = {"ok": True, **agent.handle(req)}
            except Exception as exc:   # noqa: BLE001 - every failure is an answer
                ans = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            print(json.dumps(ans), flush=True)
    finally:
        agent.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
