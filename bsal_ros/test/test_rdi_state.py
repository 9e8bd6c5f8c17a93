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

"""RDI stream state and frame building, fan-out queues (pure, no sockets)."""

import math

import pytest

from bsal_ros.core import DeviceState
from bsal_ros.protocol import (AbsEncoderReading, AccelReading, DcMotorReading, DriveReading,
                               encode_rdi_frame, Form, RdiActuator, RdiDecoder, RdiMotor,
                               RdiOrientEgo, RdiOrientOmni, RdiSensor, RdiSensorType,
                               RelEncoderReading, Statval, SteerReading, Timeval, UltrasonicReading)
from bsal_ros.rdi import ClientQueue, FanOut, Frame, id_packets, StreamState

ST = Statval(True, True, True, 1234).pack()


def full_state():
    st = StreamState(pservo_id_offset=1)
    st.set_base_time(Timeval(1000, 0))
    st.update_devices([DeviceState("ultrasonic", i, statval=ST, delay_us=1000 + i, stamp=1.0)
                       for i in range(12)])
    st.update_devices([
        DeviceState("relative_encoder", 0, statval=ST, d_count=-3, d_statval=ST, count=400,
                    position=4 * math.pi, stamp=1.0),
        DeviceState("absolute_encoder", 0, statval=ST, count=-77, stamp=1.0),
        DeviceState("accelerometer", 0, statval=ST, accel_g=0.25, stamp=1.0),
        DeviceState("dc_motor", 0, statval=ST, speedval=0x8199, stamp=1.0),
        DeviceState("pservo_motor", 0, statval=ST, speedval=0x0064, motor_position=-0.5, stamp=1.0),
    ])
    st.set_ego(1.5, -2.0, 0.75, 1002.5)
    st.set_omni_from_twist(0.75, 0.4, 1002.5)
    return st


def test_frame_has_every_kind_with_raw_values():
    st = full_state()
    frame = st.build_frame()
    kinds = {(type(p).__name__, getattr(p, "sub_code", None)) for p in frame}
    assert len(kinds) == 9
    us = frame[0]
    assert isinstance(us, RdiSensor) and us.form is Form.GROUP and len(us.items) == 12
    assert us.items[5] == (5, UltrasonicReading(1005, ST))
    byname = {(type(p).__name__, getattr(p, "sub_code", None)): p for p in frame}
    rel = byname[("RdiSensor", RdiSensorType.RELENCODER)]
    assert rel.items == [(0, RelEncoderReading(-3, ST, 400, ST))]
    absolute = byname[("RdiSensor", RdiSensorType.ABSENCODER)]
    assert absolute.items == [(0, AbsEncoderReading(-77, ST))]
    assert byname[("RdiSensor", RdiSensorType.ACCEL)].items == [(0, AccelReading(0.25, ST))]
    mt = [p for p in frame if isinstance(p, RdiMotor)][0]
    assert mt.form is Form.GROUP and mt.items == [(0, DcMotorReading(0x8199, ST)),
                                                  (1, DcMotorReading(0x0064, ST))]
    acts = [p for p in frame if isinstance(p, RdiActuator)]
    assert acts[0].items == [(0, SteerReading(-0.5, ST))]
    assert acts[1].items == [(0, DriveReading(2.0, ST))]
    ego = [p for p in frame if isinstance(p, RdiOrientEgo)][0]
    assert (ego.xpos, ego.ypos, ego.angle) == (1.5, -2.0, 0.75)
    assert Statval.unpack(ego.status).ms == 2500
    omni = [p for p in frame if isinstance(p, RdiOrientOmni)][0]
    assert omni.direction == 0.75 and omni.speed == pytest.approx(0.4)
    # and it encodes/decodes
    wire = encode_rdi_frame(frame)
    assert RdiDecoder().feed(wire)[0] == us


def test_omni_backwards_and_newest_wins():
    st = StreamState()
    st.set_omni_from_twist(0.0, -0.5, 10.0)
    assert st.omni.direction == pytest.approx(math.pi) and st.omni.speed == 0.5
    st.set_omni_from_twist(1.0, 0.5, 9.0)          # older: ignored
    assert st.omni.stamp == 10.0
    st.update_devices([DeviceState("ultrasonic", 0, delay_us=5, stamp=2.0)])
    st.update_devices([DeviceState("ultrasonic", 0, delay_us=4, stamp=1.0)])
    assert st.devices[("ultrasonic", 0)].delay_us == 5


def test_group_poly_general_choice():
    d = UltrasonicReading(1, 2)
    assert [p.form for p in id_packets(RdiSensor, 1, [(3, d)])] == [Form.GENERAL]
    assert [p.form for p in id_packets(RdiSensor, 1, [(4, d), (3, d)])] == [Form.GROUP]
    assert [p.form for p in id_packets(RdiSensor, 1, [(4, d), (9, d)])] == [Form.POLY]
    big = id_packets(RdiSensor, 1, [(i, d) for i in range(300)])
    assert [len(p.items) for p in big] == [255, 45]


def test_values_clamped_not_wrapped():
    st = StreamState()
    st.update_devices([DeviceState("relative_encoder", 0, statval=-1, d_count=70000,
                                   count=-70000, stamp=1)])
    (rel,) = [p for p in st.build_frame() if isinstance(p, RdiSensor)]
    assert rel.items[0][1] == RelEncoderReading(32767, 0, -32768, 0)


def test_merge_device_and_clear():
    st = StreamState()
    st.merge_device(DeviceState("ultrasonic", 2, delay_us=300, stamp=1), ["delay_us"])
    assert st.devices[("ultrasonic", 2)].statval == 0
    st.merge_device(DeviceState("ultrasonic", 2, statval=ST, delay_us=999, stamp=2), ["statval"])
    d = st.devices[("ultrasonic", 2)]
    assert (d.delay_us, d.statval) == (300, ST)
    st.clear()
    assert st.build_frame() == []


def frame(t, seq=0, base=0):
    return Frame(b"x" * 10, base, b"", t, seq)


def test_client_queue_bounded_drops_oldest():
    q = ClientQueue(3)
    for i in range(10):
        q.offer(frame(float(i), i))
    assert len(q) == 3 and q.dropped == 7
    assert q.take().seq == 7
    assert q.lag(12.0) == pytest.approx(5.0)      # frame 7 in flight since t=7
    q.done(10)
    assert q.lag(12.0) == pytest.approx(4.0)      # oldest queued: t=8
    while q.take():
        q.done(10)
    assert q.lag(100.0) == 0.0 and q.frames_sent == 3 and q.bytes_sent == 30


def test_fanout_admission_and_lag():
    fo = FanOut(max_clients=2, queue_frames=2, max_lag_s=1.0)
    assert fo.admit("a") is not None and fo.admit("b") is not None
    assert fo.admit("c") is None and fo.refused == 1
    fo.broadcast(frame(0.0))
    fo.clients["a"].take()
    fo.clients["a"].done(10)
    fo.broadcast(frame(1.0))
    fo.clients["a"].take()
    fo.clients["a"].done(10)
    assert [k for k, _ in fo.lagging(1.5)] == ["b"]
    fo.remove("b")
    assert fo.admit("c") is not None


def test_rdi_layer_imports_no_ros():
    import ast
    import pathlib

    import bsal_ros.rdi
    root = pathlib.Path(bsal_ros.rdi.__file__).parent
    for f in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                top = n.split(".")[0]
                assert not top.startswith(("rcl", "ros")), f"{f.name} imports {n}"
                assert not top.endswith(("_msgs", "_srvs", "_interfaces")), f"{f.name}: {n}"


def _as_core(snapshot):
    """A hardware snapshot as the gateways receive it (core.DeviceState)."""
    import dataclasses
    names = {f.name for f in dataclasses.fields(DeviceState)}
    return DeviceState(**{f.name: getattr(snapshot, f.name)
                          for f in dataclasses.fields(snapshot) if f.name in names})


def test_steering_rdi_id_never_collides_with_a_dc_motor():
    """A robot description with 2 DC motors (ids 0, 1) and the steering
    pseudo-servo 0: the steering goes out as RDI-Mt DC id 256 (the default
    offset), each id once; with the old offset 1 the real DC motor 1 wins
    and the steering stays only in RDI-Ac STEER."""
    from hardware_helpers import make_robot, run
    two_dc = {"robot": {
        "boards": {"drive2": {"type": "dc_motor", "address": 0x32, "update_hz": 25.0,
                              "poll_hz": 20.0, "command_timeout_ms": 500}},
        "devices": {"dc_motor": {"aux_motor": {"id": 1, "board": "drive2", "channel": 0}}}}}
    robot, clock = make_robot(two_dc)
    run(robot, clock, 0.5)
    res, snaps = robot.get_states("")
    assert res.code == 0
    states = [_as_core(s) for s in snaps]
    assert sorted(s.id for s in states if s.device_class == "dc_motor") == [0, 1]
    for offset, want in ((None, [0, 1, 256]), (1, [0, 1])):
        st = StreamState() if offset is None else StreamState(pservo_id_offset=offset)
        st.update_devices(states)
        frame = st.build_frame()
        ids = [i for p in frame if isinstance(p, RdiMotor) for i, _ in p.items]
        assert sorted(ids) == want and len(ids) == len(set(ids))
        dc1 = [r for p in frame if isinstance(p, RdiMotor) for i, r in p.items if i == 1]
        aux = next(s for s in states if (s.device_class, s.id) == ("dc_motor", 1))
        assert dc1[0].speed == aux.speedval             # id 1 is the real DC motor
        steer = [i for p in frame if isinstance(p, RdiActuator) and p.sub_code == 1
                 for i, _ in p.items]
        assert steer == [0]
