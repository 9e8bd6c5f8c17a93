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

"""rdi_viewer: the reference RDI display client.

Connects to an RDI stream (the RDI gateway's real-time stream, port 7651, or
control-application stream, 7652), decodes it with :mod:`bsal_ros.protocol`
and shows the robot: sonar cones and echoes, pose trail, motors, steering,
encoders, device status.

    rdi_viewer                                  # live window (tkinter)
    rdi_viewer --stream ca --snapshot ca.png    # headless PNG after --duration s
    rdi_viewer --dump --duration 2              # one line per packet
    rdi_viewer --port 7661 --byteorder little --dump

Exit status: 0 ok, 1 no data / bad usage, 2 cannot connect or no display,
3 protocol error in the stream. No ROS needed. Pillow (window and snapshot)
and tkinter (window) are optional dependencies: ``--dump`` needs neither, and
without them the window and ``--snapshot`` stop at once with one line saying
what is missing (exit status 2).
"""

from __future__ import annotations

import socket
import sys
import time

from .model import describe, ViewerModel
from ..core.cli import OneLineParser
from ..core.units import SPEED_OF_SOUND
from ..protocol import ProtocolError, RdiDecoder

__all__ = ["main", "ViewerModel", "describe", "StreamReader"]

PORTS = {"realtime": 7651, "ca": 7652}


class StreamReader:
    """Blocking RDI stream reader: ``poll(timeout)`` returns decoded packets."""

    def __init__(self, host: str, port: int, byteorder: str = "big", timeout: float = 5.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.dec = RdiDecoder(byteorder)
        self.eof = False

    def poll(self, timeout: float) -> list:
        """Packets received within ``timeout`` (empty list: none)."""
        if self.eof:
            return []
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return []
        except OSError:
            self.eof = True
            return []
        if not data:
            self.eof = True
            self.dec.feed_eof()
            return []
        return self.dec.feed(data)

    def close(self) -> None:
        """Close the socket."""
        try:
            self.sock.close()
        except OSError:
            pass


def _size(s: str) -> tuple[int, int]:
    w, _, h = s.lower().partition("x")
    return max(200, int(w)), max(150, int(h))


def _args(argv):
    ap = OneLineParser(prog="rdi_viewer", description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--stream", choices=sorted(PORTS), default="realtime",
                    help="which gateway stream (sets the default port)")
    ap.add_argument("--port", type=int, default=None, help="TCP port (overrides --stream)")
    ap.add_argument("--byteorder", choices=("big", "little"), default="big")
    ap.add_argument("--dump", action="store_true", help="print one line per packet")
    ap.add_argument("--snapshot", metavar="FILE.png", help="write a PNG and exit (headless)")
    ap.add_argument("--duration", type=float, default=None,
                    help="seconds to read (default: 2 for --snapshot, forever otherwise)")
    ap.add_argument("--count", type=int, default=0, help="--dump: stop after N packets")
    ap.add_argument("--size", type=_size, default=(800, 600), help="image size WxH")
    ap.add_argument("--speed-of-sound", type=float, default=SPEED_OF_SOUND,
                    help="m/s, for sonar ranges")
    ap.add_argument("--view-radius", type=float, default=6.0, help="m shown around the robot")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    """The rdi_viewer command line."""
    a = _args(argv)
    port = a.port if a.port is not None else PORTS[a.stream]
    if not a.dump and not a.snapshot:
        return _window(a, port)
    if a.snapshot:
        missing = _pillow_missing()
        if missing:
            print(f"rdi_viewer: --snapshot needs Pillow ({missing}); use --dump, or install "
                  "Pillow (rosdep key python3-pil)", file=sys.stderr)
            return 2
    duration = a.duration if a.duration is not None else (2.0 if a.snapshot else float("inf"))
    try:
        rd = StreamReader(a.host, port, a.byteorder)
    except OSError as exc:
        print(f"rdi_viewer: cannot connect to {a.host}:{port}: {exc}", file=sys.stderr)
        return 2
    model = ViewerModel(a.speed_of_sound)
    t0 = time.monotonic()
    n = 0
    try:
        while True:
            left = duration - (time.monotonic() - t0)
            if left <= 0 or rd.eof:
                break
            for p in rd.poll(min(left, 0.25)):
                model.apply(p)
                n += 1
                if a.dump:
                    print(f"{time.monotonic() - t0:9.3f} {describe(p)}", flush=False)
                    if a.count and n >= a.count:
                        left = 0
                        break
            if a.dump:
                sys.stdout.flush()
            if left <= 0:
                break
    except ProtocolError as exc:
        print(f"rdi_viewer: bad RDI stream: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        pass
    finally:
        rd.close()
    if a.snapshot:
        from .render import render
        render(model, a.size, a.view_radius).save(a.snapshot)
        print(f"rdi_viewer: {a.snapshot} ({a.size[0]}x{a.size[1]}, {model.packets} packets, "
              f"{model.frames} frames)")
    return 0 if n else 1


def _pillow_missing() -> str:
    """Why Pillow cannot be imported ("" when it can): the snapshot and the window need it."""
    try:
        from PIL import Image  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return ""


def _window(a, port) -> int:
    try:
        import tkinter as tk
        from PIL import Image  # noqa: F401 - render() draws with Pillow
        try:
            from PIL import ImageTk
        except ImportError:        # Pillow without Tk support: hand Tk a PNG instead
            ImageTk = None
        root = tk.Tk()
    except Exception as exc:   # noqa: BLE001 - no display, no tkinter, no Pillow
        print(f"rdi_viewer: no window available ({exc}); use --snapshot FILE.png or --dump",
              file=sys.stderr)
        return 2
    from .render import render
    try:
        rd = StreamReader(a.host, port, a.byteorder)
    except OSError as exc:
        print(f"rdi_viewer: cannot connect to {a.host}:{port}: {exc}", file=sys.stderr)
        root.destroy()
        return 2
    model = ViewerModel(a.speed_of_sound)
    root.title(f"rdi_viewer {a.host}:{port}")
    label = tk.Label(root)
    label.pack()
    state = {"rc": 0, "drawn": 0}
    deadline = time.monotonic() + a.duration if a.duration is not None else None

    def tick():
        try:
            t_end = time.monotonic() + 0.05
            while time.monotonic() < t_end:
                pk = rd.poll(0.01)
                if not pk:
                    break
                for p in pk:
                    model.apply(p)
        except ProtocolError as exc:
            print(f"rdi_viewer: bad RDI stream: {exc}", file=sys.stderr)
            state["rc"] = 3
            root.destroy()
            return
        pil = render(model, a.size, a.view_radius)
        if ImageTk is not None:
            img = ImageTk.PhotoImage(pil)
        else:
            import base64
            import io
            buf = io.BytesIO()
            pil.save(buf, "PNG")
            img = tk.PhotoImage(data=base64.b64encode(buf.getvalue()))
        label.configure(image=img)
        label.image = img
        state["drawn"] += 1
        if deadline is not None and time.monotonic() >= deadline:
            root.destroy()
            return
        if rd.eof:
            root.title(f"rdi_viewer {a.host}:{port} (stream closed)")
        root.after(100, tick)

    root.after(0, tick)
    try:
        root.mainloop()
    except KeyboardInterrupt:
        pass
    rd.close()
    print(f"rdi_viewer: window closed after {state['drawn']} redraws, "
          f"{model.packets} packets, {model.frames} frames")
    return state["rc"]
