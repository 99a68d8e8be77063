"""The one entry point the CLI, the estimator and the app call: dataset → discretizer → solver → Front."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from treeexplorer.data import DataError, Dataset, load_dataset
from treeexplorer.front import Front, FrontTree, compute_metrics
from treeexplorer.registry import SolverSpec, get_solver
from treeexplorer.schema import OP_EQ, Binarization, Condition, Schema
from treeexplorer.solvers import Control, RawFront
from treeexplorer.tree import Tree

__all__ = ["solve", "prepare", "Prepared", "numeric_features", "run_prepared"]


def numeric_features(schema: Schema) -> list:
    """Columns of the matrix numeric solvers see: numeric columns as they are, categoricals one-hot.

    Returns a list whose items are column indices (numeric) or :class:`Condition` (``colour = red``);
    a two-category column gives a single test.
    """
    feats: list = []
    for j, col in enumerate(schema.columns):
        if not col.is_categorical:
            feats.append(j)
            continue
        codes = range(len(col.categories))
        if len(col.categories) == 2:
            codes = [1]
        feats.extend(Condition(j, OP_EQ, float(c)) for c in codes)
    return feats


def feature_matrix(features: list, X: np.ndarray) -> np.ndarray:
    """The float64 matrix a numeric solver sees for ``features`` (see :func:`numeric_features`)."""
    out = np.empty((X.shape[0], len(features)), dtype=np.float64)
    for j, f in enumerate(features):
        out[:, j] = f.evaluate(X) if isinstance(f, Condition) else X[:, f]
    return out


@dataclass
class Prepared:
    """Everything a solver run needs, computed once (the app reuses it across runs)."""

    dataset: Dataset
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray | None
    y_test: np.ndarray | None
    notices: list

    @property
    def schema(self) -> Schema:
        return self.dataset.schema


def prepare(
    data,
    target=None,
    *,
    test_size: float | None = None,
    test=None,
    seed: int = 0,
    drop_missing: bool = False,
    categorical=(),
    max_rows: int | None = None,
) -> Prepared:
    """Load ``data`` and hold out test rows (``test_size`` fraction, or a separate ``test`` table)."""
    dataset = (
        data
        if isinstance(data, Dataset)
        else load_dataset(data, target, drop_missing=drop_missing, categorical=categorical, max_rows=max_rows)
    )
    notices = list(dataset.notices)
    if test is not None and test_size is not None:
        raise DataError("give either a test file or a test size, not both")
    if test is not None:
        X_te, y_te = dataset.encode(test, what="test data")
        if y_te is None:
            raise DataError(f"test data lacks the target column {dataset.schema.target!r}")
        return Prepared(dataset, dataset.X, dataset.y, X_te, y_te.astype(np.int64), notices)
    if test_size:
        train, te = dataset.split(test_size, seed)
        notices += [n for n in train.notices if n not in notices]
        return Prepared(train, train.X, train.y, te.X, te.y, notices)
    return Prepared(dataset, dataset.X, dataset.y, None, None, notices)


def solve(
    data,
    target=None,
    *,
    solver: str = "cart",
    discretizer: str | None = None,
    n_bins: int | None = None,
    test_size: float | None = None,
    test=None,
    seed: int = 0,
    time_limit: float | None = None,
    progress=None,
    control: Control | None = None,
    drop_missing: bool = False,
    categorical=(),
    mid_budget: float | None = None,
    discretizer_params: dict | None = None,
    **params,
) -> Front:
    """Find a front of decision trees.

    Parameters
    ----------
    data : str, path, DataFrame or Dataset
        A file, a bundled dataset name, or a table (see :func:`treeexplorer.load_dataset`).
    target : str or int, optional
        Target column (default: the last one).
    solver : {"cart", "dpdt", "murtree", "branches", "sat"}
    discretizer : str, optional
        ``none|exact|mid|mdlp|quantile|uniform``.  Binary solvers default to their preferred one; numeric
        solvers (CART, DPDT) use the raw columns unless a discretizer is given.
    n_bins : int, optional
        Thresholds per feature (quantile/uniform) or number of tests (mid).
    test_size : float, optional
        Fraction held out, stratified, with ``seed``.
    test : str, path or DataFrame, optional
        A separate test table with the same columns.
    time_limit : float, optional
        Seconds; the best trees found so far are returned, marked not proven.
    progress : callable, optional
        ``progress(dict)`` with ``phase``, ``elapsed`` and solver counters.
    control : solvers.Control, optional
        Pass one to cancel from another thread (``control.cancel()``).
    mid_budget : float, optional
        With ``discretizer="mid"``: the anytime loop over the top 1, 2, 4, ... MID tests for this many
        seconds, keeping the best tree per complexity.
    discretizer_params : dict, optional
        Options of the discretizer (see :data:`DISCRETIZER_OPTIONS`): ``{"criterion": "gini"}`` makes MID rank
        thresholds by Gini impurity (default entropy; MDLP always uses entropy).
    **params
        Solver parameters (``max_depth``, ``max_nodes``, ``sparsity``, ``cart_depth``, ``criterion``, ``front``,
        ...); a parameter the solver does not use is an error.  A solver parameter is never taken by the
        discretizer: ``criterion="entropy"`` is CART's or DPDT's split criterion.

    Returns
    -------
    Front
    """
    spec = get_solver(solver)
    if "criterion" in params and all(p.name != "criterion" for p in spec.params):
        raise ValueError(
            f"solver {spec.name!r} has no criterion parameter; for the MID discretizer's impurity use "
            "discretizer_params={'criterion': ...} (CLI: --criterion)"
        )
    resolved = spec.resolve(params)
    if control is None:
        control = Control(time_limit, progress)
    elif time_limit is not None and control.time_limit is None:
        control.time_limit = time_limit
    if progress is not None and control.progress is None:
        control.progress = progress
    control.report("loading")
    prep = prepare(
        data, target, test_size=test_size, test=test, seed=seed, drop_missing=drop_missing, categorical=categorical
    )
    return run_prepared(
        prep,
        spec,
        resolved,
        discretizer=discretizer,
        n_bins=n_bins,
        control=control,
        mid_budget=mid_budget,
        discretizer_params=discretizer_params,
    )


def run_prepared(
    prep: Prepared,
    spec: SolverSpec | str,
    resolved: dict,
    *,
    discretizer: str | None = None,
    n_bins: int | None = None,
    control: Control | None = None,
    mid_budget: float | None = None,
    discretizer_params: dict | None = None,
) -> Front:
    """Discretize (if needed) and run one solver on prepared data; ``resolved`` are validated params.

    ``discretizer_params`` are the discretizer's own options (:data:`DISCRETIZER_OPTIONS`), see :func:`solve`.
    """
    options = _discretizer_options(discretizer_params)
    criterion = options["criterion"]
    if isinstance(spec, str):
        spec = get_solver(spec)
        resolved = spec.resolve(resolved)
    control = control or Control()
    schema = prep.schema
    notices = list(prep.notices)
    if discretizer in (None, "raw") and spec.input == "numeric":
        if n_bins is not None:
            raise ValueError("n_bins needs a discretizer (numeric solvers use the raw columns by default)")
        if discretizer_params:
            raise ValueError("discretizer_params need a discretizer (numeric solvers use the raw columns by default)")
        features, disc_name = numeric_features(schema), "raw"
        matrix = feature_matrix(features, prep.X_train)
        return _run(prep, spec, resolved, [(features, matrix, {})], disc_name, control, notices)
    disc_name = discretizer or spec.default_discretizer
    if mid_budget is not None and disc_name != "mid":
        raise ValueError("mid_budget (the MID anytime loop) needs discretizer='mid'")
    from treeexplorer.discretize import MIDRanking, fit_discretizer

    control.report("discretizing", method=disc_name)
    if disc_name == "mid" and mid_budget is not None:
        return _mid_anytime(prep, spec, resolved, n_bins, criterion, control, notices, mid_budget, MIDRanking)
    binz: Binarization = fit_discretizer(
        disc_name, prep.X_train, prep.y_train, schema, n_bins=n_bins, criterion=criterion
    )
    notices += binz.notices
    matrix = binz.transform(prep.X_train)
    if spec.input == "numeric":
        matrix = matrix.astype(np.float64)
    return _run(prep, spec, resolved, [(binz.conditions, matrix, {})], disc_name, control, notices)


# Options a discretizer takes through ``discretizer_params`` (name -> default).
DISCRETIZER_OPTIONS = {"criterion": "entropy"}


def _discretizer_options(given: dict | None) -> dict:
    given = dict(given or {})
    unknown = sorted(set(given) - set(DISCRETIZER_OPTIONS))
    if unknown:
        raise ValueError(
            f"discretizer_params: unknown option(s) {', '.join(unknown)}; known: {', '.join(DISCRETIZER_OPTIONS)} "
            "(n_bins and mid_budget are arguments of their own)"
        )
    return {k: given.get(k) if given.get(k) is not None else v for k, v in DISCRETIZER_OPTIONS.items()}


def _mid_anytime(prep, spec, resolved, n_bins, criterion, control, notices, budget, MIDRanking) -> Front:
    """The MID paper's loop: solve on the top 1, 2, 4, ... tests until the budget runs out."""
    ranking = MIDRanking.fit(prep.X_train, prep.y_train, prep.schema, criterion)
    notices += [n for n in ranking.notices if n not in notices]
    limit = min(n_bins or ranking.n_available, ranking.n_available)
    if limit < 1:
        raise ValueError("MID found no candidate test: no column has two distinct values with different classes")
    start = time.perf_counter()
    outer = control
    parts, n = [], 1
    while True:
        left = budget - (time.perf_counter() - start)
        if left <= 0 or outer.stopped:
            break
        binz = ranking.select(n)
        matrix = binz.transform(prep.X_train)
        if spec.input == "numeric":
            matrix = matrix.astype(np.float64)
        # a child control: the caller's Cancel reaches the inner run's flag directly, with no watcher thread
        inner = Control(
            min(left, outer.remaining) if outer.remaining is not None else left, outer.progress, parent=outer
        )
        with inner:
            raw = _solve_once(spec, matrix, prep, inner, resolved, binz.conditions)
        parts.append((binz.conditions, raw, {"mid_n": n}))
        values = {"mid_n": n, "trees": sum(len(p[1].solutions) for p in parts)}
        if outer.progress is not None:  # best so far, drawn by the app as a provisional front
            values["partial_front"] = _assemble(
                prep, spec, resolved, parts, "mid", list(notices), time.perf_counter() - start, "running"
            )
        outer.report("anytime", **values)
        if inner.cancelled or n >= limit:
            break
        n = min(2 * n, limit)
    status = (
        "cancelled"
        if outer.cancelled
        else ("time_limit" if parts and parts[-1][1].status != "done" or n < limit else "done")
    )
    front = _assemble(prep, spec, resolved, parts, "mid", notices, time.perf_counter() - start, status)
    front.params["mid_budget"] = budget
    return front


def _solve_once(spec, matrix, prep, control, resolved, features):
    """One solver call; rows named in its errors are renumbered as in the user's table."""
    try:
        return spec.run(
            matrix, prep.y_train, prep.schema.n_classes, control, **_extra(spec, features, prep), **resolved
        )
    except ValueError as exc:
        if hasattr(exc, "renumbered"):  # solvers.sat.ContradictoryExamples, without importing python-sat
            raise exc.renumbered(prep.dataset.row_numbers(), "counted from 1 after the header") from None
        raise


def _extra(spec, features, prep) -> dict:
    """Keyword arguments a solver asks for beyond the matrix (see ``SolverSpec.wants_features``)."""
    return {"features": list(features), "encoded": prep.X_train, "schema": prep.schema} if spec.wants_features else {}


def _run(prep, spec, resolved, inputs, disc_name, control, notices) -> Front:
    control.report("solving", solver=spec.name)
    t0 = time.perf_counter()
    parts = []
    with control:
        for features, matrix, info in inputs:
            raw = _solve_once(spec, matrix, prep, control, resolved, features)
            if not isinstance(raw, RawFront):
                raise TypeError(f"solver {spec.name!r} returned {type(raw).__name__}, expected RawFront")
            parts.append((features, raw, info))
    runtime = time.perf_counter() - t0
    status = parts[-1][1].status if parts[-1][1].status != "done" else control.status()
    front = _assemble(prep, spec, resolved, parts, disc_name, notices, runtime, status)
    control.report("done", trees=len(front))
    return front


def _assemble(prep, spec, resolved, parts, disc_name, notices, runtime, status) -> Front:
    schema = prep.schema
    seen: dict = {}
    stats: dict = {}
    objective = ""
    for features, raw, extra in parts:
        objective = raw.objective
        stats.update(raw.stats)
        notices += [n for n in raw.stats.get("notices", []) if n not in notices]
        features = raw.features if raw.features is not None else features
        for sol in raw.solutions:
            tree = Tree.from_raw(sol.tree, features, schema).with_counts(prep.X_train, prep.y_train)
            key = tree.structure_key()
            optimal = bool(sol.optimal) and status == "done"
            if key in seen:
                seen[key].optimal = seen[key].optimal or optimal
                continue
            metrics = compute_metrics(tree, prep.X_train, prep.y_train, prep.X_test, prep.y_test)
            seen[key] = FrontTree(0, tree, optimal, metrics, {**sol.info, **extra})
    trees = sorted(
        seen.values(), key=lambda t: (t.metrics["splits"], -t.metrics["train_accuracy"], t.metrics["avg_tests"])
    )
    for i, t in enumerate(trees):
        t.id = i
    stats.pop("notices", None)
    return Front(
        trees,
        spec.name,
        disc_name,
        objective,
        status,
        runtime,
        len(prep.y_train),
        0 if prep.y_test is None else len(prep.y_test),
        prep.dataset.name,
        schema,
        dict(resolved),
        notices,
        stats,
    )
