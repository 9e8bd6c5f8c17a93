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

"""One set of device class names, equal to the generated message's constants."""
import pytest

from bsal_ros.core import device_classes as dc

pytestmark = pytest.mark.ros


def test_names_equal_the_device_state_constants():
    from bsal_interfaces.msg import DeviceState
    generated = {getattr(DeviceState, n) for n in dir(DeviceState) if n.startswith("CLASS_")}
    assert set(dc.ALL_CLASSES) == generated
    assert len(dc.ALL_CLASSES) == 6


def test_every_layer_uses_the_same_names():
    from bsal_ros.hardware import devices
    from bsal_ros.rci import port
    from bsal_ros.rdi import state
    for module in (devices, port, state):
        assert module.ULTRASONIC is dc.ULTRASONIC and module.PSERVO_MOTOR is dc.PSERVO_MOTOR
    assert devices.MOTOR_CLASSES == port.MOTOR_CLASSES == dc.MOTOR_CLASSES
    assert state.ALL_CLASSES is dc.ALL_CLASSES
