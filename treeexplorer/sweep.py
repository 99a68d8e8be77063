"""Sweeps: cross-validate a grid of settings, every (setting x fold) one task on ``dask.distributed``.

>>> res = tx.sweep("iris", grid={"solver": ["cart", "dpdt"], "max_depth": [2, 3]}, cv=5)   # doctest: +SKIP
>>> res.table          # one row per setting x complexity level                          # doctest: +SKIP
>>> res.choice("1se")  # the simplest tree within one standard error of the best          # doctest: +SKIP

The tasks are the same :func:`treeexplorer.cv.run_fold` calls a serial run makes, with the folds recomputed
from the seed on the worker, so a distributed sweep gives the same table as ``scheduler="serial"``.
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from treeexplorer.api import prepare
from treeexplorer.cv import CVFront, assemble
from treeexplorer.folds import (
    SERIAL,
    FoldResult,
    FoldTask,
    check_cv,
    connect,
    cv_notices,
    fold_tasks,
    mid_criterion,
    run_tasks,
)
from treeexplorer.jobs import Job
from treeexplorer.objective import Objective
from treeexplorer.registry import get_solver
from treeexplorer.request import RunRequest, check_discretizer, check_n_bins
from treeexplorer.solvers import Control, time_limit_seconds

__all__ = ["sweep", "SweepResult", "start_sweep", "expand_grid", "connect", "SERIAL"]

# Grid keys that are not solver parameters (everything else is validated by the solver's Param).
PIPELINE_KEYS = ("solver", "discretizer", "n_bins")


# -- the grid ----------------------------------------------------------------------------------------------------
def _values(v) -> list:
    """A grid entry's values: a list, tuple, range, set, numpy array or Series lists them; anything else is one."""
    if isinstance(v, (list, tuple, range)):
        return list(v)
    if isinstance(v, (set, frozenset)):
        return sorted(v, key=repr)
    if isinstance(v, np.ndarray) or hasattr(v, "to_numpy"):
        return list(np.asarray(v).ravel())
    return [v]


def _plain(x):
    """numpy scalars as the Python numbers ``solve`` takes (``np.int64(8)`` is 8)."""
    return x.item() if isinstance(x, np.generic) else x


def expand_grid(grid: dict) -> tuple[list[dict], list[str]]:
    """Validated settings of ``grid`` (the cartesian product, in key order) and notices.

    Every value is checked as :func:`treeexplorer.solve` checks it (unknown solver or discretizer, a parameter
    out of its bounds, ...), naming the grid key.  A key that only some solvers use applies to those only (the
    others' settings are deduplicated, with a notice); a key no solver in the grid uses is an error.
    """
    from treeexplorer.discretize import takes_n_bins

    if not isinstance(grid, dict) or not grid:
        raise ValueError("grid must be a non-empty dict such as {'solver': ['cart', 'dpdt'], 'max_depth': [2, 3]}")
    grid = {k: [_plain(x) for x in _values(v)] for k, v in grid.items()}
    for k, v in grid.items():
        if not v:
            raise ValueError(f"grid key {k!r} has no values")
    solvers = grid.get("solver", ["cart"])
    specs = {}
    for name in solvers:
        try:
            specs[name] = get_solver(name)
        except (ValueError, NotImplementedError, RuntimeError) as exc:
            raise type(exc)(f"grid solver: {exc}") from None
    for key, check in (("discretizer", check_discretizer), ("n_bins", check_n_bins)):
        for v in grid.get(key, []):
            try:
                check(v)  # solve's own check of the value
            except ValueError as exc:
                raise ValueError(f"grid {key}: {exc}") from None
    params = [k for k in grid if k not in PIPELINE_KEYS]
    for k in params:
        users = [s for s in specs.values() if any(p.name == k for p in s.params)]
        if not users:  # the same message solve gives, for the first solver of the grid
            try:
                next(iter(specs.values())).resolve({k: grid[k][0]})
            except ValueError as exc:
                raise ValueError(f"grid {k}: {exc}") from None
        for spec in users:
            for v in grid[k]:
                try:
                    spec.resolve({k: v})
                except ValueError as exc:
                    raise ValueError(f"grid {k}: {exc}") from None
    keys = list(grid)
    settings, seen, dropped, bins_used = [], set(), set(), False
    for combo in itertools.product(*(grid[k] for k in keys)):
        given = dict(zip(keys, combo))
        spec = specs[given.get("solver", "cart")]
        s = {"solver": spec.name, "discretizer": given.get("discretizer"), "n_bins": given.get("n_bins")}
        if s["discretizer"] == "raw":
            if spec.input != "numeric":
                raise ValueError(f"grid discretizer: 'raw' works with numeric solvers only, not {spec.name!r}")
            s["discretizer"] = None
        uses_bins = takes_n_bins(s["discretizer"]) or (
            s["discretizer"] is None and spec.input == "binary" and takes_n_bins(spec.default_discretizer)
        )
        if s["n_bins"] is not None and not uses_bins:
            dropped.add(("n_bins", spec.name))
            s["n_bins"] = None
        bins_used = bins_used or uses_bins
        p = {}
        for k in params:
            if any(q.name == k for q in spec.params):
                p[k] = given[k]
            else:
                dropped.add((k, spec.name))
        s["params"] = p
        key = (s["solver"], s["discretizer"], s["n_bins"], tuple(sorted(p.items())))
        if key not in seen:
            try:  # the setting as a whole through the gate every run passes (each task builds this request)
                RunRequest.build(spec, p, discretizer=s["discretizer"], n_bins=s["n_bins"])
            except ValueError as exc:
                raise ValueError(f"grid setting {spec.name} {s['discretizer'] or ''} {p}: {exc}") from None
            seen.add(key)
            settings.append(s)
    if any(b is not None for b in grid.get("n_bins", [])) and not bins_used:  # as solve says it
        raise ValueError(
            "grid n_bins: n_bins needs a discretizer (numeric solvers use the raw columns by default); "
            "add mid, quantile or uniform to the grid's discretizers"
        )
    notices = [
        f"{k} does not apply to {name}{' without a binning discretizer' if k == 'n_bins' else ''}: "
        f"its settings leave it out"
        for k, name in sorted(dropped)
    ]
    return settings, notices


def effective_discretizer(s: dict) -> str:
    """The discretizer a setting runs with: its own, or its solver's default (``raw`` for numeric solvers)."""
    spec = get_solver(s["solver"])
    if s["discretizer"] is None:
        return "raw" if spec.input == "numeric" else spec.default_discretizer
    return s["discretizer"]


# -- the cluster -------------------------------------------------------------------------------------------------
# -- the result --------------------------------------------------------------------------------------------------
@dataclass
class SweepResult:
    """What :func:`sweep` returns; unpacks as ``table, fronts = tx.sweep(...)``.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per setting x complexity level (``by``, default splits): the setting (``setting`` number,
        solver, discretizer, n_bins, parameters), ``status`` and ``error`` (a failed setting has one row with its
        message), and the level's :meth:`CVFront.to_frame` columns.
    fronts : list of CVFront or None
        Per setting, in ``settings`` order (``None`` when the setting was cancelled before finishing).
    settings : list of dict
        ``solver``, ``discretizer``, ``n_bins`` and ``params`` of each setting.
    status : str
        ``done`` or ``cancelled``.
    dashboard : str or None
        The Dask dashboard address (``None`` for serial runs).
    wall_s : float
        Wall time of the sweep (excluding the cluster's start).
    task_times : list of float
        Solver time of every task, in completion order (benchmarks derive the scheduling overhead from it).
    """

    table: object
    fronts: list
    settings: list
    status: str = "done"
    dashboard: str | None = None
    wall_s: float = 0.0
    notices: list = field(default_factory=list)
    task_times: list = field(default_factory=list)
    by: str = "splits"

    def __iter__(self):
        return iter((self.table, self.fronts))

    def best(self, rule: str = "1se"):
        """One row per successful setting at the level ``rule`` picks, best mean first (simplest on ties)."""
        flag = "one_se" if rule == "1se" else "best" if rule == "best" else None
        if flag is None:
            raise ValueError(f"rule must be '1se' or 'best', got {rule!r}")
        t = self.table
        rows = t[(t["status"] != "error") & (t[flag] == True)]  # noqa: E712 (column may hold NaN)
        return rows.sort_values(["cv_mean", self.by], ascending=[False, True], kind="stable").reset_index(drop=True)

    def choice(self, rule: str = "1se"):
        """The single (setting, level) ``rule`` picks over the whole grid, as a one-row table.

        ``best``: the highest mean held-out accuracy; ``1se``: the simplest level (then the higher mean) whose
        mean is within one standard error of that best.  Levels only some folds reach are not candidates.
        """
        if rule not in ("1se", "best"):
            raise ValueError(f"rule must be '1se' or 'best', got {rule!r}")
        t = self.table
        n = t["n_folds"].max() if len(t) else 0
        cand = t[(t["status"] != "error") & (t["n_folds"] == n)]
        if cand.empty:
            return cand
        ranked = cand.sort_values(["cv_mean", self.by], ascending=[False, True], kind="stable")
        top = ranked.iloc[0]
        if rule == "best":
            return ranked.iloc[:1].reset_index(drop=True)
        near = cand[cand["cv_mean"] >= top["cv_mean"] - top["cv_se"] - 1e-12]
        return (
            near.sort_values([self.by, "cv_mean"], ascending=[True, False], kind="stable")
            .iloc[:1]
            .reset_index(drop=True)
        )

    def save(self, path) -> str:
        """Write :attr:`table` to ``path``: ``.parquet``, ``.csv`` or ``.json`` (with the sweep's facts)."""
        import json
        from pathlib import Path

        from treeexplorer.front import _jsonable

        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".parquet":
            self.table.to_parquet(path, index=False)
        elif suffix == ".csv":
            self.table.to_csv(path, index=False)
        elif suffix == ".json":
            rows = json.loads(self.table.to_json(orient="records"))
            doc = {
                "format": "treeexplorer-sweep",
                "by": self.by,
                "status": self.status,
                "wall_s": self.wall_s,
                "notices": list(self.notices),
                "settings": _jsonable(self.settings),
                "rows": rows,
            }
            path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
        else:
            raise ValueError(f"cannot write {path.name}: the sweep table is written as .parquet, .csv or .json")
        return str(path)


def _table(settings, fronts, errors, param_keys, by):
    import pandas as pd

    frames = []
    for i, (s, front) in enumerate(zip(settings, fronts)):
        head = {
            "setting": i,
            "solver": s["solver"],
            "discretizer": effective_discretizer(s),
            "n_bins": s["n_bins"],
            **{k: s["params"].get(k) for k in param_keys},
        }
        err = errors.get(i) or (front.error if front is not None else "cancelled")
        status = "error" if err and err != "cancelled" else ("cancelled" if err else front.status)
        df = front.to_frame(by) if front is not None and not err else pd.DataFrame()
        if df.empty:
            df = pd.DataFrame([{by: math.nan}])
        for k, v in reversed(list(head.items())):
            df.insert(0, k, [v] * len(df))
        df.insert(len(head), "status", status)
        df.insert(len(head) + 1, "error", err)
        df["runtime_s"] = front.runtime_s if front is not None else math.nan
        frames.append(df)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    for c in ("best", "one_se"):
        if c in table:
            table[c] = table[c].fillna(False).astype(bool)
    return table


# -- the sweep ---------------------------------------------------------------------------------------------------
def sweep(
    data,
    grid: dict,
    *,
    target=None,
    cv: int = 5,
    repeats: int = 1,
    seed: int = 0,
    scheduler=None,
    n_workers: int | None = None,
    time_limit: float | None = None,
    refit: bool = True,
    progress=None,
    control: Control | None = None,
    show_progress: bool | None = None,
    by: str = "splits",
    drop_missing: bool = False,
    categorical=(),
    discretizer_params: dict | None = None,
    features=None,
    exclude=None,
    class_weight=None,
    sample_weight=None,
    costs=None,
    na_values=None,
) -> SweepResult:
    """Cross-validate every setting of ``grid``; each (setting x fold) is one task.

    Parameters
    ----------
    data, target, drop_missing, categorical, features, exclude, na_values
        As for :func:`treeexplorer.solve`.
    grid : dict
        Lists of values for ``solver``, ``discretizer``, ``n_bins`` and any solver parameter (``max_depth``,
        ``sparsity``, ...); a single value stands for a one-item list.  See :func:`expand_grid`.
    cv, repeats, seed
        As for :func:`treeexplorer.cross_validate` (same seed, same folds, same result).
    scheduler : None, "serial", str or distributed.Client
        ``None``: a LocalCluster with one worker process per core, closed afterwards; ``"serial"``: in this
        process, one task after another; ``"tcp://host:port"``: an existing dask scheduler; a ``Client``: its
        cluster.  The dataset is scattered to the workers once.
    n_workers : int, optional
        Worker processes of the LocalCluster (default: the cores available).
    time_limit : float, optional
        Seconds per task; a task stopped by it keeps its best trees so far (status ``time_limit``).
    refit : bool, default=True
        One more task per setting solves on all rows (the trees to use).
    progress : callable, optional
        Called after every task with ``{"phase": "sweep", "done", "total", "setting", "fold", "status",
        "elapsed", "dashboard"}``, and with ``"front"`` (the setting's :class:`CVFront`) when a setting's last
        task is in: an app can draw results as they stream in.
    control : solvers.Control, optional
        ``control.cancel()`` (from any thread) stops every task: queued ones are dropped, running ones stop
        cooperatively; the result holds what finished and ``status="cancelled"``.
    show_progress : bool, optional
        A tqdm bar on stderr and the dashboard address printed (default: when stderr is a terminal).
    by : str, default="splits"
        Complexity measure of the table's levels.
    class_weight, sample_weight, costs
        As for :func:`treeexplorer.cross_validate`: every setting and fold minimises the same weighted cost
        and is scored on its held-out rows by it.

    Returns
    -------
    SweepResult

    Notes
    -----
    A worker that dies mid-sweep loses nothing: the scheduler runs its tasks again elsewhere (the dataset is on
    every worker) and the result equals a serial run.  A setting whose runs fail (a memory guard, too many bins
    for the data, ...) is one row of the table with the message; the others go on.
    """
    time_limit = time_limit_seconds(time_limit)
    settings, notices = expand_grid(grid)
    param_keys = sorted({k for s in settings for k in s["params"]})
    objective = Objective.build(class_weight, costs)
    ds = prepare(
        data,
        target,
        drop_missing=drop_missing,
        categorical=categorical,
        features=features,
        exclude=exclude,
        weights=sample_weight,
        na_values=na_values,
    ).dataset
    check_cv(cv, repeats, ds.n_rows)
    notices += cv_notices(ds, cv)
    criterion = mid_criterion(discretizer_params)
    bases = [
        FoldTask(s["solver"], s["params"], s["discretizer"], s["n_bins"], criterion, cv, repeats, seed, 0, time_limit)
        for s in settings
    ]
    bases = [replace(b, objective=objective) for b in bases]
    tasks = [(i, t) for i, b in enumerate(bases) for t in fold_tasks(b, refit)]
    per_setting = [len(fold_tasks(b, refit)) for b in bases]
    control = control or Control()
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    results: list[list[FoldResult]] = [[] for _ in settings]
    fronts: list[CVFront | None] = [None] * len(settings)
    errors: dict[int, str] = {}
    task_times: list[float] = []
    bar = _bar(len(tasks), show_progress)
    state = {"done": 0, "t0": time.perf_counter(), "dashboard": None}

    def collect(i: int, res: FoldResult) -> None:
        results[i].append(res)
        task_times.append(res.runtime_s)
        state["done"] += 1
        if bar is not None:
            bar.update(1)
        info = {
            "phase": "sweep",
            "done": state["done"],
            "total": len(tasks),
            "setting": i,
            "fold": res.index,
            "status": res.status,
            "elapsed": time.perf_counter() - state["t0"],
            "dashboard": state["dashboard"],
        }
        if len(results[i]) == per_setting[i]:
            fronts[i] = assemble(results[i], bases[i], ds, notices)
            if res.error is None and fronts[i].error:
                errors[i] = fronts[i].error
            info["front"] = fronts[i]
        if progress is not None:
            progress(info)

    status = "done"
    try:
        status = run_tasks(
            ds,
            tasks,
            collect,
            scheduler=scheduler,
            n_workers=n_workers,
            control=control,
            state=state,
            show_progress=show_progress,
        )
    finally:
        if bar is not None:
            bar.close()
    for i in range(len(settings)):
        failed = [r for r in results[i] if r.error]
        if failed:
            r = failed[0]
            errors[i] = f"{'refit' if r.index < 0 else f'fold {r.index + 1}'}: {r.error}"
    table = _table(settings, fronts, errors, param_keys, by)
    return SweepResult(
        table,
        fronts,
        settings,
        status,
        state["dashboard"],
        time.perf_counter() - state["t0"],
        notices,
        task_times,
        by,
    )


def _bar(total: int, show: bool):
    if not show:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="sweep", unit="task", file=sys.stderr)


# -- for an app ----------------------------------------------------------------------------------------------------
def start_sweep(data, grid: dict, progress=None, **kwargs) -> Job:
    """Start :func:`sweep` in a background thread and return its :class:`~treeexplorer.jobs.Job` at once.

    ``job.cancel()`` stops every task, ``job.result(timeout)`` waits for the :class:`SweepResult` (re-raising
    the sweep's error, e.g. a bad grid), and ``job.events()`` hands over the progress reports for polling.
    ``progress`` is also called from the sweep's thread (an app hands the update to its own event loop, e.g.
    Panel's ``pn.state.execute``); ``kwargs`` are :func:`sweep`'s.  Pass a long-lived ``distributed.Client`` as
    ``scheduler`` to keep the workers (and their loaded numba kernels) between sweeps.
    """
    kwargs.setdefault("show_progress", False)

    def report(info: dict) -> None:
        job.report(info)
        if progress is not None:
            progress(info)

    def work(control: Control) -> SweepResult:
        return sweep(data, grid, progress=report, control=control, **kwargs)

    job = Job(work, control=kwargs.pop("control", None), label="sweep", log_errors=False)
    return job.start()
