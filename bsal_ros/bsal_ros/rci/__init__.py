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

"""RCI gateway logic without ROS: users, the robot-port interface, the session
state machine (001 4.5/4.6), the one-client-at-a-time TCP server and its
limits (login throttle, pending connections; docs/SECURITY.md)."""

from .limits import address_key, LoginThrottle, PendingLimit
from .port import MotorSetting, PortUnavailable, RobotPort, SonarTiming
from .server import DEFAULT_HOST, DEFAULT_PORT, RciServer
from .session import RciSession
from .settings import RciSessionParams, SessionConfig
from .users import (check_bind_allowed, DEMO_KEY, file_permission_warning, is_loopback, User, Users,
                    UsersFileError)

__all__ = ["MotorSetting", "PortUnavailable", "RobotPort",
           "SonarTiming", "RciServer", "DEFAULT_HOST", "DEFAULT_PORT", "RciSession",
           "RciSessionParams", "SessionConfig", "DEMO_KEY", "User", "Users", "UsersFileError",
           "check_bind_allowed", "file_permission_warning", "is_loopback", "LoginThrottle",
           "PendingLimit", "address_key"]
