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

"""Single-process bring-up: the whole bridge in one executor.

For machines without `ros2 launch` (the PyPI wheels have no `launch`); on a
ROS install `ros2 launch bsal_ros brak.launch.py` starts the same nodes as
separate processes. This is manual composition: the hardware node, the RCI
gateway and the RDI gateway share one executor (rclpy's EventsExecutor, as
every executable: ``bsal_ros.nodes.runtime.make_executor``).

    brak_bringup                                  # simulated Brak, default ports
    brak_bringup --bus-backend smbus2 --i2c-bus 1 # the real boards
    brak_bringup --namespace brak2 --frame-prefix brak2/ --rci-port 7660 \
                 --rdi-realtime-port 7661 --rdi-ca-port 7662 \
                 --foxglove-port 8775 --page-port 8776         # a second robot
    brak_bringup --duration 30                    # stop by itself after 30 s
    brak_bringup --ros-args --params-file my_brak.yaml            # ROS arguments, as anywhere
    brak_bringup --no-dds-profile                 # Fast DDS's own defaults (docs/DEPLOYMENT.md)
    brak_bringup --foxglove-port 8775             # the Foxglove gateway's port
    brak_bringup --page-port 8776                 # the port of Brak's page (docs/PAGE.md)
    brak_bringup --no-foxglove                    # no Foxglove gateway
    brak_bringup --no-markers                     # no sonar_cones, odom_path (brak_markers)
"""
import os
import sys

from bsal_ros.core.cli import OneLineParser
from bsal_ros.dds_profile import describe, profile_env
from bsal_ros.description.launch_args import flag, launch_overrides
from bsal_ros.nodes.cli import ROS_ARGS, split_ros_args
from bsal_ros.paths import shipped


def parse_args(argv):
    """Our options (ROS arguments already split off: :mod:`bsal_ros.nodes.cli`)."""
    return make_parser().parse_args(argv)


def make_parser() -> OneLineParser:
    """brak_bringup's command line."""
    p = OneLineParser(prog="brak_bringup", description=__doc__.split("\n\n")[0])
    p.add_argument("--namespace", default="", help="ROS namespace of every node")
    p.add_argument("--config", default=str(shipped("config", "brak.yaml")),
                   help="hardware node params file (robot description)")
    p.add_argument("--gateways-config", default=str(shipped("config", "gateways.yaml")),
                   help="RCI/RDI gateway params file")
    # the launch file's override arguments, each with its parameter's declaration
    from bsal_ros.nodes.records import NODE_RECORDS
    for node, table in override_tables().items():
        specs = NODE_RECORDS[node].specs()
        for argument, (parameter, kind) in table.items():
            _, spec = specs[parameter]
            p.add_argument(flag(argument), type=kind, choices=list(spec.choices) or None,
                           help=f"{node} {parameter}: {spec.description}".replace("%", "%%"))
    p.add_argument("--frame-prefix", help="prefix of every frame id (e.g. brak2/)")
    p.add_argument("--no-rci", action="store_true", help="do not start the RCI gateway")
    p.add_argument("--no-rdi", action="store_true", help="do not start the RDI gateway")
    p.add_argument("--no-state-publisher", action="store_true",
                   help="do not publish robot_description, /tf_static and the joints' /tf "
                        "(robot_state_publisher does it on a ROS install)")
    p.add_argument("--no-markers", action="store_true",
                   help="do not publish sonar_cones and odom_path, the sonars and odometry "
                        "as Foxglove's, Lichtblick's and rviz's 3D views draw them "
                        "(brak_markers)")
    p.add_argument("--no-foxglove", action="store_true",
                   help="do not start the Foxglove gateway (docs/VISUALIZATION.md)")
    # 1.0's command lines still start (a public option: removed only in a major
    # release); every executable runs one executor kind since issue 40
    p.add_argument("--executor", choices=["auto", "events", "single", "multi"],
                   help="deprecated and ignored: every executable runs rclpy's "
                        "EventsExecutor (docs/BENCHMARKS.md, 'Executor kind')")
    p.add_argument("--no-dds-profile", action="store_true",
                   help="leave out the shipped Fast DDS profile config/fastdds_robot.xml "
                        "(also BSAL_DDS_PROFILE=0; a FASTDDS_DEFAULT_PROFILES_FILE of your "
                        "own wins anyway)")
    p.add_argument("--duration", type=float, default=0.0,
                   help="seconds to run, then stop cleanly (0: until Ctrl-C)")
    return p


def override_tables():
    """node -> {argument: (parameter, type)}: the launch file's tables
    (:mod:`bsal_ros.description.launch_args`)."""
    return launch_overrides(shipped("launch", "brak.launch.py"))


def given(args, node):
    """(parameter, value) of the node's override flags (None: not given)."""
    return [(parameter, getattr(args, argument))
            for argument, (parameter, _) in override_tables()[node].items()]


def refusal(argv, args) -> str:
    """Why one of the nodes :func:`compose` builds would refuse to start
    ("" : none), before any is built (:mod:`bsal_ros.nodes.preflight`)."""
    from bsal_ros.nodes import preflight
    ns = args.namespace or None
    pairs = {"hardware_node": given(args, "hardware_node") + [("frame_prefix", args.frame_prefix)],
             "rci_gateway": given(args, "rci_gateway"), "rdi_gateway": given(args, "rdi_gateway"),
             "foxglove_gateway": given(args, "foxglove_gateway")}
    built = [node for node, off in (("hardware_node", False), ("rci_gateway", args.no_rci),
                                    ("rdi_gateway", args.no_rdi),
                                    ("foxglove_gateway", args.no_foxglove)) if not off]
    return preflight.refusal(argv, [(node, ns, {n: v for n, v in pairs[node] if v is not None})
                                    for node in built])


def overrides(pairs):
    """Parameter overrides for the options the user actually gave."""
    from rclpy.parameter import Parameter  # rclpy only after the runtime's signal handlers
    return [Parameter(name, value=value) for name, value in pairs if value is not None]


def compose(nodes, args) -> dict:
    """Build the hardware node and the gateways into ``nodes`` (a
    :class:`~bsal_ros.nodes.runtime.Composition`) and open the gateways'
    sockets; returns {'rci': port, 'rdi': {stream: port}}.

    Stopping order (the runtime's): the gateways stop while the executor
    still serves the hardware node (their sessions' safety stops are service
    calls to it), then the hardware node closes, which resets every board
    (motors off)."""
    from bsal_ros.nodes.hardware_node import HardwareNode
    ns = args.namespace or None
    context = nodes.context
    hardware = HardwareNode(namespace=ns, context=context, parameter_overrides=overrides(
        given(args, "hardware_node") + [("frame_prefix", args.frame_prefix)]))
    nodes.add(hardware, stop=hardware.homing.end_goals, close=hardware.close)
    if not args.no_state_publisher:
        from bsal_ros.description.urdf import build_urdf
        from bsal_ros.nodes.state_publisher import StatePublisher
        nodes.add(StatePublisher(build_urdf(hardware.desc, source="the hardware node's "
                                            "description"),
                                 hardware.p["frame_prefix"], namespace=ns, context=context))
    if not args.no_markers:
        from bsal_ros.nodes.markers import Markers
        nodes.add(Markers(namespace=ns, context=context))
    if getattr(args, "executor", None):
        hardware.get_logger().warning(
            f"--executor {args.executor} is deprecated and ignored: every executable "
            "runs rclpy's EventsExecutor")
    # Polling runs in the hardware node's own thread and sockets in the
    # gateways' asyncio threads: what runs in callbacks is short, and the one
    # executor thread serves them all (docs/BENCHMARKS.md, "Executor kind").
    rci = rdi = None
    if not args.no_rci:
        from bsal_ros.nodes.rci_gateway import RciGatewayNode
        rci = RciGatewayNode(namespace=ns, context=context,
                             parameter_overrides=overrides(given(args, "rci_gateway")))
        nodes.add(rci, stop=rci.stop_serving, close=rci.stop)
    if not args.no_rdi:
        from bsal_ros.nodes.rdi_gateway import RdiGatewayNode
        rdi = RdiGatewayNode(namespace=ns, context=context,
                             parameter_overrides=overrides(given(args, "rdi_gateway")))
        nodes.add(rdi, stop=rdi.stop)
    foxglove = None
    if not args.no_foxglove:
        foxglove = foxglove_gateway(nodes, ns, args)
    ports = {}
    if rci is not None:
        ports["rci"] = rci.start()
        nodes.check()
    if rdi is not None:
        ports["rdi"] = rdi.start()
    if foxglove is not None:
        ports["foxglove"] = foxglove.start()
    bus = f'bus {hardware.p["bus_backend"]}'
    if hardware.base_link is not None:
        bus += f" (profile {hardware.base_link.profile.name})"
    parts = [f'namespace {args.namespace or "/"}', bus, type(nodes.executor).__name__]
    if "rci" in ports:
        parts.append(f'RCI {rci.p["host"]}:{ports["rci"]}')
    if "rdi" in ports:
        streams = ", ".join(f"{name} :{port}" for name, port in ports["rdi"].items())
        parts.append(f'RDI {rdi.p["host"]} ({streams})')
    if "foxglove" in ports:
        parts.append(f"Foxglove {foxglove.url}")
        if foxglove.page_url:
            parts.append(f"page {foxglove.page_url}")
    parts.append(describe(os.environ))
    hardware.get_logger().info("Brak is up: " + ", ".join(parts) + " (Ctrl-C stops it)")
    return ports


def foxglove_gateway(nodes, ns, args):
    """The Foxglove gateway node in ``nodes``, or None (one line) where foxglove-sdk
    is not installed: the rest of the bridge runs without it."""
    try:
        import foxglove  # noqa: F401 - the SDK is a pip package (requirements/project.txt)
    except ImportError as exc:
        import rclpy.logging
        rclpy.logging.get_logger("brak_bringup").warning(
            f"Foxglove gateway not started: foxglove-sdk is not importable ({exc}); "
            "pip install it (requirements/project.txt) or pass --no-foxglove")
        return None
    from bsal_ros.nodes.foxglove_gateway import FoxgloveGatewayNode
    node = FoxgloveGatewayNode(namespace=ns, context=nodes.context,
                               parameter_overrides=overrides(given(args, "foxglove_gateway")))
    nodes.add(node, stop=node.stop)
    return node


def main(argv=None, hard_exit: bool = True, stop=None) -> int:
    """Run the composed bridge until SIGINT/SIGTERM or ``--duration``; exit code 0
    (2: it cannot start; every node is checked before the first is built:
    :func:`refusal`). Start-up and the clean stop: :mod:`bsal_ros.nodes.runtime`."""
    from bsal_ros.nodes.runtime import run, StartupError
    ours, extra = split_ros_args(sys.argv[1:] if argv is None else argv)
    args = parse_args(ours)
    # before rclpy.init: Fast DDS reads it when the process makes its participant
    os.environ.update(profile_env(os.environ, not args.no_dds_profile))

    def build(nodes) -> None:
        try:
            compose(nodes, args)
        except OSError as exc:
            raise StartupError(f"cannot open a gateway port: {exc}") from None
        except ValueError as exc:        # a bad parameter or robot description
            raise StartupError(str(exc)) from None

    return run("brak_bringup", build,
               args=["brak_bringup", ROS_ARGS, "--params-file", args.config,
                     "--params-file", args.gateways_config] + extra,
               duration=args.duration, stop_message="stopping: motors off, sockets closed",
               hard_exit=hard_exit, check=lambda ros_argv: refusal(ros_argv, args), stop=stop)


if __name__ == "__main__":
    raise SystemExit(main())
