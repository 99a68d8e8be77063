"""Start-up warm-up: run each installed solver once on a tiny table so numba's kernels are loaded (or, on a cold
cache, compiled) before the user clicks Run (once per process; later sessions find them in memory).

The solvers are warmed in a background thread, the first page's solver first, then the others a few at a time
(as many as there are cores: their compiles run in parallel worker processes, :func:`treeexplorer.warm.
compile_in_workers`, so the server's interpreter keeps answering pages while they compile); a solver the user
picks in the Solver select (:func:`prefer`) moves to the head of the queue, so its compile overlaps the user's
other choices instead of starting at Run.  The Rashomon enumeration's kernels (the Alternatives card) come last,
or next when the card is opened.

A run waits for its solver's kernels through :func:`kernels_first`: the compile (which numba cannot stop) goes
on in a thread of its own, or is the background warm-up's when that one is at it, so it is never done twice
and a Cancel during it ends the run at once.
"""

from __future__ import annotations

import threading

from treeexplorer.registry import SOLVER_NAMES, available_solvers
from treeexplorer.solvers import Cancelled
from treeexplorer.warm import (
    WARM_NAMES,
    compile_in_workers,
    cores,
    ensure_warm,
    estimate_seconds,
    is_warm,
    needs_compile,
)

__all__ = [
    "compiling_report",
    "first_front_shown",
    "kernels_first",
    "load_kernels",
    "must_compile",
    "prefer",
    "warm_up",
    "warm_up_once",
    "warm_up_in_background",
]

_lock = threading.Lock()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()
_queue: list[str] = []  # solvers the background warm-up has yet to warm, the next one first
_queue_lock = threading.Lock()
# Set once a page has its first front (or the user picked another solver): until then the warm-up stops after
# the first page's solver, since compiling the others takes the cores the page's first solve needs.
_first_front = threading.Event()
FIRST_PAGE_WAIT_S = 60.0


def warm_up(solvers=None, time_limit: float = 20.0) -> dict[str, float]:
    """Load each built-in solver's kernels (:func:`treeexplorer.warm.ensure_warm`), then the Rashomon
    enumeration's, those not in numba's cache compiled first, in parallel worker processes; returns seconds per
    name warmed by this call.  ``time_limit`` is kept for compatibility (the toy runs are instant once
    compiled)."""
    out = {}
    names = [name for name in solvers or _names() if not is_warm(name)]
    try:
        compile_in_workers(names)
    except Exception:  # noqa: BLE001 - each one's warm-up below compiles what is missing
        pass
    for name in names:
        if is_warm(name):
            continue
        try:
            out[name] = ensure_warm(name, announce=False)  # the page says it compiles; stderr stays quiet
        except Exception:  # a solver that cannot be loaded is simply not warmed
            continue
    return out


def _names() -> list[str]:
    """What the app warms, in order: the solvers of the Solver select, then the other kernels (``rashomon``)."""
    return [*(n for n in available_solvers() if n in SOLVER_NAMES), *(n for n in WARM_NAMES if n not in SOLVER_NAMES)]


def prefer(solver: str | None) -> None:
    """Warm ``solver`` next (the one the user just selected, or ``"rashomon"`` when the Alternatives card opens):
    it moves to the head of the background queue.
    Nothing happens when it is warm already or no background warm-up runs (its run then warms it)."""
    with _queue_lock:
        if solver in _queue:
            _queue.remove(solver)
            _queue.insert(0, solver)
            _first_front.set()  # the user is choosing: the page is up


def first_front_shown() -> None:
    """Say that a page has its first front: the background warm-up goes on with the other solvers."""
    _first_front.set()


def _next() -> str | None:
    with _queue_lock:
        return _queue.pop(0) if _queue else None


def warm_up_once(first: str | None = None) -> dict[str, float]:
    """Warm every built-in solver, ``first`` (the solver the first page runs) first, then in the order of
    :func:`prefer` calls and the solvers' list, the Rashomon kernels last; guarded so concurrent callers warm
    each only once."""
    names = _names()
    if first in names:
        names.remove(first)
        names.insert(0, first)
    out = {}
    with _lock:
        with _queue_lock:
            _queue[:] = [n for n in names if not is_warm(n)]
        while (name := _next()) is not None:
            batch = [name]
            if name != first:  # the others a few at a time: one compile worker per core
                while len(batch) < cores() and (more := _next()) is not None:
                    batch.append(more)
            out.update(warm_up(batch))
            if name == first:
                _first_front.wait(FIRST_PAGE_WAIT_S)
    return out


def warm_up_in_background(first: str | None = None) -> threading.Thread:
    """Start :func:`warm_up_once` in a daemon thread (once per process) and return at once; ``first`` is the
    solver to warm before the others (the first page's: compiling another one meanwhile would slow it down,
    as the compile takes the cores).

    On a machine whose numba cache is cold, compiling every solver takes minutes; done in the foreground it
    would hold the first visitor's page that long.  In the background the page opens as soon as its first
    solver is ready, and a solver the user runs before its turn is simply compiled by the job that needs it.
    """
    global _thread
    with _start_lock:
        if _thread is None:
            _thread = threading.Thread(target=warm_up_once, args=(first,), name="treeexplorer-warm-up", daemon=True)
            _thread.start()
        return _thread


def must_compile(solver: str | None) -> bool:
    """Whether a run of ``solver`` would first compile its kernels (a cold numba cache, and no warm-up of it has
    finished in this process): such a run is one to start in the background rather than to wait for."""
    return bool(solver) and not is_warm(solver) and needs_compile(solver)


def compiling_report(solver: str) -> dict:
    """The progress report a compile of ``solver`` starts with (what :func:`treeexplorer.warm.ensure_warm`
    reports once a second): the run bar's words before the job's first report arrives."""
    return {
        "phase": "compiling",
        "solver": solver,
        "cold": True,
        "seconds": 0.0,
        "estimate_s": estimate_seconds(solver),
    }


def load_kernels(solver: str, control) -> None:
    """Load (or compile) ``solver``'s kernels for a run, on the run's thread, in a wait ``control`` can cancel.

    The loading itself runs in a thread of its own (:func:`ensure_warm`, which waits for the background warm-up
    when that one is compiling the same kernels: never twice) and reports ``"compiling"`` to ``control``.  A
    cancelled run stops waiting (:class:`Cancelled`) while the compile goes on, for the next run.
    """
    if is_warm(solver):
        return
    done = threading.Event()
    failure: list[BaseException] = []

    def load() -> None:
        try:
            ensure_warm(solver, control)
        except Exception as exc:  # noqa: BLE001 - the run reports it
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=load, name=f"treeexplorer-load-{solver}", daemon=True).start()
    while not done.wait(0.1):
        if control.cancelled:
            raise Cancelled(f"cancelled while the {solver} kernels compiled (they go on compiling, for the next run)")
    if failure:
        raise failure[0]


def kernels_first(solver: str, work):
    """``work(control)`` preceded by :func:`load_kernels` of ``solver``: a run's job whose Cancel also ends a
    wait for a compile."""

    def run(control):
        load_kernels(solver, control)
        return work(control)

    return run
