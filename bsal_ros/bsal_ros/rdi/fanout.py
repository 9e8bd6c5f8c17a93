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

"""Per-client bounded frame queues and the fan-out policy (pure, no I/O).

Every tick the stream builds one frame (bytes) and offers it to every client.
A client's queue holds at most ``queue_frames`` frames; when it is full the
**oldest** frame is dropped (newest state wins, Player's "replace" rule) and
counted. A client's *lag* is the age of the oldest frame it has not taken yet
(queued or being written); a client whose lag exceeds ``max_lag_s`` is
disconnected by the server. Base-time packets are never dropped: each frame
records the base-time version it was built against, and the writer sends the
base-time packet before the first frame of a new version.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

__all__ = ["Frame", "ClientQueue", "FanOut"]


class Frame(NamedTuple):
    """One encoded frame and the base time it was built against."""

    data: bytes            # encoded packets (may be empty)
    base_version: int      # StreamState.base_version at build time
    base_packet: bytes     # encoded RDI base-time packet of that version (b"" if unknown)
    t: float               # monotonic build time (s)
    seq: int


class ClientQueue:
    """Bounded frame queue of one client."""

    __slots__ = ("maxlen", "_q", "inflight_t", "dropped", "frames_sent", "bytes_sent",
                 "base_sent", "peer", "connected_t")

    def __init__(self, maxlen: int = 8, peer: str = "", now: float = 0.0):
        if maxlen < 1:
            raise ValueError("queue length must be >= 1")
        self.maxlen = int(maxlen)
        self._q: deque[Frame] = deque()
        self.inflight_t: float | None = None    # build time of the frame being written
        self.dropped = 0
        self.frames_sent = 0
        self.bytes_sent = 0
        self.base_sent = -1                     # base_version the client has
        self.peer = peer
        self.connected_t = now

    def __len__(self) -> int:
        return len(self._q)

    def offer(self, frame: Frame) -> bool:
        """Queue a frame; returns False when an older frame had to be dropped."""
        q = self._q
        ok = True
        while len(q) >= self.maxlen:
            q.popleft()
            self.dropped += 1
            ok = False
        q.append(frame)
        return ok

    def take(self) -> Frame | None:
        """Next frame to write (oldest first), or None. Marks it in flight."""
        if not self._q:
            return None
        f = self._q.popleft()
        self.inflight_t = f.t
        return f

    def done(self, nbytes: int) -> None:
        """The frame in flight was accepted by the transport."""
        self.inflight_t = None
        self.frames_sent += 1
        self.bytes_sent += nbytes

    def lag(self, now: float) -> float:
        """Age of the oldest frame not yet taken by the client's socket (0 if idle)."""
        oldest = self.inflight_t
        if self._q:
            t = self._q[0].t
            oldest = t if oldest is None else min(oldest, t)
        return 0.0 if oldest is None else max(0.0, now - oldest)

    def queued_bytes(self) -> int:
        """Bytes of the frames waiting."""
        return sum(len(f.data) for f in self._q)


class FanOut:
    """The set of clients of one stream, with the admission and lag rules."""

    def __init__(self, max_clients: int = 64, queue_frames: int = 8, max_lag_s: float = 5.0):
        self.max_clients = int(max_clients)
        self.queue_frames = int(queue_frames)
        self.max_lag_s = float(max_lag_s)
        self.clients: dict[object, ClientQueue] = {}
        self.refused = 0
        self.dropped_lagging = 0

    def admit(self, key, peer: str = "", now: float = 0.0) -> ClientQueue | None:
        """A new client, or None when ``max_clients`` are already connected."""
        if len(self.clients) >= self.max_clients:
            self.refused += 1
            return None
        q = self.clients[key] = ClientQueue(self.queue_frames, peer, now)
        return q

    def remove(self, key) -> ClientQueue | None:
        """Forget a client; returns its queue."""
        return self.clients.pop(key, None)

    def broadcast(self, frame: Frame) -> int:
        """Offer a frame to every client; returns how many had to drop one."""
        drops = 0
        for q in self.clients.values():
            if not q.offer(frame):
                drops += 1
        return drops

    def lagging(self, now: float) -> list[tuple[object, float]]:
        """Clients whose lag exceeds ``max_lag_s``: [(key, lag)]."""
        lim = self.max_lag_s
        return [(k, lag) for k, q in self.clients.items() if (lag := q.lag(now)) > lim]
