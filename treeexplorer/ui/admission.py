"""Admission control for a shared server: a process-wide cap on concurrent solves, with a FIFO queue.

Every solve asks the :class:`Scheduler` for a slot before it starts and gives it back when it ends.  At
most ``max_jobs`` solves run at once (default: the CPUs this process may use); further ones wait in
arrival order and learn their place in the queue ("queued: 2 ahead of you"); a queued request can be
cancelled, which frees its place at once.  One session may hold at most ``per_session`` requests
(running or queued) so a single analyst cannot fill the queue.

Headless (no Panel): the job runner (:mod:`treeexplorer.ui.jobs`) uses it from its worker threads.

Settings come from environment variables, read when the process-wide scheduler is first used (so a
launcher can set them before starting the server):

``TREEEXPLORER_MAX_JOBS``
    Concurrent solves in the whole process (positive integer; default: number of usable CPUs).
``TREEEXPLORER_JOBS_PER_SESSION``
    Requests (running or queued) one session may hold (positive integer; default 1).
``TREEEXPLORER_MAX_UPLOAD_MB``
    Upload cap in megabytes (positive number; default 20), see :func:`max_upload_bytes`.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

__all__ = [
    "AdmissionError",
    "Scheduler",
    "Ticket",
    "get_scheduler",
    "set_scheduler",
    "max_upload_bytes",
    "default_max_jobs",
    "queued_text",
]

ENV_MAX_JOBS = "TREEEXPLORER_MAX_JOBS"
ENV_PER_SESSION = "TREEEXPLORER_JOBS_PER_SESSION"
ENV_MAX_UPLOAD_MB = "TREEEXPLORER_MAX_UPLOAD_MB"
DEFAULT_UPLOAD_MB = 20.0


class AdmissionError(RuntimeError):
    """A request refused outright (the session already holds its share of slots, or a bad setting)."""


def _env_number(name: str, kind, default):
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise AdmissionError(f"{name}={raw!r} is not {what}: unset it or give e.g. 4") from None
    if not value > 0:
        raise AdmissionError(f"{name}={raw!r} must be positive")
    return value


def default_max_jobs() -> int:
    """CPUs this process may run on (the scheduler's default cap)."""
    from treeexplorer.folds import cores

    return cores()


def max_upload_bytes() -> int:
    """The upload cap in bytes: ``TREEEXPLORER_MAX_UPLOAD_MB`` megabytes (MiB), 20 by default."""
    return int(_env_number(ENV_MAX_UPLOAD_MB, float, DEFAULT_UPLOAD_MB) * 1024 * 1024)


def mib(n_bytes: int) -> str:
    """A size as the upload limit counts it (MiB: 2**20 bytes), one decimal when it is not whole."""
    v = n_bytes / 2**20
    return f"{v:.0f} MiB" if v == int(v) else f"{v:.1f} MiB"


def queued_text(ahead: int) -> str:
    """What a waiting user reads: ``queued: 2 ahead of you``."""
    return "queued: next in line" if ahead == 0 else f"queued: {ahead} ahead of you"


class Ticket:
    """One request for a slot; created by :meth:`Scheduler.submit`.

    ``state`` is ``"queued"``, ``"running"`` (holds a slot), ``"cancelled"`` (left the queue) or
    ``"released"`` (gave its slot back).
    """

    __slots__ = ("_sched", "session", "seq", "state")

    def __init__(self, sched: Scheduler, session: Hashable, seq: int):
        self._sched = sched
        self.session = session
        self.seq = seq
        self.state = "queued"

    @property
    def position(self) -> int | None:
        """Requests ahead of this one in the queue (0 = next); None once it is no longer queued."""
        return self._sched.position(self)

    def wait(
        self,
        on_position: Callable[[int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        timeout: float | None = None,
        poll: float = 0.25,
    ) -> bool:
        """Block until admitted (True) or cancelled (False); see :meth:`Scheduler.wait`."""
        return self._sched.wait(self, on_position, should_stop, timeout, poll)

    def cancel(self) -> None:
        """Leave the queue (a no-op once running: the solve is stopped by its own control)."""
        self._sched.cancel(self)

    def release(self) -> None:
        """Give the slot back (or leave the queue); safe to call more than once."""
        self._sched.release(self)

    def __enter__(self) -> Ticket:
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Ticket(#{self.seq}, session={self.session!r}, {self.state})"


class Scheduler:
    """A counting semaphore with a visible FIFO queue and per-session limits.

    Parameters
    ----------
    max_jobs : int, optional
        Solves running at once; default :func:`default_max_jobs`.
    per_session : int
        Requests (running plus queued) one session may hold; a further :meth:`submit` raises
        :class:`AdmissionError`.
    """

    def __init__(self, max_jobs: int | None = None, per_session: int = 1):
        max_jobs = default_max_jobs() if max_jobs is None else max_jobs
        if int(max_jobs) != max_jobs or max_jobs < 1:
            raise AdmissionError(f"max_jobs must be a positive whole number, got {max_jobs!r}")
        if int(per_session) != per_session or per_session < 1:
            raise AdmissionError(f"per_session must be a positive whole number, got {per_session!r}")
        self.max_jobs = int(max_jobs)
        self.per_session = int(per_session)
        self._cond = threading.Condition()
        self._queue: deque[Ticket] = deque()
        self._running: set[Ticket] = set()
        self._held: dict[Hashable, int] = {}  # session -> running + queued tickets
        self._seq = itertools.count(1)
        self.admitted_total = 0  # counters for monitoring and the soak test
        self.cancelled_total = 0

    # -- requests --------------------------------------------------------------------------------
    def submit(self, session: Hashable = None) -> Ticket:
        """Join the queue (admitted at once when a slot is free and nobody waits before it).

        ``session`` is any hashable key; ``None`` means "no session", which is never limited.
        """
        with self._cond:
            if session is not None and self._held.get(session, 0) >= self.per_session:
                n = self.per_session
                raise AdmissionError(
                    f"this session already has {n} run{'s' if n > 1 else ''} going or queued "
                    "(the server's limit per session): cancel it or wait for it to finish"
                )
            ticket = Ticket(self, session, next(self._seq))
            self._queue.append(ticket)
            if session is not None:
                self._held[session] = self._held.get(session, 0) + 1
            self._admit()
            return ticket

    def _admit(self) -> None:
        # FIFO: only the head of the queue may take a free slot. Called with the lock held.
        changed = False
        while self._queue and len(self._running) < self.max_jobs:
            head = self._queue.popleft()
            head.state = "running"
            self._running.add(head)
            self.admitted_total += 1
            changed = True
        if changed:
            self._cond.notify_all()

    def _forget(self, ticket: Ticket) -> None:
        if ticket.session is not None:
            left = self._held.get(ticket.session, 0) - 1
            if left > 0:
                self._held[ticket.session] = left
            else:
                self._held.pop(ticket.session, None)

    def wait(
        self,
        ticket: Ticket,
        on_position: Callable[[int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        timeout: float | None = None,
        poll: float = 0.25,
    ) -> bool:
        """Block until ``ticket`` holds a slot (True) or was cancelled (False).

        ``on_position(ahead)`` is called (outside the lock) each time the number of requests ahead
        changes, first on entry.  ``should_stop()`` is checked every ``poll`` seconds, so a cancel flag
        set elsewhere (e.g. the solver's control) also takes the request out of the queue.  On
        ``timeout`` the request leaves the queue and False is returned.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        shown = None
        while True:
            with self._cond:
                if ticket.state == "queued" and should_stop is not None and should_stop():
                    self._cancel_locked(ticket)
                if ticket.state == "queued" and deadline is not None and time.monotonic() >= deadline:
                    self._cancel_locked(ticket)
                if ticket.state != "queued":
                    return ticket.state == "running"
                ahead = self._position_locked(ticket)
                if ahead == shown:
                    wait_for = poll if deadline is None else max(0.0, min(poll, deadline - time.monotonic()))
                    self._cond.wait(wait_for)
                    continue
            shown = ahead
            if on_position is not None:
                on_position(ahead)

    def cancel(self, ticket: Ticket) -> None:
        """Take a queued request out of the queue (running ones are stopped through their solver)."""
        with self._cond:
            self._cancel_locked(ticket)

    def _cancel_locked(self, ticket: Ticket) -> None:
        if ticket.state != "queued":
            return
        self._queue.remove(ticket)
        ticket.state = "cancelled"
        self.cancelled_total += 1
        self._forget(ticket)
        self._admit()
        self._cond.notify_all()  # the others moved up one place

    def release(self, ticket: Ticket) -> None:
        """Free the slot of a running request, or cancel a queued one; idempotent."""
        with self._cond:
            if ticket.state == "queued":
                self._cancel_locked(ticket)
            elif ticket.state == "running":
                self._running.discard(ticket)
                ticket.state = "released"
                self._forget(ticket)
                self._admit()
                self._cond.notify_all()

    # -- state -----------------------------------------------------------------------------------
    def _position_locked(self, ticket: Ticket) -> int | None:
        if ticket.state != "queued":
            return None
        for i, t in enumerate(self._queue):
            if t is ticket:
                return i
        return None

    def position(self, ticket: Ticket) -> int | None:
        with self._cond:
            return self._position_locked(ticket)

    def stats(self) -> dict:
        """``running``, ``queued``, ``sessions`` (holding a request), ``max_jobs``, totals."""
        with self._cond:
            return {
                "running": len(self._running),
                "queued": len(self._queue),
                "sessions": len(self._held),
                "max_jobs": self.max_jobs,
                "per_session": self.per_session,
                "admitted_total": self.admitted_total,
                "cancelled_total": self.cancelled_total,
            }


_SCHEDULER: Scheduler | None = None
_SCHEDULER_LOCK = threading.Lock()


def get_scheduler() -> Scheduler:
    """The process-wide scheduler, built from the environment on first use."""
    global _SCHEDULER
    with _SCHEDULER_LOCK:
        if _SCHEDULER is None:
            _SCHEDULER = Scheduler(
                _env_number(ENV_MAX_JOBS, int, None),
                _env_number(ENV_PER_SESSION, int, 1),
            )
        return _SCHEDULER


def set_scheduler(scheduler: Scheduler | None) -> Scheduler | None:
    """Replace the process-wide scheduler (tests, a launcher with explicit settings); returns the old one.

    ``None`` makes the next :func:`get_scheduler` read the environment again.
    """
    global _SCHEDULER
    with _SCHEDULER_LOCK:
        old, _SCHEDULER = _SCHEDULER, scheduler
        return old
