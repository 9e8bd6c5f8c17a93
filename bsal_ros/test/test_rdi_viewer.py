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

"""The reference display client on a fake RDI stream (no ROS): --dump prints
one line per packet, --snapshot writes a non-blank PNG of the requested size,
the model applies every packet kind."""

import math

import pytest

from bsal_ros.core import DeviceState
from bsal_ros.protocol import (encode_rdi_frame, RdiBaseTime, RdiDecoder, RdiOrientEgo, Statval,
                               Timeval)
from bsal_ros.rdi import RdiGateway, StreamConfig, StreamState
from bsal_ros.viewer import main
from bsal_ros.viewer.model import describe, fmt_speedval, fmt_statval, ViewerModel

ST = Statval(True, True, True, 1500).pack()


def state():
    st = StreamState(pservo_id_offset=1)   # steering next to DC 0: one group
    st.set_base_time(Timeval(1_700_000_000, 0))
    bad = Statval(True, True, False, 9).pack()
    st.update_devices([DeviceState("ultrasonic", i, statval=ST if i != 3 else bad,
                                   delay_us=5000 + 300 * i, stamp=1) for i in range(12)])
    st.update_devices([
        DeviceState("relative_encoder", 0, statval=ST, d_count=2, count=20, position=math.pi,
                    stamp=1),
        DeviceState("absolute_encoder", 0, statval=ST, count=100, stamp=1),
        DeviceState("accelerometer", 0, statval=ST, accel_g=0.05, stamp=1),
        DeviceState("dc_motor", 0, statval=ST, speedval=0x8199, stamp=1),
        DeviceState("pservo_motor", 0, statval=ST, speedval=0x0010, motor_position=0.3, stamp=1)])
    st.set_ego(0.5, -0.25, 0.3, 1_700_000_001.0)
    st.set_omni_from_twist(0.3, 0.2, 1_700_000_001.0)
    return st


@pytest.fixture
def stream():
    gw = RdiGateway([StreamConfig("realtime", port=0, rate_hz=20)], {"realtime": state()})
    port = gw.start()["realtime"]
    yield port
    gw.stop()


def test_model_applies_every_kind():
    m = ViewerModel()
    for p in RdiDecoder().feed(encode_rdi_frame(state().build_frame())):
        m.apply(p)
    m.apply(RdiBaseTime(Timeval(5, 6)))
    assert len(m.sonars) == 12 and m.relenc and m.absenc and m.accel and m.motors
    assert m.steer[0].angle == pytest.approx(0.3) and m.drive[0].rotations == pytest.approx(0.5)
    assert m.ego.xpos == 0.5 and m.omni is not None and m.base_time == Timeval(5, 6)
    assert len(m.echoes) == 11          # sonar 3 is not ok: no echo
    assert m.range_m(5831) == pytest.approx(1.0, abs=1e-3)


def test_text_formats():
    assert fmt_statval(Statval(True, False, True, 12).pack()) == "on,ok@12ms"
    assert fmt_speedval(0x87FF) == "+100.0%" and fmt_speedval(0x0864) == "-0.100rad/s"
    assert describe(RdiOrientEgo(1.0, 2.0, 0.5, 7)).startswith("RDI-RbOr EGO x=1.0000m")


def test_dump_one_line_per_packet(stream, capsys):
    assert main(["--port", str(stream), "--dump", "--count", "25", "--duration", "20"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 25
    assert "RDI-Ms BASETIME sec=1700000000" in lines[0]
    text = "\n".join(lines)
    for s in ("RDI-Sn ULTRASONIC group n=12 0:delay=5000us", "RDI-Sn RELENCODER",
              "RDI-Sn ABSENCODER", "RDI-Sn ACCEL", "RDI-Mt DC group n=2",
              "RDI-Ac STEER", "RDI-Ac DRIVE", "RDI-RbOr EGO", "RDI-RbOr OMNI"):
        assert s in text


def test_snapshot_png(stream, tmp_path, capsys):
    Image = pytest.importorskip("PIL.Image")
    out = tmp_path / "snap.png"
    assert main(["--port", str(stream), "--snapshot", str(out), "--duration", "1.0",
                 "--size", "640x480"]) == 0
    img = Image.open(out)
    assert img.size == (640, 480)
    colors = img.convert("RGB").getcolors(maxcolors=1 << 20)
    assert len(colors) > 20                         # not blank
    assert max(c for c, _ in colors) < 640 * 480 * 0.95


def test_cannot_connect_exit_code(capsys):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    assert main(["--port", str(port), "--dump", "--duration", "1"]) == 2


@pytest.fixture
def xserver(tmp_path):
    """A private virtual X display (Xvfb, installed by `make setup`)."""
    import os
    import shutil
    import subprocess
    import time
    xvfb = shutil.which("Xvfb")
    if not xvfb:
        pytest.skip("Xvfb is not installed (make setup installs it; elsewhere: apt install xvfb)")
    display = f":{90 + os.getpid() % 400}"
    proc = subprocess.Popen([xvfb, display, "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lock = f"/tmp/.X11-unix/X{display[1:]}"
    deadline = time.monotonic() + 10
    while not os.path.exists(lock) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "Xvfb did not start"
    yield display
    proc.terminate()
    proc.wait(timeout=10)


def test_live_window_on_a_real_x_server(stream, xserver, monkeypatch, capsys):
    monkeypatch.setenv("DISPLAY", xserver)
    assert main(["--port", str(stream), "--duration", "1.5"]) == 0
    out = capsys.readouterr().out
    found = __import__("re").search(r"after (\d+) redraws, (\d+) packets", out)
    redraws, packets = (int(x) for x in found.groups())
    assert redraws >= 3 and packets > 0, out
