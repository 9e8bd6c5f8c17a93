#!/usr/bin/env python3
"""Protocol throughput benchmark (not a test).

Encode + decode of
  A. a 12-ultrasonic group RCI-CGtSnRp (DATA: guint16 delay each), 29 bytes;
  B. a full RDI state frame: 12 ultrasonics (group) + 2 relative encoders
     (group) + absolute encoder + accelerometer + DC motor + steer + drive +
     ego + omni, 9 packets;
against a floor measured in the same run: one precompiled ``struct.Struct``
packing and unpacking the same bytes (flat values, no objects).

Run:  python3 bench/bench_protocol.py [--seconds 1.0]
Output: Markdown (figures in a code block), for bench/run_all.py.
"""

from __future__ import annotations

import argparse
import os
import platform
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bsal_ros.protocol import (  # noqa: E402
    Form, AbsEncoderReading, AccelReading, CGtSnIq, CGtSnRp, DcMotorReading, DriveReading,
    GetSensorStatus, RciDecoder, RdiActuator, RdiActuatorType, RdiDecoder, RdiMotor,
    RdiMotorType, RdiOrientEgo, RdiOrientOmni, RdiSensor, RdiSensorType, RelEncoderReading,
    SensorType, Statval, SteerReading, UltrasonicData, UltrasonicReading, encode_rci,
    encode_rdi_frame, speedval_pack)


def timeit(fn, seconds):
    """Calls per second and microseconds per call of fn (best of 3 runs)."""
    n = 1
    while True:                       # calibrate
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > seconds / 10:
            break
        n *= 2
    reps = max(1, int(n * (seconds / 3) / dt))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps)
    return 1.0 / best, best * 1e6


def report(name, ours, floor, parts, objfloor):
    rate, us = ours
    frate, fus = floor
    print(f"{name}")
    for pname, (_, pus) in parts:
        print(f"    {pname:<36s} {pus:8.2f} us")
    print(f"    {'encode+decode (ours)':<36s} {us:8.2f} us  {rate:12,.0f} packets/s")
    print(f"    {'floor: Struct pack+unpack':<36s} {fus:8.2f} us  {frate:12,.0f} packets/s")
    print(f"    {'object floor: unpack + build items':<36s} {objfloor[1]:8.2f} us")
    print(f"    ratio ours/floor                     {us / fus:8.2f} x")
    print(f"    ratio ours/object floor              {us / objfloor[1]:8.2f} x")
    return us / fus


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = ap.parse_args(argv)
    sec = args.seconds
    print("```text")
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{args.seconds:.1f} s per measurement, best of 3\n")

    # ---------------------------------------------------------------- A
    delays = [1000 + 37 * i for i in range(12)]
    inq = CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12)
    rp = CGtSnRp.group(SensorType.ULTRASONIC, 0, [UltrasonicData(d) for d in delays])
    wire = encode_rci(rp)
    dec = RciDecoder(role="client")
    floor_st = struct.Struct(">HBBH12H")
    fvals = (0x8213, 0x83, 12, 0, *delays)
    assert floor_st.pack(*fvals) == wire

    def enc_a():
        encode_rci(rp)

    def dec_a():
        dec.expect_reply(inq)
        dec.feed(wire)

    def both_a():
        dec.expect_reply(inq)
        dec.feed(encode_rci(rp))

    def floor_a():
        floor_st.unpack(floor_st.pack(*fvals))

    from itertools import repeat
    tnew = tuple.__new__

    def objfloor_a():
        # the least a decoder returning the same objects must do: unpack, then
        # build one UltrasonicData per item with C-level map/zip, plus the packet
        v = floor_st.unpack(floor_st.pack(*fvals))
        CGtSnRp(SensorType.ULTRASONIC,
                list(zip(range(v[3], v[3] + 12), map(tnew, repeat(UltrasonicData), zip(v[4:])))))

    both_a()
    dec.expect_reply(inq)
    assert dec.feed(wire) == [rp]
    ra = report(f"A. RCI-CGtSnRp group of 12 ultrasonics, {len(wire)} bytes",
                timeit(both_a, sec), timeit(floor_a, sec),
                [("encode_rci", timeit(enc_a, sec)),
                 ("expect_reply + feed", timeit(dec_a, sec))], timeit(objfloor_a, sec))

    # ---------------------------------------------------------------- B
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
    from itertools import repeat
    tnew = tuple.__new__
    ffmt = (">HBBH" + "HI" * 12 + "HBBH" + "hIhI" * 2 + "HBH" + "hI" + "HBH" + "fI"
            + "HBH" + "HI" + "HBH" + "fI" + "HBH" + "fI" + "HB" + "fffI" + "HB" + "ffI")
    ffloor = struct.Struct(ffmt)
    fl = ffloor.unpack(fwire)
    assert ffloor.pack(*fl) == fwire and len(fwire) == ffloor.size

    def enc_b():
        encode_rdi_frame(frame)

    def dec_b():
        rdec.feed(fwire)

    def both_b():
        rdec.feed(encode_rdi_frame(frame))

    def floor_b():
        ffloor.unpack(ffloor.pack(*fl))

    types = [type(p.items[0][1]) if hasattr(p, "items") else None for p in frame]

    def objfloor_b():
        v = ffloor.unpack(ffloor.pack(*fl))
        out, j = [], 0
        for p, t in zip(frame, types):   # same objects, no validation, no streaming
            if t is None:
                n = 4 if isinstance(p, RdiOrientEgo) else 3
                out.append(type(p)(*v[j + 2:j + 2 + n]))
                j += 2 + n
                continue
            k = len(t._fields)
            if p.form is Form.GROUP:
                n = v[j + 2]
                it = iter(v[j + 4:j + 4 + n * k])
                out.append(type(p)(p.sub_code, list(zip(range(v[j + 3], v[j + 3] + n),
                                                        map(tnew, repeat(t), zip(*[it] * k)))),
                                   p.form))
                j += 4 + n * k
            else:
                out.append(type(p)(p.sub_code, [(v[j + 2], tnew(t, v[j + 3:j + 3 + k]))]))
                j += 3 + k
        return out

    assert objfloor_b() == frame
    assert rdec.feed(fwire) == frame
    rb = report(f"B. RDI state frame, {len(frame)} packets, {len(fwire)} bytes (rate = frames/s)",
                timeit(both_b, sec), timeit(floor_b, sec),
                [("encode_rdi_frame", timeit(enc_b, sec)), ("RdiDecoder.feed", timeit(dec_b, sec))],
                timeit(objfloor_b, sec))
    goal = 3.0
    print("```")
    print(f"\ngoal: within {goal:.0f}x of the floor -> A {'met' if ra <= goal else 'NOT met'} "
          f"({ra:.2f}x), B {'met' if rb <= goal else 'NOT met'} ({rb:.2f}x)")


if __name__ == "__main__":
    main()
