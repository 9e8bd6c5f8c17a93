#!/usr/bin/env bash
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

# Run a command inside the project environment: the venv's Python, the ROS 2
# wheels' libraries, the ament prefix install/ (bsal_interfaces built by colcon,
# bsal_ros registered: ros2 launch/run find both), and DDS kept on loopback.
# `source install/setup.bash` gives an interactive shell the same.
#   scripts/with_env.sh python -m pytest test/
#   scripts/with_env.sh ros2 launch bsal_ros brak.launch.py   # with ../shared/ros2-tools
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
install="$root/install"
if [ ! -x "$venv/bin/python" ]; then
    echo "with_env.sh: no venv at .venv; run 'make setup' first" >&2
    exit 2
fi
site="$venv/lib/python3.11/site-packages"

ld="$venv/lib:$install/lib"
for d in "$site"/ros_*.libs; do [ -d "$d" ] && ld="$ld:$d"; done
export LD_LIBRARY_PATH="$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# We set what the wheels' .pth hook would, so it need not re-exec Python.
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1
export AMENT_PREFIX_PATH="$install:$venv"
export CMAKE_PREFIX_PATH="$install:$venv"
export PYTHONPATH="$install/lib/python3.11/site-packages:$install/local/lib/python3.11/dist-packages${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$venv/bin:$root/legacy/build:$PATH"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
export PYTHONUNBUFFERED=1

# DDS discovery stays on this machine unless explicitly allowed (real robots:
# BSAL_ALLOW_NETWORK_DISCOVERY=1 and set ROS_AUTOMATIC_DISCOVERY_RANGE yourself).
if [ "${BSAL_ALLOW_NETWORK_DISCOVERY:-0}" != 1 ]; then
    export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
fi
# One domain per run, so parallel runs on one machine do not see each other.
if [ -z "${ROS_DOMAIN_ID:-}" ]; then
    export ROS_DOMAIN_ID=$(( ($$ % 100) + 1 ))
fi
exec "$@"
