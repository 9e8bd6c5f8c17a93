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

"""Command leases on motors: a motor set with ``lease_s`` > 0 is stopped when
no new command or renewal for it comes within ``lease_s`` (SetMotors.lease_s).

:class:`LeaseKeeping` is one responsibility of :class:`~.robot.Robot` (it
shares the robot's lock, devices and stop path); the robot's ``cycle`` calls
:meth:`LeaseKeeping.lease_tick`.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

from ..core.device_classes import DC_MOTOR, PSERVO_MOTOR
from ..core.result import BAD_REQUEST, OK, REFUSED, Result
from ..protocol.values import SPEEDVAL_ZERO


@dataclass
class Lease:
    """A command lease on one motor (SetMotors.lease_s): the motor is stopped
    when ``deadline`` (robot clock) passes without a renewal."""

    lease_s: float
    deadline: float
    granted: float           # clock time of the command that took the lease
    renewals: int = 0


class LeaseKeeping:
    """Leases held by motors, the stops they made, their renewal."""

    def _init_leases(self) -> None:
        # (class, id) -> Lease
        self.leases: dict[tuple[str, int], Lease] = {}
        # motors a lease stopped, until their next command: (class, id) -> (lease_s, late_s, t)
        self.lease_stopped: dict[tuple[str, int], tuple[float, float, float]] = {}
        self.lease_expiries = 0

    def drop_lease(self, key: tuple[str, int]) -> None:
        """Forget a motor's lease (its command is no longer time-limited)."""
        self.leases.pop(key, None)

    def grant_lease(self, key: tuple[str, int], lease_s: float, now: float) -> None:
        """A command took (or renewed by re-sending) a lease of ``lease_s``."""
        old = self.leases.get(key)
        self.leases[key] = Lease(lease_s, now + lease_s, now, old.renewals + 1 if old else 0)

    def renew_lease(self, cls: str, ids: list[int],
                    lease_s: float = 0.0) -> tuple[Result, list[int]]:
        """Push the lease deadline of running leased motors to now + lease_s
        (0: each motor's own lease length). Never writes a speed and never
        restarts a motor (a lease already run out is stopped first): ids
        holding no lease are returned (REFUSED)."""
        if cls not in (DC_MOTOR, PSERVO_MOTOR):
            return Result(BAD_REQUEST,
                          f"renew_lease needs class dc_motor or pservo_motor, not {cls!r}"), []
        if not ids:
            return Result(BAD_REQUEST, "no ids"), []
        lease_s = float(lease_s)
        if not math.isfinite(lease_s) or lease_s < 0.0:
            return Result(BAD_REQUEST, f"lease_s {lease_s} must be 0 (keep each motor's "
                                       f"lease) or a positive number of seconds"), []
        with self.lock:
            err, devs = self._resolve(cls, ids)
            if err:
                return err, []
            now = self.clock()
            self.lease_tick(now)      # a lease that has run out is stopped, not renewed
            renewed, missing, why = [], [], []
            for d in devs:
                ls = self.leases.get(d.key)
                if ls is None:
                    missing.append(d.id)
                    st = self.lease_stopped.get(d.key)
                    why.append(f"{d.name}: lease of {st[0]:g} s ran out {now - st[2]:.3f} s "
                               f"ago, motor stopped" if st else f"{d.name}: holds no lease")
                    continue
                if lease_s > 0.0:
                    ls.lease_s = lease_s
                ls.deadline = now + ls.lease_s
                ls.renewals += 1
                renewed.append(d.name)
            if missing:
                done = f"; renewed: {', '.join(renewed)}" if renewed else ""
                return Result(REFUSED, "; ".join(why) + " (a renewal never restarts a "
                                       "motor: send set_motors)" + done), missing
            return Result(OK, f"{cls}: {len(renewed)} leases renewed"), []

    def lease_state(self, key: tuple[str, int], now: float | None = None) -> dict:
        """For diagnostics: lease length, time left, or the stop a lease made."""
        now = self.clock() if now is None else now
        with self.lock:
            ls = self.leases.get(key)
            out = {"lease": "none", "lease_stopped": "", "lease_expiries": self.lease_expiries}
            if ls is not None:
                out["lease"] = (f"{ls.lease_s:.3f} s, {max(0.0, ls.deadline - now):.3f} s left, "
                                f"{ls.renewals} renewals")
            st = self.lease_stopped.get(key)
            if st is not None:
                out["lease_stopped"] = (f"stopped: its command lease of {st[0]:g} s ran out "
                                        f"(no set_motors or renew_lease; commander gone?)")
            return out

    def lease_tick(self, now: float) -> None:
        """Stop every motor whose lease has run out (caller holds the lock)."""
        for key, ls in list(self.leases.items()):
            if now < ls.deadline:
                continue
            del self.leases[key]
            d = self.devices.get(key)
            if d is None:
                continue
            late = now - ls.deadline
            res = self._stop_motors(d.device_class, [(d, SPEEDVAL_ZERO)])
            self.lease_expiries += 1
            self.lease_stopped[key] = (ls.lease_s, late, now)
            self._event("warn", f"{d.name}: command lease of {ls.lease_s:g} s ran out "
                                f"{late * 1000.0:.0f} ms ago (last command or renewal "
                                f"{now - ls.deadline + ls.lease_s:.3f} s ago, {ls.renewals} "
                                f"renewals): stopping it: {res.message}", d.board.name)
