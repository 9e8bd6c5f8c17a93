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

"""Benchmarks, run from a source checkout (not installed): programs that print
figures next to a floor measured in the same run (docs/BENCHMARKS.md).

A package so that a benchmark's helpers (:mod:`bench.rci_latency`) and
test/test_bench_rci.py can import it. The pass/fail system tests (the fault
campaign, the two-host rig, the peer kills) and the helpers they share with the
benchmarks live in bsal_ros/test/.
"""
