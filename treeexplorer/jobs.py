"""Background work: one job model for every solve that runs beside a UI (a run, the exact front, the alternatives,
a cross-validation, a sweep).

A :class:`Job` runs ``work(control)`` in a daemon thread; ``control`` carries cancel, the time limit and progress.
The worker never touches widgets: it queues typed events (:class:`JobProgress`, :class:`JobPartial`,
:class:`JobDone`, :class:`JobFailed`, :class:`JobCancelled`) that the UI thread applies with :meth:`Job.drain`
(one callback per kind), so a document is only changed from its own thread.  Solver kernels release the GIL, so
the UI stays responsive while a job runs.  A script waits with :meth:`Job.result`.

With a ``scheduler`` (the app's admission control, :mod:`treeexplorer.ui.admission`) a job takes a slot before it
starts: queued, it reports its place as a progress phase, and cancelling takes it out of the queue.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from treeexplorer.data import DataError
from treeexplorer.solvers import Cancelled, Control

log = logging.getLogger(__name__)

__all__ = [
    "Job",
    "JobEvent",
    "JobProgress",
    "JobPartial",
    "JobDone",
    "JobFailed",
    "JobCancelled",
    "readable_error",
]


def readable_error(exc: BaseException) -> str:
    """A one-paragraph message for the user (no traceback): the exception's own text, typed when vague."""
    if isinstance(exc, (DataError, ValueError, NotImplementedError, Cancelled)):
        return str(exc) or type(exc).__name__
    if isinstance(exc, MemoryError):
        return "out of memory: try a smaller depth, fewer bins or a smaller node budget"
    return f"{type(exc).__name__}: {exc}"


class JobEvent:
    """What a job's worker hands to the UI thread (one of the subclasses)."""

    __slots__ = ()


@dataclass(frozen=True)
class JobProgress(JobEvent):
    """A progress report: the solver's ``phase`` and counters (``elapsed`` in seconds)."""

    info: dict


@dataclass(frozen=True)
class JobPartial(JobEvent):
    """The best trees so far (a provisional front) while the run goes on."""

    front: Any


@dataclass(frozen=True)
class JobDone(JobEvent):
    """The work's result: the job's last word."""

    result: Any


@dataclass(frozen=True)
class JobFailed(JobEvent):
    """The work raised: a readable message (the traceback went to the log); the job's last word."""

    message: str
    error: BaseException | None = field(default=None, compare=False, repr=False)  # re-raised by Job.result


@dataclass(frozen=True)
class JobCancelled(JobEvent):
    """Cancelled before any result (while queued, or the work raised ``Cancelled``); the job's last word."""

    message: str


_HANDLERS = {JobProgress: "progress", JobPartial: "partial", JobDone: "done", JobFailed: "failed"}


def _no_place_words(ahead: int) -> str:
    return f"queued: {ahead} ahead"


class Job:
    """Run ``work(control)`` in a daemon thread, with progress, cancel and a result or an error.

    Parameters
    ----------
    work : callable
        ``work(control) -> result``; runs in the worker thread.  It reports through ``control`` (a solver
        does) or through :meth:`report`.
    time_limit : float, optional
        Seconds; the solver returns its best-so-far marked not proven.
    label : str
        Shown in progress messages and the thread's name.
    meta : object, optional
        What the caller needs back when the job ends (the run's settings and data, the exact front's depth...),
        kept as given: one typed object rather than attributes added later.
    control : Control, optional
        Use this control (e.g. one the caller cancels); default a new one with ``time_limit``.
    scheduler : object, optional
        Admission control: ``scheduler.submit(session)`` gives a ticket with ``wait(on_position, should_stop)``,
        ``cancel()`` and ``release()`` (:class:`treeexplorer.ui.admission.Scheduler`); None: start at once.
    session : hashable, optional
        Whose job this is, for the scheduler's per-session limit.
    queued_words : callable, optional
        ``queued_words(ahead)``: the progress phase while the job waits for a slot.
    log_errors : bool, default True
        Log the traceback of a failure (logger ``treeexplorer.jobs``: a server's log); the event carries the
        message either way.
    """

    def __init__(
        self,
        work: Callable[[Control], object],
        time_limit: float | None = None,
        *,
        label: str = "",
        meta: object = None,
        control: Control | None = None,
        scheduler=None,
        session: Hashable | None = None,
        queued_words: Callable[[int], str] = _no_place_words,
        log_errors: bool = True,
    ):
        self.label = label
        self.meta = meta
        self.session = session
        if control is None:
            control = Control(time_limit, poll_interval=0.2)
        if control.progress is None:
            control.progress = self.report
        self.control = control
        self._work = work
        self._scheduler = scheduler
        self._queued_words = queued_words
        self._log_errors = log_errors
        self._events: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._main, name=f"treeexplorer-job-{label}", daemon=True)
        self.ticket = None  # the scheduler's, while queued or running
        self._last: JobEvent | None = None  # the last word (done / failed / cancelled), for result()
        self.started_at: float | None = None
        self.finished = threading.Event()

    # -- the caller's thread ------------------------------------------------------------------------------------
    def start(self) -> Job:
        """Queue for a slot (on the caller's thread, so the queue keeps the order of the clicks) and start."""
        self.started_at = time.perf_counter()
        if self._scheduler is not None:
            try:
                self.ticket = self._scheduler.submit(self.session)
            except RuntimeError as exc:  # refused outright (AdmissionError): the job's last word
                self._end(JobFailed(str(exc), exc))
                self.finished.set()
                return self
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Ask the work to stop (a solver returns what it found so far), or leave the queue."""
        self.control.cancel()
        if self.ticket is not None:
            self.ticket.cancel()

    @property
    def running(self) -> bool:
        return not self.finished.is_set()

    @property
    def elapsed(self) -> float:
        return 0.0 if self.started_at is None else time.perf_counter() - self.started_at

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (tests and scripts); True when it has ended."""
        return self.finished.wait(timeout)

    def result(self, timeout: float | None = None):
        """Wait for the result (``TimeoutError`` after ``timeout`` s); re-raises the work's error."""
        if not self.wait(timeout):
            raise TimeoutError(f"{self.label or 'the job'} is still running after {timeout} s")
        last = self._last
        if isinstance(last, JobDone):
            return last.result
        if isinstance(last, JobFailed) and last.error is not None:
            raise last.error
        raise Cancelled(last.message if isinstance(last, (JobFailed, JobCancelled)) else "the job ended early")

    # -- the UI thread ------------------------------------------------------------------------------------------
    def events(self) -> list[JobEvent]:
        """The events queued since the last call, in order (UI thread)."""
        out = []
        while True:
            try:
                out.append(self._events.get_nowait())
            except queue.Empty:
                return out

    def drain(
        self,
        *,
        progress: Callable[[dict], None] | None = None,
        partial: Callable[[Any], None] | None = None,
        done: Callable[[Any], None] | None = None,
        failed: Callable[[str], None] | None = None,
        cancelled: Callable[[str], None] | None = None,
    ) -> bool:
        """Apply the queued events, each to the callback of its kind (UI thread); True while the job still runs.

        A done, failed or cancelled event is the job's last word: after it the job counts as ended even if its
        thread is still cleaning up.
        """
        handlers = {"progress": progress, "partial": partial, "done": done, "failed": failed, "cancelled": cancelled}
        ended = not self.running  # read before draining: every event is queued before the thread ends
        for event in self.events():
            kind = _HANDLERS.get(type(event), "cancelled")
            if kind not in ("progress", "partial"):
                ended = True
            fn = handlers[kind]
            if fn is not None:
                fn(_payload(event))
        return not ended

    # -- the worker's thread ------------------------------------------------------------------------------------
    def report(self, info: dict) -> None:
        """Queue a progress report (from any thread); a ``partial_front`` in it becomes a :class:`JobPartial`."""
        info = dict(info)
        front = info.pop("partial_front", None)
        self._events.put(JobProgress(info))
        if front is not None:
            self._events.put(JobPartial(front))

    def _end(self, event: JobEvent) -> None:
        self._last = event
        self._events.put(event)

    def _main(self) -> None:
        try:
            if self.ticket is not None and not self.ticket.wait(
                lambda ahead: self.report({"phase": self._queued_words(ahead)}),
                should_stop=lambda: self.control.cancelled,
            ):
                self._end(JobCancelled("cancelled while queued, before it started"))
                return
            result = self._work(self.control)
        except Cancelled as exc:  # its own text when it has one (a CV run says how many folds were done)
            self._end(JobCancelled(str(exc) or "cancelled before any tree was found"))
        except Exception as exc:  # every failure becomes a readable message; the traceback goes to the log
            if self._log_errors:
                log.exception("job %r failed", self.label or "(unnamed)")
            self._end(JobFailed(readable_error(exc), exc))
        else:
            self._end(JobDone(result))
        finally:
            if self.ticket is not None:
                self.ticket.release()
            self.control.stop()
            self.finished.set()


def _payload(event: JobEvent):
    if isinstance(event, JobProgress):
        return event.info
    if isinstance(event, JobPartial):
        return event.front
    if isinstance(event, JobDone):
        return event.result
    return event.message
