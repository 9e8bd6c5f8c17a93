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

"""Bring up Brak on a ROS 2 install: hardware node, RCI, RDI and Foxglove gateways, markers.

    ros2 launch bsal_ros brak.launch.py                       # simulated robot
    ros2 launch bsal_ros brak.launch.py bus_backend:=smbus2 i2c_bus:=1
    ros2 launch bsal_ros brak.launch.py bus_backend:=ros_base base_profile:=tricycle
    ros2 launch bsal_ros brak.launch.py config:=my_brak.yaml  # your robot, your values
    ros2 launch bsal_ros brak.launch.py namespace:=brak2 rci_port:=7660 \
        rdi_realtime_port:=7661 rdi_ca_port:=7662 foxglove_port:=8775 \
        page_port:=8776                                            # a second robot
    ros2 launch bsal_ros brak.launch.py rviz:=true diagnostics_aggregator:=true
    ros2 launch bsal_ros brak.launch.py dds_profile:=false   # Fast DDS's own defaults
    ros2 launch bsal_ros brak.launch.py foxglove:=false      # no Foxglove gateway
    ros2 launch bsal_ros brak.launch.py markers:=false       # no sonar_cones, odom_path

Which value wins: a launch argument given on the command line, else the value
in the `config` / `gateways_config` file, else the node's built-in default.
The arguments that set node parameters therefore default to "" ("take it from
the file"). `frame_prefix` left out and not set in the file becomes
`<namespace>/` when a namespace is given.

The URDF for robot_state_publisher is generated here from the `config` in use
(bsal_ros.description), so custom sonar poses and frames match TF.

Machines without `ros2 launch` (PyPI wheels) use `brak_bringup`, which starts
the same nodes in one process.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import EnvironmentVariable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from bsal_ros.dds_profile import profile_env, PROFILES_VAR, SWITCH_VAR
from bsal_ros.description.config import node_parameters, urdf_of
from bsal_ros.kinds.diagnostics_config import write_analyzers_file

#: Our nodes bound their own clean stop (``SHUTDOWN_BOUND_S`` of
#: bsal_ros.nodes.runtime, which test_launch_file checks this equals; not
#: imported: no node code in the launch process); launch's SIGTERM must not
#: come before it.
STOP_BOUND_S = "10.0"

SHARE = FindPackageShare("bsal_ros")
DDS_PROFILE = PathJoinSubstitution([SHARE, "config", "fastdds_robot.xml"])

# launch argument -> (node, parameter, type) it overrides when given
HARDWARE_OVERRIDES = {
    "bus_backend": ("bus_backend", str),
    "i2c_bus": ("i2c_bus", int),
    "base_profile": ("base_profile", str),
}
RCI_OVERRIDES = {
    "rci_host": ("host", str),
    "rci_port": ("port", int),
    "users_file": ("users_file", str),
}
RDI_OVERRIDES = {
    "rdi_host": ("host", str),
    "rdi_realtime_port": ("realtime_port", int),
    "rdi_ca_port": ("ca_port", int),
}
FOXGLOVE_OVERRIDES = {
    "foxglove_host": ("host", str),
    "foxglove_port": ("port", int),
    "page_port": ("page_port", int),
}


def _given(context, name):
    """The argument's value when it was given (on the command line or by an including
    launch file), else None: the declared default "" means "take it from the file"."""
    value = LaunchConfiguration(name).perform(context)
    return value if value != "" else None


def _overrides(context, table):
    """{parameter: typed value} for the arguments of ``table`` that were given."""
    out = {}
    for argument, (parameter, kind) in table.items():
        value = _given(context, argument)
        if value is None:
            continue
        try:
            typed = kind(value)
        except ValueError:
            raise ValueError(f"launch argument {argument}:={value!r} is not an {kind.__name__}")
        # ParameterValue: a str stays a str (launch_ros would read it as YAML otherwise)
        out[parameter] = ParameterValue(typed, value_type=kind)
    return out


def _frame_prefix(context, file_params, namespace):
    """frame_prefix: the argument, else the config file's, else ``<namespace>/``."""
    given = _given(context, "frame_prefix")
    if given is not None:
        return given, True
    in_file = str(file_params.get("frame_prefix") or "")
    if in_file:
        return in_file, False
    return (namespace.strip("/") + "/" if namespace.strip("/") else ""), bool(namespace.strip("/"))


def _dds_env(context):
    """FASTDDS_DEFAULT_PROFILES_FILE for every node process: the shipped profile,
    unless dds_profile:=false, BSAL_DDS_PROFILE=0 or the user's own file."""
    environ = {name: EnvironmentVariable(name, default_value="").perform(context)
               for name in (PROFILES_VAR, SWITCH_VAR)}
    return profile_env(environ, LaunchConfiguration("dds_profile").perform(context) == "true",
                       path=DDS_PROFILE.perform(context))


def _robot(context):
    """The nodes, built once the launch arguments are known."""
    namespace = LaunchConfiguration("namespace").perform(context)
    config = LaunchConfiguration("config").perform(context)
    gateways_config = LaunchConfiguration("gateways_config").perform(context)
    file_params = node_parameters(config)
    prefix, set_prefix = _frame_prefix(context, file_params, namespace)
    dds_env = _dds_env(context)

    # every node, robot_state_publisher included, runs on /clock when asked
    sim_time = {"use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"),
                                               value_type=bool)}
    hardware_overrides = _overrides(context, HARDWARE_OVERRIDES)
    if set_prefix:
        hardware_overrides["frame_prefix"] = ParameterValue(prefix, value_type=str)
    # Order matters: a later entry of parameters=[...] wins, so the file comes
    # first and only the arguments that were given follow it.
    hardware = Node(
        additional_env=dds_env,
        package="bsal_ros", executable="hardware_node", name="hardware_node",
        namespace=namespace, output="screen", sigterm_timeout=STOP_BOUND_S,
        parameters=[config, hardware_overrides, sim_time],
    )
    rci = Node(
        additional_env=dds_env,
        package="bsal_ros", executable="rci_gateway", name="rci_gateway",
        namespace=namespace, output="screen", sigterm_timeout=STOP_BOUND_S,
        condition=IfCondition(LaunchConfiguration("rci")),
        parameters=[gateways_config, _overrides(context, RCI_OVERRIDES), sim_time],
    )
    rdi = Node(
        additional_env=dds_env,
        package="bsal_ros", executable="rdi_gateway", name="rdi_gateway",
        namespace=namespace, output="screen", sigterm_timeout=STOP_BOUND_S,
        condition=IfCondition(LaunchConfiguration("rdi")),
        parameters=[gateways_config, _overrides(context, RDI_OVERRIDES), sim_time],
    )
    foxglove = Node(
        additional_env=dds_env,
        package="bsal_ros", executable="foxglove_gateway", name="foxglove_gateway",
        namespace=namespace, output="screen", sigterm_timeout=STOP_BOUND_S,
        condition=IfCondition(LaunchConfiguration("foxglove")),
        parameters=[gateways_config, _overrides(context, FOXGLOVE_OVERRIDES), sim_time],
    )
    # no parameters of its own: the time source only
    markers = Node(
        additional_env=dds_env,
        package="bsal_ros", executable="brak_markers", name="brak_markers",
        namespace=namespace, output="screen", sigterm_timeout=STOP_BOUND_S,
        condition=IfCondition(LaunchConfiguration("markers")),
        parameters=[sim_time],
    )
    state_publisher = Node(
        additional_env=dds_env,
        package="robot_state_publisher", executable="robot_state_publisher",
        namespace=namespace, output="screen",
        condition=IfCondition(LaunchConfiguration("robot_state_publisher")),
        parameters=[{
            "robot_description": ParameterValue(urdf_of(config), value_type=str),
            "frame_prefix": ParameterValue(prefix, value_type=str),
        }, sim_time],
    )
    odom_frame = str(file_params.get("odom_frame") or "odom")
    rviz = Node(
        additional_env=dds_env,
        # No name=: renaming rviz2 duplicates the names of its internal nodes.
        package="rviz2", executable="rviz2", namespace=namespace,
        arguments=["-d", PathJoinSubstitution([SHARE, "config", "brak.rviz"]),
                   "-f", prefix + odom_frame],
        parameters=[sim_time],
        condition=IfCondition(LaunchConfiguration("rviz")),
    )
    # diagnostic_aggregator uses absolute topic names; in a namespace its outputs
    # move into it, so two robots' aggregators neither share a node name nor a topic.
    aggregator_remaps = []
    if namespace.strip("/"):
        aggregator_remaps = [(f"/{t}", t) for t in (
            "diagnostics_agg", "diagnostics_toplevel_state", "diagnostics_agg/add_diagnostics")]
    aggregator = Node(
        additional_env=dds_env,
        package="diagnostic_aggregator", executable="aggregator_node",
        name="diagnostic_aggregator", namespace=namespace, output="screen",
        condition=IfCondition(LaunchConfiguration("diagnostics_aggregator")),
        # generated now (a kind plugin's group included) when it runs; the
        # installed file (Brak's own kinds) otherwise
        parameters=[write_analyzers_file()
                    if _given(context, "diagnostics_aggregator") == "true" else
                    PathJoinSubstitution([SHARE, "config", "diagnostics_analyzers.yaml"]),
                    sim_time],
        remappings=aggregator_remaps,
    )
    return [hardware, rci, rdi, foxglove, markers, state_publisher, rviz, aggregator]


def generate_launch_description():
    def arg(name, default, description, choices=None):
        return DeclareLaunchArgument(name, default_value=default, description=description,
                                     choices=choices)

    switch = ["true", "false"]

    from_file = ' ("": the value in {}, else the node default)'
    arguments = [
        arg("namespace", "", "ROS namespace for every node (two robots need two)"),
        arg("config", PathJoinSubstitution([SHARE, "config", "brak.yaml"]),
            "robot description and hardware node parameters (YAML params file)"),
        arg("gateways_config", PathJoinSubstitution([SHARE, "config", "gateways.yaml"]),
            "RCI and RDI gateway parameters (YAML params file)"),
        arg("frame_prefix", "", "prefix of every frame id, e.g. brak2/ ('': the value in "
            "config, else <namespace>/ when a namespace is given, else none)"),
        arg("bus_backend", "", "I2C backend: sim (simulated Brak), smbus2 (/dev/i2c-N) or "
            "ros_base (a ROS 2 base, base_profile)" + from_file.format("config"),
            choices=["", "sim", "smbus2", "ros_base"]),
        arg("base_profile", "", "ros_base backend: the profile file or a shipped one's name "
            "(twist_range, twist_lidar, tricycle)" + from_file.format("config")),
        arg("i2c_bus", "", "N of /dev/i2c-N for the smbus2 backend" + from_file.format("config")),
        arg("users_file", "", "RCI users and keys" + from_file.format("gateways_config")),
        arg("rci_host", "", "RCI gateway bind address" + from_file.format("gateways_config")),
        arg("rci_port", "", "RCI gateway TCP port" + from_file.format("gateways_config")),
        arg("rdi_host", "", "RDI gateway bind address" + from_file.format("gateways_config")),
        arg("rdi_realtime_port", "", "RDI real-time state stream port"
            + from_file.format("gateways_config")),
        arg("rdi_ca_port", "", "RDI control-application view stream port"
            + from_file.format("gateways_config")),
        arg("foxglove_host", "", "Foxglove gateway bind address (off loopback it needs tls)"
            + from_file.format("gateways_config")),
        arg("foxglove_port", "", "Foxglove gateway WebSocket port"
            + from_file.format("gateways_config")),
        arg("page_port", "", "port of Brak's page, served by the Foxglove gateway "
            "(docs/PAGE.md)" + from_file.format("gateways_config")),
        arg("dds_profile", "true", "give every node the shipped Fast DDS profile "
            "config/fastdds_robot.xml (docs/DEPLOYMENT.md; a FASTDDS_DEFAULT_PROFILES_FILE "
            "of your own wins, BSAL_DDS_PROFILE=0 switches it off too)", choices=switch),
        arg("use_sim_time", "false", "every node takes its time from /clock (a simulator or "
            "a bag played with --clock)", choices=switch),
        arg("rci", "true", "start the RCI gateway", choices=switch),
        arg("rdi", "true", "start the RDI gateway", choices=switch),
        arg("foxglove", "true", "start the Foxglove gateway (Foxglove, Lichtblick: "
            "docs/VISUALIZATION.md)", choices=switch),
        arg("markers", "true", "start brak_markers: sonar_cones and odom_path, the sonars "
            "and odometry as Foxglove's, Lichtblick's and rviz's 3D views draw them",
            choices=switch),
        arg("robot_state_publisher", "true", "publish the URDF (generated from config) "
            "and joint transforms", choices=switch),
        arg("rviz", "false", "start rviz2 with config/brak.rviz, fixed frame <frame_prefix>odom",
            choices=switch),
        arg("diagnostics_aggregator", "false",
            "start diagnostic_aggregator with config/diagnostics_analyzers.yaml "
            "(rqt_robot_monitor shows one tree per device group)", choices=switch),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_robot)])
