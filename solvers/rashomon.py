"""Rashomon sets over MurTree's search space: the distinct canonical trees, best first, anytime.

Every tree of depth <= ``D`` with at most ``K`` splits over the 0/1 tests, in order of training errors
(ties: fewer splits first), or of BRANCHES' objective ``errors / n + lambda * splits``
(``objective="branches"``; ties: fewer splits first, then the errors order), as a best-first enumeration over
the DP's subproblems (SORTD, Arslan et al., NeurIPS 2025): each subproblem (rows reaching a node, depth left,
exact number of splits) keeps a lazily extended sorted stream of its trees (see
:mod:`solvers._kernels.rashomon`), started from MurTree's optimum and bounds of that subproblem (the root is
solved by MurTree first, at depth >= 3: its time is the first tree's).  Trees are *canonical*: every leaf holds
a training row, no test repeats on a path, no internal node has only leaves of one class, and
leaves predict their majority class (lowest class on ties); two trees differ in shape or in a test.

The run stops after ``k`` trees, or at the first tree beyond ``max_errors``; a time limit or cancel returns
the trees so far, which are exactly the first trees of the full order.

With ``sample_weight=`` or ``costs=`` (``objective="errors"``) the set is ordered by the weighted cost
``sum_i w[i] * C[y[i], yhat[i]]`` (``solvers._objective``), ties to fewer splits: a leaf predicts its least-cost
class, the canonical rules use that prediction, and the kernel counts rows per (class, weight) group and prices
them in int64 with MurTree's quanta (:class:`solvers.murtree._Weighted`: every comparison exact); the root's
optimum and bounds come from weighted MurTree.  ``max_errors`` and ``max_gap`` are then costs.

The penalised objective is exact in integers: every stream has one number of splits, so it is sorted by the
objective too, and the root merges its streams by ``q * errors + p * n * splits`` with ``lambda = p / q``
(:func:`_weights`; ``lambda`` as typed, e.g. 0.01 = 1/100, is recovered exactly from its float's decimal).  Equal
objectives are equal keys: no float tie decides the order.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._base import Control, RawFront, RawSolution, RawTree, check_xy
from ._kernels.rashomon import DS_COLS, FR_COLS, N_POOLS, ST_COLS, Workspace, enumerate_trees, init_root
from ._objective import weighted
from .branches import _check_lambda
from .murtree import _CACHE_BITS, _PLAIN, _solve_budget, _Weighted, empty_cache
from .murtree import COUNTERS as MURTREE_COUNTERS
from .murtree import _workspace as _murtree_workspace

__all__ = ["rashomon", "COUNTERS", "OBJECTIVES", "estimate_bytes"]

COUNTERS = ("trees", "streams", "datasets")
OBJECTIVES = ("errors", "branches")  # what orders the set: training errors, or errors / n + lambda * splits
_MAX_DEPTH = 10
_INF = 1 << 60
_MAX_BATCH = 1024  # most trees written per kernel call (batches double up to it: progress reports)
_CHUNK = 8192  # most trees written before they become solutions (the write buffer's rows)
_POOL_NAMES = ("datasets", "rows", "tables", "streams", "trees", "heap", "candidates", "lists")


def _pool_sizes(n, f, depth, k):
    """First sizes of the kernel's pools (grown x2 on demand, in place: the run goes on): 1,000 trees of depth 3
    on the DL sets fit without a growth."""
    top = 2 * f
    d2 = top if depth >= 3 else 1
    ds = 1 + top + d2 * top + (top * top * 16 if depth >= 4 else 0)
    deep = 4 if depth >= 4 else 1  # depth 4 counts many more depth-2 subproblems: fewer restarts
    return {
        "datasets": min(ds, 1 << 18),
        # stored rows: the root's and those of datasets of depth >= 3 (depth-2 ones gather theirs from the parent)
        "rows": min(n * (1 + (f if depth >= 4 else 0) + (f * f if depth >= 5 else 0)), 1 << 24),
        "tables": min(ds * 6 + top * (2 << depth), 1 << 22),
        "streams": min(ds * 2, 1 << 18),
        "trees": max(4096, 16 * k),
        "heap": 16384 + 32 * k + deep * top * f * (1 << depth) // 4,
        "candidates": min(max(4096, top * top * (1 << depth)), 1 << 22),
        "lists": min(max(4096, 16 * deep * top * f), 1 << 22),  # the single splits of every depth-1 child
    }


def _bytes(sizes, n_classes, wide=False):
    per = {
        "datasets": 8 * (DS_COLS + n_classes + 2),
        "rows": 4,
        "tables": 8,
        "streams": 8 * ST_COLS,
        "trees": 32,
        "heap": 32,
        "candidates": 32,
        "lists": 4 * (2 + n_classes) + (8 if wide else 0),  # wide: int64 costs in the lists (weighted)
    }
    return sum(per[name] * sizes[name] for name in _POOL_NAMES)


def estimate_bytes(n_rows: int, n_tests: int, n_classes: int, max_depth: int, k: int) -> int:
    """Bytes of the enumeration's first pools (they grow by x2 when a search needs more).

    Parameters
    ----------
    n_rows, n_tests, n_classes : int
        Shape of the problem.
    max_depth, k : int
        Depth limit and number of trees asked for.

    Returns
    -------
    int
    """
    return _bytes(_pool_sizes(n_rows, n_tests, max_depth, k), n_classes)


def _workspace(XT, XR, ys, n_classes, depth, K, sizes, min_leaf, control, bounds, cm=_PLAIN):
    n, f = XR.shape
    words = n // 64 + n_classes + 1
    return Workspace(
        XT,
        XR,
        ys,
        # the pools are uninitialised: the kernel writes each row before it reads it (no memset of megabytes)
        np.empty((sizes["datasets"], DS_COLS), dtype=np.int64),
        np.empty((sizes["datasets"], n_classes), dtype=np.int64),
        np.empty(sizes["rows"], dtype=np.int32),
        np.empty(sizes["tables"], dtype=np.int64),
        np.empty((sizes["streams"], ST_COLS), dtype=np.int64),
        np.empty((sizes["trees"], 4), dtype=np.int64),
        np.empty((sizes["heap"], 4), dtype=np.int64),
        np.empty((sizes["candidates"], 4), dtype=np.int64),
        # int32: a list entry holds errors, a feature and class counts of one leaf, all below the row count
        # (int64 for the weighted objective's costs)
        np.empty((sizes["lists"], 2), dtype=np.int32 if cm.ndim == 1 else np.int64),
        np.empty((sizes["lists"], n_classes), dtype=np.int32),
        np.zeros(N_POOLS, dtype=np.int64),
        np.zeros(3, dtype=np.int64),
        control.flag,
        control.counters,
        np.array([min_leaf], dtype=np.int64),
        np.zeros((words, f), dtype=np.uint64),
        np.zeros((words, f), dtype=np.uint64),
        np.zeros((f, n_classes), dtype=np.int64),
        np.zeros((n_classes, f, f), dtype=np.int32),
        np.zeros(f, dtype=np.int64),
        np.zeros((f, n_classes), dtype=np.int64),
        np.zeros((2, n), dtype=np.int32),
        np.zeros(2 * max(f, 1), dtype=np.int64),
        np.zeros((K + 1, 2), dtype=np.int64),
        np.zeros((2 * depth + 4, FR_COLS), dtype=np.int64),
        *bounds,
        np.empty((sizes["datasets"], 2), dtype=np.uint64),
        cm,
    )


def rashomon(
    X,
    y,
    n_classes: int | None = None,
    *,
    max_depth: int = 3,
    max_nodes: int | None = None,
    k: int = 100,
    max_errors: int | None = None,
    max_gap: int | None = None,
    min_leaf_support: int = 1,
    max_bytes: int | None = None,
    objective: str = "errors",
    sparsity: float | None = None,
    max_objective_gap: float | None = None,
    control: Control | None = None,
    sample_weight=None,
    costs=None,
) -> RawFront:
    """The ``k`` best distinct canonical trees on 0/1 tests, in order of training errors (or BRANCHES'
    penalised objective), then splits.

    Parameters
    ----------
    X : array-like of shape (n, p)
        0/1 tests (uint8 or bool); a row goes right when its test is 1.
    y : array-like of shape (n,)
        Class indices ``0..n_classes-1``.
    n_classes : int, optional
        Number of classes (default ``max(y) + 1``).
    max_depth : int
        Depth limit ``D`` (0..10).
    max_nodes : int or None
        Most splits ``K`` of a tree (default and maximum ``2**D - 1``).
    k : int
        Most trees returned (>= 1).
    max_errors : int or float or None
        Only trees with at most this many training errors (``objective="errors"`` only); with weights or costs,
        a maximum weighted cost (a number >= 0, compared in MurTree's quanta).
    max_gap : int or float or None
        Only trees with at most this many errors above the first tree (the Rashomon bound ``epsilon * n``;
        ``objective="errors"`` only); with weights or costs, a cost above the first tree's.
    min_leaf_support : int
        Minimum number of training rows in every leaf.
    max_bytes : int or None
        Most bytes the pools may take: a run that would grow them beyond stops with the trees found so far
        (``stats["stopped_by"] = "memory"``).
    objective : {"errors", "branches"}
        What orders the trees: training errors (default), or ``errors / n + sparsity * splits`` (BRANCHES'
        objective, ``1 - (accuracy - lambda * splits)``), ties to fewer splits.
    sparsity : float, optional
        ``lambda`` of ``objective="branches"``, the cost of a split in accuracy, in [0, 1] (required there).
    max_objective_gap : float, optional
        With ``objective="branches"``: only trees whose objective is at most the first tree's plus this (the
        Rashomon bound ``epsilon``), compared exactly (the decimal the float prints as, as ``sparsity``).
    control : Control, optional
        Time limit / cancel / progress (counters: trees, streams, datasets; and a report per batch of trees
        with ``trees`` and ``errors``, or ``cost`` when weighted).  A stopped run keeps the trees found: the first
        of the full order.
    sample_weight : ndarray of float64 (n,), optional
        Row weights (finite, >= 0; checked upstream).  With ``costs`` the set is ordered by the weighted cost
        ``sum_i w[i] * costs[y[i], yhat[i]]`` (``objective="errors"`` only; ``min_leaf_support`` still counts
        rows).
    costs : ndarray of float64 (k, k), optional
        ``costs[true, predicted]`` (finite, >= 0; default 0 on the diagonal, 1 elsewhere).

    Returns
    -------
    RawFront
        ``objective="misclassifications"`` (or ``"error rate + lambda * splits"``); ``solutions`` in order, each
        ``info``: ``rank`` (0-based), ``errors``, ``splits`` (and ``objective``, the float nearest the tree's
        exact objective, with ``objective="branches"``; when weighted ``cost``, the tree's training cost, and
        ``errors`` its misclassified rows; ``objective="cost"``); ``optimal`` is True for the trees with the
        optimum's errors (objective, cost).  Trees count rows per class in ``value``; each leaf's ``prediction``
        is its majority class (least-cost class when weighted).  ``status``
        says why a run stopped early; ``stats``: ``complete`` (True when no further tree exists within the
        bounds), ``memory_bytes`` (the pools), ``restarts`` (pool growths; the run goes on, no work redone).
    """
    X, y, n_classes = check_xy(X, y, n_classes, binary=True)
    if isinstance(max_depth, bool) or int(max_depth) != max_depth or not 0 <= max_depth <= _MAX_DEPTH:
        raise ValueError(f"max_depth must be an integer in 0..{_MAX_DEPTH}, got {max_depth!r}")
    depth = int(max_depth)
    full = (1 << depth) - 1
    if max_nodes is None:
        K = full
    elif isinstance(max_nodes, bool) or int(max_nodes) != max_nodes or max_nodes < 0:
        raise ValueError(f"max_nodes must be a non-negative integer, got {max_nodes!r}")
    else:
        K = min(int(max_nodes), full)
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    wt = weighted(sample_weight, costs, y, n_classes)
    for name, bound in (("max_errors", max_errors), ("max_gap", max_gap)):
        if bound is None:
            continue
        if not wt.plain:  # a cost: any number >= 0
            if isinstance(bound, bool) or not isinstance(bound, (int, float, np.number)) or not bound >= 0:
                raise ValueError(f"{name} is a cost with weights or costs: a number >= 0, got {bound!r}")
            if not np.isfinite(bound):
                raise ValueError(f"{name} must be finite, got {bound!r}")
        elif int(bound) != bound or bound < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {bound!r}")
    if int(min_leaf_support) != min_leaf_support or min_leaf_support < 1:
        raise ValueError(f"min_leaf_support must be an integer >= 1, got {min_leaf_support!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    lam = None
    if objective == "branches" and not wt.plain:
        raise ValueError(
            "objective='branches' ranks error rate + lambda * splits, unweighted: with sample_weight or costs use "
            "objective='errors' (the set is ranked by the weighted cost)"
        )
    if objective == "branches":
        if sparsity is None:
            raise ValueError("objective='branches' needs sparsity (lambda, the cost of a split in accuracy, e.g. 0.01)")
        lam = _check_lambda(sparsity)
        if max_errors is not None or max_gap is not None:
            raise ValueError("max_errors and max_gap bound errors; with objective='branches' use max_objective_gap")
    elif sparsity is not None or max_objective_gap is not None:
        raise ValueError("sparsity and max_objective_gap go with objective='branches'")
    if max_objective_gap is not None:
        gap_ok = not isinstance(max_objective_gap, bool) and isinstance(max_objective_gap, (int, float))
        if not (gap_ok and np.isfinite(max_objective_gap) and max_objective_gap >= 0):
            raise ValueError(f"max_objective_gap must be a number >= 0, got {max_objective_gap!r}")
    n = X.shape[0]
    obj = None if wt.plain else _Weighted(y, n_classes, wt, X.shape[1])
    wq, wp = _weights(lam, n, K)
    weights = (wq, wp, lam is not None)
    gap_key = None
    if max_errors is not None and obj is not None:
        max_errors = _cost_key(max_errors, obj)
    if max_gap is not None and obj is not None:
        gap_key = _cost_key(max_gap, obj)
    elif max_gap is not None:
        gap_key = int(max_gap)
    elif max_objective_gap is not None:
        # objective <= best + gap in keys, exactly, with the gap's decimal as lambda's (0.03 is 3/100)
        gap_key = min(int(Fraction(repr(float(max_objective_gap))) * wq * n), _INF)
    own = control is None
    if own:
        control = Control().start()
    try:
        return _run(
            X,
            y,
            n_classes,
            depth,
            K,
            int(k),
            max_errors,
            gap_key,
            weights,
            int(min_leaf_support),
            max_bytes,
            control,
            obj,
        )
    finally:
        if own:
            control.stop()


def _cost_key(cost, obj):
    """A cost bound in the kernel's int64 quanta: the most quanta whose cost is at most ``cost`` (exact)."""
    return min(int(Fraction(float(cost)) / Fraction(obj.quantum)), _INF)


def _weights(lam, n, K):
    """Integer weights ``(q, p)`` of the root's key ``q * errors + p * splits``: ``(1, 0)`` for errors; for
    ``errors / n + lam * splits`` the key is the objective times ``q * n``, with ``lam * n = p / q``: ``lam`` is
    the decimal the float prints as (``0.01`` is 1/100, not the binary float's 0.01000000000000000021), or the
    nearest fraction to it whose keys fit in 58 bits when that decimal is longer (``1/3``: 1/3)."""
    if lam is None:
        return 1, 0
    most = max(1, (1 << 58) // ((n + 1) * (K + 1)))  # keys <= q * n * (K + 1) (lam <= 1)
    frac = Fraction(repr(float(lam)))
    if frac.denominator > most:
        frac = frac.limit_denominator(most)
    return frac.denominator, frac.numerator * n


def _run(X, y, n_classes, depth, K, k, max_errors, max_gap, weights, min_leaf, max_bytes, control, obj=None):
    n, f = X.shape
    # weighted: the kernel's "classes" are MurTree's (class, weight) groups, priced by cm (groups x classes)
    y, n_classes, cm = (y, n_classes, _PLAIN) if obj is None else obj.kernel_data(y, n_classes)
    wide = obj is not None
    order = np.argsort(y, kind="stable")  # rows sorted by class: class blocks in every dataset (bitsets)
    XR = np.ascontiguousarray(X[order])
    XT = np.ascontiguousarray(XR.T)
    ys = np.ascontiguousarray(y[order], dtype=np.int64)
    cnt = np.bincount(ys, minlength=n_classes).astype(np.int64)
    sizes = _pool_sizes(n, f, depth, k)
    if wide and max_bytes is not None and _bytes(sizes, n_classes, wide) > max_bytes:
        # each dataset counts its rows per (class, weight) group: many distinct real weights make big pools
        raise ValueError(
            f"rashomon: {n_classes} distinct (class, weight) pairs need {_bytes(sizes, n_classes, wide) / 2**20:.0f} "
            f"MB of pools, more than the memory limit of {max_bytes / 2**20:.0f} MB: round the weights to fewer "
            "distinct values or select fewer tests"
        )
    wq, wp, penalised = weights
    max_key = _INF if max_errors is None else int(max_errors)  # (max_errors goes with the errors objective)
    nodes = 2 * K + 1
    trees: list[RawSolution] = []
    restarts = 0
    complete = False
    stopped_by = None
    bounds = _murtree_bounds(X, y, n_classes, depth, K, min_leaf, control, cm)
    # the kernel writes the trees to ``out`` (row ``t - base`` for tree ``t``); they become solutions in chunks
    out = _out(min(k, _CHUNK), nodes, n_classes)
    base = 0  # trees before ``base`` are solutions already
    have = 0  # trees written
    best = None  # the first tree's key
    control.watch("rashomon", COUNTERS)
    try:
        ws = _fresh(XT, XR, ys, n_classes, depth, K, sizes, min_leaf, control, cnt, bounds, cm)
        if control.stopped:
            ws = None
        done = 0  # trees in order so far
        batch = 1
        while ws is not None and not control.stopped:
            stop = min(k, max(done, have) + batch)
            if stop - base > out[0].shape[0]:
                _collect(out, have - base, trees, best, wq, wp, wq * n if penalised else 0, obj)
                base = have
            t = enumerate_trees(ws, done, stop, have, max_key, wq, wp, *(a[have - base :] for a in out))
            have = max(have, t)
            if have and best is None:  # the first tree is the optimum: the bound is now known
                best = wq * int(out[4][0]) + wp * int(out[5][0])
                if max_gap is not None:
                    max_key = min(max_key, best + int(max_gap))
            done = t
            if ws.status[0]:  # a full pool: it grows, and the run goes on where it stopped (no work redone)
                pool = _POOL_NAMES[int(ws.status[1])]
                sizes[pool] *= 2
                if max_bytes is not None and _bytes(sizes, n_classes, wide) > max_bytes:
                    stopped_by = "memory"  # the trees so far are still the first of the order
                    break
                restarts += 1
                ws = _grow(ws, pool, sizes[pool])
                ws.status[0] = 0
                continue
            complete = bool(ws.status[2])
            if have and control.progress is not None:
                if obj is not None:  # the last tree's cost (its quanta, exactly; or the solution's own)
                    last = float(obj.exact(out[4][have - base - 1])) if have > base else trees[-1].info["cost"]
                    control.report("rashomon", trees=have, cost=last)
                else:
                    last = int(out[4][have - base - 1]) if have > base else trees[-1].info["errors"]
                    control.report("rashomon", trees=have, errors=last)
            if complete or t >= k:
                break
            batch = min(2 * batch, _MAX_BATCH)
    finally:
        control.unwatch()
    _collect(out, have - base, trees, best, wq, wp, wq * n if penalised else 0, obj)
    stats = {
        "complete": complete,
        "memory_bytes": _bytes(sizes, n_classes, wide),
        "restarts": restarts,
        "stopped_by": stopped_by,
        "max_depth": depth,
        "max_nodes": K,
        "k": k,
    }
    if penalised:
        lam = Fraction(wp, wq * n)
        stats["lambda"] = [lam.numerator, lam.denominator]  # lambda as ranked, exactly
    name = OBJECTIVE_BRANCHES if penalised else "misclassifications" if obj is None else obj.name
    return RawFront(trees, name, control.status(), stats)


OBJECTIVE_BRANCHES = "error rate + lambda * splits"


def _murtree_bounds(X, y, n_classes, depth, K, min_leaf, control, cm=_PLAIN):
    """MurTree's cache after solving the root (depth ``depth``, ``K`` splits): the optimum and bounds of the
    subproblems it visited, which the enumeration's streams start from (SORTD's first phase).  Depths <= 2
    are counted exactly by the enumeration and need none.  With a weighted ``cm`` (``y`` the rows' groups) the
    cache holds int64 costs in the same quanta.  Returns (z1, z2, keys, vals)."""
    if depth <= 2 or K == 0:
        empty = np.zeros(X.shape[0], dtype=np.uint64)
        # MurTree's layout: the kernels keep one signature at every depth (int64 costs when weighted)
        return empty, empty, *empty_cache(1, np.int32 if cm.ndim == 1 else np.int64)
    control.watch("murtree", MURTREE_COUNTERS)
    try:
        ws, h1, h2 = _murtree_workspace(X, y, n_classes, depth, K, min_leaf, control, _CACHE_BITS, cm)
        best = _solve_budget(ws, X.shape[0], h1, h2, depth, K, _INF)  # a stop is seen by the caller (control.stopped)
        # at depth >= 4, as MurTree's single optimum: the fewest splits reaching it (binary search, bounded by
        # the optimum).  Its bounds on smaller budgets keep the enumeration off them: on mushroom the optimum is
        # a perfect tree, every other bound is 0, and without them the search opened every subproblem of every
        # small budget before the first tree (none in 14 s CPU, now the first at MurTree's time).  At depth 3
        # the enumeration's own depth-2 counts settle small budgets cheaply: one solve.
        lo, hi = 0, K
        while depth >= 4 and best >= 0 and hi - lo > 1:
            mid = (lo + hi) // 2
            err = _solve_budget(ws, X.shape[0], h1, h2, depth, mid, best)
            if err < 0:
                break
            if err <= best:
                hi = mid
            else:
                lo = mid
    finally:
        control.unwatch()
    return ws.z1, ws.z2, ws.keys, ws.vals


_GROWN = {  # the workspace's arrays of each pool
    "datasets": ("ds_i", "ds_cnt", "ds_h"),
    "rows": ("rows",),
    "tables": ("ipool",),
    "streams": ("st_i",),
    "trees": ("sol",),
    "heap": ("heap",),
    "candidates": ("cand",),
    "lists": ("lst", "lcnt"),
}


def _grow(ws, pool, size):
    """The workspace with the arrays of ``pool`` grown to ``size`` rows, their content kept."""
    new = {}
    for name in _GROWN[pool]:
        old = getattr(ws, name)
        arr = np.empty((size, *old.shape[1:]), dtype=old.dtype)
        arr[: old.shape[0]] = old
        new[name] = arr
    return ws._replace(**new)


def _fresh(XT, XR, ys, n_classes, depth, K, sizes, min_leaf, control, cnt, bounds, cm=_PLAIN):
    while True:
        ws = _workspace(XT, XR, ys, n_classes, depth, K, sizes, min_leaf, control, bounds, cm)
        if init_root(ws, depth, K, cnt):
            return ws
        sizes[_POOL_NAMES[int(ws.status[1])]] *= 4


def _out(m, nodes, n_classes):
    """Rows for a batch of ``m`` trees: (feature, left, right, value, errors, splits); the kernel writes every
    node of a tree and ``feature = -2`` past its last."""
    return (
        np.empty((m, nodes), dtype=np.int64),
        np.empty((m, nodes), dtype=np.int64),
        np.empty((m, nodes), dtype=np.int64),
        np.empty((m, nodes, n_classes), dtype=np.int64),
        np.empty(m, dtype=np.int64),
        np.empty(m, dtype=np.int64),
    )


def _collect(out, m, trees, best, wq=1, wp=0, scale=0, obj=None):
    """Append the first ``m`` trees of ``out`` as solutions (``optimal`` when their key is ``best``, the first
    tree's).  Weighted (``obj``): each tree's group counts become class counts with least-cost predictions, and
    its info gets ``cost`` (recomputed with the given weights) and ``errors`` (misclassified rows), as MurTree's.
    Trees of one node count are copied out at once (``out`` is reused) and split into per-tree row
    views: no per-node work in Python, and each tree's arrays are contiguous int64 of the right shapes, so
    RawTree's checks and copies are skipped."""
    feat, left, right, value, err, splits = out
    if m <= 0:
        return
    nns = (feat[:m] != -2).sum(axis=1)
    made = [None] * m
    new = RawTree.__new__
    facts = [None] * m
    for nn in np.unique(nns).tolist():
        idx = np.flatnonzero(nns == nn)
        val = value[idx, :nn]
        if obj is None:
            pred = val.argmax(axis=2)  # the majority class, lowest on ties (as RawTree's default)
        else:  # group counts to class counts, least-cost predictions, each tree's errors and cost
            val, pred, errors, total = obj.batch(val, feat[idx, :nn] == -1)
            for r, e, c in zip(idx.tolist(), errors.tolist(), total.tolist()):
                facts[r] = (e, c)
        half = np.full(nn, 0.5)
        rows = zip(idx.tolist(), feat[idx, :nn], left[idx, :nn], right[idx, :nn], val, pred)
        for r, f, lo, hi, v, p in rows:
            tree = new(RawTree)
            tree.feature, tree.threshold, tree.left, tree.right, tree.value, tree.prediction = f, half, lo, hi, v, p
            tree.multi_offsets = tree.multi_children = tree.multi_tests = None
            made[r] = tree
    opt = (wq * err[:m] + wp * splits[:m] == best).tolist()
    rank = len(trees)
    add = trees.append
    for tree, e, s, o, fc in zip(made, err[:m].tolist(), splits[:m].tolist(), opt, facts):
        if fc is not None:  # weighted: misclassified rows and the cost, as MurTree's solutions say them
            add(RawSolution(tree, o, {"rank": rank, "errors": fc[0], "cost": fc[1], "splits": s}))
            rank += 1
            continue
        info = {"rank": rank, "errors": e, "splits": s}
        if scale:  # the float nearest the exact objective (key / (q * n)): equal objectives, equal floats
            info["objective"] = float(Fraction(wq * e + wp * s, scale))
        add(RawSolution(tree, o, info))
        rank += 1
