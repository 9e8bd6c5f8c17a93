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

"""foxglove-sdk's log lines once per kind and client address (bsal_ros/foxglove/sdk_log.py).

No ROS and no server: records as the SDK's loggers make them, a fake clock.
The running bridge's side is in test_foxglove_bad_input.py.
"""

import logging

from bsal_ros.foxglove import sdk_log


class Clock:
    """A clock the test moves."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def record(message: str, level: int = logging.ERROR,
           name: str = "foxglove.websocket.connected_client") -> logging.LogRecord:
    """A log record as pyo3-log hands the SDK's lines to Python."""
    return logging.LogRecord(name, level, __file__, 1, message, None, None)


def handler_and_lines(window_s=60.0):
    lines, clock = [], Clock()
    return sdk_log.OnceHandler(lines.append, window_s, clock), lines, clock


def test_a_kind_of_line_is_its_text_up_to_the_details_without_the_client_port():
    assert sdk_log.kind_of("Invalid message from 127.0.0.1:59558: key must be a string at "
                           "line 1 column 2") == "Invalid message from 127.0.0.1"
    assert sdk_log.kind_of("Client 127.0.0.1:35204 attempted to subscribe to unknown "
                           "channel: 39") == ("Client 127.0.0.1 attempted to subscribe to "
                                              "unknown channel")
    assert sdk_log.kind_of("outbox for client [::1]:4242 full") == "outbox for client [::1] full"
    assert sdk_log.kind_of("Invalid message from 10.0.0.2:1: x") != sdk_log.kind_of(
        "Invalid message from 10.0.0.3:1: x")


def test_a_thousand_bad_frames_from_one_address_are_one_line_then_a_count():
    handler, lines, clock = handler_and_lines()
    for port in range(40000, 41000):
        handler.handle(record(f"Invalid message from 127.0.0.1:{port}: key must be a string"))
    assert lines == ["foxglove-sdk: Invalid message from 127.0.0.1:40000: key must be a "
                     "string (repeats not logged for 60 s)"]
    clock.now += 59.0
    handler.handle(record("Invalid message from 127.0.0.1:5: unknown variant `x`"))
    assert len(lines) == 1
    clock.now += 1.0
    handler.handle(record("Invalid message from 127.0.0.1:6: unknown variant `y`"))
    assert lines[1] == ("foxglove-sdk: Invalid message from 127.0.0.1:6: unknown variant `y` "
                        "(1000 more like it in the last 60 s)")


def test_other_kinds_and_other_addresses_have_lines_of_their_own():
    handler, lines, _ = handler_and_lines()
    handler.handle(record("Invalid message from 127.0.0.1:1: a"))
    handler.handle(record("Invalid message from 127.0.0.2:1: a"))
    handler.handle(record("Client 127.0.0.1:1 attempted to subscribe to unknown channel: 9"))
    handler.handle(record("Error receiving from client 127.0.0.1:2: IO error", logging.WARNING))
    assert len(lines) == 4


def test_info_lines_are_left_out_but_the_slow_clients_one():
    handler, lines, _ = handler_and_lines()
    handler.handle(record("Registered client 127.0.0.1:1", logging.INFO,
                          "foxglove.websocket.server"))
    handler.handle(record("outbox for client 127.0.0.1:1 full", logging.INFO,
                          "foxglove.websocket.connected_client.send_lossy"))
    assert lines == ["foxglove-sdk: outbox for client 127.0.0.1:1 full "
                     "(repeats not logged for 60 s)"]


def test_attach_routes_the_sdk_loggers_and_detach_gives_them_back():
    lines = []
    handler = sdk_log.attach(lines.append)
    try:
        sdk = logging.getLogger("foxglove.websocket.connected_client")
        sdk.error("Invalid message from 127.0.0.1:1: a")
        sdk.error("Invalid message from 127.0.0.1:2: b")
        assert lines == ["foxglove-sdk: Invalid message from 127.0.0.1:1: a "
                         "(repeats not logged for 60 s)"]
        assert not logging.getLogger(sdk_log.SDK_LOGGER).propagate
    finally:
        sdk_log.detach(handler)
    assert logging.getLogger(sdk_log.SDK_LOGGER).propagate
    assert handler not in logging.getLogger(sdk_log.SDK_LOGGER).handlers


def test_attach_reaches_the_sdk_loggers_in_a_process_that_imported_launch():
    # launch's logger class turns propagate off for every logger made after it
    # is imported (CI, random order: a launch test ran first, the line went to stderr)
    class NoPropagate(logging.Logger):

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.propagate = False

    before = logging.getLoggerClass()
    manager = logging.Logger.manager
    made = [n for n in sdk_log.SDK_LOGGERS if n not in manager.loggerDict]
    logging.setLoggerClass(NoPropagate)
    try:
        early = logging.getLogger("foxglove.websocket.test_made_before_attach")
        for name in made:
            logging.getLogger(name)
        lines = []
        handler = sdk_log.attach(lines.append)
        try:
            early.error("Invalid message from 127.0.0.1:1: early")
            logging.getLogger("foxglove.websocket.connected_client").error(
                "Client 127.0.0.1:2 attempted to subscribe to unknown channel: 7")
        finally:
            sdk_log.detach(handler)
        assert [line.split(" (")[0] for line in lines] == [
            "foxglove-sdk: Invalid message from 127.0.0.1:1: early",
            "foxglove-sdk: Client 127.0.0.1:2 attempted to subscribe to unknown channel: 7"]
    finally:
        logging.setLoggerClass(before)
        del manager.loggerDict["foxglove.websocket.test_made_before_attach"]
        for name in made:       # made here with the test's class: as attach leaves them
            logging.getLogger(name).propagate = True
