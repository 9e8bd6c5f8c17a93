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

"""brak_record: the robot's topics (and with --wire its legacy sessions) to an MCAP file.

    brak_record                                   # every topic, until Ctrl-C
    brak_record --output run3.mcap --duration 60  # one minute
    brak_record --topics odom,sonar_03,/tf        # these topics only
    brak_record --namespace brak2                 # the robot in /brak2
    brak_record --wire                            # + RCI/RDI through proxies on 7750-7752
    brak_record --ros-args -r __ns:=/brak2        # ROS arguments, as anywhere

The file opens in Foxglove and Lichtblick, and ``ros2 bag info`` and
``ros2 bag play`` read it on a ROS install (docs/RECORDING.md). Ctrl-C,
SIGTERM or the end of --duration close it with its summary and index. A
file that cannot be written (an unwritable folder, a full disk) is one line
and exit code 2; the bridge never notices.
"""

from __future__ import annotations

import sys
import threading
import time

from bsal_ros.core.cli import OneLineParser
from bsal_ros.nodes.cli import ROS_ARGS, split_ros_args

#: brak_record's refusals and failures start so (as OneLineParser's lines)
PROG = "brak_record"


#: how --wire's packets are written (docs/RECORDING.md)
WIRE_FORMATS = ("string", "json")
STRING = "std_msgs/msg/String"


def make_parser() -> OneLineParser:
    """brak_record's command line."""
    from bsal_ros.foxglove.recording import CHUNK_SIZE, COMPRESSIONS
    from bsal_ros.foxglove.wire_tap import STREAMS
    targets = ",".join(str(s.gateway_port) for s in STREAMS)
    proxies = ",".join(str(s.proxy_port) for s in STREAMS)
    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--output", "-o", help="the MCAP file to write (default: "
                   "brak_YYYY-MM-DD_HH-MM-SS.mcap here); it must not exist")
    p.add_argument("--topics", default="", help="record only these topics, comma-separated "
                   "(relative names are in --namespace); default: every topic of the robot, "
                   "as the graph changes")
    p.add_argument("--namespace", default="", help="the robot's namespace")
    p.add_argument("--duration", type=float, default=0.0,
                   help="stop after S seconds (0: at Ctrl-C or SIGTERM)")
    p.add_argument("--progress", type=float, default=2.0,
                   help="a progress line every S seconds (0: none); on a terminal one line "
                        "is rewritten in place")
    p.add_argument("--wire", action="store_true",
                   help="also record the legacy RCI and RDI sessions through proxies "
                        "(docs/RECORDING.md)")
    p.add_argument("--wire-format", choices=WIRE_FORMATS, default="string",
                   help="each packet as its JSON text in a std_msgs/String (cdr: ros2 bag "
                        "play reads the file) or as a JSON message with a JSON schema (json: "
                        "Foxglove shows its fields; ros2 bag play refuses a file that mixes "
                        "encodings); default string")
    p.add_argument("--wire-host", default="127.0.0.1", help="where the gateways listen")
    p.add_argument("--wire-targets", default=targets,
                   help=f"the gateways' ports RCI,REALTIME,CA (default {targets})")
    p.add_argument("--wire-listen", default=proxies,
                   help=f"the proxies' ports on 127.0.0.1, RCI,REALTIME,CA (default {proxies}; "
                        "0: any free port, printed)")
    p.add_argument("--chunk-size", type=int, default=CHUNK_SIZE,
                   help=f"bytes of messages per MCAP chunk (default {CHUNK_SIZE})")
    p.add_argument("--compression", choices=COMPRESSIONS, default="zstd",
                   help="chunk compression (default zstd)")
    p.add_argument("--flush", type=float, default=1.0,
                   help="close the open chunk every S seconds, so a killed process loses at "
                        "most that much (0: only when full)")
    return p


def parse_args(argv):
    """Our options, checked (ROS arguments already split off)."""
    from bsal_ros.foxglove.wire_tap import port_list
    p = make_parser()
    args = p.parse_args(argv)
    for name in ("duration", "progress", "flush"):
        if getattr(args, name) < 0:
            p.error(f"--{name} {getattr(args, name):g}: not negative")
    if args.chunk_size < 1024:
        p.error(f"--chunk-size {args.chunk_size}: at least 1024")
    try:
        args.targets = port_list(args.wire_targets, "--wire-targets")
        args.listen = port_list(args.wire_listen, "--wire-listen")
    except ValueError as exc:
        p.error(str(exc))
    args.topic_list = [t.strip() for t in args.topics.split(",") if t.strip()]
    return p, args


def open_recording(p: OneLineParser, args, say):
    """The Recording at ``--output``, or one line and exit 2 (before any ROS)."""
    from bsal_ros.foxglove.recording import default_name, Recording
    path = args.output or default_name()
    try:
        import foxglove  # noqa: F401 - the SDK is a pip package (requirements/project.txt)
    except ImportError as exc:
        p.refuse(f"foxglove-sdk is not importable ({exc}): pip install it "
                 "(requirements/project.txt; make setup does)")
    try:
        return Recording(path, say, chunk_size=args.chunk_size,
                         compression=args.compression, flush_s=args.flush)
    except FileExistsError:
        p.refuse(f"{path} exists: name another file (--output) or remove it")
    except FileNotFoundError:
        p.refuse(f"{path}: its folder does not exist (create it first, or name another)")
    except OSError as exc:
        p.refuse(f"cannot create {path}: {exc.strerror or exc} (name a file in a folder "
                 "you can write to, with --output)")


def say(line: str) -> None:
    """One line for a person, on stderr where the ROS log lines go."""
    print(f"[{PROG}] {line}", file=sys.stderr, flush=True)


class Watch:
    """The tick of the recording: a failed write stops it, progress is shown."""

    def __init__(self, rec, stop, period: float):
        self.rec, self.stop, self.period = rec, stop, period
        self.t0 = self._last = time.monotonic()
        self.tty = period > 0 and sys.stderr.isatty()

    def start(self, node) -> None:
        """The recording starts: ticks on ``node``'s executor from now on."""
        self.t0 = self._last = time.monotonic()
        node.create_timer(0.25, self.tick)

    def tick(self) -> None:
        """Timer: stop on a failed write; a progress line when one is due."""
        from bsal_ros.foxglove.recording import progress_line
        if self.rec.failure is not None:
            self.stop.request("the file cannot be written")
            return
        now = time.monotonic()
        if self.period <= 0 or now - self._last < self.period:
            return
        self._last = now
        if self.tty:
            line = progress_line(now - self.t0, self.rec, top=6)
            sys.stderr.write(f"\r\x1b[K{line}"[:400])
            sys.stderr.flush()
        else:       # stderr only: the recorder's progress is no /rosout message of the file
            say(progress_line(now - self.t0, self.rec))

    def end(self) -> None:
        """Leave the in-place line behind."""
        if self.tty:
            sys.stderr.write("\n")


def summary(rec) -> list[str]:
    """The closing lines: the file, then one line per channel."""
    from bsal_ros.foxglove.recording import human_bytes
    messages, _ = rec.totals()
    span = (rec.last_ns - rec.first_ns) / 1e9
    topics = rec.per_topic()
    lines = [f"wrote {rec.path}: {messages} messages over {span:.1f} s, "
             f"{human_bytes(rec.sink.bytes)}; {sum(1 for _, n, _ in topics if n)} of "
             f"{len(topics)} topics had messages (one channel each)"]
    width = max((len(t) for t, _, _ in topics), default=0)
    for topic, n, size in topics:
        lines.append(f"  {topic:<{width}}  {n:>8} messages  {human_bytes(size):>9}")
    return lines


def main(argv=None, hard_exit: bool = True, stop=None) -> int:
    """Record until SIGINT/SIGTERM or --duration; exit code 0 (2: a bad command
    line, a file that cannot be created or written, a proxy port taken)."""
    from bsal_ros.nodes import process_exit
    from bsal_ros.nodes.stop_request import install_signal_handlers, StopRequest
    stop = stop or StopRequest()
    install_signal_handlers(stop)
    ours, ros_args = split_ros_args(sys.argv[1:] if argv is None else argv)
    p, args = parse_args(ours)
    rec = open_recording(p, args, say)
    code = _record(args, rec, stop, ros_args)
    return process_exit.hard_exit(code) if hard_exit else code


def _record(args, rec, stop, ros_args) -> int:
    """Run the node (and the proxies) until the stop; close the file; the exit code."""
    from bsal_ros.nodes.runtime import run
    watch = Watch(rec, stop, args.progress)
    parts: dict = {}

    def finish() -> None:
        """Close step (the executor stopped): the proxies, then the file."""
        timer = parts.pop("timer", None)
        if timer is not None:   # stopped early: no late stop request left behind
            timer.cancel()
        tap = parts.pop("tap", None)
        if tap is not None:
            tap.close()
        try:
            rec.close()
        except OSError as exc:
            parts["error"] = exc

    def build(nodes) -> None:
        from bsal_ros.nodes.recorder import RecorderNode
        if args.wire:
            parts["tap"] = _start_wire(args, rec)
        node = RecorderNode(rec, args.namespace, args.topic_list, context=nodes.context)
        nodes.add(node, close=finish)
        watch.start(node)
        if args.duration > 0:       # counted from here: a slow start shortens nothing
            timer = parts["timer"] = threading.Timer(args.duration, stop.request,
                                                     args=(f"--duration {args.duration:g}",))
            timer.daemon = True
            timer.start()
        node.get_logger().info(f"recording to {rec.path}" + (
            f"; wire proxies: {parts['tap'].describe()}" if "tap" in parts else ""))

    code = run(PROG, build, args=[PROG, ROS_ARGS, *ros_args] if ros_args else [PROG],
               stop_message="stopping the recording",
               hard_exit=False, stop=stop)
    watch.end()
    finish()            # where build failed before the node was added (idempotent)
    if "error" in parts:
        exc = parts["error"]
        say(f"cannot write {rec.path}: {exc.strerror or exc}; the file is cut there "
            "(no summary: read it with a non-seeking reader, docs/RECORDING.md)")
        return 2
    if code != 0 and rec.totals()[0] == 0:
        rec.path.unlink(missing_ok=True)     # it could not start: leave no empty file
        return code
    for line in summary(rec):
        say(line)
    return code


def _start_wire(args, rec):
    """The wire proxies, each stream's packets to its channel: JSON text in a
    std_msgs/String (``--wire-format string``), or JSON messages (``json``)."""
    from bsal_ros.foxglove.wire_json import SCHEMA
    from bsal_ros.foxglove.wire_tap import STREAMS, WireTap
    from bsal_ros.nodes.runtime import StartupError
    if args.wire_format == "json":
        channels = {s.name: rec.json_channel(s.topic, "bsal_ros/WirePacket", SCHEMA)
                    for s in STREAMS}

        def log(stream, message, log_time):
            rec.log_json(channels[stream.name], message, log_time)
    else:
        import json
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rclpy.serialization import serialize_message
        from std_msgs.msg import String
        from bsal_ros.foxglove import rosbag2
        from bsal_ros.nodes.ros_types import message_definitions
        text = message_definitions().full_text(STRING)
        profile = rosbag2.qos_profile(QoSProfile(depth=10,
                                                 reliability=ReliabilityPolicy.RELIABLE))
        channels = {s.name: rec.ros_channel(s.topic, STRING, text, [profile], "")
                    for s in STREAMS}

        def log(stream, message, log_time):
            data = serialize_message(String(data=json.dumps(message, separators=(",", ":"))))
            rec.log(channels[stream.name], data, log_time)
    try:
        return WireTap(args.wire_host, args.targets, args.listen, log, say)
    except OSError as exc:
        raise StartupError(f"cannot open a wire proxy port ({args.wire_listen}): "
                           f"{exc.strerror or exc}") from None


if __name__ == "__main__":
    raise SystemExit(main())
