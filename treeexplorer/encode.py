"""The second stage of a run: the matrix a solver sees, built from :class:`~treeexplorer.prepared.Prepared` rows.

Numeric solvers on raw columns get :func:`feature_matrix` (categoricals one-hot); otherwise a discretizer's tests
give a 0/1 test matrix.  Every matrix, and the solver's own tables, are checked against the memory limit before
they are allocated (:mod:`treeexplorer.limits`).
"""

from __future__ import annotations

import numpy as np

from treeexplorer.limits import (
    RUN_OVERHEAD,
    STORE_PARAMS,
    check_bytes,
    check_test_count,
    discretizer_bytes,
    exact_test_count,
    matrix_share,
    max_tests,
    solver_bytes,
    store_budget,
)
from treeexplorer.prepared import Prepared
from treeexplorer.request import RunRequest
from treeexplorer.schema import OP_EQ, Binarization, Condition, Schema
from treeexplorer.solvers import Control

__all__ = ["numeric_features", "feature_matrix", "encode", "stopper"]


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
    """The float64 matrix a numeric solver sees for ``features`` (see :func:`numeric_features`); a category test
    is NaN where its column is missing, so the solver learns that side too."""
    out = np.empty((X.shape[0], len(features)), dtype=np.float64)
    for j, f in enumerate(features):
        if isinstance(f, Condition):
            out[:, j] = f.evaluate(X)
            out[np.isnan(X[:, f.column]), j] = np.nan
        else:
            out[:, j] = X[:, f]
    return out


def check_missing_support(spec, prep: Prepared) -> None:
    """Refuse, in one line, a solver that cannot yet learn where gaps go on a table whose training rows have some."""
    if spec.takes_missing:
        return
    gaps = np.isnan(prep.X_train)
    if not gaps.any():
        return
    from treeexplorer.registry import available_solvers, get_solver

    cols = [prep.schema.columns[j].name for j in np.flatnonzero(gaps.any(axis=0))]
    able = [n for n in available_solvers() if get_solver(n).takes_missing]
    raise ValueError(
        f"{spec.name} does not learn where missing values go yet: {int(gaps.any(axis=1).sum())} training row(s) "
        f"have gaps (in {', '.join(map(repr, cols[:5]))}{' ...' if len(cols) > 5 else ''}); use "
        f"{', '.join(able)}, or drop those rows (drop_missing=True, CLI --drop-missing)"
    )


def encode(prep: Prepared, request: RunRequest, control: Control, limit_mb: float, notices: list):
    """The solver's input for ``request`` (not the MID anytime loop, which encodes per round).

    Returns ``(features, matrix, estimate, run_params)``: the matrix's columns (column indices or test
    conditions), the matrix, the run's memory estimate in bytes and the parameters the solver runs with (see
    :func:`check_solver_memory`).  Discretizer and memory notices are appended to ``notices``.
    """
    spec, resolved = request.spec, request.params
    schema = prep.schema
    n_rows = len(prep.y_train)
    check_missing_support(spec, prep)
    if request.raw:
        features = numeric_features(schema)
        check_bytes(
            f"the numeric matrix ({n_rows:,} rows x {len(features):,} columns, categories one-hot)",
            8.0 * n_rows * len(features),
            limit_mb,
            "the number of columns (leave out ID-like or many-category columns)",
        )
        estimate, run_params = check_solver_memory(
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
        return features, feature_matrix(features, prep.X_train), estimate, run_params
    disc_name = request.discretizer_used
    from treeexplorer.discretize import fit_discretizer
    from treeexplorer.discretize.matrix import as_float_matrix, build_test_matrix

    control.report("discretizing", method=disc_name)
    if disc_name == "exact":
        _check_exact_memory(prep, spec, limit_mb)
        _check_exact_count(prep, spec)
    binz: Binarization = fit_discretizer(
        disc_name,
        prep.X_train,
        prep.y_train,
        schema,
        n_bins=request.n_bins,
        criterion=request.criterion,
        stop=stopper(control),
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
    estimate, run_params = check_solver_memory(
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
    stop = stopper(control, matrix_share(control.time_limit))
    binz, matrix = build_test_matrix(binz, prep.X_train, stop=stop)
    if spec.input == "numeric":
        binz, matrix = as_float_matrix(binz, matrix, stop=stop)
    notices += [n for n in binz.notices if n not in notices]
    return binz.conditions, matrix, estimate, run_params


def stopper(control: Control, after: float | None = None):
    """What a discretizer polls between columns: whether the run's time limit or cancel stopped it (or, with
    ``after``, whether that many seconds of the run have passed)."""
    if after is None:
        return lambda: control.stopped
    return lambda: control.stopped or control.elapsed >= after


def check_solver_memory(
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
