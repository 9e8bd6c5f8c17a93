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

# make irsim-demo: the book's listing (seed 001 section 3.3, built by make
# setup) drives a robot we did not write. ir-sim's car-like robot behind a
# tricycle_controller adapter (bsal_ros/test/irsim_base.py), the bridge on it
# through the tricycle profile, the listing as the control application, and
# the RDI viewer's picture: a window when DISPLAY is set, else
# irsim-demo.png taken as the listing ends. Logs and picture go to
# $BSAL_DEMO_DIR (default build/irsim-demo). Everything it starts is
# stopped by PID when it ends. Run through scripts/with_env.sh (the Makefile
# does).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
logs="${BSAL_DEMO_DIR:-$root/build/irsim-demo}"
mkdir -p "$logs"
say() { printf '[irsim-demo] %s\n' "$*"; }

book="$root/legacy/build/book-3.3"
if [ ! -x "$book" ]; then
    say "no $book: make setup builds it from ../shared/seeds (seed 001); without the seed there is no listing to run"
    exit 2
fi

pids=()
stop_all() {
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill -TERM "${pids[i]}" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_all EXIT

# wait_for LOG PATTERN SECONDS PID: until the log has the line, or the process died
wait_for() {
    for _ in $(seq 1 $(($3 * 10))); do
        grep -q "$2" "$1" && return 0
        kill -0 "$4" 2>/dev/null || { cat "$1"; return 1; }
        sleep 0.1
    done
    say "no '$2' in $1 within $3 s:"; cat "$1"; return 1
}

python "$root/bsal_ros/test/irsim_base.py" > "$logs/irsim_base.log" 2>&1 &
pids+=($!)
wait_for "$logs/irsim_base.log" "tricycle base up" 60 "${pids[0]}"
brak_bringup --bus-backend ros_base --base-profile tricycle --namespace brak \
    --rci-port 0 --rdi-realtime-port 0 --rdi-ca-port 0 --foxglove-port 0 --page-port 0 > "$logs/bringup.log" 2>&1 &
pids+=($!)
wait_for "$logs/bringup.log" "Brak is up" 60 "${pids[1]}"
up="$(grep -m1 'Brak is up' "$logs/bringup.log")"
say "${up#*]: }"
# the listing does not look at what its commands answer: it starts once the
# bridge has heard every topic of the base (its devices ready)
wait_for "$logs/bringup.log" "every mapped input topic heard" 30 "${pids[1]}"
rci_port="$(sed -E 's/.*RCI 127\.0\.0\.1:([0-9]+).*/\1/' <<< "$up")"
rt_port="$(sed -E 's/.*\(realtime :([0-9]+),.*/\1/' <<< "$up")"

if [ -n "${DISPLAY:-}" ]; then
    rdi_viewer --port "$rt_port" > "$logs/viewer.log" 2>&1 &
    pids+=($!)
    say "the viewer's window shows the robot (RDI port $rt_port)"
fi
say "running the book's listing against 127.0.0.1:$rci_port (homing, then 20 % reverse for 2.5 s)"
status=0
"$book" "127.0.0.1:$rci_port" || status=$?
say "the listing exited $status"
if [ -z "${DISPLAY:-}" ]; then
    rdi_viewer --port "$rt_port" --snapshot "$logs/irsim-demo.png" --duration 2
    say "the viewer's picture: $logs/irsim-demo.png"
fi
stop_all
trap - EXIT
say "$(grep 'base stopped' "$logs/irsim_base.log" || echo "the base left no stop line: $logs/irsim_base.log")"
exit "$status"
