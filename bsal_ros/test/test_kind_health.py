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
"""A device kind gives its device's /diagnostics level itself (issue 52):
``DeviceKind.health(state, ctx)``, asked at each update with the node's
parameters as they are then. Where it stands among the bridge's own checks
(ERROR and STALE first, a board's warnings after the kind's WARN and before
its OK), what a faulty one gives (ERROR naming it, logged once), that the
levels are diagnostic_msgs' values, and that the core's diagnostics name no
kind any more (the motor kinds' warnings are their own ``health``).
Shown on Brak's own accelerometer kind, whose ``health`` is replaced here."""

import re

import pytest

from bsal_ros.core import DeviceState
from bsal_ros.hardware import diagnostics as D
from bsal_ros.hardware.description import load_description
from bsal_ros.kinds import all_kinds, device_classes, Health, HealthContext, kind, Level
from hardware_helpers import make_robot, run

ACCEL = type(kind("accelerometer"))


def accel_status(robot, params=None):
    return {d.name: d for d in D.device_diagnostics(robot, robot.clock(), params=params)}[
        "accelerometer 0"]


@pytest.fixture
def robot():
    r, clock = make_robot()
    run(r, clock, 0.5)
    yield r, clock
    r.close()


def test_the_levels_are_diagnostic_msgs_values():
    from diagnostic_msgs.msg import DiagnosticStatus
    assert {lv.name: bytes([lv]) for lv in Level} == {
        n: getattr(DiagnosticStatus, n) for n in ("OK", "WARN", "ERROR", "STALE")}
    assert (D.OK, D.WARN, D.ERROR, D.STALE) == tuple(Level)


def test_every_registered_kind_answers_nothing_or_a_health():
    ctx = HealthContext(params=D.default_params(), desc=load_description()["robot"])
    for k in all_kinds():
        for on in (False, True):
            got = k.health(DeviceState(k.name, 0, on=on), ctx)
            assert got is None or (isinstance(got, Health) and got.level in Level
                                   and isinstance(got.message, str)), (k.name, got)


def test_a_kind_s_warning_and_its_ok_message(robot, monkeypatch):
    r, _ = robot
    assert (accel_status(r).level, accel_status(r).message) == (D.OK, "ok")
    monkeypatch.setattr(ACCEL, "health", lambda self, s, ctx: Health(
        Level.WARN, f"tilted: {s.accel_g:+.2f} g"))
    got = accel_status(r)
    assert got.level == D.WARN and re.fullmatch(r"tilted: [+-]\d\.\d\d g", got.message), got
    monkeypatch.setattr(ACCEL, "health", lambda self, s, ctx: Health(Level.OK, "level"))
    assert (accel_status(r).level, accel_status(r).message) == (D.OK, "level")


def test_the_kind_reads_the_parameters_of_the_update(robot, monkeypatch):
    r, _ = robot
    monkeypatch.setattr(ACCEL, "health", lambda self, s, ctx: Health(
        Level.WARN if ctx.params["sonar_no_return"] == "max_range" else Level.OK,
        f"sonar_no_return {ctx.params['sonar_no_return']}"))
    # no node: the declared defaults; a node's dict as it is at this update
    assert accel_status(r).message == f"sonar_no_return {D.default_params()['sonar_no_return']}"
    params = {**D.default_params(), "sonar_no_return": "max_range"}
    assert accel_status(r, params).level == D.WARN
    params["sonar_no_return"] = "inf"
    assert accel_status(r, params).level == D.OK


def test_error_and_stale_come_before_the_kind_s_word(robot, monkeypatch):
    r, clock = robot
    monkeypatch.setattr(ACCEL, "health", lambda self, s, ctx: Health(Level.WARN, "mine"))
    clock.t += 2.0                      # no poll for a while: the data is old
    assert accel_status(r).level == D.STALE
    run(r, clock, 0.2)
    r.bus.simulation.control("set_fault", "accel", "missing")
    run(r, clock, 0.2)
    got = accel_status(r)
    assert got.level == D.ERROR and "ENXIO" in got.message


def test_a_board_s_warning_comes_after_the_kind_s_warning_and_before_its_ok(robot, monkeypatch):
    r, _ = robot
    board = r.boards["accel"]
    monkeypatch.setattr(board, "refused", True, raising=False)
    monkeypatch.setattr(ACCEL, "health", lambda self, s, ctx: Health(Level.OK, "level"))
    got = accel_status(r)
    assert (got.level, got.message) == (D.WARN, "board refused the last command")
    monkeypatch.setattr(ACCEL, "health", lambda self, s, ctx: Health(Level.ERROR, "broken"))
    assert (accel_status(r).level, accel_status(r).message) == (D.ERROR, "broken")


@pytest.mark.parametrize("answer,why", [
    (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
    ("WARN", "ValueError: too many values to unpack"),
    ((7, "seven"), "ValueError: 7 is not a valid Level"),
])
def test_a_faulty_health_is_an_error_of_its_device_logged_once(robot, monkeypatch, answer, why):
    r, clock = robot

    def health(self, s, ctx):
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(ACCEL, "health", health)
    r.drain_events()
    for _ in range(3):
        got = accel_status(r)
        assert got.level == D.ERROR, got
        assert got.message.startswith(f"device kind 'accelerometer': health() failed: {why}"), got
        run(r, clock, 0.1)
    said = [e.message for e in r.drain_events() if "health() failed" in e.message]
    assert len(said) == 1 and said[0] == got.message, said
    # every other device goes on as before
    assert {d.name: d.level for d in D.device_diagnostics(r, r.clock())}["ultrasonic 0"] == D.OK


def test_the_core_s_diagnostics_name_no_kind():
    """What hardware/diagnostics.py decided for one kind (``cls == "dc_motor"``)
    is that kind's ``health`` now."""
    import inspect
    src = inspect.getsource(D)
    named = [c for c in device_classes() if re.search(rf"['\"]{c}['\"]", src)]
    assert named == [], f"hardware/diagnostics.py names the kinds {named}"
    assert type(kind("dc_motor")).health is not type(kind("pservo_motor")).health
