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

"""A control application as its own OS process, for the fault campaign.

    python -m faults.ca --port 7650 --mode drive  [--duty 30] [--max-seconds 30]
    python -m faults.ca --port 7650 --mode silent

Connects to the RCI gateway (retrying while another session is still being
released), activates the drive motor and sets it to ``--duty`` percent; then

* ``drive``: keeps commanding: Set Motor with RQ_ACK and Get Motor, back to
  back, so that a SIGKILL lands in the middle of a command;
* ``silent``: sends nothing more, keeps the socket open and waits for the
  gateway's watchdog (CSvTm NOACK, then EOF).

Events are printed on stdout as JSON lines with ``time.monotonic()`` stamps
(CLOCK_MONOTONIC is system-wide on Linux, so the campaign can compare them
with its own clock). Bounded: after ``--max-seconds`` it stops the motor,
closes and exits by itself. No ROS import (starts in a fraction of a second).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bsal_ros.protocol.constants import CStRpStatus, GetMotorStatus, MotorType, TermCode
from bsal_ros.protocol.rci import (CAcMt, CCnAc, CGtMtIq, CGtMtRp, CStMt, CStRp, CSvTm, IIId,
                                   MotorCommand, MotorCommandKind)
from bsal_ros.protocol.values import speedval_pack
from bsal_ros.rci.client import RciClient

DEMO_KEY_HEX = "0123456789abcdef0123456789abcdef"


def emit(event: str, **kw) -> None:
    kw.update(event=event, t=kw.get("t", time.monotonic()))
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()


def connect(host: str, port: int, user: str, key: bytes, deadline: float) -> RciClient:
    """Connect and complete the handshake; retry while refused (the previous
    session is still being released) until ``deadline``."""
    attempts = 0
    while True:
        attempts += 1
        c = None
        try:
            c = RciClient(host, port, timeout=5.0)
            server_id, _, _ = c.handshake(user, key)
            if isinstance(server_id, IIId):
                emit("connected", attempts=attempts)
                return c
            why = f"refused: {type(server_id).__name__}"
        except (OSError, EOFError, TimeoutError) as exc:
            why = f"{type(exc).__name__}: {exc}"
        if c is not None:
            c.close()
        if time.monotonic() > deadline:
            raise SystemExit(f"could not connect: {why}")
        time.sleep(0.05)


def expect_ack(c: RciClient, pkt, what: str) -> str:
    reply = c.request(pkt)
    if isinstance(reply, CCnAc):
        return "ok"
    if isinstance(reply, CStRp):
        return f"status {CStRpStatus(reply.status).name}"
    if isinstance(reply, CSvTm):
        raise SystemExit(f"{what}: server terminated ({reply!r})")
    return repr(reply)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--mode", choices=["drive", "silent"], default="drive")
    ap.add_argument("--duty", type=float, default=30.0)
    ap.add_argument("--user", default="demo")
    ap.add_argument("--key", default=DEMO_KEY_HEX)
    ap.add_argument("--max-seconds", type=float, default=30.0)
    a = ap.parse_args(argv)
    start = time.monotonic()
    end = start + a.max_seconds
    c = connect(a.host, a.port, a.user, bytes.fromhex(a.key), min(end, start + 15.0))
    act = CAcMt.one(MotorType.DC, 0, 1, rq_ack=True)
    spd = CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                  speedval_pack(True, a.duty)), rq_ack=True)
    r1 = expect_ack(c, act, "activate")
    r2 = expect_ack(c, spd, "set motor")
    t_ack = time.monotonic()
    emit("driving", activate=r1, set_motor=r2, t=t_ack)
    if a.mode == "silent":
        emit("silent", t=t_ack)           # the last packet went out before this ack came
        got = []
        try:
            got = c.wait_closed(timeout=max(0.1, end - time.monotonic()))
        except TimeoutError:
            emit("timeout")
        t = time.monotonic()
        terms = [int(p.term_code) for p in got if isinstance(p, CSvTm)]
        emit("closed", terms=terms, term_names=[TermCode(x).name for x in terms], t=t)
        c.close()
        return 0
    inq = CGtMtIq.one(MotorType.DC, 0, GetMotorStatus.DATA)
    n = 0
    while time.monotonic() < end:
        reply = c.request(spd)
        if isinstance(reply, CSvTm):
            emit("terminated", term=int(reply.term_code))
            return 3
        reply = c.request(inq)
        if not isinstance(reply, (CGtMtRp, CStRp)):
            emit("unexpected", reply=repr(reply))
        n += 1
        if n == 1:
            emit("commanding")
    # bounded: stop the motor and leave
    c.request(CStMt.one(MotorType.DC, 0, MotorCommand(MotorCommandKind.SPVAL,
                                                      speedval_pack(True, 0.0)), rq_ack=True))
    c.close()
    emit("done", commands=n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
