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

"""Brak's URDF, generated from the robot description (``config/brak.yaml``).

One source of truth: the loader of :mod:`bsal_ros.hardware.description` gives
the geometry and the sonar poses the hardware node and the simulator use, and
:func:`build_urdf` turns that same dictionary into URDF text. The committed
``config/brak.urdf`` is this module's output (a test compares them); regenerate
it with::

    python -m bsal_ros.description > config/brak.urdf
    python -m bsal_ros.description --check config/brak.urdf   # exit 1 if stale

Pure Python: no ROS import here.
"""
from .urdf import build_urdf, device_link_name, Frames, frames_of, sonar_link_name

__all__ = ["Frames", "build_urdf", "device_link_name", "frames_of", "sonar_link_name"]
