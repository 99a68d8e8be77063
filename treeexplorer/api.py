"""The one entry point the CLI, the estimator and the app call: dataset → discretizer → solver → Front.

A run goes through four stages, each in its own module:

1. :mod:`treeexplorer.prepared`: the data loaded and split (:func:`prepare`, :class:`Prepared`);
2. :mod:`treeexplorer.encode`: the matrix the solver sees (raw columns or a discretizer's tests), memory checked;
3. :mod:`treeexplorer.runner`: the solver called (or MID's anytime loop), partial fronts relayed;
4. :mod:`treeexplorer.assemble`: its solutions turned into a :class:`~treeexplorer.front.Front`.

:func:`solve` checks its arguments once (:class:`~treeexplorer.request.RunRequest`), then chains the stages;
:func:`run_prepared` does the same on data already prepared (the app, the estimator, cross-validation, sweeps).
"""

from __future__ import annotations

import time

from treeexplorer.encode import encode, feature_matrix, numeric_features
from treeexplorer.front import Front
from treeexplorer.limits import check_memory_limit, return_freed_memory
from treeexplorer.objective import objective_notices
from treeexplorer.prepared import Prepared, check_data_args, prepare, with_weights
from treeexplorer.registry import SolverSpec
from treeexplorer.request import RunRequest, check_discretizer, check_mid_budget, check_n_bins, got
from treeexplorer.runner import mid_anytime, run
from treeexplorer.solvers import Control, time_limit_seconds
from treeexplorer.warm import ensure_warm

__all__ = ["solve", "prepare", "Prepared", "RunRequest", "numeric_features", "feature_matrix", "run_prepared"]


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
    na_values=None,
    allow_many_classes: bool = False,
    categorical=(),
    features=None,
    exclude=None,
    mid_budget: float | None = None,
    discretizer_params: dict | None = None,
    class_weight=None,
    sample_weight=None,
    costs=None,
    **params,
) -> Front:
    """Find a front of decision trees.

    Parameters
    ----------
    data : str, path, DataFrame or Dataset
        A file, a bundled dataset name, or a table (see :func:`treeexplorer.load_dataset`).
    target : str or int, optional
        Target column (default: the last column that looks categorical).
    solver : str, default "cart"
        A registered solver: ``cart``, ``dpdt``, ``murtree``, ``branches``, ``sat``, ``contree``
        (:data:`treeexplorer.registry.SOLVER_NAMES`) or one a plug-in registers.
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
    features : list of str, optional
        The feature columns to learn from.  Default: all but those that look like row identifiers (``ID``,
        ``Unnamed: 0``, ``name``, row numbers: :mod:`treeexplorer.columns`), which a notice names.
    exclude : list of str, optional
        Columns to leave out as well.
    mid_budget : float, optional
        With ``discretizer="mid"``: the anytime loop over the top 1, 2, 4, ... MID tests for this many
        seconds, keeping the best tree per complexity.
    discretizer_params : dict, optional
        Options of the discretizer (:data:`treeexplorer.request.DISCRETIZER_OPTIONS`): ``{"criterion": "gini"}``
        makes MID rank thresholds by Gini impurity (default entropy; MDLP always uses entropy).
    class_weight : "balanced" or dict, optional
        Weigh the classes: ``"balanced"`` (scikit-learn's ``n / (k * n_c)`` on the training rows, so the cost
        is ``1 - balanced accuracy``, scaled) or ``{class: weight}``.  With weights or costs the solver
        minimises the total cost ``sum_i w_i * C[y_i, yhat_i]`` (:mod:`treeexplorer.objective`; solvers whose
        spec says ``weighted``).
    sample_weight : str or array-like, optional
        Row weights: the name of a numeric column (then not a feature) or one number per row of the table.
    costs : dict or array-like, optional
        ``{(true, predicted): cost}`` by class name (other pairs: 0 right, 1 wrong) or a k x k matrix.
    **params
        Solver parameters (``max_depth``, ``max_nodes``, ``sparsity``, ``cart_depth``, ``criterion``, ``front``,
        ...); a parameter the solver does not use is an error.  A solver parameter is never taken by the
        discretizer: ``criterion="entropy"`` is CART's or DPDT's split criterion.

    Returns
    -------
    Front
    """
    return_freed_memory()  # what loading and discretizing free leaves the process (the limit counts it gone)
    request = RunRequest.build(
        solver,
        params,
        discretizer=discretizer,
        n_bins=n_bins,
        mid_budget=mid_budget,
        discretizer_params=discretizer_params,
        time_limit=time_limit,
        memory_limit=memory_limit,
        class_weight=class_weight,
        costs=costs,
    )
    data, target = check_data_args(
        data, target, test_size=test_size, seed=seed, progress=progress, control=control, drop_missing=drop_missing
    )
    prep, control = load_and_start(
        request.spec,
        data,
        target,
        time_limit=request.time_limit,
        progress=progress,
        control=control,
        test_size=test_size,
        test=test,
        seed=seed,
        drop_missing=drop_missing,
        na_values=na_values,
        categorical=categorical,
        allow_many_classes=allow_many_classes,
        features=features,
        exclude=exclude,
        weights=sample_weight,
    )
    return run_prepared(prep, request, control=control)


def run_control(time_limit=None, progress=None, control: Control | None = None) -> Control:
    """The caller's Control given ``time_limit`` and ``progress`` when it has none, or a new one (not started)."""
    if control is None:
        return Control(time_limit, progress)
    if time_limit is not None and control.time_limit is None:
        control.time_limit = time_limit_seconds(time_limit)
    if progress is not None and control.progress is None:
        control.progress = progress
    return control


def load_and_start(
    spec: SolverSpec, data, target, *, time_limit=None, progress=None, control: Control | None = None, **load
) -> tuple[Prepared, Control]:
    """The start of a run that loads its own data (:func:`solve`, :func:`treeexplorer.rashomon`): the table loaded
    and split (``load``: :func:`~treeexplorer.prepared.prepare`'s options), then the solver's kernels loaded (or
    compiled, with a "compiling" report: a bad table is refused before any compile), then the run's clock started
    with the loading counted.  The time limit covers every phase (loading watched while it runs) but the compile.
    Returns the prepared data and the run's Control."""
    control = run_control(time_limit, progress, control)
    t0 = time.perf_counter()
    control.report("loading")
    limit = control.time_limit  # the clock starts after the compile below, so the loading is watched here

    def stop() -> bool:
        return control.stopped or (limit is not None and time.perf_counter() - t0 >= limit)

    prep = prepare(data, target, stop=stop, **load)
    loading_s = time.perf_counter() - t0
    ensure_warm(spec, control)
    control.start_once(spent=loading_s)
    return prep, control


def _check_solve_args(data, target, **a):
    """:func:`solve`'s arguments checked, one clear error each, before any work (for callers that take them one
    by one, e.g. :func:`treeexplorer.rashomon`): the run's settings by :class:`RunRequest`'s checks, the data's by
    :func:`~treeexplorer.prepared.check_data_args`.  Returns ``(data, target)`` as that does."""
    if not isinstance(a["solver"], str):
        raise ValueError(f"solver must be a solver name (text), got {got(a['solver'])}")
    check_discretizer(a["discretizer"])
    check_n_bins(a["n_bins"])
    time_limit_seconds(a["time_limit"])  # the one check every entry point makes: infinity means no limit
    check_mid_budget(a["mid_budget"])
    keys = ("test_size", "seed", "progress", "control", "drop_missing")
    return check_data_args(data, target, **{k: a[k] for k in keys})


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
    weights = request.objective.resolve(
        prep.schema, prep.y_train, prep.dataset.weights, prep.y_test, prep.w_test, prep.dataset.weight_source
    )
    weights.solver_kwargs(spec)  # a solver that takes no weights is refused before any work
    prep = with_weights(prep, weights)
    control = control or Control(request.time_limit)
    limit_mb = check_memory_limit(request.memory_limit)
    return_freed_memory()
    # Kernels load (or compile) before the clock starts: compiling is not part of the time limit.
    ensure_warm(spec, control)
    control.start_once()
    notices = list(prep.notices) + objective_notices(weights, spec, request.discretizer_used)
    if request.discretizer_used == "mid" and request.mid_budget is not None:
        control.report("discretizing", method="mid")
        return mid_anytime(prep, request, control, notices)
    features, matrix, estimate, run_params = encode(prep, request, control, limit_mb, notices)
    inputs = [(features, matrix, {})]
    return run(prep, spec, resolved, inputs, request.discretizer_used, control, notices, estimate, run_params)
