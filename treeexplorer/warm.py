"""Kernel warm-up: load (or compile) a solver's numba kernels before its clock starts.

Numba compiles a kernel on its first call in a process (or loads it from the on-disk cache, which takes
time too).  Counted against a time limit, a cold start can spend the whole limit compiling and return an
unproven tree; so :func:`treeexplorer.api.run_prepared` calls :func:`ensure_warm` before it starts the
solver's :class:`~treeexplorer.solvers.Control`: the time limit then measures the search alone.  Warming
runs the solver once on a small toy table with the argument types of a real run (uint8 tests or float64
columns, int64 labels), then every discretizer and the front assembly on toy tables too (they run inside the
limit as well), once per solver and process; later calls cost a dictionary lookup.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

from treeexplorer.registry import SOLVER_NAMES, SolverSpec, get_solver
from treeexplorer.solvers import Control

__all__ = ["COMPILE_ESTIMATE_S", "WARM_NAMES", "compile_notice", "ensure_warm", "is_warm", "needs_compile", "warm_up"]

# Seconds a first run spends compiling each solver's kernels on an empty cache: the CPU seconds of a first
# `treeexplorer solve iris` less a second one (benchmarks/bench_coldstart.py, 2-core machine, rounded up);
# what the CLI and the app state.  murtree: 32.3 CPU s cold, 1.6 s warm (67.8 s while its warm-up also compiled
# the Rashomon enumeration's kernels, which now warm on their own: "rashomon" below).
COMPILE_ESTIMATE_S = {"cart": 15, "dpdt": 75, "murtree": 35, "branches": 35, "sat": 5, "contree": 70}

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
_done: dict[str, float] = {}  # solver name -> seconds its warm-up took (failed warm-ups count as done)

# Parameter sets run on the toy table beyond the defaults: code paths with kernels of their own.
_VARIANTS = {
    "dpdt": ({"generator": "exhaustive"},),
    "murtree": ({"max_depth": 2},),
}


def _toy() -> tuple[np.ndarray, np.ndarray]:
    """24 rows, 4 binary columns, 3 classes: every solver's kernels see the types of a real run."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(24, 4)).astype(np.float64)
    y = (X[:, 0].astype(np.int64) ^ X[:, 1].astype(np.int64)) + X[:, 2].astype(np.int64) * (X[:, 3] > 0)
    return X, y.astype(np.int64)


# Solvers whose cache grows by a kernel of its own that a toy run never reaches (``solvers.<name>.warm_growth``)
_GROWTH = ("murtree", "contree")

# Solvers that call another solver's kernels (BRANCHES' greedy incumbent is a CART tree).
_ALSO = {"branches": ("cart",)}


def _rashomon_toy(matrix: np.ndarray, y: np.ndarray) -> None:
    from treeexplorer.solvers.rashomon import rashomon

    with Control() as toy_control:
        rashomon(matrix, y, 3, max_depth=3, k=20, control=toy_control)


# Kernels with a warm-up of their own that are not a registered solver: ``name -> toy(matrix, y)`` on the binary
# toy table.  The Rashomon set (treeexplorer.rashomon) enumerates MurTree's search space with kernels of its own
# (about 30 s to compile): the Alternatives card, ``tx.rashomon`` and the CLI's ``rashomon`` warm them, a murtree
# run does not.
_OWN_TOYS = {"rashomon": _rashomon_toy}
# Every name a warm-up is kept for: the built-in solvers, then the kernels above.
WARM_NAMES = (*SOLVER_NAMES, *_OWN_TOYS)
COMPILE_ESTIMATE_S["rashomon"] = 40  # as above, `treeexplorer rashomon iris`: 40.3 CPU s cold, 1.6 s warm
_assembly_warm: list[bool] = []


def _warm_assembly() -> None:
    """Load the front-assembly kernel (one pass counting every tree's nodes): part of every run's time."""
    if _assembly_warm:
        return
    from treeexplorer.evaluate import count_trees
    from treeexplorer.schema import Column, Schema
    from treeexplorer.solvers import RawTree
    from treeexplorer.tree import Tree

    X, y = _toy()
    schema = Schema(tuple(Column(f"x{j}", "numeric") for j in range(X.shape[1])), "y", ("a", "b", "c"))
    raw = RawTree([0, -1, -1], [0.5, 0.0, 0.0], [1, -1, -1], [2, -1, -1], np.ones((3, 3), dtype=np.int64))
    count_trees([Tree.from_raw(raw, list(range(X.shape[1])), schema)], X, y, 3)
    _assembly_warm.append(True)


_discretizers_warm: list[bool] = []


def _warm_discretizers() -> None:
    """Load the discretizers' kernels (MID's ranking, MDLP's cuts) and the test matrix's: the default
    discretizer of a binary solver runs inside the time limit, and so does any other a run names."""
    if _discretizers_warm:
        return
    from treeexplorer.discretize import CRITERIA, DISCRETIZER_NAMES, fit_discretizer
    from treeexplorer.discretize.matrix import build_test_matrix
    from treeexplorer.schema import Column, Schema

    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(48, 3)), 1)  # numeric columns with ties: every discretizer finds tests
    y = ((X[:, 0] + 0.3 * rng.normal(size=48) > 0).astype(np.int64) + (X[:, 1] > 0.5)).astype(np.int64)
    X = np.column_stack([X, rng.integers(0, 2, size=48).astype(np.float64)])  # and a 0/1 column
    schema = Schema(tuple(Column(f"x{j}", "numeric") for j in range(X.shape[1])), "y", ("a", "b", "c"))
    for method in DISCRETIZER_NAMES:
        for criterion in CRITERIA if method == "mid" else ("entropy",):
            try:
                binz = fit_discretizer(method, X, y, schema, criterion=criterion)
                build_test_matrix(binz, X)
            except ValueError:  # "none" refuses the numeric columns: it has no kernel of its own
                continue
    _discretizers_warm.append(True)


def _run_toys(name: str) -> None:
    """Run solver ``name`` (or its own toy) on the toy table (each variant), then the front assembly and the
    discretizers: every kernel a run needs loads."""
    X, y = _toy()
    if name in _OWN_TOYS:
        try:
            _OWN_TOYS[name](np.ascontiguousarray(X.astype(np.uint8)), y)
        except Exception:  # noqa: BLE001 - a toy refused only leaves some kernels cold
            pass
    else:
        spec = get_solver(name)
        matrix = np.ascontiguousarray(X.astype(np.uint8) if spec.input == "binary" else X)
        for extra in ({}, *_VARIANTS.get(name, ())):
            try:
                params = spec.resolve(extra)
                with Control() as toy_control:
                    spec.run(matrix, y, 3, toy_control, **params)
            except Exception:  # noqa: BLE001 - as above
                continue
        if spec.weighted:  # the weighted path's kernels: whole weights (an int64 path may take them) and real ones
            costs = 1.0 - np.eye(3)
            costs[0, 1] = 2.0
            for w in (np.arange(len(y)) % 3 + 1.0, np.linspace(0.5, 2.0, len(y))):
                try:
                    with Control() as toy_control:
                        spec.run(matrix, y, 3, toy_control, sample_weight=w, costs=costs, **spec.resolve({}))
                except Exception:  # noqa: BLE001 - as above
                    continue
        if name in _GROWTH:
            import importlib

            importlib.import_module(f"treeexplorer.solvers.{name}").warm_growth()
    with _locks_guard:
        for warm in (_warm_assembly, _warm_discretizers):
            try:
                warm()
            except Exception:  # noqa: BLE001 - a cold kernel costs time, not correctness
                pass


def _lock(name: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(name, threading.Lock())


def _dispatchers(module_name: str) -> list:
    """The numba kernels a solver module calls directly (the kernels they call compile with them)."""
    import importlib
    import sys

    from numba.core.dispatcher import Dispatcher

    try:
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
    except ImportError:
        return []
    return [v for v in vars(module).values() if isinstance(v, Dispatcher)]


def _stamp(name: str) -> Path | None:
    """The file a finished warm-up of ``name`` leaves beside its compiled kernels (numba's cache folder for
    them): present, the kernels load from the cache; absent, they compile.  Named by numba's and Python's
    versions, as numba's cache is."""
    import sys

    import numba

    for kernel in _dispatchers(f"treeexplorer.solvers.{name}"):
        folder = getattr(getattr(kernel, "_cache", None), "_cache_path", None)
        if folder:
            tag = f"numba{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
            return Path(folder) / f"treeexplorer-warm-{name}-{tag}.stamp"
    return None


def needs_compile(solver: str | SolverSpec) -> bool:
    """Whether ``solver``'s kernels must be compiled rather than loaded from numba's cache (no warm-up of
    it has finished with this cache yet)."""
    name = solver if isinstance(solver, str) else solver.name
    if is_warm(name) or name not in WARM_NAMES:
        return False
    for other in (name, *_ALSO.get(name, ())):
        stamp = _stamp(other)
        if stamp is not None and not is_warm(other) and not stamp.exists():
            return True
    return False


def compile_notice(solver: str) -> str:
    """What a cold start says: ``compiling the dpdt kernels (first run only, about 60 s)``."""
    return f"compiling the {solver} kernels (first run only, about {COMPILE_ESTIMATE_S.get(solver, 30)} s)"


def is_warm(solver: str | SolverSpec) -> bool:
    """Whether ``solver``'s kernels were already loaded in this process (or it has none to load)."""
    name = solver if isinstance(solver, str) else solver.name
    return name in _done or name not in WARM_NAMES


def ensure_warm(solver: str | SolverSpec, control: Control | None = None) -> float:
    """Load ``solver``'s kernels if this process has not yet; returns the seconds it took (0 when warm).

    Only the built-in (numba) solvers and the other kernels of :data:`WARM_NAMES` (``"rashomon"``) are warmed:
    plug-ins have no compiled kernels to load.  Thread-safe:
    a second caller waits for the first one's warm-up instead of compiling again.  ``control`` only
    receives ``"compiling"`` progress reports (``solver``, ``cold``: kernels to compile rather than load,
    ``seconds`` so far, ``estimate_s``; one a second); its clock is not started here.  A solver that fails on
    the toy table is marked warm anyway (its real run reports the problem).
    """
    name = solver if isinstance(solver, str) else solver.name
    if isinstance(solver, str) and name not in _OWN_TOYS:
        get_solver(name)  # an unknown or unavailable solver: its error, before any work
    if is_warm(name):
        return 0.0
    extra_s = sum(ensure_warm(other, control) for other in _ALSO.get(name, ()))
    t0 = time.perf_counter()
    # Reports start before the lock: a run waiting for another thread's compile (the app's background
    # warm-up) says what it waits for.
    stop_ticker = _start_ticker(name, control, t0) if control is not None else None
    try:
        with _lock(name):
            if name in _done:
                return 0.0
            _run_toys(name)
            _done[name] = time.perf_counter() - t0
            _write_stamp(name)
            return _done[name] + extra_s
    finally:
        if stop_ticker is not None:
            stop_ticker()


def _write_stamp(name: str) -> None:
    stamp = _stamp(name) if name in WARM_NAMES else None
    if stamp is not None and not stamp.exists():
        try:
            stamp.write_text("kernels compiled and cached\n")
        except OSError:  # a read-only cache: numba compiles every run anyway
            pass


def _start_ticker(name: str, control: Control, t0: float):
    """Report ``"compiling"`` to ``control`` once a second until the returned function is called (it waits
    for the last report, so none comes after the run's own)."""
    cold = name in WARM_NAMES and needs_compile(name)
    est = COMPILE_ESTIMATE_S.get(name, 30)
    stop = threading.Event()

    def tick() -> None:
        while True:
            seconds = round(time.perf_counter() - t0, 1)
            control.report("compiling", solver=name, cold=cold, seconds=seconds, estimate_s=est)
            if stop.wait(1.0):
                return

    thread = threading.Thread(target=tick, daemon=True, name="treeexplorer-compile-tick")
    thread.start()

    def stop_ticker() -> None:
        stop.set()
        thread.join()

    return stop_ticker


def warm_up(solvers=None) -> dict[str, float]:
    """Warm the given solvers or kernels of :data:`WARM_NAMES` (default: every registered built-in solver, then
    the Rashomon enumeration's kernels); returns seconds per name warmed by this call."""
    from treeexplorer.registry import available_solvers

    out = {}
    for name in solvers or [*(n for n in available_solvers() if n in SOLVER_NAMES), *_OWN_TOYS]:
        try:
            if not is_warm(name):
                out[name] = ensure_warm(name)
        except (NotImplementedError, ValueError):
            continue
    return out
