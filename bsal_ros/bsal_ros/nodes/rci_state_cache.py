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

"""The RCI gateway's cache of the hardware node's ``device_states``, with
command fences (issue 21, "one robot, one truth").

Every command the gateway sends (reset, activate, set motors, clear, sonar
timing, homing) fences the devices it touches: from the moment its answer
arrives, a cached reading of those devices taken before that moment is not
used. The answer itself carries the states of the boards the command changed,
read by the hardware node right after it (issue 31): they serve the next Get
inquiries at once (:meth:`StateCache.answered`), no second round trip. A
fenced device the answer has no state for (a refused command, homing) is read
with ``get_device_states`` on the next inquiry, and that answer, taken after
the fence, serves the following ones until newer readings arrive. So every
read after a CCnAc (or a CStIq IDLE) returns the state after the command. An
older reading never replaces a newer one: states are ordered by when their
content was read, whatever order the executor hands them over in (a topic
message may be handled after a newer service answer). No ROS import: the
node hands messages over already converted.
"""

from __future__ import annotations

import threading
import time
from typing import NamedTuple, Sequence

from bsal_ros.core.device_state import DeviceState


#: fresh() answers kept (a control application asks a handful of groups)
FRESH_KEPT = 64


class CachedState(NamedTuple):
    """A device's newest state, when it arrived (monotonic s), the wall time
    its content is known to be current at for the fences (the reading's stamp,
    or the moment a ``get_device_states`` request went out) and the wall time
    its content was read (the reading's own stamp: orders readings)."""

    state: DeviceState
    received: float
    as_of: float
    read_at: float


class StateCache:
    """The newest state of every device from the ``device_states`` topic, with
    the interval at which each device is reported (to judge freshness) and the
    command fences."""

    def __init__(self, max_age_cycles: float, min_age_s: float):
        self.max_age_factor = max_age_cycles
        self.min_age = min_age_s
        self.entries: dict[tuple[str, int], CachedState] = {}
        self._interval: dict[tuple[str, int], float] = {}
        #: wall time after which a reading must have been taken, per device
        self.fences: dict[tuple[str, int], float] = {}
        #: ids seen per class; replaced, never mutated (read from other threads)
        self.seen: dict[str, frozenset[int]] = {}
        self._lock = threading.Lock()
        #: reads that found their devices fenced (introspection, benchmarks)
        self.fenced_reads = 0
        #: changes so far (entries, intervals, fences): a :meth:`fresh`
        #: answer stays right while it is unchanged, until its devices age
        self.version = 0
        #: (class, ids) -> (version, monotonic time it ages out, states)
        self._fresh: dict[tuple, tuple] = {}

    def on_states(self, states: Sequence[DeviceState]) -> None:
        """New readings (executor thread); an older one never replaces a newer."""
        now = time.monotonic()
        cache, interval = self.entries, self._interval
        with self._lock:
            for st in states:
                key = (st.device_class, st.id)
                old = cache.get(key)
                stamp = st.stamp or 0.0
                as_of = stamp
                if old is not None:
                    # ordered by when the content was read: a fetched state is as
                    # new as the poll it came from, however late that poll's own
                    # message arrives (it then carries older or the same content)
                    if stamp < old.read_at:
                        continue
                    as_of = max(stamp, old.as_of)
                    dt = now - old.received
                    if dt > 0:
                        prev = interval.get(key)
                        interval[key] = dt if prev is None else 0.8 * prev + 0.2 * dt
                cache[key] = CachedState(st, now, as_of, stamp)
                self._see(st)
            self.version += 1

    def fetched(self, states: Sequence[DeviceState], asked_at: float) -> None:
        """States read with get_device_states requested at wall time
        ``asked_at``: current at that moment (they reflect every command
        answered before it). A poll that arrived while the request was out
        may carry a fence time after the request, yet content older than the
        answer's: the answer replaces it; a newer poll's entry stays as it is."""
        self._merge(states, asked_at, raise_newer=False)

    def answered(self, device_class: str, ids: Sequence[int] | None,
                 states: Sequence[DeviceState]) -> None:
        """A command on these devices (class "": every class; None: every seen
        id of the class) was answered with ``states``: the states of the
        boards it changed, read by the hardware node under its lock after the
        command. They are current as of the answer, so they satisfy the fence
        the command sets; a reading already here whose content is newer (read
        after the command) reflects the command too and stays, current as of
        the answer as well."""
        for cls in ([device_class] if device_class else list(self.seen)):
            self.fence(cls, ids if device_class else None)
        self._merge(states, time.time(), raise_newer=True)

    def _merge(self, states: Sequence[DeviceState], as_of: float, raise_newer: bool) -> None:
        """Store ``states``, current as of wall time ``as_of``, over entries
        whose content was read no later than theirs; an entry read later
        keeps its content (and, with ``raise_newer``, is current as of
        ``as_of`` too)."""
        mono = time.monotonic()
        with self._lock:
            for st in states:
                key = (st.device_class, st.id)
                old = self.entries.get(key)
                read_at = st.stamp or 0.0
                if old is None:
                    self.entries[key] = CachedState(st, mono, as_of, read_at)
                elif old.read_at <= read_at:
                    self.entries[key] = CachedState(st, mono, max(as_of, old.as_of), read_at)
                elif raise_newer:
                    self.entries[key] = old._replace(as_of=max(old.as_of, as_of))
                self._see(st)
            self.version += 1

    def _see(self, st: DeviceState) -> None:
        """Count ``st``'s device among its class's ids (under ``_lock``)."""
        seen = self.seen.get(st.device_class, frozenset())
        if st.id not in seen:
            self.seen[st.device_class] = seen | {st.id}

    def fence(self, device_class: str, ids: Sequence[int] | None = None) -> None:
        """A command on these devices (None: every seen id of the class) has
        been answered: readings taken before now no longer count."""
        now = time.time()
        if ids is None or not len(ids):
            ids = self.seen.get(device_class, frozenset())
        with self._lock:
            for i in ids:
                self.fences[(device_class, i)] = now
            self.version += 1

    def fresh(self, device_class: str, ids: Sequence[int]) -> list[DeviceState] | None:
        """The states of every id if none is older than its limit nor than its
        device's fence, else None. The answer is kept: a control application
        polling at kHz rates asks for the same devices between two changes
        hundreds of times (issue 31)."""
        key = (device_class, tuple(ids))
        version = self.version      # read first: a change meanwhile is a miss next time
        now = time.monotonic()
        hit = self._fresh.get(key)
        if hit is not None and hit[0] == version and now < hit[1]:
            return hit[2]
        out = []
        ages_out = float("inf")
        cache, interval, fences = self.entries, self._interval, self.fences
        for i in ids:
            k = (device_class, i)
            e = cache.get(k)
            if e is None:
                return None
            if e.as_of < fences.get(k, 0.0):
                self.fenced_reads += 1
                return None
            limit = interval.get(k, 0.5) * self.max_age_factor
            end = e.received + (limit if limit > self.min_age else self.min_age)
            if now > end:
                return None
            if end < ages_out:
                ages_out = end
            out.append(e.state)
        if len(self._fresh) >= FRESH_KEPT:
            self._fresh.clear()
        self._fresh[key] = (version, ages_out, out)
        return out
