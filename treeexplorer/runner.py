"""The solving stage of a run: the solver called on the encoded matrix, its partial fronts relayed to the caller,
and the front assembled (:func:`run`); or the MID paper's anytime loop over growing test sets (:func:`mid_anytime`).
"""

from __future__ import annotations

import time

import numpy as np

from treeexplorer.assemble import assemble
from treeexplorer.encode import stopper
from treeexplorer.front import Front
from treeexplorer.limits import STORE_PARAMS, assembly_reserve
from treeexplorer.prepared import Prepared
from treeexplorer.request import RunRequest
from treeexplorer.solvers import Control, RawFront

__all__ = ["run", "mid_anytime"]


def run(prep, spec, resolved, inputs, disc_name, control, notices, estimate=None, run_params=None) -> Front:
    """Solve each ``(features, matrix, info)`` of ``inputs`` in turn and assemble one front of all of them.

    The solver runs with ``run_params`` when given (``resolved`` with its store lowered to the memory limit,
    see :func:`treeexplorer.encode.check_solver_memory`); the front records ``resolved``."""
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
    front = assemble(prep, spec, resolved, parts, disc_name, notices, control.elapsed, status, control)
    front.runtime_s = control.elapsed  # the whole run: loading (from solve), discretizing, solving, assembling
    if estimate:
        front.stats["memory_estimate_mb"] = round(estimate / 2**20, 1)
        store = (run_params or resolved).get(STORE_PARAMS.get(spec.name, ""))
        if store is not None:  # the part of the estimate that is the growing store's cap (a bound, not a forecast)
            front.stats["memory_store_mb"] = round(float(store), 1)
    control.report("done", trees=len(front))
    return front


def mid_anytime(prep: Prepared, request: RunRequest, control: Control, notices: list) -> Front:
    """The MID paper's loop: solve on the top 1, 2, 4, ... tests until ``request.mid_budget`` seconds run out."""
    from treeexplorer.discretize import MIDRanking
    from treeexplorer.discretize._common import gap_columns, gap_notice, missing_sides

    spec, resolved, n_bins, budget = request.spec, request.params, request.n_bins, request.mid_budget
    ranking = MIDRanking.fit(
        prep.X_train, prep.y_train, prep.schema, request.criterion, stop=stopper(control), max_tests=n_bins or None
    )
    notices += [n for n in ranking.notices if n not in notices]
    limit = min(n_bins or ranking.n_available, ranking.n_available)
    if limit < 1:
        raise ValueError("MID found no candidate test: no column has two distinct values with different classes")
    gappy = gap_columns(prep.X_train)  # once: each round gives the same columns' tests both sides
    if gappy:
        notices.append(gap_notice(prep.schema, gappy))
    start = time.perf_counter()
    outer = control
    parts, n = [], 1
    while True:
        left = budget - (time.perf_counter() - start)
        if left <= 0 or outer.stopped:
            break
        binz = missing_sides(ranking.select(n), gappy, prep.schema)  # as fit_discretizer gives them
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
            values["partial_front"] = assemble(
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
    front = assemble(prep, spec, resolved, parts, "mid", notices, outer.elapsed, status, outer)
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
    """Keyword arguments a solver asks for beyond the matrix (see ``SolverSpec.wants_features``), and the run's
    ``sample_weight`` and ``costs`` for a solver whose spec says ``weighted`` (none on the plain path)."""
    out = {"features": list(features), "encoded": prep.X_train, "schema": prep.schema} if spec.wants_features else {}
    if prep.weights is not None:
        out.update(prep.weights.solver_kwargs(spec))
    return out


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
                values["partial_front"] = assemble(
                    prep, spec, resolved, parts_now, disc_name, list(notices), control.elapsed, "running"
                )
                last[0] = time.perf_counter()
            except (IndexError, ValueError):  # trees over tests the solver added itself: shown when it ends
                pass
        user(values)

    control.progress = relay
    return user
