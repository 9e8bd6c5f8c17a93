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
from .urdf import Frames, build_urdf, device_link_name, frames_of, sonar_link_name

__all__ = ["Frames", "build_urdf", "device_link_name", "frames_of", "sonar_link_name"]
