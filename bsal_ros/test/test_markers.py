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

"""brak_markers (bsal_ros/nodes/markers.py) beside the simulated hardware node.

The node and a HardwareNode share an executor (as in brak_bringup); a probe
subscribes as a viewer does. Each cone is compared with the Range of the same
stamp on its sonar's topic (its frame, its length, its opening); the path
grows while the robot drives and stops at its bound; nothing is published and
no sonar is subscribed while nobody watches. A second rig feeds the node
Ranges of its own (an echo, none, one that draws no cone, a sonar that falls
silent) to see each become what the docs say.
"""
import math
import uuid

from nav_msgs.msg import Odometry, Path
import pytest
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Range
from visualization_msgs.msg import Marker, MarkerArray

from bsal_ros.nodes.hardware_node import HardwareNode
from bsal_ros.nodes.markers import Markers, STALE_S
from bsal_ros.scene import cone_length, FAN_SEGMENTS, sonar_topic, TRAIL_STEP_M, TRAIL_TURN_RAD
from hardware_node_helpers import Probe, RosEnv, wait_for

pytestmark = pytest.mark.ros

#: timer ticks to let pass before saying that something did not happen
QUIET_TICKS = 10


@pytest.fixture
def env():
    e = RosEnv()
    try:
        yield e
    finally:
        e.close()


def unique(name):
    """A namespace of this run's own (another run in the same domain never crosses it)."""
    return f"/{name}_{uuid.uuid4().hex[:8]}"


def rig(env, ns, trail_size=1000):
    env.hw = env.add(HardwareNode(namespace=ns, context=env.context, auto_home=False))
    env.markers = env.add(Markers(namespace=ns, context=env.context, trail_size=trail_size))
    env.probe = env.add(Probe(env, namespace=ns))
    return env


def quiet_for(node, n=QUIET_TICKS):
    start = node.ticks
    assert wait_for(lambda: node.ticks >= start + n), "the node's timer stopped"


def subscriptions(node):
    """The topics the node subscribes, from the graph."""
    return sorted(t for t, _ in node.get_subscriber_names_and_types_by_node(
        node.get_name(), node.get_namespace()))


def sonar_subscriptions(node):
    """The Range topics the node subscribes, from the graph."""
    return [t for t in subscriptions(node) if "/sonar_" in t]


def length_of(marker):
    return max(math.hypot(p.x, p.y) for p in marker.points)


def opening_of(marker):
    angles = [math.atan2(p.y, p.x) for p in marker.points if (p.x, p.y) != (0.0, 0.0)]
    return max(angles) - min(angles)


def test_nothing_is_published_or_subscribed_while_nobody_watches(env):
    ns = unique("mk_idle")
    rig(env, ns)
    env.probe.listen(Odometry, "odom")
    assert env.probe.wait_msg("odom"), "the hardware node publishes no odometry"
    quiet_for(env.markers)
    assert env.markers.published == {"sonar_cones": 0, "odom_path": 0}
    assert subscriptions(env.markers) == []
    assert env.hw.count_subscribers(f"{ns}/sonar_00") == 0
    group = env.markers.default_callback_group
    entities = len(group.entities)
    # a viewer comes: the sonars and the odometry are subscribed, cones and path published
    cones = env.probe.listen(MarkerArray, "sonar_cones")
    path = env.probe.listen(Path, "odom_path", qos="latched")
    assert env.probe.wait_msg("sonar_cones"), "no cones for a viewer"
    assert env.probe.wait_msg("odom_path", lambda m: m.poses), "no path for a viewer"
    assert subscriptions(env.markers) == [f"{ns}/odom"] + [
        f"{ns}/{sonar_topic(i)}" for i in range(12)]
    # ... and it leaves: the subscriptions go, the trail is forgotten, nothing is published
    env.probe.destroy_subscription(cones)
    env.probe.destroy_subscription(path)
    assert wait_for(lambda: subscriptions(env.markers) == []), subscriptions(env.markers)
    # the dropped subscriptions left no reference in the node's group (each
    # viewer that came and went would grow it by 13 for good)
    assert len(group.entities) == entities, len(group.entities)
    published = dict(env.markers.published)
    quiet_for(env.markers)
    assert env.markers.published == published
    assert len(env.markers.trail) == 0
    assert env.hw.count_subscribers(f"{ns}/sonar_00") == 0
    # a later viewer never gets the old trail: an empty path was latched in its place
    env.probe.clear("odom_path")
    env.probe.listen(Path, "odom_path", qos="latched")
    assert env.probe.wait_msg("odom_path", lambda m: not m.poses), "the old trail was latched"


def test_each_cone_is_its_sonar_s_range_of_the_same_stamp(env):
    rig(env, unique("mk_cones"))
    for i in range(12):
        env.probe.listen(Range, sonar_topic(i), qos="sensor", keep=400)
    env.probe.listen(MarkerArray, "sonar_cones", keep=400)

    def matched():
        """(marker, the Range of its sonar with its stamp) of every array received."""
        ranges = {i: {(m.header.stamp.sec, m.header.stamp.nanosec): m
                      for m in env.probe.kept(sonar_topic(i))} for i in range(12)}
        out = []
        for array in env.probe.kept("sonar_cones"):
            for marker in array.markers:
                rng = ranges[marker.id].get((marker.header.stamp.sec, marker.header.stamp.nanosec))
                if rng is not None:
                    out.append((marker, rng))
        return out
    # every sonar's cone seen against its Range, at least three times each
    assert wait_for(lambda: {m.id for m, _ in matched()} == set(range(12))
                    and len(matched()) >= 36, 30), f"{len(matched())} cones matched"
    drawn = 0
    for marker, rng in matched():
        assert (marker.ns, marker.header.frame_id) == ("sonar", rng.header.frame_id)
        assert rng.header.frame_id == f"{sonar_topic(marker.id)}_link"
        length = cone_length(rng.range, rng.min_range, rng.max_range)
        if length is None:
            assert marker.action == Marker.DELETE, (marker.id, rng.range)
            continue
        assert (marker.type, marker.action) == (Marker.TRIANGLE_LIST, Marker.ADD)
        assert len(marker.points) == 3 * FAN_SEGMENTS
        assert length_of(marker) == pytest.approx(length, abs=1e-9)
        assert opening_of(marker) == pytest.approx(rng.field_of_view, abs=1e-6)
        drawn += 1
    assert drawn, "the simulated room gave no sonar an echo"


def test_the_path_grows_as_the_robot_drives_and_stays_bounded(env):
    rig(env, unique("mk_path"), trail_size=5)
    env.probe.listen(Odometry, "odom", keep=400)
    env.probe.listen(Path, "odom_path", qos="latched", keep=400)
    first = env.probe.wait_msg("odom_path")
    assert first is not None and len(first.poses) >= 1
    res = env.hw.robot.set_motors("dc_motor", [(0, 0, 60.0)])      # duty cycle 60 %
    assert res.ok, res
    try:
        assert wait_for(lambda: env.markers.trail.kept > 8, 60), "the trail did not grow"
        full = env.probe.wait_msg("odom_path", lambda m: len(m.poses) == 5
                                  and m.poses[0].header.stamp != first.poses[0].header.stamp)
    finally:
        env.hw.robot.set_motors("dc_motor", [(0, 0, 0.0)])
    assert full is not None, "the path never held its newest 5 poses"
    lengths = [len(m.poses) for m in env.probe.kept("odom_path")]
    assert lengths == sorted(lengths) and max(lengths) == 5, lengths    # grew, then held
    odom = env.probe.kept("odom")
    assert full.header.frame_id == odom[-1].header.frame_id == "odom"
    assert full.header.stamp == full.poses[-1].header.stamp
    poses = [(p.pose.position.x, p.pose.position.y, p.pose.orientation) for p in full.poses]
    for (x0, y0, q0), (x1, y1, q1) in zip(poses, poses[1:]):
        turned = abs(math.remainder(2 * (math.atan2(q1.z, q1.w) - math.atan2(q0.z, q0.w)),
                                    math.tau))
        assert math.hypot(x1 - x0, y1 - y0) > TRAIL_STEP_M or turned > TRAIL_TURN_RAD
    # each pose is an odometry message's pose, at its stamp
    by_stamp = {(m.header.stamp.sec, m.header.stamp.nanosec): m.pose.pose for m in odom}
    found = 0
    for p in full.poses:
        pose = by_stamp.get((p.header.stamp.sec, p.header.stamp.nanosec))
        if pose is not None:
            assert (p.pose.position.x, p.pose.position.y) == (pose.position.x, pose.position.y)
            found += 1
    assert found >= 4, found


# ------------------------------------------------- ranges the test makes itself
def test_no_echo_a_bad_range_and_a_silent_sonar_draw_no_cone(env, capfd):
    ns = unique("mk_fed")
    markers = env.add(Markers(namespace=ns, context=env.context))
    probe = env.add(Probe(env, namespace=ns))
    probe.listen(MarkerArray, "sonar_cones", keep=400)
    assert wait_for(lambda: len(sonar_subscriptions(markers)) == 12)
    pubs = {i: probe.create_publisher(Range, sonar_topic(i), qos_profile_sensor_data)
            for i in (0, 1, 2)}

    def send(i, rng, fov=0.35):
        msg = Range(field_of_view=fov, min_range=0.15, max_range=5.0, range=rng)
        msg.header.frame_id = f"{sonar_topic(i)}_link"
        msg.header.stamp.sec = 100 + i
        pubs[i].publish(msg)

    def last_of(i):
        array = probe.last("sonar_cones")
        return next((m for m in array.markers if m.id == i), None) if array else None

    def feed(*sonars):
        """Send a Range of each sonar named: an echo at 1.5 m, none, or one of no width."""
        for i in sonars:
            send(i, *{0: (1.5,), 1: (math.inf,), 2: (2.0, 0.0)}[i])

    def fed():
        feed(0, 1, 2)
        return all(last_of(i) is not None for i in (0, 1, 2))
    assert wait_for(fed, step=0.1), "the node drew nothing of the ranges fed to it"
    echo, none, bad = (last_of(i) for i in (0, 1, 2))
    assert (echo.type, echo.action) == (Marker.TRIANGLE_LIST, Marker.ADD)
    assert length_of(echo) == pytest.approx(1.5)
    assert opening_of(echo) == pytest.approx(0.35)
    assert echo.header.stamp.sec == 100 and echo.header.frame_id == "sonar_00_link"
    assert none.action == Marker.DELETE and none.header.frame_id == "sonar_01_link"
    assert bad.action == Marker.DELETE
    # sonar 0 falls silent: after STALE_S its cone is deleted, then it is forgotten
    probe.clear("sonar_cones")

    def deleted():
        feed(1, 2)
        m = last_of(0)
        return m is not None and m.action == Marker.DELETE
    assert wait_for(deleted, STALE_S + 30, step=0.1), "a silent sonar kept its cone"
    n = len(probe.kept("sonar_cones"))
    assert wait_for(lambda: feed(1, 2) or len(probe.kept("sonar_cones")) >= n + 3, step=0.1)
    assert all(m.id != 0 for array in probe.kept("sonar_cones")[n:] for m in array.markers)
    # the Range of no width came dozens of times and was said once
    assert markers.refused == {2}
    assert capfd.readouterr().err.count("sonar_02: no cone drawn") == 1
