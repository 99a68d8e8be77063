"""Cross-validated fronts: how well each complexity level of a front generalizes, and which tree to choose.

One *fold task* (:func:`run_fold`) solves a front on a fold's training rows and measures every tree of that
front on the fold's held-out rows; :class:`CVFront` aggregates the folds per complexity level.  The same task
function runs in-process (:func:`cross_validate`) and on dask workers (:mod:`treeexplorer.sweep`), so both give
the same numbers for the same seed.

The procedure a level ``L`` stands for is "solve the front, keep the tree with the best *training* accuracy among
those with complexity <= ``L``" (ties: the simplest).  Each fold's held-out accuracy at ``L`` is that tree's,
measured on the fold's held-out rows; the refitted tree at ``L`` is the same choice made in the front solved on
all rows.  Cross-validation thus estimates the accuracy of exactly the tree the analyst gets at that level.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from treeexplorer.api import prepare
from treeexplorer.choices import RULES, check_rule, pick_levels
from treeexplorer.data import Dataset
from treeexplorer.folds import (
    KEPT_METRICS,
    FoldResult,
    FoldTask,
    check_cv,
    cv_notices,
    explicit_folds,
    fold_splits,
    fold_tasks,
    forward_cancel,
    mid_criterion,
    run_fold,
    run_tasks,
)
from treeexplorer.front import COMPLEXITY_MEASURES, Front, FrontTree
from treeexplorer.objective import Objective, unit_score
from treeexplorer.request import RunRequest
from treeexplorer.solvers import Control

__all__ = ["cross_validate", "CVFront", "FoldTask", "FoldResult", "fold_splits", "run_fold", "RULES"]

_EPS = 1e-9  # avg_tests levels are floats: "<= level" tolerates rounding


# -- aggregation -------------------------------------------------------------------------------------------------
def _best_at(trees, measure: str, level: float, front: Front | None = None):
    """The tree with ``measure <= level`` best on the training rows for what the run optimised (a fold tree's
    ``train_score``; a tree of ``front``, its score there); ties: the simplest (then fewest splits, first)."""
    best, best_key = None, None
    for t in trees:
        m = t.metrics if isinstance(t, FrontTree) else t
        if m[measure] > level + _EPS:
            continue
        score = m.get("train_score")
        if front is not None and front.weights:
            score = unit_score(m, front.score, "train", front.weights.get("train_weight"))
        key = (m["train_accuracy"] if score is None else score, -m[measure], -m["splits"], -m["avg_tests"])
        if best_key is None or key > best_key:
            best, best_key = t, key
    return best


def _levels(fronts: list[list[dict]], measure: str) -> list:
    """Every distinct complexity value of any tree of any fold or of the refit (rounded for floats)."""
    vals = {round(float(t[measure]), 9) if measure == "avg_tests" else int(t[measure]) for f in fronts for t in f}
    return sorted(vals)


@dataclass
class CVFront:
    """A cross-validated front: held-out accuracy per complexity level, and the tree refitted at each level.

    Built by :func:`cross_validate` (or a sweep).  ``table(by)`` / ``to_frame(by)`` give one row per level of
    complexity ``by`` (``splits``, ``leaves``, ``depth`` or ``avg_tests``); ``select(rule)`` picks a level.

    Attributes
    ----------
    folds : list of FoldResult
        One per fold (``cv * repeats``), in fold order.
    refit : Front or None
        The front solved on all rows (``None`` when ``refit=False`` or it failed).
    solver, discretizer : str
    params : dict
        The solver parameters as given (validated values are in ``refit.params``).
    n_bins : int or None
    cv, repeats, seed : int
    dataset : str
    n_rows : int
    notices : list of str
    score : str
        What ``cv_mean`` averages (:data:`treeexplorer.metrics.SCORE_METRICS`): ``accuracy`` when plain,
        ``balanced_accuracy``, or ``cost`` (then ``cv_mean`` is minus the held-out cost per unit of weight).
    """

    folds: list[FoldResult]
    refit: Front | None
    solver: str
    discretizer: str | None
    params: dict
    n_bins: int | None
    cv: int
    repeats: int
    seed: int
    dataset: str = ""
    n_rows: int = 0
    notices: list[str] = field(default_factory=list)
    refit_error: str | None = None
    score: str = "accuracy"

    # -- state -----------------------------------------------------------------------------------------------
    @property
    def error(self) -> str | None:
        """The first fold's (or the refit's) error message, ``None`` when every run succeeded."""
        for f in self.folds:
            if f.error:
                return f"fold {f.index + 1}: {f.error}"
        return self.refit_error

    @property
    def status(self) -> str:
        """``error``, ``cancelled``, ``time_limit`` or ``done``: the worst over folds and refit."""
        statuses = {f.status for f in self.folds}
        if self.refit is not None:
            statuses.add(self.refit.status)
        for s in ("error", "cancelled", "time_limit"):
            if s in statuses:
                return s
        return "done" if self.refit_error is None else "error"

    @property
    def runtime_s(self) -> float:
        """Solver time summed over folds and refit (wall time is less when they run in parallel)."""
        return sum(f.runtime_s for f in self.folds) + (self.refit.runtime_s if self.refit is not None else 0.0)

    # -- levels ----------------------------------------------------------------------------------------------
    def table(self, by: str = "splits") -> list[dict]:
        """One dict per complexity level of ``by``, simplest first.

        Keys: ``level``; ``cv_mean``, ``cv_std`` (sample std, ``ddof=1``; 0 with one fold), ``cv_se``
        (``cv_std / sqrt(n_folds)``) of held-out accuracy; ``train_mean``; ``n_folds`` (folds with a tree at or
        below the level, the ones averaged); ``n_reached`` (folds whose front reaches the level: a tree of
        complexity >= level; above it a fold's choice stays its largest tree); ``tree`` (the refitted
        :class:`FrontTree` at the level, or ``None``); ``best`` and ``one_se`` (the levels the two rules pick).
        """
        if by not in COMPLEXITY_MEASURES:
            raise ValueError(f"by must be one of {', '.join(COMPLEXITY_MEASURES)}, got {by!r}")
        if self.error:
            return []
        fold_trees = [f.trees for f in self.folds]
        refit_trees = self.refit.trees if self.refit is not None else []
        levels = _levels(fold_trees + [[t.metrics for t in refit_trees]], by)
        rows = []
        for level in levels:
            test, train, reached = [], [], 0
            for trees in fold_trees:
                t = _best_at(trees, by, level)
                if t is not None:
                    test.append(t.get("test_score", t["test_accuracy"]))
                    train.append(t.get("train_score", t["train_accuracy"]))
                if any(m[by] >= level - _EPS for m in trees):
                    reached += 1
            n = len(test)
            std = float(np.std(test, ddof=1)) if n > 1 else 0.0
            rows.append(
                {
                    "level": level,
                    "cv_mean": float(np.mean(test)) if n else math.nan,
                    "cv_std": std,
                    "cv_se": std / math.sqrt(n) if n else math.nan,
                    "train_mean": float(np.mean(train)) if n else math.nan,
                    "n_folds": n,
                    "n_reached": reached,
                    "tree": _best_at(refit_trees, by, level, self.refit),
                    "best": False,
                    "one_se": False,
                }
            )
        b, s = pick_levels(rows, len(self.folds))
        if b is not None:
            rows[b]["best"] = True
            rows[s]["one_se"] = True
        return rows

    def select(self, rule: str = "1se", by: str = "splits") -> dict:
        """The level chosen by ``rule``.

        ``best``: the highest mean held-out accuracy (simplest on ties); ``1se``: the simplest level whose mean
        is within one standard error (``cv_se``) of the best.  Only levels every fold contributes to are
        candidates.  Returns the row of :meth:`table` (its ``tree`` is the refitted tree).
        """
        check_rule(rule)
        if self.error:
            raise ValueError(f"cross-validation failed: {self.error}")
        rows = self.table(by)
        flag = "best" if rule == "best" else "one_se"
        for r in rows:
            if r[flag]:
                return r
        raise ValueError("no complexity level has a tree in every fold")

    def to_frame(self, by: str = "splits"):
        """:meth:`table` as a pandas DataFrame; the refitted tree becomes ``tree_id`` and its metrics."""
        import pandas as pd

        cols = ["level", "cv_mean", "cv_std", "cv_se", "train_mean", "n_folds", "n_reached", "best", "one_se"]
        rows = []
        for r in self.table(by):
            t = r["tree"]
            m = t.metrics if t is not None else {}
            rows.append(
                {
                    **{k: r[k] for k in cols},
                    "tree_id": t.id if t is not None else None,
                    **{f"tree_{k}": m.get(k) for k in ("splits", "leaves", "depth", "avg_tests", "train_accuracy")},
                }
            )
        df = pd.DataFrame(rows, columns=cols + ["tree_id"] + [f"tree_{k}" for k in KEPT_METRICS[:5]])
        return df.rename(columns={"level": by})


def assemble(results: list[FoldResult], task: FoldTask, ds: Dataset, notices=()) -> CVFront:
    """The :class:`CVFront` of one setting from its fold results (any order) and, optionally, its refit."""
    folds = sorted((r for r in results if r.index >= 0), key=lambda r: r.index)
    refit = next((r for r in results if r.index < 0), None)
    all_notices = list(notices)
    for r in results:
        all_notices += [n for n in r.notices if n not in all_notices]
    return CVFront(
        folds,
        refit.front if refit is not None and refit.error is None else None,
        task.solver,
        task.discretizer,
        dict(task.params),
        task.n_bins,
        task.cv,
        task.repeats,
        task.seed,
        ds.name,
        ds.n_rows,
        all_notices,
        refit.error if refit is not None else None,
        base_score(ds, task),
    )


def base_score(ds: Dataset, task: FoldTask) -> str:
    """What a setting's folds optimise (:meth:`treeexplorer.objective.Objective.score`), given the data's own
    row weights."""
    return task.objective.score(ds.weight_source if ds.weights is not None else None)


def cross_validate(
    data,
    target=None,
    *,
    solver: str = "cart",
    discretizer: str | None = None,
    n_bins: int | None = None,
    cv: int = 5,
    repeats: int = 1,
    seed: int = 0,
    time_limit: float | None = None,
    refit: bool = True,
    progress=None,
    control: Control | None = None,
    drop_missing: bool = False,
    categorical=(),
    discretizer_params: dict | None = None,
    scheduler="serial",
    features=None,
    exclude=None,
    class_weight=None,
    sample_weight=None,
    costs=None,
    na_values=None,
    **params,
) -> CVFront:
    """Cross-validate a solver's front: held-out accuracy per complexity level, stratified folds.

    Parameters
    ----------
    data, target, drop_missing, categorical, features, exclude, na_values
        As for :func:`treeexplorer.solve`.
    solver, discretizer, n_bins, discretizer_params, **params
        As for :func:`treeexplorer.solve` (a solver's ``criterion`` goes in ``**params``; MID's in
        ``discretizer_params``); the discretizer is fitted on each fold's training rows only.
    cv : int or sequence of (train, test), default=5
        Number of stratified folds, or the folds themselves as pairs of row-index lists (then ``repeats=1``).
    repeats : int, default=1
        Repetitions of the ``cv``-fold split with different shuffles (``cv * repeats`` fold results).
    seed : int, default=0
        Seed of the shuffles; the same seed gives the same folds and the same result, here or in a sweep.
    time_limit : float, optional
        Seconds per fold (and for the refit); a fold stopped by it keeps its best trees so far.
    refit : bool, default=True
        Also solve on all rows, giving the tree to use at each level.
    progress : callable, optional
        ``progress({"phase": "fold", "done": k, "total": n, "elapsed": s})`` after each fold.
    control : solvers.Control, optional
        ``control.cancel()`` from another thread stops the running fold and skips the rest.
    scheduler : "serial", None, str or distributed.Client, default="serial"
        ``"serial"``: the folds run here one after another; anything else runs them as parallel tasks, as
        :func:`treeexplorer.sweep` does (``None``: a LocalCluster; an address or a Client: that cluster).
    class_weight, sample_weight, costs
        As for :func:`treeexplorer.solve`: every fold minimises the weighted cost (balanced class weights are
        those of its training rows; its held-out rows keep their own weights) and ``cv_mean`` is the mean
        held-out score the run optimised (:attr:`CVFront.score`): balanced accuracy for balanced class weights
        alone, else minus the cost per unit of weight, so that the 1-SE rule uses the objective.

    Returns
    -------
    CVFront

    Raises
    ------
    ValueError
        Bad parameters, or a fold whose solver failed (the message names the fold).
    """
    # every setting checked once, as solve checks it, before any fold runs (each fold runs this request)
    request = RunRequest.build(
        solver,
        params,
        discretizer=discretizer,
        n_bins=n_bins,
        discretizer_params=discretizer_params,
        time_limit=time_limit,
        class_weight=class_weight,
        costs=costs,
    )
    if features is not None or exclude is not None or na_values is not None:  # read once, before any fold
        data = prepare(
            data,
            target,
            drop_missing=drop_missing,
            categorical=categorical,
            features=features,
            exclude=exclude,
            na_values=na_values,
        ).dataset
        target = None
    time_limit = request.time_limit
    if scheduler != "serial":
        return _distributed(
            data=data,
            target=target,
            solver=solver,
            discretizer=discretizer,
            n_bins=n_bins,
            cv=cv,
            repeats=repeats,
            seed=seed,
            time_limit=time_limit,
            refit=refit,
            progress=progress,
            control=control,
            drop_missing=drop_missing,
            categorical=categorical,
            discretizer_params=discretizer_params,
            scheduler=scheduler,
            params=params,
            objective=request.objective,
            sample_weight=sample_weight,
        )
    ds = prepare(data, target, drop_missing=drop_missing, categorical=categorical, weights=sample_weight).dataset
    folds = None
    if not isinstance(cv, (int, np.integer)):
        if repeats != 1:
            raise ValueError("repeats applies to a number of folds, not to folds given explicitly")
        folds = explicit_folds(cv, ds.n_rows)
        cv = len(folds)
        notices = []
    else:
        check_cv(cv, repeats, ds.n_rows)
        notices = cv_notices(ds, cv)
    criterion = request.criterion
    base = FoldTask(
        solver,
        dict(params),
        discretizer,
        n_bins,
        criterion,
        cv,
        repeats,
        seed,
        0,
        time_limit,
        None,
        folds,
        request.objective,
    )
    tasks = fold_tasks(base, refit)
    control = control or Control()
    t0 = time.perf_counter()
    results = []
    current: list[Control] = []
    stop = forward_cancel(control, current)  # the caller's Cancel must reach the running fold
    try:
        for k, task in enumerate(tasks):
            if control.cancelled:
                results.append(FoldResult(task.index, "cancelled", 0.0, 0, 0))
                continue
            current[:] = [Control(time_limit)]
            res = run_fold(ds, task, current[0])
            if res.error:
                raise ValueError(f"{'refit' if task.is_refit else f'fold {task.index + 1}'}: {res.error}")
            results.append(res)
            if progress is not None:
                progress({"phase": "fold", "done": k + 1, "total": len(tasks), "elapsed": time.perf_counter() - t0})
    finally:
        stop()
    return assemble(results, base, ds, notices)


def _distributed(
    *,
    data,
    target,
    solver,
    discretizer,
    n_bins,
    cv,
    repeats,
    seed,
    time_limit,
    refit,
    progress,
    control,
    drop_missing,
    categorical,
    discretizer_params,
    scheduler,
    params,
    objective=None,
    sample_weight=None,
) -> CVFront:
    """One setting's folds as parallel tasks on dask (:func:`treeexplorer.folds.run_tasks`)."""
    if not isinstance(cv, (int, np.integer)):
        raise ValueError("explicit folds run serially only (scheduler='serial')")
    ds = prepare(data, target, drop_missing=drop_missing, categorical=categorical, weights=sample_weight).dataset
    check_cv(cv, repeats, ds.n_rows)
    notices = cv_notices(ds, cv)
    criterion = mid_criterion(discretizer_params)
    base = FoldTask(solver, dict(params), discretizer, n_bins, criterion, cv, repeats, seed, 0, time_limit)
    base = replace(base, objective=objective or Objective())
    tasks = fold_tasks(base, refit)
    results: list[FoldResult] = []
    t0 = time.perf_counter()

    def collect(_key, res: FoldResult) -> None:
        results.append(res)
        if progress is not None:
            progress({"phase": "fold", "done": len(results), "total": len(tasks), "elapsed": time.perf_counter() - t0})

    status = run_tasks(ds, [(0, t) for t in tasks], collect, scheduler=scheduler, control=control)
    if status == "cancelled" and len(results) < len(tasks):  # cancelled before the last fold came in
        folds = [FoldResult(i, "cancelled", 0.0, 0, 0) for i in range(cv * repeats)]
        return CVFront(
            folds,
            None,
            solver,
            discretizer,
            dict(params),
            n_bins,
            cv,
            repeats,
            seed,
            notices=notices,
            score=base_score(ds, base),
        )
    failed = next((r for r in sorted(results, key=lambda r: r.index) if r.error), None)
    if failed is not None:
        raise ValueError(f"{'refit' if failed.index < 0 else f'fold {failed.index + 1}'}: {failed.error}")
    return assemble(results, base, ds, notices)
