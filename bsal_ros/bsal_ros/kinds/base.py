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
"""The base classes of a board type and a device kind (python-can's
``BusABC`` style): what every declaration must give is an abstract method,
so a class that leaves one out cannot be instantiated, and Python's
``TypeError`` names the method. Its data (names, fields, wire codes) are
required keyword arguments of the frozen dataclass. No ROS, no hardware
imports here: hardware classes are named ``"module:Class"`` or given as classes.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass
import enum
from typing import Any, Callable, ClassVar, Mapping, NamedTuple

from .convert import check_rates, scale_poll_rates
from ..core.device_state import DeviceState
from ..core.params import ParamRecord
from ..protocol._items import Layout


STATE_FIELDS = frozenset(f.name for f in dataclasses.fields(DeviceState))


class KindError(LookupError):
    """An unknown board type or device kind, or a declaration that is not whole."""


@dataclass(frozen=True, kw_only=True)
class BoardType(abc.ABC):
    """One board type of the robot description (``boards.<name>.type``)."""

    name: str
    board: str | type           # "module:Class", a hardware.boards.Board subclass
    sim_board: str | type       # "module:Class" of the virtual board (sim backend)
    carries: tuple[str, ...]    # device kinds a board of this type may carry
    motor: bool                 # drives a motor: command watchdog, stall faults

    #: the keys its board entries may carry beyond the common ones: a
    #: ParamRecord (name, type, default, range, meaning of each); None: none
    keys: ClassVar[type[ParamRecord] | None] = None
    #: the hardware node parameters it brings: a ParamRecord (``dynamic``
    #: included); None: none
    params: ClassVar[type[ParamRecord] | None] = None

    @abc.abstractmethod
    def validate(self, name: str, entry: dict) -> None:
        """Check board ``name``'s description ``entry``.

        :raises ValueError: naming what is wrong (the description is refused).
        """

    @abc.abstractmethod
    def scale_rates(self, entry: dict, rate_scale: float, all_boards_hz: float) -> None:
        """Apply the hardware node's ``rate_scale`` / ``all_boards_hz`` to
        ``entry`` (a copy of the board's description entry), in place."""


class PolledBoardType(BoardType):
    """A board polled at ``poll_hz`` with its own data at ``update_hz``."""

    def validate(self, name: str, entry: dict) -> None:
        """``update_hz`` and ``poll_hz`` > 0; :raises ValueError: otherwise."""
        check_rates(name, entry)

    def scale_rates(self, entry: dict, rate_scale: float, all_boards_hz: float) -> None:
        """Both rates fixed by ``all_boards_hz`` > 0, else multiplied by ``rate_scale``."""
        scale_poll_rates(entry, rate_scale, all_boards_hz)


@dataclass(frozen=True, kw_only=True)
class RciSensor:
    """A kind's RCI sensor sub-code and the DATA item of CGtSnRp: ``fields``
    are (DeviceState field, wire conversion) in item order."""

    sub: int
    layout: Layout
    fields: tuple[tuple[str, Callable[[Any], Any]], ...]


@dataclass(frozen=True, kw_only=True)
class RdiItem:
    """A kind's RDI packet (``code``: RdiCode.Sn), sub-code and item layout
    (the reading itself: :meth:`DeviceKind.rdi_reading`)."""

    code: int
    sub: int
    layout: Layout


@dataclass(frozen=True, kw_only=True)
class RosTopic:
    """A kind's own ROS topic (the hardware node publishes it while the
    device is on; the message: :meth:`DeviceKind.fill`). ``name`` is relative;
    with fields of the device (``"sonar_{id:02d}"``) each device has its own
    topic, whose ``_link`` is the device's default frame, else the kind
    shares one. ``msg`` is the message type as ``"package.msg:Class"``
    (resolved by the node: no ROS import here), ``qos`` one of :data:`TOPIC_QOS`."""

    name: str
    msg: str
    qos: str


#: a RosTopic's QoS names: sensor data (best effort) or reliable, depth 10
TOPIC_QOS = ("sensor", "reliable")


class Level(enum.IntEnum):
    """A device's ``/diagnostics`` level, ROS-free: the values of
    diagnostic_msgs/DiagnosticStatus, which the hardware node gives it."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


class Health(NamedTuple):
    """A kind's word on one device (:meth:`DeviceKind.health`): its level and
    the message that says why, with the values (``"pack 13.10 V below ..."``)."""

    level: Level
    message: str


@dataclass(frozen=True, kw_only=True)
class HealthContext:
    """What :meth:`DeviceKind.health` reads besides the device's state."""

    #: the hardware node's parameters by name, the package's and every kind's,
    #: as they are at this update (a ``ros2 param set`` shows at the next one);
    #: a robot without a node: the declared defaults
    params: Mapping[str, Any]
    #: the robot description (the ``robot`` section as validated, rates scaled)
    desc: Mapping[str, Any]
    #: why the node stopped this motor when its command lease ran out ("": it did not)
    lease_stopped: str = ""
    #: why cmd_vel holds the drive wheel ("": it does not)
    drive_held: str = ""


@dataclass(frozen=True, kw_only=True)
class DeviceKind(abc.ABC):
    """One device kind (a BSAL device class, ``DeviceState.device_class``).

    Subclass :class:`SensorKind` or :class:`MotorKind`; every abstract method
    is what the kind must give.
    """

    #: a motor kind (:class:`MotorKind`): answers CGtMt, sent by rdi.state's motor code
    motor: ClassVar[bool] = False
    #: the keys its device entries may carry beyond the common ones (a ParamRecord); None: none
    keys: ClassVar[type[ParamRecord] | None] = None
    #: the hardware node parameters it brings (a ParamRecord); None: none
    params: ClassVar[type[ParamRecord] | None] = None

    name: str
    device: str | type             # "module:Class", a hardware.devices.Device subclass
    fields: tuple[str, ...]        # DeviceState fields this kind fills
    extra_fields: tuple[str, ...]  # its own values beyond DeviceState (state.extra)
    data_fields: tuple[str, ...]   # what a DATA answer tells a control application
    status_fields: tuple[str, ...]  # what a STATUS answer tells it
    rci: RciSensor | None          # None: not an RCI sensor (motors answer CGtMt)
    rdi: RdiItem | None            # None: sent by rdi.state's motor code
    diagnostics_group: str         # its tree in the diagnostics aggregator ("Sonars")
    topic: RosTopic | None         # None: published only on device_states (and its board's)
    viewer_label: str | None       # its status row in the display client (None: not shown)

    @abc.abstractmethod
    def diagnostics(self, state: DeviceState) -> dict:
        """Its own ``/diagnostics`` values of ``state``: key -> value."""

    def health(self, state: DeviceState, ctx: HealthContext) -> Health | None:
        """Its own level and message of ``state`` (None: nothing of its own to
        say, the device is "ok", or "off"). Asked at each ``/diagnostics``
        update, and only when the board is up, its data ok and not stale (the
        bridge says ERROR and STALE first); a board's own warnings (a refused
        command, data slower than polled) come after a WARN or worse of the
        kind's, and before its OK, whose message then stands in for "ok"."""
        return None

    @abc.abstractmethod
    def rdi_reading(self, state: DeviceState) -> tuple:
        """The RDI item of ``state`` (an instance of ``rdi.layout``'s class).

        :raises KindError: a kind that has no RDI item of its own.
        """

    @abc.abstractmethod
    def fill(self, msg, state: DeviceState, ctx) -> None:
        """Fill ``msg`` (of ``topic.msg``) from ``state``; ``ctx`` gives
        ``frame`` (the device's frame id), ``stamp`` (when it was read),
        ``desc`` (the robot description) and ``params`` (the hardware node's
        parameters, read at each call). Called on the hardware node's poll thread.

        :raises KindError: a kind that has no topic.
        """

    @abc.abstractmethod
    def viewer_text(self, reading: tuple) -> str:
        """One RDI ``reading`` as text (the display client's ``--dump``)."""

    @abc.abstractmethod
    def viewer_line(self, index: int, reading: tuple) -> str | None:
        """The side-panel line of device ``index``'s ``reading`` (None: the
        display client draws it instead)."""

    def rci_item(self, state: DeviceState):
        """The CGtSnRp DATA item of ``state``.

        :raises KindError: a kind without an RCI sensor code.
        """
        if self.rci is None:
            raise KindError(f"device kind {self.name!r} has no RCI sensor item")
        return self.rci.layout.cls(*(conv(value_of(state, f)) for f, conv in self.rci.fields))

    def rci_as_sent(self, state: DeviceState, item) -> DeviceState:
        """``state`` with the values of its DATA ``item`` as the wire carried
        them (the same object when nothing differs)."""
        changed = {f: v for (f, _), v in zip(self.rci.fields, item) if value_of(state, f) != v}
        return with_values(state, changed) if changed else state

    def _absent(self, what: str):
        raise KindError(f"device kind {self.name!r} has no {what}")


class SensorKind(DeviceKind):
    """A sensor kind: an RCI sensor item, an RDI reading, a viewer text."""


class NoTopic:
    """Mixin of a kind published only on ``device_states`` (no topic of its own)."""

    def fill(self, msg, state, ctx) -> None:
        """:raises KindError: always (the kind has no topic)."""
        self._absent("topic")


class MotorKind(NoTopic, DeviceKind):
    """A motor kind: answers CGtMt and is sent by rdi.state's motor code, so
    it has no RCI sensor item, RDI item, topic or viewer line of its own."""

    motor = True

    def health(self, state: DeviceState, ctx: HealthContext) -> Health | None:
        """WARN while it is stalled, while a latched stop is not yet confirmed
        or its board's command watchdog stopped it, and once the node stopped
        it because its command lease ran out (until its next command)."""
        if state.stalled:
            return Health(Level.WARN, "motor stalled")
        if state.stop_pending or state.watchdog_stopped:
            return Health(Level.WARN, state.fault)
        if ctx.lease_stopped:
            return Health(Level.WARN, ctx.lease_stopped)
        return None

    def rdi_reading(self, state: DeviceState) -> tuple:
        """:raises KindError: always (rdi.state's motor code sends motors)."""
        self._absent("RDI item (rdi.state's motor code sends it)")

    def viewer_text(self, reading: tuple) -> str:
        """:raises KindError: always (the viewer's motor rows show motors)."""
        self._absent("viewer text")

    def viewer_line(self, index: int, reading: tuple) -> str | None:
        """None: the viewer's motor rows show motors."""
        return None


def value_of(state: DeviceState, name: str):
    """A state field, or a kind's extra value (0 when never set)."""
    if name in STATE_FIELDS:
        return getattr(state, name)
    return state.extra.get(name, 0)


def with_values(state: DeviceState, values: dict) -> DeviceState:
    """A copy of ``state`` with some fields or extra values replaced."""
    plain = {k: v for k, v in values.items() if k in STATE_FIELDS}
    extra = {k: v for k, v in values.items() if k not in STATE_FIELDS}
    if extra:
        plain["extra"] = {**state.extra, **extra}
    return dataclasses.replace(state, **plain)
