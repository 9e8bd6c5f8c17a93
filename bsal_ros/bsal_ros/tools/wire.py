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
r"""brak_wire: see, record and replay the RCI/RDI wire (docs/WIRE.md).

Examples::

    brak_wire record --target 127.0.0.1:7650 --protocol rci --out s.jsonl \
        -- legacy/build/book-3.3 127.0.0.1:{port}      # {port}: the proxy's port
    brak_wire record --target 127.0.0.1:7651 --protocol rdi --out v.jsonl --duration 10
    brak_wire replay s.jsonl --target 127.0.0.1:7650  # exit 1 on a difference
    brak_wire pcap s.jsonl s.pcap                     # then: tshark -X lua_script:... -r s.pcap
    brak_wire fuzz --seconds 60                       # coverage-guided fuzzing (wire_fuzz)
"""

from __future__ import annotations

import argparse
from pathlib import Path
import subprocess
import sys
import time

from .wire_record import load, RecordingProxy, to_pcap
from .wire_replay import diff, replay
from ..core.cli import OneLineParser


def _hostport(text: str) -> tuple:
    host, _, port = text.rpartition(":")
    return (host or "127.0.0.1", int(port))


def _target(text: str) -> str:
    """``--target``'s value checked: HOST:PORT (argparse turns the error into one line)."""
    try:
        if 0 < _hostport(text)[1] < 65536:
            return text
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:7650)")


def _recording(ap: OneLineParser, path: str):
    """The recording at ``path``; one line and exit 2 (``ap.refuse``) when it
    cannot be read or is not a recording."""
    try:
        return load(path)
    except OSError as exc:
        ap.refuse(f"cannot read {path}: {exc.strerror} (a recording: brak_wire record --out)")
    except (ValueError, IndexError):
        ap.refuse(f"{path} is not a recording (write one with brak_wire record --out FILE)")


def _record(args) -> int:
    proxy = RecordingProxy(_hostport(args.target), args.protocol, args.listen, args.byteorder,
                           args.note)
    print(f"recording 127.0.0.1:{proxy.port} -> {args.target}", flush=True)
    deadline = time.monotonic() + args.duration
    rc = 0
    try:
        if args.command:
            cmd = [c.replace("{port}", str(proxy.port)) for c in args.command]
            rc = subprocess.run(cmd, timeout=args.duration).returncode
            proxy.wait_finished(1, timeout=5)
        else:
            while time.monotonic() < deadline and proxy.finished < args.connections:
                time.sleep(0.1)
    except (KeyboardInterrupt, subprocess.TimeoutExpired):
        rc = 1
    rec = proxy.close()
    rec.dump(args.out)
    print(f"{args.out}: {len(rec.connections())} connection(s), {len(rec.events)} events")
    return rc


def _replay(args) -> int:
    rec = args.recording
    live = replay(rec, *_hostport(args.target), speed=args.speed, wait_s=args.wait)
    if args.out:
        live.dump(args.out)
    problems = diff(rec, live)
    for line in problems:
        print(line)
    print(f"{args.file}: {'same' if not problems else f'{len(problems)} difference(s)'}")
    return 1 if problems else 0


def _pcap(args) -> int:
    n = to_pcap(args.recording, args.out)
    print(f"{args.out}: {n} frames")
    return 0


def main(argv=None) -> int:
    """Entry point of ``brak_wire``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["fuzz"]:
        # wire_fuzz parses its own options: argparse's REMAINDER would refuse
        # those that come first (`brak_wire fuzz --seconds 60`)
        from .wire_fuzz import main as fuzz_main
        return fuzz_main(argv[1:])
    ap = OneLineParser(prog="brak_wire", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="record a session through a recording proxy")
    r.add_argument("--target", required=True, type=_target, help="gateway HOST:PORT")
    r.add_argument("--protocol", choices=("rci", "rdi"), required=True)
    r.add_argument("--out", required=True, help="JSON-lines file to write")
    r.add_argument("--listen", type=int, default=0, help="proxy port (0: any free)")
    r.add_argument("--byteorder", choices=("big", "little"), default="big")
    r.add_argument("--connections", type=int, default=1, help="stop after N connections ended")
    r.add_argument("--duration", type=float, default=300.0, help="stop after S seconds")
    r.add_argument("--note", default="", help="what was recorded (kept in the header)")
    r.add_argument("command", nargs="*", help="client to run ({port} = the proxy port)")
    p = sub.add_parser("replay", help="replay a recording's client side and diff the replies")
    p.add_argument("file", help="a recording (brak_wire record --out)")
    p.add_argument("--target", required=True, type=_target, help="gateway HOST:PORT")
    p.add_argument("--speed", type=float, default=1.0, help="time scale (2: twice as fast)")
    p.add_argument("--wait", type=float, default=5.0, help="seconds to wait for a reply")
    p.add_argument("--out", help="also write the replayed session here")
    c = sub.add_parser("pcap", help="write a recording as a pcap file")
    c.add_argument("file", help="a recording (brak_wire record --out)")
    c.add_argument("out")
    # listed for --help; main() hands `fuzz ...` to wire_fuzz before parsing
    f = sub.add_parser("fuzz", help="fuzz the decoders and an RCI session (wire_fuzz)")
    f.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.cmd in ("replay", "pcap"):
        args.recording = _recording(ap, args.file)
    out = getattr(args, "out", None)
    if out and not Path(out).resolve().parent.is_dir():
        ap.refuse(f"{out}: its folder does not exist (create it first, or name another)")
    return {"record": _record, "replay": _replay, "pcap": _pcap}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
