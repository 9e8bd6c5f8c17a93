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

"""The six BSAL device classes, named as bsal_interfaces/DeviceState's CLASS_*.

Pure Python (no ROS), shared by the hardware layer and both gateways' logic;
test/test_device_classes.py checks the names against the generated message.
"""
ULTRASONIC = "ultrasonic"
RELATIVE_ENCODER = "relative_encoder"
ABSOLUTE_ENCODER = "absolute_encoder"
ACCELEROMETER = "accelerometer"
DC_MOTOR = "dc_motor"
PSERVO_MOTOR = "pservo_motor"

SENSOR_CLASSES = (ULTRASONIC, RELATIVE_ENCODER, ABSOLUTE_ENCODER, ACCELEROMETER)
MOTOR_CLASSES = (DC_MOTOR, PSERVO_MOTOR)
ALL_CLASSES = SENSOR_CLASSES + MOTOR_CLASSES
