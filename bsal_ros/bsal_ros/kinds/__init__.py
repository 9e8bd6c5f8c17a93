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
"""Device kinds and board types, one module each (see :mod:`.registry`).

Importing this package loads every device-kind plugin (:mod:`.plugins`, the
entry-point group ``bsal_ros.device_kinds``): Brak's own board types and kinds
(ultrasonic, dc_motor (+ relative_encoder), pservo_motor (+ absolute_encoder),
accelerometer) and any installed package's. A new kind is one module declaring a
:class:`BoardType` and a :class:`DeviceKind` subclass (abstract methods: what
every kind must give) and registering them with :func:`register_board_type`
and :func:`register_kind`, named by an entry point of that group
(docs/EXTENDING.md).
"""

from .base import (BoardType, DeviceKind, Health, HealthContext, KindError, Level, MotorKind,
                   NoTopic, PolledBoardType, RciSensor, RdiItem, RosTopic, SensorKind, TOPIC_QOS,
                   value_of, with_values)
from .plugins import GROUP, load_plugins, loaded_plugins, plugin_errors
from .registry import (all_kinds, board_type, board_type_problems, board_types, data_fields,
                       device_classes, is_builtin, kind, kind_problems, rci_as_sent, rci_item,
                       RCI_SENSOR_CLASS, rdi_kind, rdi_sensor_kinds, register_board_type,
                       register_kind, registry_problems, resolve, status_fields, unregister)

load_plugins()

__all__ = ["GROUP", "RCI_SENSOR_CLASS", "TOPIC_QOS", "BoardType", "DeviceKind", "Health",
           "HealthContext", "KindError", "Level", "MotorKind", "NoTopic", "PolledBoardType",
           "RciSensor", "RdiItem", "RosTopic", "SensorKind",
           "all_kinds", "board_type", "board_type_problems", "board_types", "data_fields",
           "device_classes", "is_builtin", "kind", "kind_problems", "load_plugins",
           "loaded_plugins", "plugin_errors", "registry_problems",
           "rci_as_sent", "rci_item", "rdi_kind", "rdi_sensor_kinds", "register_board_type",
           "register_kind", "resolve", "status_fields", "unregister", "value_of", "with_values"]
