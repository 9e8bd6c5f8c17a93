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

"""Start, spin and stop nodes: the one way every ``main()`` and ``brak_bringup`` run.

    def main(args=None) -> int:
        def build(nodes: Composition) -> None:
            node = RdiGatewayNode(context=nodes.context)
            nodes.add(node, stop=node.stop)     # raises Stopping if a signal came meanwhile
            node.start()
        return run("rdi_gateway", build, args=args)

Which executor spins the nodes: :mod:`bsal_ros.nodes.executors` (``auto``:
the EventsExecutor, or a thread pool when a node's callbacks block).

What it guarantees: SIGINT (Ctrl-C, ``ros2 launch``) and SIGTERM (systemd,
``docker stop``, a supervisor) from the program's first instruction on
(:mod:`bsal_ros.entry_points` installs the handlers before any import)
end the process with exit code 0 and no traceback: before the node exists, during its
construction, during the hardware node's start-up homing, while a gateway's
asyncio thread starts or closes, with a client connected. Stopping follows
one order (``Composition.close``):

1. leave the spin loop (at most ``SPIN_PERIOD_S`` after the signal, or when
   the callback running then returns);
2. run every node's ``stop`` step, gateways first (sessions end, their
   safety stops are service calls to the hardware node, sockets close,
   asyncio threads are joined; the hardware node aborts a running
   home_steering goal and lets it answer) while a helper thread keeps the
   executor serving, so those calls are answered in the one-process bring-up;
3. shut the executor down (its worker threads joined), run every ``close``
   step (the RCI lease keeper's timer and client, and the node of the RCI
   gateway's service clients, destroyed; the hardware
   node: poller joined, every board reset, motors off), destroy the nodes
   (the last one takes the process's DDS participant with it), and shut the
   context down, last.

Bound: the process exits within ``SHUTDOWN_BOUND_S`` (10 s) of the signal, or
of the end of start-up when the signal came during it. Steps 1-3
up to the motors being off typically take well under a second (0.05 s for
the stop steps on ``ros2 launch``; a gateway may take up to
``GATEWAY_STOP_S``); the rest is DDS deleting the nodes' entities, each of
which publishes a graph update to every peer process. Fast DDS's
shared-memory transport can hold such a publish for 1-3.5 s when a peer's
port is in a bad state (a gdb stack of a hardware node whose Ctrl-C stop took
3.5 s: ``destroy_publisher``, waiting on the inter-process mutex of a peer's
port; seen in 3 of 141 ``ros2 launch`` stops with ``ros2`` CLI commands run
against the graph, and once in CI past 5 s, which was ``ros2 launch``'s
default ``sigterm_timeout``). ``brak.launch.py`` gives its nodes
``sigterm_timeout`` equal to the bound, so a clean stop is never cut short by
launch's SIGTERM (under another launch file the SIGTERM at 5 s changes
nothing: the stop goes on). A stop that takes over ``SLOW_STOP_S`` logs one
line with each phase's time. Should a step hang (a wedged I2C driver), a
watchdog prints the stacks of every thread and ends the process with exit
code 1 at the bound (a Python thread, backed by faulthandler's C timer for a
deadlock that holds the GIL; the motors are then stopped by the command
leases and the boards' own command watchdogs). After the clean stop the
process ends with ``os._exit``, skipping the interpreter's teardown, where no
watchdog runs. Before the handlers, a signal has Python's own effect
(docs/DEVELOPING.md). A start a node would refuse is refused before the
first node exists (``check``: :mod:`.preflight`).

The rclpy shutdown races this answers (each seen in CI or on ``ros2 launch``;
those of the signal handlers: :mod:`bsal_ros.nodes.stop_request`):

* Our handler cannot wake an executor blocked in ``rcl_wait`` (a Python
  handler runs only when the main thread is back in Python), and an idle
  gateway's wait may not return for long. Fix: the spin loop is
  ``spin_once(timeout_sec=SPIN_PERIOD_S)`` and looks at the flag after each.
* ``ExternalShutdownException`` out of ``spin_once`` (other code shut the
  context down; no longer a signal): the spin loop ends as on a signal.
* Executor shutdown while a call is pending: a gateway's safety stop is a
  service call that, in the one-process bring-up, the hardware node answers
  from this executor; stopping the executor first left it unanswered. Fix:
  step 2 runs while the executor still serves.
* A coroutine callback still pending when its node is destroyed (a
  home_steering goal): the garbage collector closes the coroutine and its
  clean-up uses the destroyed action server ("Exception ignored in
  <coroutine ActionServer._execute_goal>", RCLError "feedback publisher is
  invalid"). Fix: the hardware node's stop step aborts the homing and waits
  until the goal has answered, while the executor still serves.
* An entity destroyed while a callback that uses it still runs: rclpy
  raises ``InvalidHandle: cannot use Destroyable because destruction was
  requested`` inside the callback's task, which nobody retrieves ("The
  following exception was never retrieved"). Two ways, both seen: (a) a
  node's timer or client destroyed (the RCI lease keeper) while a
  MultiThreadedExecutor's pool still runs its callback; (b)
  ``Executor.shutdown()``, which destroys the executor's guard condition
  *before* it joins the pool, while a callback in the pool is about to
  trigger that guard (every rclpy callback does, when it ends). This
  rclpy's ``shutdown(timeout_sec)`` does not wait for running callbacks (it
  sets its shut-down flag before testing it). Fix: after serving, the
  runtime drains the pool (``executors.drain_pool``), then shuts the
  executor down, then runs the ``close`` steps that destroy entities.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable

from bsal_ros.nodes import executors, process_exit
from bsal_ros.nodes.startup import init_rclpy
from bsal_ros.nodes.stop_request import ignore_late_signals, install_signal_handlers, StopRequest
from bsal_ros.nodes.stop_timing import PhaseClock, StopWatchdog

#: seconds from the stop request (or the end of start-up) to the end of the process
SHUTDOWN_BOUND_S = 10.0
#: seconds the spin loop waits for work before it looks at the stop request again
SPIN_PERIOD_S = 0.1
#: seconds a gateway's stop step may take (its sessions' safety stops included)
GATEWAY_STOP_S = 3.0
#: a stop that takes longer logs one line with the time of each phase
SLOW_STOP_S = 1.0


class Stopping(Exception):
    """A stop was requested during start-up: the nodes not built yet are not built."""


class Composition:
    """Nodes spun by one executor and stopped in a safe order (module docstring).

    ``add(node, stop=..., close=...)``: ``stop`` steps run in the reverse
    order of ``add`` (the gateways before the hardware node they call) while
    the executor still serves (a gateway's sessions and their
    safety stops); ``close`` steps run in the reverse order once it no longer
    does (the hardware node's board reset, and anything that destroys a
    timer, client or subscription: rclpy's executor, spinning in another
    thread, would otherwise use the entity while it is destroyed and fail
    with "cannot use Destroyable because destruction was requested"). Both
    must be idempotent; ``destroy_node`` follows, in the reverse order."""

    def __init__(self, context=None, stop: StopRequest | None = None,
                 executor: str = "auto", num_threads: int = 2):
        self.context = context
        self.stop_request = stop or StopRequest()
        #: "auto", "events", "single" or "multi" (:mod:`.executors`); may be
        #: changed until the executor is first used
        self.executor_kind = executor
        #: a node of this process has callbacks that block (I2C on smbus2):
        #: "auto" then means a thread pool
        self.blocking_callbacks = False
        self.num_threads = num_threads
        self._kind: str | None = None
        self.nodes: list = []
        self._stops: list[tuple[object, Callable[[], None]]] = []
        self._closes: list[tuple[object, Callable[[], None]]] = []
        self._executor = None
        self._closed = False

    # ---------------------------------------------------------------- build
    def add(self, node, *, stop: Callable[[], None] | None = None,
            close: Callable[[], None] | None = None):
        """Register ``node`` (returned). Raises ``Stopping`` if a stop was
        requested meanwhile: the node is closed with the others, nothing more
        is built."""
        self.nodes.append(node)
        if stop is not None:
            self._stops.append((node, stop))
        if close is not None:
            self._closes.append((node, close))
        if self._executor is not None:
            self._executor.add_node(node)
        self.check()
        return node

    def check(self) -> None:
        """Raise ``Stopping`` if a stop was requested (between start-up steps)."""
        if self.stop_request.requested:
            raise Stopping(self.stop_request.reason)

    def resolved_kind(self) -> str:
        """The executor kind this composition builds ("auto" resolved)."""
        if self._kind is None:
            return executors.resolve(self.executor_kind, self.blocking_callbacks)
        return self._kind

    @property
    def executor(self):
        """The composition's executor, made on first use in the composition's context."""
        if self._executor is None:
            self._kind = self.resolved_kind()
            self._executor = executors.make(self._kind, self.context, self.num_threads)
            for node in self.nodes:
                self._executor.add_node(node)
        return self._executor

    # ----------------------------------------------------------------- spin
    def spin(self) -> None:
        """Serve callbacks until a stop is requested (or the context is shut
        down by someone else)."""
        from rclpy.executors import ExternalShutdownException
        executor = self.executor
        stop = self.stop_request
        # The EventsExecutor does not raise ExternalShutdownException: look.
        watch_context = self._kind == "events"
        while not stop.requested:
            try:
                executor.spin_once(timeout_sec=SPIN_PERIOD_S)
                if watch_context and not self._context_ok():
                    stop.request("context shut down")
            except ExternalShutdownException:
                stop.request("context shut down")
            except Exception:
                # RCLError "the given context is not valid" when another code
                # path shut the context down between rclpy's context.ok()
                # check and the wait set: end as on a signal. Anything else
                # with a valid context is a defect in a callback: raised.
                if self._context_ok():
                    raise
                stop.request("context shut down")

    def _context_ok(self) -> bool:
        if self.context is not None:
            return self.context.ok()
        import rclpy
        return rclpy.ok()

    # ---------------------------------------------------------------- close
    def close(self, clock: PhaseClock | None = None) -> None:
        """Stop steps while serving, executor shutdown, close steps, destroy;
        each phase a lap of ``clock``."""
        if self._closed:
            return
        self._closed = True
        clock = clock or PhaseClock()
        if self._stops:
            self._serve_while(self._run_steps, reversed(self._stops), "stopping")
        clock.lap("stop steps")
        if self._executor is not None:
            # Before the close steps destroy timers and clients, and before
            # shutdown() destroys the executor's guard condition: no callback
            # may still run in a MultiThreadedExecutor's pool.
            if self._kind == "multi":
                executors.drain_pool(self._executor, self.num_threads, 1.0)
            self._executor.shutdown(timeout_sec=1.0)
        clock.lap("executor")
        self._run_steps(reversed(self._closes), "closing")
        clock.lap("close steps")
        for node in reversed(self.nodes):
            name = _node_name(node)
            _quietly(node.destroy_node, node, "destroying")
            clock.lap(f"destroying {name}")

    def _serve_while(self, work, *args) -> None:
        """Run ``work(*args)`` while a helper thread spins the executor."""
        serving = threading.Event()
        serving.set()
        executor = self.executor

        def serve():
            reported = False
            while serving.is_set():
                try:
                    executor.spin_once(timeout_sec=0.05)
                except Exception as exc:   # noqa: BLE001 - keep serving the safety stops
                    if not self._context_ok():
                        return
                    if not reported:
                        reported = True
                        _report(f"a callback failed while stopping: {exc!r}")
        server = threading.Thread(target=serve, name="runtime-serve-while-stopping", daemon=True)
        server.start()
        try:
            work(*args)
        finally:
            serving.clear()
            server.join(2.0)

    @staticmethod
    def _run_steps(steps, what: str) -> None:
        for node, step in steps:
            _quietly(step, node, what)


def _node_name(node) -> str:
    try:
        return node.get_name()
    except Exception:   # noqa: BLE001 - a node half destroyed
        return type(node).__name__


def _quietly(step: Callable[[], object], node, what: str) -> None:
    """Run one closing step; a failure is logged (one line) and the others still run."""
    try:
        step()
    except Exception as exc:   # noqa: BLE001 - keep closing the others
        _report(f"{what} {_node_name(node)}: {exc!r}")


def _report(line: str) -> None:
    print(f"[runtime] {line}", file=sys.stderr, flush=True)


class StartupError(Exception):
    """A node cannot start (port in use, users file): one fatal line, exit code 2."""


def run(name: str, build: Callable[[Composition], None], *, args: list[str] | None = None,
        executor: str = "auto", num_threads: int = 2, duration: float = 0.0,
        stop_message: str = "stopping", hard_exit: bool = True, check=None, stop=None) -> int:
    """Init rclpy, ``check(argv)`` (:mod:`.preflight`: "" or why a node would
    refuse to start, before any exists), ``build(nodes)``, spin until
    SIGINT/SIGTERM (or ``duration`` s), stop everything in order; returns the
    exit code (0; 2 on a refusal or StartupError). ``stop``: the request the
    entry point installed first (:mod:`bsal_ros.entry_points`).

    ``build`` constructs the nodes with ``context=nodes.context``, registers
    each with ``nodes.add`` as soon as it exists and starts them; it may set
    ``nodes.executor_kind`` and ``nodes.blocking_callbacks`` before the
    executor is first used (:mod:`.executors`).

    ``hard_exit`` (the executables): once everything is stopped and the
    context is shut down, the process ends with ``os._exit(code)`` (stdout
    and stderr flushed, coverage data saved: :mod:`.process_exit`) instead
    of the interpreter's own teardown, where the watchdogs no longer run
    (Python freezes daemon threads and cancels faulthandler's timer there):
    a hang seen once in about 400 runs, after a clean stop, had no bound
    (``hard_exit=False``: the code is returned)."""
    stop = stop or StopRequest()
    install_signal_handlers(stop)     # first: no signal may find Python's default
    import rclpy.logging              # binds rclpy too
    code, composition, started_at = 0, None, None
    log = rclpy.logging.get_logger(name)
    why = init_rclpy(args, check)
    if why:                 # nothing started: nothing to stop
        log.fatal(why)
        return _finish(2, hard_exit)
    try:
        composition = Composition(None, stop, executor, num_threads)
        if duration > 0:
            timer = threading.Timer(duration, stop.request, args=(f"--duration {duration:g}",))
            timer.daemon = True     # must not keep the process alive after a signal
            timer.start()
        try:
            composition.check()
            try:
                executors.requested_kind(executor)    # a bad BSAL_ROS_EXECUTOR
            except ValueError as exc:
                raise StartupError(str(exc)) from None
            build(composition)
            started_at = time.monotonic()
            composition.spin()
        except Stopping:
            pass
        except StartupError as exc:
            log.fatal(str(exc))
            code = 2
    finally:
        # The bound counts from the signal, or from the end of start-up when
        # the signal came during it (or from now, when start-up failed).
        now = time.monotonic()
        phases = PhaseClock()     # how long each phase of the stop takes
        watchdog = StopWatchdog(max(stop.when or now, started_at or now) + SHUTDOWN_BOUND_S,
                                name, SHUTDOWN_BOUND_S, phases)
        if stop.requested:
            log.info(f"{stop_message} ({stop.reason})")
        try:
            if composition is not None:
                composition.close(phases)
        finally:
            rclpy.try_shutdown()
            phases.lap("context shutdown")
            ignore_late_signals()
        if phases.total() > SLOW_STOP_S:
            _report(f"{name}: the stop took {phases.total():.2f} s ({phases.summary()})")
    return _finish(code, hard_exit, watchdog)


def _finish(code: int, hard_exit: bool, watchdog: StopWatchdog | None = None) -> int:
    """End the process with ``code`` (``hard_exit``) or return it."""
    if hard_exit:
        process_exit.hard_exit(code)    # flushes output, saves coverage data
    if watchdog is not None:
        watchdog.cancel()
    return code
