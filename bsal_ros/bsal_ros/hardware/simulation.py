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

"""The simulator's own controls: what only a simulated robot has.

The ``sim`` backend's bus carries a :class:`SimControls` as ``bus.simulation``
(a real bus has none): the world it simulates, fault injection per board, the
commands of the ``sim_control`` service and the ground truth. Nothing here is
reached through :class:`~.robot.Robot`; the node asks the bus.
"""

from __future__ import annotations

from ..core.result import BAD_REQUEST, INVALID_ID, NOT_SUPPORTED, OK, Result
from ..kinds import board_type


def _is_motor(board: dict) -> bool:
    """The board drives a motor (its board type says so, bsal_ros/kinds)."""
    return board_type(board["type"]).motor


def simulation_of(bus) -> "SimControls | None":
    """The sim-only controls of a bus, or None for a real bus."""
    return getattr(bus, "simulation", None)


def not_simulated(backend: str) -> Result:
    """The answer of ``sim_control`` on a bus that is not simulated."""
    return Result(NOT_SUPPORTED, f"sim_control needs the sim backend (bus is {backend})")


def _stall_key(board_type: str) -> str:
    return "drive" if board_type == "dc_motor" else "steering"


class SimControls:
    """Edit the simulated world and inject bus faults (the ``sim_control`` commands).

    World edits hold the bus's lock, so a board transaction never sees half
    an edit; ``boards`` maps a board name to its description entry."""

    def __init__(self, bus, world, boards: dict[str, dict]):
        self.bus = bus
        self.world = world
        self.boards = boards

    def ground_truth(self) -> tuple[float, float, float]:
        """The true pose (x, y, yaw) of the simulated robot, brought up to now."""
        with self.bus.lock:
            self.world.sync()
            return self.world.pose()

    def last_pose_and_twist(self):
        """((x, y, yaw), (vx, wz)) at the last simulated step (the world is not advanced)."""
        with self.bus.lock:
            return self.world.pose(), self.world.twist()

    def control(self, command: str, target: str = "", fault: str = "",
                values=()) -> Result:
        """One ``sim_control`` command: teleport, add_obstacle, remove_obstacle,
        set_fault, clear_faults. Bad input is a BAD_REQUEST or INVALID_ID."""
        values = [float(v) for v in values]
        with self.bus.lock:
            if command == "teleport":
                return self._teleport(values)
            if command == "add_obstacle":
                if not target:
                    return Result(BAD_REQUEST, "add_obstacle needs a target name")
                try:
                    self.world.add_obstacle(target, values)
                except ValueError as e:
                    return Result(BAD_REQUEST, str(e))
                return Result(OK, f"obstacle {target} added")
            if command == "remove_obstacle":
                if not self.world.remove_obstacle(target):
                    return Result(INVALID_ID, f"no obstacle named {target!r}")
                return Result(OK, f"obstacle {target} removed")
            if command in ("set_fault", "clear_faults"):
                if target and target not in self.boards:
                    return Result(INVALID_ID, f"no board named {target!r} "
                                              f"(boards: {', '.join(self.boards)})")
                if command == "clear_faults":
                    return self._clear_faults(target)
                return self._set_fault(target, fault, values)
            return Result(BAD_REQUEST, f"unknown sim command {command!r}")

    def _teleport(self, values: list[float]) -> Result:
        if len(values) != 3:
            return Result(BAD_REQUEST, "teleport needs values [x, y, yaw]")
        self.world.sync()
        self.world.teleport(*values)
        return Result(OK, f"teleported to ({values[0]:.3f}, {values[1]:.3f}, {values[2]:.3f})")

    def _clear_faults(self, target: str) -> Result:
        names = [target] if target else list(self.boards)
        for n in names:
            b = self.boards[n]
            self.bus.clear_faults(int(b["address"]))
            if _is_motor(b):
                self.world.stall[_stall_key(b["type"])] = False
        return Result(OK, f"faults cleared on {', '.join(names)}")

    def _set_fault(self, target: str, fault: str, values: list[float]) -> Result:
        if not target:
            return Result(BAD_REQUEST, "set_fault needs a target board")
        b = self.boards[target]
        if fault == "stall":
            if not _is_motor(b):
                return Result(BAD_REQUEST, f"stall needs a motor board, {target} is {b['type']}")
            self.world.sync()
            self.world.stall[_stall_key(b["type"])] = True
            return Result(OK, f"{target}: motor stalled")
        if fault == "error_rate":
            if len(values) != 1 or not 0.0 <= values[0] <= 1.0:
                return Result(BAD_REQUEST, "error_rate needs values [rate] with 0 <= rate <= 1")
            self.bus.set_fault(int(b["address"]), "error_rate", values[0])
            return Result(OK, f"{target}: error rate {values[0]:.3f}")
        if fault in ("stuck", "missing"):
            self.bus.set_fault(int(b["address"]), fault)
            return Result(OK, f"{target}: {fault}")
        return Result(BAD_REQUEST, f"unknown fault {fault!r} (error_rate, stuck, missing, stall)")
