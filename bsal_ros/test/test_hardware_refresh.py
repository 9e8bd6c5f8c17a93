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

"""A motor board's refresh() after a poll (latched-stop re-send or watchdog
keep-alive) leaves a failed write to the next poll: the board is marked down,
nothing is raised into the poll loop."""
from hardware_helpers import make_robot, run, run_until


def test_a_keepalive_that_fails_marks_the_board_down_and_raises_nothing():
    robot, clock = make_robot()
    board = robot.boards["drive"]
    run(robot, clock, 0.5)
    assert board.up and board.ok and board.command_timeout_ms
    robot.bus.simulation.control("set_fault", "drive", "missing")
    board.timeout_written = True      # the keep-alive path, not the timeout write
    board.refresh()                   # the write fails: BoardError, caught
    assert not board.up
    robot.bus.simulation.control("clear_faults", "drive")
    assert run_until(robot, clock, lambda: board.up, limit=5.0)
