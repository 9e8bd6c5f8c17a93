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

"""The outcome of every command: an ACK or a NACK with a reason (seed 004).

The codes are those of ``bsal_interfaces/Result``; the hardware layer returns
a :class:`Result`, the node copies it into the message, the RCI session maps
it onto RCI status codes. test/test_core.py checks the codes against the
generated message.
"""

from __future__ import annotations

from dataclasses import dataclass

OK = 0
INVALID_ID = 1          # an id names no device of that class: nothing changed
REFUSED = 2             # a protection refused the whole command: nothing changed
NOT_SUPPORTED = 3       # recognised, not implemented by this robot or backend
HARDWARE_FAULT = 4      # the board behind a device failed (errno in the message)
BUSY = 5                # another long operation owns the device (homing)
BAD_REQUEST = 6         # malformed request (unknown class, length mismatch, range)

CODE_NAMES = {OK: "OK", INVALID_ID: "INVALID_ID", REFUSED: "REFUSED",
              NOT_SUPPORTED: "NOT_SUPPORTED", HARDWARE_FAULT: "HARDWARE_FAULT",
              BUSY: "BUSY", BAD_REQUEST: "BAD_REQUEST"}


@dataclass(frozen=True, slots=True)
class Result:
    """A result code and, when it is not OK, the reason for a person."""

    OK = OK
    INVALID_ID = INVALID_ID
    REFUSED = REFUSED
    NOT_SUPPORTED = NOT_SUPPORTED
    HARDWARE_FAULT = HARDWARE_FAULT
    BUSY = BUSY
    BAD_REQUEST = BAD_REQUEST

    code: int = OK
    message: str = ""

    @property
    def ok(self) -> bool:
        """True for OK."""
        return self.code == OK

    def __str__(self) -> str:
        name = CODE_NAMES.get(self.code, str(self.code))
        return f"{name}: {self.message}" if self.message else name


SUCCESS = Result()
