"""The repository is what a ROS user expects: two packages colcon can find."""
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_package_xml_declares_the_runtime_dependencies():
    root = ET.parse(ROOT / 'package.xml').getroot()
    assert root.get('format') == '3'
    assert root.findtext('name') == 'bsal_ros'
    exec_deps = {e.text for e in root.findall('exec_depend')}
    for dep in ('rclpy', 'sensor_msgs', 'geometry_msgs', 'nav_msgs', 'diagnostic_msgs',
                'std_srvs', 'bsal_interfaces', 'python3-smbus2', 'launch', 'launch_ros'):
        assert dep in exec_deps, dep
    assert 'python3-pytest' in {e.text for e in root.findall('test_depend')}
    assert root.find('export/build_type').text == 'ament_python'


def test_interfaces_package_is_an_ament_cmake_rosidl_package():
    root = ET.parse(ROOT / 'bsal_interfaces' / 'package.xml').getroot()
    assert root.find('export/build_type').text == 'ament_cmake'
    assert root.findtext('member_of_group') == 'rosidl_interface_packages'
    cmake = (ROOT / 'bsal_interfaces' / 'CMakeLists.txt').read_text()
    for kind in ('msg', 'srv', 'action'):
        for f in (ROOT / 'bsal_interfaces' / kind).iterdir():
            assert f'"{kind}/{f.name}"' in cmake, f'{f.name} is not generated'


def test_ament_marker_and_setup_cfg_script_dir():
    assert (ROOT / 'resource' / 'bsal_ros').is_file()
    cfg = (ROOT / 'setup.cfg').read_text()
    assert 'script_dir=$base/lib/bsal_ros' in cfg
    assert 'install_scripts=$base/lib/bsal_ros' in cfg


def test_readme_colcon_command_finds_both_packages(tmp_path):
    colcon = shutil.which('colcon') or str(Path(sys.executable).with_name('colcon'))
    assert os.access(colcon, os.X_OK), 'colcon-core is installed by make setup'
    # Reproduce the README's workspace: <ws>/src/bsal_ros is this repository.
    src = tmp_path / 'src'
    src.mkdir()
    (src / 'bsal_ros').symlink_to(ROOT)
    out = subprocess.run(
        [colcon, 'list', '--base-paths', 'src/bsal_ros', 'src/bsal_ros/bsal_interfaces'],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True).stdout
    found = {line.split()[0]: line.split()[-1] for line in out.splitlines() if line.strip()}
    assert found == {'bsal_ros': '(ros.ament_python)', 'bsal_interfaces': '(ros.ament_cmake)'}


@pytest.mark.parametrize('script', ['hardware_node', 'rci_gateway', 'rdi_gateway',
                                    'brak_bringup', 'rdi_viewer', 'brak_drive'])
def test_console_scripts_resolve(script):
    """Every console script named in setup.py points at a real main()."""
    import importlib
    import re
    text = (ROOT / 'setup.py').read_text()
    target = re.search(rf"'{script} = ([\w.]+):(\w+)'", text)
    assert target, script
    module = importlib.import_module(target.group(1))
    assert callable(getattr(module, target.group(2)))


def test_make_uses_the_domain_it_prints():
    """The Makefile draws one ROS_DOMAIN_ID per run; what it prints is what it uses."""
    env = {k: v for k, v in os.environ.items() if k not in ('ROS_DOMAIN_ID', 'MAKEFLAGS', 'MAKELEVEL')}
    for _ in range(3):
        out = subprocess.run(['make', '-s', '-C', str(ROOT), 'print-domain'], env=env,
                             capture_output=True, text=True, timeout=30, check=True).stdout.split()
        assert len(out) == 2 and out[0] == out[1], out
        assert 1 <= int(out[0]) <= 100
    env['ROS_DOMAIN_ID'] = '42'
    out = subprocess.run(['make', '-s', '-C', str(ROOT), 'print-domain'], env=env,
                         capture_output=True, text=True, timeout=30, check=True).stdout.split()
    assert out == ['42', '42']
