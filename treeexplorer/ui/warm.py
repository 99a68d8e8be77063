"""Start-up warm-up: run each installed solver once on a tiny table so numba's cached kernels are loaded
before the first user clicks Run (once per process; later sessions find them in memory)."""

from __future__ import annotations

import threading

from treeexplorer.registry import SOLVER_NAMES
from treeexplorer.warm import ensure_warm, is_warm

__all__ = ["warm_up", "warm_up_once", "warm_up_in_background"]

_lock = threading.Lock()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()


def warm_up(solvers=None, time_limit: float = 20.0) -> dict[str, float]:
    """Load each built-in solver's kernels (:func:`treeexplorer.warm.ensure_warm`); returns seconds per
    solver warmed by this call.  ``time_limit`` is kept for compatibility (the toy runs are instant once
    compiled)."""
    from treeexplorer.ui.controller import list_solvers

    out = {}
    for name in solvers or [n for n in list_solvers() if n in SOLVER_NAMES]:
        if is_warm(name):
            continue
        try:
            out[name] = ensure_warm(name)
        except Exception:  # a solver that cannot be loaded is simply not warmed
            continue
    return out


def warm_up_once(first: str | None = None) -> dict[str, float]:
    """:func:`warm_up` guarded so concurrent sessions warm each solver only once; ``first`` (the solver the
    first page runs) is warmed before the others."""
    from treeexplorer.ui.controller import list_solvers

    names = [n for n in list_solvers() if n in SOLVER_NAMES]
    if first in names:
        names.remove(first)
        names.insert(0, first)
    with _lock:
        return warm_up(names)


def warm_up_in_background(first: str | None = None) -> threading.Thread:
    """Start :func:`warm_up_once` in a daemon thread (once per process) and return at once; ``first`` is the
    solver to warm before the others (the first page's: compiling another one meanwhile would slow it down,
    as numba's compiler holds the GIL).

    On a machine whose numba cache is cold, compiling every solver takes a minute or two; done in the
    foreground it would hold the first visitor's page that long.  In the background the page opens at once
    and a solver the user runs before its turn is simply compiled by the job that needs it.
    """
    global _thread
    with _start_lock:
        if _thread is None:
            _thread = threading.Thread(target=warm_up_once, args=(first,), name="treeexplorer-warm-up", daemon=True)
            _thread.start()
        return _thread
