"""The worked example of docs/EXTENDING.md: a bumper board kind that is not
part of Brak (test/kinds/bumper.py), registered from its one module, on the
simulated bus and on the smbus2 backend against a fake SMBus, through the
codecs, an RDI frame and the viewer, and end to end through ROS: the
device_states topic, /diagnostics, the RCI gateway and the RDI stream."""

import copy
import errno
import socket
import time

import pytest

from kinds import bumper  # noqa: F401  (registers the bumper)
from bsal_ros.core import DeviceState
from bsal_ros.hardware.description import DescriptionError, load_description
from bsal_ros.hardware.diagnostics import device_diagnostics
from bsal_ros.hardware.robot import Robot
from bsal_ros.kinds import board_types, data_fields, device_classes
from bsal_ros.protocol import RdiDecoder, RdiSensor, encode_rdi_frame
from bsal_ros.rdi.state import StreamState
from bsal_ros.viewer.model import ViewerModel, describe


def bumper_robot():
    return load_description(overrides={"robot": bumper.DESCRIPTION})["robot"]


def press(robot, mask):
    vb = [d for d in robot.bus.attached() if isinstance(d, bumper.VirtualBumperBoard)]
    assert len(vb) == 1
    vb[0].pressed = mask


def test_the_bumper_is_registered_everywhere():
    assert "bumper" in board_types() and device_classes()[-1] == "bumper"
    assert "extra" in data_fields()           # its contacts reach the CA view
    robot = copy.deepcopy(bumper_robot())
    robot["devices"]["bumper"]["front_bumper"]["board"] = "drive"
    with pytest.raises(DescriptionError, match="cannot carry"):
        load_description(overrides={"robot": robot})


def test_simulated_bumper_reads_its_contacts_and_diagnoses_them():
    now = [0.0]
    r = Robot(bumper_robot(), seed=1, clock=lambda: now[0])
    try:
        r.start(activate=True)
        press(r, 0b0101)
        for _ in range(5):
            now[0] += 0.1
            r.cycle()
        res, states = r.get_states("bumper")
        assert res.ok and states[0].extra == {"contacts": 0b0101} and states[0].on
        diag = {d.name: d for d in device_diagnostics(r, r.clock())}
        assert diag["bumper 0"].values["contacts"] == "0101"
        assert diag["bumper 0"].hardware_id.endswith("0x40")
    finally:
        r.close()


class FakeSMBus:
    """smbus2.SMBus with one bumper board at 0x40 (every other address: ENXIO)."""

    def __init__(self, bus):
        self.regs = {0x40: [0] * 256}
        self.regs[0x40][0] = bumper.WHO_AM_I
        self.contacts = 0

    def _dev(self, addr):
        if addr not in self.regs:
            raise OSError(errno.ENXIO, "No such device or address")
        r = self.regs[addr]
        r[1], r[2], r[3] = 0x01, (r[2] + 1) & 0xFF, self.contacts   # STATUS SEQ CONTACTS
        return r

    def read_byte_data(self, addr, reg):
        return self._dev(addr)[reg]

    def write_byte_data(self, addr, reg, value):
        self._dev(addr)[reg] = value

    def read_i2c_block_data(self, addr, reg, length):
        return self._dev(addr)[reg:reg + length]

    def write_i2c_block_data(self, addr, reg, data):
        self._dev(addr)[reg:reg + len(data)] = data

    def close(self):
        pass


def test_bumper_on_the_smbus2_backend():
    desc = copy.deepcopy(bumper_robot())
    desc["boards"] = {"bumper": desc["boards"]["bumper"]}
    desc["devices"] = {"bumper": desc["devices"]["bumper"]}
    made = []

    def factory(n):
        made.append(FakeSMBus(n))
        return made[-1]

    r = Robot(desc, backend="smbus2", i2c_bus=5, smbus_factory=factory)
    try:
        r.start(activate=True)
        assert made[0].regs[0x40][0x40] == 0x01            # ENABLE written
        made[0].contacts = 0b1001
        r.cycle(r.clock() + 1.0)
        _, (s,) = r.get_states("bumper")
        assert s.up and s.ok and s.extra == {"contacts": 0b1001}
    finally:
        r.close()


def test_bumper_in_an_rdi_frame_and_the_viewer():
    st = StreamState()
    st.update_devices([DeviceState("bumper", 0, on=True, statval=0x700, stamp=1.0,
                                   extra={"contacts": 6.0})])
    wire = encode_rdi_frame(st.build_frame())
    (p,) = RdiDecoder().feed(wire)
    assert isinstance(p, RdiSensor) and p.sub_code == bumper.RDI_SUB
    assert p.items == [(0, bumper.BumperReading(6, 0x700))]
    m = ViewerModel(layout={})
    m.apply(p)
    assert m.sensors["bumper"][0].contacts == 6
    assert describe(p).startswith("RDI-Sn BUMPER general n=1 0:contacts=0110")
    pytest.importorskip("PIL")
    from bsal_ros.viewer.render import render
    render(m, size=(400, 300))
