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

"""A control application that holds a speed until it is killed (no tests here).

    python speed_holder.py PORT DUTY     # from bsal_ros/test/

It logs in as the demo user, switches DC motor 0 on and repeats an acked
Set Motor of DUTY percent (with a 12-sonar read) every 0.1 s, so the
gateway's silence watchdog never stops it; it prints ``holding`` once the
first Set Motor is acknowledged and never stops by itself: test_ros_base.py
and bench_ros_base.py kill it mid-drive.
"""

import sys
import time

from bsal_ros.rci.users import DEMO_KEY
from two_hosts.clients import ControlApp


def main(port: int, duty: float) -> None:
    ca = ControlApp("127.0.0.1", port, "demo", DEMO_KEY.hex())
    assert ca.prepare() == "ack"
    ca.drive(duty)
    while ("set", "ack") not in [(what, got) for _, what, got in ca.log]:
        time.sleep(0.01)
    print("holding", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]))
