"""Pure-Python hardware layer: I2C bus backends, boards, devices, simulated Brak.

No ROS imports here (a test enforces it).
"""

from .bus import I2CBus, SimBus, Smbus2Bus, i2c_wire_bits, i2c_wire_time  # noqa: F401
from .description import DEFAULT_DESCRIPTION, load_description  # noqa: F401
from .backends import BACKENDS, open_bus, register_backend  # noqa: F401
from ..core.result import Result  # noqa: F401
from .robot import Robot, scale_rates  # noqa: F401
