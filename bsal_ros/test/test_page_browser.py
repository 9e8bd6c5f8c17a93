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

"""Brak's page (docs/PAGE.md) in a real browser, against the running bridge.

Debian's chromium, headless, driven by Playwright (test/page_browser.py), opens
the page that ``brak_bringup``'s Foxglove gateway serves; an rclpy node in
this process watches the same robot. What the page shows is read from its
DOM: the figures' text, and the drawing's SVG attributes (a cone's arc radius
is its length in metres), never a screenshot's pixels. Every test also checks
that the page wrote no error to its console.

The drives run with the hardware node's ``cmd_vel_timeout`` at 3 s, so a
robot that stops within 0.5 s of a release or of Stop was stopped by the
page's zero twist, not by the node's timeout. The 0.5 s run from the moment
the page sent that zero (its wall clock, as the drive board's stamps), not
from the moment the test asked Playwright to press: Playwright's own steps
(actionability checks, round trips) are not the page's.
"""

import math
import re
import subprocess
import threading
import time

import pytest

from page_browser import chromium, Console, DESKTOP, page_url, PHONE, unavailable, until
from test_bringup import Bridge, CLIENT_APP

pytestmark = [pytest.mark.ros, pytest.mark.slow,
              pytest.mark.skipif(bool(unavailable()), reason=unavailable() or "-")]

#: the hardware node's cmd_vel timeout in these bridges (its default is 0.5 s)
CMD_VEL_TIMEOUT = "3.0"
#: the longest a stop may take after the page's release or Stop (issue 51)
STOP_BOUND_S = 0.5
#: the longest the page may take to show a login or a logout (issue 51)
SESSION_BOUND_S = 1.0
#: the longest the page may take to show a lost connection (issue 51)
BANNER_BOUND_S = 2.0
DEMO_KEY = "0123456789abcdef0123456789abcdef"
ARC = re.compile(r"M0 0 L(-?[\d.e-]+) (-?[\d.e-]+) A([\d.e-]+) ([\d.e-]+) 0 0 1 "
                 r"(-?[\d.e-]+) (-?[\d.e-]+) Z")


def stamp_key(stamp) -> str:
    return f"{stamp.sec}.{stamp.nanosec:09d}"


class RosWatch:
    """An rclpy node in this process watching the robot the page shows."""

    def __init__(self):
        import rclpy
        import rclpy.context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
        from bsal_interfaces.msg import DeviceStateArray
        from geometry_msgs.msg import Twist
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import Range
        from std_msgs.msg import String
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("page_watch", context=self.context)
        self.lock = threading.Lock()
        self.ranges: dict[str, dict[str, object]] = {}
        self.odom: list = []
        self.cmd_vel: list = []
        self.drive: list = []           # (receipt, stamp s, speedval, speed) of dc_motor 0
        self.session: list = []
        n = self.node
        for i in range(12):
            topic = f"/sonar_{i:02d}"
            self.ranges[topic] = {}
            n.create_subscription(Range, topic, lambda m, t=topic: self._range(t, m),
                                  qos_profile_sensor_data)
        n.create_subscription(Odometry, "/odom", self._odom, 50)
        n.create_subscription(Twist, "/cmd_vel", self._twist, 50)
        n.create_subscription(DeviceStateArray, "/motor_states", self._motors, 50)
        n.create_subscription(String, "/rci/session", self._session, QoSProfile(
            depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(n)
        self._stop = False
        self.thread = threading.Thread(target=self._spin, name="page-watch", daemon=True)
        self.thread.start()

    def _spin(self):
        while not self._stop and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def _range(self, topic, msg):
        with self.lock:
            self.ranges[topic][stamp_key(msg.header.stamp)] = msg

    def _odom(self, msg):
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        with self.lock:
            self.odom.append((time.time(), stamp, msg.pose.pose.position.x,
                              msg.pose.pose.position.y, msg.twist.twist.linear.x))

    def _twist(self, msg):
        with self.lock:
            self.cmd_vel.append((time.time(), msg.linear.x, msg.angular.z))

    def _motors(self, msg):
        for s in msg.states:
            if s.device_class == "dc_motor" and s.id == 0:
                stamp = s.header.stamp.sec + s.header.stamp.nanosec * 1e-9
                with self.lock:
                    self.drive.append((time.time(), stamp, s.speedval, s.speed))

    def _session(self, msg):
        with self.lock:
            self.session.append((time.time(), msg.data))

    def wait(self, what, predicate, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                value = predicate()
            if value:
                return value
            time.sleep(0.02)
        raise AssertionError(f"{what}: not seen within {timeout} s")

    def close(self):
        import rclpy
        self._stop = True
        self.thread.join(5)
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope="module")
def bridge():
    b = Bridge("--duration", "900", "--ros-args", "-p", f"cmd_vel_timeout:={CMD_VEL_TIMEOUT}")
    yield b
    b.stop()


@pytest.fixture(scope="module")
def ros(bridge):
    watch = RosWatch()
    yield watch
    watch.close()


@pytest.fixture(scope="module")
def browser():
    with chromium() as context:
        yield context


@pytest.fixture
def page(browser, bridge):
    """The page, open and drawing the robot; its console checked at the end."""
    p = browser.new_page()
    console = Console(p)
    p.goto(page_url(bridge))
    wait_drawn(p)
    p.console = console
    yield p
    p.close()
    assert console.errors == [], console.errors


def wait_drawn(p, timeout_ms=30000):
    """Until the robot is drawn from its description with its twelve cones."""
    until(p, "document.querySelectorAll('[data-link]').length > 10 && "
          "document.querySelectorAll('path.cone[d]').length === 12",
          timeout=timeout_ms)


SNAPSHOT = """() => [...document.querySelectorAll('#sonars tbody tr')].map(tr => {
  const cone = document.querySelector(`path.cone[data-topic="${tr.dataset.topic}"]`);
  return {topic: tr.dataset.topic, text: tr.cells[1].textContent,
          stamp: tr.cells[1].dataset.stamp, state: tr.cells[1].dataset.state,
          d: cone ? cone.getAttribute('d') : null,
          cls: cone ? cone.getAttribute('class') : null,
          link: cone ? cone.parentNode.dataset.link : null};
})"""


def cone_of(d):
    """(length m, field of view rad) of a cone's path."""
    m = ARC.fullmatch(d)
    assert m, d
    x, y, rx, ry = (float(v) for v in m.groups()[:4])
    assert rx == ry
    return rx, 2 * math.atan2(-y, x) if rx else 0.0


def test_the_twelve_sonar_figures_and_cones_are_what_ros_receives(page, ros):
    matched: dict[str, tuple] = {}
    deadline = time.monotonic() + 30
    while len(matched) < 12 and time.monotonic() < deadline:
        rows = page.evaluate(SNAPSHOT)
        assert [r["topic"] for r in rows] == [f"/sonar_{i:02d}" for i in range(12)]
        for r in rows:
            with ros.lock:
                msg = ros.ranges[r["topic"]].get(r["stamp"])
            if msg is not None and r["state"] == "ok":
                matched[r["topic"]] = (r, msg)
        time.sleep(0.2)
    assert len(matched) == 12, f"figures matched to an rclpy message: {sorted(matched)}"
    for topic, (r, msg) in matched.items():
        length, fov = cone_of(r["d"])
        assert abs(fov - msg.field_of_view) < 1e-3, (topic, fov)
        assert msg.header.frame_id.endswith(r["link"]), (topic, r["link"])
        if math.isfinite(msg.range) and msg.range < msg.max_range:
            shown = float(r["text"].removesuffix(" m"))
            assert abs(shown - msg.range) <= 0.01, (topic, r["text"], msg.range)
            assert abs(length - msg.range) <= 0.01, (topic, length, msg.range)
            assert "no-echo" not in r["cls"]
        else:
            assert r["text"] == "no echo", (topic, r["text"], msg.range)
            assert abs(length - msg.max_range) <= 0.01 and "no-echo" in r["cls"]


def drive_commands_after(ros, t):
    with ros.lock:
        return [(rx, stamp, sv, speed) for rx, stamp, sv, speed in ros.drive if stamp >= t]


def assert_homed(bridge):
    """The steering has homed (the simulated robot's auto-home at start-up): cmd_vel
    turns the drive wheel only then."""
    if not any("auto-home done" in line for line in bridge.lines):
        outcome = bridge.wait_for(re.compile(r"auto-home (done|failed.*)"), timeout=120)
        assert outcome.group(1) == "done", bridge.recent()


def wait_driving(ros, bridge, since, timeout=15):
    """Until the drive motor is commanded to turn (a motor_states reading after ``since``)."""
    try:
        return ros.wait("the drive motor turning",
                        lambda: [d for d in ros.drive if d[1] >= since and d[3] != 0.0], timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the bridge said:\n{bridge.recent()}") from None


def zero_sent_after(page, count):
    """Wall time (s) at which the page sent its stop: the first zero after ``count`` of them."""
    until(page, f"brakPage.pad.zeros > {count}", timeout=10000, polling=20)
    return page.evaluate("brakPage.pad.zeroAt") / 1000.0


def first_stop_after(ros, t, timeout=5):
    """Stamp (s) of the first dc_motor 0 reading with speed 0 read after ``t``."""
    stops = ros.wait("the drive motor stopped",
                     lambda: [d for d in ros.drive if d[1] >= t and d[3] == 0.0], timeout)
    return stops[0][1]


@pytest.mark.alone    # times a bound
def test_holding_the_up_arrow_drives_and_releasing_it_stops_the_robot(page, ros, bridge):
    assert_homed(bridge)
    with ros.lock:
        x0 = ros.odom[-1][2]
        n_twists = len(ros.cmd_vel)
    page.locator("body").click(position={"x": 5, "y": 5})    # the page has the keyboard
    zeros = page.evaluate("brakPage.pad.zeros")
    t_press = time.time()
    page.keyboard.down("ArrowUp")
    wait_driving(ros, bridge, t_press)
    time.sleep(1.0)
    page.keyboard.up("ArrowUp")
    t_release = zero_sent_after(page, zeros)
    stopped = first_stop_after(ros, t_release)
    assert stopped - t_release <= STOP_BOUND_S, f"stopped {stopped - t_release:.2f} s after"
    # the page sent forward twists while held, then a zero: the robot came to rest ahead
    with ros.lock:
        twists = ros.cmd_vel[n_twists:]
    assert any(x > 0 for _, x, _ in twists) and twists[-1][1:] == (0.0, 0.0), twists[-5:]
    rest = ros.wait("odometry at rest", lambda: [o for o in ros.odom if o[1] > stopped + 1.0
                                                 and abs(o[4]) < 1e-3], 10)
    assert rest[0][2] - x0 > 0.05, f"odometry moved {rest[0][2] - x0:.3f} m"
    until(page, "document.getElementById('speed').textContent === '0.00 m/s'",
          timeout=10000)


@pytest.mark.alone    # times a bound
def test_the_stop_button_stops_a_drive(page, ros, bridge):
    assert_homed(bridge)
    page.locator("body").click(position={"x": 5, "y": 5})
    zeros = page.evaluate("brakPage.pad.zeros")
    t_press = time.time()
    page.keyboard.down("ArrowUp")
    try:
        wait_driving(ros, bridge, t_press)
        page.locator("#stop").click()
        t_stop = zero_sent_after(page, zeros)
        stopped = first_stop_after(ros, t_stop)
        assert stopped - t_stop <= STOP_BOUND_S, f"stopped {stopped - t_stop:.2f} s after"
        # the key is still held: after its zero the page sends nothing more until the
        # key is pressed again (a twist sent before the click may still arrive first)
        time.sleep(1.0)
        with ros.lock:
            after = [x for rx, x, _ in ros.cmd_vel if rx > t_stop]
        assert 0.0 in after, after
        assert all(x == 0.0 for x in after[after.index(0.0):]), after
        assert drive_commands_after(ros, stopped)[-1][3] == 0.0
    finally:
        page.keyboard.up("ArrowUp")


@pytest.mark.alone    # times a bound
def test_a_legacy_control_application_is_shown_logged_in_and_out(page, ros, bridge):
    if not CLIENT_APP.exists():
        pytest.fail("legacy/build/client-app is not built (make setup builds it)")
    with ros.lock:
        seen = len(ros.session)
    app = subprocess.Popen([str(CLIENT_APP), "127.0.0.1", bridge.ports[0], "demo", DEMO_KEY],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        until(page, "document.getElementById('ca-user').textContent === 'demo'",
              timeout=60000, polling=20)
        shown = time.time()
        login = ros.wait("connected on rci/session", lambda: [
            s for s in ros.session[seen:] if s[1].startswith("connected demo")], 10)[0]
        assert shown - login[0] <= SESSION_BOUND_S, f"shown {shown - login[0]:.2f} s after"
        assert page.locator("#ca-session").inner_text() == "a control application is logged in"
        assert page.locator("#ca-from").inner_text().startswith("127.0.0.1:")
        assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\d+ s ago\)",
                        page.locator("#ca-since").inner_text())
        until(page, "document.getElementById('ca-devices').textContent"
              ".includes('ultrasonic')", timeout=30000)
        until(page, "document.getElementById('ca-user').textContent === '-'",
              timeout=60000, polling=20)
        gone = time.time()
        logout = ros.wait("closed on rci/session", lambda: [
            s for s in ros.session[seen:] if s[1].startswith("closed")], 10)[0]
        assert gone - logout[0] <= SESSION_BOUND_S, f"shown {gone - logout[0]:.2f} s after"
        assert page.locator("#ca-session").inner_text() == "no control application logged in"
        assert page.locator("#ca-last").inner_text() == logout[1]
        out, _ = app.communicate(timeout=60)
        assert app.returncode == 0, out
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()


def test_no_horizontal_scroll_at_phone_and_desktop_widths(page):
    for size in (PHONE, DESKTOP):
        page.set_viewport_size(size)
        page.wait_for_timeout(300)
        widths = page.evaluate("""() => {
          const inside = [...document.querySelectorAll('body *')].filter(e => !e.closest('svg'));
          return {scroll: document.documentElement.scrollWidth, client: window.innerWidth,
                  right: Math.max(...inside.map(e => e.getBoundingClientRect().right))};
        }""")
        assert widths["scroll"] <= widths["client"], (size, widths)
        assert widths["right"] <= widths["client"] + 0.5, (size, widths)


def test_every_control_is_labelled_and_reachable_by_keyboard(page):
    buttons = page.locator("button")
    assert buttons.count() == 5
    for i in range(buttons.count()):
        b = buttons.nth(i)
        assert b.get_attribute("aria-label") or b.inner_text().strip()
        assert b.is_enabled()          # driving is allowed on loopback
    page.locator("body").click(position={"x": 5, "y": 5})
    focused = set()
    for _ in range(8):
        page.keyboard.press("Tab")
        focused.add(page.evaluate("document.activeElement.getAttribute('aria-label')"))
    assert {"Forward (hold, or hold the up arrow key)", "Stop the robot"} <= focused


def test_health_shows_each_device_s_diagnostics_and_each_topic_fresh(page):
    until(page, "document.querySelectorAll('#diagnostics tbody tr').length >= 17",
          timeout=15000)
    rows = page.evaluate("""() => [...document.querySelectorAll('#diagnostics tbody tr')]
        .map(tr => [...tr.cells].map(c => c.textContent))""")
    names = {r[0] for r in rows}
    assert {"bus", "ultrasonic 0", "ultrasonic 11", "dc_motor 0", "pservo_motor 0"} <= names
    assert all(r[1] in ("OK", "WARN", "ERROR", "STALE") for r in rows), rows
    until(page, "[...document.querySelectorAll('#topics tbody tr')]"
          ".filter(tr => tr.dataset.state === 'ok').length >= 16",
          timeout=15000)


def test_driving_disallowed_disables_the_pad_and_the_gateway_refuses_a_console_publish(
        browser, ros):
    from geometry_msgs.msg import Twist, Vector3
    from rclpy.serialization import serialize_message
    # a second bridge in another namespace: its gateway allows no client publish
    ns = "no_drive"
    b = Bridge("--namespace", ns, "--duration", "300", "--ros-args", "-p", "client_publish:=''")
    p = browser.new_page()
    console = Console(p)
    try:
        p.goto(page_url(b))
        until(p, "document.getElementById('drive-state').textContent"
              ".includes('does not allow driving')", timeout=30000)
        assert all(p.locator(".pad button").nth(i).is_disabled() for i in range(5))
        with ros.lock:
            n = len(ros.cmd_vel)
        watch = rclpy_twists(ros, f"/{ns}/cmd_vel")
        data = list(serialize_message(Twist(linear=Vector3(x=0.3))))
        answers = p.evaluate("""async ([data, topic]) => {
          const ws = new WebSocket(window.brakPage.connection.url, ['foxglove.sdk.v1']);
          ws.binaryType = 'arraybuffer';
          const got = [];
          ws.onmessage = (e) => { if (typeof e.data === 'string') got.push(e.data); };
          await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = fail; });
          ws.send(JSON.stringify({op: 'advertise', channels: [{id: 7, topic,
            encoding: 'cdr', schemaName: 'geometry_msgs/msg/Twist'}]}));
          const cdr = new Uint8Array(data);
          for (let i = 0; i < 10; i += 1) {
            const frame = new Uint8Array(5 + cdr.length);
            frame[0] = 1;
            new DataView(frame.buffer).setUint32(1, 7, true);
            frame.set(cdr, 5);
            ws.send(frame);
            await new Promise((ok) => setTimeout(ok, 100));
          }
          await new Promise((ok) => setTimeout(ok, 500));
          ws.close();
          return got.filter((t) => JSON.parse(t).op === 'status').map((t) => JSON.parse(t).message);
        }""", [data, f"/{ns}/cmd_vel"])
        time.sleep(1.0)
        assert watch.got == [], "a refused publish reached cmd_vel"
        with ros.lock:
            assert len(ros.cmd_vel) == n
        # the gateway's answers (statuses): the channel refused, then each message
        assert "does not support clientPublish" in answers[0], answers
        assert sum("Unknown channel ID: 7" in a for a in answers) == 10, answers
        assert console.errors == [], console.errors
    finally:
        p.close()
        b.stop()
        if "watch" in locals():
            watch.close()


class rclpy_twists:   # noqa: N801 - used as a function
    """Twists received on ``topic`` by a subscription of ``ros``'s node."""

    def __init__(self, ros, topic):
        from geometry_msgs.msg import Twist
        self.ros = ros
        self.got = []
        self.sub = ros.node.create_subscription(Twist, topic, lambda m: self.got.append(m), 10)

    def close(self):
        self.ros.node.destroy_subscription(self.sub)


@pytest.mark.alone    # times a bound
def test_a_lost_bridge_shows_the_banner_and_the_page_reconnects_without_a_reload(browser):
    ns = "lost_link"      # beside the module's bridge, in the same ROS domain
    b = Bridge("--namespace", ns, "--duration", "300")
    fox = re.search(r"Foxglove ws://127\.0\.0\.1:(\d+)", "\n".join(b.lines)).group(1)
    url = page_url(b)
    page_port = re.search(r":(\d+)/$", url).group(1)
    p = browser.new_page()
    console = Console(p)
    b2 = None
    try:
        p.goto(url)
        wait_drawn(p)
        p.evaluate("window.__loadedOnce = true")
        assert p.locator("#banner").is_hidden()
        assert console.errors == [], console.errors
        stopping = time.time()
        b.stop()
        stopped = time.time()
        until(p, "!document.getElementById('banner').hidden", timeout=10000,
              polling=20)
        assert time.time() - stopped <= BANNER_BOUND_S
        banner = p.locator("#banner").inner_text()
        assert "Connection to Brak lost" in banner and "Reconnecting" in banner
        # the figures say stale, not their old values
        until(p, "[...document.querySelectorAll('#sonars td.range')]"
              ".every(td => td.dataset.state !== 'ok')", timeout=10000)
        b2 = Bridge("--namespace", ns, "--foxglove-port", fox, "--page-port", page_port,
                    "--duration", "300")
        restarted = time.time()
        before = p.evaluate("document.querySelector('#sonars td.range').dataset.stamp")
        until(p, "document.getElementById('banner').hidden", timeout=30000)
        until(p, f"document.querySelector('#sonars td.range').dataset.stamp !== "
              f"'{before}' && [...document.querySelectorAll('#sonars td.range')]"
              f".every(td => td.dataset.state === 'ok')", timeout=30000)
        assert p.evaluate("window.__loadedOnce") is True, "the page was reloaded"
        time.sleep(1.0)
        # While the bridge was down the browser itself logged each refused attempt to
        # fetch config.json (its network log, not a JavaScript error; one a second):
        # those only, and no more than the seconds it was down allow.
        assert all(e == "Failed to load resource: net::ERR_CONNECTION_REFUSED"
                   for e in console.errors), console.errors
        assert len(console.errors) <= restarted - stopping + 2, console.errors
    finally:
        p.close()
        b.stop()
        if b2 is not None:
            b2.stop()
