"""What every layer shares: the device classes, the device state record and
the result of a command. Pure Python: no ROS, no sockets, no I/O."""

from .device_classes import (ABSOLUTE_ENCODER, ACCELEROMETER, ALL_CLASSES, DC_MOTOR,
                             MOTOR_CLASSES, PSERVO_MOTOR, RELATIVE_ENCODER, SENSOR_CLASSES,
                             ULTRASONIC)
from .device_state import DeviceState
from .result import Result

__all__ = ["ABSOLUTE_ENCODER", "ACCELEROMETER", "ALL_CLASSES", "DC_MOTOR", "MOTOR_CLASSES",
           "PSERVO_MOTOR", "RELATIVE_ENCODER", "SENSOR_CLASSES", "ULTRASONIC",
           "DeviceState", "Result"]
