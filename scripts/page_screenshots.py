#!/usr/bin/env python3
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

"""The screenshots of Brak's page in README.md and docs/VISUALIZATION.md.

Starts the bridge on the simulated robot (free ports), puts the robot near the
room's east wall (the simulator's ``sim_control`` teleport: the sonars facing
it read short ranges), drives it a little from the page so the odometry trail
shows, logs a control application in over RCI (user ``demo``: it activates
the sonars, the drive encoder and the drive motor and reads them four times a
second, as long as the pictures take) and takes the page in headless Chromium
(test/page_browser.py), the first screen at 1280 x 800 and at 390 x 844 (a phone):

    scripts/with_env.sh python scripts/page_screenshots.py     # docs/images/brak_page_*.png
    scripts/with_env.sh python scripts/page_screenshots.py --out shots/   # elsewhere
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
import threading

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bsal_ros" / "test"))    # the tests' Bridge and browser helpers

from page_browser import chromium, DESKTOP, page_url, PHONE, unavailable, until  # noqa: E402
from test_bringup import Bridge  # noqa: E402

DEMO_KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")
#: near the east wall (x = 5 m), turned a little towards it
NEAR_WALL = [3.9, 1.0, 0.3]


def teleport(pose) -> None:
    """Move the simulated robot (sim_control teleport), as a ROS client would."""
    import rclpy
    import rclpy.context
    from rclpy.executors import SingleThreadedExecutor
    from bsal_interfaces.srv import SimControl
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("page_screenshots", context=context)
    try:
        client = node.create_client(SimControl, "sim_control")
        if not client.wait_for_service(timeout_sec=30):
            raise SystemExit("sim_control is not offered")
        future = client.call_async(SimControl.Request(command="teleport", values=pose))
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        executor.spin_until_future_complete(future, timeout_sec=30)
        executor.shutdown()
        if not future.done() or future.result().result.code != 0:
            answer = future.result() if future.done() else "no answer"
            raise SystemExit(f"teleport failed: {answer}")
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)


class ControlApplication(threading.Thread):
    """An RCI session held open: user demo activates devices and reads them until stopped."""

    def __init__(self, port: int):
        super().__init__(name="rci-session", daemon=True)
        self.port = port
        self.done = threading.Event()

    def run(self) -> None:
        """Log in, activate, then read every 0.25 s (the gateway's watchdog sees a CA alive)."""
        from bsal_ros.protocol.constants import GetMotorStatus, GetSensorStatus, MotorType, \
            SensorType
        from bsal_ros.protocol.rci import CAcMt, CAcSn, CGtMtIq, CGtSnIq
        from bsal_ros.rci.client import RciClient
        with RciClient("127.0.0.1", self.port) as ca:
            ca.handshake("demo", DEMO_KEY)
            ca.request(CAcSn.group(SensorType.ULTRASONIC, 0, [1] * 12, rq_ack=True))
            ca.request(CAcSn.one(SensorType.RELENCODER, 0, 1, rq_ack=True))
            ca.request(CAcMt.one(MotorType.DC, 0, 1, rq_ack=True))
            while not self.done.wait(0.25):
                ca.request(CGtSnIq.group(SensorType.ULTRASONIC, 0, [GetSensorStatus.DATA] * 12))
                ca.request(CGtSnIq.one(SensorType.RELENCODER, 0, GetSensorStatus.DATA))
                ca.request(CGtMtIq.one(MotorType.DC, 0, GetMotorStatus.DATA))


def main(argv=None) -> int:
    """Take the screenshots; exit 2 when the browser is missing."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images",
                        help="folder of the PNGs (default: docs/images)")
    args = parser.parse_args(argv)
    why = unavailable()
    if why:
        print(f"page_screenshots: {why}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    bridge = Bridge("--duration", "300")
    app = None
    try:
        url = page_url(bridge)
        teleport(NEAR_WALL)
        with chromium(DESKTOP) as browser:
            desktop = browser.new_page()
            phone = browser.new_page()
            phone.set_viewport_size(PHONE)
            for page in (desktop, phone):
                page.goto(url)
                until(page, "document.querySelectorAll('path.cone[d]').length === 12",
                      timeout=60000)
            # a short drive from the page: forward and a little left, for the trail
            until(desktop, "!document.querySelector('.pad .up').disabled")
            desktop.wait_for_timeout(3000)              # the steering homes at start-up
            desktop.locator("body").click(position={"x": 5, "y": 5})
            desktop.keyboard.down("ArrowUp")
            desktop.keyboard.down("ArrowLeft")
            desktop.wait_for_timeout(4000)
            desktop.keyboard.up("ArrowLeft")
            desktop.keyboard.up("ArrowUp")
            app = ControlApplication(int(bridge.ports[0]))
            app.start()
            shown = ("document.getElementById('ca-user').textContent === 'demo' && "
                     "document.getElementById('ca-devices').textContent.includes('ultrasonic')")
            for page, name in ((desktop, "brak_page_desktop.png"), (phone, "brak_page_phone.png")):
                until(page, shown, timeout=60000, polling=50)
                page.screenshot(path=str(args.out / name))      # what the window shows
                print(f"page_screenshots: wrote {args.out / name}")
    finally:
        if app is not None:
            app.done.set()
            app.join(10)
        bridge.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
