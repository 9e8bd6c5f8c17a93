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
"""Fuzzing (bsal_ros.tools.wire_fuzz): a bounded run per target inside the suite,
the regression inputs of earlier findings, and the session target's promise:
whatever a fuzzed client sent, the server serves the next client and no
motor is left running.

The atheris half skips when atheris is not installed (it is optional: no
rosdep key); the built-in mutation engine always runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bsal_ros.protocol import CAcMt, CStMt, encode_rci, MotorCommand, MotorCommandKind
from bsal_ros.protocol.constants import MotorType
from bsal_ros.tools import wire_fuzz

pytestmark = pytest.mark.timeout(240)
REGRESSIONS = Path(__file__).with_name("fuzz_regressions")

# inputs written by hand at the edges the fuzzers found interesting: (target, bytes)
HAND_WRITTEN = [
    ("rci", b"\x00\x01" + bytes.fromhex("8202c0ff0000" + "01" * 255)),
    ("rci", b"\x01\x3f\x00\x06" + bytes.fromhex("8202c002fffe0102")
     + bytes.fromhex("8203c002fffe")),
    ("rci", b"\x03\x05" + bytes.fromhex("1000") + bytes(58)),
    ("rci", b"\x01\x01\x00\x05" + bytes.fromhex("0012010999") + bytes.fromhex("0013010999")),
    ("rdi", b"\x00\x3f" + bytes.fromhex("c010010100")),
    ("rdi", b"\x00\x01" + bytes.fromhex("4010020000")),
    ("rdi", b"\x01\x3f" + bytes(4096)),
    ("session", bytes.fromhex("0011") + bytes(70)),
    ("session", bytes.fromhex("0011 0a01c10000d2".replace(" ", "")) + b"\xff\xff"),
]


def regression_inputs():
    out = list(HAND_WRITTEN)
    for f in sorted(REGRESSIONS.glob("*")):
        if f.suffix == "" and f.name.split("-")[0] in wire_fuzz.TARGETS:
            out.append((f.name.split("-")[0], f.read_bytes()))
    return out


@pytest.fixture(scope="module", autouse=True)
def _close_session_target():
    yield
    if wire_fuzz._SESSION is not None:
        wire_fuzz._SESSION.close()
        wire_fuzz._SESSION = None


@pytest.mark.parametrize("target,data", regression_inputs(),
                         ids=lambda v: v if isinstance(v, str) else v[:6].hex())
def test_regression_inputs_are_no_finding(target, data):
    wire_fuzz.run_input(target, data)


@pytest.mark.parametrize("target", wire_fuzz.TARGETS)
def test_seed_corpus_comes_from_the_recorded_sessions(target):
    s = wire_fuzz.seeds(target)
    assert len(s) >= 3 and max(map(len, s)) > 50


def test_a_fuzzed_session_leaves_the_server_free_and_the_motors_stopped():
    from bsal_ros.rci.client import RciClient
    target = wire_fuzz.SessionTarget()
    try:
        drive = (encode_rci(CAcMt.one(MotorType.DC, 0, 1))
                 + encode_rci(CStMt.one(MotorType.DC, 0,
                                        MotorCommand(MotorCommandKind.SPVAL, 0x8400))))
        for tail in (b"", b"\xff\xff\xff", b"\x82\x02\xc0\x00", bytes(range(256))):
            target(bytes.fromhex("0011") + drive + tail)       # raises on a finding
            assert not target.robot.moving()
        with RciClient("127.0.0.1", target.port) as c:        # the next client is served
            server_id, _, _ = c.handshake("fuzz", target.KEY)
            assert type(server_id).__name__ == "IIId"
    finally:
        target.close()


@pytest.mark.parametrize("target", wire_fuzz.TARGETS)
def test_bounded_run_with_the_mutation_engine(target, tmp_path):
    rep = wire_fuzz.fuzz(target, 2.0, engine="mutate", findings=tmp_path)
    assert rep["findings"] == [], [(tmp_path / (f + ".txt")).read_text() for f in rep["findings"]]
    assert rep["execs"] > 20 and rep["coverage"] > 100 and rep["corpus"] >= 3
    print(rep)


@pytest.mark.skipif(not wire_fuzz.have_atheris(),
                    reason="atheris is not installed (optional, from PyPI: "
                           "requirements/project.txt)")
@pytest.mark.parametrize("target", wire_fuzz.TARGETS)
def test_bounded_run_with_atheris(target, tmp_path):
    rep = wire_fuzz.fuzz(target, 3.0, engine="atheris", findings=tmp_path)
    assert rep["findings"] == [], rep
    assert rep["execs"] > 100 and rep["coverage"] > 50, rep
    print(rep)
