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

"""The Foxglove side of the Foxglove gateway, without ROS: ``ros2msg`` schemas
read from the installed interface files (:mod:`.definitions`), what a client
may do (:mod:`.access`), which topics are the robot's and who watches each
(:mod:`.topics`), the files a client may fetch (:mod:`.assets`). The ROS side
is :mod:`bsal_ros.nodes.foxglove_gateway`; the WebSocket server is the
``foxglove-sdk`` package's.

brak_record's file (docs/RECORDING.md), also without ROS: the MCAP file
foxglove-sdk writes (:mod:`.recording`), what rosbag2 reads besides the
messages (:mod:`.rosbag2`), a legacy connection's packets as JSON
(:mod:`.wire_json`) and the proxies that tap them (:mod:`.wire_tap`). Its ROS
side is :mod:`bsal_ros.nodes.recorder` and :mod:`bsal_ros.nodes.record`."""
