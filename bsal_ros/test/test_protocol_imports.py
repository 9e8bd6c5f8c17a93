"""bsal_ros.protocol is pure: no ROS, no sockets, no event loops (docs/DEVELOPING.md, Layers)."""

import ast
import pathlib

import bsal_ros.protocol

FORBIDDEN_TOP = {"rclpy", "rcl", "rclcpp", "rosidl_runtime_py", "launch", "launch_ros",
                 "socket", "socketserver", "asyncio", "selectors", "ssl", "bsal_interfaces",
                 "builtin_interfaces", "std_msgs", "sensor_msgs", "geometry_msgs", "nav_msgs",
                 "diagnostic_msgs", "rcl_interfaces", "ament_index_python"}


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
            if node.args and isinstance(node.args[0], ast.Constant):
                yield str(node.args[0].value)


def test_protocol_imports_no_ros_or_sockets():
    root = pathlib.Path(bsal_ros.protocol.__file__).parent
    files = sorted(root.rglob("*.py"))
    assert len(files) >= 5
    for f in files:
        for name in _imports(ast.parse(f.read_text(), str(f))):
            top = name.split(".")[0]
            assert top not in FORBIDDEN_TOP, f"{f.name} imports {name}"
            assert not top.endswith(("_msgs", "_srvs", "_interfaces")), f"{f.name} imports {name}"
            assert not top.startswith(("rcl", "ros")), f"{f.name} imports {name}"
