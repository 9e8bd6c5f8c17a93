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
"""Two hosts on one machine: the robot and the lab PC as network namespaces
joined by a veth pair (issue 22). Used by test/test_two_hosts.py, test/test_peer_kills.py,
bench/bench_two_hosts.py and bench/bench_peer_kills.py; not installed with bsal_ros.

* :mod:`.netns` - make and delete the namespaces, the link, loss, rate, cuts;
* :mod:`.agent` - a ROS + RCI + RDI probe process run inside one namespace,
  driven by one JSON line per request on stdin.
"""
