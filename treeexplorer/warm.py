"""Kernel warm-up: load (or compile) a solver's numba kernels before its clock starts.

Numba compiles a kernel on its first call in a process (or loads it from the on-disk cache, which takes
time too).  Counted against a time limit, a cold start can spend the whole limit compiling and return an
unproven tree; so :func:`treeexplorer.api.run_prepared` calls :func:`ensure_warm` before it starts the
solver's :class:`~treeexplorer.solvers.Control`: the time limit then measures the search alone.  Warming
runs the solver once on a small toy table with the argument types of a real run (uint8 tests or float64
columns, int64 labels), then every discretizer and the front assembly on toy tables too (they run inside the
limit as well), once per solver and process; later calls cost a dictionary lookup.

On a cold cache the kernels are never compiled in the calling process: numba's compiler holds the interpreter
(GIL) for minutes, which would freeze a server's event loop and every other thread.  :func:`compile_in_workers`
runs the toys in separate worker processes instead (``python -c``, so a user's unguarded script or one read from
standard input is never re-imported, and no process with threads is forked), one per core and in parallel:
each solver's own kernels in one worker, the kernels every run shares (front assembly, discretizers: job
``"common"``) in another.  The workers write numba's cache; this process then only loads compiled code.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from treeexplorer.registry import SOLVER_NAMES, SolverSpec, get_solver
from treeexplorer.solvers import Control

__all__ = [
    "COMPILE_ESTIMATE_S",
    "WARM_NAMES",
    "compile_in_workers",
    "batch_estimate_seconds",
    "cold_jobs",
    "cores",
    "cpu_share",
    "compile_notice",
    "estimate_seconds",
    "ensure_warm",
    "is_warm",
    "needs_compile",
    "process_cpu",
    "warm_up",
]

logger = logging.getLogger(__name__)

# CPU seconds a cold compile of each solver's own kernels takes (its compile job's worker, treeexplorer.warm's
# import included): the estimate's base (estimate_seconds divides it by the share of a core a worker gets).
# Measured by benchmarks/bench_coldstart.py --warm on a 2-core machine under load 11-16 (CPU seconds stretch
# somewhat with the load too): cart 16 + 4 (import), dpdt 115 + 4, sat 2 + 4.  branches 37-41, contree 136-154,
# murtree 45 and rashomon 244-256: `treeexplorer warm` from a cold cache at load ~2 (2026-12-02, weighted paths in);
# with the missing-value paths (the test command's compile, same day): dpdt 123, murtree 61, contree 179, rashomon
# 275 (an override of the Rashomon entry to 40 s, an older figure, used to hide the dict's).
COMPILE_ESTIMATE_S = {
    "cart": 20,
    "dpdt": 125,
    "murtree": 60,
    "branches": 41,
    "sat": 6,
    "contree": 180,
    "rashomon": 275,
}

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


def _toy_costs() -> np.ndarray:
    """The toy table's cost matrix for the weighted warm-ups (3 classes, one cost of 2)."""
    costs = 1.0 - np.eye(3)
    costs[0, 1] = 2.0
    return costs


def _rashomon_toy(matrix: np.ndarray, y: np.ndarray) -> None:
    from treeexplorer.solvers.rashomon import rashomon

    with Control() as toy_control:
        rashomon(matrix, y, 3, max_depth=3, k=20, control=toy_control)
    with Control() as toy_control:  # the weighted path's kernels (int64 costs for whole and real weights alike)
        rashomon(
            matrix,
            y,
            3,
            max_depth=3,
            k=20,
            control=toy_control,
            sample_weight=np.linspace(0.5, 2.0, len(y)),
            costs=_toy_costs(),
        )


# Kernels with a warm-up of their own that are not a registered solver: ``name -> toy(matrix, y)`` on the binary
# toy table.  The Rashomon set (treeexplorer.rashomon) enumerates MurTree's search space with kernels of its own
# (COMPILE_ESTIMATE_S): the Alternatives card, ``tx.rashomon`` and the CLI's ``rashomon`` warm them, a murtree
# run does not.
_OWN_TOYS = {"rashomon": _rashomon_toy}
# Every name a warm-up is kept for: the built-in solvers, then the kernels above.
WARM_NAMES = (*SOLVER_NAMES, *_OWN_TOYS)
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
    from treeexplorer.evaluate import pack_forest
    from treeexplorer.tree import settle_missing

    gappy = X.copy()
    gappy[::5, 0] = np.nan  # where a gap goes: the pass that finds the nodes training gaps reached
    trees = [Tree.from_raw(raw, list(range(X.shape[1])), schema)]
    settle_missing(trees, gappy, np.ones((3, 3), dtype=np.int64), pack_forest(trees)[0])
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


def _run_solver_toys(name: str) -> None:
    """Run solver ``name`` (or its own toy) on the toy table, each variant: its own kernels load (or compile)."""
    X, y = _toy()
    if name in _OWN_TOYS:
        try:
            _OWN_TOYS[name](np.ascontiguousarray(X.astype(np.uint8)), y)
        except Exception:  # noqa: BLE001 - a toy refused only leaves some kernels cold
            pass
        return
    spec = get_solver(name)
    matrix = np.ascontiguousarray(X.astype(np.uint8) if spec.input == "binary" else X)
    for extra in ({}, *_VARIANTS.get(name, ())):
        try:
            params = spec.resolve(extra)
            with Control() as toy_control:
                spec.run(matrix, y, 3, toy_control, **params)
        except Exception:  # noqa: BLE001 - as above
            continue
    if spec.weighted:  # the weighted path's kernels: whole weights (an int64 path may take them), real ones, and
        # costs alone (dpdt's generators then stay the plain ones, called from the weighted path)
        costs = _toy_costs()
        for w in (np.arange(len(y)) % 3 + 1.0, np.linspace(0.5, 2.0, len(y)), None):
            try:
                with Control() as toy_control:
                    spec.run(matrix, y, 3, toy_control, sample_weight=w, costs=costs, **spec.resolve({}))
            except Exception:  # noqa: BLE001 - as above
                continue
    if spec.missing:  # the kernels that place gaps (a matrix with NaN takes its own path)
        gappy = matrix.copy()
        gappy[::5, 0] = np.nan
        try:
            with Control() as toy_control:
                spec.run(gappy, y, 3, toy_control, **spec.resolve({}))
        except Exception:  # noqa: BLE001 - as above
            pass
    if name in _GROWTH:
        import importlib

        importlib.import_module(f"treeexplorer.solvers.{name}").warm_growth()


def _run_common_toys() -> None:
    """The kernels every run uses besides its solver's: the front assembly and the discretizers."""
    with _locks_guard:
        for warm in (_warm_assembly, _warm_discretizers):
            try:
                warm()
            except Exception:  # noqa: BLE001 - a cold kernel costs time, not correctness
                pass


def _run_toys(name: str) -> None:
    """Run solver ``name`` (or its own toy) on the toy table (each variant), then the front assembly and the
    discretizers: every kernel a run needs loads."""
    _run_solver_toys(name)
    _run_common_toys()


# The compile job of the kernels every run shares (front assembly, discretizers): compiled once, in a worker of
# its own beside the first solver's.
COMMON = "common"
COMPILE_ESTIMATE_S[COMMON] = 16  # as above: 12 + 4


def cores() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count): compile workers, sweep
    workers, job slots."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def cpu_share(processes: int = 1) -> float:
    """The share of one core each of ``processes`` new single-threaded processes can expect now: the cores
    over the runnable processes (the 1-minute load average, which counts the other users of the machine, plus
    the new ones), at most 1."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # no load average (Windows): assume a quiet machine
        load = 0.0
    return max(0.05, min(1.0, cores() / max(1.0, load + processes)))


def estimate_seconds(name: str, share: float | None = None) -> int:
    """Wall seconds a cold compile of ``name``'s kernels takes on this machine now: its CPU seconds
    (:data:`COMPILE_ESTIMATE_S`, measured on a quiet core) over the CPU a worker gets (:func:`cpu_share`), with
    the shared kernels' job running beside it."""
    cpu = COMPILE_ESTIMATE_S.get(name, 30) + sum(COMPILE_ESTIMATE_S.get(o, 30) for o in _ALSO.get(name, ()))
    share = cpu_share(2) if share is None else share
    return max(1, round(cpu / share))


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
    """The file a finished warm-up of ``name`` (a solver, ``"rashomon"`` or :data:`COMMON`) leaves in the
    solvers' numba cache folder: present, its kernels load from the cache; absent, they compile.  Named by
    numba's and Python's versions, as numba's cache is; None when numba caches nothing (JIT disabled)."""
    import numba

    for kernel in _dispatchers("treeexplorer.solvers._kernels.cart"):
        folder = getattr(getattr(kernel, "_cache", None), "_cache_path", None)
        if folder:
            tag = f"numba{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
            return Path(folder) / f"treeexplorer-warm-{name}-{tag}.stamp"
    return None


def cold_jobs(names) -> list[str]:
    """The compile jobs (solver names, ``"rashomon"``, :data:`COMMON`) that warming ``names`` would run."""
    out: list[str] = []
    for name in names:
        out += [j for j in _cold_jobs(name) if j not in out]
    return out


def batch_estimate_seconds(jobs: list[str]) -> tuple[int, int]:
    """``(workers, wall seconds)`` of compiling ``jobs`` in parallel workers on this machine now."""
    workers = max(1, min(cores(), len(_units(jobs))))
    cpu = [COMPILE_ESTIMATE_S.get(j, 30) for j in jobs]
    return workers, max(1, round(max(max(cpu, default=0), sum(cpu) / workers) / cpu_share(workers)))


def _cold_jobs(name: str) -> list[str]:
    """The compile jobs ``name`` still needs (its own, the solvers it calls, the shared kernels) whose
    kernels are not in the cache yet."""
    out = []
    for job in (*_ALSO.get(name, ()), name, COMMON):
        stamp = _stamp(job)
        if stamp is not None and not is_warm(job) and not stamp.exists() and job not in out:
            out.append(job)
    return out


def needs_compile(solver: str | SolverSpec) -> bool:
    """Whether ``solver``'s kernels must be compiled rather than loaded from numba's cache (no warm-up of
    it has finished with this cache yet)."""
    name = solver if isinstance(solver, str) else solver.name
    if is_warm(name) or name not in WARM_NAMES:
        return False
    return bool(_cold_jobs(name))


def compile_notice(solver: str, estimate_s: float | None = None) -> str:
    """What a cold start says: ``compiling the dpdt kernels (first use only, about 60 s on this machine)``, the
    estimate ``estimate_s`` given or :func:`estimate_seconds` now."""
    seconds = estimate_seconds(solver) if estimate_s is None else max(1, round(estimate_s))
    return f"compiling the {solver} kernels (first use only, about {seconds} s on this machine)"


def is_warm(solver: str | SolverSpec) -> bool:
    """Whether ``solver``'s kernels were already loaded in this process (or it has none to load)."""
    name = solver if isinstance(solver, str) else solver.name
    if name == COMMON:
        return bool(_assembly_warm and _discretizers_warm)
    return name in _done or name not in WARM_NAMES


_said: set[str] = set()  # solvers whose compile the Python API announced (once per solver and process)


def ensure_warm(solver: str | SolverSpec, control: Control | None = None, announce: bool = True) -> float:
    """Load ``solver``'s kernels if this process has not yet; returns the seconds it took (0 when warm).

    Only the built-in (numba) solvers and the other kernels of :data:`WARM_NAMES` (``"rashomon"``) are warmed:
    plug-ins have no compiled kernels to load.  Kernels not in numba's cache yet are compiled in worker
    processes first (:func:`compile_in_workers`); this process then loads them.  Thread-safe: a second caller
    waits for the first one's compile and warm-up instead of doing them again.  ``control`` only receives
    ``"compiling"`` progress reports (``solver``, ``cold``: kernels to compile rather than load, ``seconds`` so
    far, ``estimate_s``, ``kernels`` compiled and ``kernels_total`` expected; one a second); its clock is not
    started here.  Without a progress callback to tell, a cold compile is announced once per solver as a
    ``logging`` warning of ``treeexplorer.warm`` (shown on stderr when logging is not set up, as in a notebook),
    unless ``announce`` is false (the app's background warm-up, which says it in the page).  A solver that
    fails on the toy table is marked warm anyway (its real run reports the problem).
    """
    name = solver if isinstance(solver, str) else solver.name
    if isinstance(solver, str) and name not in _OWN_TOYS:
        get_solver(name)  # an unknown or unavailable solver: its error, before any work
    if is_warm(name):
        return 0.0
    t0 = time.perf_counter()
    jobs = _cold_jobs(name)
    if announce and jobs and (control is None or control.progress is None) and name not in _said:
        _said.add(name)
        logger.warning("%s", compile_notice(name))
    # Reports start before the compile and the lock: a run waiting for another thread's compile (the app's
    # background warm-up) says what it waits for.
    stop_ticker = _start_ticker(name, control, t0, jobs) if control is not None else None
    try:
        if jobs:
            compile_in_workers([name])
            if _exiting.is_set():  # the interpreter is ending: nothing to load for
                return 0.0
        for other in _ALSO.get(name, ()):
            ensure_warm(other, announce=announce)
        with _lock(name):
            if name in _done:
                return 0.0
            _run_toys(name)  # loads the compiled code (or compiles what a failed worker left out)
            _done[name] = time.perf_counter() - t0
            _write_stamp(name)
            return _done[name]
    finally:
        if stop_ticker is not None:
            stop_ticker()


def _write_stamp(name: str) -> None:
    stamp = _stamp(name) if name in WARM_NAMES or name == COMMON else None
    if stamp is not None and not stamp.exists():
        try:
            stamp.write_text("kernels compiled and cached\n")
        except OSError:  # a read-only cache: numba compiles every run anyway
            pass


def _start_ticker(name: str, control: Control, t0: float, jobs: list[str]):
    """Report ``"compiling"`` to ``control`` once a second until the returned function is called (it waits
    for the last report, so none comes after the run's own)."""
    cold = bool(jobs) or (name in WARM_NAMES and needs_compile(name))
    stop = threading.Event()

    def tick() -> None:
        while True:
            seconds = round(time.perf_counter() - t0, 1)
            done, total, est = job_progress(jobs or [name])
            control.report(
                "compiling",
                solver=name,
                cold=cold,
                seconds=seconds,
                estimate_s=est,
                kernels=done,
                kernels_total=total,
            )
            if stop.wait(1.0):
                return

    thread = threading.Thread(target=tick, daemon=True, name="treeexplorer-compile-tick")
    thread.start()

    def stop_ticker() -> None:
        stop.set()
        thread.join()

    return stop_ticker


# --- compiling in worker processes -----------------------------------------------------------------------------

# Kernel compiles (numba ``numba:compile`` events of treeexplorer's kernels) a cold compile job makes: the
# progress bar's "kernels compiled / total" (a job that compiles more shows total - 1 until it is done).
# Counted by the test command's cold `treeexplorer warm` (its "compiled N kernels" lines, 2026-12-02, the
# weighted and missing-value paths included).
KERNEL_COMPILES = {
    "cart": 14,
    "dpdt": 80,
    "murtree": 47,
    "branches": 41,
    "sat": 1,
    "contree": 38,
    "rashomon": 28,
    COMMON: 16,
}

_WORKER_CODE = "import sys; from treeexplorer.warm import _worker_main; _worker_main(sys.argv[1:])"
_inflight: dict[str, threading.Event] = {}  # job -> set when the worker compiling it (in this process) ended
_inflight_guard = threading.Lock()
# job -> {"kernels": compiled so far, "pid", "t0": its start, "cpu": CPU s used, "done": bool}
_progress: dict[str, dict] = {}
_workers: set[subprocess.Popen] = set()  # running, ended at exit
_exit_hook: list[bool] = []
_exiting = threading.Event()  # set at the interpreter's exit: the workers are ended on purpose


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux ``/proc``; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _job_estimate(job: str, state: dict | None, now: float) -> float:
    """Wall seconds from its start that job ``job`` takes, from the CPU its worker gets so far (a queued or
    unmeasured job: :func:`cpu_share`)."""
    need = COMPILE_ESTIMATE_S.get(job, 30)
    if state is None or "t0" not in state:
        return need / cpu_share(2)
    if state.get("done"):
        return state["end"] - state["t0"]
    elapsed = now - state["t0"]
    cpu = process_cpu(state["pid"]) if state.get("pid") else None
    if cpu is None or elapsed < 3.0 or cpu <= 0:
        return need / cpu_share(2)
    rate = cpu / elapsed  # the share of a core this worker actually gets
    return elapsed + max(need - cpu, 2.0) / rate


def job_progress(jobs: list[str]) -> tuple[int, int, int]:
    """``(kernels compiled, kernels expected, estimated wall seconds from the start)`` of compile jobs
    ``jobs`` (run in parallel: the estimate is the longest one's)."""
    now = time.perf_counter()
    states = {job: _progress.get(job) for job in jobs}
    origin = min((st["t0"] for st in states.values() if st and "t0" in st), default=now)
    done = total = 0
    est = 0.0
    for job, state in states.items():
        expected = KERNEL_COMPILES.get(job, 10)
        count = state["kernels"] if state else 0
        finished = bool(state and state.get("done"))
        done += count if finished else min(count, expected - 1)
        total += count if finished else max(expected, count + 1)
        start = state["t0"] if state and "t0" in state else now  # a queued job starts now at the earliest
        est = max(est, start - origin + _job_estimate(job, state, now))
    return done, total, max(1, round(est))


def _units(jobs: list[str]) -> list[list[str]]:
    """Jobs grouped into worker runs: a solver with the solvers it calls (BRANCHES with CART: its toy compiles
    CART's kernels anyway), every other job alone."""
    units: list[list[str]] = []
    for job in jobs:
        unit = next((u for u in units if any(job in _ALSO.get(n, ()) or n in _ALSO.get(job, ()) for n in u)), None)
        if unit is None:
            units.append([job])
        elif job in _ALSO.get(unit[0], ()):
            unit.insert(0, job)  # the callee first
        else:
            unit.append(job)
    return units


def compile_in_workers(names, on_done=None) -> dict[str, float]:
    """Compile the kernels of ``names`` (solvers, ``"rashomon"``) that numba's cache lacks, in worker
    processes, in parallel on the cores this process may use; wait for them.  Returns the wall seconds of
    each compile job run by this call (the solvers and :data:`COMMON`).

    Jobs another thread of this process is compiling are waited for, not started twice.  ``on_done(job,
    seconds, kernels, cpu_s)`` is called as each job of this call ends (its wall seconds, kernels compiled and
    its worker's CPU seconds).  A worker that fails leaves its kernels to be
    compiled in this process when they are loaded (a warning says so).  Progress: :func:`job_progress`.
    """
    jobs = cold_jobs(names)
    mine, theirs = [], []
    with _inflight_guard:
        for job in jobs:
            if job in _inflight:
                theirs.append(_inflight[job])
            else:
                _inflight[job] = threading.Event()
                _progress.pop(job, None)
                mine.append(job)
    try:
        out = _run_workers(_units(mine), on_done) if mine else {}
    finally:
        with _inflight_guard:
            for job in mine:
                _inflight.pop(job).set()
    for event in theirs:
        event.wait()
    return out


def _end_workers() -> None:
    """At exit: end the workers still compiling (what they saved stays cached; the rest compiles next time)."""
    _exiting.set()
    for proc in list(_workers):
        try:
            proc.kill()
            proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            pass


def _run_workers(units: list[list[str]], on_done) -> dict[str, float]:
    if not _exit_hook:
        import atexit

        atexit.register(_end_workers)
        _exit_hook.append(True)
    # the longest first: the last worker to start is a short one (on a first use: the solver, then COMMON)
    pending = sorted(units, key=lambda u: -sum(COMPILE_ESTIMATE_S.get(j, 30) for j in u))
    slots = max(1, min(cores(), len(pending)))
    wake = threading.Event()
    running: list[tuple[subprocess.Popen, list[str], threading.Thread]] = []
    out: dict[str, float] = {}

    def read(proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            kind, _, rest = line.strip().partition(" ")
            job, _, value = rest.partition(" ")
            state = _progress.get(job)
            if state is None:
                continue
            if kind == "kernel":
                state["kernels"] += 1
            elif kind == "done":
                state["end"] = time.perf_counter()
                state["done"] = True
                out[job] = state["end"] - state["t0"]
                try:
                    state["cpu_s"] = float(value)
                except ValueError:
                    state["cpu_s"] = None
                if on_done is not None:
                    on_done(job, out[job], state["kernels"], state["cpu_s"])
            wake.set()
        wake.set()

    try:
        while (pending or running) and not _exiting.is_set():
            while pending and len(running) < slots:
                unit = pending.pop(0)
                env = {**os.environ, "TREEEXPLORER_COMPILE_WORKER": "1"}
                proc = subprocess.Popen(
                    [sys.executable, "-c", _WORKER_CODE, *unit],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                )
                _workers.add(proc)
                t0 = time.perf_counter()
                for job in unit:
                    _progress[job] = {"kernels": 0, "pid": proc.pid, "t0": t0, "done": False}
                reader = threading.Thread(target=read, args=(proc,), daemon=True, name="treeexplorer-compile-read")
                reader.start()
                running.append((proc, unit, reader))
            wake.wait(0.5)
            wake.clear()
            for item in list(running):
                proc, unit, reader = item
                if proc.poll() is None:
                    continue
                reader.join()
                err = proc.stderr.read().strip() if proc.stderr else ""
                _workers.discard(proc)
                running.remove(item)
                failed = [job for job in unit if not _progress[job].get("done")]
                if failed and not _exiting.is_set():
                    last = err.splitlines()[-1] if err else "no message"
                    logger.warning(
                        "compiling the %s kernels in a worker process failed (exit %s: %s); they compile in this "
                        "process instead",
                        ", ".join(failed),
                        proc.returncode,
                        last,
                    )
    finally:
        for proc, _, _ in running:  # interrupted (Ctrl-C): the workers end with the wait
            _workers.discard(proc)
            proc.kill()
    return out


def _worker_main(jobs: list[str]) -> None:
    """A compile worker (:func:`compile_in_workers`): run ``jobs``' toys in this process, writing numba's cache
    and each job's stamp; say on stdout ``kernel JOB`` per kernel compiled and ``done JOB CPU_S`` per job.
    Ends when the process that started it ends."""
    from numba.core import event

    from treeexplorer._kernel_cache import serialize_cache_writes

    serialize_cache_writes()  # other workers may compile a shared callee at the same time
    parent = os.getppid()

    def orphaned() -> None:  # the caller is gone (killed, os._exit): stop compiling for it
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=orphaned, daemon=True).start()
    current = [""]

    def say(line: str) -> None:
        try:
            print(line, flush=True)
        except (BrokenPipeError, OSError):
            os._exit(0)

    class Count(event.Listener):
        def on_start(self, ev) -> None:
            pass

        def on_end(self, ev) -> None:
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            if str(getattr(func, "__module__", "")).startswith("treeexplorer"):
                say(f"kernel {current[0]}")

    event.register("numba:compile", Count())
    for job in jobs:
        current[0] = job
        c0 = time.process_time()
        if job == COMMON:
            _run_common_toys()
        else:
            _run_solver_toys(job)
        _write_stamp(job)
        say(f"done {job} {time.process_time() - c0:.1f}")


def warm_up(solvers=None) -> dict[str, float]:
    """Warm the given solvers or kernels of :data:`WARM_NAMES` (default: every registered built-in solver, then
    the Rashomon enumeration's kernels), their compiles in parallel worker processes first; returns seconds per
    name warmed by this call."""
    from treeexplorer.registry import available_solvers

    names = []
    for name in solvers or [*(n for n in available_solvers() if n in SOLVER_NAMES), *_OWN_TOYS]:
        try:
            if name not in _OWN_TOYS:
                get_solver(name)
        except (NotImplementedError, ValueError):
            continue
        names.append(name)
    compile_in_workers([n for n in names if not is_warm(n)])
    out = {}
    for name in names:
        try:
            if not is_warm(name):
                out[name] = ensure_warm(name)
        except (NotImplementedError, ValueError):
            continue
    return out
