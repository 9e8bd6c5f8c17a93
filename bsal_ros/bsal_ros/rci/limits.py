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

"""Limits of the RCI gateway against mistakes and floods (docs/SECURITY.md).

Pure, no sockets, no asyncio: the server (:mod:`bsal_ros.rci.server`) asks
these two small tables what to do.

* :class:`LoginThrottle`: per source address, after ``max_failures`` failed
  logins within ``window_s``, each further attempt from that address waits
  ``base_delay_s``, then twice that, ... (at most ``max_delay_s``) before it
  is answered. A successful login resets the address. Entries expire
  ``window_s`` after the address's last attempt was answered; the table never
  holds more than ``max_entries`` addresses (the least recently active is
  forgotten first).
* :class:`PendingLimit`: how many connections that are not the control
  application's session (being identified, throttled, refused, closing) may
  be open at once, in all and per source address.

Addresses are grouped by :func:`address_key`: an IPv4 address is its own key,
an IPv6 address counts as its /64 network (one host usually owns a whole
/64), an IPv4-mapped IPv6 address as the IPv4 address.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
import ipaddress
import time
from typing import Callable

__all__ = ["LoginThrottle", "PendingLimit", "address_key"]


def address_key(host: str) -> str:
    """The key a source address is counted under (IPv6: its /64)."""
    try:
        ip = ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return str(host)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


@dataclass
class _Entry:
    failures: list          # answer times of the recent failures (not throttled yet)
    throttled: bool = False
    excess: int = 0         # failures since the throttle started
    last: float = 0.0       # when the latest attempt was (or will be) answered


class LoginThrottle:
    """Slows down repeated failed logins from one address.

    Protocol: :meth:`attempt` when an identification arrives (returns the
    seconds to wait before checking and answering it), then :meth:`failed`
    or :meth:`succeeded` once it has been checked. ``max_failures <= 0``
    disables the throttle (every delay is 0). ``clock`` is injectable (tests).
    """

    def __init__(self, max_failures: int = 3, window_s: float = 60.0,
                 base_delay_s: float = 1.0, max_delay_s: float = 30.0,
                 max_entries: int = 1024, clock: Callable[[], float] = time.monotonic):
        if window_s <= 0 or base_delay_s < 0 or max_delay_s < base_delay_s or max_entries < 1:
            raise ValueError("LoginThrottle: need window_s > 0, 0 <= base_delay_s <= "
                             "max_delay_s, max_entries >= 1")
        self.max_failures = int(max_failures)
        self.window_s = float(window_s)
        self.base_delay_s = float(base_delay_s)
        self.max_delay_s = float(max_delay_s)
        self.max_entries = int(max_entries)
        self.clock = clock
        self._t: OrderedDict[str, _Entry] = OrderedDict()
        #: addresses forgotten because the table was full (not expired)
        self.evicted = 0

    @property
    def enabled(self) -> bool:
        """False when ``max_failures`` is 0 (no throttle)."""
        return self.max_failures > 0

    def __len__(self) -> int:
        return len(self._t)

    def __contains__(self, key: str) -> bool:
        e = self._get(key, self.clock())
        return e is not None

    def is_throttled(self, key: str) -> bool:
        """True while attempts from ``key`` are delayed."""
        e = self._get(key, self.clock())
        return e is not None and e.throttled

    def delay_for(self, key: str) -> float:
        """The delay the next attempt from ``key`` would get (no side effect)."""
        e = self._get(key, self.clock())
        return self._delay(e)

    # ------------------------------------------------------------------ API
    def attempt(self, key: str) -> float:
        """An identification from ``key`` arrived: seconds to wait before answering."""
        if not self.enabled:
            return 0.0
        now = self.clock()
        e = self._get(key, now)
        if e is None:
            return 0.0
        d = self._delay(e)
        # the entry lives at least until this attempt is answered
        e.last = max(e.last, now + d)
        self._t.move_to_end(key)
        return d

    def failed(self, key: str) -> bool:
        """A login from ``key`` failed. True when this failure starts a throttled
        episode for that address (log it once, then stay quiet)."""
        if not self.enabled:
            return False
        now = self.clock()
        e = self._get(key, now)
        if e is None:
            self._purge(now)
            while len(self._t) >= self.max_entries:
                self._t.popitem(last=False)      # least recently active first
                self.evicted += 1
            e = self._t[key] = _Entry([])
        self._t.move_to_end(key)
        e.last = max(e.last, now)
        if e.throttled:
            e.excess += 1
            return False
        e.failures = [t for t in e.failures if now - t <= self.window_s]
        e.failures.append(now)
        if len(e.failures) >= self.max_failures:
            e.throttled, e.excess, e.failures = True, 0, []
            return True
        return False

    def succeeded(self, key: str) -> None:
        """A login from ``key`` succeeded: forget the address."""
        self._t.pop(key, None)

    # ------------------------------------------------------------- internals
    def _delay(self, e: _Entry | None) -> float:
        if e is None or not e.throttled:
            return 0.0
        # 2**excess grows fast: stop doubling once past the cap
        d = self.base_delay_s
        for _ in range(min(e.excess, 64)):
            d *= 2.0
            if d >= self.max_delay_s:
                break
        return min(d, self.max_delay_s)

    def _get(self, key: str, now: float) -> _Entry | None:
        e = self._t.get(key)
        if e is not None and now - e.last > self.window_s:
            del self._t[key]           # expired: the episode is over
            return None
        return e

    def _purge(self, now: float) -> None:
        """Drop expired entries from the least recently active end."""
        t = self._t
        while t:
            key, e = next(iter(t.items()))
            if now - e.last > self.window_s:
                del t[key]
            else:
                break


class PendingLimit:
    """Counts open connections that are not the session, in all and per address.

    :meth:`enter` returns ``None`` when the connection may stay, else the name
    of the limit it hit (``"total"`` or ``"address"``); :meth:`leave` when it
    is closed. :meth:`should_log` says whether a refusal deserves a log line:
    at most one per address (or one for the total) every ``log_every_s``
    seconds, so that a flood of connections does not flood the log (the
    server uses it for its other per-connection refusals too).
    """

    def __init__(self, max_total: int = 16, max_per_address: int = 4,
                 log_every_s: float = 60.0, clock: Callable[[], float] = time.monotonic):
        if max_total < 1 or max_per_address < 1:
            raise ValueError("PendingLimit: limits must be >= 1")
        self.max_total = int(max_total)
        self.max_per_address = int(max_per_address)
        self.log_every_s = float(log_every_s)
        self.clock = clock
        self.total = 0
        self._by: dict[str, int] = {}
        self._logged: OrderedDict[str, float] = OrderedDict()
        self.refused = 0

    def count(self, key: str) -> int:
        """Pending connections from ``key``."""
        return self._by.get(key, 0)

    def enter(self, key: str) -> str | None:
        """Count a new connection; the limit it exceeds ("total", "address") or None."""
        if self.total >= self.max_total:
            self.refused += 1
            return "total"
        if self._by.get(key, 0) >= self.max_per_address:
            self.refused += 1
            return "address"
        self.total += 1
        self._by[key] = self._by.get(key, 0) + 1
        return None

    def leave(self, key: str) -> None:
        """A counted connection ended or became the session."""
        n = self._by.get(key, 0) - 1
        if n > 0:
            self._by[key] = n
        else:
            self._by.pop(key, None)
        self.total = max(0, self.total - 1)

    def should_log(self, key: str, which: str) -> bool:
        """True for the first refusal of a kind within ``log_every_s`` (quiet log)."""
        now = self.clock()
        tag = which if which == "total" else f"{which} {key}"
        lg = self._logged
        while lg:                                  # forget old entries (bounded table)
            k, t = next(iter(lg.items()))
            if now - t > self.log_every_s or len(lg) > 256:
                del lg[k]
            else:
                break
        if tag in lg:
            return False
        lg[tag] = now
        return True
