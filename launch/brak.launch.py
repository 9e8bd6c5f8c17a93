"""Bring up Brak on a ROS 2 install: hardware node, RCI and RDI gateways.

    ros2 launch bsal_ros brak.launch.py                       # simulated robot
    ros2 launch bsal_ros brak.launch.py bus_backend:=smbus2 i2c_bus:=1
    ros2 launch bsal_ros brak.launch.py namespace:=brak2 frame_prefix:=brak2/ \
        rci_port:=7660 rdi_realtime_port:=7661 rdi_ca_port:=7662   # a second robot
    ros2 launch bsal_ros brak.launch.py rviz:=true diagnostics_aggregator:=true

Machines without `ros2 launch` (PyPI wheels) use `brak_bringup`, which starts
the same nodes in one process.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory('bsal_ros')
    config = LaunchConfiguration('config')
    gateways_config = LaunchConfiguration('gateways_config')
    namespace = LaunchConfiguration('namespace')

    def arg(name, default, description):
        return DeclareLaunchArgument(name, default_value=default, description=description)

    arguments = [
        arg('namespace', '', 'ROS namespace for every node (two robots need two)'),
        arg('config', os.path.join(share, 'config', 'brak.yaml'),
            'robot description and hardware node parameters (YAML)'),
        arg('gateways_config', os.path.join(share, 'config', 'gateways.yaml'),
            'RCI and RDI gateway parameters (YAML)'),
        arg('frame_prefix', '', 'prefix of every frame id (e.g. brak2/), so two robots '
            'keep separate TF trees'),
        arg('bus_backend', 'sim', 'I2C backend: sim (simulated Brak) or smbus2 (/dev/i2c-N)'),
        arg('i2c_bus', '1', 'I2C bus number N of /dev/i2c-N for the smbus2 backend'),
        arg('users_file', os.path.join(share, 'config', 'users.yaml'),
            'RCI users and keys'),
        arg('rci_host', '127.0.0.1', 'RCI gateway bind address'),
        arg('rci_port', '7650', 'RCI gateway TCP port'),
        arg('rdi_host', '127.0.0.1', 'RDI gateway bind address'),
        arg('rdi_realtime_port', '7651', 'RDI real-time state stream port'),
        arg('rdi_ca_port', '7652', 'RDI control-application view stream port'),
        arg('rci', 'true', 'start the RCI gateway'),
        arg('rdi', 'true', 'start the RDI gateway'),
        arg('robot_state_publisher', 'true', 'publish the URDF and joint transforms'),
        arg('rviz', 'false', 'start rviz2 with config/brak.rviz'),
        arg('diagnostics_aggregator', 'false',
            'start diagnostic_aggregator with config/diagnostics_analyzers.yaml '
            '(rqt_robot_monitor shows one tree per device group)'),
    ]

    hardware = Node(
        package='bsal_ros', executable='hardware_node', name='hardware_node',
        namespace=namespace, output='screen',
        parameters=[config, {
            'bus_backend': LaunchConfiguration('bus_backend'),
            'i2c_bus': LaunchConfiguration('i2c_bus'),
            'frame_prefix': LaunchConfiguration('frame_prefix'),
        }],
    )
    rci = Node(
        package='bsal_ros', executable='rci_gateway', name='rci_gateway',
        namespace=namespace, output='screen',
        condition=IfCondition(LaunchConfiguration('rci')),
        parameters=[gateways_config, {
            'host': LaunchConfiguration('rci_host'),
            'port': LaunchConfiguration('rci_port'),
            'users_file': LaunchConfiguration('users_file'),
        }],
    )
    rdi = Node(
        package='bsal_ros', executable='rdi_gateway', name='rdi_gateway',
        namespace=namespace, output='screen',
        condition=IfCondition(LaunchConfiguration('rdi')),
        parameters=[gateways_config, {
            'host': LaunchConfiguration('rdi_host'),
            'realtime_port': LaunchConfiguration('rdi_realtime_port'),
            'ca_port': LaunchConfiguration('rdi_ca_port'),
        }],
    )

    with open(os.path.join(share, 'urdf', 'brak.urdf')) as f:
        robot_description = f.read()
    state_publisher = Node(
        package='robot_state_publisher', executable='robot_state_publisher',
        namespace=namespace, output='screen',
        condition=IfCondition(LaunchConfiguration('robot_state_publisher')),
        parameters=[{'robot_description': robot_description,
                     'frame_prefix': LaunchConfiguration('frame_prefix')}],
    )
    rviz = Node(
        # No name=: renaming rviz2 duplicates the names of its internal nodes.
        package='rviz2', executable='rviz2', namespace=namespace,
        arguments=['-d', os.path.join(share, 'config', 'brak.rviz')],
        condition=IfCondition(LaunchConfiguration('rviz')),
    )
    aggregator = Node(
        package='diagnostic_aggregator', executable='aggregator_node',
        name='diagnostic_aggregator', output='screen',
        condition=IfCondition(LaunchConfiguration('diagnostics_aggregator')),
        parameters=[os.path.join(share, 'config', 'diagnostics_analyzers.yaml')],
    )

    return LaunchDescription(arguments + [
        hardware, rci, rdi, state_publisher, rviz, aggregator])
