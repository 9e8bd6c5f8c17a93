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

"""Bus backends by name (python-can style): a table of name -> factory.

A factory takes the robot description and the options below and returns an
object with the :class:`~.bus.I2CBus` methods. The ``sim`` backend's bus also
carries ``bus.simulation`` (:class:`~.simulation.SimControls`); a real bus has
none, so nothing above the bus needs to know which backend it runs on. The
``ros_base`` backend's bus (:mod:`.base_world`: Brak's devices served by a
ROS 2 base) carries ``bus.base``, what the ROS side feeds and reads, and
``bus.device_fault``, a device's own readiness.

    register_backend("my_adapter", lambda robot, **opts: MyBus(...))
"""

from __future__ import annotations

from dataclasses import dataclass
import time
from typing import Callable

from .bus import Smbus2Bus


@dataclass
class BusOptions:
    """What a backend factory may use; each backend takes what it needs."""

    clock: Callable[[], float] = time.monotonic
    seed: int | None = None              # sim: world and fault RNG seed
    i2c_bus: int = 1                     # smbus2: N of /dev/i2c-N
    smbus_factory: Callable | None = None  # smbus2: opener of the device (tests fake it)
    base_profile: str = ""               # ros_base: the profile file (base_profile.py)


def _sim(robot: dict, opts: BusOptions):
    from .sim import build_sim_bus  # the simulator is only imported when used
    return build_sim_bus(robot, opts.clock, seed=opts.seed)


def _ros_base(robot: dict, opts: BusOptions):
    from .base_profile import load_profile, ProfileError
    from .base_world import build_base_bus
    if not opts.base_profile:
        raise ProfileError("bus_backend ros_base needs base_profile (a profile file, or the "
                           "name of a shipped one)")
    return build_base_bus(robot, opts.clock, load_profile(opts.base_profile, robot))


def _smbus2(robot: dict, opts: BusOptions):
    return Smbus2Bus(int(opts.i2c_bus), smbus_factory=opts.smbus_factory, clock=opts.clock)


BACKENDS: dict[str, Callable[[dict, BusOptions], object]] = {"sim": _sim, "smbus2": _smbus2,
                                                             "ros_base": _ros_base}


def register_backend(name: str, factory: Callable[[dict, BusOptions], object]) -> None:
    """Add (or replace) a backend: ``factory(robot_description, BusOptions) -> bus``."""
    BACKENDS[name] = factory


def open_bus(name: str, robot: dict, opts: BusOptions | None = None):
    """The bus of backend ``name``; ValueError names the known backends."""
    factory = BACKENDS.get(name)
    if factory is None:
        raise ValueError(f"unknown bus backend {name!r} ({' or '.join(sorted(BACKENDS))})")
    return factory(robot, opts or BusOptions())
