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

"""The bumper plugin through `ros2 launch bsal_ros brak.launch.py`.

The launch is given a config file whose description holds a bumper board
(the plugin's DESCRIPTION); the launched processes reach the bumper through
its entry point only. One live session finds it on its topic, /diagnostics,
RCI (CAcSn, CGtSnIq DATA and STATUS, CRs), the RDI stream, the C++ library
(rciReadSensors, headers regenerated with the bumper), tshark (a capture of
the session through the recording proxy, with a dissector regenerated with
the bumper) and the viewer's model of the RDI frames.
"""

import socket
import time

import pytest

from bsal_ros.protocol import RdiDecoder, RdiSensor
from bsal_ros.tools import gen_cpp
from bsal_ros.tools.wire_record import RecordingProxy, to_pcap
from bsal_ros.viewer.model import describe, ViewerModel
from bsal_ros.wireshark import gen_lua, lua_path
import bumper_kind as bumper
from test_kind_bumper import bumper_config, BumperProbe, rci_activates_and_reads_the_bumper, \
    wait
from test_legacy_api import run as run_legacy
from test_legacy_wire_tables import _compile
from test_ros2_launch import check_clean_shutdown, free_ports, launch, READY, \
    require_ros2_tools
import test_wireshark as tw
from test_wireshark_registry import column, tshark

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(240)]

DEADLINE_S = 30.0     # each wait; the whole test stays well under two minutes


def read_rdi_until(port, found, timeout=DEADLINE_S):
    """RDI packets read from 127.0.0.1:``port`` until ``found(packets)``."""
    dec, packets = RdiDecoder(), []
    end = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.settimeout(0.5)
        while not found(packets):
            assert time.monotonic() < end, f"no bumper on the RDI stream: {packets[-5:]}"
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            assert data, "the RDI gateway closed the stream"
            packets += dec.feed(data)
    return packets


def bumper_rdi(packets):
    return [p for p in packets if isinstance(p, RdiSensor) and p.sub_code == bumper.RDI_SUB]


@pytest.mark.skipif(tw.TSHARK is None, reason="tshark is not installed "
                    "(apt package tshark; make setup installs it)")
def test_bumper_through_ros2_launch_cpp_library_tshark_and_viewer(tmp_path, ros_context):
    import uuid

    from bsal_ros.protocol.constants import RciCode
    from bsal_ros.protocol.rci import CCnAc, CRs
    from bsal_ros.protocol.values import Statval
    from bsal_ros.rci.client import RciClient
    from bsal_ros.rci.users import DEMO_KEY

    ros2 = require_ros2_tools()
    assert bumper.INSTALLED, "make setup installs test/plugins/bsal_bumper"
    # this process holds the bumper: the C++ tables and the dissector name it
    include = tmp_path / "include"
    assert gen_cpp.main(["--out", str(include)]) == 0
    sensor_check = _compile(tmp_path / "sensor-check", "sensor-check.cc", include)
    lua = tmp_path / "bsal.lua"
    lua.write_text(lua_path().read_text(encoding="utf-8"), encoding="utf-8")
    assert gen_lua.main(["--lua", str(lua)]) == 0
    assert "BUMPER" in lua.read_text(encoding="utf-8")

    ns = "bumper_" + uuid.uuid4().hex[:8]
    probe = BumperProbe(ros_context, ns, "bumper_launch_probe")
    got = probe.got

    rci_port, rt_port, ca_port = free_ports(3)
    run = launch(ros2, [f"config:={bumper_config(tmp_path)}", f"namespace:={ns}",
                        "robot_state_publisher:=false", f"rci_port:={rci_port}",
                        f"rdi_realtime_port:={rt_port}", f"rdi_ca_port:={ca_port}"],
                 tmp_path / "launch.log")
    rci_proxy = rdi_proxy = None
    try:
        run.wait_for(*READY, timeout=DEADLINE_S * 2)
        rci_proxy = RecordingProxy(("127.0.0.1", rci_port), "rci")
        rdi_proxy = RecordingProxy(("127.0.0.1", rt_port), "rdi")
        wait(lambda: 0 in got["topic"], f"/{ns}/bumper_00", DEADLINE_S)
        wait(lambda: any(s.name == f"/{ns}/hardware_node: bumper 0" and
                         {kv.key: kv.value for kv in s.values}.get("contacts") == "0000"
                         for s in list(got["diag"])), "the bumper on /diagnostics", DEADLINE_S)
        # the C++ library: rciReadSensors on the bumper, DATA and STATUS in one inquiry
        code, rows = run_legacy(sensor_check, rci_proxy.port, hex(bumper.RCI_SUB), "0")
        assert code == 0, rows
        assert ("rc", {"call": "rciReadSensors", "code": "11", "name": "RCI_CSTRP_IDLE"}) \
            in rows, rows
        (reading,) = [r for k, r in rows if k == "reading"]
        assert reading["id"] == "0" and reading["data"] == "00", rows
        # up and ok; off for this session, which did not activate it (RCI's view)
        seen = Statval.unpack(int(reading["statval"], 16))
        assert seen.up and seen.ok and not seen.on, rows
        # the Python client: CAcSn, CGtSnIq DATA and STATUS, the RDI stream, CRs
        with RciClient("127.0.0.1", rci_proxy.port, timeout=10) as c:
            c.handshake("demo", DEMO_KEY)
            rci_activates_and_reads_the_bumper(c, 0)
            packets = read_rdi_until(rdi_proxy.port, bumper_rdi)
            assert [(i, d.contacts) for i, d in bumper_rdi(packets)[0].items] == [(0, 0)]
            assert c.request(CRs(rq_ack=True)) == CCnAc(RciCode.CRs)
            got["topic"].clear()
            wait(lambda: got["topic"], f"/{ns}/bumper_00 after CRs", DEADLINE_S)
        # the viewer's model of the frames received
        model = ViewerModel(layout={})
        for p in packets:
            model.apply(p)
        assert model.sensors["bumper"][0].contacts == 0 and model.unknown == 0
        assert describe(bumper_rdi(packets)[0]).startswith("RDI-Sn BUMPER")
        assert rci_proxy.wait_finished(2, DEADLINE_S), "an RCI connection left open"
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
    rci = column(lua, rci_pcap, "rci.sub_code", "rci.packet", "rci.sub_name", "rci.contacts")
    assert {"CAcSn", "CGtSnIq", "CGtSnRp"} <= set(rci["rci.packet"]), rci
    # the C++ program's reply and the Python client's: contacts 0 both
    assert "BUMPER" in rci["rci.sub_name"] and [int(x, 0) for x in rci["rci.contacts"]] == [0, 0]
    rdi = column(lua, rdi_pcap, "rdi.sub_code", "rdi.sub_name", "rdi.contacts")
    assert "BUMPER" in rdi["rdi.sub_name"] and {int(x, 0) for x in rdi["rdi.contacts"]} == {0}
