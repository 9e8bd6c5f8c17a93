"""RCI gateway logic without ROS: users, the robot-port interface, the session
state machine (001 4.5/4.6), the one-client-at-a-time TCP server and its
limits (login throttle, pending connections; docs/SECURITY.md)."""

from .port import MotorSetting, PortUnavailable, RobotPort, SonarTiming
from .limits import LoginThrottle, PendingLimit, address_key
from .server import DEFAULT_HOST, DEFAULT_PORT, RciServer
from .session import RciSession, SessionConfig
from .users import (DEMO_KEY, User, Users, UsersFileError, check_bind_allowed,
                    file_permission_warning, is_loopback)

__all__ = ["MotorSetting", "PortUnavailable", "RobotPort",
           "SonarTiming", "RciServer", "DEFAULT_HOST", "DEFAULT_PORT", "RciSession",
           "SessionConfig", "DEMO_KEY", "User", "Users", "UsersFileError",
           "check_bind_allowed", "file_permission_warning", "is_loopback", "LoginThrottle",
           "PendingLimit", "address_key"]
