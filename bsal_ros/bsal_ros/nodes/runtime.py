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

"""Start, spin and stop an executable's nodes: the one ``run`` every ``main()``
calls (``rdi_gateway.main`` is the shortest), with the one executor of every
executable (:func:`make_executor`). What it promises and why each step is
where it is: docs/DEVELOPING.md, "Start and stop".
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable

from bsal_ros.nodes import process_exit
from bsal_ros.nodes.process_exit import PhaseClock, StopWatchdog
from bsal_ros.nodes.startup_gc import freeze_startup_objects
from bsal_ros.nodes.stop_request import ignore_late_signals, install_signal_handlers, StopRequest

#: seconds from the stop request (or the end of start-up) to the end of the process
SHUTDOWN_BOUND_S = 10.0
#: seconds the spin loop waits for work before it looks at the stop request again
SPIN_PERIOD_S = 0.1
#: a stop that takes longer logs one line with the time of each phase
SLOW_STOP_S = 1.0


class Stopping(Exception):
    """A stop was requested during start-up: nothing more is built."""


class StartupError(Exception):
    """A node cannot start (port in use, users file): one fatal line, exit code 2."""


def make_executor(context=None):
    """A new rclpy EventsExecutor for ``context``: every executable's executor, every
    callback in the spinning thread (why this one: docs/BENCHMARKS.md, "Executor kind")."""
    from rclpy.experimental.events_executor import EventsExecutor
    return EventsExecutor(context=context)


class Composition:
    """The nodes of one process, spun by one executor and stopped in order.

    ``stop`` steps run in the reverse order of ``add`` while the executor
    still serves (a gateway's safety stops, answered by the hardware node
    of the same process); ``close`` steps once it no longer does (what
    destroys timers or clients, the boards' reset); then the nodes are
    destroyed. Made once rclpy is initialised."""

    def __init__(self, stop: StopRequest):
        self.context, self.stop_request = None, stop
        self.executor = make_executor(self.context)
        self.nodes, self._stops, self._closes = [], [], []

    def add(self, node, *, stop: Callable[[], None] | None = None,
            close: Callable[[], None] | None = None):
        """Register ``node`` (returned) and its idempotent ``stop`` and ``close`` steps.

        :raises Stopping: a stop was requested meanwhile (``node`` is stopped with the others)."""
        name = node.get_name()          # for the lines of the stop; no longer once destroyed
        self.nodes.append((name, node))
        self.executor.add_node(node)
        self._stops += [(name, stop)] if stop else []
        self._closes += [(name, close)] if close else []
        self.check()
        return node

    def check(self) -> None:
        """:raises Stopping: a stop was requested (asked between start-up steps)."""
        if self.stop_request.requested:
            raise Stopping(self.stop_request.reason)

    def spin(self, until: Callable[[], bool] | None = None) -> None:
        """Serve callbacks until ``until()`` (default: a stop is requested) or the
        context is shut down by other code. Main thread, or the stop's helper."""
        import rclpy
        until = until or (lambda: self.stop_request.requested)
        while not until():
            try:
                self.executor.spin_once(timeout_sec=SPIN_PERIOD_S)
            except Exception:   # noqa: BLE001 - ExternalShutdownException, RCLError, a callback's
                if rclpy.ok(context=self.context):
                    raise
            if not rclpy.ok(context=self.context):   # the EventsExecutor raises nothing: look
                self.stop_request.request("context shut down")
                return

    def close(self, clock: PhaseClock) -> None:
        """Stop steps (served by a helper thread), executor shutdown, close
        steps, destroy; each phase a lap of ``clock``. Main thread, once."""
        done = threading.Event()

        def serve():
            while not done.is_set():
                try:
                    return self.spin(done.is_set)
                except Exception as exc:   # noqa: BLE001 - keep serving the safety stops
                    _report(f"a callback failed while stopping: {exc!r}")
        server = threading.Thread(target=serve, name="runtime-serve-while-stopping", daemon=True)
        if self._stops:
            server.start()
        _run_steps(reversed(self._stops), "stopping")
        done.set()
        if server.is_alive():
            server.join(2.0)
        clock.lap("stop steps")
        self.executor.shutdown(timeout_sec=1.0)
        clock.lap("executor")
        _run_steps(reversed(self._closes), "closing")
        clock.lap("close steps")
        for name, node in reversed(self.nodes):
            _run_steps([(name, node.destroy_node)], "destroying")
            clock.lap(f"destroying {name}")


def _run_steps(steps, what: str) -> None:
    """Run each (node name, step); a failure is one line and the others still run."""
    for name, step in steps:
        try:
            step()
        except Exception as exc:   # noqa: BLE001 - keep closing the others
            _report(f"{what} {name}: {exc!r}")


def _report(line: str) -> None:
    print(f"[runtime] {line}", file=sys.stderr, flush=True)


def run(name: str, build: Callable[[Composition], None], *, args: list[str] | None = None,
        duration: float = 0.0, stop_message: str = "stopping", hard_exit: bool = True,
        check=None, stop=None) -> int:
    """Start rclpy, build the nodes, spin until a stop, stop them in order. Main thread.

    :param build: makes the nodes (``context=nodes.context``), registering
        each with ``nodes.add`` as soon as it exists; may raise StartupError.
    :param args: the command line (``sys.argv`` if None): ROS arguments only.
    :param check: ``check(argv)``: "" or why a node would refuse to start (:mod:`.preflight`).
    :param duration: stop by itself after so many seconds (0: never).
    :param stop: the request the entry point installed first (else a new one).
    :param hard_exit: end the process with ``os._exit(code)`` once stopped.
    :returns: exit code 0, or 2 after one fatal line (a refusal).

    The process ends within SHUTDOWN_BOUND_S of the signal or of the end of
    start-up, else with exit code 1 and every thread's stack."""
    stop = stop or StopRequest()
    install_signal_handlers(stop)     # first: no signal may find Python's default
    import rclpy.logging
    log = rclpy.logging.get_logger(name)
    why = init_rclpy(args, check)
    if why:                           # nothing started: nothing to stop
        log.fatal(why)
        return _finish(2, hard_exit)
    code, started_at, nodes = 0, None, Composition(stop)
    if duration > 0:
        timer = threading.Timer(duration, stop.request, args=(f"--duration {duration:g}",))
        timer.daemon = True
        timer.start()
    try:
        nodes.check()
        build(nodes)
        freeze_startup_objects()
        started_at = time.monotonic()
        nodes.spin()
    except Stopping:
        pass
    except StartupError as exc:
        log.fatal(str(exc))
        code = 2
    finally:
        now, phases = time.monotonic(), PhaseClock()
        watchdog = StopWatchdog(max(stop.when or now, started_at or now) + SHUTDOWN_BOUND_S,
                                name, SHUTDOWN_BOUND_S, phases)
        if stop.requested:
            log.info(f"{stop_message} ({stop.reason})")
        try:
            nodes.close(phases)
        finally:
            rclpy.try_shutdown()
            phases.lap("context shutdown")
            ignore_late_signals()
        if phases.total() > SLOW_STOP_S:
            _report(f"{name}: the stop took {phases.total():.2f} s ({phases.summary()})")
    return _finish(code, hard_exit, watchdog)


def _finish(code: int, hard_exit: bool, watchdog: StopWatchdog | None = None) -> int:
    if hard_exit:
        process_exit.hard_exit(code)    # flushes output, saves coverage data
    if watchdog is not None:
        watchdog.cancel()
    return code


def init_rclpy(args: list[str] | None, check=None) -> str:
    """``rclpy.init`` without rclpy's signal handlers (ours only set a flag).

    :returns: "" (started), or why it cannot start: a params file missing or
        malformed, a bad ROS argument, an option that is no ROS argument, or
        ``check(argv)``'s reason.

    When it cannot start, the context is shut down again."""
    import rclpy
    from rclpy.logging import LoggingSeverity, set_logger_level
    from rclpy.signals import SignalHandlerOptions
    from rclpy.utilities import remove_ros_args
    argv = sys.argv if args is None else args
    set_logger_level("rcl", LoggingSeverity.FATAL)   # rcl's own line: the reason is said once
    try:
        rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as exc:   # noqa: BLE001 - rclpy's RCLError, not importable by name
        # rcl appends the C source positions: ", at /path/parser.c:271, at ..."
        return "cannot start: " + " ".join(str(exc).split(", at /")[0].split())
    finally:
        if not any(a.startswith("rcl:=") for a in argv):
            set_logger_level("rcl", LoggingSeverity.UNSET)
    unknown = remove_ros_args(argv)[1:]
    why = (f"unknown option {unknown[0]!r}: this program takes ROS arguments only "
           "(--ros-args -p name:=value, --params-file FILE, -r ...)") if unknown else ""
    why = why or (check(argv) if check else "")
    if why:
        rclpy.try_shutdown()
    return why
