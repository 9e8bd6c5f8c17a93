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

"""brak_record against a running brak_bringup (issue 50, docs/RECORDING.md).

The files are read back with the PyPI libraries ``mcap`` and
``mcap-ros2-support``, which the writer (foxglove-sdk) is not: every message
decodes; what an rclpy subscriber received in the same run is in the file,
byte for byte and value for value, matched by header stamp; the header's
profile is ``ros2`` and the channels carry rosbag2's metadata; ``--wire``'s
channels hold a legacy control application's session in the order of the
wire, its values the ones the program printed; Ctrl-C and SIGTERM leave a
summary and an index; a file cut by SIGKILL is what the reader says; an
unwritable folder and a full disk are one line and exit code 2, and the
bridge goes on.
"""

import ctypes
import errno
import json
import math
import os
from pathlib import Path
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

import yaml

from spun_node import SpunNode
from test_bringup import Bridge, CLIENT_APP

mcap_reader = pytest.importorskip(
    "mcap.reader", reason="mcap (PyPI, requirements/project.txt) reads the files back")
mcap_ros2_decoder = pytest.importorskip(
    "mcap_ros2.decoder", reason="mcap-ros2-support (PyPI) decodes their CDR messages")
McapError = pytest.importorskip("mcap.exceptions").McapError
RecordLengthLimitExceeded = pytest.importorskip("mcap.exceptions").RecordLengthLimitExceeded

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
SONARS = [f"/sonar_{i:02d}" for i in range(12)]
#: how long each recording of the matching tests runs once every topic is subscribed
RECORD_S = 5.0
MAGIC = b"\x89MCAP0\r\n"
#: the length field of a chunk whose writer was killed before it closed the chunk
UNFILLED = 2**64 - 1


@pytest.fixture(scope="module")
def bridge():
    """One brak_bringup for the module (on free ports, Foxglove port 0)."""
    b = Bridge("--duration", "900")
    yield b
    b.stop()


#: every Recorder a test started; what a failed test left running is killed at its teardown
STARTED = []


@pytest.fixture(autouse=True)
def no_recorder_left():
    """A test that fails before it stops its recorder leaves nothing running."""
    yield
    while STARTED:
        rec = STARTED.pop()
        if rec.proc.poll() is None:
            rec.proc.kill()
            rec.proc.wait(30)
        rec._out.close()


class Recorder:
    """brak_record in a subprocess, its output (stdout and stderr) in a file."""

    def __init__(self, tmp: Path, *args, name="brak_record", env=None, preexec_fn=None,
                 console_script=False):
        self.log = tmp / f"{name}.log"
        self._out = open(self.log, "wb")
        cmd = (["brak_record"] if console_script
               else [sys.executable, "-m", "bsal_ros.nodes.record"]) + list(args)
        self.proc = subprocess.Popen(cmd, cwd=tmp, stdout=self._out, stderr=subprocess.STDOUT,
                                     env=env or os.environ.copy(), preexec_fn=preexec_fn)
        STARTED.append(self)

    def text(self) -> str:
        """What it printed so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match:
        """The first match of ``pattern`` in its output; AssertionError on timeout or exit."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = rx.search(self.text())
            if m:
                return m
            assert self.proc.poll() is None, f"exited {self.proc.returncode}:\n{self.text()}"
            time.sleep(0.05)
        raise AssertionError(f"/{pattern}/ not printed in {timeout} s:\n{self.text()}")

    def stop(self, sig=signal.SIGINT, timeout: float = 30.0) -> int:
        """Send ``sig`` and wait for the exit code (SIGKILL after ``timeout``)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"no exit within {timeout} s of {sig!r}:\n{self.text()}")
        finally:
            self._out.close()


PROGRESS = re.compile(r"^\[brak_record\] \d+ s, \d+ messages, .* in \S+; (.*)$", re.M)


def wait_counts(rec: Recorder, least: dict, timeout: float = 60.0) -> dict:
    """Until a progress line (``--progress``) counts at least ``least[topic]``
    messages of each topic; that line's counts. Subscribing is not receiving:
    on a loaded machine a new subscription matches its publisher seconds later."""
    deadline = time.monotonic() + timeout
    while True:
        lines = PROGRESS.findall(rec.text())
        counts = {t: int(n) for t, n in (p.rsplit(" ", 1) for p in
                                         (lines[-1].split(", ") if lines else []))}
        if all(counts.get(t, 0) >= n for t, n in least.items()):
            return counts
        assert rec.proc.poll() is None, f"exited {rec.proc.returncode}:\n{rec.text()}"
        assert time.monotonic() < deadline, f"not {least} within {timeout} s:\n{rec.text()}"
        time.sleep(0.1)


class RawProbe(SpunNode):
    """An rclpy subscriber of its own, raw: the bytes of each message and when they came."""

    def __init__(self, topics: dict):
        import rclpy
        self.start_context()
        self.node = rclpy.create_node("record_probe", context=self.context)
        self.lock = threading.Lock()
        self.got = {t: [] for t in topics}
        for topic, (cls, qos) in topics.items():
            self.node.create_subscription(cls, topic, lambda d, t=topic: self._got(t, d), qos,
                                          raw=True)
        self.spin()

    def _got(self, topic, data):
        with self.lock:
            self.got[topic].append(bytes(data))


def probe_topics():
    """The sonars (sensor data QoS) and odom (reliable), each deep enough that a
    slow test thread loses nothing."""
    from nav_msgs.msg import Odometry
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Range
    best_effort = QoSProfile(depth=200, reliability=ReliabilityPolicy.BEST_EFFORT)
    reliable = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
    topics = {t: (Range, best_effort) for t in SONARS}
    topics["/odom"] = (Odometry, reliable)
    return topics


def read_all(path: Path):
    """(header, summary, [(channel, message, decoded or None)], metadata records) of a
    complete file; every CDR message decoded by mcap-ros2-support."""
    decoders = [mcap_ros2_decoder.DecoderFactory()]
    with open(path, "rb") as f:
        reader = mcap_reader.make_reader(f, decoder_factories=decoders)
        header, summary = reader.get_header(), reader.get_summary()
        metadata = list(reader.iter_metadata())
        out = []
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            decoded = None
            if channel.message_encoding == "cdr":
                decoded = decoders[0].decoder_for("cdr", schema)(message.data)
            out.append((channel, message, decoded))
    return header, summary, out, metadata


def stamp_of(decoded) -> tuple:
    """(sec, nanosec) of a decoded message's header."""
    return (decoded.header.stamp.sec, decoded.header.stamp.nanosec)


def by_stamp(cls, raw: list) -> dict:
    """{stamp: (bytes, rclpy message)} of raw messages, decoded by rclpy."""
    from rclpy.serialization import deserialize_message
    out = {}
    for data in raw:
        msg = deserialize_message(data, cls)
        out[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = (data, msg)
    return out


def overlap(a: dict, b: dict) -> tuple:
    """The stamps both saw from the later first to the earlier last: (a's, b's)."""
    assert a and b, (len(a), len(b))
    lo, hi = max(min(a), min(b)), min(max(a), max(b))
    assert lo < hi, "the two windows do not overlap"
    return ({s for s in a if lo <= s <= hi}, {s for s in b if lo <= s <= hi})


def test_a_recording_holds_what_a_subscriber_received(bridge, tmp_path):
    """Sonars and odom over a few seconds: the same messages, the same bytes and
    the same values as an rclpy subscriber of the same run; every message of
    every channel decodes; the ROS 2 profile and rosbag2's channel metadata."""
    topics = probe_topics()
    probe = RawProbe(topics)
    out = tmp_path / "run.mcap"
    try:
        probe.wait("the probe's first odom and sonar",
                   lambda: probe.got["/odom"] and probe.got["/sonar_00"], 60)
        rec = Recorder(tmp_path, "--output", str(out), "--progress", "1")
        for topic in ["/odom", *SONARS, "/robot_description"]:
            rec.wait_for(rf"recording {re.escape(topic)} ")
        # the latched topics' one message each too, before the file is closed: a
        # subscription matches its publisher seconds later on a loaded machine,
        # and a topic never recorded is named here (/tf_static, in a clone with
        # no ../shared beside it: docs/DEVELOPING.md, open)
        wait_counts(rec, {"/odom": 10, **dict.fromkeys(SONARS, 3), "/tf_static": 1,
                          "/robot_description": 1, "/diagnostics": 1})
        time.sleep(RECORD_S)
        assert rec.stop(signal.SIGINT) == 0, rec.text()
        time.sleep(0.5)         # the probe's last messages (its window ends later anyway)
        graph = {t: [(q.history.name.lower(), q.depth, q.reliability.name.lower(),
                      q.durability.name.lower()) for q in (
                          i.qos_profile for i in probe.node.get_publishers_info_by_topic(t))]
                 for t in ("/sonar_00", "/robot_description")}
    finally:
        probe.close()
    text = rec.text()
    assert re.search(r"\d+ s, \d+ messages, [\d.]+ [kM]?B in run\.mcap; /", text), text
    assert f"wrote {out}" in text, text
    # one bridge in this domain: a second one's messages would be in the file too
    for topic in ("/odom", "/robot_description", *SONARS):
        assert re.search(rf"recording {re.escape(topic)} \(.*, 1 publisher\)", text), text

    header, summary, messages, metadata = read_all(out)
    assert header.profile == "ros2"
    assert summary is not None and summary.statistics is not None
    assert summary.chunk_indexes, "no chunk index"
    assert summary.statistics.message_count == len(messages)
    for channel, message, decoded in messages:
        assert channel.message_encoding == "cdr", channel.topic
        assert summary.schemas[channel.schema_id].encoding == "ros2msg"
        assert decoded is not None, channel.topic
    topics_in_file = {c.topic for c in summary.channels.values()}
    assert {"/odom", "/tf_static", "/robot_description", "/diagnostics", *SONARS} <= topics_in_file

    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Range
    for topic in ["/odom", *SONARS]:
        cls = Odometry if topic == "/odom" else Range
        mine = {stamp_of(d): (m.data, d) for c, m, d in messages if c.topic == topic}
        theirs = by_stamp(cls, probe.got[topic])
        in_file, received = overlap(mine, theirs)
        assert in_file == received, (topic, sorted(in_file ^ received)[:5])
        assert len(in_file) >= 3, (topic, len(in_file))
        for s in in_file:
            data, decoded = mine[s]
            assert data == theirs[s][0], f"{topic} {s}: the bytes differ"
            msg = theirs[s][1]
            if topic == "/odom":
                assert decoded.pose.pose.position.x == msg.pose.pose.position.x
                assert decoded.pose.pose.orientation.z == msg.pose.pose.orientation.z
                assert decoded.twist.twist.linear.x == msg.twist.twist.linear.x
            else:
                assert decoded.header.frame_id == msg.header.frame_id
                assert (decoded.range == msg.range
                        or (math.isnan(decoded.range) and math.isnan(msg.range)))

    # the latched description came at once, and decodes to the URDF
    urdf = [d.data for c, _, d in messages if c.topic == "/robot_description"]
    assert len(urdf) == 1 and "<robot" in urdf[0]
    # rosbag2's channel metadata: each publisher's QoS by name, the type's hash
    by_topic = {c.topic: c for c in summary.channels.values()}
    for topic, reliability, durability in (("/sonar_00", "best_effort", "volatile"),
                                           ("/robot_description", "reliable", "transient_local")):
        offered = yaml.safe_load(by_topic[topic].metadata["offered_qos_profiles"])
        assert [(q["history"], q["depth"], q["reliability"], q["durability"])
                for q in offered] == graph[topic]
        assert (offered[0]["reliability"], offered[0]["durability"]) == (reliability, durability)
        assert set(offered[0]["deadline"]) == {"sec", "nsec"}
    assert by_topic["/odom"].metadata["topic_type_hash"].startswith("RIHS01_")
    # rosbag2's metadata record: its counts are the summary's
    (bag,) = [m for m in metadata if m.name == "rosbag2"]
    info = yaml.safe_load(bag.metadata["serialized_metadata"])
    assert info["version"] == 9 and info["storage_identifier"] == "mcap"
    assert info["message_count"] == summary.statistics.message_count
    counts = {t["topic_metadata"]["name"]: t["message_count"]
              for t in info["topics_with_message_count"]}
    assert counts == {summary.channels[cid].topic: n
                      for cid, n in summary.statistics.channel_message_counts.items()}


def test_a_topic_that_appears_later_is_recorded(bridge, tmp_path):
    """The graph is followed: a publisher that comes after the start is recorded
    from then on; --topics limits the file to the topics named."""
    import rclpy
    from std_msgs.msg import String
    out = tmp_path / "late.mcap"
    rec = Recorder(tmp_path, "--output", str(out), "--topics", "odom,late_probe",
                   "--progress", "0.5")
    rec.wait_for(r"recording /odom ")
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("late_publisher", context=context)
    sent = 0
    try:
        pub = node.create_publisher(String, "/late_probe", 10)
        rec.wait_for(r"recording /late_probe \(std_msgs/msg/String", timeout=30)
        heard = threading.Thread(target=wait_counts, args=(rec, {"/late_probe": 5}),
                                 daemon=True)
        heard.start()
        while heard.is_alive() or sent < 10:     # until it hears them, then ten more
            pub.publish(String(data=f"late {sent}"))
            sent += 1
            time.sleep(0.1)
            if heard.is_alive() and sent > 600:
                raise AssertionError(f"the recorder never heard /late_probe:\n{rec.text()}")
        extra, sent_before = 10, sent
        for _ in range(extra):
            pub.publish(String(data=f"late {sent}"))
            sent += 1
            time.sleep(0.1)
        time.sleep(1.0)
    finally:
        code = rec.stop(signal.SIGTERM)
        node.destroy_node()
        rclpy.shutdown(context=context)
    assert code == 0, rec.text()
    _, summary, messages, _ = read_all(out)
    assert {c.topic for c in summary.channels.values()} == {"/odom", "/late_probe"}
    late = [d.data for c, _, d in messages if c.topic == "/late_probe"]
    # every message after the subscription matched: the last ones, in order
    assert len(late) >= 5 + extra, (len(late), sent_before)
    assert late == [f"late {i}" for i in range(sent - len(late), sent)], late


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_leaves_a_complete_indexed_file(bridge, tmp_path, sig):
    """Ctrl-C or SIGTERM (the console script, as a user runs it): exit 0, a
    summary, chunk indexes and statistics that count the messages."""
    out = tmp_path / "signal.mcap"
    rec = Recorder(tmp_path, "--output", str(out), "--progress", "0.5", console_script=True)
    wait_counts(rec, {"/odom": 10})
    assert rec.stop(sig) == 0, rec.text()
    assert f"stopping the recording ({sig.name})" in rec.text()
    with open(out, "rb") as f:
        reader = mcap_reader.make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.chunk_indexes
        n = sum(1 for _ in reader.iter_messages())
    assert n == summary.statistics.message_count > 0
    assert out.read_bytes().endswith(MAGIC)


def wait_growth(path: Path, bursts: int, timeout: float = 60.0) -> None:
    """Until ``path`` grew in ``bursts`` separate bursts, the last one followed by
    0.3 s without a write (a flush's writes come within milliseconds, flushes a
    second apart): then no write is under way."""
    size, seen, quiet_since = path.stat().st_size, 0, time.monotonic()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = path.stat().st_size
        if now != size:
            if time.monotonic() - quiet_since > 0.3:
                seen += 1           # a new burst, not more writes of the same one
            size, quiet_since = now, time.monotonic()
        elif seen >= bursts and time.monotonic() - quiet_since > 0.3:
            return
        time.sleep(0.01)
    raise AssertionError(f"{path.name} grew in {seen} bursts within {timeout} s, not {bursts}")


def test_a_file_cut_by_sigkill_is_what_the_reader_says(bridge, tmp_path):
    """SIGKILL: no footer, no summary; a non-seeking read yields the messages of
    the closed chunks, every one decodable, then stops at the open chunk, whose
    length the killed writer never filled in (RecordLengthLimitExceeded). What
    a progress line counted before two more flushes is all there."""
    out = tmp_path / "killed.mcap"
    rec = Recorder(tmp_path, "--output", str(out), "--flush", "1", "--progress", "1")
    m = rec.wait_for(r"\] \d+ s, \d+ messages, .*/odom ([2-9]\d|\d{3,})\b")
    logged = int(m.group(1))
    # two flushes after the line: the first closed the chunk holding those messages
    wait_growth(out, 2)
    rec.stop(signal.SIGKILL)
    data = out.read_bytes()
    assert data.startswith(MAGIC) and not data.endswith(MAGIC)
    with open(out, "rb") as f:
        reader = mcap_reader.make_reader(f)
        assert reader.get_header().profile == "ros2"
        with pytest.raises(McapError):
            reader.get_summary()
    decoders = mcap_ros2_decoder.DecoderFactory()
    got = []
    with open(out, "rb") as f:
        reader = mcap_reader.NonSeekingReader(f)
        with pytest.raises(RecordLengthLimitExceeded) as cut:
            for schema, channel, message in reader.iter_messages(log_time_order=False):
                got.append((channel.topic, decoders.decoder_for("cdr", schema)(message.data)))
    assert f"CHUNK record has length {UNFILLED}" in str(cut.value)
    topics = {t for t, _ in got}
    assert "/robot_description" in topics, topics
    odom = [stamp_of(d) for t, d in got if t == "/odom"]
    assert len(odom) >= logged and odom == sorted(odom), (len(odom), logged)


def drop_dac_override():
    """For ``preexec_fn``: the child cannot write where the folder's mode says no,
    even as root (CAP_DAC_OVERRIDE leaves its bounding set, so its exec gets none)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_capbset_drop, cap_dac_override = 24, 1
        if libc.prctl(pr_capbset_drop, cap_dac_override, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_an_unwritable_folder_is_one_line_and_exit_2(tmp_path):
    """Refused before ROS starts: one line naming the fix, exit 2, no file."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    target = folder / "x.mcap"
    done = subprocess.run([sys.executable, "-m", "bsal_ros.nodes.record", "--output",
                           str(target)], capture_output=True, text=True, timeout=120,
                          preexec_fn=drop_dac_override)
    folder.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"brak_record: cannot create {target}: Permission denied (name a file in a folder "
        "you can write to, with --output)"]
    assert not target.exists()


def test_without_foxglove_sdk_it_says_so_in_one_line(tmp_path):
    """foxglove-sdk is a pip package: where it is missing, one line naming it, exit 2."""
    code = ("import sys; sys.modules['foxglove'] = None; "
            "from bsal_ros.nodes import record; "
            f"record.main(['--output', {str(tmp_path / 'x.mcap')!r}])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "foxglove-sdk is not importable" in lines[0], lines
    assert "pip install it" in lines[0] and not (tmp_path / "x.mcap").exists()


def small_file_limit(limit: int):
    """For ``preexec_fn``: files of the child stop at ``limit`` bytes; a write past it
    fails with EFBIG (Python ignores SIGXFSZ, so the process is not killed by it)."""
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_full_disk_is_one_line_exit_2_and_the_bridge_goes_on(bridge, tmp_path):
    """A write that fails (EFBIG past RLIMIT_FSIZE, as ENOSPC on a full disk): one
    line naming the file and the error, exit 2, the SDK's own warnings not
    repeated; the bridge and its subscribers go on."""
    limit = 256 * 1024
    out = tmp_path / "full.mcap"
    # untraced: the limit would cut coverage.py's data file too (make test combines them all)
    env = {k: v for k, v in os.environ.items()
           if k not in ("BSAL_COVERAGE_RCFILE", "COVERAGE_PROCESS_START")}
    env["ROS_LOG_DIR"] = str(tmp_path / "roslog")
    rec = Recorder(tmp_path, "--output", str(out), "--progress", "0", env=env,
                   preexec_fn=small_file_limit(limit))
    probe = RawProbe({"/odom": probe_topics()["/odom"]})
    try:
        rec.wait_for(r"recording /odom ")
        code = rec.proc.wait(240)
        text = rec.text()
        assert code == 2, text
        failures = [ln for ln in text.splitlines() if "cannot write" in ln]
        assert failures == [f"[brak_record] cannot write {out}: File too large; the file is "
                            "cut there (no summary: read it with a non-seeking reader, "
                            "docs/RECORDING.md)"], text
        assert "Traceback" not in text and "foxglove-sdk:" not in text, text
        assert out.stat().st_size <= limit
        # the bridge goes on: odom keeps coming, the process runs
        with probe.lock:
            before = len(probe.got["/odom"])
        probe.wait("odom after the recorder's exit", lambda: len(probe.got["/odom"]) > before + 5,
                   30)
        assert bridge.proc.poll() is None, bridge.recent()
    finally:
        probe.close()
        if rec.proc.poll() is None:
            rec.stop(signal.SIGKILL)


def test_a_disk_that_fills_up_is_the_recording_s_failure_not_a_flood(tmp_path, caplog):
    """ENOSPC mid-recording (the file's descriptor pointed at /dev/full): the
    first failed write is the recording's failure, the SDK's own warnings about
    it are not repeated, and closing raises it."""
    from bsal_ros.nodes.ros_types import message_definitions
    from bsal_ros.foxglove.recording import Recording
    said = []
    rec = Recording(tmp_path / "x.mcap", said.append, chunk_size=4096, flush_s=0)
    counted = rec.ros_channel("/chatter", "std_msgs/msg/String",
                              message_definitions().full_text("std_msgs/msg/String"), [], "")
    cdr = b"\x00\x01\x00\x00" + (5).to_bytes(4, "little") + b"hello\x00\x00\x00"
    for i in range(100):
        rec.log(counted, cdr, 1_000 + i)
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, rec.sink.fileno())
    os.close(full)
    for i in range(2000):
        rec.log(counted, cdr, 2_000 + i)
    assert rec.failure is not None and rec.failure.errno == errno.ENOSPC
    with pytest.raises(OSError) as closing:
        rec.close()
    assert closing.value.errno == errno.ENOSPC
    # the SDK logged its write errors (logger "foxglove"): none went further
    assert said == [], said
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("foxglove")]


def wire_messages(path: Path, wire_format: str) -> dict:
    """{topic: [message dict]} of the wire channels of a complete file, in file order:
    JSON messages (``--wire-format json``), or the JSON text of std_msgs/String
    messages decoded by mcap-ros2-support (``string``, the default)."""
    out = {}
    with open(path, "rb") as f:
        reader = mcap_reader.make_reader(f, decoder_factories=[
            mcap_ros2_decoder.DecoderFactory()])
        summary = reader.get_summary()
        assert summary is not None
        wire = [c.topic for c in summary.channels.values() if c.topic.startswith("/wire/")]
        if wire_format == "json":
            for schema, channel, message in reader.iter_messages(topics=wire,
                                                                 log_time_order=False):
                assert channel.message_encoding == "json"
                assert schema.encoding == "jsonschema" and json.loads(schema.data)["type"]
                out.setdefault(channel.topic, []).append((message.log_time,
                                                          json.loads(message.data)))
        else:
            for schema, channel, message, decoded in reader.iter_decoded_messages(
                    topics=wire, log_time_order=False):
                assert (channel.message_encoding, schema.encoding, schema.name) == (
                    "cdr", "ros2msg", "std_msgs/msg/String")
                out.setdefault(channel.topic, []).append((message.log_time,
                                                          json.loads(decoded.data)))
    # one encoding in the whole file: what rosbag2's reader (ros2 bag play) asks for
    encodings = {c.message_encoding for c in summary.channels.values()}
    assert encodings == ({"cdr"} if wire_format == "string" else {"cdr", "json"}), encodings
    return out


def read_rdi_through(port: int, seconds: float) -> bytes:
    """What an RDI client connected to ``port`` receives in ``seconds``."""
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.settimeout(0.2)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                break
            data += chunk
    return data


@pytest.mark.parametrize("wire_format", ["string", "json"])
def test_wire_channels_hold_the_legacy_session_in_order(bridge, tmp_path, wire_format):
    """--wire: the legacy control application through brak_record's RCI proxy and
    an RDI client through its real-time proxy: each packet as JSON (the text of a
    std_msgs/String, or a JSON message), in the order of the wire, the values the
    program printed and the client received; the login key is not in the file."""
    if not CLIENT_APP.exists():
        pytest.skip("legacy/build/client-app is not built (make setup builds it)")
    from bsal_ros.foxglove.wire_json import packet_fields
    from bsal_ros.protocol import RdiDecoder
    rci, realtime, ca = bridge.ports
    out = tmp_path / "wire.mcap"
    rec = Recorder(tmp_path, "--output", str(out), "--topics", "odom", "--wire",
                   "--wire-format", wire_format,
                   "--wire-targets", f"{rci},{realtime},{ca}", "--wire-listen", "0,0,0")
    m = rec.wait_for(r"wire proxies: rci 127\.0\.0\.1:(\d+) -> 127\.0\.0\.1:\d+, "
                     r"rdi_realtime 127\.0\.0\.1:(\d+) -> .*, rdi_ca 127\.0\.0\.1:(\d+) ->")
    rci_proxy, rt_proxy = int(m.group(1)), int(m.group(2))
    received = read_rdi_through(rt_proxy, 1.5)
    app = subprocess.run([str(CLIENT_APP), "127.0.0.1", str(rci_proxy)], capture_output=True,
                         text=True, timeout=120)
    assert app.returncode == 0 and "done status=ok failures=0" in app.stdout, app.stdout
    rec.wait_for(r"wire rci: connection 0 closed by the (client|server)")
    assert rec.stop(signal.SIGINT) == 0, rec.text()
    wire = wire_messages(out, wire_format)

    session = [msg for _, msg in wire["/wire/rci"]]
    times = [t for t, _ in wire["/wire/rci"]]
    assert times == sorted(times)
    assert session[0] == {"conn": 0, "event": "open"}
    assert session[-1]["event"] == "close"
    packets = [m for m in session if "packet" in m]
    assert not [m for m in session if m.get("event") in ("error", "raw")], session
    first = packets[0]
    assert (first["dir"], first["packet"]) == ("c2s", "IIId")
    assert first["fields"]["user_id"] == "demo" and first["fields"]["auth_key"] == "not recorded"
    assert bytes.fromhex("0123456789abcdef0123456789abcdef") not in out.read_bytes()
    # the ultrasonic delays and encoder counts the program printed, in its order,
    # are those of the replies in the file, in the file's order
    printed = [int(d) for d in re.findall(r"ultra read=\d+ id=\d+ delay_us=(\d+)", app.stdout)]
    counts = [int(c) for c in re.findall(r"encoder read=\d+ id=0 count=(-?\d+)", app.stdout)]
    replies = [p for p in packets if p["dir"] == "s2c" and p["packet"] == "CGtSnRp"]
    delays = [i["data"]["delay"] for p in replies if p["fields"]["sub_code"] == "ULTRASONIC"
              for i in p["fields"]["items"] if "delay" in i["data"]]
    enc = [i["data"]["count"] for p in replies if p["fields"]["sub_code"] == "RELENCODER"
           for i in p["fields"]["items"] if i["id"] == 0 and "count" in i["data"]]
    assert printed and delays == printed, (printed, delays)
    assert counts and enc == counts, (counts, enc)
    # the real-time stream: the packets the client received, in the order it received them
    rt = [msg for _, msg in wire["/wire/rdi_realtime"] if msg.get("packet")]
    decoded = [{"packet": type(p).__name__, "fields": packet_fields(p)}
               for p in RdiDecoder().feed(received)]
    assert decoded and rt[0]["packet"] == "RdiBaseTime"
    assert [{"packet": m["packet"], "fields": m["fields"]} for m in rt[:len(decoded)]] == decoded
