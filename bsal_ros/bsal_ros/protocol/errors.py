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

"""The one exception type of the protocol layer."""

from __future__ import annotations

__all__ = ["ProtocolError"]

#: at most this many offending bytes are kept in an error (bounded memory)
MAX_ERROR_BYTES = 64


class ProtocolError(ValueError):
    """Bad bytes on the wire (decoder) or a packet that cannot be encoded.

    Its attributes:

        offset: absolute byte offset in the stream (counting every byte ever fed
            to the decoder) where the offending packet starts, or ``None`` for
            encoder errors.
        data: the offending bytes (from the start of the bad packet up to and
            including the bad field, at most 64 bytes).
        packets: whole packets that were decoded by the same ``feed()`` call
            before the error (so nothing already received is lost).

    :param message: what is wrong, for people.
    :param offset: see above; ``None`` for encoder errors.
    :param data: the offending bytes (only the first 64 are kept).
    :param packets: see above.
    """

    def __init__(self, message: str, offset: int | None = None, data: bytes = b"",
                 packets: list | None = None):
        self.message = message
        self.offset = offset
        self.data = bytes(data[:MAX_ERROR_BYTES])
        self.packets = list(packets) if packets else []
        super().__init__(message)

    def __str__(self) -> str:
        if self.offset is None:
            return self.message
        return f"{self.message} (at byte {self.offset}: {self.data.hex(' ')})"
