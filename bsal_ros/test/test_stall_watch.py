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
"""StallWatch (test/stall_watch.py), which the one-truth rounds run under:
it must see a thread that holds the GIL in a C call, name that call's
Python caller, and stay quiet while threads only wait."""

import ctypes
import time

from stall_watch import StallWatch

# PyDLL keeps the GIL during the call, as a C extension that blocks would
LIBC = ctypes.PyDLL(None)


def hold_the_gil_in_c(seconds: float) -> None:
    LIBC.usleep(int(seconds * 1e6))


def test_a_c_call_holding_the_gil_is_caught_with_its_caller(tmp_path):
    with StallWatch(tmp_path / "stacks", limit=0.4) as watch:
        time.sleep(0.3)
        hold_the_gil_in_c(1.0)
        time.sleep(0.3)
    assert len(watch.stalls) == 1, watch.report()
    assert watch.stalls[0][1] >= 0.9, watch.report()
    assert "hold_the_gil_in_c" in watch.stacks(), watch.report()
    assert "stalls over 0.4 s: [(" in watch.report()


def test_threads_that_wait_are_not_a_stall(tmp_path):
    with StallWatch(tmp_path / "stacks", limit=0.4) as watch:
        time.sleep(1.0)
    assert watch.stalls == [] and watch.stacks() == "", watch.report()
    assert "stalls over 0.4 s: none" in watch.report()
