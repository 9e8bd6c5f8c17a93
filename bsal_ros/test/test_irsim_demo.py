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

"""``make irsim-demo`` shows a person the book's listing driving ir-sim's robot:
its script (scripts/irsim_demo.sh) run as the Makefile runs it, without a
screen, so the viewer's picture is a PNG. In a module of its own: its base
would share a ROS domain with test_irsim_base.py's."""

import importlib.util
import os
from pathlib import Path
import re
import subprocess

import pytest

import test_book_listing

if importlib.util.find_spec("irsim") is None:     # not imported here: ir-sim prints at import
    pytest.skip("ir-sim is installed by make setup (requirements/project.txt)",
                allow_module_level=True)

# alone: the listing's drive holds only while the base's 20 Hz topics each
# reach the bridge within 0.5 s (the profile's timeout stops the motors): it
# times a bound, as test_irsim_base.py's listing does. Beside two CPU burners
# in the parallel phase the base went 0.06 m of its 0.1 m (cc57)
pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.alone, pytest.mark.timeout(240)]
book_app = test_book_listing.book_app
REPO = Path(__file__).resolve().parents[2]


def test_the_demo_runs_the_listing_on_irsim_and_takes_the_viewers_picture(book_app, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["BSAL_DEMO_DIR"] = str(tmp_path)
    r = subprocess.run(["bash", str(REPO / "scripts" / "irsim_demo.sh")], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=180)
    # the script's output, then the bridge's last lines (why it stopped a motor)
    bringup = tmp_path / "bringup.log"
    tail = bringup.read_text().splitlines()[-40:] if bringup.exists() else []
    said = r.stdout + r.stderr
    out = "\n".join([said, "bringup.log, last lines:", *tail])
    assert r.returncode == 0, out
    assert "bus ros_base (profile tricycle)" in said and "the listing exited 0" in said, out
    png = (tmp_path / "irsim-demo.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000, out
    # ir-sim's own account of where its robot went: backwards (MOTOR_REVERSE)
    travelled = re.search(r"base stopped: .* travelled (-?\d+\.\d+) m", said)
    assert travelled and float(travelled.group(1)) < -0.1, out
    # the script stopped what it started: the base's own stop line is in the output
    assert "ir-sim tricycle base stopped" in said, out
