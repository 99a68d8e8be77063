"""Fold tasks and the executor that runs them: one home for cross-validation (:mod:`treeexplorer.cv`) and
sweeps (:mod:`treeexplorer.sweep`).

A *fold task* (:class:`FoldTask`, run by :func:`run_fold`) solves one setting on one fold's training rows, or on
all rows (the refit), and measures every tree on the fold's held-out rows.  :func:`run_tasks` runs a list of them
here one by one (``scheduler="serial"``) or on ``dask.distributed`` (a LocalCluster by default, any scheduler
address or Client when given), forwarding a cancel to running tasks and handing each result to a callback.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import time
import uuid
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from treeexplorer.api import Prepared, prepare, run_prepared
from treeexplorer.data import DataError, Dataset
from treeexplorer.front import Front
from treeexplorer.objective import Objective, unit_score
from treeexplorer.registry import get_solver
from treeexplorer.request import RunRequest, discretizer_options
from treeexplorer.solvers import Control, time_limit_seconds
from treeexplorer.warm import cores  # noqa: F401 - its home is warm (a leaf); folds' callers import it here

logger = logging.getLogger(__name__)

__all__ = [
    "KEPT_METRICS",
    "SERIAL",
    "FoldResult",
    "FoldTask",
    "check_cv",
    "connect",
    "cores",
    "cv_notices",
    "explicit_folds",
    "fold_splits",
    "fold_tasks",
    "forward_cancel",
    "mid_criterion",
    "run_fold",
    "run_tasks",
]

SERIAL = "serial"
# Metrics kept per tree of a fold's front (the trees themselves stay on the worker).
KEPT_METRICS = ("splits", "leaves", "depth", "avg_tests", "train_accuracy", "test_accuracy")
_SPLITS: dict = {}  # fold_splits cache (a few recent datasets per process)


def fold_splits(y: np.ndarray, cv: int, repeats: int = 1, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified ``(train, test)`` row indices: ``repeats`` times ``cv`` folds, shuffled with ``seed``.

    Deterministic in ``(y, cv, repeats, seed)``: workers recompute them instead of receiving them.
    """
    from sklearn.model_selection import RepeatedStratifiedKFold

    n = len(y)
    check_cv(cv, repeats, n)
    y = np.ascontiguousarray(y)
    key = (int(cv), int(repeats), int(seed), n, hashlib.blake2b(y.tobytes(), digest_size=16).digest())
    if key in _SPLITS:  # every fold task of a sweep asks again: sklearn's split is most of a small task's time
        return _SPLITS[key]
    splitter = RepeatedStratifiedKFold(n_splits=cv, n_repeats=repeats, random_state=seed)
    with warnings.catch_warnings():  # a class smaller than cv: told once as a notice (see cv_notices)
        warnings.simplefilter("ignore", UserWarning)
        out = [(np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(np.zeros((n, 1)), y)]
    if len(_SPLITS) >= 8:
        _SPLITS.pop(next(iter(_SPLITS)))
    _SPLITS[key] = out
    return out


def check_cv(cv, repeats, n_rows) -> None:
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be a number of folds >= 2, got {cv!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    if cv > n_rows:
        raise DataError(f"cv={cv} folds need at least {cv} rows; the data has {n_rows}: use fewer folds")


def explicit_folds(cv, n_rows: int) -> tuple:
    """Validate user-given ``(train, test)`` row-index pairs; returns them as tuples (picklable, hashable)."""
    out = []
    for k, pair in enumerate(cv):
        try:
            tr, te = (np.asarray(rows) for rows in pair)
        except (TypeError, ValueError):
            raise ValueError(f"fold {k + 1}: expected a (train rows, test rows) pair") from None
        for what, rows in (("train", tr), ("test", te)):
            if rows.ndim != 1 or not len(rows) or not np.issubdtype(rows.dtype, np.integer):
                raise ValueError(f"fold {k + 1}: {what} rows must be a non-empty list of row numbers")
            if rows.min() < 0 or rows.max() >= n_rows:
                raise ValueError(f"fold {k + 1}: {what} row {int(rows.max())} is outside 0..{n_rows - 1}")
        if np.intersect1d(tr, te).size:
            raise ValueError(f"fold {k + 1}: row {int(np.intersect1d(tr, te)[0])} is in both train and test")
        out.append((tuple(int(i) for i in tr), tuple(int(i) for i in te)))
    if not out:
        raise ValueError("cv: no folds given")
    return tuple(out)


def cv_notices(ds: Dataset, cv: int) -> list[str]:
    """What the fold split cannot do well on this data (a class with fewer rows than folds)."""
    counts = np.bincount(ds.y, minlength=ds.schema.n_classes)
    small = [f"{ds.schema.classes[c]!r} ({counts[c]})" for c in range(len(counts)) if 0 < counts[c] < cv]
    if not small:
        return []
    return [f"class(es) {', '.join(small)} have fewer rows than the {cv} folds: some held-out folds lack them"]


@dataclass(frozen=True)
class FoldTask:
    """One unit of work: a setting on one fold (``index >= 0``) or refitted on all rows (``index == -1``).

    Small and picklable: the dataset travels separately (scattered once) and the fold rows are recomputed
    from ``(cv, repeats, seed)`` by :func:`fold_splits`.
    """

    solver: str
    params: dict
    discretizer: str | None
    n_bins: int | None
    criterion: str
    cv: int
    repeats: int
    seed: int
    index: int
    time_limit: float | None = None
    cancel_event: str | None = None  # name of a distributed.Event that cancels the run (sweeps only)
    folds: tuple | None = None  # explicit ((train rows), (test rows)) pairs instead of (cv, repeats, seed)
    objective: Objective = field(default_factory=Objective)  # class weights and costs (row weights: the data's)

    @property
    def is_refit(self) -> bool:
        return self.index < 0

    def request(self) -> RunRequest:
        """The run of this task, checked (:meth:`RunRequest.build`): the same gate as :func:`treeexplorer.solve`."""
        spec = get_solver(self.solver)
        raw = spec.input == "numeric" and self.discretizer in (None, "raw")
        return RunRequest.build(
            spec,
            self.params,
            discretizer=self.discretizer,
            n_bins=self.n_bins,
            # the discretizer's impurity; a solver's own "criterion" is in params
            discretizer_params=None if raw else {"criterion": self.criterion},
            time_limit=self.time_limit,
            class_weight=self.objective,
        )


@dataclass
class FoldResult:
    """What a fold task sends back.

    Attributes
    ----------
    index : int
        Fold number ``repeat * cv + fold`` (``-1``: the refit on all rows).
    status : str
        ``done``, ``time_limit``, ``cancelled`` or ``error``.
    trees : list of dict
        Per tree of the fold's front: splits, leaves, depth, avg_tests, train_accuracy and test_accuracy
        (held-out rows of the fold; ``None`` for the refit).
    front : Front or None
        The whole front, for the refit only.
    error : str or None
        The message of a failed run (the sweep reports it instead of stopping).
    """

    index: int
    status: str
    runtime_s: float
    n_train: int
    n_test: int
    trees: list[dict] = field(default_factory=list)
    front: Front | None = None
    error: str | None = None
    notices: list[str] = field(default_factory=list)


def run_fold(ds: Dataset, task: FoldTask, control: Control | None = None) -> FoldResult:
    """Solve ``task`` on ``ds``; a solver or data error becomes ``FoldResult.error`` (never raised)."""
    t0 = time.perf_counter()
    control = control or Control(task.time_limit)
    if task.time_limit is not None and control.time_limit is None:
        control.time_limit = time_limit_seconds(task.time_limit)
    stop_watch = _watch_cancel_event(task.cancel_event, control) if task.cancel_event else None
    try:
        if task.is_refit:
            prep = prepare(ds)
        else:
            if task.folds is not None:
                train, test = (np.asarray(rows, dtype=np.int64) for rows in task.folds[task.index])
            else:
                train, test = fold_splits(ds.y, task.cv, task.repeats, task.seed)[task.index]
            sub = ds.subset(train)
            w_test = None if ds.weights is None else ds.weights[test]  # held-out rows keep their weights
            prep = Prepared(sub, sub.X, sub.y, ds.X[test], ds.y[test], list(ds.notices), w_test)
        front = run_prepared(prep, task.request(), control=control)
    except (ValueError, RuntimeError, MemoryError, NotImplementedError) as exc:
        # one failing setting (memory guard, too many bins, ...) must not stop a sweep: it becomes a row
        return FoldResult(task.index, "error", time.perf_counter() - t0, 0, 0, error=f"{type(exc).__name__}: {exc}")
    finally:
        if stop_watch is not None:
            stop_watch()
    trees = [{**{k: t.metrics[k] for k in KEPT_METRICS}, **fold_scores(t.metrics, front)} for t in front.trees]
    return FoldResult(
        task.index,
        front.status,
        time.perf_counter() - t0,
        front.n_train,
        front.n_test,
        trees,
        front if task.is_refit else None,
        None,
        list(front.notices),
    )


def fold_scores(metrics: dict, front: Front) -> dict:
    """A fold tree's ``train_score`` and ``test_score``: what the run optimised, larger is better (accuracy,
    balanced accuracy, or minus the cost per unit of weight, see :func:`treeexplorer.objective.unit_score`)."""
    return {
        f"{part}_score": unit_score(metrics, front.score, part, front.weights.get(f"{part}_weight"))
        for part in ("train", "test")
    }


def _watch_cancel_event(name: str, control: Control):
    """Watch the sweep's distributed cancel event from a thread and cancel ``control`` when it is set.

    Tasks shorter than half a second never ask the scheduler (the per-task overhead stays small).
    """
    import threading

    from distributed import Event, get_worker

    try:
        worker = get_worker()
    except ValueError:  # not on a worker (a distributed task run in-process): nothing to watch
        return None
    done = threading.Event()

    def loop():
        if done.wait(0.5):
            return
        try:
            event = Event(name, client=worker.client)
            while not done.is_set():
                if event.is_set():
                    control.cancel()
                    return
                done.wait(0.25)
        except Exception:  # scheduler gone: the task is cancelled or lost anyway
            return

    threading.Thread(target=loop, daemon=True).start()
    return done.set


def fold_tasks(task: FoldTask, refit: bool = True) -> list[FoldTask]:
    """The fold tasks of one setting (``task.index`` ignored), refit last."""

    out = [replace(task, index=i) for i in range(task.cv * task.repeats)]
    return out + ([replace(task, index=-1)] if refit else [])


def forward_cancel(outer: Control, current: list):
    """Watch ``outer`` from a thread and cancel the control in ``current`` (if any); returns the stopper."""
    import threading

    done = threading.Event()

    def loop():
        while not done.wait(0.05):
            if outer.cancelled:
                for c in list(current):
                    c.cancel()

    threading.Thread(target=loop, daemon=True).start()
    return done.set


def mid_criterion(discretizer_params: dict | None) -> str:
    """The discretizer's impurity from ``discretizer_params`` (checked as :func:`treeexplorer.solve` does)."""
    return discretizer_options(discretizer_params)["criterion"]


# -- the executor ------------------------------------------------------------------------------------------------
def connect(scheduler=None, n_workers: int | None = None):
    """A ``distributed.Client`` for ``scheduler`` and a function that releases what this call started.

    ``None``: a new ``LocalCluster`` on 127.0.0.1 with one single-threaded worker process per core (numba
    kernels then run truly in parallel); ``"tcp://host:port"``: an existing scheduler; a ``Client``: used as it
    is (never closed here).
    """
    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        return scheduler, lambda: None
    if isinstance(scheduler, str):
        try:  # waits up to dask's distributed.comm.timeouts.connect (30 s unless configured)
            client = Client(scheduler)
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"cannot reach the dask scheduler at {scheduler}: {exc}") from None
        return client, client.close
    if scheduler is not None:
        raise ValueError(
            f"scheduler must be None, 'serial', an address 'tcp://host:port' or a Client; got {scheduler!r}"
        )
    import dask

    # dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536 (to hand freed memory back to the system);
    # setting it switches off glibc's adaptive mmap threshold, so every array above 128 KiB is mmap-ed, page-faulted
    # and unmapped again: DPDT's fold tasks ran 1.45x slower that way (108 vs 157 ms, magic). Workers here keep
    # glibc's defaults; their peak memory is what bench_sweep.py reports.
    quiet = {
        "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
        # the worker's statistical profiler samples the running task's stack every 10 ms (with the GIL)
        "distributed.worker.profile.enabled": False,
    }
    # Worker processes start by re-reading the main script (multiprocessing's spawn); a script read from standard
    # input (`python - <script`) cannot be re-read, and its nannies would fail to start: threads of this process
    # instead (numba's kernels release the GIL, so folds still run in parallel).
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    processes = main_file is None or os.path.isfile(main_file)
    if not processes:
        logger.warning(
            "the sweep runs on threads of this process: dask's worker processes cannot re-read a script from %s "
            "(save it to a file to use them)",
            main_file,
        )
    with dask.config.set(quiet):
        cluster = LocalCluster(
            n_workers=n_workers or cores(),
            threads_per_worker=1,
            processes=processes,
            **({"host": "127.0.0.1"} if processes else {}),  # threads talk in-process (dask's inproc://)
            dashboard_address="127.0.0.1:0",
            # one core per worker process: numba's own thread pool (parallel kernels) would otherwise start a
            # thread per core in every worker and the processes would fight over the same cores
            **({"env": {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}} if processes else {}),
        )
    client = Client(cluster)

    def close():
        client.close()
        # dask's own close gives each worker process 4 s to exit, then kills it with a warning ("Worker process
        # still alive after 4.0 seconds, killing"); on a busy machine a worker holding numba's code needs more
        _close_workers(cluster, timeout=60.0)
        cluster.close()

    return client, close


def _close_workers(cluster, timeout: float) -> None:
    """Close ``cluster``'s workers (their nannies), each with ``timeout`` seconds to exit before it is killed."""
    import asyncio

    async def close_all() -> None:
        await asyncio.gather(*(w.close(timeout=timeout) for w in list(cluster.workers.values())))

    try:
        cluster.sync(close_all)
    except Exception:  # noqa: BLE001 - cluster.close() below still ends them
        pass


def dashboard_link(client) -> str | None:
    try:
        return client.dashboard_link
    except Exception:  # no dashboard (bokeh missing or disabled): the sweep runs without it
        return None


def _run_serial(ds, tasks, control, collect, state) -> str:
    current: list[Control] = []
    stop = forward_cancel(control, current)
    state["t0"] = time.perf_counter()
    try:
        for i, task in tasks:
            if control.cancelled:
                return "cancelled"
            current[:] = [Control(task.time_limit)]
            collect(i, run_fold(ds, task, current[0]))
    finally:
        stop()
    return "cancelled" if control.cancelled else "done"


def _run_dask(ds, tasks, scheduler, n_workers, control, collect, state, show_progress) -> str:
    import threading

    from distributed import Event, as_completed

    client, release = connect(scheduler, n_workers)
    stop = threading.Event()
    try:
        state["dashboard"] = dashboard_link(client)
        if show_progress and state["dashboard"]:
            print(f"dask dashboard: {state['dashboard']}", file=sys.stderr)
        token = uuid.uuid4().hex[:12]
        cancel = Event(f"treeexplorer-cancel-{token}", client=client)
        state["t0"] = time.perf_counter()
        data = client.scatter(ds, broadcast=True, hash=False)  # once; on every worker so a death loses nothing
        futures = {}
        for n, (i, task) in enumerate(tasks):
            fut = client.submit(
                run_fold,
                data,
                replace(task, cancel_event=cancel.name),
                key=f"treeexplorer-fold-{token}-{n}",
                pure=False,
            )
            futures[fut] = (i, task)
        done_keys: set = set()
        ac = as_completed(list(futures))

        def watch():  # Cancel from any thread: running tasks stop cooperatively, queued ones are dropped
            while not stop.wait(0.1):
                if control.cancelled:
                    cancel.set()
                    client.cancel([f for f in futures if f.key not in done_keys])
                    ac.clear()
                    return

        threading.Thread(target=watch, daemon=True).start()
        for fut in ac:
            if control.cancelled:
                break
            done_keys.add(fut.key)
            i, task = futures[fut]
            collect(i, _outcome(fut, task))
            fut.release()
        return "cancelled" if control.cancelled else "done"
    finally:
        stop.set()
        release()


def _outcome(fut, task: FoldTask) -> FoldResult:
    """A finished future's FoldResult; an exception run_fold did not turn into a result becomes one."""
    if fut.status == "finished":
        return fut.result()
    try:
        exc = fut.exception()
        msg = f"{type(exc).__name__}: {exc}"
    except Exception as e:  # cancelled or lost future
        msg = f"{type(e).__name__}: {e}"
    return FoldResult(task.index, "error", 0.0, 0, 0, error=msg)


def run_tasks(
    ds: Dataset, tasks, collect, *, scheduler=SERIAL, n_workers=None, control=None, state=None, show_progress=False
) -> str:
    """Run ``tasks`` (``(key, FoldTask)`` pairs) on ``ds`` and call ``collect(key, FoldResult)`` for each.

    ``scheduler``: ``"serial"`` (here, one by one), ``None`` (a new LocalCluster), an address or a Client.
    ``state`` (a dict) receives ``t0`` and the cluster's ``dashboard`` link.  Returns ``"done"`` or
    ``"cancelled"`` (``control`` cancelled: running tasks stop cooperatively, queued ones are dropped).
    """
    control = control or Control()
    state = {} if state is None else state
    state.setdefault("dashboard", None)
    if scheduler == SERIAL:
        return _run_serial(ds, tasks, control, collect, state)
    return _run_dask(ds, tasks, scheduler, n_workers, control, collect, state, show_progress)
