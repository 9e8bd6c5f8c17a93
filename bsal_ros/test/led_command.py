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

"""The worked example of docs/EXTENDING.md "A new RCI command": Set LED
(RCI-CStLd), a command that is not Brak's, in one module.

Code 0x0220 (in the RCI_MULTI range, so it may be poly or group; table 4.8.1
of the book leaves it free), sub-code 0xe0 (an RGB LED), item data
``LedColor(red, green, blue)``, one guint8 each. It changes the robot
(``writes``: a guest is refused) and a status inquiry reports it
(``tracked``). The session runs it with the generic forwarding handler
(``bsal_ros.rci.handlers.forward``, registered for its code), which hands
``(sub_code, items)`` to the port method ``set_leds``; here that
is :class:`LedRobotPort`, the tests' fake robot with two LEDs. In the
package, ``set_leds`` would be a method of ``RobotPort`` (a default) and of
``RosRobotPort`` (calling the hardware node's service).

Nothing is registered at import: :func:`register` and :func:`unregister`
(a fixture calls them), so the rest of the suite sees Brak's commands only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from bsal_ros.core.result import Result, SUCCESS
from bsal_ros.protocol._items import Layout
from bsal_ros.protocol.rci_packets import IdPacket
from bsal_ros.protocol.rci_registry import (RciCommandSpec, register_command, TO_SERVER,
                                            unregister_command, Wire)
from bsal_ros.rci.fake import FakeRobotPort
from bsal_ros.rci.handlers import forward, register_handler, unregister_handler

LED_CODE = 0x0220
LED_RGB = 0xE0


class LedColor(NamedTuple):
    """CStLd item data: the LED's colour, 0..255 per channel."""

    red: int
    green: int
    blue: int


@dataclass(slots=True)
class CStLd(IdPacket):
    """Set LED (0x0220). Item data: :class:`LedColor`."""


SPEC = RciCommandSpec(
    code=LED_CODE, name="CStLd", title="Set LED",
    direction=TO_SERVER, packet=CStLd, sub_codes={LED_RGB: LED_RGB},
    wire=Wire("items", Layout("BBB", "named", LedColor)),
    writes=True, tracked=True,
    port_methods=("set_leds",), unsupported=None)


class LedRobotPort(FakeRobotPort):
    """The fake robot with two RGB LEDs (ids 0 and 1)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.leds = {0: LedColor(0, 0, 0), 1: LedColor(0, 0, 0)}

    async def set_leds(self, sub_code: int, items) -> Result:
        """Set LED colours; all or nothing (INVALID_ID for an unknown id)."""
        self._check()
        self.calls.append(("set_leds", sub_code, list(items)))
        if any(i not in self.leds for i, _ in items):
            return Result(Result.INVALID_ID, "no such LED")
        for i, color in items:
            self.leds[i] = color
        return SUCCESS


def register() -> None:
    """Make Set LED a command of the codecs and the session."""
    register_command(SPEC)
    register_handler(LED_CODE, forward)


def unregister() -> None:
    """Forget it again."""
    unregister_handler(LED_CODE)
    unregister_command(LED_CODE)
