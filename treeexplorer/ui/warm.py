"""Start-up warm-up: run each installed solver once on a tiny table so numba's cached kernels are loaded
before the first user clicks Run (once per process; later sessions find them in memory)."""

from __future__ import annotations

import threading
import time

import numpy as np

from treeexplorer.registry import SOLVER_NAMES
from treeexplorer.solvers import Control

__all__ = ["warm_up", "warm_up_once", "warm_up_in_background"]

_lock = threading.Lock()
_done: dict[str, float] = {}
_thread: threading.Thread | None = None
_start_lock = threading.Lock()


def warm_up(solvers=None, time_limit: float = 20.0) -> dict[str, float]:
    """Solve a 12-row toy problem with each built-in solver; returns seconds per solver (failures skipped).

    Only the built-in (numba) solvers are warmed by default: plug-ins have no compiled kernels to load.
    """
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(12, 3)).astype(np.float64)
    y = X[:, 0].astype(np.int64) ^ X[:, 1].astype(np.int64)
    out = {}
    from treeexplorer.ui.controller import list_solvers, solver_spec

    for name in solvers or [n for n in list_solvers() if n in SOLVER_NAMES]:
        if name in _done:
            continue
        t0 = time.perf_counter()
        try:
            spec = solver_spec(name)
            params = spec.resolve({})
            matrix = X.astype(np.uint8) if spec.input == "binary" else X
            with Control(time_limit) as control:
                spec.run(matrix, y, 2, control, **params)
        except Exception:  # a solver that cannot handle the toy table is simply not warmed
            continue
        out[name] = _done[name] = time.perf_counter() - t0
    return out


def warm_up_once() -> dict[str, float]:
    """:func:`warm_up` guarded so concurrent sessions warm each solver only once."""
    with _lock:
        return warm_up()


def warm_up_in_background() -> threading.Thread:
    """Start :func:`warm_up_once` in a daemon thread (once per process) and return at once.

    On a machine whose numba cache is cold, compiling every solver takes a minute or two; done in the
    foreground it would hold the first visitor's page that long.  In the background the page opens at once
    and a solver the user runs before its turn is simply compiled by the job that needs it.
    """
    global _thread
    with _start_lock:
        if _thread is None:
            _thread = threading.Thread(target=warm_up_once, name="treeexplorer-warm-up", daemon=True)
            _thread.start()
        return _thread
