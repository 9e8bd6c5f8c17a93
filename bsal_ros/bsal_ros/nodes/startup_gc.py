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

"""The garbage collector after start-up: what start-up made is frozen once (no ROS)."""

import gc


def freeze_startup_objects() -> None:
    """Collect once, then move every object start-up made to the collector's
    permanent generation, so that a collection of the oldest generation scans
    only what came since. It holds the GIL, which stalls every thread of the
    process: in the whole bridge a full collection of its 60,000 start-up
    objects took 60-70 ms idle, 0.1-0.2 ms once they were frozen (cc35: one
    RCI answer in 27,142 took 115 ms, and the drive board's polls paused as
    long)."""
    gc.collect()
    gc.freeze()
