"""RDI stream logic (pure Python, no ROS): per-stream robot state and frame
building (:mod:`.state`), bounded per-client queues and the fan-out policy
(:mod:`.fanout`), asyncio TCP streams and the two-stream gateway core
(:mod:`.server`). The ROS side is :mod:`bsal_ros.nodes.rdi_gateway`."""

from .fanout import ClientQueue, FanOut, Frame
from .server import RdiGateway, RdiStreamServer, StreamConfig
from .state import StreamState, id_packets

__all__ = ["ClientQueue", "FanOut", "Frame", "RdiGateway", "RdiStreamServer", "StreamConfig",
           "StreamState", "id_packets"]
