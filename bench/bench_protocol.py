#!/usr/bin/env python3
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

"""Protocol throughput benchmark (not a test).

Encode + decode of
  A. a 12-ultrasonic group RCI-CGtSnRp (DATA: guint16 delay each), 30 bytes,
     decoded by a client decoder against its inquiry (``expect_reply`` + ``feed``);
  B. a full RDI state frame: 12 ultrasonics (group) + 2 relative encoders
     (group) + absolute encoder + accelerometer + DC motor + steer + drive +
     ego + omni, 9 packets, 203 bytes, ``encode_rdi_frame`` + ``RdiDecoder.feed``;
against floors measured in the same run, interleaved with our code:

  floor         one precompiled ``struct.Struct`` packing the flat values of the
                same bytes and unpacking them again (no objects);
  object floor  the least any implementation of this API must do: the same
                Struct pack from the API's objects (values read straight out of
                them) and unpack into exactly the objects our decoder returns
                (packet dataclasses, ``(id, data)`` pairs, one NamedTuple per
                item), straight-line code written for this one packet/frame
                with C-level ``map``/``zip``: no validation, no dispatch, no
                streaming buffer.

Timing: every function is timed in short batches, the batches of all
functions interleaved round after round (so load from other processes hits
them alike); the figure is the best batch (per-call time).

Run:  python3 bench/bench_protocol.py [--seconds 1.0]
Output: Markdown (figures in a code block), for scripts/run_bench.py.
"""

from __future__ import annotations

import argparse
from itertools import chain, repeat
from operator import itemgetter
import os
import platform
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bsal_ros.protocol import (AbsEncoderReading, AccelReading, CGtSnIq, CGtSnRp,  # noqa: E402
                               DcMotorReading, DriveReading, encode_rci, encode_rdi_frame, Form,
                               GetSensorStatus, RciDecoder, RdiActuator, RdiActuatorType,
                               RdiDecoder, RdiMotor, RdiMotorType, RdiOrientEgo, RdiOrientOmni,
                               RdiSensor, RdiSensorType, RelEncoderReading, SensorType,
                               speedval_pack, Statval, SteerReading, UltrasonicData,
                               UltrasonicReading)

_get1 = itemgetter(1)
_tnew = tuple.__new__
GROUP, GENERAL = Form.GROUP, Form.GENERAL


def measure(fns: dict, seconds: float) -> dict:
    """Per-call microseconds of each function: best batch over interleaved rounds.

    ``seconds`` is the time spent per function (all rounds together)."""
    batch = {}
    for name, fn in fns.items():          # calibrate: a batch of ~2 ms
        n = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            dt = time.perf_counter() - t0
            if dt > 0.002:
                break
            n *= 2
        batch[name] = max(1, int(n * 0.002 / dt))
    best = {name: float("inf") for name in fns}
    rounds = max(5, int(seconds / 0.002))
    for _ in range(rounds):
        for name, fn in fns.items():
            n = batch[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / n)
    return {name: t * 1e6 for name, t in best.items()}


def report(title, t, parts):
    ours, floor, obj = t["ours"], t["floor"], t["objfloor"]
    print(title)
    for label, key in parts:
        print(f"    {label:<38s} {t[key]:8.2f} us")
    print(f"    {'encode+decode (ours)':<38s} {ours:8.2f} us  {1e6 / ours:12,.0f} /s")
    print(f"    {'floor: Struct pack+unpack':<38s} {floor:8.2f} us  {1e6 / floor:12,.0f} /s")
    print(f"    {'object floor: same + API objects':<38s} {obj:8.2f} us  {1e6 / obj:12,.0f} /s")
    print(f"    {'ratio ours / floor':<38s} {ours / floor:8.2f} x")
    print(f"    {'ratio object floor / floor':<38s} {obj / floor:8.2f} x")
    print(f"    {'ratio ours / object floor':<38s} {ours / obj:8.2f} x")
    print(f"    {'share of ours: raw Struct work':<38s} {100 * floor / ours:7.0f} %")
    print(f"    {'share of ours: required object work':<38s} {100 * (obj - floor) / ours:7.0f} %")
    print(f"    {'share of ours: the rest':<38s} {100 * (ours - obj) / ours:7.0f} %")
    return ours / floor, obj / floor


def bench_a(sec):
    delays = [1000 + 37 * i for i in range(12)]
    inq = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)
    rp = CGtSnRp.group(SensorType.ULTRASONIC, 0, [UltrasonicData(d) for d in delays])
    wire = encode_rci(rp)
    dec = RciDecoder(role="client")
    fst = struct.Struct(">HBBH12H")
    fvals = (0x8213, 0x83, 12, 0, *delays)
    assert fst.pack(*fvals) == wire
    US = SensorType.ULTRASONIC

    def enc():
        encode_rci(rp)

    def decode():
        dec.expect_reply(inq)
        dec.feed(wire)

    def ours():
        dec.expect_reply(inq)
        dec.feed(encode_rci(rp))

    def floor():
        fst.unpack(fst.pack(*fvals))

    def objfloor():
        items = rp.items
        v = fst.unpack(fst.pack(0x8213, 0x83, 12, items[0][0],
                                *chain.from_iterable(map(_get1, items))))
        first = v[3]
        return CGtSnRp(US, list(zip(range(first, first + 12),
                                    map(_tnew, repeat(UltrasonicData), zip(v[4:])))), GROUP, False)

    dec.expect_reply(inq)
    assert dec.feed(encode_rci(rp)) == [rp] and objfloor() == rp
    t = measure({"ours": ours, "floor": floor, "objfloor": objfloor, "enc": enc, "dec": decode},
                sec)
    return report(f"A. RCI-CGtSnRp group of 12 ultrasonics, {len(wire)} bytes (rate = packets/s)",
                  t, [("encode_rci", "enc"), ("expect_reply + feed", "dec")])


def bench_b(sec):
    st = Statval(True, True, True, 123456).pack()
    frame = [
        RdiSensor.group(RdiSensorType.ULTRASONIC, 0,
                        [UltrasonicReading(1000 + 37 * i, st) for i in range(12)]),
        RdiSensor.group(RdiSensorType.RELENCODER, 0,
                        [RelEncoderReading(12, st, 3456, st), RelEncoderReading(-7, st, -99, st)]),
        RdiSensor.one(RdiSensorType.ABSENCODER, 0, AbsEncoderReading(512, st)),
        RdiSensor.one(RdiSensorType.ACCEL, 0, AccelReading(0.125, st)),
        RdiMotor.one(RdiMotorType.DC, 0, DcMotorReading(speedval_pack(True, 25.0), st)),
        RdiActuator.one(RdiActuatorType.STEER, 0, SteerReading(-0.25, st)),
        RdiActuator.one(RdiActuatorType.DRIVE, 1, DriveReading(17.5, st)),
        RdiOrientEgo(1.5, -2.25, 0.75, st),
        RdiOrientOmni(0.5, 0.375, st),
    ]
    fwire = encode_rdi_frame(frame)
    rdec = RdiDecoder()
    fst = struct.Struct(">HBBH" + "HI" * 12 + "HBBH" + "hIhI" * 2 + "HBH" + "hI" + "HBH" + "fI"
                        + "HBH" + "HI" + "HBH" + "fI" + "HBH" + "fI" + "HB" + "fffI" + "HB" + "ffI")
    fl = fst.unpack(fwire)
    assert fst.pack(*fl) == fwire and len(fwire) == fst.size and len(fl) == 76
    US, REL, ABS, ACC = (RdiSensorType.ULTRASONIC, RdiSensorType.RELENCODER,
                         RdiSensorType.ABSENCODER, RdiSensorType.ACCEL)
    DC, STEER, DRIVE = RdiMotorType.DC, RdiActuatorType.STEER, RdiActuatorType.DRIVE
    URd, RRd = UltrasonicReading, RelEncoderReading

    def enc():
        encode_rdi_frame(frame)

    def decode():
        rdec.feed(fwire)

    def ours():
        rdec.feed(encode_rdi_frame(frame))

    def floor():
        fst.unpack(fst.pack(*fl))

    def objfloor():
        # pack straight from the objects, unpack into the same objects; every
        # code, sub-code and count is a constant of this one frame
        us, rel, ab, ac, dc, steer, drive, ego, omni = frame
        ui, ri = us.items, rel.items
        (ai, ad), = ab.items
        (ci, cd), = ac.items
        (di, dd), = dc.items
        (si, sd), = steer.items
        (wi, wd), = drive.items
        v = fst.unpack(fst.pack(
            0x8010, 1, 12, ui[0][0], *chain.from_iterable(map(_get1, ui)),
            0x8010, 2, 2, ri[0][0], *chain.from_iterable(map(_get1, ri)),
            0x0010, 3, ai, *ad, 0x0010, 4, ci, *cd, 0x0020, 1, di, *dd,
            0x0030, 1, si, *sd, 0x0030, 2, wi, *wd,
            0x0040, 1, ego.xpos, ego.ypos, ego.angle, ego.status,
            0x0040, 2, omni.direction, omni.speed, omni.status))
        f1, f2 = v[3], v[31]
        it1, it2 = iter(v[4:28]), iter(v[32:40])
        return [
            RdiSensor(US, list(zip(range(f1, f1 + 12), map(_tnew, repeat(URd), zip(it1, it1)))),
                      GROUP),
            RdiSensor(REL, list(zip(range(f2, f2 + 2),
                                    map(_tnew, repeat(RRd), zip(it2, it2, it2, it2)))), GROUP),
            RdiSensor(ABS, [(v[42], AbsEncoderReading(v[43], v[44]))], GENERAL),
            RdiSensor(ACC, [(v[47], AccelReading(v[48], v[49]))], GENERAL),
            RdiMotor(DC, [(v[52], DcMotorReading(v[53], v[54]))], GENERAL),
            RdiActuator(STEER, [(v[57], SteerReading(v[58], v[59]))], GENERAL),
            RdiActuator(DRIVE, [(v[62], DriveReading(v[63], v[64]))], GENERAL),
            RdiOrientEgo(v[67], v[68], v[69], v[70]),
            RdiOrientOmni(v[73], v[74], v[75]),
        ]

    assert objfloor() == frame
    assert rdec.feed(encode_rdi_frame(frame)) == frame
    t = measure({"ours": ours, "floor": floor, "objfloor": objfloor, "enc": enc, "dec": decode},
                sec)
    return report(f"B. RDI state frame, {len(frame)} packets, {len(fwire)} bytes (rate = frames/s)",
                  t, [("encode_rdi_frame", "enc"), ("RdiDecoder.feed", "dec")])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="time per measured function (all interleaved rounds together)")
    args = ap.parse_args(argv)
    try:
        load = " load average %.1f," % os.getloadavg()[0]
    except OSError:
        load = ""
    print("```text")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores,"
          f"{load} {args.seconds:.1f} s per function, best 2 ms batch of interleaved rounds\n")
    ra, oa = bench_a(args.seconds)
    rb, ob = bench_b(args.seconds)
    print("```")
    print()
    for name, r, o in (("A", ra, oa), ("B", rb, ob)):
        print(f"- {name}: encode+decode is {r:.2f}x the raw Struct floor and {r / o:.2f}x the "
              f"object floor (the least this API's objects cost: {o:.2f}x the raw floor). "
              f"What it weighs in a round trip: the bench_rci section (codec share of the "
              f"fastest round trip).")


if __name__ == "__main__":
    main()
