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

"""foxglove-sdk's own log lines, once per kind and client address.

The SDK's server logs through Python's ``logging`` (loggers under
``foxglove``): one ERROR line for every malformed frame, unknown operation or
unknown channel a client sends, and for every client that drops its
connection. Left to Python's last-resort handler, a client that sends a
thousand bad frames writes a thousand lines into the bridge's log. Here each
kind of line (its text up to the first ``": "``, the client's port left out)
is passed on once per ``window_s``; the repeats are counted and the count
goes with the next line of that kind after the window. Besides the warnings,
the SDK's one line for a client that does not read (``outbox for client ...
full``, INFO, said at most every 30 s by the SDK) is passed on.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Callable

#: the loggers the SDK's records come from (pyo3-log names them after the Rust modules)
SDK_LOGGER = "foxglove"
#: the SDK's loggers that say something about clients and files, made before
#: the SDK first logs (see :func:`attach`)
SDK_LOGGERS = ("foxglove.websocket", "foxglove.websocket.server",
               "foxglove.websocket.connected_client",
               "foxglove.websocket.connected_client.send_lossy",
               "foxglove.websocket.connected_client.poller", "foxglove.websocket.advertise",
               "foxglove.mcap_writer", "foxglove.channel.raw_channel", "foxglove.context",
               "foxglove.log_sink_set", "foxglove.runtime")
#: the SDK's INFO line for a client whose queue is full: it is the slow client's only line
SLOW_CLIENT = "outbox for client"
_PORT = re.compile(r"(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]):\d+")


def kind_of(message: str) -> str:
    """What a line is about, the same for every repeat: the client's address
    without its port, the details after the first ``": "`` left out."""
    return _PORT.sub(r"\1", message).split(": ", 1)[0]


class OnceHandler(logging.Handler):
    """A logging handler that passes each kind of SDK line to ``sink`` once per window."""

    def __init__(self, sink: Callable[[str], None], window_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__(logging.INFO)
        self.sink = sink
        self.window_s = window_s
        self.clock = clock
        self._lock = threading.Lock()
        self._said: dict[str, tuple[float, int]] = {}     # kind -> (when said, repeats since)

    def emit(self, record: logging.LogRecord) -> None:
        """Pass the record on, or count it as a repeat."""
        message = record.getMessage()
        if record.levelno < logging.WARNING and not message.startswith(SLOW_CLIENT):
            return
        kind = kind_of(message)
        now = self.clock()
        with self._lock:
            when, repeats = self._said.get(kind, (None, 0))
            if when is not None and now - when < self.window_s:
                self._said[kind] = (when, repeats + 1)
                return
            self._said[kind] = (now, 0)
            if len(self._said) > 1000:      # clients that come and go: forget the oldest kinds
                for old in sorted(self._said, key=lambda k: self._said[k][0])[:500]:
                    del self._said[old]
        note = (f" ({repeats} more like it in the last {self.window_s:g} s)" if repeats
                else f" (repeats not logged for {self.window_s:g} s)")
        try:
            self.sink(f"foxglove-sdk: {message}{note}")
        except Exception:   # noqa: BLE001 - a log line never breaks the SDK's thread
            self.handleError(record)


def attach(sink: Callable[[str], None], window_s: float = 60.0) -> OnceHandler:
    """Route the SDK's lines to ``sink`` (and no longer to Python's last-resort
    handler) until :func:`detach`. Call it before the server starts: the SDK
    remembers each logger's level when it first logs through it.

    The handler sits on the ``foxglove`` logger, so the SDK's loggers below it
    must pass their records up. In a process that imported ``launch``, every
    logger made afterwards does not (launch's logger class sets ``propagate``
    off): the SDK's loggers are made here, and any made before set to pass
    records up.
    """
    handler = OnceHandler(sink, window_s)
    logger = logging.getLogger(SDK_LOGGER)
    for name in SDK_LOGGERS:
        logging.getLogger(name)
    for name, child in list(logging.Logger.manager.loggerDict.items()):
        if name.startswith(SDK_LOGGER + ".") and isinstance(child, logging.Logger):
            child.propagate = True
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return handler


def detach(handler: OnceHandler) -> None:
    """Stop routing to ``handler``; with no handler left the SDK's lines go where
    Python's logging sends them by default again."""
    logger = logging.getLogger(SDK_LOGGER)
    logger.removeHandler(handler)
    if not logger.handlers:
        logger.propagate = True
        logger.setLevel(logging.NOTSET)
