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

"""What every layer shares: the device classes, the device state record and
the result of a command. Pure Python: no ROS, no sockets, no I/O."""

from .device_classes import (ABSOLUTE_ENCODER, ACCELEROMETER, ALL_CLASSES, DC_MOTOR, MOTOR_CLASSES,
                             PSERVO_MOTOR, RELATIVE_ENCODER, SENSOR_CLASSES, ULTRASONIC)
from .device_state import DeviceState
from .result import Result

__all__ = ["ABSOLUTE_ENCODER", "ACCELEROMETER", "ALL_CLASSES", "DC_MOTOR", "MOTOR_CLASSES",
           "PSERVO_MOTOR", "RELATIVE_ENCODER", "SENSOR_CLASSES", "ULTRASONIC",
           "DeviceState", "Result"]
