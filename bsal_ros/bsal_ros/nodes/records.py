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
wrong-value test) iterates over it. A test may put an extended record in
(``test/test_parameter_worked_example.py``).
"""

from __future__ import annotations

from bsal_ros.hardware.node_params import HardwareNodeParams
from bsal_ros.nodes.gateway_params import RciGatewayParams, RdiGatewayParams

NODE_RECORDS = {"hardware_node": HardwareNodeParams, "rci_gateway": RciGatewayParams,
                "rdi_gateway": RdiGatewayParams}
