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

"""Client side of the motor command lease (docs/HARDWARE.md section 14).

A client that sets motors with ``SetMotors.lease_s`` > 0 must renew the lease
of every motor it keeps running, or the hardware node stops the motor when
the lease runs out. That is the point: a client that dies (SIGKILL, crash,
hung executor) stops renewing, and its motors stop within ``lease_s``.

:class:`MotorLeaseKeeper` does the renewing for any rclpy node::

    keeper = MotorLeaseKeeper(node, lease_s=1.0, renew_period_s=0.3)
    req = SetMotors.Request(device_class="dc_motor", commands=[...],
                            lease_s=keeper.lease_s)
    ... answer OK ...
    keeper.update("dc_motor", [(c.id, c.value) for c in req.commands])
    # or: keeper.commanded(cls, ids_with_nonzero_speed) / keeper.released(cls, ids)
    keeper.close()

It renews from a timer in the node's executor with ``call_async`` on the
hardware node's ``renew_lease`` service (one request per device class per
period), never blocks, ignores answers that come after a newer one, and logs
one line when renewals start failing (service gone, no answer, refused) and
one when they recover. A motor the hardware node reports as holding no lease
(its lease ran out and it was stopped, or it was reset) is dropped with one
log line: a renewal never restarts a motor, only a new ``set_motors`` does.
"""

from __future__ import annotations

import threading
import time

from bsal_interfaces.msg import Result
from bsal_interfaces.srv import RenewLease

from bsal_ros.nodes.ros_entities import destroy


class MotorLeaseKeeper:
    """Renew the command leases of the motors a client keeps running.

    ``commanded`` / ``released`` / ``update`` may be called from any thread
    (an asyncio loop, a service callback); the renewals run in ``node``'s
    executor (``callback_group``: the timer's and the client's group).
    """

    def __init__(self, node, lease_s: float = 1.0, renew_period_s: float = 0.3,
                 hardware_namespace: str = "", callback_group=None,
                 clock=time.monotonic):
        lease_s, renew_period_s = float(lease_s), float(renew_period_s)
        if not lease_s > 0.0:
            raise ValueError(f"lease_s must be > 0, not {lease_s}")
        if not 0.0 < renew_period_s <= lease_s / 2.0:
            raise ValueError(f"renew_period_s {renew_period_s} must be > 0 and at most half of "
                             f"lease_s {lease_s} (one lost renewal must not stop the motor)")
        self.node = node
        self.lease_s = lease_s
        self.renew_period_s = renew_period_s
        self._clock = clock
        ns = hardware_namespace.rstrip("/")
        self.service_name = f"{ns}/renew_lease" if ns else "renew_lease"
        self._lock = threading.Lock()
        self._running: dict[str, dict[int, int]] = {}   # class -> id -> generation
        self._gen = 0                 # bumped by every commanded/released
        self._seq = 0                 # renewal requests sent
        self._answered: dict[str, int] = {}   # class -> newest seq answered (older: late)
        self._in_flight: dict = {}    # class -> [(sent at, future)] awaiting an answer
        self._oldest_unanswered: float | None = None
        self._failing = ""            # why renewals fail ("" = they work)
        self._failing_since = 0.0
        self._failures = 0
        self._closed = False
        self.sent = 0
        self.renewed = 0
        self.failed = 0
        self.lost = 0
        self._client = node.create_client(RenewLease, self.service_name,
                                          callback_group=callback_group)
        self._timer = node.create_timer(renew_period_s, self._tick,
                                        callback_group=callback_group)

    # ---- what the client tells us -------------------------------------------------
    def commanded(self, device_class: str, ids) -> None:
        """These motors now run on a lease (set_motors with lease_s answered OK)."""
        with self._lock:
            if self._closed:
                return
            self._gen += 1
            cls = self._running.setdefault(device_class, {})
            for i in ids:
                cls[int(i)] = self._gen

    def released(self, device_class: str, ids) -> None:
        """These motors were stopped (or set without lease): stop renewing them."""
        with self._lock:
            self._gen += 1
            cls = self._running.get(device_class, {})
            for i in ids:
                cls.pop(int(i), None)
            if not cls:
                self._running.pop(device_class, None)

    def update(self, device_class: str, settings) -> None:
        """``settings`` = [(id, value)] as sent: non-zero -> commanded, zero -> released."""
        settings = [(int(i), float(v)) for i, v in settings]
        self.released(device_class, [i for i, v in settings if v == 0.0])
        self.commanded(device_class, [i for i, v in settings if v != 0.0])

    def running(self) -> dict[str, list[int]]:
        """The motors whose leases are kept, per class."""
        with self._lock:
            return {c: sorted(ids) for c, ids in self._running.items() if ids}

    def service_ready(self) -> bool:
        """True while the hardware node's renew_lease service is discovered."""
        return self._client.service_is_ready()

    @property
    def failing(self) -> str:
        """Why renewals currently fail ("" while they work)."""
        return self._failing

    def close(self) -> None:
        """Stop renewing (the client is going away: its leases run out)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._running.clear()
        try:
            self._timer.cancel()
            destroy(self.node, self._timer)
            destroy(self.node, self._client)
        except Exception:   # noqa: BLE001 - node already destroyed
            pass

    # ---- renewals (executor thread) ----------------------------------------------
    def _tick(self) -> None:
        with self._lock:
            if self._closed:
                return
            work = {c: dict(ids) for c, ids in self._running.items() if ids}
            oldest = self._oldest_unanswered
        if not work:
            return
        now = self._clock()
        if oldest is not None and now - oldest > self.lease_s - self.renew_period_s:
            self._failure(f"no answer from {self._client.srv_name} for "
                          f"{now - oldest:.2f} s (lease {self.lease_s:g} s)")
        if not self._client.service_is_ready():
            self._failure(f"service {self._client.srv_name} not available")
            return
        for cls, ids in work.items():
            with self._lock:
                self._seq += 1
                seq = self._seq
                if self._oldest_unanswered is None:
                    self._oldest_unanswered = now
            req = RenewLease.Request(device_class=cls, ids=sorted(ids), lease_s=self.lease_s)
            self.sent += 1
            # Renewals unanswered for longer than a lease can no longer help:
            # drop them, so a service that never answers cannot pile requests
            # up (at most lease_s / renew_period_s + 1 stay in flight).
            flying = [(t, f) for t, f in self._in_flight.get(cls, []) if not f.done()]
            for sent_at, stale in [x for x in flying if now - x[0] > self.lease_s]:
                stale.cancel()
                self._client.remove_pending_request(stale)
            fut = self._client.call_async(req)
            self._in_flight[cls] = [x for x in flying if now - x[0] <= self.lease_s] + [(now, fut)]
            fut.add_done_callback(
                lambda f, cls=cls, ids=ids, seq=seq: self._on_answer(f, cls, ids, seq))

    def _on_answer(self, fut, cls: str, ids: dict[int, int], seq: int) -> None:
        if fut.cancelled():
            return                          # dropped unanswered after a lease
        with self._lock:
            if self._closed or seq <= self._answered.get(cls, 0):
                return                      # closed, or a newer answer came first: late
            self._answered[cls] = seq
            self._oldest_unanswered = None
        try:
            resp = fut.result()
        except Exception as exc:   # noqa: BLE001 - the call failed (node gone, shutdown)
            self._failure(f"{type(exc).__name__}: {exc}")
            return
        if resp is None:
            self._failure("no answer")
            return
        code, msg = int(resp.result.code), str(resp.result.message)
        if code == Result.OK:
            self.renewed += 1
            self._recovered()
            return
        if code == Result.REFUSED and resp.not_held:
            # the hardware node stopped these (lease ran out, reset): drop them,
            # unless the client commanded them again since this renewal was sent
            dropped = []
            with self._lock:
                cur = self._running.get(cls, {})
                for i in resp.not_held:
                    if int(i) in cur and cur[int(i)] == ids.get(int(i)):
                        del cur[int(i)]
                        dropped.append(int(i))
            if dropped:
                self.lost += len(dropped)
                self.node.get_logger().warning(
                    f"motor lease: {cls} {dropped} no longer leased, dropped: {msg}")
            if len(resp.not_held) < len(ids):
                self._recovered()       # the others were renewed
            return
        self._failure(f"renew_lease answered code {code}: {msg}")

    def _failure(self, why: str) -> None:
        self.failed += 1
        with self._lock:
            first = not self._failing
            self._failures += 1
            if first:
                self._failing_since = self._clock()
            self._failing = why
        if first:
            self.node.get_logger().warning(
                f"motor lease: renewals failing ({why}); the hardware node stops the motors "
                f"{self.lease_s:g} s after the last renewal that arrived")

    def _recovered(self) -> None:
        with self._lock:
            if not self._failing:
                return
            n, since = self._failures, self._failing_since
            self._failing, self._failures = "", 0
        self.node.get_logger().info(
            f"motor lease: renewals recovered after {n} failures "
            f"({self._clock() - since:.2f} s)")
