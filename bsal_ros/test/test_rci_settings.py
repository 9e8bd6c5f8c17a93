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

"""The RCI sessions' settings are the gateway's parameter declaration (issue
40): declared once (``rci/settings.py``), extended by the node's record, read
through by :class:`SessionConfig`; no second default anywhere."""

from __future__ import annotations

import dataclasses
from pathlib import Path
import re

import pytest

from bsal_ros.nodes.gateway_params import RciGatewayParams
from bsal_ros.rci.settings import RciSessionParams, SESSION_PARAMETERS, SessionConfig

RCI = Path(__file__).resolve().parents[1] / "bsal_ros" / "rci"


def own_settings() -> set[str]:
    """The fields SessionConfig declares itself (not parameters)."""
    return {f.name for f in dataclasses.fields(SessionConfig)} - {"params"}


def test_the_gateway_declares_the_session_parameters_as_they_are_declared_once():
    gateway = RciGatewayParams.specs()
    for name, declared in RciSessionParams.specs().items():
        assert gateway[name] == declared, name
    assert issubclass(RciGatewayParams, RciSessionParams)


def test_no_setting_repeats_a_parameter():
    assert own_settings().isdisjoint(RciGatewayParams.specs())


def test_the_defaults_are_the_declarations():
    cfg = SessionConfig()
    for name, (default, _) in RciSessionParams.specs().items():
        assert getattr(cfg, name) == default, name


def test_the_settings_read_the_gateway_record_itself_and_its_replacement():
    record = RciGatewayParams(watchdog_s=0.7, login_max_failures=9)
    cfg = SessionConfig(record)
    assert (cfg.watchdog_s, cfg.login_max_failures) == (0.7, 9)
    cfg.params = dataclasses.replace(record, watchdog_s=1.25)      # a run-time change
    assert cfg.watchdog_s == 1.25


def test_keyword_settings_split_into_parameters_and_fixed_limits():
    cfg = SessionConfig.of(watchdog_s=0.3, linger_s=0.05)
    assert cfg.params.watchdog_s == 0.3 and cfg.linger_s == 0.05
    with pytest.raises(TypeError):
        SessionConfig.of(watchdog=0.3)
    with pytest.raises(AttributeError, match="no setting 'host'"):
        SessionConfig().host          # the node's own parameter: not a session setting


def test_every_setting_the_rci_layer_reads_is_declared():
    """A ``cfg.<name>`` read in rci/ that is neither a parameter nor a fixed
    limit would fail only when that line runs."""
    known = SESSION_PARAMETERS | own_settings() | {"params"}
    read = {m for f in RCI.glob("*.py")
            for m in re.findall(r"\bcfg\.([a-z_]\w*)", f.read_text())}
    assert read and read <= known, sorted(read - known)
