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

"""launch/brak.launch.py, read with ast: its shape, on every machine.

The file must stay loadable by ``ros2 launch`` on a ROS 2 install: it imports
only ``launch``, ``launch_ros`` and the pure-Python URDF generator
``bsal_ros.description``, declares every argument it reads (and reads every
argument it declares), names only installed executables and only files the
package installs. test/test_ros2_launch.py runs it for real where
../shared/ros2-tools provides ``ros2 launch``.
"""
import ast
import fnmatch
from pathlib import Path
import re

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ROOT / "launch" / "brak.launch.py"
ALLOWED_IMPORTS = {"launch", "launch_ros", "bsal_ros"}


@pytest.fixture(scope="module")
def tree():
    return ast.parse(LAUNCH.read_text(encoding="utf-8"), filename=str(LAUNCH))


def _name(func):
    """The called name of ``DeclareLaunchArgument(...)`` or ``x.DeclareLaunchArgument(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _calls(tree, name):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) == name]


def _first_str(call):
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    for kw in call.keywords:
        if kw.arg == "name" and isinstance(kw.value, ast.Constant):
            return kw.value.value
    return None


def _kw(call, key):
    return next((kw.value for kw in call.keywords if kw.arg == key), None)


def _declaring_helpers(tree):
    """Local functions such as ``def arg(...): return DeclareLaunchArgument(name, ...)``."""
    helpers = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or not fn.args.args:
            continue
        first = fn.args.args[0].arg
        for call in _calls(fn, "DeclareLaunchArgument"):
            if call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == first:
                helpers.add(fn.name)
    return helpers


def declared_arguments(tree):
    """{name: (default node, description node)} of every declared launch argument."""
    out = {}
    for fname in {"DeclareLaunchArgument"} | _declaring_helpers(tree):
        for call in _calls(tree, fname):
            name = _first_str(call)
            if name is None:
                continue  # the helper's own body: DeclareLaunchArgument(name, ...)
            assert name not in out, f"launch argument {name} declared twice"
            if fname == "DeclareLaunchArgument":
                default, description = _kw(call, "default_value"), _kw(call, "description")
            else:
                rest = call.args[1:] + [kw.value for kw in call.keywords]
                default, description = (rest + [None, None])[:2]
            out[name] = (default, description)
    return out


def override_tables(tree):
    """{argument: parameter} of the module-level ``*_OVERRIDES`` tables."""
    out = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                and node.targets[0].id.endswith("_OVERRIDES")):
            for k, v in zip(node.value.keys, node.value.values):
                out[k.value] = v.elts[0].value
    return out


def used_arguments(tree):
    """Arguments read by a constant ``LaunchConfiguration('x')`` or through an overrides table."""
    given = {c.args[1].value for c in _calls(tree, "_given")
             if len(c.args) > 1 and isinstance(c.args[1], ast.Constant)}
    return ({_first_str(c) for c in _calls(tree, "LaunchConfiguration")} - {None}
            | set(override_tables(tree)) | given)


def computed_configurations(tree):
    """Functions that build ``LaunchConfiguration(name)`` from a variable."""
    out = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef):
            for call in _calls(fn, "LaunchConfiguration"):
                if _first_str(call) is None:
                    out.add(fn.name)
    return out


def share_paths(tree):
    """Relative paths built as ``PathJoinSubstitution([SHARE, 'config', 'x.yaml'])``."""
    paths = set()
    for call in _calls(tree, "PathJoinSubstitution"):
        parts = call.args[0].elts if call.args and isinstance(call.args[0], ast.List) else []
        if (parts and isinstance(parts[0], ast.Name) and parts[0].id == "SHARE"
                and all(isinstance(a, ast.Constant) for a in parts[1:])):
            paths.add("/".join(a.value for a in parts[1:]))
    return paths


def nodes(tree):
    out = []
    for call in _calls(tree, "Node"):
        kw = {k.arg: k.value for k in call.keywords}
        out.append({k: v.value for k, v in kw.items()
                   if isinstance(v, ast.Constant)} | {"_call": call})
    return out


def setup_data_globs():
    """(destination folder, pattern) of every ``glob('...')`` in setup.py's data_files."""
    out = []
    setup_tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for tup in ast.walk(setup_tree):
        if isinstance(tup, ast.Tuple) and len(tup.elts) == 2:
            for call in _calls(tup.elts[1], "glob"):
                out.append(call.args[0].value)
            if isinstance(tup.elts[1], ast.List):
                out += [e.value for e in tup.elts[1].elts if isinstance(e, ast.Constant)]
    return out


def console_scripts():
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    return set(re.findall(r"[\"']([A-Za-z0-9_]+)\s*=\s*[\w.]+:\w+[\"']", text))


def test_imports_only_launch_launch_ros_and_the_urdf_generator(tree):
    modules = set()
    full = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            modules |= {a.name.split(".")[0] for a in n.names}
            full |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            assert n.level == 0, "no relative imports in a launch file"
            modules.add(n.module.split(".")[0])
            full.add(n.module)
    assert modules <= ALLOWED_IMPORTS, modules - ALLOWED_IMPORTS
    assert {"launch", "launch_ros"} <= modules
    # from bsal_ros only the pure-Python generators (no rclpy in the launch process): the
    # URDF and parameters, the aggregator's analyzers from the device-kind plugins, and
    # the Fast DDS profile's environment
    assert {m for m in full if m.startswith("bsal_ros")} <= {
        "bsal_ros.description.config", "bsal_ros.kinds.diagnostics_config",
        "bsal_ros.dds_profile"}


def test_has_generate_launch_description(tree):
    fns = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert "generate_launch_description" in fns


def test_every_argument_read_is_declared_and_every_declared_one_is_read(tree):
    declared = declared_arguments(tree)
    used = used_arguments(tree)
    # a computed name only in the one helper that reads the overrides tables' arguments
    assert computed_configurations(tree) <= {"_given"}
    assert used - set(declared) == set(), "read but not declared"
    assert set(declared) - used == set(), "declared but never read"


def test_every_argument_has_a_default_and_a_description(tree):
    for name, (default, description) in declared_arguments(tree).items():
        assert default is not None, name
        assert description is not None, name
        if isinstance(description, ast.Constant):
            assert description.value.strip(), name


def test_the_arguments_for_watching_the_robot_exist(tree):
    declared = declared_arguments(tree)
    for name, default in (("rviz", "false"), ("diagnostics_aggregator", "false"),
                          ("robot_state_publisher", "true"), ("markers", "true"),
                          ("namespace", "")):
        assert name in declared, name
        assert isinstance(declared[name][0], ast.Constant) and declared[name][0].value == default


def test_docstring_examples_use_declared_arguments(tree):
    doc = ast.get_docstring(tree) or ""
    named = set(re.findall(r"(\w+):=", doc))
    assert named, "the docstring shows how to start the launch file"
    assert named <= set(declared_arguments(tree)), named - set(declared_arguments(tree))


def test_optional_nodes_are_behind_their_arguments(tree):
    by_package = {n.get("package"): n for n in nodes(tree)}
    by_executable = {n.get("executable"): n for n in nodes(tree)}
    cond = _kw(by_executable["brak_markers"]["_call"], "condition")
    assert {_first_str(c) for c in _calls(cond, "LaunchConfiguration")} == {"markers"}
    for package, argument in (("robot_state_publisher", "robot_state_publisher"),
                              ("rviz2", "rviz"),
                              ("diagnostic_aggregator", "diagnostics_aggregator")):
        assert package in by_package, package
        cond = _kw(by_package[package]["_call"], "condition")
        assert cond is not None and _name(cond.func) == "IfCondition", package
        assert {_first_str(c) for c in _calls(cond, "LaunchConfiguration")} == {argument}


def test_our_executables_are_console_scripts(tree):
    scripts = console_scripts()
    ours = [n["executable"] for n in nodes(tree) if n.get("package") == "bsal_ros"]
    assert ours and set(ours) <= scripts, set(ours) - scripts


def test_every_file_read_from_the_share_exists_and_is_installed(tree):
    paths = share_paths(tree)
    expected = {"config/brak.rviz", "config/diagnostics_analyzers.yaml", "config/brak.yaml",
                "config/gateways.yaml", "config/fastdds_robot.xml"}
    assert expected <= paths, expected - paths
    patterns = setup_data_globs()
    for rel in sorted(paths):
        assert (ROOT / rel).is_file(), f"{rel} is read by the launch file but missing"
        assert any(fnmatch.fnmatch(rel, p) for p in patterns), f"setup.py does not install {rel}"


def test_viewers_get_our_files(tree):
    by_package = {n.get("package"): n["_call"] for n in nodes(tree)}
    rviz_args = _kw(by_package["rviz2"], "arguments")
    assert "-d" in [e.value for e in rviz_args.elts if isinstance(e, ast.Constant)]
    assert share_paths(rviz_args) == {"config/brak.rviz"}
    agg_params = _kw(by_package["diagnostic_aggregator"], "parameters")
    assert share_paths(agg_params) == {"config/diagnostics_analyzers.yaml"}
    # when it runs, its analyzers are generated from every installed kind plugin
    assert "write_analyzers_file" in {c.func.id for c in ast.walk(agg_params)
                                      if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
    # robot_state_publisher gets the URDF text as its robot_description parameter
    rsp_params = _kw(by_package["robot_state_publisher"], "parameters")
    keys = {k.value for d in ast.walk(rsp_params) if isinstance(d, ast.Dict)
            for k in d.keys if isinstance(k, ast.Constant)}
    assert "robot_description" in keys
    # generated at launch time from the config in use, not the committed file
    assert "config/brak.urdf" not in share_paths(tree)
    assert "urdf_of(config)" in LAUNCH.read_text(encoding="utf-8")


def test_our_nodes_get_only_the_arguments_that_were_given_after_their_file(tree):
    """The defect of issue 12: a dict of LaunchConfigurations after the YAML file put
    every argument's default over the file. Only the overrides of given arguments follow."""
    for node in nodes(tree):
        if node.get("package") != "bsal_ros":
            continue
        params = _kw(node["_call"], "parameters")
        assert isinstance(params, ast.List) and isinstance(params.elts[0], ast.Name), \
            "the params file comes first"
        assert not _calls(params, "LaunchConfiguration"), ast.unparse(params)


def test_argument_defaults_that_would_override_a_file_are_empty(tree):
    declared = declared_arguments(tree)
    for argument in set(override_tables(tree)) | {"frame_prefix"}:
        default = declared[argument][0]
        assert isinstance(default, ast.Constant) and default.value == "", argument


def test_enumerated_arguments_declare_their_choices():
    """ros2 launch refuses a misspelt switch (rviz:=ture) instead of reading it as false."""
    pytest.importorskip("launch_ros", reason="launch/launch_ros come from ../shared/ros2-tools")
    import importlib.util
    spec = importlib.util.spec_from_file_location("brak_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = {a.name: a for a in module.generate_launch_description().entities
            if hasattr(a, "choices")}
    for name in ("use_sim_time", "rci", "rdi", "foxglove", "markers", "robot_state_publisher",
                 "rviz", "diagnostics_aggregator", "dds_profile"):
        assert args[name].choices == ["true", "false"], name
    assert args["bus_backend"].choices == ["", "sim", "smbus2", "ros_base"]


def test_launch_never_sigterms_our_nodes_before_their_own_stop_bound(tree):
    """launch's SIGTERM (default 5 s after SIGINT) must not cut a clean stop
    short: every bsal_ros node waits the runtime's bound."""
    from bsal_ros.nodes.runtime import SHUTDOWN_BOUND_S
    bound = [n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
             and any(getattr(t, "id", None) == "STOP_BOUND_S" for t in n.targets)]
    assert bound and float(bound[0]) == SHUTDOWN_BOUND_S, bound
    ours = [n for n in nodes(tree) if n.get("package") == "bsal_ros"]
    assert len(ours) == 5, ours
    for n in ours:
        timeout = _kw(n["_call"], "sigterm_timeout")
        assert getattr(timeout, "id", None) == "STOP_BOUND_S", n.get("executable")


def test_every_node_gets_the_dds_profile_environment(tree):
    """Issue 28: each process the launch starts gets _dds_env's variables."""
    for node in nodes(tree):
        env = _kw(node["_call"], "additional_env")
        assert isinstance(env, ast.Name) and env.id == "dds_env", node.get("executable")


def _launch_module():
    pytest.importorskip("launch_ros", reason="launch/launch_ros come from ../shared/ros2-tools")
    import importlib.util
    spec = importlib.util.spec_from_file_location("brak_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_launch_gives_the_shipped_profile_unless_told_not_to(monkeypatch):
    """dds_profile:=true (default): the installed share/bsal_ros/config/fastdds_robot.xml;
    dds_profile:=false, BSAL_DDS_PROFILE=0 or the user's own file: nothing added."""
    from bsal_ros.dds_profile import PROFILES_VAR, SWITCH_VAR
    module = _launch_module()
    from launch import LaunchContext
    monkeypatch.delenv(PROFILES_VAR, raising=False)
    monkeypatch.delenv(SWITCH_VAR, raising=False)

    def env_of(switch):
        ctx = LaunchContext()
        ctx.launch_configurations["dds_profile"] = switch
        return module._dds_env(ctx)
    try:
        given = env_of("true")
    except Exception as exc:   # noqa: BLE001 - no ament index entry for bsal_ros here
        pytest.skip(f"bsal_ros share not found ({exc}); make setup registers it")
    path = Path(given[PROFILES_VAR])
    assert path.parts[-4:] == ("share", "bsal_ros", "config", "fastdds_robot.xml"), path
    assert path.is_file()
    assert env_of("false") == {}
    monkeypatch.setenv(SWITCH_VAR, "0")
    assert env_of("true") == {}
    monkeypatch.setenv(SWITCH_VAR, "1")
    monkeypatch.setenv(PROFILES_VAR, "/etc/my_dds.xml")
    assert env_of("true") == {}
