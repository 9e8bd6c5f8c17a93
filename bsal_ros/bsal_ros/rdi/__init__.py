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

"""RDI stream logic (pure Python, no ROS): per-stream robot state and frame
building (:mod:`.state`), bounded per-client queues and the fan-out policy
(:mod:`.fanout`), asyncio TCP streams and the two-stream gateway core
(:mod:`.server`). The ROS side is :mod:`bsal_ros.nodes.rdi_gateway`."""

from .fanout import ClientQueue, FanOut, Frame
from .server import RdiGateway, RdiStreamServer, StreamConfig
from .state import id_packets, StreamState

__all__ = ["ClientQueue", "FanOut", "Frame", "RdiGateway", "RdiStreamServer", "StreamConfig",
           "StreamState", "id_packets"]
