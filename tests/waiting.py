"""Waiting in tests for the event a check needs, never for a guessed time (issue 47).

A test that sleeps a fixed time before it acts ("start a job, sleep 0.3 s, cancel") or asserts a wall-clock figure
fails on a busy machine, where everything it waits for is slower, and wastes the time on a free one.  These helpers
wait for the event itself (a progress report, a job's state, a file, a log line) with bounds that only a real hang
reaches, and measure "promptly" as the work a process does after an event (its CPU time, which other processes on
the machine do not stretch) rather than as wall time alone.  The speed figures themselves live in ``benchmarks/``.

One home for these: the unit tests import them (``from waiting import ...``, ``tests/`` is on pytest's path) and so
do the browser helpers.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

# No event a test waits for takes this long on the shared 2-core machine at load ~10 unless something hangs.
HANG_S = 120.0


def wait_until(
    cond: Callable[[], Any],
    timeout: float = HANG_S,
    what: str | None = None,
    every: float = 0.01,
    pause: Callable[[float], None] = time.sleep,
) -> Any:
    """The first truthy value of ``cond()``, asked every ``every`` s; fails (an ``AssertionError`` naming
    ``what``) once ``timeout`` s passed without one.  ``pause`` waits between two asks (a browser test passes its
    page's ``wait_for_timeout``, in seconds, so the page keeps running)."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what or getattr(cond, '__name__', 'a condition')}")
        pause(every)


def threads_in(function: str) -> list[int]:
    """Idents of the threads of this process running ``function`` (a frame of that name on their stack) now:
    work known to be under way, or a thread known to be waiting inside it."""
    out = []
    for ident, frame in sys._current_frames().items():
        while frame is not None and frame.f_code.co_name != function:
            frame = frame.f_back
        if frame is not None:
            out.append(ident)
    return out


class WorkClock:
    """Wall and CPU time of this process (every thread) from :meth:`mark` (an event: a cancel, a limit) to
    :meth:`stop`.

    ``within(s)`` says whether what followed the event took at most ``s`` seconds: in wall time, or, on a shared
    machine where other processes stretch every wall-clock figure, in CPU time of this process (the work it did
    after the event; a run ignoring a cancel keeps working and fails both)."""

    def __init__(self) -> None:
        self.marked_at: float | None = None
        self._cpu_at: float | None = None
        self.wall = self.cpu = None

    def mark(self, *_ignored) -> None:
        """The event happened now (callable as a callback: arguments are ignored)."""
        self._cpu_at = time.process_time()
        self.marked_at = time.perf_counter()

    def stop(self) -> WorkClock:
        assert self.marked_at is not None, "the event never happened"
        self.wall = time.perf_counter() - self.marked_at
        self.cpu = time.process_time() - self._cpu_at
        return self

    def within(self, seconds: float) -> bool:
        if self.wall is None:
            self.stop()
        return self.wall <= seconds or self.cpu <= seconds

    def __str__(self) -> str:
        return f"{self.wall:.2f} s wall, {self.cpu:.2f} s CPU after the event"


class OnReport:
    """A progress callback that notices the first report matching ``when`` (a phase name, a predicate of the
    report, or None for any) and then runs ``then()`` once, from the reporting thread (``control.cancel``: the
    cancel lands while the solver is known to be at work, not after a guessed pause).

    :attr:`event` is set at that report, :attr:`report` holds it and :attr:`clock` (a :class:`WorkClock`) is
    marked just before ``then`` runs.  ``forward`` receives every report too."""

    def __init__(
        self,
        when: str | Callable[[dict], bool] | None = None,
        then: Callable[[], Any] | None = None,
        forward: Callable[[dict], Any] | None = None,
    ) -> None:
        self.when, self.then, self.forward = when, then, forward
        self.event = threading.Event()
        self.report: dict | None = None
        self.reports: list[dict] = []
        self.clock = WorkClock()
        self._lock = threading.Lock()

    def _matches(self, info: dict) -> bool:
        if self.when is None:
            return True
        if isinstance(self.when, str):
            return info.get("phase") == self.when
        return bool(self.when(info))

    def __call__(self, info: dict) -> None:
        self.reports.append(info)
        if self.forward is not None:
            self.forward(info)
        with self._lock:
            if self.event.is_set() or not self._matches(info):
                return
            self.report = info
            self.clock.mark()
            self.event.set()
        if self.then is not None:
            self.then()

    def wait(self, timeout: float = HANG_S) -> dict:
        """The matching report, once it came (fails after ``timeout`` s without it)."""
        assert self.event.wait(timeout), f"no progress report matching {self.when!r} within {timeout:g} s"
        return self.report


def wait_progress(session, cond: Callable[[dict], Any], what: str, timeout: float = HANG_S) -> dict:
    """Poll ``session`` (a :class:`~treeexplorer.ui.controller.Controller`, or anything with ``poll()`` and a
    ``progress`` dict) until its progress report satisfies ``cond``; returns that report.  Fails when the job
    ends first (the event can no longer come) or after ``timeout`` s."""

    def seen():
        running = session.poll()
        if cond(session.progress):
            return dict(session.progress)
        assert running, f"the job ended before {what} (last report: {session.progress})"
        return None

    return wait_until(seen, timeout, what)


def cancelling_control(when: str | Callable[[dict], bool] | None = None, **kwargs):
    """A :class:`~treeexplorer.solvers.Control` (``kwargs``: its own) that cancels itself at its first progress
    report matching ``when`` (see :class:`OnReport`): the cancel comes while the solver is known to be at work,
    where a timer set to a guessed delay comes early or late with the machine's load.  Returns
    ``(control, on_report)``; ``on_report.clock`` is marked at the cancel."""
    from treeexplorer.solvers import Control

    on = OnReport(when)
    control = Control(progress=on, **kwargs)
    on.then = control.cancel
    return control, on
