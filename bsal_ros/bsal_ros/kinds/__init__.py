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

Importing this package registers Brak's own board types and kinds:
ultrasonic, dc_motor (+ relative_encoder), pservo_motor (+ absolute_encoder),
accelerometer. A new kind is one module calling :func:`register_board_type`
and :func:`register_kind` (docs/EXTENDING.md).
"""

from . import accelerometer, dc_motor, pservo_motor, ultrasonic  # noqa: F401,E402  (registers)
from .registry import (all_kinds, board_type, board_type_problems, board_types, BoardType,
                       data_fields, device_classes, DeviceKind, kind, kind_problems, KindError,
                       rci_as_sent, rci_item, RCI_SENSOR_CLASS, RciSensor, rdi_kind,
                       rdi_sensor_kinds, RdiItem, register_board_type, register_kind,
                       registry_problems, resolve, status_fields, unregister, value_of,
                       ViewerSpec, with_values)

__all__ = ["RCI_SENSOR_CLASS", "BoardType", "DeviceKind", "KindError", "RciSensor", "RdiItem",
           "ViewerSpec",
           "all_kinds", "board_type", "board_type_problems", "board_types", "data_fields",
           "device_classes", "kind", "kind_problems", "registry_problems",
           "rci_as_sent", "rci_item", "rdi_kind", "rdi_sensor_kinds", "register_board_type",
           "register_kind", "resolve", "status_fields", "unregister", "value_of", "with_values"]
