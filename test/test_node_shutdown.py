"""Each node process stops cleanly on SIGTERM: exit 0, no traceback.

The fault campaign once caught the RCI gateway printing an uncaught
exception: SIGTERM invalidated the rclpy context while its asyncio side was
still polling a service client. Started without a hardware node, the gateway
polls every 0.1 s, so the window is open the whole time.
"""
import re
import signal
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NODES = {
    'rci_gateway': (['-p', 'port:=0'], r'RCI gateway ready on'),
    'rdi_gateway': (['-p', 'realtime_port:=0', '-p', 'ca_port:=0'], r'RDI gateway: real-time'),
    'hardware_node': (['-p', 'auto_home:=false'], r'hardware node: backend sim'),
}


def run_and_terminate(module, extra, ready, settle):
    proc = subprocess.Popen(
        [sys.executable, '-m', f'bsal_ros.nodes.{module}', '--ros-args',
         '-r', f'__ns:=/shutdown_{module}', *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.monotonic() + 60
    try:
        for line in proc.stdout:
            lines.append(line)
            if re.search(ready, line):
                break
            assert time.monotonic() < deadline, ''.join(lines)
        time.sleep(settle)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, ''.join(lines) + out


@pytest.mark.parametrize('module', sorted(NODES))
def test_sigterm_exits_cleanly(module):
    extra, ready = NODES[module]
    for settle in (0.05, 0.13, 0.33, 0.47, 0.71):   # phases of the nodes' timers
        rc, log = run_and_terminate(module, extra, ready, settle)
        assert rc == 0, log
        assert 'Traceback' not in log and 'never retrieved' not in log, log
