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
"""Coverage-guided fuzzing of the RCI and RDI decoders and of a whole RCI session.

Targets (each takes one input, bytes):

* ``rci``: byte 0 picks the decoder's role (server/client) and byte order,
  byte 1 the chunk size; for a client decoder bytes 2-3 are the length of an
  inquiry stream that a server decoder reads first (its inquiries are
  registered with ``expect_reply``), the rest is fed to the decoder in
  chunks, then ``feed_eof``. Only ``ProtocolError`` may come out.
* ``rdi``: the same for ``RdiDecoder`` (byte 0: byte order, byte 1: chunk size).
* ``session``: the RCI server (bsal_ros.rci, fake robot, no ROS) on loopback;
  a client logs in as an operator and sends the input, then closes. After
  each input the server must be free for the next client (the session ended,
  the next login works) and no motor may be left running.

Engines: ``atheris`` (libFuzzer, from PyPI; optional) in a child process,
coverage = libFuzzer's edge count; ``mutate`` (no dependency): a
coverage-guided mutation loop whose coverage is the set of lines of
bsal_ros/protocol and bsal_ros/rci executed (sys.settrace), keeping every
input that reaches a new line. Seeds: the recorded sessions (test/sessions).
A finding (any other exception, a stuck server, a running motor) is saved
under ``--findings`` and reported; each one becomes a file in
test/fuzz_regressions/ that the suite replays.

    python -m bsal_ros.tools.wire_fuzz --target all --seconds 60 [--engine atheris|mutate]
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from pathlib import Path
import random
import re
import subprocess
import sys
import tempfile
import time

from ..core.cli import OneLineParser

__all__ = ["TARGETS", "run_input", "seeds", "fuzz", "main"]

TARGETS = ("rci", "rdi", "session")
_PKG = Path(__file__).resolve().parents[1]
DEFAULT_SESSIONS = _PKG.parent / "test" / "sessions"
_SESSION = None


def _chunks(data: bytes, size: int):
    size = max(1, size)
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]


def one_rci(data: bytes) -> None:
    """Target ``rci``: one input through RciDecoder (see the module docstring)."""
    from bsal_ros.protocol import CGtMtIq, CGtSnIq, CStIq, ICaIq, ProtocolError, RciDecoder
    if len(data) < 2:
        return
    mode, size, body = data[0], data[1] % 64 + 1, data[2:]
    order = "little" if mode & 2 else "big"
    try:
        if mode & 1:
            n = int.from_bytes(body[:2], "big") if len(body) >= 2 else 0
            inquiries, body = body[2:2 + n], body[2 + n:]
            dec = RciDecoder(order, "client")
            try:
                for p in RciDecoder(order, "server").feed(inquiries):
                    if isinstance(p, (ICaIq, CGtMtIq, CGtSnIq, CStIq)):
                        dec.expect_reply(p)
            except ProtocolError:
                pass
        else:
            dec = RciDecoder(order, "server")
        for c in _chunks(body, size):
            dec.feed(c)
        dec.feed_eof()
    except ProtocolError:
        pass


def one_rdi(data: bytes) -> None:
    """Target ``rdi``: one input through RdiDecoder."""
    from bsal_ros.protocol import ProtocolError, RdiDecoder
    if len(data) < 2:
        return
    dec = RdiDecoder("little" if data[0] & 1 else "big")
    try:
        for c in _chunks(data[2:], data[1] % 64 + 1):
            dec.feed(c)
        dec.feed_eof()
    except ProtocolError:
        pass


class SessionTarget:
    """The RCI server with a fake robot on a private loop thread (no ROS)."""

    USERS = "users: [{name: fuzz, role: operator, key: '0123456789abcdef0123456789abcdef'}]"
    KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")

    def __init__(self):
        import logging

        # one line per fuzzed session would drown the report; the records are
        # still formatted (a logging bug is a finding) and dropped
        log = logging.getLogger("bsal_ros.rci")
        log.addHandler(logging.NullHandler())
        log.propagate = False
        from bsal_ros.loop_thread import LoopThread
        from bsal_ros.rci import RciServer, SessionConfig, Users
        from bsal_ros.rci.fake import FakeRobotPort
        self.robot = FakeRobotPort(home_duration_s=0.05)
        cfg = SessionConfig.of(linger_s=0.05, init_quiet_s=0.05)
        self.server = RciServer(self.robot, Users.from_yaml_text(self.USERS), "127.0.0.1", 0, cfg)
        self.loop_thread = LoopThread("fuzz-rci-asyncio")
        self.loop_thread.start(self.server.start(), timeout=10)   # raises if it does not start
        self.port = self.server.bound_port

    def login(self) -> bytes:
        """The IIId every fuzzed session starts with."""
        from bsal_ros.protocol import encode_rci, IIId
        return encode_rci(IIId(user_id=b"fuzz", auth_key=self.KEY))

    def __call__(self, data: bytes) -> None:
        import socket
        served = self.server.sessions_served
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            try:
                s.sendall(self.login() + data)
                s.shutdown(socket.SHUT_WR)
                s.settimeout(0.5)
                while s.recv(65536):
                    pass
            except OSError:
                pass           # the server may close first (CSvTm ERROR): fine
        deadline = time.monotonic() + 5.0
        while self.server.sessions_served <= served or self.server.session is not None:
            if time.monotonic() > deadline:
                raise AssertionError("the server did not end the session within 5 s")
            time.sleep(0.002)
        if self.robot.moving():
            raise AssertionError(f"motors left running: {self.robot.speed}")

    def close(self) -> None:
        """Close the server and end its thread."""
        self.loop_thread.stop(self.server.close, timeout=10)


def run_input(target: str, data: bytes) -> None:
    """Run one input; raises on a finding."""
    global _SESSION
    if target == "rci":
        one_rci(data)
    elif target == "rdi":
        one_rdi(data)
    else:
        if _SESSION is None:
            _SESSION = SessionTarget()
        _SESSION(data)


def seeds(target: str, sessions_dir=DEFAULT_SESSIONS) -> list:
    """Seed inputs for ``target`` from the recorded sessions (and a few fixed ones)."""
    from .wire_record import load
    out = [b"\x00\x07", b"\x01\x07\x00\x00"]
    for path in sorted(Path(sessions_dir).glob("*.jsonl")):
        rec = load(path)
        for conn in rec.connections():
            c2s = b"".join(d for _, w, d in conn if w == "c2s")
            s2c = b"".join(d for _, w, d in conn if w == "s2c")
            proto = rec.header["protocol"]
            if target == "rdi" and proto == "rdi":
                out += [b"\x00\x3f" + s2c[:4000], b"\x00\x02" + s2c[:600]]
            elif target == "rci" and proto == "rci":
                out += [b"\x00\x3f" + c2s, b"\x01\x3f" + len(c2s).to_bytes(2, "big") + c2s + s2c]
            elif target == "session" and proto == "rci":
                out.append(c2s[60:])         # after the recorded login
    return out


# ------------------------------------------------------------------ mutate engine
def _mutate(rnd: random.Random, data: bytes, corpus: list) -> bytes:
    b = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(6)
        pos = rnd.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(pos, len(b) - 1)] ^= 1 << rnd.randrange(8)
        elif op == 1:
            b[pos:pos] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
        elif op == 2 and b:
            del b[pos:pos + rnd.randint(1, 16)]
        elif op == 3 and b:
            b[min(pos, len(b) - 1)] = rnd.choice((0, 1, 0x7F, 0x80, 0xFF, 0x20, 0x40, 0xC0))
        elif op == 4:
            other = rnd.choice(corpus)
            i = rnd.randrange(len(other) + 1)
            b[pos:pos] = other[i:i + rnd.randint(1, 64)]
        elif op == 5 and len(b) > 4:
            i = rnd.randrange(len(b) - 2)
            b[pos:pos] = b[i:i + rnd.randint(2, 32)]
    return bytes(b[:8192])


class _LineCoverage:
    """Lines of bsal_ros/protocol and bsal_ros/rci executed (sys.settrace)."""

    def __init__(self):
        self.lines: set = set()
        self.new = 0
        self._dirs = (str(_PKG / "protocol"), str(_PKG / "rci"))

    def _local(self, frame, event, arg):
        if event == "line":
            key = (frame.f_code.co_filename, frame.f_lineno)
            if key not in self.lines:
                self.lines.add(key)
                self.new += 1
        return self._local

    def __call__(self, frame, event, arg):
        if frame.f_code.co_filename.startswith(self._dirs):
            return self._local
        return None


def fuzz_mutate(target: str, seconds: float, findings: Path, seed: int = 0,
                sessions_dir=DEFAULT_SESSIONS) -> dict:
    """The dependency-free engine; returns the report dict."""
    import threading
    rnd = random.Random(seed)
    cov = _LineCoverage()
    global _SESSION
    # put back whatever traced before (coverage.py in `make test`): ours only borrows it
    before = sys.gettrace(), threading.gettrace()
    threading.settrace(cov)
    sys.settrace(cov)
    if target == "session" and _SESSION is not None:
        _SESSION.close()       # a server thread started before the trace would not be seen
        _SESSION = None
    corpus, found, execs = [], [], 0
    try:
        for s in seeds(target, sessions_dir):
            execs += 1
            run_input(target, s)
            corpus.append(s)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            data = _mutate(rnd, rnd.choice(corpus), corpus)
            cov.new = 0
            execs += 1
            try:
                run_input(target, data)
            except Exception as exc:  # noqa: BLE001 - every other exception is a finding
                found.append(_save(findings, target, data, exc))
                continue
            if cov.new:
                corpus.append(data)
    finally:
        sys.settrace(before[0])
        threading.settrace(before[1])
    return {"engine": "mutate", "target": target, "seconds": seconds, "execs": execs,
            "coverage": len(cov.lines), "coverage_unit": "lines", "corpus": len(corpus),
            "findings": found}


def _save(findings: Path, target: str, data: bytes, exc) -> str:
    findings.mkdir(parents=True, exist_ok=True)
    name = f"{target}-{hashlib.sha1(data).hexdigest()[:12]}"
    (findings / name).write_bytes(data)
    (findings / (name + ".txt")).write_text(f"{type(exc).__name__}: {exc}\n")
    return name


# ------------------------------------------------------------------ atheris engine
def _atheris_child(target: str, libfuzzer_args: list) -> None:
    atheris = importlib.import_module("atheris")     # optional: not a rosdep key
    with atheris.instrument_imports(include=["bsal_ros"]):
        importlib.import_module("bsal_ros.protocol")
        importlib.import_module("bsal_ros.rci")
        importlib.import_module("bsal_ros.rci.fake")

    def test_one_input(data: bytes) -> None:
        run_input(target, data)
    atheris.Setup([sys.argv[0]] + libfuzzer_args, test_one_input)
    atheris.Fuzz()


def fuzz_atheris(target: str, seconds: float, findings: Path,
                 sessions_dir=DEFAULT_SESSIONS) -> dict:
    """libFuzzer through atheris, in a child process; returns the report dict."""
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{target}-") as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        for i, s in enumerate(seeds(target, sessions_dir)):
            (corpus / f"seed{i}").write_bytes(s)
        findings.mkdir(parents=True, exist_ok=True)
        before = set(os.listdir(findings))
        args = [f"-max_total_time={max(1, int(seconds))}", "-max_len=8192", "-timeout=20",
                f"-artifact_prefix={findings}/{target}-", "-print_final_stats=1", str(corpus)]
        r = subprocess.run([sys.executable, "-m", "bsal_ros.tools.wire_fuzz", "--child", target,
                            "--", *args], capture_output=True, text=True,
                           timeout=seconds + 120)
        err = r.stderr
        ncorpus = len(os.listdir(corpus))
    execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", err)
    cov = re.findall(r"\bcov: (\d+)", err)
    new = sorted(set(os.listdir(findings)) - before)
    return {"engine": "atheris", "target": target, "seconds": seconds,
            "execs": int(execs[-1]) if execs else 0, "coverage": int(cov[-1]) if cov else 0,
            "coverage_unit": "edges", "corpus": ncorpus, "findings": new,
            "exit": r.returncode, "log_tail": err.splitlines()[-5:]}


def have_atheris() -> bool:
    """True when atheris can be imported."""
    try:
        importlib.import_module("atheris")
    except ImportError:
        return False
    return True


def fuzz(target: str, seconds: float, engine: str = "auto", findings=None,
         sessions_dir=DEFAULT_SESSIONS) -> dict:
    """Fuzz one target for ``seconds``; ``engine`` auto = atheris when installed."""
    findings = Path(findings or tempfile.mkdtemp(prefix="bsal-fuzz-findings-"))
    if engine == "auto":
        engine = "atheris" if have_atheris() else "mutate"
    if engine == "atheris":
        return fuzz_atheris(target, seconds, findings, sessions_dir)
    return fuzz_mutate(target, seconds, findings, sessions_dir=sessions_dir)


def main(argv=None) -> int:
    """Command line (``brak_wire fuzz`` / ``make fuzz``): one report line per target."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _atheris_child(argv[1], argv[3:] if argv[2:3] == ["--"] else argv[2:])
        return 0
    ap = OneLineParser(prog="wire_fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=TARGETS + ("all",), default="all")
    ap.add_argument("--seconds", type=float, default=10.0, help="per target")
    ap.add_argument("--engine", choices=("auto", "atheris", "mutate"), default="auto")
    ap.add_argument("--findings", default="fuzz-findings", help="where findings are saved")
    ap.add_argument("--sessions", default=str(DEFAULT_SESSIONS), help="seed recordings")
    ap.add_argument("--json", action="store_true", help="print the reports as JSON")
    args = ap.parse_args(argv)
    if not Path(args.sessions).is_dir():
        ap.refuse(f"--sessions {args.sessions}: no such folder (the recorded sessions the "
                  f"seeds come from: {DEFAULT_SESSIONS})")
    reports = []
    for t in (TARGETS if args.target == "all" else (args.target,)):
        rep = fuzz(t, args.seconds, args.engine, args.findings, args.sessions)
        reports.append(rep)
        print(f"{t:8s} {rep['engine']:8s} {rep['seconds']:7.0f} s  execs {rep['execs']:>9,}  "
              f"coverage {rep['coverage']:>6} {rep['coverage_unit']:5s}  "
              f"corpus {rep['corpus']:>5}  "
              f"findings {len(rep['findings'])}", flush=True)
    if args.json:
        print(json.dumps(reports, indent=1))
    if _SESSION is not None:
        _SESSION.close()
    return 1 if any(r["findings"] for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
