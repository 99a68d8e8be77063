"""ConTree: proven optimal classification trees on raw numeric features (Briţa, van der Linden, Demirović, 2025).

No discretizer: every threshold between two consecutive distinct values of a column is a candidate, and
a split reads ``x <= t`` with ``t`` the midpoint of the two values, as in our CART.  The search is a
dynamic program over (rows, remaining depth) with branch-and-bound over each feature's thresholds, a
specialised depth-two sweep and a cache of solved subproblems (see ``_kernels/contree.py``).

Objectives
----------
* ``front=True`` (default): in one run, the fewest errors for every number of splits ``0 .. K``
  (``K = max_nodes``, at most ``2**max_depth - 1``): each node's DP value is a vector over budgets.
  One tree per point of the exact error-vs-splits front, as MurTree gives on binary tests.
* ``front=False``: one tree with the fewest errors at depth ``max_depth`` (any number of splits; faster,
  what ConTree itself returns).
* ``sparsity=λ``: the tree minimising ``errors / n + λ · splits``, picked exactly from the front.

Anytime: at depth >= 4 a single-tree search that has not finished within a short effort (``_EXACT_FIRST_*``) is
paused for limited-discrepancy passes (after Kiossou, Schaus and Nijssen's anytime ConTree, 2026; the whole front
runs them first): the nodes of depth >= 3 try only their features' Gini splits, a few at a time, and the depth-two
nodes are solved exactly, so within a fraction of a second there is a tree balanced over the whole depth, which the
exact search then has to beat (its cost is the search's starting cut-off when it resumes).  The exact
search tries the greedy (Gini) split first at every node.  A run stopped by the time limit or a cancel returns the
best tree of either phase, and the proven lower bound of every budget (``stats["lower_bounds"]``,
``info["lower_bound"]``; the passes prove nothing): the gap of a stopped run is known.  At depth >= 4 a run with a
time limit that is still searching at a quarter of it spends a share of the limit on a bound for every root
feature (``_bounds``): the exact search bounds nothing about the features it has not reached, and at depth 4 it
reaches few; the larger of the two bounds is reported.

Missing values (NaN in ``X``, issue 49)
---------------------------------------
Every split is (feature, threshold over the node's present values, side of the rows missing that feature): the rows
of a node whose feature is NaN form one block that goes left (``missing_left = 1``) or right (0), both tried.  A
feature with gaps at a node also offers "present vs missing": threshold at the node's largest present value, every
present row left, the missing ones right (``missing_left = 0``; future rows above that value go right with them).
Where the node's rows have no gap in the chosen feature ``missing_left`` is 0.  Every tree of a run on NaN input has
``missing_left`` (None on complete data).  NaN input takes the cost search (``_kernels/contree_weighted.py``, one
thread: ``n_threads`` is not used), with unit costs for the plain objective (reported in errors as here, the same
front) and with ``sample_weight``/``costs`` as given.  Its neighbour bound holds with gaps (only present rows move
as a threshold moves; the missing block stays on its side); the plain search's bounds (similarity, depth-two
sweeps, seeds, the root bound pass) are not used.  A stopped run returns its best trees so far, not proven, with
only the rows alike in every feature (NaN pattern included) as a lower bound.  Complete data take the plain search,
unchanged.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numba
import numpy as np

from . import predict_raw
from ._base import Control, RawFront, RawSolution, RawTree, check_xy
from ._kernels.contree import STACK, build, cache_rehash, kvec, root_block, solve
from ._kernels.contree_weighted import STACK as _W_STACK
from ._kernels.contree_weighted import wrehash, wsolve
from ._kernels.predict import apply_tree
from ._objective import leaf_prediction, tree_cost, weighted
from .murtree import _alpha_choice, hull_flags

__all__ = ["contree", "COUNTERS", "expected_peak", "memory_estimate"]

COUNTERS = ("root_splits", "subproblems", "cache_entries", "splits_evaluated", "best_errors")
_MAX_DEPTH = 8
_CACHE_BITS = 12
# Pass upper bounds down as cut-offs (0 off; 1 plain; 2 plus the distance from the split to its interval's far
# end, as ConTree does, so a child stopped at its cut-off still prunes the whole interval; 3 that distance for
# the second child only, as ConTree).  Plain cut-offs evaluated 7-20x more splits (weak neighbour bounds); with
# ``_SIBLING_H`` 3 is the fastest for one tree (the first child's tight cut-off, the second's loose one); the
# whole front keeps 2 (3 was 2.6x slower on bank at depth 4).
_CUTS = 3
_CUTS_FRONT = 2
# Solve the larger child of a split first (else the left one): measured slower on the Quant-BnB sets at depth 3.
_LARGER_FIRST = 0
# Bound the unsolved sibling by the interval's anchors when deciding whether to solve it: sets more splits aside
# with inexact bounds, which then prune their neighbours less (measured slower overall), so off.
_ANCHOR_SIBLING = 0
# Depth-two nodes pass their upper bound into the children's stump sweeps (0 off, 1 plus the distance to the
# interval's far end so a capped split still prunes its interval, 2 without that distance).
_D2_CAP = 1
# Search the features in order of their best Gini split (1), else the greedy feature first, then by index (0).
_GINI_ORDER = 1
# Seed every feature with one split (its best Gini position) before any feature's interval search: a stopped
# run's lower bound then covers every feature (else the features not started bound nothing); 2: at the root only.
_SEED_PASS = 1
# Splits per feature in the root's seed pass: the Gini one, then the midpoint of its wider half.  A stopped root's
# lower bound is the least over its open intervals; with one seed the wide side's bound is the small anchor child.
_ROOT_SEEDS = 2
# At depth >= ``_SEED_LAZY_DEPTH`` the root seeds lazily: its interval searches start at once, and the seed pass
# runs (the feature being searched paused) only after ``_SEED_AFTER_SPLITS`` splits (a few CPU seconds), so a run
# short enough never to be stopped pays nothing for it (bank at depth 4: 0.08 -> 0.03 s; wilt, bidding, occupancy
# within 5 %; a pause after 20,000 splits made occupancy 20 % slower) while a long one still bounds every feature.
# Shallower, the root's seeds are cheap and their incumbent prunes: lazy seeding was 1.3-5x slower at depth 3
# (bank, occupancy, segment, bidding).  ``_SEED_AFTER_SPLITS`` 0: always seed first.
_SEED_AFTER_SPLITS = 100000
_SEED_LAZY_DEPTH = 4
# With a time limit the lazy root also seeds once ``_SEED_SHARE`` of it has passed (wall clock), whatever the number
# of splits: at depth 4 a root split solves two depth-3 children, so 100,000 splits could take most of a 10 s limit
# on a loaded machine and a stopped run then had no bound on the features not started (lower bound 0).
_SEED_SHARE = 0.25
# Tests only: raise the time-limit flag once this many splits have been evaluated (0: never), so a stopped run's
# bounds are reproducible.
_STOP_AFTER_SPLITS = 0
# Solve a split's second child unless the first child's bound proves the whole interval useless (1, as ConTree),
# else (0) set it aside as soon as this one split is proven useless.  Setting aside leaves the split with the
# sibling's weak anchor bound, so its neighbours are pruned less: on wilt at depth 4, 0 evaluated 6x more splits.
# One tree only: the whole front (a bound per budget) solved 4.6x more subproblems with it on bank at depth 4.
_SIBLING_H = 1
# Limited-discrepancy passes before the exact search at depth >= ``_LDS_DEPTH`` (``_lds``), for at most
# ``_LDS_SHARE`` of the time limit (``_LDS_SECONDS`` without one) and at most the discrepancy that covers every
# combination of its candidates.
_LDS_DEPTH = 4
_LDS_SHARE = 0.2
_LDS_SECONDS = 5.0
# The passes start only if the exact search has not finished within ``_EXACT_FIRST_SHARE`` of the time limit, at
# most ``_EXACT_FIRST_SECONDS`` (CPU seconds of this process; that cap without a limit): the search is then paused
# (unwound as for a full cache table, its solved subproblems kept in the cache), the passes run and the search
# starts again with their cost as its cut-off.  A short run pays nothing for passes it does not need (bank at
# depth 4: the passes were a third of its time, their tree 5 errors where the optimum is a perfect tree).
# ``_EXACT_FIRST_SPLITS`` > 0 (tests): pause after that many splits instead, reproducibly.
_EXACT_FIRST_SHARE = 0.05
_EXACT_FIRST_SECONDS = 2.0
_EXACT_FIRST_SPLITS = 0
# Whole front: budget 2 of a node of depth >= 3 solved first as the depth-two node over its rows (exact, one
# depth-two search per node), so that budget 2 no longer keeps the node's splits from being pruned.
_B2_FIRST = 1
# Root bounds for a stopped run (``_bounds``): at depth >= ``_BOUND_DEPTH``, with a time limit, once ``_BOUND_AT`` of
# it has passed with the exact search still running, up to ``_BOUND_SHARE`` of the limit (wall) goes to proving a
# lower bound on every root split.  Each feature's sorted rows are cut into blocks, each solved at the children's
# depth to a small, doubling cut-off; a split's child on that feature contains the blocks on its side and optima add
# up over disjoint rows.  A block holds about ``_BOUND_BLOCK_ERRORS`` of the incumbent's errors (at least
# ``_BOUND_BLOCK_ROWS`` rows, at most ``_BOUND_BLOCKS_MAX`` blocks): a block with fewer is often fitted perfectly
# (raisin: 3 of 16 blocks of 45 rows had an error), a larger one costs more for the same proof (fault: 0.03 CPU s
# for "no perfect depth-3 tree" on 48 rows, 0.12 s on 194).  Once a feature's blocks are settled, neighbouring ones
# are merged (halving the count down to 2): larger blocks give larger bounds at a higher cost.  The exact search proves
# nothing about a feature it has not started, and at depth 4 starting them all (two exact depth-3 children each)
# took longer than a 60 s limit on segment, rice, page and fault.
_BOUND_DEPTH = 4
_BOUND_AT = 0.25
_BOUND_SHARE = 0.4
_BOUND_BLOCK_ERRORS = 6
_BOUND_BLOCK_ROWS = 16
_BOUND_BLOCKS_MAX = 64
# The pass starts from the errors every tree makes (rows alike in every feature, classes differing: page has 7), on
# tables of at most this many cells (sorting the rows takes ~0.1 s per million cells).
_BOUND_CONFLICT_CELLS = 4_000_000
# Cells sorted between two polls of the control while the sorted row lists are built (~0.1 s a block)
_PREP_CELLS = 1 << 21
# Workspace fields holding a sorted row list per level (S, SR, SY)
_LISTS = (4, 20, 21)


def memory_estimate(n_rows: int, n_features: int, max_depth: int, n_classes: int = 2) -> int:
    """Bytes of the fixed buffers: one sorted row list per feature and depth level, plus scratch."""
    levels = max_depth + 1
    kb = (1 << max_depth) + 1
    return (
        3 * levels * n_features * n_rows * 4
        + 2 * n_features * n_rows * 4
        + levels * (2 * n_rows * 8 + (STACK + 2 * n_features) * (4 + 4 * kb) * 8)
    )


# Share of a deeper level's sorted lists a run touches: a level holds one node's rows at a time (written from the
# start of each list), the largest node it ever held sets its resident pages.  Measured on magic and room at depths
# 2-4 with 2 threads: 0-0.99 of the rows per level, 0.45-0.75 a run (a stopped run touches less).
_DEEP_LEVEL_SHARE = 0.5


def expected_peak(n_rows: int, n_features: int, max_depth: int, n_classes: int = 2, threads: int = 1) -> int:
    """Bytes a run is expected to hold at its peak (the API's estimate before a run, unlike the bound
    :func:`memory_estimate`): the larger of building the first sorted lists (level 0, the ranks and one block
    of sort temporaries) and the search (every thread's level 0, its deeper levels as far as they are usually
    touched, its scratch and first cache; the shared ranks; the transposed matrix of the rebuild)."""
    n, p, levels = int(n_rows), int(n_features), max_depth + 1
    cells = n * p
    kb = (1 << max_depth) + 1
    level = 12 * cells  # S, SR, SY: int32
    scratch = levels * (2 * n * 8 + (STACK + (1 + _ROOT_SEEDS) * p) * (4 + 4 * kb) * 8)
    shared = 4 * cells + 25 * n  # ranks; labels, hash keys, marks
    block = min(cells, max(n, _PREP_CELLS))  # cells sorted at once, ~36 bytes each in temporaries
    prep = shared + level + 36 * block
    per_thread = level * (1 + _DEEP_LEVEL_SHARE * max_depth) + scratch + (1 << _CACHE_BITS) * _entry_bytes(kb)
    search = shared + threads * per_thread + 8 * cells
    return int(max(prep, search))


def _entry_bytes(kb: int) -> int:
    return 3 * 8 + 5 * kb * 4 + 1


def _sorted_block(X, lo, hi):
    """Columns ``lo:hi`` of ``X``: each one's stable row order and the dense ranks of its values in that order."""
    xb = np.ascontiguousarray(X[:, lo:hi].T)
    order = np.argsort(xb, axis=1, kind="stable")
    sv = np.take_along_axis(xb, order, axis=1)
    fresh = np.ones(order.shape, dtype=np.int32)
    fresh[:, 0] = 0
    np.not_equal(sv[:, 1:], sv[:, :-1], out=fresh[:, 1:], casting="unsafe")
    return order, np.cumsum(fresh, axis=1, dtype=np.int32)


def _workspace(X, y, n_classes, depth, kcap, single, control, cache_bits, threads=1, claim=None):
    n, p = X.shape
    levels = depth + 1
    RK = np.empty((p, n), dtype=np.int32)
    S = np.empty((levels, p, n), dtype=np.int32)
    SR = np.empty((levels, p, n), dtype=np.int32)  # ranks and labels in each list's order (read sequentially)
    SY = np.empty((levels, p, n), dtype=np.int32)
    # one stable sort per column gives both the order and the dense ranks of the distinct values; by blocks of
    # columns (transposed: each sort reads contiguous values), polling the control between blocks: on a wide
    # table (an exact discretizer's thousands of tests) this phase alone takes seconds
    yy = np.ascontiguousarray(y, dtype=np.int32)
    step = max(1, _PREP_CELLS // max(n, 1))
    for lo in range(0, p, step):
        if control.stopped:
            return None, 0
        hi = min(p, lo + step)
        order, ranks = _sorted_block(X, lo, hi)
        S[0, lo:hi] = order
        SR[0, lo:hi] = ranks
        np.put_along_axis(RK[lo:hi], order, ranks, axis=1)
        SY[0, lo:hi] = yy[order]
    rng = np.random.default_rng(0x636F6E)
    z1 = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)
    z2 = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)
    kb = kvec(depth, single, kcap) + 1
    cap = 1 << cache_bits
    ws = [
        RK,
        np.ascontiguousarray(y, dtype=np.int64),
        z1,
        z2,
        S,
        np.zeros(n, dtype=np.uint8),
        np.zeros((cap, 3), dtype=np.uint64),
        np.zeros((cap, 5, kb), dtype=np.int32),
        np.zeros(cap, dtype=np.uint8),
        np.zeros(3, dtype=np.int64),
        control.flag,
        control.counters,
        np.array(
            [
                1 if single else 0,
                kcap,
                1,
                _CUTS if single else _CUTS_FRONT,
                _LARGER_FIRST,
                _ANCHOR_SIBLING,
                _D2_CAP,
                _GINI_ORDER,
                _SEED_PASS,
                threads,
                _STOP_AFTER_SPLITS,
                _ROOT_SEEDS,
                _SIBLING_H if single else 0,
                _SEED_AFTER_SPLITS if depth >= _SEED_LAZY_DEPTH else 0,
                -1,  # a limited-discrepancy pass's discrepancy (set by ``_lds``)
                0,  # pause the exact search after this many splits (tests; set by ``_run``)
                _B2_FIRST,
            ],
            dtype=np.int64,
        ),
        np.zeros((levels, 14, kb), dtype=np.int64),
        np.zeros((levels, 3, kb), dtype=np.int64),
        np.zeros((levels, STACK, 4 + 4 * kb), dtype=np.int64),
        np.zeros((levels, n), dtype=np.int64),
        np.zeros((levels, n), dtype=np.int64),
        np.zeros((levels, 5, n_classes), dtype=np.int64),
        np.zeros((levels, 4), dtype=np.int64),
        SR,
        SY,
        np.zeros((levels, p, 1 + max(1, _ROOT_SEEDS), 4 + 4 * kb), dtype=np.int64),
        np.zeros((levels, p), dtype=np.int64),
        np.zeros(1, dtype=np.int64) if claim is None else claim,
        np.zeros((STACK, 4 + 4 * kb), dtype=np.int64),  # a lazy root's paused feature: its open intervals
    ]
    return ws, kb


def _thread_copy(ws, threads, claim, control):
    """A second workspace over the same rows: the sorted level-0 lists copied, every buffer and cache its own.

    The ranks (read only) are shared and the deeper levels' lists start empty (written before they are read):
    copying all of them took seconds on wide tables, outside any poll of the time limit."""
    out = [a.copy() if isinstance(a, np.ndarray) and i not in (0, *_LISTS) else a for i, a in enumerate(ws)]
    for i in _LISTS:
        if control.stopped:
            return None
        out[i] = np.zeros(ws[i].shape, dtype=ws[i].dtype)  # pages untouched until the search writes them
        out[i][0] = ws[i][0]
    out[6][:] = 0  # empty cache
    out[8][:] = 0
    out[9][:] = 0
    out[10] = ws[10]  # the control's stop flag and counters are shared
    out[11] = ws[11]
    out[12][9] = threads
    out[24] = claim
    ws[12][9] = threads
    ws[24] = claim
    return out


def _grow(ws, max_bytes, fixed):
    keys, vals, cex = ws[6], ws[7], ws[8]
    cap = keys.shape[0] * 4
    if fixed + cap * _entry_bytes(vals.shape[2]) > max_bytes:
        ws[12][2] = 0  # at the memory limit: keep solving, stop adding cache entries
        return False
    nk = np.zeros((cap, 3), dtype=np.uint64)
    nv = np.zeros((cap, 5, vals.shape[2]), dtype=np.int32)
    nc = np.zeros(cap, dtype=np.uint8)
    cache_rehash(keys, vals, cex, nk, nv, nc)
    ws[6], ws[7], ws[8] = nk, nv, nc
    return True


def warm_growth():
    """Compile the kernels only some runs reach (see ``murtree.warm_growth``): the cache's rehash (a run that fills
    its table) and the bound pass's ``root_block`` (a time-limited run still searching at ``_BOUND_AT``), so that
    neither compiles inside a user's time limit."""
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 1, 0, 1])
    with Control() as control:
        ws, _ = _workspace(X, y, 2, 2, 3, True, control, 4)
        root_block(tuple(ws), 4, 0, 1, 3)
    cache_rehash(
        np.zeros((1, 3), dtype=np.uint64),
        np.zeros((1, 5, 2), dtype=np.int32),
        np.zeros(1, dtype=np.uint8),
        np.zeros((4, 3), dtype=np.uint64),
        np.zeros((4, 5, 2), dtype=np.int32),
        np.zeros(4, dtype=np.uint8),
    )


def contree(
    X,
    y,
    n_classes: int | None = None,
    *,
    max_depth: int = 3,
    max_nodes: int | None = None,
    sparsity: float | None = None,
    front: bool = True,
    max_memory_mb: float = 2048,
    n_threads: int | None = None,
    control: Control | None = None,
    sample_weight=None,
    costs=None,
) -> RawFront:
    """Optimal classification trees on raw numeric features: the error-vs-splits front or one tree.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Numeric features (float64; one-hot categoricals as 0/1 columns).  Every midpoint between two
        consecutive distinct values of a column is a candidate threshold.  NaN is a missing value (see the module
        docstring: each split also chooses the side of the missing rows); infinities are refused.
    y : array-like of shape (n,)
        Class indices ``0..n_classes-1``.
    n_classes : int, optional
        Number of classes (default ``max(y) + 1``).
    max_depth : int
        Depth limit ``D`` (0..8; depth 4 on thousands of rows takes minutes, use a time limit).
    max_nodes : int or None
        Most splits ``K`` (default and maximum ``2**D - 1``); the front covers ``0..K``.
    sparsity : float or None
        Return only the tree minimising ``errors / n + sparsity * splits`` (exact rational comparison;
        ties go to fewer splits).
    front : bool
        True: one tree per point of the exact front.  False: one tree with the fewest errors (its number
        of splits is not minimised).
    max_memory_mb : float
        Memory guard: the row buffers must fit (else ``MemoryError`` naming what to lower) and the cache
        of solved subproblems stops growing at this size (the search goes on, slower).
    n_threads : int or None
        Threads sharing the root's features (default: numba's thread count, 1 inside sweep workers); each
        has its own row buffers and cache, and they share their best costs to prune.  With several threads
        the errors are the same, but which of several equally good trees is returned can differ from run
        to run; ``n_threads=1`` is deterministic.
    control : Control, optional
        Time limit / cancel / progress (counters: root splits evaluated, subproblems, cache entries,
        splits evaluated, best errors so far at the root).
    sample_weight : ndarray of float64 (n,), optional
        Row weights (finite, >= 0; validated upstream).  With ``costs``, the objective becomes the weighted cost
        ``sum_i w[i] * costs[y[i], yhat[i]]`` (``solvers._objective``), minimised exactly by a kernel of its own
        (one thread; the plain search is unchanged).  ``objective="cost"``, ``info["cost"]`` per tree, the
        bounds in cost; ``sparsity`` weighs ``cost / sum(w)``.  A stopped weighted run's lower bound is only
        the cost of rows alike in every feature.
    costs : ndarray of float64 (k, k), optional
        ``costs[true, predicted]`` (finite, >= 0); default 0 on the diagonal, 1 elsewhere.

    Returns
    -------
    RawFront
        ``objective="misclassifications"``.  ``info`` per tree: ``budget``, ``errors``, ``splits``,
        ``lower_bound`` (proven lower bound of the errors with at most ``budget`` splits); with the
        front: ``on_hull`` and the ``alpha`` interval; with ``sparsity``: ``objective``.  ``stats``:
        ``lower_bound`` and ``upper_bound`` of the root (full budget), ``lower_bounds`` per budget.
        A tree is ``optimal`` only when its bound is proven (always, unless the run was stopped).
    """
    X, y, n_classes = check_xy(X, y, n_classes, allow_missing=True)
    missing = bool(np.isnan(X).any())
    if isinstance(max_depth, bool) or int(max_depth) != max_depth or not 0 <= max_depth <= _MAX_DEPTH:
        raise ValueError(f"max_depth must be an integer in 0..{_MAX_DEPTH}, got {max_depth!r}")
    depth = int(max_depth)
    full = (1 << depth) - 1
    if max_nodes is None:
        budget = full
    elif isinstance(max_nodes, bool) or int(max_nodes) != max_nodes or max_nodes < 0:
        raise ValueError(f"max_nodes must be a non-negative integer, got {max_nodes!r}")
    else:
        budget = min(int(max_nodes), full)
    if sparsity is not None and not (np.isfinite(sparsity) and sparsity >= 0):
        raise ValueError(f"sparsity must be a finite number >= 0, got {sparsity!r}")
    if not (max_memory_mb > 0):
        raise ValueError(f"max_memory_mb must be positive, got {max_memory_mb!r}")
    if n_threads is not None and (isinstance(n_threads, bool) or int(n_threads) != n_threads or n_threads < 1):
        raise ValueError(f"n_threads must be a positive integer, got {n_threads!r}")
    threads = numba.get_num_threads() if n_threads is None else int(n_threads)
    n, p = X.shape
    need = memory_estimate(n, p, depth, n_classes)
    # each thread has its own buffers: fewer threads rather than a refusal when only one fits
    threads = max(1, min(threads, int(max_memory_mb * 2**20 // max(need, 1))))
    if need > max_memory_mb * 2**20:
        raise MemoryError(
            f"contree needs about {need / 2**20:.0f} MB for {n} rows x {p} features at max_depth={depth} "
            f"(over max_memory_mb={max_memory_mb:g}); lower max_depth, use fewer rows or columns, "
            "or raise max_memory_mb"
        )
    single = not front and sparsity is None and max_nodes is None
    wt = weighted(sample_weight, costs, y, n_classes)
    own = control is None
    if own:
        control = Control().start()
    try:
        if missing or not wt.plain:
            # NaN: the cost search, which also searches the side of the missing rows (``_kernels/contree_weighted``)
            raw = _run_weighted(
                X, y, n_classes, depth, budget, single, sparsity, front, max_memory_mb * 2**20, control, wt, missing
            )
            return _as_errors(raw) if wt.plain else raw
        return _run(
            X, y, n_classes, depth, budget, single, sparsity, front, max_memory_mb * 2**20, need, control, threads
        )
    finally:
        if own:
            control.stop()


def _run(X, y, n_classes, depth, budget, single, sparsity, front, max_bytes, fixed, control, threads):
    n, p = X.shape
    leaf_counts = np.bincount(y, minlength=n_classes)
    if budget == 0 or depth == 0 or p == 0:
        sol = RawSolution(RawTree.leaf(leaf_counts), True, _info(0, int(n - leaf_counts.max()), 0))
        return RawFront([sol], "misclassifications", control.status(), {"max_depth": depth, "max_nodes": budget})
    # several threads only where the root has features to share and children deep enough to be worth it
    threads = max(1, min(threads, p)) if depth >= 2 else 1
    claim = np.zeros(1, dtype=np.int64)
    ws0, kb = _workspace(X, y, n_classes, depth, budget, single, control, _CACHE_BITS, threads, claim)
    wss = [ws0]
    while ws0 is not None and len(wss) < threads and wss[-1] is not None:
        wss.append(_thread_copy(ws0, threads, claim, control))
    if ws0 is None or wss[-1] is None:  # stopped while the row lists were built: the leaf is the best so far
        err = int(n - leaf_counts.max())
        sol = RawSolution(RawTree.leaf(leaf_counts), False, _info(0, err, 0, 0))
        stats = {"max_depth": depth, "max_nodes": budget, "lower_bound": 0, "upper_bound": err, "proven": False}
        stats["notices"] = ["contree was stopped (time limit or cancel) while sorting the columns: a single leaf"]
        return RawFront([sol], "misclassifications", control.status(), stats)
    ubs = np.zeros((threads, kb), dtype=np.int64)
    lbs = np.zeros((threads, kb), dtype=np.int64)
    codes = [0] * threads
    control.watch("contree", COUNTERS)
    control.counters[4] = n - leaf_counts.max()
    restarts = 0
    XT = np.ascontiguousarray(X.T)
    kd = kb - 1
    inc = {}
    inc_err = np.full(kb, 1 << 40, dtype=np.int64)

    def one(t, cut):
        codes[t] = solve(tuple(wss[t]), 0, n, depth, cut, ubs[t], lbs[t], False, -1)

    def passes():
        inc.update(_lds(ws0, X, XT, y, depth, kb, n_classes, control, max_bytes / threads, fixed))
        for b, (err, _) in inc.items():
            inc_err[b] = err
        if inc:
            control.counters[4] = min(int(control.counters[4]), int(inc_err[kd]))

    # at depth >= _LDS_DEPTH, one tree: the exact search first, the limited-discrepancy passes only if it is paused
    # unfinished.  The whole front runs them first: their incumbent per budget prunes the search of every budget
    # (bank at depth 4: 405,404 splits against 483,472 paused after 2 s and 494,691 without passes).
    pause = None
    fb = None  # the root bound pass's bounds per feature and budget (``_bounds``)
    if depth >= _LDS_DEPTH:
        if single:
            pause = _Pause(wss, control)
        else:
            passes()
    bcall = None
    if depth >= _BOUND_DEPTH and control.time_limit is not None and _BOUND_SHARE > 0:
        bcall = _BoundCall(wss, control)
    seeder = None
    if depth >= _SEED_LAZY_DEPTH and control.time_limit is not None and _SEED_AFTER_SPLITS > 0:
        wait = _SEED_SHARE * control.time_limit - control.elapsed
        if wait <= 0:
            _seed_now(wss)
        else:
            seeder = threading.Timer(wait, _seed_now, (wss,))
            seeder.daemon = True
            seeder.start()
    try:
        while True:
            for ws in wss:
                ws[9][1] = 0
            claim[0] = 0
            cut = inc_err.copy()  # the threads' best costs so far (from the incumbent on), shared
            if bcall is not None and fb is None and bcall.enter():
                if pause is not None:  # not paused for the passes yet: they run now, with the bounds
                    pause.end()
                    pause = None
                    for ws in wss:
                        ws[9][1] = 0
                    passes()
                best_err = int(min(inc_err[kd], control.counters[4]))
                fb = _bounds(ws0, n, depth, kb, control, best_err, max_bytes / threads, fixed)
                bcall.enter()
            if threads == 1:
                one(0, cut)
            else:  # the kernel releases the GIL (nogil): the threads run in parallel
                with ThreadPoolExecutor(threads - 1) as pool:
                    futs = [pool.submit(one, t, cut) for t in range(1, threads)]
                    one(0, cut)
                    for fut in futs:
                        fut.result()
            paused = False
            if pause is not None:
                paused = pause.end() and not all(codes)  # a pause after the search finished changed nothing
            lds_paused = paused
            if bcall is not None and bcall.leave() and fb is None and not all(codes):
                paused = True  # paused for the root bounds: they run at the top of the loop
            full = [ws for ws in wss if ws[9][1] == 1]
            for ws in wss:
                ws[9][1] = 0
            if pause is not None and not paused and full:
                pause.resume()  # a full cache table restarts the search: the effort goes on
            else:
                pause = None
            if paused:
                if control.stopped:
                    break
                for ws in full:
                    _grow(ws, max_bytes / threads, fixed)
                if lds_paused:
                    passes()
                continue
            if not full:
                break
            restarts += 1
            for ws in full:
                _grow(ws, max_bytes / threads, fixed)
    finally:
        if seeder is not None:
            seeder.cancel()
        if bcall is not None:
            bcall.cancel()
            for ws in wss:
                if ws[9][1] == 2:
                    ws[9][1] = 0
        if pause is not None:
            pause.end()
            for ws in wss:
                if ws[9][1] == 2:
                    ws[9][1] = 0
        control.unwatch()
    for ws in wss:
        ws[12][9] = 1  # rebuilding a tree re-solves alone (normally from the cache)
    ub = ubs.min(axis=0)
    lb = lbs.min(axis=0)
    if fb is not None:
        # two proven bounds of the same optima (the exact search's and the bound pass's): the larger holds
        rb = np.minimum(fb.min(axis=0), int(n - leaf_counts.max()))
        lb[1:] = np.maximum(lb[1:], rb[1:])
    exact = all(codes)
    # the search pruned with the incumbent's costs as cut-offs: where it found nothing better, the incumbent's tree
    # is the best known, proven when the search's lower bound reaches it
    best = np.minimum(ub, inc_err)
    budgets = [kd] if single else [b for b in range(kd + 1) if b == 0 or best[b] < best[b - 1]]
    found = []
    for b in budgets:
        err, tree = inc.get(b, (1 << 40, None))
        if ub[b] < err:
            # the tree comes from the (first) thread that found the best cost: its workspace holds the choices.  A
            # stopped run rebuilds only what its cache holds, so the tree can be worse than the cost recorded.
            owner = wss[int(np.argmin(ubs[:, b]))]
            t2, e2 = _tree_err(owner, XT, X, y, depth, b, n_classes)
            if e2 < err:
                err, tree = e2, t2
        proven = bool(lb[b] >= err)
        found.append((err, tree.n_splits, tree, proven, b))
    # a stopped run can rebuild a tree slightly better than its bound said: keep the front strictly decreasing
    front_pts = _strict_front(found)
    sols = _solutions(front_pts, n, lb, single, sparsity, front)
    # the upper bounds reported are the errors of trees returned (a stopped run's rebuilt tree can differ from
    # the cost its search recorded)
    # (in single-tree mode index 1 means any number of splits)
    ub = [
        min([f[0] for f in found if f[1] <= b or (single and b >= 1)] or [int(n - leaf_counts.max())])
        for b in range(kd + 1)
    ]
    stats = {
        "max_depth": depth,
        "max_nodes": budget,
        "lower_bound": int(lb[kd]),
        "upper_bound": int(ub[kd]),
        "lower_bounds": [int(v) for v in lb],
        "upper_bounds": [int(v) for v in ub],
        "proven": bool(exact),
        "threads": threads,
        "cache_entries": int(sum(ws[9][0] for ws in wss)),
        "cache_restarts": restarts,
        "subproblems": int(control.counters[1]),
        "splits_evaluated": int(control.counters[3]),
    }
    if any(ws[12][2] == 0 for ws in wss):
        stats["cache_limited"] = True
    return RawFront(sols, "misclassifications", control.status(), stats)


def _strict_front(found):
    """The points ``(cost, splits, ...)`` by increasing splits whose cost is below every point with fewer splits."""
    pts = []
    for item in sorted(found, key=lambda t: (t[1], t[0])):
        if not pts or item[0] < pts[-1][0]:
            pts.append(item)
    return pts


def _seed_now(wss):
    for ws in wss:
        ws[9][2] = 1  # the lazy root seeds its features at its next split (read by the kernel, never reset)


class _Pause:
    """Pauses the exact search (``meta[1] = 2`` in every workspace) once this process has spent its exact-first
    effort (``_EXACT_FIRST_*``), from a watcher thread polling the CPU clock; the kernel releases the GIL."""

    def __init__(self, wss, control):
        self.wss = wss
        limit = control.time_limit
        self.budget = _EXACT_FIRST_SECONDS if limit is None else min(_EXACT_FIRST_SHARE * limit, _EXACT_FIRST_SECONDS)
        self.done = threading.Event()
        self.thread = None
        self.start = time.process_time()
        self._arm()

    def _watch(self):
        while not self.done.wait(0.005):
            if time.process_time() - self.start >= self.budget:
                for ws in self.wss:
                    if ws[9][1] == 0:
                        ws[9][1] = 2
                return

    def _arm(self):
        for ws in self.wss:
            ws[12][15] = _EXACT_FIRST_SPLITS
        if _EXACT_FIRST_SPLITS <= 0:
            self.done.clear()
            self.thread = threading.Thread(target=self._watch, daemon=True)
            self.thread.start()

    def end(self) -> bool:
        """Stop watching; whether the search was paused (the flag is left for the caller to clear)."""
        self.done.set()
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        for ws in self.wss:
            ws[12][15] = 0
        return any(ws[9][1] == 2 for ws in self.wss)

    def resume(self):
        """Watch again (a restarted search), the effort counted from the first start."""
        self._arm()


def _lds(ws, X, XT, y, depth, kb, n_classes, control, max_bytes, fixed):
    """Incumbents by limited-discrepancy passes (Kiossou, Schaus, Nijssen 2026): ``{budget: (errors, tree)}``.

    Pass ``δ`` searches only the Gini split of each feature at the nodes of depth >= 3, the ``r``-th in Gini order
    costing ``r`` of the discrepancy ``δ`` shared along every path, and solves the depth-two nodes exactly (cached, so
    the exact search that follows reuses them).  Pass 0 is a greedy tree with optimal depth-two subtrees; passes go
    on until ``δ`` covers every combination of candidates, a perfect tree is found or their share of the time is
    spent (``_LDS_SHARE``).  Only a finished pass's trees are kept (a stopped pass cannot be rebuilt).  The exact
    search then prunes with these costs, so a run stopped early returns a tree balanced over the whole depth
    instead of the depth-first search's first branch.
    """
    n, p = X.shape
    kd = kb - 1
    prm, meta, vec = ws[12], ws[9], ws[13]
    inc = {}
    cut = np.full(kb, 1 << 40, dtype=np.int64)  # a pass rebuilds its tree by re-solving: same cut-offs as the pass
    ub = np.zeros(kb, dtype=np.int64)
    lb = np.zeros(kb, dtype=np.int64)
    delta = 0
    dmax = (p - 1) * (depth - 2)  # every path takes the last candidate at each of its depth-2 restricted nodes
    limit = control.time_limit
    budget = _LDS_SHARE * limit if limit is not None else _LDS_SECONDS
    t0 = time.perf_counter()
    try:
        while delta <= dmax and not control.stopped and (delta == 0 or time.perf_counter() - t0 < budget):
            prm[14] = delta
            vec[0, 13, 0] = delta
            meta[1] = 0
            solve(tuple(ws), 0, n, depth, cut, ub, lb, False, -1)
            if meta[1] != 0:  # cache table full: grow it and run the pass again
                meta[1] = 0
                if _grow(ws, max_bytes, fixed):
                    continue
            if control.stopped:
                break
            for b in range(1, kd + 1):
                if ub[b] < inc.get(b, (1 << 40,))[0] and (b == 1 or ub[b] < ub[b - 1]):
                    tree, err = _tree_err(ws, XT, X, y, depth, b, n_classes)
                    if err < inc.get(b, (1 << 40,))[0] and not control.stopped:
                        inc[b] = (err, tree)
            if inc.get(kd, (1,))[0] == 0:
                break  # a perfect tree
            delta += 1
    finally:
        prm[14] = -1
    # a tree with fewer splits also fits every larger budget
    for b in range(2, kd + 1):
        if b - 1 in inc and (b not in inc or inc[b - 1][0] <= inc[b][0]):
            inc[b] = inc[b - 1]
    return inc


def _bounds(ws, n, depth, kb, control, incumbent, max_bytes, fixed):
    """Proven lower bounds on every root split, per feature and budget (``fb[f, b]``), for a stopped run.

    Each feature's sorted rows are cut into blocks (``_BOUND_BLOCK_*``), each block solved at the children's depth to
    a cut-off ``c`` (it proves ``min(optimum, c)``: a search for a subtree below a small cost prunes hard).  The rows
    of a root split's child on that feature are a prefix or a suffix of its list, and the errors of one tree add up
    over disjoint rows, so the child's optimum is at least the sum over the blocks inside it (``_packed``).
    Rounds double ``c`` (1, 2, 4, ... up to the incumbent's errors), every feature raised once per round, lowest
    bound first (the root's bound is the least over its features); a feature whose blocks are all settled below ``c``
    has neighbouring blocks merged at once (``_merge``), every feature once ``c`` passes the incumbent.  Ends when
    ``_BOUND_SHARE`` of the time limit is spent (a timer pauses the kernel, ``meta[1] = 2``, whose bounds so far are
    still proofs), or when nothing can rise; the exact search then resumes.
    """
    p = ws[0].shape[0]
    meta, prm = ws[9], ws[12]
    kd = kb - 1
    single = bool(prm[0])
    kc = int(kvec(depth - 1, single, int(prm[1])))
    fb = np.zeros((p, kb), dtype=np.int64)
    saved = prm[15]
    prm[15] = 0
    timer = threading.Timer(_BOUND_SHARE * control.time_limit, _pause_now, ([ws],))
    timer.daemon = True
    timer.start()
    u = np.zeros(kb, dtype=np.int64)
    lo = np.zeros(kb, dtype=np.int64)
    cut = np.full(kb, 1 << 30, dtype=np.int64)
    tws = tuple(ws)
    ranks, labels = ws[20][0], ws[21][0]
    n_classes = ws[18].shape[2]
    base = _conflicts(ws[0], ws[1], n_classes)
    fb[:] = base
    fb[ranks[:, -1] == ranks[:, 0]] = 1 << 40  # 1 << 40: no split on f (one distinct value)
    nb = max(2, min(incumbent // _BOUND_BLOCK_ERRORS, n // _BOUND_BLOCK_ROWS, _BOUND_BLOCKS_MAX))
    ideal = np.linspace(0, n, nb + 1)[1:-1]
    # per feature, made when it is first raised (~1 ms each on 10^4 rows: an exact discretizer's thousands of tests
    # would take seconds past the pass's share): its split positions, one-leaf errors of each prefix and suffix,
    # and its blocks as [start, end, settled, lower-bound front (budgets 0..kc), impurity], every level kept
    pos, leaves, blocks, level = [None] * p, [None] * p, [None] * p, [None] * p

    def setup(f):
        pos[f] = np.flatnonzero(ranks[f, 1:] != ranks[f, :-1]) + 1
        leaves[f] = _prefix_leaves(labels[f], n_classes)
        blocks[f], level[f] = [], []
        # block edges at the feature's split positions nearest to equal row counts: a split at a block's edge
        # counts every block (none reaches across it)
        q = np.clip(np.searchsorted(pos[f], ideal), 1, pos[f].size - 1) if pos[f].size > 1 else np.zeros(1, int)
        near = np.where(np.abs(pos[f][q - 1] - ideal) <= np.abs(pos[f][q] - ideal), pos[f][q - 1], pos[f][q])
        # but no block much larger than the rest (its proofs cost like a root child's): far from a position,
        # the edge stays inside a run of equal values
        near = np.where(np.abs(near - ideal) <= n / nb / 2, near, np.round(ideal).astype(np.int64))
        edges = np.unique(np.concatenate(([0, n], near)))
        for a, b in zip(edges[:-1], edges[1:]):
            level[f].append(len(blocks[f]))
            blocks[f].append([int(a), int(b), False, np.zeros(kc + 1, dtype=np.int64), _impurity(labels[f], a, b)])

    stop = False
    try:
        c = 1
        while not stop:
            if c > max(incumbent, 1):
                # every block as high as the incumbent: coarser blocks for every feature, the rounds again
                merged = [f for f in range(p) if blocks[f] is not None and _merge(blocks[f], level[f])]
                if not merged:
                    break
                c = 1
            todo = [f for f in np.argsort(fb[:, kd], kind="stable") if fb[f, kd] < (1 << 40)]
            for f in todo:
                if fb[f, kd] < c and blocks[f] is None:
                    setup(f)
                    if meta[1] != 0 or control.stopped:
                        stop = True
                        break
                while fb[f, kd] < c and not stop:
                    # the most impure blocks first (likely the largest optima), until the feature's bound reaches c
                    order = sorted(level[f], key=lambda i: -(blocks[f][i][3][kc] + blocks[f][i][4]))
                    for i in order:
                        blk = blocks[f][i]
                        if fb[f, kd] >= c:
                            break
                        if blk[2] or blk[3][kc] >= c:
                            continue
                        cut[1:] = c
                        while True:
                            m = root_block(tws, n, int(f), blk[0], blk[1])
                            code = solve(tws, 1, m, depth - 1, cut, u, lo, False, -1)
                            if meta[1] == 1 and _grow(ws, max_bytes, fixed):  # cache table full: grown, again
                                meta[1] = 0
                                tws = tuple(ws)
                                continue
                            break
                        if meta[1] != 0 or control.stopped:
                            stop = True  # paused or stopped: ``lo`` is still a proof, the rest waits
                        np.maximum(blk[3], lo[: kc + 1], out=blk[3])
                        blk[2] = code != 0 and not stop and bool(np.all(u[: kc + 1] == lo[: kc + 1]))
                        np.maximum(fb[f], _feature_bound(blocks[f], pos[f], leaves[f], n, kd, kc, single), out=fb[f])
                        if stop:
                            break
                    # below c with every block settled (or at c): coarser blocks for this feature at once
                    if stop or fb[f, kd] >= c or not all(blocks[f][i][2] for i in level[f]):
                        break
                    if not _merge(blocks[f], level[f]):
                        break
                if stop:
                    break
            c *= 2
    finally:
        timer.cancel()
        timer.join()  # a pause set after this would stop the resumed search
        meta[1] = 0
        prm[15] = saved
    return fb


def _merge(blocks, level):
    """Coarser blocks for one feature: each pair of neighbours in ``level`` (changed in place) merged, starting from
    the sum of their bounds; False when it has two blocks or fewer (one holding every row bounds no split)."""
    if len(level) <= 2:
        return False
    new = []
    for t in range(0, len(level), 2):
        pair = [blocks[i] for i in level[t : t + 2]]
        if len(pair) == 1:
            new.append(level[t])
            continue
        new.append(len(blocks))
        blocks.append([pair[0][0], pair[1][1], False, pair[0][3] + pair[1][3], pair[0][4] + pair[1][4]])
    level[:] = new
    return True


def _conflicts(ranks, y, n_classes):
    """Errors every tree makes: rows alike in every feature but of different classes end in one leaf.  Skipped (0)
    on tables too large to sort quickly."""
    p, n = ranks.shape
    if n * p > _BOUND_CONFLICT_CELLS:
        return 0
    _, group = np.unique(ranks.T, axis=0, return_inverse=True)
    counts = np.bincount(group.ravel() * n_classes + y, minlength=(int(group.max()) + 1) * n_classes)
    return int(n - counts.reshape(-1, n_classes).max(axis=1).sum())


def _impurity(labels, a, b):
    """Errors of one leaf over rows ``a:b`` of a sorted list (the most impure blocks are solved first)."""
    return int(b - a - np.bincount(labels[a:b]).max())


def _prefix_leaves(labels, n_classes):
    """Errors of one leaf over the first ``k`` rows (``k = 0..n``) and over the last ``n - k`` of a sorted list."""
    onehot = np.zeros((labels.size + 1, n_classes), dtype=np.int64)
    onehot[np.arange(1, labels.size + 1), labels] = 1
    pre = np.cumsum(onehot, axis=0)
    suf = pre[-1] - pre
    k = np.arange(labels.size + 1)
    return k - pre.max(axis=1), (labels.size - k) - suf.max(axis=1)


def _packed(blocks, xs, n, bc, mirror):
    """Lower bound, at each position ``x`` of ``xs`` (ascending), of the optimum (budget ``bc``) of the rows before
    ``x`` (after it when ``mirror``), from the solved blocks: the best sum over disjoint blocks inside it, plus for
    one block reaching past ``x`` its bound less its rows outside (a row moved changes a tree's errors by at most
    one)."""
    iv = []
    for a, b, _, bnd, _ in blocks:
        e = int(bnd[bc])
        if e > 0:
            iv.append((n - b, n - a, e) if mirror else (a, b, e))
    iv.sort(key=lambda t: t[1])
    ends = [0]
    best = [0]  # best packing of the blocks ending at or before ``ends[i]``
    for a, b, e in iv:
        v = best[int(np.searchsorted(ends, a, side="right")) - 1] + e
        if b != ends[-1]:
            ends.append(b)
            best.append(best[-1])
        if v > best[-1]:
            best[-1] = v
    for i in range(1, len(best)):
        best[i] = max(best[i], best[i - 1])
    ends_a = np.asarray(ends)
    best_a = np.asarray(best)
    out = best_a[np.searchsorted(ends_a, xs, side="right") - 1]
    for a, b, e in iv:
        i0 = int(np.searchsorted(xs, a, side="right"))
        i1 = int(np.searchsorted(xs, b, side="left"))
        if i0 < i1:
            head = best_a[int(np.searchsorted(ends_a, a, side="right")) - 1]
            np.maximum(out[i0:i1], head + e - (b - xs[i0:i1]), out=out[i0:i1])
    return out


def _feature_bound(blocks, pos, leaves, n, kd, kc, single):
    """Lower bounds (budgets ``0..kd``, 0 unused) on every root split of one feature at positions ``pos``."""
    L = np.empty((kc + 1, pos.size), dtype=np.int64)
    R = np.empty((kc + 1, pos.size), dtype=np.int64)
    L[0] = leaves[0][pos]
    R[0] = leaves[1][pos]
    for bc in range(1, kc + 1):
        L[bc] = np.minimum(_packed(blocks, pos, n, bc, False), L[0])
        R[bc] = np.minimum(_packed(blocks, (n - pos)[::-1], n, bc, True)[::-1], R[0])
    out = np.zeros(kd + 1, dtype=np.int64)
    if single:
        out[1] = int((L[kc] + R[kc]).min())
        return out
    for b in range(1, kd + 1):
        rem = b - 1
        best = None
        for bl in range(max(0, rem - kc), min(rem, kc) + 1):
            v = L[bl] + R[rem - bl]
            best = v if best is None else np.minimum(best, v)
        out[b] = int(best.min())
    return out


class _BoundCall:
    """Pauses the exact search once ``_BOUND_AT`` of the time limit has passed (wall), for the root bound pass
    (``_bounds``): a run likely to be stopped then has a bound on the features its search has not reached, while a
    run that finishes before pays nothing.  The pause (``meta[1] = 2``) is set only while the exact search runs."""

    def __init__(self, wss, control):
        self.wss = wss
        self.lock = threading.Lock()
        self.running = False
        wait = _BOUND_AT * control.time_limit - control.elapsed
        self.fired = wait <= 0  # at once (tests: before the search, deterministic)
        self.timer = threading.Timer(max(0.0, wait), self._fire)
        self.timer.daemon = True
        if not self.fired:
            self.timer.start()

    def _fire(self):
        with self.lock:
            self.fired = True
            if self.running:
                _pause_now(self.wss)

    def enter(self) -> bool:
        """The exact search starts: whether the time for the bounds has come (then the caller runs them first)."""
        with self.lock:
            self.running = not self.fired
            return self.fired

    def leave(self) -> bool:
        """The exact search returned: whether it may have been paused for the bounds."""
        with self.lock:
            was = self.running and self.fired
            self.running = False
            return was

    def cancel(self):
        self.timer.cancel()
        if self.timer.is_alive():
            self.timer.join()


def _pause_now(wss):
    for ws in wss:
        ws[9][1] = 2


def _tree_err(ws, XT, X, y, depth, b, n_classes):
    tree = _tree(ws, XT, X, depth, b, n_classes)
    leaves = apply_tree(tree.feature, tree.threshold, tree.left, tree.right, X)
    return tree, int(np.count_nonzero(tree.prediction[leaves] != y))


def _tree(ws, XT, X, depth, b, n_classes):
    cap = (1 << (depth + 1)) + 1
    feat = np.full(cap, -1, dtype=np.int64)
    thr = np.zeros(cap, dtype=np.float64)
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    value = np.zeros((cap, n_classes), dtype=np.int64)
    nxt = np.zeros(1, dtype=np.int64)
    build(tuple(ws), XT, 0, X.shape[0], depth, b, feat, thr, left, right, value, nxt)
    k = int(nxt[0])
    return RawTree(feat[:k], thr[:k], left[:k], right[:k], value[:k])


def _info(budget, errors, splits, lower=None):
    return {"budget": budget, "errors": errors, "splits": splits, "lower_bound": errors if lower is None else lower}


def _solutions(found, n, lb, single, sparsity, front):
    errors = [f[0] for f in found]
    splits = [f[1] for f in found]
    sols = []
    hull = hull_flags(errors, splits, n) if not single else None
    for i, (err, spl, tree, proven, b) in enumerate(found):
        info = _info(b, err, spl, int(min(lb[b], err)))
        if hull is not None:
            info["on_hull"] = hull[i][0]
            if hull[i][0]:
                info["alpha_lo"] = float(hull[i][1])
                info["alpha_hi"] = None if hull[i][2] is None else float(hull[i][2])
        sols.append(RawSolution(tree, proven, info))
    if sparsity is not None:
        i = _alpha_choice(errors, splits, n, sparsity)
        sols[i].info["objective"] = errors[i] / n + sparsity * splits[i]
        sols[i].info["sparsity"] = sparsity
        # proven only if no unproven budget could beat it
        a = Fraction(sparsity)
        best = Fraction(errors[i], n) + a * splits[i]
        if any(Fraction(int(lb[b]), n) + a * b < best for b in range(len(lb))):
            sols[i].optimal = False
        return [sols[i]]
    if not front:
        return [sols[-1]]
    return sols


# Weighted, cost-sensitive objective (``sample_weight=``, ``costs=``): its own kernel (``_kernels/contree_weighted``),
# the plain search above unchanged.  Initial cache table (entries; grown x4 when half full, up to the memory limit).
_W_CACHE_BITS = 12
# Rows x features up to which a stopped weighted run bounds its cost by the rows alike in every feature
_W_CONFLICT_CELLS = _BOUND_CONFLICT_CELLS


def _w_memory(n_rows, n_features, max_depth, kb, n_classes):
    """Bytes of the weighted search's fixed buffers: one sorted row list per feature and level, the anchors'
    child fronts per level and the per-row costs."""
    levels = max_depth + 1
    return (
        levels * n_features * n_rows * 4
        + 2 * n_features * n_rows * 12
        + 2 * levels * n_rows * kb * 8
        + levels * (n_rows + 1) * 16
        + n_rows * (n_classes + 4) * 8
    )


def _w_cache(cap, kb):
    return [
        np.zeros((cap, 3), dtype=np.uint64),
        np.zeros((cap, kb), dtype=np.float64),
        np.zeros((cap, 4, kb), dtype=np.int64),
        np.zeros((cap, kb), dtype=np.float64),
        np.zeros(cap, dtype=np.uint8),
    ]


def _w_entry_bytes(kb):
    return 3 * 8 + kb * 6 * 8 + 1


def _w_grow(W, max_bytes, fixed):
    """A table four times larger holding every entry; False (the search stops adding entries) at the memory limit."""
    keys = W[8]
    kb = W[9].shape[1]
    cap = keys.shape[0] * 4
    if fixed + cap * _w_entry_bytes(kb) > max_bytes:
        W[16][3] = 1
        return False
    new = _w_cache(cap, kb)
    wrehash(*W[8:13], *new)
    W[8:13] = new
    W[13][1] = 0
    return True


def _w_solve(W, m, depth, kb, max_bytes, fixed):
    """``wsolve`` at level 0, growing the cache table whenever it fills; (code, costs, choices)."""
    out = np.zeros(kb, dtype=np.float64)
    cf = np.zeros(kb, dtype=np.int64)
    ct = np.zeros(kb, dtype=np.float64)
    cl = np.zeros(kb, dtype=np.int64)
    cr = np.zeros(kb, dtype=np.int64)
    cm = np.zeros(kb, dtype=np.int64)
    while True:
        code = wsolve(tuple(W), 0, m, depth, out, cf, ct, cl, cr, cm)
        if code >= 0:
            return code, out, (cf, ct, cl, cr, cm)
        _w_grow(W, max_bytes, fixed)


def _w_tree(W, S0, X, y, rw, C, depth, b, kb, max_bytes, fixed, missing=False, root=None):
    """Rebuild the tree of budget index ``b`` from the cached choices (re-solving a node the cache lacks);
    ``missing``: ``X`` has NaN and the tree carries ``missing_left``; ``root``: the search's own choices at the root
    (a stopped root is not in the cache when the table was half full: re-solving it with the flag up gave a leaf)."""
    n_classes = C.shape[0]
    feat, thr, left, right, value, pred, mleft = [], [], [], [], [], [], []

    def node(rows, d, bi):
        i = len(feat)
        feat.append(-1)
        thr.append(0.0)
        left.append(-1)
        right.append(-1)
        mleft.append(0)
        value.append(np.bincount(y[rows], minlength=n_classes))
        pred.append(leaf_prediction(np.bincount(y[rows], weights=rw[rows], minlength=n_classes), C)[0])
        if d == 0 or bi == 0 or rows.size < 2:
            return i
        inside = np.zeros(X.shape[0], dtype=bool)
        inside[rows] = True
        W[6][0, :, : rows.size] = S0[inside[S0]].reshape(S0.shape[0], rows.size)
        if i == 0 and root is not None:
            cf, ct, cl, cr, cm = root
        else:
            _, _, (cf, ct, cl, cr, cm) = _w_solve(W, rows.size, d, kb, max_bytes, fixed)
        f = int(cf[bi])
        if f < 0:
            return i
        t, bl, br, ml = float(ct[bi]), int(cl[bi]), int(cr[bi]), int(cm[bi])
        x = X[rows, f]
        go = (x <= t) | (np.isnan(x) & (ml == 1))
        feat[i], thr[i], mleft[i] = f, t, ml
        left[i] = node(rows[go], d - 1, bl)
        right[i] = node(rows[~go], d - 1, br)
        return i

    node(np.arange(X.shape[0]), depth, b)
    ml = np.array(mleft) if missing else None
    arrays = (np.array(a) for a in (feat, thr, left, right, value))
    return RawTree(*arrays, prediction=np.array(pred), missing_left=ml)


def _as_errors(front):
    """A front of the cost search run with unit costs in the plain search's terms: errors and integer bounds."""
    front.objective = "misclassifications"
    for sol in front.solutions:
        sol.info.pop("cost", None)
        sol.info["lower_bound"] = int(round(sol.info["lower_bound"]))
    st = front.stats
    for key in ("weighted", "integral"):
        st.pop(key, None)
    for key in ("lower_bound", "upper_bound"):
        if key in st:
            st[key] = int(round(st[key]))
    for key in ("lower_bounds", "upper_bounds"):
        if key in st:
            st[key] = [int(round(v)) for v in st[key]]
    return front


def _w_conflicts(RK, RC):
    """A cost every tree pays: rows alike in every feature end in one leaf (skipped, 0, on large tables)."""
    p, n = RK.shape
    if n * p > _W_CONFLICT_CELLS or p == 0:
        return 0.0
    _, group = np.unique(RK.T, axis=0, return_inverse=True)
    group = group.ravel()
    per = np.zeros((int(group.max()) + 1, RC.shape[1]))
    np.add.at(per, group, RC)
    return float(per.min(axis=1).sum())


def _run_weighted(X, y, n_classes, depth, budget, single, sparsity, front, max_bytes, control, wt, missing=False):
    """The weighted search (``wt``), or with ``missing`` (NaN in ``X``) the search over missing values' sides too,
    for any objective: the plain one as unit costs (the caller reports it in errors, ``_as_errors``)."""
    n, p = X.shape
    C = wt.cost_matrix(n_classes)
    rw = wt.row_weights(n)
    # the scale of the sparsity objective ``cost / total``: all-zero weights (refused upstream) weigh splits only
    total = float(rw.sum()) or 1.0
    meta_stats = {"max_depth": depth, "max_nodes": budget, "weighted": not wt.plain, "integral": wt.integral}
    if missing:
        meta_stats["missing"] = True

    def leaf_front(proven, status_note=None):
        mass = wt.class_mass(y, n_classes)
        pr, cost = leaf_prediction(mass, C)
        tree = RawTree.leaf(np.bincount(y, minlength=n_classes))
        tree.prediction[0] = pr
        if missing:
            tree.missing_left = np.zeros(1, dtype=np.int64)
        info = {"budget": 0, "cost": tree_cost(y, np.full(n, pr), wt, n_classes), "splits": 0}
        info["errors"] = int(np.count_nonzero(y != pr))
        info["lower_bound"] = info["cost"] if proven else 0.0
        stats = dict(meta_stats, lower_bound=info["lower_bound"], upper_bound=cost, proven=proven)
        if status_note:
            stats["notices"] = [status_note]
        return RawFront([RawSolution(tree, proven, info)], "cost", control.status(), stats)

    if budget == 0 or depth == 0 or p == 0:
        return leaf_front(True)
    kb = kvec(depth, single, budget) + 1
    fixed = _w_memory(n, p, depth, kb, n_classes)
    if fixed > max_bytes:
        raise MemoryError(
            f"contree (weighted) needs about {fixed / 2**20:.0f} MB for {n} rows x {p} features at "
            f"max_depth={depth} (over max_memory_mb={max_bytes / 2**20:g}); lower max_depth, use fewer rows or "
            "columns, or raise max_memory_mb"
        )
    levels = depth + 1
    RK = np.empty((p, n), dtype=np.int32)
    S = np.zeros((levels, p, n), dtype=np.int32)
    step = max(1, _PREP_CELLS // max(n, 1))
    for lo in range(0, p, step):
        if control.stopped:
            return leaf_front(False, "contree was stopped (time limit or cancel) while sorting the columns: a leaf")
        hi = min(p, lo + step)
        order, ranks = _sorted_block(X, lo, hi)
        S[0, lo:hi] = order
        np.put_along_axis(RK[lo:hi], order, ranks, axis=1)
    if missing:
        RK[np.isnan(X.T)] = -1  # the kernel's mark of a missing value (NaN sorts last: each list's tail)
    S0 = S[0].copy()
    RC = np.ascontiguousarray(rw[:, None] * C[y])
    rng = np.random.default_rng(0x636F6E)
    W = [
        RK,
        np.ascontiguousarray(X.T),
        RC,
        RC.max(axis=1),
        rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False),
        rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False),
        S,
        np.zeros(n, dtype=np.uint8),
        *_w_cache(1 << _W_CACHE_BITS, kb),
        np.zeros(2, dtype=np.int64),
        control.flag,
        control.counters,
        np.array([1 if single else 0, budget, 0, 0, _STOP_AFTER_SPLITS], dtype=np.int64),
        np.zeros((levels, n, kb)),
        np.zeros((levels, n, kb)),
        np.zeros((levels, _W_STACK, 4), dtype=np.int64),
        np.zeros((levels, n), dtype=np.int64),
        np.zeros((levels, n + 1)),
        np.zeros((levels, 3, n_classes)),
        np.zeros((levels, 3, kb)),
        np.zeros((levels, 2, kb), dtype=np.int64),
        np.zeros((levels, 4, kb), dtype=np.int64),
        np.zeros((levels, kb)),
    ]
    control.watch("contree", COUNTERS)
    try:
        code, out, choice = _w_solve(W, n, depth, kb, max_bytes, fixed)
    finally:
        control.unwatch()
    exact = code == 1
    W[16][2] = 1  # rebuilding: a stopped node's best so far is read from the cache
    # a stopped run proves only what every tree pays (the plain search's block bounds assume unit costs)
    floor = float(out[kb - 1]) if exact else _w_conflicts(RK, RC)
    kd = kb - 1
    budgets = [kd] if single else [b for b in range(kd + 1) if b == 0 or out[b] < out[b - 1]]
    found = []
    for b in budgets:
        tree = _w_tree(W, S0, X, y, rw, C, depth, b, kb, max_bytes, fixed, missing, choice)
        yhat = predict_raw(tree, X)
        cost = tree_cost(y, yhat, wt, n_classes)
        lower = float(out[b]) if exact else min(floor, cost)
        # proven when the search finished and the rebuilt tree is the one it costed (summation order aside)
        proven = exact and abs(cost - float(out[b])) <= 1e-9 * max(1.0, abs(cost))
        info = {"budget": b, "cost": cost, "errors": int(np.count_nonzero(yhat != y)), "splits": tree.n_splits}
        info["lower_bound"] = lower
        found.append((cost, tree.n_splits, tree, proven, info))
    pts = _strict_front(found)
    costs = [Fraction(t[0]) for t in pts]
    splits = [t[1] for t in pts]
    sols = [RawSolution(t[2], t[3], t[4]) for t in pts]
    if not single:
        for sol, (on, lo, hi) in zip(sols, hull_flags(costs, splits, Fraction(total))):
            sol.info["on_hull"] = on
            if on:
                sol.info["alpha_lo"] = float(lo)
                sol.info["alpha_hi"] = None if hi is None else float(hi)
    stats = dict(meta_stats)
    lbs = [float(out[b]) if exact else min(floor, float(out[b])) for b in range(kd + 1)]
    stats.update(
        lower_bound=lbs[kd],
        upper_bound=float(pts[-1][0]),
        lower_bounds=lbs,
        upper_bounds=[min([t[0] for t in pts if t[1] <= b or single] or [pts[0][0]]) for b in range(kd + 1)],
        proven=exact,
        cache_entries=int(W[13][0]),
        subproblems=int(control.counters[1]),
        splits_evaluated=int(control.counters[3]),
    )
    if W[16][3]:
        stats["cache_limited"] = True
    if not exact:
        stats["notices"] = [
            f"contree ({'missing values' if missing else 'weighted'}) was stopped: its lower bound is only the cost "
            "of rows alike in every feature (the plain search's bounds assume unit costs and complete rows: off for "
            "weights, costs and missing values)"
        ]
    if sparsity is not None:
        a = Fraction(sparsity)
        obj = [c / Fraction(total) + a * s for c, s in zip(costs, splits)]
        i = obj.index(min(obj))  # fewest splits among ties
        sols[i].info["objective"] = float(obj[i])
        sols[i].info["sparsity"] = sparsity
        if any(Fraction(lbs[b]) / Fraction(total) + a * b < obj[i] for b in range(kd + 1)):
            sols[i].optimal = False
        sols = [sols[i]]
    elif not front:
        sols = [sols[-1]]
    return RawFront(sols, "cost", control.status(), stats)
