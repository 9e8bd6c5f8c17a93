"""Test configuration shared by the whole suite.

Every test process keeps DDS discovery on loopback and runs in its own ROS
domain; tests that start nodes get a private rclpy Context from `ros_context`.
"""
import os
import random

# Before anything imports rclpy: the RMW reads these when a context starts.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))

import pytest  # noqa: E402


@pytest.fixture
def ros_context():
    """A fresh, initialised rclpy Context, shut down after the test."""
    import rclpy  # the project venv has it: run tests through `make test`
    import rclpy.context
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        if context.ok():
            rclpy.shutdown(context=context)
