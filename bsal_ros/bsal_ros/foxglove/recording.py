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

"""brak_record's MCAP file, written by foxglove-sdk's ``open_mcap`` with a
``foxglove.Context`` of its own (no other sink sees its channels).

The file has the ROS 2 profile (header profile ``ros2``): a ROS topic's
channel has a ``ros2msg`` schema (:mod:`.definitions`), ``cdr`` messages
exactly as they came off the wire, and rosbag2's channel metadata
(:mod:`.rosbag2`); ``--wire``'s channels are ``json`` with a
``jsonschema``. Messages are kept in zstd-compressed chunks; the open chunk
is closed every ``flush_s`` seconds, so a process killed outright loses at
most that much, and the file it leaves is cut after its last whole chunk.

The SDK writes through :class:`FileSink`, an unbuffered file that keeps the
first ``OSError`` (a full disk: ``ENOSPC``; over a file size limit:
``EFBIG``): the SDK only logs a failed write and refuses every write after
it, so the recorder asks :attr:`Recording.failure` and stops with one line.
No ROS here.
"""

from __future__ import annotations

from dataclasses import dataclass
import io
import json
from pathlib import Path
import threading
import time

from bsal_ros.foxglove import rosbag2, sdk_log

#: the header's profile, as rosbag2's MCAP storage writes it
PROFILE = "ros2"
#: bytes of messages per chunk before it is closed (foxglove-sdk's default)
CHUNK_SIZE = 1024 * 1024
COMPRESSIONS = ("zstd", "lz4", "none")


class FileSink(io.RawIOBase):
    """The recording's file, unbuffered: each write goes to the OS at once
    (a killed process leaves what it wrote). The first ``OSError`` of a write
    is kept in :attr:`failure` and raised again."""

    def __init__(self, path: Path):
        super().__init__()
        self._f = open(path, "xb", buffering=0)    # noqa: SIM115 - closed by close()
        self.failure: OSError | None = None
        self.bytes = 0

    def write(self, data) -> int:
        """Write ``data`` (bytes-like) whole; the count written."""
        if self.failure is not None:
            raise self.failure
        view = memoryview(data)
        try:
            while view:
                n = self._f.write(view)
                self.bytes += n
                view = view[n:]
        except OSError as exc:
            self.failure = exc
            raise
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move in the file (the writer fills in a chunk's length afterwards)."""
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        """Where the next write goes."""
        return self._f.tell()

    def fileno(self) -> int:
        """The file's descriptor."""
        return self._f.fileno()

    def flush(self) -> None:
        """Nothing is buffered here."""

    def writable(self) -> bool:
        """Yes."""
        return True

    def seekable(self) -> bool:
        """Yes."""
        return True

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._f.close()
        super().close()


@dataclass
class Counted:
    """One channel of the file and what went into it."""

    channel: object
    topic: rosbag2.TopicRecord
    messages: int = 0
    bytes: int = 0


class Recording:
    """An MCAP file being written; thread-safe (the executor's callbacks, the
    proxies' threads and the flush timer all log to it).

    :param path: a file that does not exist yet.
    :param say: one line for a person (the SDK's own warnings go there once each).
    :param chunk_size: bytes of messages per chunk.
    :param compression: one of :data:`COMPRESSIONS`.
    :param flush_s: close the open chunk this often (0: only when full).
    :raises OSError: the file cannot be created (it exists, its folder is
        missing or not writable).
    """

    def __init__(self, path, say, chunk_size: int = CHUNK_SIZE, compression: str = "zstd",
                 flush_s: float = 1.0):
        import foxglove
        from foxglove.mcap import MCAPCompression, MCAPWriteOptions
        self._fg = foxglove
        self.path = Path(path)
        self.sink = FileSink(self.path)
        self._lock = threading.Lock()
        self.channels: dict[str, Counted] = {}
        self.first_ns = self.last_ns = 0
        self._logged_since_flush = False
        self._closed = False
        # the SDK's warnings once per kind; none echoing a write failure the
        # recorder reports itself
        self._sdk_lines = sdk_log.attach(
            lambda line: None if self.sink.failure is not None else say(line))
        self.context = foxglove.Context()
        kind = {"zstd": MCAPCompression.Zstd, "lz4": MCAPCompression.Lz4, "none": None}
        options = MCAPWriteOptions(profile=PROFILE, chunk_size=int(chunk_size),
                                   compression=kind[compression], compression_threads=0)
        try:
            self.writer = foxglove.open_mcap(self.sink, context=self.context,
                                             writer_options=options)
        except BaseException:
            sdk_log.detach(self._sdk_lines)
            self.sink.close()
            self.path.unlink(missing_ok=True)
            raise
        self._stop = threading.Event()
        self._flusher = None
        if flush_s > 0:
            self._flusher = threading.Thread(target=self._flush_every, args=(flush_s,),
                                             name="mcap-flush", daemon=True)
            self._flusher.start()

    @property
    def failure(self) -> OSError | None:
        """The first write that failed, or None."""
        return self.sink.failure

    def ros_channel(self, topic: str, type_name: str, definition: str,
                    profiles: list[dict], type_hash: str) -> Counted:
        """Add the channel of a ROS topic (cdr messages, its ros2msg schema)."""
        fg = self._fg
        schema = fg.Schema(name=type_name, encoding="ros2msg", data=definition.encode())
        channel = fg.Channel(topic, schema=schema, message_encoding="cdr",
                             context=self.context,
                             metadata=rosbag2.channel_metadata(profiles, type_hash))
        record = rosbag2.TopicRecord(topic, type_name, "cdr", profiles, type_hash)
        return self._add(topic, Counted(channel, record))

    def json_channel(self, topic: str, schema_name: str, schema: dict) -> Counted:
        """Add a channel of JSON messages with ``schema`` (a JSON schema)."""
        fg = self._fg
        fg_schema = fg.Schema(name=schema_name, encoding="jsonschema",
                              data=json.dumps(schema).encode())
        channel = fg.Channel(topic, schema=fg_schema, message_encoding="json",
                             context=self.context)
        record = rosbag2.TopicRecord(topic, schema_name, "json")
        return self._add(topic, Counted(channel, record))

    def _add(self, topic: str, counted: Counted) -> Counted:
        with self._lock:
            self.channels[topic] = counted
        return counted

    def log(self, counted: Counted, data: bytes, log_time: int) -> None:
        """One message on a channel, logged at ``log_time`` (ns since the epoch)."""
        with self._lock:
            if self._closed:
                return
            counted.channel.log(data, log_time=log_time)
            counted.messages += 1
            counted.bytes += len(data)
            counted.topic.message_count = counted.messages
            self.first_ns = self.first_ns or log_time
            self.last_ns = max(self.last_ns, log_time)
            self._logged_since_flush = True

    def log_json(self, counted: Counted, message: dict, log_time: int) -> None:
        """One JSON message on a JSON channel."""
        self.log(counted, json.dumps(message, separators=(",", ":")).encode(), log_time)

    def totals(self) -> tuple[int, int]:
        """(messages, bytes of message data) so far."""
        with self._lock:
            return (sum(c.messages for c in self.channels.values()),
                    sum(c.bytes for c in self.channels.values()))

    def per_topic(self) -> list[tuple[str, int, int]]:
        """(topic, messages, bytes) of every channel, by topic."""
        with self._lock:
            return sorted((t, c.messages, c.bytes) for t, c in self.channels.items())

    def _flush_every(self, period: float) -> None:
        while not self._stop.wait(period):
            with self._lock:
                if self._closed or not self._logged_since_flush or self.failure is not None:
                    continue
                self._logged_since_flush = False
                try:
                    self.writer.flush()
                except RuntimeError:     # the SDK's error; the sink kept the OSError
                    pass

    def close(self) -> None:
        """Write rosbag2's metadata record, the summary and the index, then close
        the file (idempotent). After a failed write the file is closed as it is.

        :raises OSError: the failure of a write (now or before), or of the close.
        """
        self._stop.set()
        if self._flusher is not None:
            self._flusher.join(timeout=5)
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self.failure is None:
                    self.writer.write_metadata(rosbag2.METADATA_NAME, {
                        rosbag2.METADATA_KEY: rosbag2.bag_metadata(
                            self.path.name, [c.topic for c in self.channels.values()
                                             if c.messages],
                            self.first_ns, self.last_ns)})
                    self.writer.close()
            except RuntimeError as exc:
                if self.failure is None:
                    raise OSError(str(exc)) from None
            finally:
                self.sink.close()
                sdk_log.detach(self._sdk_lines)
            if self.failure is not None:
                raise self.failure


def default_name(now: float | None = None) -> str:
    """``brak_YYYY-MM-DD_HH-MM-SS.mcap`` in local time (the shape of rosbag2's
    ``rosbag2_YYYY_MM_DD-HH_MM_SS``)."""
    return time.strftime("brak_%Y-%m-%d_%H-%M-%S.mcap", time.localtime(now))


def human_bytes(n: float) -> str:
    """``1.2 MB``-style size (powers of 1000, as ``ros2 bag info`` prints sizes)."""
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def progress_line(elapsed: float, rec: Recording, top: int = 0) -> str:
    """``12 s, 4210 messages, 1.2 MB in brak_x.mcap; /odom 251, ...``: the
    per-topic counts, busiest first (``top`` > 0: only that many)."""
    messages, _ = rec.totals()
    size = rec.sink.bytes
    topics = sorted(rec.per_topic(), key=lambda t: (-t[1], t[0]))
    if top > 0:
        topics = topics[:top]
    parts = ", ".join(f"{t} {n}" for t, n, _ in topics if n)
    return (f"{elapsed:.0f} s, {messages} messages, {human_bytes(size)} in {rec.path.name}"
            + (f"; {parts}" if parts else ""))
