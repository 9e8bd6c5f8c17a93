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

"""The worked example of docs/EXTENDING.md: a bumper board kind that is not
part of Brak, a package of its own (test/plugins/bsal_bumper, loaded through
its entry point), on the simulated bus and on the smbus2 backend against a
fake SMBus, through the codecs, an RDI frame and the viewer, and end to end
through ROS: its own topic, device_states, /diagnostics, the RCI gateway
(CAcSn, CGtSnIq DATA and STATUS, CRs) and the RDI stream, in this process
and in brak_bringup, which imports nothing of it but its entry point."""

import copy
import socket
import time

import pytest

from bsal_ros.core import DeviceState
from bsal_ros.core.device_classes import ALL_CLASSES
from bsal_ros.hardware.description import DescriptionError, load_description
from bsal_ros.hardware.diagnostics import device_diagnostics
from bsal_ros.hardware.robot import Robot
from bsal_ros.kinds import board_types, data_fields, device_classes
from bsal_ros.protocol import encode_rdi_frame, RdiDecoder, RdiSensor
from bsal_ros.rdi.state import StreamState
from bsal_ros.viewer.model import describe, ViewerModel
import bumper_kind as bumper  # noqa: F401  (registers the bumper)
from plugin_kinds import config_with
from test_hardware_bus import FakeSMBus as SharedFakeSMBus


def bumper_robot():
    return load_description(overrides={"robot": bumper.DESCRIPTION})["robot"]


def press(robot, mask):
    vb = [d for d in robot.bus.attached() if isinstance(d, bumper.VirtualBumperBoard)]
    assert len(vb) == 1
    vb[0].pressed = mask


def test_the_bumper_is_registered_everywhere():
    assert bumper.INSTALLED, "scripts/setup.sh installs test/plugins/bsal_bumper"
    # after Brak's own kinds, among whichever other plugins are installed
    assert "bumper" in board_types() and "bumper" in device_classes()[len(ALL_CLASSES):]
    assert "extra" in data_fields()           # its contacts reach the CA view
    robot = copy.deepcopy(bumper_robot())
    robot["devices"]["bumper"]["front_bumper"]["board"] = "drive"
    with pytest.raises(DescriptionError, match="cannot carry"):
        load_description(overrides={"robot": robot})


def test_simulated_bumper_reads_its_contacts_and_diagnoses_them():
    now = [0.0]
    r = Robot(bumper_robot(), seed=1, clock=lambda: now[0])
    try:
        r.start(activate=True)
        press(r, 0b0101)
        for _ in range(5):
            now[0] += 0.1
            r.cycle()
        res, states = r.get_states("bumper")
        assert res.ok and states[0].extra == {"contacts": 0b0101} and states[0].on
        diag = {d.name: d for d in device_diagnostics(r, r.clock())}
        assert diag["bumper 0"].values["contacts"] == "0101"
        assert diag["bumper 0"].hardware_id.endswith("0x40")
    finally:
        r.close()


class FakeSMBus(SharedFakeSMBus):
    """smbus2.SMBus with one bumper board at 0x40 (every other address: ENXIO);
    each read of the board advances its sequence number, as the real one does."""

    def __init__(self, bus):
        super().__init__(bus)
        self.regs = {0x40: [0] * 256}
        self.regs[0x40][0] = bumper.WHO_AM_I
        self.contacts = 0

    def _dev(self, addr):
        r = super()._dev(addr)
        r[1], r[2], r[3] = 0x01, (r[2] + 1) & 0xFF, self.contacts   # STATUS SEQ CONTACTS
        return r


def test_bumper_on_the_smbus2_backend():
    desc = copy.deepcopy(bumper_robot())
    desc["boards"] = {"bumper": desc["boards"]["bumper"]}
    desc["devices"] = {"bumper": desc["devices"]["bumper"]}
    made = []

    def factory(n):
        made.append(FakeSMBus(n))
        return made[-1]

    r = Robot(desc, backend="smbus2", i2c_bus=5, smbus_factory=factory)
    try:
        r.start(activate=True)
        assert made[0].regs[0x40][0x40] == 0x01            # ENABLE written
        made[0].contacts = 0b1001
        r.cycle(r.clock() + 1.0)
        _, (s,) = r.get_states("bumper")
        assert s.up and s.ok and s.extra == {"contacts": 0b1001}
    finally:
        r.close()


def test_bumper_in_an_rdi_frame_and_the_viewer():
    st = StreamState()
    st.update_devices([DeviceState("bumper", 0, on=True, statval=0x700, stamp=1.0,
                                   extra={"contacts": 6.0})])
    wire = encode_rdi_frame(st.build_frame())
    (p,) = RdiDecoder().feed(wire)
    assert isinstance(p, RdiSensor) and p.sub_code == bumper.RDI_SUB
    assert p.items == [(0, bumper.BumperReading(6, 0x700))]
    m = ViewerModel(layout={})
    m.apply(p)
    assert m.sensors["bumper"][0].contacts == 6
    assert describe(p).startswith("RDI-Sn BUMPER general n=1 0:contacts=0110")
    pytest.importorskip("PIL")
    from bsal_ros.viewer.render import render
    render(m, size=(400, 300))


def spin_in_background(ex, ros_context):
    """Spin ``ex`` in a thread until the returned list gets an item."""
    import threading
    stop = []

    def spin_loop():
        while not stop and ros_context.ok():
            ex.spin_once(timeout_sec=0.05)

    spin = threading.Thread(target=spin_loop, daemon=True)
    spin.start()
    return stop, spin


def wait(cond, what, timeout=60.0):
    """Until ``cond()``; fails naming ``what`` after a generous ``timeout``."""
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.05)


class SpunProbe:
    """A probe node (``self.node``) spun by an executor of its own in the
    background until :meth:`close`."""

    def spin(self, ros_context) -> None:
        """Start spinning ``self.node``."""
        from rclpy.executors import SingleThreadedExecutor
        self.ex = SingleThreadedExecutor(context=ros_context)
        self.ex.add_node(self.node)
        self._stop, self._spin = spin_in_background(self.ex, ros_context)

    def close(self) -> None:
        """Stop spinning and destroy the node."""
        self._stop.append(1)
        self._spin.join(5)
        self.ex.remove_node(self.node)
        self.node.destroy_node()
        self.ex.shutdown()


class BumperProbe(SpunProbe):
    """A node in ``ns`` that records ``bumper_00`` (``got["topic"]``) and
    /diagnostics (``got["diag"]``: statuses), spun in the background."""

    def __init__(self, ros_context, ns: str, name: str):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from std_msgs.msg import UInt8
        self.got = {"topic": [], "diag": []}
        self.node = rclpy.create_node(name, namespace=ns, context=ros_context)
        self.node.create_subscription(UInt8, "bumper_00",
                                      lambda m: self.got["topic"].append(m.data), 10)
        self.node.create_subscription(DiagnosticArray, "/diagnostics",
                                      lambda m: self.got["diag"].extend(m.status), 50)
        self.spin(ros_context)


def rci_activates_and_reads_the_bumper(c, contacts: int) -> None:
    """Over the logged-in RciClient ``c``: CAcSn of bumper 0 is acknowledged,
    CGtSnIq DATA gives ``contacts`` and STATUS says it is on."""
    from bsal_ros.protocol.constants import GetSensorStatus, RciCode
    from bsal_ros.protocol.rci import CAcSn, CCnAc, CGtSnIq, CGtSnRp, StatusData
    from bsal_ros.protocol.values import Statval
    assert c.request(CAcSn.one(bumper.RCI_SUB, 0, 1, rq_ack=True)) == CCnAc(RciCode.CAcSn)
    rp = c.request(CGtSnIq.one(bumper.RCI_SUB, 0, GetSensorStatus.DATA))
    assert isinstance(rp, CGtSnRp) and rp.items == [(0, bumper.BumperData(contacts))], rp
    st = c.request(CGtSnIq.one(bumper.RCI_SUB, 0, GetSensorStatus.STATUS))
    assert isinstance(st.items[0][1], StatusData), st
    assert Statval.unpack(st.items[0][1].statval).on, st


@pytest.mark.ros
@pytest.mark.timeout(180)
def test_bumper_end_to_end_through_ros_rci_and_rdi(ros_context):
    """Hardware node (sim, bumper added by the description), both gateways:
    device_states, /diagnostics, RCI CAcSn/CGtSnIq and the RDI stream."""
    import uuid
    rclpy = pytest.importorskip("rclpy")
    from bsal_interfaces.msg import DeviceStateArray
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.parameter import Parameter
    from std_msgs.msg import UInt8

    from bsal_ros.nodes.hardware_node import HardwareNode
    from bsal_ros.nodes.rci_gateway import RciGatewayNode
    from bsal_ros.nodes.rdi_gateway import RdiGatewayNode
    from bsal_ros.nodes.runtime import make_executor
    from bsal_ros.protocol.constants import RciCode
    from bsal_ros.protocol.rci import CCnAc, CRs
    from bsal_ros.rci.client import RciClient
    from bsal_ros.rci.users import DEMO_KEY

    ns = "/bumper_" + uuid.uuid4().hex[:8]
    ex = make_executor(ros_context)
    hw = HardwareNode(context=ros_context, namespace=ns, auto_home=False,
                      diagnostics_period=0.2, robot=bumper.DESCRIPTION)
    rci = RciGatewayNode(context=ros_context, namespace=ns, parameter_overrides=[
        Parameter("port", value=0), Parameter("watchdog_s", value=10.0)])
    rdi = RdiGatewayNode(context=ros_context, namespace=ns, parameter_overrides=[
        Parameter("realtime_port", value=0), Parameter("ca_port", value=0)])
    probe = rclpy.create_node("bumper_probe", namespace=ns, context=ros_context)
    got = {"states": [], "diag": [], "topic": []}
    probe.create_subscription(UInt8, "bumper_00", lambda m: got["topic"].append(m.data), 10)
    probe.create_subscription(DeviceStateArray, "device_states",
                              lambda m: got["states"].append(m), 50)
    probe.create_subscription(DiagnosticArray, "/diagnostics", lambda m: got["diag"].append(m), 50)
    for n in (hw, rci, rdi, probe):
        ex.add_node(n)
    stop, spin = spin_in_background(ex, ros_context)

    try:
        press(hw.robot, 0b0011)
        rci_port = rci.start()
        rt_port = rdi.start()["realtime"]
        wait(lambda: rci.robot.device_list_known, "device list")
        # its own topic, device_states and /diagnostics
        wait(lambda: 3 in got["topic"], "bumper_00 (std_msgs/UInt8) with the contacts")
        wait(lambda: any(s.device_class == "bumper" and list(s.extra_names) == ["contacts"]
                         and list(s.extra_values) == [3.0]
                         for m in got["states"] for s in m.states), "bumper on device_states")
        wait(lambda: any(st.name.endswith("bumper 0") and
                         {kv.key: kv.value for kv in st.values}.get("contacts") == "0011"
                         for m in got["diag"] for st in m.status), "bumper on /diagnostics")
        # RCI: activate it, ask its data
        with RciClient("127.0.0.1", rci_port, timeout=10) as c:
            c.handshake("demo", DEMO_KEY)
            rci_activates_and_reads_the_bumper(c, 3)
            # RDI real-time stream
            sock = socket.create_connection(("127.0.0.1", rt_port), timeout=10)
            dec, packets, end = RdiDecoder(), [], time.monotonic() + 20
            while time.monotonic() < end and not any(     # (the session still holds it on)
                    isinstance(p, RdiSensor) and p.sub_code == bumper.RDI_SUB
                    and p.items[0][1].contacts == 3 for p in packets):
                packets += dec.feed(sock.recv(65536))
            sock.close()
            assert any(isinstance(p, RdiSensor) and p.sub_code == bumper.RDI_SUB
                       and p.items == [(0, (3, p.items[0][1].status))] for p in packets)
            # CRs: the reset switches every device off; the bumper, on for the
            # ROS side before the session, runs again once the reset is answered
            assert c.request(CRs(rq_ack=True)) == CCnAc(RciCode.CRs)
            _, (after,) = hw.robot.get_states("bumper")
            assert after.on, "CRs did not switch the bumper back on for the ROS side"
    finally:
        rci.stop()
        rdi.stop()
        stop.append(1)
        spin.join(5)
        for n in (probe, rdi, rci, hw):
            ex.remove_node(n)
            n.destroy_node()
        ex.shutdown()


def bumper_config(tmp_path):
    """config/brak.yaml with the bumper's description entries added."""
    return config_with(tmp_path, bumper.DESCRIPTION, "brak_bumper.yaml")


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_bumper_through_brak_bringup_loaded_by_its_entry_point(tmp_path, ros_context):
    """brak_bringup (its own process: the bumper reaches it only through the
    entry point) with a description holding a bumper board: its topic,
    /diagnostics, RCI CAcSn, CGtSnIq DATA and STATUS, CRs, the RDI stream."""
    import uuid
    pytest.importorskip("rclpy")
    from test_bringup import Bridge, read_rdi

    from bsal_ros.protocol.constants import RciCode
    from bsal_ros.protocol.rci import CCnAc, CRs
    from bsal_ros.rci.client import RciClient
    from bsal_ros.rci.users import DEMO_KEY

    assert bumper.INSTALLED
    ns = "/bumper_" + uuid.uuid4().hex[:8]
    probe = BumperProbe(ros_context, ns, "bumper_bridge_probe")
    got = probe.got

    bridge = None
    try:
        bridge = Bridge("--namespace", ns, "--config", str(bumper_config(tmp_path)))
        rci_port, rt_port, _ = bridge.ports
        wait(lambda: 0 in got["topic"], f"{ns}/bumper_00")
        wait(lambda: any(s.name == f"{ns}/hardware_node: bumper 0" and
                         {kv.key: kv.value for kv in s.values}.get("contacts") == "0000"
                         for s in list(got["diag"])), "the bumper on /diagnostics")
        with RciClient("127.0.0.1", int(rci_port), timeout=10) as c:
            c.handshake("demo", DEMO_KEY)
            rci_activates_and_reads_the_bumper(c, 0)
            packets = read_rdi(rt_port, 3.0)
            assert any(isinstance(p, RdiSensor) and p.sub_code == bumper.RDI_SUB
                       and [(i, d.contacts) for i, d in p.items] == [(0, 0)] for p in packets)
            assert c.request(CRs(rq_ack=True)) == CCnAc(RciCode.CRs)
            # the reset is answered once the bumper runs again for the ROS side
            got["topic"].clear()
            wait(lambda: got["topic"], f"{ns}/bumper_00 after CRs")
    finally:
        rc = bridge.stop() if bridge is not None else None
        probe.close()
    assert rc == 0, "\n".join(bridge.lines)
    assert not [ln for ln in bridge.lines if "device-kind plugin" in ln], bridge.lines
