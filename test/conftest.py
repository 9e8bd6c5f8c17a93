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


# --- hardware node fixtures
# One simulated hardware node and a probe node in a private context, per test
# module. The module says what it needs through module attributes:
#   NS       - the node"s namespace (own per module: modules share a ROS domain)
#   NODE_KW  - keyword overrides of the HardwareNode (default: fast, no auto-home)
#   LISTEN   - (message type, topic, listen() keywords) the probe records
HARDWARE_NODE_KW = dict(auto_home=False, rate_scale=2.0, diagnostics_period=0.2)


@pytest.fixture(scope="module")
def hardware_node_env(request):
    """A RosEnv with ``.node`` (HardwareNode) and ``.probe`` (Probe) in ``NS``."""
    from bsal_ros.nodes.hardware_node import HardwareNode
    from test_hardware_node_helpers import Probe, RosEnv
    module = request.module
    ns = module.NS
    env = RosEnv()
    try:
        env.node = env.add(HardwareNode(namespace=ns, context=env.context,
                                        **getattr(module, "NODE_KW", HARDWARE_NODE_KW)))
        env.probe = env.add(Probe(env, namespace=ns))
        for msg_type, topic, kw in getattr(module, "LISTEN", ()):
            env.probe.listen(msg_type, topic, **kw)
    except BaseException:
        env.close()
        raise
    yield env
    env.close()


@pytest.fixture
def empty_smbus2(monkeypatch):
    """``smbus2`` replaced by a fake SMBus on which no board answers (ENXIO)."""
    import sys
    import types

    from test_hardware_bus import FakeSMBus

    class Empty(FakeSMBus):
        def __init__(self, bus):
            super().__init__(bus)
            self.regs = {}
    monkeypatch.setitem(sys.modules, "smbus2", types.SimpleNamespace(SMBus=Empty))
    return Empty
