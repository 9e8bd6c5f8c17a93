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

"""Simulated Brak: the virtual boards that answer on a SimBus.

The world they sense and drive is :class:`~.sim_world.SimWorld`; the virtual
boards (:mod:`.sim_boards`: sonar ring and accelerometer, :mod:`.sim_motors`:
drive and steering) implement the register maps of :mod:`.registers`; the board and
device objects of the hardware layer talk to them through
:class:`~.bus.SimBus` exactly as they talk to real boards through smbus2.
:func:`build_sim_bus` is the ``sim`` backend: the bus it returns owns the
world, reached through ``bus.simulation`` (:mod:`.simulation`).
"""

from __future__ import annotations

from typing import Callable

from . import registers as regs
from .bus import SimBus
from .sim_world import SimWorld
from .simulation import SimControls
from ..kinds import board_type, resolve

# the virtual board of a board type is declared by its kind (bsal_ros/kinds);
# a class with a ``from_description`` classmethod is built from the whole
# description (the sonar ring needs its poses), any other as cls(world, board, regmap)


def build_sim_bus(robot: dict, clock: Callable[[], float], seed: int | None = None,
                  name: str = "sim") -> SimBus:
    """A SimBus with one virtual board per described board. The bus owns its
    world; ``bus.simulation`` (:class:`~.simulation.SimControls`) reaches it."""
    world = SimWorld(robot, seed=seed, clock=clock)
    bus = SimBus(name=name, seed=world.rng.randrange(1 << 30), before_access=world.sync)
    for name_, b in robot["boards"].items():
        rm = regs.RegisterMap.from_description(robot["register_maps"], b["type"])
        vcls = resolve(board_type(b["type"]).sim_board)
        if hasattr(vcls, "from_description"):
            vb = vcls.from_description(world, name_, b, rm, robot, bus)
        else:
            vb = vcls(world, b, rm)
        bus.attach(int(b["address"]), vb)
    bus.simulation = SimControls(bus, world, robot["boards"])
    return bus
