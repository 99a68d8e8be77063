"""Background solving: one worker thread per job, events handed to the UI thread through a queue.

The worker never touches widgets.  It pushes ``("progress", dict)``, ``("done", Front)`` or
``("error", message)`` events; the UI thread drains them with :meth:`Job.events` (the Explorer does so
from a periodic callback), so Bokeh documents are only modified from their own thread.  Solver kernels
release the GIL, so the UI stays responsive while a job runs.

Before solving, a job takes a slot from the process-wide :mod:`~treeexplorer.ui.admission` scheduler
(a server-wide cap on concurrent solves); while it waits, its place in the queue arrives as a
``progress`` event whose phase reads ``queued: 2 ahead of you``, and cancelling takes it out of the queue.
"""

from __future__ import annotations

import queue
import re
import threading
import time
import traceback
from collections.abc import Callable, Hashable

from treeexplorer.data import DataError
from treeexplorer.solvers import Cancelled, Control
from treeexplorer.ui.admission import AdmissionError, Scheduler, get_scheduler, queued_text

__all__ = ["Job", "readable_error", "app_words"]


# The library's messages name its keyword arguments and CLI flags; on the page they name the control to use.
APP_WORDS = (
    (
        re.compile(r"\s*\(drop_missing=True, CLI --drop-missing\)"),
        ": tick **Drop rows with missing values** (Data card)",
    ),
    (
        re.compile(
            r"Choose another target column \(--target\), or confirm it "
            r"\(allow_many_classes=True, CLI --allow-many-classes\)"
        ),
        "Choose another **Target column** (Data card), or confirm it with the **Use ... anyway** button",
    ),
    (  # an ambiguous guess asks (treeexplorer.target.TargetGuess.describe)
        re.compile(r"could also be the target(?!:)"),
        "could also be the target: if one of them is, choose it under **Target column** (Data card)",
    ),
    (
        re.compile(r"discretizer_params=\{'criterion': \.\.\.\} \(CLI: --criterion\)"),
        "the **MID criterion** setting",
    ),
)


def app_words(text: str) -> str:
    """``text`` with the library's argument names (``drop_missing=True``, ``--drop-missing``) replaced by the
    app's controls ("tick Drop rows with missing values")."""
    for pattern, words in APP_WORDS:
        text = pattern.sub(words, text)
    return text


def readable_error(exc: BaseException) -> str:
    """A one-paragraph message for the user (no traceback): the exception's own text, typed when vague."""
    if isinstance(exc, (DataError, ValueError, NotImplementedError, Cancelled)):
        text = str(exc) or type(exc).__name__
    elif isinstance(exc, MemoryError):
        text = "out of memory: try a smaller depth, fewer bins or a smaller node budget"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text


class Job:
    """Run ``work(control)`` in a daemon thread; ``control`` carries cancel, time limit and progress.

    Parameters
    ----------
    work : callable
        ``work(control) -> result``; runs in the worker thread.
    time_limit : float, optional
        Seconds; the solver returns its best-so-far marked not proven.
    label : str
        Shown in progress messages.
    session : hashable, optional
        Whose job this is, for the scheduler's per-session limit (None: not limited).
    scheduler : Scheduler, optional
        Admission control; default the process-wide :func:`~treeexplorer.ui.admission.get_scheduler`.
    """

    def __init__(
        self,
        work: Callable[[Control], object],
        time_limit: float | None = None,
        label: str = "",
        session: Hashable | None = None,
        scheduler: Scheduler | None = None,
    ):
        self.label = label
        self._queue: queue.Queue = queue.Queue()
        self.control = Control(time_limit, progress=self._on_progress, poll_interval=0.2)
        self._work = work
        self._thread = threading.Thread(target=self._main, name=f"treeexplorer-job-{label}", daemon=True)
        self.started_at = None
        self.finished = threading.Event()
        self.last_progress: dict = {}
        self.session = session
        self._scheduler = scheduler
        self.ticket = None

    def start(self) -> Job:
        self.started_at = time.perf_counter()
        try:  # queued here, on the caller's thread, so the queue keeps the order of the clicks
            self.ticket = (self._scheduler or get_scheduler()).submit(self.session)
        except AdmissionError as exc:
            self._queue.put(("error", str(exc)))
            self.finished.set()
            return self
        self._thread.start()
        return self

    def _on_progress(self, info: dict) -> None:
        self._queue.put(("progress", dict(info)))

    def _on_queued(self, ahead: int) -> None:
        # phase only: the status line then reads "<run>: queued: 2 ahead of you" (it changes on each move)
        self._queue.put(("progress", {"phase": queued_text(ahead)}))

    def _main(self) -> None:
        try:
            if not self.ticket.wait(self._on_queued, should_stop=lambda: self.control.cancelled):
                self._queue.put(("cancelled", "cancelled while queued, before it started"))
                return
            result = self._work(self.control)
        except Cancelled as exc:  # its own text when it has one (a CV run says how many folds were done)
            self._queue.put(("cancelled", str(exc) or "cancelled before any tree was found"))
        except Exception as exc:  # every failure becomes a readable message; the traceback goes to the log
            traceback.print_exc()
            self._queue.put(("error", readable_error(exc)))
        else:
            self._queue.put(("done", result))
        finally:
            self.ticket.release()
            self.control.stop()
            self.finished.set()

    def cancel(self) -> None:
        """Ask the solver to stop (it returns what it found so far), or leave the queue."""
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

    def events(self) -> list[tuple[str, object]]:
        """Drain the events queued since the last call (UI thread)."""
        out = []
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out
