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

"""Fault-campaign helpers: pure Python, no ROS; used by the campaign and the
tests only, so they live in test/ and are not installed with bsal_ros.

* :mod:`.corpus` - a seeded corpus of malformed RCI input built from the
  protocol library with mutations;
* :mod:`.stats` - p50/max summaries, per-process resource snapshots (psutil),
  leak checks;
* :mod:`.ca` - a control application run as its own OS process (so that the
  campaign can SIGKILL it): ``python -m faults.ca --port N --mode drive``
  (from test/).

The campaign itself is ``test/fault_campaign.py`` (``make faults``); its
results are in docs/FAULTS.md.
"""
