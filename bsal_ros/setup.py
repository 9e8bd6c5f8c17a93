"""ament_python package bsal_ros (see README.md)."""
from glob import glob

from setuptools import find_packages, setup

package_name = 'bsal_ros'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench', 'bench.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config',
         glob('config/*.yaml') + glob('config/*.rviz') + glob('config/*.urdf')),
        ('share/' + package_name + '/wireshark', ['bsal_ros/wireshark/bsal.lua']),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='bsal_ros maintainers',
    maintainer_email='bsal-ros@brak-robot.org',
    description='ROS 2 bridge for the Brak robot and its legacy BSAL RCI/RDI protocols.',
    license='Apache-2.0',
    # colcon test picks pytest only when it sees this extra (setuptools ignores tests_require)
    extras_require={'test': ['pytest']},
    entry_points={
        'console_scripts': [
            'hardware_node = bsal_ros.nodes.hardware_node:main',
            'rci_gateway = bsal_ros.nodes.rci_gateway:main',
            'rdi_gateway = bsal_ros.nodes.rdi_gateway:main',
            'brak_bringup = bsal_ros.nodes.bringup:main',
            'rdi_viewer = bsal_ros.viewer:main',
            'brak_drive = bsal_ros.tools.drive:main',
            'brak_wire = bsal_ros.tools.wire:main',
        ],
    },
)
