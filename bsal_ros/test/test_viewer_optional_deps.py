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

"""rdi_viewer without its optional dependencies (Pillow, tkinter).

The window and ``--snapshot`` stop at once with one line naming what is missing
(exit status 2, before connecting); ``--dump`` needs neither. No ROS needed.
"""

import socket
import sys

import pytest

from bsal_ros.protocol import Timeval
from bsal_ros.rdi import RdiGateway, StreamConfig, StreamState
from bsal_ros.viewer import main


def unused_port() -> int:
    """A local TCP port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def without(monkeypatch):
    """Make the named top-level modules unimportable (``import`` raises ImportError)."""
    def hide(*names):
        for name in names:
            for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                monkeypatch.delitem(sys.modules, mod)
            monkeypatch.setitem(sys.modules, name, None)
    return hide


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_snapshot_without_pillow_says_so_before_connecting(without, tmp_path, capsys):
    without("PIL")
    out = tmp_path / "snap.png"
    # nothing listens on the port: the missing Pillow is reported, not the connection
    assert main(["--port", str(unused_port()), "--snapshot", str(out), "--duration", "0.2"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("rdi_viewer: --snapshot needs Pillow (") and "PIL" in line
    assert not out.exists()


def test_window_without_pillow_says_so(without, capsys):
    without("PIL")
    assert main(["--port", str(unused_port()), "--duration", "0.2"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("rdi_viewer: no window available (") and "PIL" in line


def test_window_without_tkinter_says_so(without, capsys):
    without("tkinter")
    assert main(["--port", str(unused_port()), "--duration", "0.2"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("rdi_viewer: no window available (") and "tkinter" in line


def test_dump_needs_neither(without, capsys):
    without("PIL", "tkinter")
    st = StreamState()
    st.set_base_time(Timeval(1_700_000_000, 0))
    st.set_ego(0.5, -0.25, 0.3, 1_700_000_001.0)
    gw = RdiGateway([StreamConfig("realtime", port=0, rate_hz=20)], {"realtime": st})
    port = gw.start()["realtime"]
    try:
        assert main(["--port", str(port), "--dump", "--count", "3", "--duration", "20"]) == 0
    finally:
        gw.stop()
    captured = capsys.readouterr()
    assert len(captured.out.strip().splitlines()) == 3
    assert "PIL" not in sys.modules or sys.modules["PIL"] is None
