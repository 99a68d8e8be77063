"""The one entry point the CLI, the estimator and the app call: dataset → discretizer → solver → Front."""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numpy as np

from treeexplorer.claims import make_search_space
from treeexplorer.data import DataError, Dataset, frame_from_arrays, load_dataset
from treeexplorer.evaluate import count_trees_stoppable, metrics_from_counts
from treeexplorer.front import Front, FrontTree, data_key, metrics_dict
from treeexplorer.limits import (
    RUN_OVERHEAD,
    STORE_PARAMS,
    assembly_reserve,
    check_bytes,
    check_memory_limit,
    check_test_count,
    discretizer_bytes,
    exact_test_count,
    matrix_share,
    max_tests,
    solver_bytes,
    store_budget,
)
from treeexplorer.registry import SolverSpec
from treeexplorer.request import RunRequest, check_discretizer, check_mid_budget, check_n_bins, got
from treeexplorer.schema import OP_EQ, Binarization, Condition, Schema
from treeexplorer.solvers import Control, RawFront, time_limit_seconds
from treeexplorer.tree import Tree, shorten_thresholds
from treeexplorer.warm import ensure_warm

__all__ = ["solve", "prepare", "Prepared", "RunRequest", "numeric_features", "run_prepared"]


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
    allow_many_classes: bool = False,
    stop=None,
) -> Prepared:
    """Load ``data`` and hold out test rows (``test_size`` fraction, or a separate ``test`` table); ``stop`` is
    polled while loading (see :func:`treeexplorer.data.load_dataset`)."""
    dataset = (
        data
        if isinstance(data, Dataset)
        else load_dataset(
            data,
            target,
            drop_missing=drop_missing,
            categorical=categorical,
            max_rows=max_rows,
            allow_many_classes=allow_many_classes,
            stop=stop,
        )
    )
    notices = list(dataset.notices)
    if test is not None and test_size is not None:
        raise DataError("give either a test file or a test size, not both")
    if test is not None:
        X_te, y_te = dataset.encode(test, what="test data")
        if y_te is None:
            raise DataError(f"test data lacks the target column {dataset.schema.target!r}")
        return Prepared(dataset, dataset.X, dataset.y, X_te, y_te.astype(np.int64), notices)
    if test_size:  # 0 means no hold-out, as None (the app's slider at 0, CLI --test-size 0)
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
    memory_limit: float | None = None,
    progress=None,
    control: Control | None = None,
    drop_missing: bool = False,
    allow_many_classes: bool = False,
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
        Target column (default: the last column that looks categorical).
    solver : {"cart", "dpdt", "murtree", "branches", "sat"}
    discretizer : str, optional
        ``none|exact|mid|mdlp|quantile|uniform``.  Binary solvers default to their preferred one; numeric
        solvers (CART, DPDT) use the raw columns unless a discretizer is given.
    n_bins : int, optional
        Thresholds per feature (quantile/uniform) or number of tests (mid).
    test_size : float, optional
        Fraction held out, stratified, with ``seed``; ``0`` or ``None``: no held-out rows.
    test : str, path or DataFrame, optional
        A separate test table with the same columns.
    time_limit : float, optional
        Seconds for the whole run (loading, discretizing, solving, assembling the front); the best trees
        found so far are returned, marked not proven.  The solver's kernels are loaded (compiled on a cold
        numba cache) before this clock starts (see :mod:`treeexplorer.warm`).
    memory_limit : float, optional
        Megabytes the run's large structures may take (default: half of the machine's available memory,
        see :mod:`treeexplorer.limits`); a run that would need more is refused before allocating, with a
        message naming the setting to lower.
    progress : callable, optional
        ``progress(dict)`` with ``phase``, ``elapsed`` and solver counters.
    control : solvers.Control, optional
        Pass one to cancel from another thread (``control.cancel()``).
    allow_many_classes : bool
        Accept a target that looks continuous (see :class:`treeexplorer.data.ManyClassesError`).
    mid_budget : float, optional
        With ``discretizer="mid"``: the anytime loop over the top 1, 2, 4, ... MID tests for this many
        seconds, keeping the best tree per complexity.
    discretizer_params : dict, optional
        Options of the discretizer (:data:`treeexplorer.request.DISCRETIZER_OPTIONS`): ``{"criterion": "gini"}``
        makes MID rank thresholds by Gini impurity (default entropy; MDLP always uses entropy).
    **params
        Solver parameters (``max_depth``, ``max_nodes``, ``sparsity``, ``cart_depth``, ``criterion``, ``front``,
        ...); a parameter the solver does not use is an error.  A solver parameter is never taken by the
        discretizer: ``criterion="entropy"`` is CART's or DPDT's split criterion.

    Returns
    -------
    Front
    """
    request = RunRequest.build(
        solver,
        params,
        discretizer=discretizer,
        n_bins=n_bins,
        mid_budget=mid_budget,
        discretizer_params=discretizer_params,
        time_limit=time_limit,
        memory_limit=memory_limit,
    )
    data, target = _check_data_args(
        data, target, test_size=test_size, seed=seed, progress=progress, control=control, drop_missing=drop_missing
    )
    control = run_control(request.time_limit, progress, control)
    t0 = time.perf_counter()
    control.report("loading")
    limit = control.time_limit  # the clock starts after the compile below, the loading counted: watched here

    def stop() -> bool:
        return control.stopped or (limit is not None and time.perf_counter() - t0 >= limit)

    prep = prepare(
        data,
        target,
        test_size=test_size,
        test=test,
        seed=seed,
        drop_missing=drop_missing,
        categorical=categorical,
        allow_many_classes=allow_many_classes,
        stop=stop,
    )
    loading_s = time.perf_counter() - t0
    # Kernels load (or compile, with a "compiling" report) once the inputs are known to be good: a bad table is
    # reported at once, not after a first run's compile.  The clock then starts, the loading counted.
    ensure_warm(request.spec, control)
    control.start_once(spent=loading_s)
    return run_prepared(prep, request, control=control)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def run_control(time_limit=None, progress=None, control: Control | None = None) -> Control:
    """The caller's Control given ``time_limit`` and ``progress`` when it has none, or a new one (not started)."""
    if control is None:
        return Control(time_limit, progress)
    if time_limit is not None and control.time_limit is None:
        control.time_limit = time_limit_seconds(time_limit)
    if progress is not None and control.progress is None:
        control.progress = progress
    return control


def start_run(spec: SolverSpec, time_limit=None, progress=None, control: Control | None = None) -> Control:
    """The Control of a run that loads its own data (:func:`solve`, :func:`treeexplorer.rashomon`): the caller's
    or a new one, given ``time_limit`` and ``progress`` when it has none; the solver's kernels warmed first, then
    its clock started and "loading" reported.  The time limit covers every phase from here (loading included);
    compiling the kernels does not."""
    control = run_control(time_limit, progress, control)
    ensure_warm(spec, control)
    control.start_once()
    control.report("loading")
    return control


def _check_solve_args(data, target, **a):
    """:func:`solve`'s arguments checked, one clear error each, before any work (for callers that take them one
    by one, e.g. :func:`treeexplorer.rashomon`): the run's settings by :class:`RunRequest`'s checks, the data's by
    :func:`_check_data_args`.  Returns ``(data, target)`` as :func:`_check_data_args` does."""
    if not isinstance(a["solver"], str):
        raise ValueError(f"solver must be a solver name (text), got {got(a['solver'])}")
    check_discretizer(a["discretizer"])
    check_n_bins(a["n_bins"])
    time_limit_seconds(a["time_limit"])  # the one check every entry point makes: infinity means no limit
    check_mid_budget(a["mid_budget"])
    keys = ("test_size", "seed", "progress", "control", "drop_missing")
    return _check_data_args(data, target, **{k: a[k] for k in keys})


def _check_data_args(data, target, *, test_size, seed, progress, control, drop_missing):
    """Types and ranges of the data side of a run (split, seed, callbacks), checked before any work: one clear
    error each.  Returns ``(data, target)``, arrays turned into a table (:func:`treeexplorer.data.frame_from_arrays`).
    """
    ts = test_size
    if ts is not None and (not _is_number(ts) or not 0 <= ts < 1):
        raise DataError(
            f"test size must be a fraction strictly between 0 and 1 (or 0 for no held-out rows), got {got(ts)}"
        )
    if not isinstance(seed, numbers.Integral) or isinstance(seed, (bool, np.bool_)) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in [0, 2**32), got {got(seed)}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a function taking a dict (or None), got {got(progress)}")
    if control is not None:
        if not isinstance(control, Control):
            raise ValueError(f"control must be a treeexplorer.solvers.Control (or None), got {got(control)}")
        if control.stopped:
            raise ValueError(
                f"this Control was already {'cancelled' if control.cancelled else 'stopped by its time limit'}; "
                "a Control serves one run: pass a new Control()"
            )
    if not isinstance(drop_missing, (bool, np.bool_)):
        raise ValueError(f"drop_missing must be True or False, got {got(drop_missing)}")
    return _as_table(data, target)


def _as_table(data, target):
    """Arrays as data: ``solve(X, y)``, ``solve((X, y))``, a DataFrame with labels ``y``, or one array, list of
    rows or dict of columns (its last column the target, as in a file)."""
    if isinstance(data, tuple) and len(data) == 2 and target is None and _ndim(data[1]) == 1:
        return frame_from_arrays(data[0], data[1]), "y"
    if target is not None and not isinstance(target, str) and _ndim(target) >= 1:  # labels y
        if isinstance(data, (str, bytes, Dataset)) or hasattr(data, "__fspath__"):
            raise DataError(
                f"target must be a column name or position, got {type(target).__name__}; labels y go with an "
                "array or DataFrame X: solve(X, y)"
            )
        return frame_from_arrays(data, target), "y"
    if target is not None and (not isinstance(target, (str, numbers.Integral)) or isinstance(target, bool)):
        raise DataError(f"target must be a column name or position (or labels y), got {got(target)}")
    if isinstance(data, (np.ndarray, list, tuple, dict)):
        return frame_from_arrays(data), target
    return data, target


def _ndim(v) -> int:
    try:
        return int(np.ndim(v))
    except (ValueError, TypeError):  # ragged nested lists
        return 1


def run_prepared(
    prep: Prepared,
    request: RunRequest | SolverSpec | str,
    resolved: dict | None = None,
    *,
    control: Control | None = None,
    **settings,
) -> Front:
    """Discretize (if needed) and run one solver on prepared data, as ``request`` says.

    ``request`` is a :class:`~treeexplorer.request.RunRequest` (already checked: taken as it is), or a solver
    (spec or name) with its parameters ``resolved`` and :meth:`RunRequest.build`'s keyword ``settings``
    (``discretizer``, ``n_bins``, ``mid_budget``, ``discretizer_params``, ``memory_limit``), checked here once.
    The time limit of ``control`` counts from here (or from :func:`solve`'s start), discretizing included; the
    memory limit (MB, default a safe share of the machine) bounds the matrices built here and the solver's own
    tables, checked before they are allocated.
    """
    if not isinstance(request, RunRequest):
        request = RunRequest.build(request, resolved, **settings)
    elif resolved is not None or settings:
        raise TypeError("a RunRequest carries its settings: pass it alone (with control=)")
    spec, resolved = request.spec, request.params
    n_bins = request.n_bins
    criterion = request.criterion
    control = control or Control(request.time_limit)
    limit_mb = check_memory_limit(request.memory_limit)
    # Kernels load (or compile) before the clock starts: compiling is not part of the time limit.
    ensure_warm(spec, control)
    control.start_once()
    schema = prep.schema
    notices = list(prep.notices)
    n_rows = len(prep.y_train)
    if request.raw:
        features, disc_name = numeric_features(schema), "raw"
        check_bytes(
            f"the numeric matrix ({n_rows:,} rows x {len(features):,} columns, categories one-hot)",
            8.0 * n_rows * len(features),
            limit_mb,
            "the number of columns (leave out ID-like or many-category columns)",
        )
        estimate, run_params = _check_solver_memory(
            spec,
            n_rows,
            len(features),
            schema.n_classes,
            resolved,
            limit_mb,
            8.0 * n_rows * len(features),
            prep,
            notices=notices,
        )
        matrix = feature_matrix(features, prep.X_train)
        return _run(prep, spec, resolved, [(features, matrix, {})], disc_name, control, notices, estimate, run_params)
    disc_name = request.discretizer_used
    from treeexplorer.discretize import MIDRanking, fit_discretizer
    from treeexplorer.discretize.matrix import as_float_matrix, build_test_matrix

    control.report("discretizing", method=disc_name)
    if disc_name == "exact":
        _check_exact_memory(prep, spec, limit_mb)
        _check_exact_count(prep, spec)
    if disc_name == "mid" and request.mid_budget is not None:
        budget = request.mid_budget
        return _mid_anytime(prep, spec, resolved, n_bins, criterion, control, notices, budget, MIDRanking)
    binz: Binarization = fit_discretizer(
        disc_name, prep.X_train, prep.y_train, schema, n_bins=n_bins, criterion=criterion, stop=_stopper(control)
    )
    notices += binz.notices
    check_test_count(spec.name, len(binz), disc_name)
    item = 8 if spec.input == "numeric" else 1
    check_bytes(
        f"the {disc_name} test matrix ({n_rows:,} rows x {len(binz):,} tests)",
        float(item) * n_rows * len(binz),
        limit_mb,
        "the number of tests (n_bins, or the discretizer: mid, quantile)",
    )
    estimate, run_params = _check_solver_memory(
        spec,
        n_rows,
        len(binz),
        schema.n_classes,
        resolved,
        limit_mb,
        float(item) * n_rows * len(binz),
        prep,
        discretizer_bytes(disc_name, *prep.X_train.shape),
        notices=notices,
    )
    # by blocks, stopped by the time limit or cancel, or at half the limit so the solver keeps the other half
    # (the tests not built yet are then left out, with a notice)
    stop = _stopper(control, matrix_share(control.time_limit))
    binz, matrix = build_test_matrix(binz, prep.X_train, stop=stop)
    if spec.input == "numeric":
        binz, matrix = as_float_matrix(binz, matrix, stop=stop)
    notices += [n for n in binz.notices if n not in notices]
    return _run(
        prep, spec, resolved, [(binz.conditions, matrix, {})], disc_name, control, notices, estimate, run_params
    )


def _stopper(control: Control, after: float | None = None):
    """What a discretizer polls between columns: whether the run's time limit or cancel stopped it (or, with
    ``after``, whether that many seconds of the run have passed)."""
    if after is None:
        return lambda: control.stopped
    return lambda: control.stopped or control.elapsed >= after


def _check_solver_memory(
    spec, n_rows, n_tests, n_classes, resolved, limit_mb, matrix_bytes=0.0, prep=None, extra_bytes=0.0, notices=None
) -> tuple[float, dict]:
    """Refuse a run whose solver structures would exceed the limit; returns the run's whole estimate (bytes:
    the prepared rows, the solver's input matrix, its own structures and the budget of its growing search store,
    or the prepared rows and ``extra_bytes`` of an earlier phase such as the discretizer's if that is more;
    recorded in the front's stats) and the
    parameters the solver runs with (its store parameter lowered to what the memory limit leaves, see
    :func:`treeexplorer.limits.store_budget`)."""
    nbytes, what, lower = solver_bytes(spec.name, n_rows, n_tests, n_classes, resolved)
    if nbytes:
        check_bytes(what, nbytes, limit_mb, lower)
    data = 0.0
    if prep is not None:
        data = 8.0 * (prep.X_train.size + (0 if prep.X_test is None else prep.X_test.size))
    total = data + matrix_bytes + nbytes
    if nbytes:
        check_bytes(f"the run ({what} with its input matrix and the prepared rows)", total, limit_mb, lower)
    # the estimate recorded also counts what any run allocates besides
    store, notice = store_budget(spec.name, resolved, limit_mb, RUN_OVERHEAD + total)
    run_params = resolved
    if notice is not None:
        run_params = {**resolved, STORE_PARAMS[spec.name]: store / 2**20}
        if notices is not None:
            notices.append(notice)
    # an earlier phase's peak (the discretizer's) is gone before the solver's structures are built
    return RUN_OVERHEAD + max(total + store, data + extra_bytes), run_params


def _check_exact_memory(prep, spec, limit_mb) -> None:
    """The ``exact`` discretizer gives a test per distinct value: on continuous columns about rows x columns
    tests, so its matrix grows with rows squared.  Refuse before building the tests (cheap bound first)."""
    n, p = prep.X_train.shape
    item = 8 if spec.input == "numeric" else 1
    per_test = item * n + 300.0  # a column of the matrix and the test object
    if per_test * p * max(n - 1, 1) <= limit_mb * 2**20:
        return
    cats = [c.is_categorical for c in prep.schema.columns]
    n_tests = exact_test_count(prep.X_train, cats)
    check_bytes(
        f"the exact test matrix ({n:,} rows x {n_tests:,} tests, a test per distinct value)",
        per_test * n_tests,
        limit_mb,
        "the number of tests: use the mid or quantile discretizer (n_bins)",
    )


_EXACT_SAMPLE = 2000  # rows whose distinct values bound the exact test count from below (a cheap first look)


def _check_exact_count(prep, spec) -> None:
    """Refuse the ``exact`` discretizer before fitting it when it gives more tests than the solver can use."""
    cap = max_tests(spec.name)
    n, p = prep.X_train.shape
    if cap is None or p * max(n - 1, 1) <= cap[0]:  # cheap bound first
        return
    cats = [c.is_categorical for c in prep.schema.columns]
    # the tests of a sample of rows are a lower bound: count them all (a sort per column) only when it is over
    if exact_test_count(prep.X_train[:_EXACT_SAMPLE], cats) > cap[0]:
        check_test_count(spec.name, exact_test_count(prep.X_train, cats), "exact")


def _mid_anytime(prep, spec, resolved, n_bins, criterion, control, notices, budget, MIDRanking) -> Front:
    """The MID paper's loop: solve on the top 1, 2, 4, ... tests until the budget runs out."""
    ranking = MIDRanking.fit(
        prep.X_train, prep.y_train, prep.schema, criterion, stop=_stopper(control), max_tests=n_bins or None
    )
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
            min(left, outer.remaining) if outer.remaining is not None else left,
            _no_partial(outer.progress),
            parent=outer,
        )
        with inner:
            raw = _solve_once(spec, matrix, prep, inner, resolved, binz.conditions)
        parts.append((binz.conditions, raw, {"mid_n": n}))
        values = {"mid_n": n, "trees": sum(len(p[1].solutions) for p in parts)}
        if outer.progress is not None:  # best so far, drawn by the app as a provisional front
            values["partial_front"] = _assemble(
                prep, spec, resolved, parts, "mid", list(notices), outer.elapsed, "running"
            ).drop_dominated()
        outer.report("anytime", **values)
        if inner.cancelled or n >= limit:
            break
        n = min(2 * n, limit)
    status = (
        "cancelled"
        if outer.cancelled
        else ("time_limit" if parts and parts[-1][1].status != "done" or n < limit else "done")
    )
    # runtime_s: the whole run, as for every other run (the budget above counts from the loop's start)
    front = _assemble(prep, spec, resolved, parts, "mid", notices, outer.elapsed, status, outer)
    front.params["mid_budget"] = budget
    # Every inner run adds its own front: keep the trees no other run's tree beats (the rest stay in the JSON)
    return front.drop_dominated()


def _no_partial(progress):
    """``progress`` without the solvers' raw fronts so far (the MID loop streams its own assembled fronts)."""
    if progress is None:
        return None
    return lambda values: progress({k: v for k, v in values.items() if k != "partial"})


def _solve_once(spec, matrix, prep, control, resolved, features):
    """One solver call; rows named in its errors are renumbered as in the user's table."""
    rows, how = prep.dataset.row_numbers(), "counted from 1 after the header"
    try:
        raw = spec.run(matrix, prep.y_train, prep.schema.n_classes, control, **_extra(spec, features, prep), **resolved)
    except ValueError as exc:
        if hasattr(exc, "renumbered"):  # solvers.sat.ContradictoryExamples, without importing python-sat
            raise exc.renumbered(rows, how) from None
        raise
    notices = raw.stats.get("notices") if isinstance(raw, RawFront) else None
    if notices:  # notices naming rows (solvers.sat.RelabelNotice) use the same numbers as the errors
        raw.stats["notices"] = [n.renumbered(rows, how) if hasattr(n, "renumbered") else n for n in notices]
    return raw


def _extra(spec, features, prep) -> dict:
    """Keyword arguments a solver asks for beyond the matrix (see ``SolverSpec.wants_features``)."""
    return {"features": list(features), "encoded": prep.X_train, "schema": prep.schema} if spec.wants_features else {}


def _relay_partials(control, prep, spec, resolved, parts, current, disc_name, notices):
    """While a solver runs, turn the raw front so far it reports (``partial``, MurTree and BRANCHES) into the
    ``partial_front`` the app draws, at most every 0.25 s.  Returns the caller's callback (to restore)."""
    user = control.progress
    if user is None:
        return None
    last = [-1.0]

    def relay(values):
        raw = values.pop("partial", None)
        if raw is not None and time.perf_counter() - last[0] >= 0.25:
            try:
                parts_now = [*parts, (current[0], raw, {})]
                values["partial_front"] = _assemble(
                    prep, spec, resolved, parts_now, disc_name, list(notices), control.elapsed, "running"
                )
                last[0] = time.perf_counter()
            except (IndexError, ValueError):  # trees over tests the solver added itself: shown when it ends
                pass
        user(values)

    control.progress = relay
    return user


def _run(prep, spec, resolved, inputs, disc_name, control, notices, estimate=None, run_params=None) -> Front:
    control.report("solving", solver=spec.name)
    control.start_once()
    # The solver stops a little before the limit: assembling the front (one pass over the rows) fits after it.
    n_test = 0 if prep.y_test is None else len(prep.y_test)
    if control.time_limit is not None:
        control.expire_at(control.time_limit - assembly_reserve(len(prep.y_train), n_test, control.time_limit))
    parts = []
    current: list = [None]
    user = _relay_partials(control, prep, spec, resolved, parts, current, disc_name, notices)
    try:
        for features, matrix, info in inputs:
            current[0] = features
            raw = _solve_once(spec, matrix, prep, control, run_params or resolved, features)
            if not isinstance(raw, RawFront):
                raise TypeError(f"solver {spec.name!r} returned {type(raw).__name__}, expected RawFront")
            parts.append((features, raw, info))
    finally:
        control.stop()
        if user is not None:
            control.progress = user
    status = parts[-1][1].status if parts[-1][1].status != "done" else control.status()
    front = _assemble(prep, spec, resolved, parts, disc_name, notices, control.elapsed, status, control)
    front.runtime_s = control.elapsed  # the whole run: loading (from solve), discretizing, solving, assembling
    if estimate:
        front.stats["memory_estimate_mb"] = round(estimate / 2**20, 1)
        store = (run_params or resolved).get(STORE_PARAMS.get(spec.name, ""))
        if store is not None:  # the part of the estimate that is the growing store's cap (a bound, not a forecast)
            front.stats["memory_store_mb"] = round(float(store), 1)
    control.report("done", trees=len(front))
    return front


def _assembly_stop(control: Control | None):
    """What assembling polls: a cancel, or the run's whole time limit passed (the solver itself stops earlier,
    keeping a reserve for assembling, see :func:`treeexplorer.limits.assembly_reserve`)."""
    if control is None:
        return None
    limit = control.time_limit
    return lambda: control.cancelled or (limit is not None and control.elapsed >= limit)


def _fill_metrics(entries: list, prep: Prepared, control: Control | None) -> list:
    """Counts and metrics of every tree, all trees in one pass over the train rows and one over the test rows.

    Stopped by a cancel or the time limit meanwhile, only a few trees spread over the front are counted on
    the rows left (:func:`~treeexplorer.evaluate.count_trees_stoppable`); returns the entries kept."""
    n_classes = prep.schema.n_classes
    trees = [e.tree for e in entries]

    def progress(what):
        if control is None or control.progress is None:
            return None
        return lambda done, total: control.report("assembling", data=what, rows=done, of=total, trees=len(trees))

    stop = _assembly_stop(control)
    tr_counts, tr_tests, kept = count_trees_stoppable(
        trees, prep.X_train, prep.y_train, n_classes, progress("train"), stop=stop
    )
    entries = [entries[i] for i in kept]
    trees = [e.tree for e in entries]
    has_test = prep.y_test is not None and len(prep.y_test) > 0
    if has_test:
        te_counts, te_tests, kept = count_trees_stoppable(
            trees, prep.X_test, prep.y_test, n_classes, progress("test"), stop=stop
        )
        entries = [entries[i] for i in kept]
        tr_counts, tr_tests = [tr_counts[i] for i in kept], tr_tests[kept]
    for i, e in enumerate(entries):
        e.tree = e.tree.with_counts(counts=tr_counts[i])
        tr = metrics_from_counts(e.tree, tr_counts[i], tr_tests[i], len(prep.y_train))
        te = metrics_from_counts(e.tree, te_counts[i], te_tests[i], len(prep.y_test)) if has_test else None
        e.metrics = metrics_dict(e.tree, tr, te)
    return entries


_ASSEMBLY_POLL = 16  # solutions turned into trees between two looks at the control


def _assemble(prep, spec, resolved, parts, disc_name, notices, runtime, status, control=None) -> Front:
    schema = prep.schema
    seen: dict = {}
    stats: dict = {}
    objective = ""
    stop = _assembly_stop(control)
    n_raw = sum(len(raw.solutions) for _, raw, _ in parts)
    cut = False
    for features, raw, extra in parts:
        objective = raw.objective
        stats.update(raw.stats)
        notices += [n for n in raw.stats.get("notices", []) if n not in notices]
        features = raw.features if raw.features is not None else features
        sols = raw.solutions
        # a long list (a CART path of hundreds of trees) is visited spread out, so that a stop keeps a sample
        order = _spread_order(len(sols)) if stop is not None and n_raw > _ASSEMBLY_POLL else range(len(sols))
        for j, i in enumerate(order):
            if j >= 2 and j % _ASSEMBLY_POLL == 0 and stop is not None and stop():
                cut = True
                break
            sol = sols[i]
            tree = Tree.from_raw(sol.tree, features, schema)
            key = tree.structure_key()
            optimal = bool(sol.optimal) and status == "done"
            if key in seen:
                seen[key].optimal = seen[key].optimal or optimal
                continue
            seen[key] = FrontTree(0, tree, optimal, {}, {**sol.info, **extra})
    n_found = len(seen)
    entries = _fill_metrics(list(seen.values()), prep, control)
    if cut or len(entries) < n_found:
        why = "cancelled" if control.cancelled else "the time limit came"
        notices.append(
            f"{why} while assembling the front: {len(entries)} of the {n_raw} trees the solver found are shown "
            "(spread over the front); run again without the cancel, or with a longer time limit, for all"
        )
        status = "cancelled" if control.cancelled else "time_limit"
        for e in entries:  # as for any stopped run: nothing is called proven
            e.optimal = False
    if stop is None or not stop():  # the text's thresholds (cosmetic, a sort of every used column): not past a stop
        shorten_thresholds([e.tree for e in entries], prep.X_train, prep.X_test)
    trees = sorted(entries, key=lambda t: (t.metrics["splits"], -t.metrics["train_accuracy"], t.metrics["avg_tests"]))
    for i, t in enumerate(trees):
        t.id = i
    stats.pop("notices", None)
    n_tests = max((len(raw.features if raw.features is not None else feats) for feats, raw, _ in parts), default=0)
    search_space = make_search_space(spec.input, disc_name, n_tests, resolved.get("generator"))
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
        search_space,
        _data_key(prep),
    )


def _spread_order(n: int) -> list[int]:
    """``0..n-1`` in an order whose every prefix is spread over the range: first, last, middle, quarters..."""
    if n <= 2:
        return list(range(n))
    order, seen = [0, n - 1], {0, n - 1}
    step = n - 1
    while len(order) < n:
        step = max(1, step // 2)
        for i in range(step, n, step):
            if i not in seen:
                seen.add(i)
                order.append(i)
    return order


def _data_key(prep: Prepared) -> str:
    """The rows' digest (:func:`treeexplorer.front.data_key`), computed once per prepared data."""
    if "_data_key" not in prep.__dict__:
        prep.__dict__["_data_key"] = data_key(prep.X_train, prep.y_train, prep.X_test, prep.y_test, prep.schema.target)
    return prep.__dict__["_data_key"]
