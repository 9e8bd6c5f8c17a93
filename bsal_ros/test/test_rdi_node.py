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

"""The RDI gateway node on the simulated robot (hardware node, sim backend, and
the RCI gateway for the control-application view), all in one private rclpy
context with the executor in a thread. Both streams are decoded with the
protocol library and compared with the ROS topics. ROS_DOMAIN_ID and
ROS_AUTOMATIC_DISCOVERY_RANGE come from the environment (conftest.py)."""

from __future__ import annotations

import math
import os
import socket
import threading
import time
import uuid

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

rclpy = pytest.importorskip("rclpy")

from bsal_interfaces.msg import DeviceStateArray, MotorCommand  # noqa: E402, I100
from bsal_interfaces.srv import SetMotors  # noqa: E402
from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import PoseWithCovarianceStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import (DurabilityPolicy, qos_profile_sensor_data, QoSProfile,  # noqa: E402
                       ReliabilityPolicy)
from sensor_msgs.msg import Range  # noqa: E402

from bsal_ros.nodes.hardware_node import HardwareNode  # noqa: E402
from bsal_ros.nodes.rci_gateway import RciGatewayNode  # noqa: E402
from bsal_ros.nodes.rdi_gateway import RdiGatewayNode  # noqa: E402
from bsal_ros.nodes.runtime import make_executor  # noqa: E402
from bsal_ros.protocol import (CGtSnIq, CGtSnRp, GetSensorStatus, RdiBaseTime,  # noqa: E402
                               RdiDecoder, RdiMotor, RdiOrientEgo, RdiOrientOmni, RdiSensor,
                               RdiSensorType, SensorType, Statval)
from bsal_ros.rci.client import RciClient  # noqa: E402
from bsal_ros.rci.users import DEMO_KEY  # noqa: E402

SPEED_OF_SOUND = 343.0


def test_environment_is_local():
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert os.environ.get("ROS_DOMAIN_ID")


class Rig:

    def __init__(self, context):
        self.context = context
        ns = "/rdi_" + uuid.uuid4().hex[:8]
        self.executor = make_executor(context)     # the executables' executor
        self.hw = HardwareNode(context=context, namespace=ns, auto_home=False, rate_scale=2.0)
        self.rci = RciGatewayNode(context=context, namespace=ns,
                                  parameter_overrides=[Parameter("port", value=0),
                                                       Parameter("watchdog_s", value=10.0)])
        self.rdi = RdiGatewayNode(context=context, namespace=ns, parameter_overrides=[
            Parameter("realtime_port", value=0), Parameter("ca_port", value=0),
            Parameter("realtime_rate_hz", value=20.0), Parameter("ca_rate_hz", value=20.0)])
        self.probe = rclpy.create_node("rdi_probe", namespace=ns, context=context)
        self.msgs: dict[str, list] = {"range": [], "states": [], "pose": [], "base": []}
        self.lock = threading.Lock()
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.probe.create_subscription(Range, "sonar_00", lambda m: self._keep("range", m),
                                       qos_profile_sensor_data)
        self.probe.create_subscription(DeviceStateArray, "device_states",
                                       lambda m: self._keep("states", m), 50)
        self.probe.create_subscription(PoseWithCovarianceStamped, "pose",
                                       lambda m: self._keep("pose", m), 10)
        self.probe.create_subscription(Time, "base_time", lambda m: self._keep("base", m),
                                       latched)
        for n in (self.hw, self.rci, self.rdi, self.probe):
            self.executor.add_node(n)
        self._stop = False
        self._spin = threading.Thread(target=self._spin_loop, daemon=True)
        self._spin.start()
        self.rci_port = self.rci.start()
        self.ports = self.rdi.start()

    def _keep(self, k, m):
        with self.lock:
            lst = self.msgs[k]
            lst.append(m)
            if len(lst) > 400:
                del lst[:200]

    def _spin_loop(self):
        while not self._stop and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def wait(self, cond, timeout=30.0, what="condition"):
        deadline = time.monotonic() + timeout
        while True:
            v = cond()
            if v:
                return v
            assert time.monotonic() < deadline, \
                f"timed out waiting for {what() if callable(what) else what}: {v!r}"
            time.sleep(0.02)

    def close(self):
        self.rdi.stop()
        self.rci.stop()
        self._stop = True
        self._spin.join(5)
        for n in (self.probe, self.rdi, self.rci, self.hw):
            self.executor.remove_node(n)
            n.destroy_node()
        self.executor.shutdown()


@pytest.fixture(scope="module")
def rig():
    import rclpy.context
    ctx = rclpy.context.Context()
    rclpy.init(context=ctx)
    r = Rig(ctx)
    yield r
    r.close()
    rclpy.shutdown(context=ctx)


class Stream:

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.settimeout(0.2)
        self.dec = RdiDecoder()
        self.packets: list = []

    def read_until(self, cond, timeout=20.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end and not cond(self.packets):
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            assert data, "stream closed"
            self.packets += self.dec.feed(data)
        return cond(self.packets)

    def close(self):
        self.sock.close()


def kinds(packets):
    return {(type(p).__name__, getattr(p, "sub_code", None)) for p in packets}


ALL_KINDS = {("RdiBaseTime", None), ("RdiSensor", 1), ("RdiSensor", 2), ("RdiSensor", 3),
             ("RdiSensor", 4), ("RdiMotor", 1), ("RdiActuator", 1), ("RdiActuator", 2),
             ("RdiOrientEgo", None), ("RdiOrientOmni", None)}


def realtime_kinds(rig):
    st = rig.rdi.gateway.states["realtime"]
    return rig.rdi.gateway.run_sync(lambda: kinds(st.build_frame())
                                    | ({("RdiBaseTime", None)} if st.base_time else set()))


_LAST = {}


def has_all_kinds(rig):
    k = realtime_kinds(rig)
    _LAST["kinds"] = (ALL_KINDS - k, dict(rig.rdi.received))
    return k == ALL_KINDS


def test_realtime_stream_every_kind_first_frame(rig):
    rig.wait(lambda: has_all_kinds(rig), what=lambda: f"hardware data in the gateway {_LAST}")
    s = Stream(rig.ports["realtime"])
    # base time on connect, then the first frame (<= 1/rate later) has every kind
    assert s.read_until(lambda g: any(isinstance(p, RdiOrientOmni) for p in g))
    assert isinstance(s.packets[0], RdiBaseTime)
    end = [i for i, p in enumerate(s.packets) if isinstance(p, RdiOrientOmni)][0]
    assert kinds(s.packets[:end + 1]) == ALL_KINDS
    s.close()


def _base_s(rig):
    base = rig.wait(lambda: rig.msgs["base"][-1] if rig.msgs["base"] else None, what="base")
    return base.sec + base.nanosec * 1e-9


def test_realtime_values_agree_with_ros_topics(rig):
    # drive a little so motors, encoders and pose are not all zero
    cli = rig.probe.create_client(SetMotors, "set_motors")
    assert cli.wait_for_service(timeout_sec=20)
    req = SetMotors.Request(device_class="dc_motor",
                            commands=[MotorCommand(id=0, mode=MotorCommand.MODE_DUTY_CYCLE,
                                                   value=20.0)])
    fut = cli.call_async(req)
    rig.wait(fut.done, what="set_motors")
    rig.wait(lambda: has_all_kinds(rig), what=lambda: f"hardware data in the gateway {_LAST}")
    base = _base_s(rig)
    s = Stream(rig.ports["realtime"])
    matched = {"range": False, "encoder": False, "motor": False, "pose": False}

    def check(_):
        with rig.lock:
            ranges = list(rig.msgs["range"])
            states = [m for arr in rig.msgs["states"] for m in arr.states]
            poses = list(rig.msgs["pose"])
        for p in s.packets:
            if isinstance(p, RdiSensor) and p.sub_code == RdiSensorType.ULTRASONIC:
                delay, stv = dict(p.items)[0]
                t = base + Statval.unpack(stv).ms / 1000.0
                for r in ranges:
                    rt = r.header.stamp.sec + r.header.stamp.nanosec * 1e-9
                    if abs(rt - t) < 0.0011 and math.isfinite(r.range):
                        # Range.range (m) = delay (us) x c / 2
                        assert r.range == pytest.approx(delay * SPEED_OF_SOUND / 2e6, abs=2e-4)
                        assert round(r.range * 2e6 / SPEED_OF_SOUND) == pytest.approx(delay, abs=1)
                        matched["range"] = True
            elif isinstance(p, RdiSensor) and p.sub_code == RdiSensorType.RELENCODER:
                rd = dict(p.items)[0]
                for m in states:
                    if m.device_class == "relative_encoder" and m.id == 0 and \
                            m.statval == rd.status:
                        assert (m.count, m.d_count, m.d_statval) == (rd.count, rd.d_count,
                                                                     rd.d_status)
                        matched["encoder"] = True
            elif isinstance(p, RdiMotor):
                rd = dict(p.items)[0]
                for m in states:
                    if m.device_class == "dc_motor" and m.id == 0 and m.statval == rd.status:
                        assert m.speedval == rd.speed
                        matched["motor"] = True
            elif isinstance(p, RdiOrientEgo):
                t = base + Statval.unpack(p.status).ms / 1000.0
                for m in poses:
                    mt = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
                    if abs(mt - t) < 0.0011:
                        assert p.xpos == pytest.approx(m.pose.pose.position.x, abs=1e-5)
                        assert p.ypos == pytest.approx(m.pose.pose.position.y, abs=1e-5)
                        matched["pose"] = True
        s.packets = s.packets[-200:]
        return all(matched.values())

    assert s.read_until(check, timeout=60), matched
    s.close()


def test_ca_stream_shows_only_what_the_control_application_received(rig):
    rig.wait(lambda: rig.rci.robot.cached("ultrasonic", list(range(12))) is not None,
             what="RCI cache")
    s = Stream(rig.ports["ca"])
    # before any control application asked: base time only, no device packets
    assert s.read_until(lambda g: len(g) >= 1)
    time.sleep(0.3)   # let a few (empty) frames go by; not an assertion on time
    s.read_until(lambda g: False, timeout=0.3)
    assert all(isinstance(p, RdiBaseTime) for p in s.packets), kinds(s.packets)
    c = RciClient("127.0.0.1", rig.rci_port, timeout=10)
    c.handshake("demo", DEMO_KEY)
    rp = c.request(CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12))
    assert isinstance(rp, CGtSnRp)
    told = {i: d.delay for i, d in rp.items}

    def shows_told(g):
        for p in g:
            if isinstance(p, RdiSensor) and p.sub_code == RdiSensorType.ULTRASONIC:
                got = {i: r.delay for i, r in p.items}
                if got == told:
                    return p
        return None
    p = s.read_until(shows_told, timeout=30)
    assert p
    # only what the CA was told: ultrasonic data, no status (statval 0), nothing else
    us = shows_told(s.packets)
    assert all(r.status == 0 for _, r in us.items)
    assert kinds(s.packets) <= {("RdiBaseTime", None), ("RdiSensor", 1)}
    c.close()
    # the session's end empties the view for the next control application
    ca = rig.rdi.gateway.states["ca"]
    rig.wait(lambda: rig.rdi.gateway.run_sync(lambda: not ca.devices), what="empty CA view")
    s.close()


def test_parameters_refuse_bad_values(rig):
    with pytest.raises(ValueError):
        RdiGatewayNode(context=rig.context, node_name="rdi_bad",
                       parameter_overrides=[Parameter("realtime_rate_hz", value=0.0)])


def test_viewer_snapshot_of_the_simulated_robot(rig, tmp_path, capsys):
    Image = pytest.importorskip("PIL.Image")
    from bsal_ros.viewer import main as viewer_main
    rig.wait(lambda: has_all_kinds(rig), what="hardware data in the gateway")
    out = tmp_path / "brak.png"
    assert viewer_main(["--port", str(rig.ports["realtime"]), "--snapshot", str(out),
                        "--duration", "2.0", "--size", "800x600"]) == 0
    img = Image.open(out).convert("RGB")
    assert img.size == (800, 600)
    colors = img.getcolors(maxcolors=1 << 20)
    assert len(colors) > 20 and max(c for c, _ in colors) < 800 * 600 * 0.95   # not blank
