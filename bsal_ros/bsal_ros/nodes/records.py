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
"""Which parameter record each node declares (no ROS here).

``NODE_RECORDS`` maps a node's default name to its record: the nodes read it
when they declare their parameters, and every check of a parameter (the
INTERFACES tables, the params files, the launch file's overrides, the
wrong-value test) iterates over it. The hardware node's is
``HardwareNodeParams`` with the parameters the loaded device kinds and board
types bring (:func:`with_kind_params`). A test may put an extended record in
(``test/test_parameter_worked_example.py``).
"""

from __future__ import annotations

import dataclasses
import logging

from bsal_ros.hardware.node_params import HardwareNodeParams
from bsal_ros.kinds.registry import declared_params
from bsal_ros.nodes.gateway_params import (FoxgloveGatewayParams, RciGatewayParams,
                                           RdiGatewayParams)


def with_kind_params(base: type = HardwareNodeParams) -> type:
    """``base`` (a hardware node record) extended with the parameters of
    every registered board type and device kind (their ``params`` record),
    under ``base``'s name; ``base`` itself when none brings one. A kind's
    parameter named as one of ``base``'s own is left out with one logged
    error naming both (``base``'s keeps its meaning)."""
    own = {f.name for f in dataclasses.fields(base)}
    fields = []
    for what, name, rec in declared_params():
        for f in dataclasses.fields(rec):
            if f.name in own:
                logging.getLogger("bsal_ros.kinds").error(
                    f"{what} {name!r}: parameter {f.name!r} left out: it is one of "
                    f"{base.__name__}'s own")
                continue
            fields.append((f.name, f.type, dataclasses.field(default=f.default,
                                                             metadata=f.metadata)))
    if not fields:
        return base
    return dataclasses.make_dataclass(base.__name__, fields, bases=(base,), frozen=True,
                                      namespace={"__doc__": base.__doc__,
                                                 "__module__": base.__module__})


NODE_RECORDS = {"hardware_node": with_kind_params(), "rci_gateway": RciGatewayParams,
                "rdi_gateway": RdiGatewayParams, "foxglove_gateway": FoxgloveGatewayParams}
