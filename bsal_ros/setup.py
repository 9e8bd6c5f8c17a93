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

"""ament_python package bsal_ros (see README.md)."""
from glob import glob

from setuptools import find_packages, setup

package_name = "bsal_ros"

setup(
    name=package_name,
    version="1.0.0",
    packages=find_packages(exclude=["test", "test.*", "bench", "bench.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.launch.py")),
        ("share/" + package_name + "/config",
         glob("config/*.yaml") + glob("config/*.rviz") + glob("config/*.urdf")
         + glob("config/*.xml") + glob("config/*.json")),
        ("share/" + package_name + "/wireshark", ["bsal_ros/wireshark/bsal.lua"]),
        # Brak's page (docs/PAGE.md), served by the Foxglove gateway: its static files and,
        # when it was built (cd web && npm ci && npm run build), the bundle; a build
        # without it ships index.html alone and the gateway says so once
        ("share/" + package_name + "/web",
         glob("web/*.html") + glob("web/*.css") + glob("web/*.svg")),
        ("share/" + package_name + "/web/dist", glob("web/dist/*.js") + glob("web/dist/*.map")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="bsal_ros maintainers",
    maintainer_email="bsal-ros@brak-robot.org",
    description="ROS 2 bridge for the Brak robot and its legacy BSAL RCI/RDI protocols.",
    license="Apache-2.0",
    # colcon test picks pytest only when it sees this extra (setuptools ignores tests_require).
    # "viewer": rdi_viewer's optional window and snapshot (Tk itself comes with Python or the
    # system package python3-tk, not from PyPI).
    extras_require={"test": ["pytest"], "viewer": ["Pillow"]},
    entry_points={
        # the node executables install their signal handlers before they import
        # rclpy (bsal_ros/entry_points.py)
        "console_scripts": [
            "hardware_node = bsal_ros.entry_points:hardware_node",
            "rci_gateway = bsal_ros.entry_points:rci_gateway",
            "rdi_gateway = bsal_ros.entry_points:rdi_gateway",
            "foxglove_gateway = bsal_ros.entry_points:foxglove_gateway",
            "brak_markers = bsal_ros.entry_points:brak_markers",
            "brak_bringup = bsal_ros.entry_points:brak_bringup",
            "brak_record = bsal_ros.entry_points:brak_record",
            "rdi_viewer = bsal_ros.viewer:main",
            "brak_drive = bsal_ros.tools.drive:main",
            "brak_wire = bsal_ros.tools.wire:main",
        ],
        # device kinds and board types: every process loads this group
        # (bsal_ros.kinds.plugins); Brak's own come the way any other package's do
        "bsal_ros.device_kinds": [
            "ultrasonic = bsal_ros.kinds.ultrasonic",
            "dc_motor = bsal_ros.kinds.dc_motor",
            "pservo_motor = bsal_ros.kinds.pservo_motor",
            "accelerometer = bsal_ros.kinds.accelerometer",
        ],
    },
)
