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

"""Every installed device-kind plugin through `ros2 launch bsal_ros brak.launch.py`
(issue 41: the two-plugin proof of docs/EXTENDING.md).

The launch is given a config file whose description holds the boards and
devices of every plugin installed beside Brak's own kinds (each plugin
module's DESCRIPTION, merged: test/plugin_kinds.py); the launched processes
reach them through their entry points only. One live session finds every
device of every plugin kind, through the kind's own declaration (topic name
and message type, diagnostics values, RCI and RDI sub-codes and items, viewer
label), on its topic, /diagnostics, RCI (CAcSn, CGtSnIq DATA and STATUS, CRs),
the RDI stream, the C++ library (rciReadSensors, headers regenerated with the
plugins), tshark (a capture of the session through the recording proxy, with
a dissector regenerated with the plugins) and the viewer's model of the RDI
frames. The values expected are the ones the same description gives on a
simulated robot in this process. No plugin is named here: fewer than two
installed is a failure, and a plugin missing from any surface fails naming it.
"""

import re
import socket
import struct
import time
from types import SimpleNamespace
from typing import NamedTuple

import pytest

from bsal_ros.core import DeviceState
from bsal_ros.hardware.description import load_description
from bsal_ros.hardware.diagnostics import device_diagnostics
from bsal_ros.hardware.robot import Robot
from bsal_ros.kinds import DeviceKind, resolve
from bsal_ros.nodes.records import NODE_RECORDS
from bsal_ros.protocol import RdiDecoder, RdiSensor
from bsal_ros.protocol.constants import RdiCode
from bsal_ros.tools import gen_cpp
from bsal_ros.tools.wire_record import RecordingProxy, to_pcap
from bsal_ros.viewer.model import describe, ViewerModel
from bsal_ros.wireshark import gen_lua, lua_path
from plugin_kinds import at_least_two, config_with, installed_plugins, merged_description
from test_kind_bumper import SpunProbe, wait
from test_legacy_api import run as run_legacy
from test_legacy_wire_tables import _compile
from test_ros2_launch import check_clean_shutdown, free_ports, launch, READY, \
    require_ros2_tools
import test_wireshark as tw
from test_wireshark_registry import abbrev, column, parse, tshark

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(300)]

DEADLINE_S = 30.0     # each wait; the whole test stays well under two minutes


class Device(NamedTuple):
    """One plugin device as the simulated robot shows it."""

    kind: DeviceKind
    id: int
    state: DeviceState
    topic: str | None       # its kind's topic name for this device (None: no topic)
    diagnostics: dict       # its kind's own /diagnostics values, as text


def simulated(description: dict, kinds) -> tuple[list[Device], dict]:
    """Every device of ``kinds`` on a simulated robot of ``description``,
    activated and polled, and that robot's description as validated."""
    now = [0.0]
    robot = Robot(load_description(overrides={"robot": description})["robot"], seed=1,
                  clock=lambda: now[0])
    try:
        robot.start(activate=True)
        for _ in range(5):
            now[0] += 0.1
            robot.cycle()
        diags = {d.name: d.values for d in device_diagnostics(robot, robot.clock())}
        out = []
        for k in kinds:
            res, states = robot.get_states(k.name)
            assert res.ok and states, f"kind {k.name!r}: no device in the plugin's DESCRIPTION"
            for s in states:
                label = robot.device(k.name, s.id).label
                topic = None if k.topic is None else k.topic.name.format(id=s.id, name=label)
                own = {key: str(diags[f"{k.name} {s.id}"][key]) for key in k.diagnostics(s)}
                out.append(Device(k, s.id, s, topic, own))
        return out, robot.desc
    finally:
        robot.close()


def expected_message(dev: Device, got, desc: dict):
    """The message ``dev``'s kind fills from the simulated state, with the
    frame and stamp of the message ``got`` (those are the node's)."""
    header = getattr(got, "header", None)
    msg = type(got)()
    params = NODE_RECORDS["hardware_node"].static_defaults()
    dev.kind.fill(msg, dev.state, SimpleNamespace(
        frame=getattr(header, "frame_id", ""), stamp=getattr(header, "stamp", None),
        desc=desc, params=params))
    return msg


def data_values(kind: DeviceKind, reading) -> dict:
    """The values of an RDI ``reading`` that a DATA answer tells (its kind's data_fields)."""
    values = {f: getattr(reading, f) for f in reading._fields if f in kind.data_fields}
    assert values, f"kind {kind.name!r}: its RDI reading carries none of its data_fields"
    return values


def rdi_missing(devices, packets) -> list[str]:
    """The devices whose newest RDI-Sn item in ``packets`` is missing or differs."""
    newest = {}
    for p in packets:
        if isinstance(p, RdiSensor):
            for ident, reading in p.items:
                newest[(p.sub_code, ident)] = reading
    return [f"{d.kind.name} {d.id}" for d in devices
            if (got := newest.get((d.kind.rdi.sub, d.id))) is None
            or data_values(d.kind, got) != data_values(d.kind, d.kind.rdi_reading(d.state))]


def read_rdi_until(port, devices, timeout=DEADLINE_S):
    """RDI packets read from 127.0.0.1:``port`` until every device of
    ``devices`` has shown its expected reading."""
    dec, packets = RdiDecoder(), []
    end = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.settimeout(0.5)
        while missing := rdi_missing(devices, packets):
            assert time.monotonic() < end, f"not on the RDI stream as expected: {missing}"
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            assert data, "the RDI gateway closed the stream"
            packets += dec.feed(data)
    return packets


class Probe(SpunProbe):
    """A node in ``ns`` recording each plugin device's topic (``topics``:
    name -> messages) and /diagnostics (``diag``: statuses), spun in the background."""

    def __init__(self, ros_context, ns: str, devices):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.qos import qos_profile_sensor_data
        self.topics = {d.topic: [] for d in devices if d.topic is not None}
        self.diag = []
        self.node = rclpy.create_node("plugins_launch_probe", namespace=ns, context=ros_context)
        kinds = {d.topic: d.kind for d in devices if d.topic is not None}
        for name, k in kinds.items():
            # best effort takes a reliable writer's messages too
            self.node.create_subscription(resolve(k.topic.msg), name,
                                          lambda m, n=name: self.topics[n].append(m),
                                          qos_profile_sensor_data)
        self.node.create_subscription(DiagnosticArray, "/diagnostics",
                                      lambda m: self.diag.extend(m.status), 50)
        self.spin(ros_context)


def on_its_topic(probe: Probe, dev: Device, desc: dict) -> bool:
    """A message of ``dev``'s topic equal to the one its kind fills from the simulated state."""
    from rclpy.serialization import serialize_message
    return any(serialize_message(m) == serialize_message(expected_message(dev, m, desc))
               for m in probe.topics[dev.topic][-5:])


def on_diagnostics(probe: Probe, ns: str, dev: Device) -> bool:
    """A /diagnostics status of ``dev`` with its kind's own values as simulated."""
    name = f"/{ns}/hardware_node: {dev.kind.name} {dev.id}"
    return any(s.name == name and dev.diagnostics.items() <= {
        kv.key: kv.value for kv in s.values}.items() for s in list(probe.diag))


def rci_item_hex(dev: Device) -> str:
    """``dev``'s CGtSnRp DATA item as the wire (big-endian, the gateway's default) carries it."""
    return struct.pack(">" + dev.kind.rci.layout.fmt, *dev.kind.rci_item(dev.state)).hex()


def rci_activates_and_reads(c, dev: Device) -> None:
    """Over the logged-in RciClient ``c``: CAcSn of ``dev`` is acknowledged,
    CGtSnIq DATA gives its simulated item and STATUS says it is on."""
    from bsal_ros.protocol.constants import GetSensorStatus, RciCode
    from bsal_ros.protocol.rci import CAcSn, CCnAc, CGtSnIq, CGtSnRp, StatusData
    from bsal_ros.protocol.values import Statval
    sub = dev.kind.rci.sub
    assert c.request(CAcSn.one(sub, dev.id, 1, rq_ack=True)) == CCnAc(RciCode.CAcSn), dev
    rp = c.request(CGtSnIq.one(sub, dev.id, GetSensorStatus.DATA))
    assert isinstance(rp, CGtSnRp) and rp.items == [(dev.id, dev.kind.rci_item(dev.state))], rp
    st = c.request(CGtSnIq.one(sub, dev.id, GetSensorStatus.STATUS))
    assert isinstance(st.items[0][1], StatusData), st
    assert Statval.unpack(st.items[0][1].statval).on, (dev, st)


def by_kind(devices) -> list[tuple[DeviceKind, list[Device]]]:
    """(kind, its devices) of each kind, in the order given."""
    out: dict = {}
    for d in devices:
        out.setdefault(d.kind.name, []).append(d)
    return [(devs[0].kind, devs) for devs in out.values()]


@pytest.mark.skipif(tw.TSHARK is None, reason="tshark is not installed "
                    "(apt package tshark; make setup installs it)")
def test_every_plugin_through_ros2_launch_cpp_library_tshark_and_viewer(tmp_path, ros_context):
    import uuid

    from bsal_ros.protocol.constants import RciCode
    from bsal_ros.protocol.rci import CCnAc, CRs
    from bsal_ros.protocol.values import Statval
    from bsal_ros.rci.client import RciClient
    from bsal_ros.rci.users import DEMO_KEY

    ros2 = require_ros2_tools()
    plugins = installed_plugins()
    at_least_two(plugins)
    kinds = [k for p in plugins for k in p.kinds]
    for p in plugins:
        assert p.kinds, f"device-kind plugin {p.name!r} registered no kind"
    for k in kinds:     # what this test reads of a kind: a sensor kind's codes
        assert k.rci is not None and k.rdi is not None and k.rdi.code == RdiCode.Sn, (
            f"kind {k.name!r}: this test covers sensor kinds (an RCI sensor item, RDI-Sn)")
    description = merged_description(plugins)
    devices, desc = simulated(description, kinds)
    grouped = by_kind(devices)
    # this process holds the plugins: the C++ tables and the dissector name them
    include = tmp_path / "include"
    assert gen_cpp.main(["--out", str(include)]) == 0
    header = (include / gen_cpp.PROTOCOLS).read_text(encoding="utf-8")
    sensor_check = _compile(tmp_path / "sensor-check", "sensor-check.cc", include)
    lua = tmp_path / "bsal.lua"
    lua.write_text(lua_path().read_text(encoding="utf-8"), encoding="utf-8")
    assert gen_lua.main(["--lua", str(lua)]) == 0
    lua_text = lua.read_text(encoding="utf-8")
    for k in kinds:
        name = k.name.upper()
        assert f'"{name}"' in lua_text, f"the dissector does not name {name}"
        assert re.search(rf"^#define RCI_SENSOR_{name} +0x{k.rci.sub:02x}$", header, re.M), \
            f"the C++ header has no RCI_SENSOR_{name} 0x{k.rci.sub:02x}"

    ns = "plugins_" + uuid.uuid4().hex[:8]
    probe = Probe(ros_context, ns, devices)
    rci_port, rt_port, ca_port, foxglove_port, page_port = free_ports(5)
    run = launch(ros2, [f"config:={config_with(tmp_path, description)}", f"namespace:={ns}",
                        "robot_state_publisher:=false", f"rci_port:={rci_port}",
                        f"rdi_realtime_port:={rt_port}", f"rdi_ca_port:={ca_port}",
                        f"foxglove_port:={foxglove_port}", f"page_port:={page_port}"],
                 tmp_path / "launch.log")
    rci_proxy = rdi_proxy = None
    try:
        run.wait_for(*READY, timeout=DEADLINE_S * 2)
        rci_proxy = RecordingProxy(("127.0.0.1", rci_port), "rci")
        rdi_proxy = RecordingProxy(("127.0.0.1", rt_port), "rdi")
        for d in devices:
            if d.topic is not None:
                wait(lambda d=d: on_its_topic(probe, d, desc),
                     f"/{ns}/{d.topic} filled by {d.kind.name} as simulated", DEADLINE_S)
            wait(lambda d=d: on_diagnostics(probe, ns, d),
                 f"{d.kind.name} {d.id} on /diagnostics with {d.diagnostics}", DEADLINE_S)
        # the C++ library: rciReadSensors of each kind's devices, DATA and STATUS in one inquiry
        for k, devs in grouped:
            ids = ",".join(str(d.id) for d in devs)
            code, rows = run_legacy(sensor_check, rci_proxy.port, hex(k.rci.sub), ids)
            assert code == 0, rows
            assert ("rc", {"call": "rciReadSensors", "code": "11", "name": "RCI_CSTRP_IDLE"}) \
                in rows, (k.name, rows)
            readings = [r for kind_, r in rows if kind_ == "reading"]
            assert [(r["id"], r["data"]) for r in readings] == [
                (str(d.id), rci_item_hex(d)) for d in devs], (k.name, rows)
            for r in readings:
                # up and ok; off for this session, which did not activate it (RCI's view)
                seen = Statval.unpack(int(r["statval"], 16))
                assert seen.up and seen.ok and not seen.on, (k.name, rows)
        # the Python client: CAcSn, CGtSnIq DATA and STATUS, the RDI stream, CRs
        with RciClient("127.0.0.1", rci_proxy.port, timeout=10) as c:
            c.handshake("demo", DEMO_KEY)
            for d in devices:
                rci_activates_and_reads(c, d)
            packets = read_rdi_until(rdi_proxy.port, devices)
            assert c.request(CRs(rq_ack=True)) == CCnAc(RciCode.CRs)
            for messages in probe.topics.values():
                messages.clear()
            for name, messages in probe.topics.items():
                wait(lambda m=messages: m, f"/{ns}/{name} after CRs", DEADLINE_S)
        # the viewer's model of the frames received
        model = ViewerModel(layout={})
        for p in packets:
            model.apply(p)
        assert model.unknown == 0
        for d in devices:
            shown = model.sensors.get(d.kind.name, {}).get(d.id)
            assert shown is not None, f"{d.kind.name} {d.id} not in the viewer's model"
            assert data_values(d.kind, shown) == data_values(d.kind, d.kind.rdi_reading(d.state))
        for k, _ in grouped:
            first = next(p for p in packets if isinstance(p, RdiSensor) and p.sub_code == k.rdi.sub)
            assert describe(first).startswith(f"RDI-Sn {k.name.upper()}"), describe(first)
        assert rci_proxy.wait_finished(len(grouped) + 1, DEADLINE_S), "an RCI connection left open"
    finally:
        recordings = [p.close() for p in (rci_proxy, rdi_proxy) if p is not None]
        rc = run.stop()
        probe.close()
    check_clean_shutdown(run, rc)
    assert "device-kind plugin" not in run.text()

    # tshark: the live session's bytes, decoded with the regenerated dissector
    rci_pcap, rdi_pcap = tmp_path / "rci.pcap", tmp_path / "rdi.pcap"
    assert to_pcap(recordings[0], rci_pcap) > 0 and to_pcap(recordings[1], rdi_pcap) > 0
    for pcap, proto in ((rci_pcap, "rci"), (rdi_pcap, "rdi")):
        bad = tshark(lua, pcap, "-Y", tw.BAD, "-O", proto)
        assert bad == "", bad
    for k, devs in grouped:
        name = k.name.upper()
        items = [k.rci_item(d.state) for d in devs]
        fields = {abbrev(f, fmt): f for f, fmt in zip(items[0]._fields, k.rci.layout.fmt)}
        rci = column(lua, rci_pcap, f"rci.sub_code == 0x{k.rci.sub:02x}", "rci.packet",
                     "rci.sub_name", *[f"rci.{a}" for a in fields])
        assert {"CAcSn", "CGtSnIq", "CGtSnRp"} <= set(rci["rci.packet"]), (name, rci)
        assert name in rci["rci.sub_name"], (name, rci)
        # the C++ program's reply (every device) and the Python client's (one each)
        for a, f in fields.items():
            values = [getattr(item, f) for item in items]
            assert [parse(x) for x in rci[f"rci.{a}"]] == values * 2, (name, a, rci)
        readings = [k.rdi_reading(d.state) for d in devs]
        wanted = data_values(k, readings[0])
        shown = {abbrev(f, fmt): f for f, fmt in zip(readings[0]._fields, k.rdi.layout.fmt)
                 if f in wanted}
        rdi = column(lua, rdi_pcap, f"rdi.sub_code == 0x{k.rdi.sub:02x}", "rdi.sub_name",
                     *[f"rdi.{a}" for a in shown])
        assert name in rdi["rdi.sub_name"], (name, rdi)
        for a, f in shown.items():
            assert {parse(x) for x in rdi[f"rdi.{a}"]} == {getattr(r, f) for r in readings}, \
                (name, a, rdi)
