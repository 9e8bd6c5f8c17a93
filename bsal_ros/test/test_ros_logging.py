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

"""The pure layers' Python log lines reach the right node's ROS logger."""
import pytest
import rclpy

from bsal_ros.nodes.ros_logging import python_logger_for

pytestmark = pytest.mark.ros


class Recorder:

    def __init__(self):
        self.lines = []

    def __getattr__(self, level):
        return lambda msg: self.lines.append((level, msg))


def test_one_logger_per_node_with_levels_and_tracebacks(ros_context, monkeypatch):
    a = rclpy.create_node("gw", namespace="robot_a", context=ros_context)
    b = rclpy.create_node("gw", namespace="robot_b", context=ros_context)
    rec_a, rec_b = Recorder(), Recorder()
    monkeypatch.setattr(a, "get_logger", lambda: rec_a)
    monkeypatch.setattr(b, "get_logger", lambda: rec_b)
    log_a = python_logger_for(a, "bsal_ros.test")
    log_b = python_logger_for(b, "bsal_ros.test")
    assert log_a is not log_b

    log_a.warning("board %s down", "drive")
    log_b.info("hello")
    log_b.debug("not shown at INFO")
    try:
        raise ValueError("boom")
    except ValueError:
        log_a.exception("internal error")

    assert rec_a.lines[0] == ("warning", "board drive down")
    level, text = rec_a.lines[1]
    assert level == "error" and "internal error" in text and "ValueError: boom" in text
    assert rec_b.lines == [("info", "hello")]

    # A node created again under the same name takes the logger over.
    rec_c = Recorder()
    c = rclpy.create_node("gw", namespace="robot_a", context=ros_context)
    monkeypatch.setattr(c, "get_logger", lambda: rec_c)
    assert python_logger_for(c, "bsal_ros.test") is log_a
    log_a.info("now c")
    assert rec_c.lines == [("info", "now c")] and len(rec_a.lines) == 2
    for n in (a, b, c):
        n.destroy_node()
