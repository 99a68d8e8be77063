"""MurTree: exact optimal decision trees on 0/1 tests, for every node budget (Demirović et al., JMLR 2022).

Dynamic programming over subtrees with a depth limit ``D`` and a budget of ``K`` splits: independent
left/right children, an upper bound passed down from the best tree so far, lower bounds from the
cache and from the similarity of datasets at the same level, a specialised depth-2 solver by
frequency counting (bitsets + popcount), a cache keyed by the dataset's instance set, depth and
budget, and reconstruction of the tree from the cached roots.

The search minimises errors; ties go to fewer splits locally (a split must be strictly better than
the leaf or the smaller budget's tree).  The *front* solves the budgets ``0..K`` in turn, reusing the
cache: a budget's tree is kept when its error is strictly below the previous budget's, so it uses
exactly that many splits and the result is the exact error-vs-splits Pareto front; the trees that
minimise ``errors / n + alpha * splits`` for some ``alpha >= 0`` are its lower convex hull
(``info["on_hull"]``, with the ``alpha`` interval).
``sparsity=alpha`` picks that tree from the front with exact rational arithmetic (``alpha`` is never
rounded to an integer multiple of ``1/n``).  A single tree (``front=False``) has the fewest errors for
``K`` splits, then the fewest splits among those (binary search over budgets with that error as the
upper bound, which prunes hard).

With ``sample_weight=`` or ``costs=`` the same search minimises the weighted cost ``sum_i w[i] * C[y[i], yhat[i]]``
(``solvers._objective``), exactly, at every budget.  Rows are grouped by class and weight; the kernels count rows
per group as they count them per class (bitsets, popcounts, inclusion-exclusion) and price a group's count by
``cm[g, p] = w_g * C[class_g, p]`` in int64: whole weights and costs as they are, real ones in quanta of 2**-50 of
the largest possible total (within float64 summation's own error; see :class:`_Weighted`).  Class weights alone
give one group per class; many distinct real weights make many groups (the depth-2 pair counts grow with them).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._base import Control, RawFront, RawSolution, RawTree, check_xy
from ._hull import hull_intervals
from ._kernels.murtree_cache import MAX_FEATURES, cache_rehash, leaf_cost
from ._kernels.murtree_search import Workspace, _build, solve
from ._objective import Weighting, leaf_costs, weighted

__all__ = ["murtree", "COUNTERS", "hull_flags"]

COUNTERS = ("budgets_done", "cache_entries", "depth2_calls", "nodes_searched")
_MAX_DEPTH = 10
_INF = 1 << 60
_CACHE_BITS = 16  # initial cache: 2**16 slots of 24 bytes (1.6 MB), grown x2 whenever 70 % full
_PAIR_BYTES = 1 << 30  # the most the depth-2 pair counts (groups x tests x tests int32) may take
_PLAIN = np.zeros(0, dtype=np.int64)  # the kernels' cost matrix for plain misclassification (a type marker)


def empty_cache(cap: int, dtype=np.int32) -> tuple[np.ndarray, np.ndarray]:
    """A cache table of ``cap`` slots: keys (two hash words, depth and budget in the second's low bits) and values
    (errors or lower bound, packed optimal flag, root test and left budget); see ``_kernels/murtree_cache``.
    ``dtype`` holds the values: int32 errors, or the weighted objective's int64 or float64 costs."""
    return np.zeros((cap, 2), dtype=np.uint64), np.zeros((cap, 2), dtype=dtype)


def _workspace(X, y, n_classes, depth, budget, min_leaf, control, cache_bits, cm=_PLAIN):
    """The kernels' named work space (``ws``, a :data:`Workspace` of arrays) and the root's hash.

    Rows are reordered by class so that every dataset is a run of class blocks; tests keep their index.  With a
    weighted cost matrix ``cm`` (see :func:`_groups`), ``y`` and ``n_classes`` are the rows' groups and their
    number, and the costs (cache, archive, incumbent) take ``cm``'s type.
    """
    cost = np.int64 if cm.ndim == 1 else cm.dtype
    order = np.argsort(y, kind="stable")  # rows sorted by class: class blocks in every dataset
    XT = np.ascontiguousarray(X[order].T)
    ys = np.ascontiguousarray(y[order], dtype=np.int64)
    n, f = X.shape
    rng = np.random.default_rng(0x6D7572)
    z1 = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)
    z2 = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)
    rows = 2 * depth + 3
    bufs = np.zeros((rows, n), dtype=np.int32)
    bufs[0] = np.arange(n, dtype=np.int32)
    cnts = np.zeros((rows, n_classes), dtype=np.int64)
    cnts[0] = np.bincount(ys, minlength=n_classes)
    keys, vals = empty_cache(1 << cache_bits, np.int32 if cm.ndim == 1 else cost)
    meta = np.zeros(1, dtype=np.int64)
    # similarity archive: one dataset per buffer row, i.e. per level and side (left children resemble
    # each other, not the right children they alternate with)
    arch_inst = np.zeros((rows, n), dtype=np.int32)
    arch_m = np.full(rows, -1, dtype=np.int64)
    arch_h = np.zeros((rows, 2), dtype=np.uint64)
    arch_lb = np.zeros((rows, depth + 1, budget + 1), dtype=cost)
    words = n // 64 + n_classes + 1
    bits = np.zeros((words, f), dtype=np.uint64)
    bitsA = np.zeros((words, f), dtype=np.uint64)
    S = np.zeros((f, n_classes), dtype=np.int64)
    P = np.zeros((n_classes, f, f), dtype=np.int32)
    act = np.zeros(f, dtype=np.int64)
    prm = np.array([min_leaf], dtype=np.int64)
    status = np.zeros(4, dtype=cost)
    XR = np.ascontiguousarray(X[order])
    tmp = np.zeros((4, n_classes), dtype=np.int64)
    h1 = np.uint64(z1.sum(dtype=np.uint64))
    h2 = np.uint64(z2.sum(dtype=np.uint64))
    ws = _Workspace(
        Workspace(
            XT,
            ys,
            z1,
            z2,
            bufs,
            cnts,
            keys,
            vals,
            meta,
            arch_inst,
            arch_m,
            arch_h,
            arch_lb,
            bits,
            S,
            P,
            act,
            prm,
            control.flag,
            control.counters,
            status,
            XR,
            bitsA,
            tmp,
            np.zeros((depth + 2, f), dtype=np.int64),
            cm,
        )
    )
    return ws, h1, h2


class _Workspace:
    """The kernels' :data:`Workspace` (``arrays``), its fields readable by name; the cache arrays are
    replaced when the cache grows."""

    __slots__ = ("arrays",)

    def __init__(self, arrays):
        self.arrays = arrays

    def __getattr__(self, name):
        return getattr(self.arrays, name)


def _grow(ws):
    keys, vals = ws.keys, ws.vals
    new_keys, new_vals = empty_cache(keys.shape[0] * 2, vals.dtype)
    cache_rehash(keys, vals, new_keys, new_vals)
    ws.arrays = ws.arrays._replace(keys=new_keys, vals=new_vals)
    ws.status[0] = 0


def warm_growth():
    """Compile the cache's rehash, which only a run that fills its table reaches: a warm-up's toy run never
    does, and numba would otherwise compile it inside the first long run's time limit."""
    cache_rehash(*empty_cache(1), *empty_cache(4))


def _solve_root(arrays, m, h1, h2, d, n, ub):
    """Solve the root dataset (row 0) for depth ``d`` and budget ``n`` if its optimum is <= ``ub``.

    Returns the optimum (<= ub), a lower bound (> ub) or -1 when stopped.  Called from Python rather than
    through a kernel wrapper: a wrapper kernel re-optimises the whole search on the first run (compile time),
    and Python ints arrive as int64 (a literal-typed overload of the recursive kernel would crash when numba
    loads it from its cache).
    """
    arrays.status[1:4] = (-1, -1, 0)
    return solve(arrays, 0, 0, m, h1, h2, d, n, ub)


def _build_tree(arrays, m, h1, h2, d, n, force_f, force_nl):
    """Flat arrays ``(feature, left, right, value)`` of the root's optimal (or forced-root) tree.

    ``force_f = -2`` reads the root from the cache; otherwise the root test and left budget are given
    (the anytime incumbent).  Returns ``n_nodes = -1`` if the cache could not supply a subtree.
    """
    size = 2 * n + 1
    feat = np.full(size, -1, dtype=np.int64)
    left = np.full(size, -1, dtype=np.int64)
    right = np.full(size, -1, dtype=np.int64)
    value = np.zeros((size, arrays.cnts.shape[1]), dtype=np.int64)
    nn = _build(arrays, 0, 0, m, h1, h2, d, n, int(force_f), int(force_nl), feat, left, right, value, 0)
    return feat, left, right, value, nn


def _solve_budget(ws, n, h1, h2, depth, budget_n, ub):
    """Root errors for ``budget_n`` splits if <= ``ub`` (growing the cache as needed); -1 when stopped."""
    d = min(depth, budget_n)
    while True:
        cost = _solve_root(ws.arrays, n, h1, h2, d, budget_n, ub)
        if cost >= 0 or ws.status[0] == 0:
            return cost
        _grow(ws)


def _tree(ws, n, h1, h2, depth, budget_n, force=(-2, 0)):
    d = min(depth, budget_n)
    while True:
        feat, left, right, value, nn = _build_tree(ws.arrays, n, h1, h2, d, budget_n, force[0], force[1])
        if nn >= 0:
            break
        if ws.status[0] == 0:
            return None
        _grow(ws)
    feat, left, right, value = feat[:nn], left[:nn], right[:nn], value[:nn]
    return RawTree(feat, np.full(nn, 0.5), left, right, value)


def hull_flags(errors, splits, n_rows):
    """Which points of a front lie on its lower convex hull, and their ``alpha`` intervals.

    Parameters
    ----------
    errors, splits : sequences of int
        The front, ordered by increasing splits and strictly decreasing errors.
    n_rows : int
        Number of training rows (the objective is ``errors / n_rows + alpha * splits``).

    Returns
    -------
    list of (bool, Fraction or None, Fraction or None)
        ``(on_hull, alpha_lo, alpha_hi)``: the tree minimises the objective exactly for
        ``alpha_lo <= alpha <= alpha_hi`` (``alpha_hi`` None: unbounded).  A point strictly inside a hull
        edge never wins (ties: fewer splits).
    """
    return hull_intervals(splits, errors, n_rows)


def _alpha_choice(errors, splits, n_rows, alpha):
    a = Fraction(alpha)
    obj = [Fraction(e) / n_rows + a * s for e, s in zip(errors, splits)]
    best = min(obj)
    return next(i for i, o in enumerate(obj) if o == best)  # fewest splits among ties


def murtree(
    X,
    y,
    n_classes: int | None = None,
    *,
    max_depth: int = 3,
    max_nodes: int | None = None,
    sparsity: float | None = None,
    front: bool = True,
    min_leaf_support: int = 1,
    fewest_splits: bool = True,
    control: Control | None = None,
    sample_weight=None,
    costs=None,
) -> RawFront:
    """Optimal classification trees on 0/1 tests: the whole error-vs-splits front or one tree.

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
        Budget ``K`` of splits (default and maximum ``2**D - 1``).
    sparsity : float or None
        When given, return only the tree minimising ``errors / n + sparsity * splits`` (with
        ``splits <= K``), ties to fewer splits.
    front : bool
        True: one tree per distinct optimum of the budgets ``0..K`` (the Pareto front).  False: the
        single tree with the fewest errors, fewest splits among those.
    min_leaf_support : int
        Minimum number of training rows in every leaf.
    fewest_splits : bool
        Single tree only: among the trees with the fewest errors return one with the fewest splits
        (a binary search over budgets).  False: the first optimal tree found (any number of splits).
    control : Control, optional
        Time limit / cancel / progress (counters: budgets done, cache entries, depth-2 solves, search
        nodes).  When stopped, the trees proven so far are kept (at least the single leaf, optimal for
        budget 0) and the best tree of the interrupted budget is added with ``optimal=False``;
        ``RawFront.status`` says why it stopped.
    sample_weight : ndarray of float64 (n,), optional
        Row weights (finite, >= 0; checked upstream).  With ``costs`` they make the objective the weighted cost
        ``sum_i w[i] * costs[y[i], yhat[i]]``, minimised exactly for every budget (``min_leaf_support`` still
        counts rows); the error words above then read "cost", and ``sparsity`` weighs it by the total weight.
    costs : ndarray of float64 (k, k), optional
        ``costs[true, predicted]`` (finite, >= 0; default 0 on the diagonal, 1 elsewhere).

    Returns
    -------
    RawFront
        ``objective="misclassifications"`` (``"cost"`` when weighted); ``info`` of each tree: ``budget``
        (smallest budget it is optimal for) and ``budget_max`` (largest), ``errors`` (misclassified rows),
        ``splits``, and when weighted ``cost`` (its training cost); with the front or ``sparsity``:
        ``on_hull`` and, for hull trees, ``alpha_lo``/``alpha_hi`` (of the objective); with ``sparsity``:
        ``objective`` and ``sparsity``.  Trees count rows per class in ``value``; each node's ``prediction``
        is its least-cost class.
    """
    X, y, n_classes = check_xy(X, y, n_classes, binary=True)
    if X.shape[1] >= MAX_FEATURES:
        raise ValueError(f"MurTree takes fewer than {MAX_FEATURES} tests, got {X.shape[1]}: select or merge tests")
    if isinstance(max_depth, bool) or int(max_depth) != max_depth or not 0 <= max_depth <= _MAX_DEPTH:
        raise ValueError(f"max_depth must be an integer in 0..{_MAX_DEPTH}, got {max_depth!r}")
    depth = int(max_depth)
    full = (1 << depth) - 1
    if max_nodes is None:
        budget = full
    elif int(max_nodes) != max_nodes or max_nodes < 0:
        raise ValueError(f"max_nodes must be a non-negative integer, got {max_nodes!r}")
    else:
        budget = min(int(max_nodes), full)
    if int(min_leaf_support) != min_leaf_support or min_leaf_support < 1:
        raise ValueError(f"min_leaf_support must be an integer >= 1, got {min_leaf_support!r}")
    if sparsity is not None and not (np.isfinite(sparsity) and sparsity >= 0):
        raise ValueError(f"sparsity must be a finite number >= 0, got {sparsity!r}")
    wt = weighted(sample_weight, costs, y, n_classes)
    obj = _Plain(X.shape[0]) if wt.plain else _Weighted(y, n_classes, wt, X.shape[1])
    own = control is None
    if own:
        control = Control().start()
    try:
        return _run(
            X, y, n_classes, depth, budget, int(min_leaf_support), sparsity, front, bool(fewest_splits), control, obj
        )
    finally:
        if own:
            control.stop()


class _Plain:
    """The plain objective: errors counted per class (the kernels' original path)."""

    name = "misclassifications"
    inf = _INF  # an upper bound above every cost

    def __init__(self, n):
        self.n = n
        self.scale = n  # sparsity weighs errors / n

    def kernel_data(self, y, n_classes):
        return y, n_classes, _PLAIN

    def exact(self, e):
        return e

    def leaf(self, counts):
        return int(counts.sum() - counts.max())

    def solution(self, tree, cost):
        return tree, {"errors": cost}


class _Weighted:
    """The weighted objective: rows grouped by class and weight, each group priced per predicted class.

    The kernels count rows per group as they count them per class (bitsets and popcounts), so a leaf's cost is
    the exact ``sum_g count_g * cm[g, p]`` with ``cm[g, p] = w_g * C[class_g, p] / q`` in int64.  ``q`` is 1 when
    every weight and cost is whole; otherwise the power of two that puts the largest possible total at 2**50, and
    ``cm`` is rounded to whole quanta: a cost is then off by at most half a quantum per row (about ``n * 2**-51``
    of the total, the size of float64 summation's own error) and every comparison of the search is exact (no
    split wins by a rounding error).  Reported costs are recomputed with the given weights.  Class weights alone
    make one group per class.
    """

    name = "cost"

    def __init__(self, y, n_classes, wt: Weighting, n_tests):
        w = wt.row_weights(y.shape[0])
        self.costs = wt.cost_matrix(n_classes)
        keys, groups = np.unique(np.stack([y.astype(np.float64), w], axis=1), axis=0, return_inverse=True)
        self.groups = np.ascontiguousarray(groups.reshape(-1), dtype=np.int64)
        self.gy = keys[:, 0].astype(np.int64)  # each group's class and weight
        self.gw = keys[:, 1]
        n_groups = self.gy.shape[0]
        if n_groups * n_tests * n_tests * 4 > _PAIR_BYTES:
            raise ValueError(
                f"murtree: {n_groups} distinct (class, weight) pairs over {n_tests} tests need "
                f"{n_groups * n_tests * n_tests * 4 / 2**30:.1f} GB of pair counts: round the weights to fewer "
                "distinct values or select fewer tests"
            )
        total = float(w.sum())
        if not total > 0:
            raise ValueError("murtree: every sample weight is 0: give some rows a positive weight")
        if total * float(self.costs.max(initial=0.0)) >= 1e300:
            raise ValueError("murtree: weights times costs overflow float64: scale the weights or costs down")
        cm = self.gw[:, None] * self.costs[self.gy]
        worst = float(np.sum(w * self.costs.max(axis=1)[y]))  # no cost of any tree exceeds it
        self.quantum = 1.0 if wt.integral or worst == 0 else 2.0 ** (np.ceil(np.log2(worst)) - 50)
        self.cm = np.ascontiguousarray(np.rint(cm / self.quantum).astype(np.int64))
        self.inf = _INF
        self.scale = Fraction(total)  # sparsity weighs cost / total weight
        self.n_classes = n_classes
        self.member = np.zeros((n_groups, n_classes), dtype=np.int64)
        self.member[np.arange(n_groups), self.gy] = 1

    def kernel_data(self, y, n_classes):
        return self.groups, self.gy.shape[0], self.cm

    def exact(self, e):
        return Fraction(int(e)) * Fraction(self.quantum)

    def leaf(self, counts):
        return leaf_cost(counts, counts.shape[0], self.cm)  # the kernels' order of summation

    def solution(self, tree, cost):
        """The tree with class counts and least-cost predictions; its info: misclassified rows and cost."""
        value, pred, errors, total = self.batch(tree.value[None], (tree.feature < 0)[None])
        out = RawTree(tree.feature, tree.threshold, tree.left, tree.right, value[0], prediction=pred[0])
        return out, {"errors": int(errors[0]), "cost": float(total[0])}

    def batch(self, counts, leaves):
        """Trees of one node count at once: group counts ``counts`` (trees x nodes x groups) and their ``leaves``
        (trees x nodes, bool) to class counts, least-cost predictions (lowest class on ties, as
        ``_objective.leaf_prediction``), misclassified rows and cost (recomputed with the given weights) of
        each tree."""
        per = leaf_costs((counts * self.gw) @ self.member, self.costs)  # each node's cost of each prediction
        pred = per.argmin(axis=2)  # the first minimum: the lowest class on ties, as leaf_prediction
        value = counts @ self.member
        at = np.take_along_axis(per, pred[..., None], axis=2)[..., 0]
        right = np.take_along_axis(value, pred[..., None], axis=2)[..., 0]
        errors = np.where(leaves, value.sum(axis=2) - right, 0).sum(axis=1)
        total = np.where(leaves, at, 0.0).sum(axis=1)
        return value, pred, errors, total


def _run(X, y, n_classes, depth, budget, min_leaf, sparsity, front, fewest_splits, control, obj):
    n = X.shape[0]
    ky, kc, cm = obj.kernel_data(y, n_classes)
    ws, h1, h2 = _workspace(X, ky, kc, depth, budget, min_leaf, control, _CACHE_BITS, cm)
    found = []  # (errors, budget, tree, optimal)
    control.watch("murtree", COUNTERS)
    try:
        if not front and sparsity is None:
            _single(ws, n, h1, h2, depth, budget, fewest_splits, found, obj)
            upto = budget
        else:
            upto = _front(ws, n, h1, h2, depth, budget, sparsity, found, control, obj)
    finally:
        control.unwatch()
    sols = _solutions(found, obj, upto, sparsity, front)
    if sparsity is not None and control.stopped:
        sols[0].optimal = False  # a budget that could still win was not searched
    stats = {
        "cache_entries": int(ws.meta[0]),
        "depth2_calls": int(control.counters[2]),
        "nodes_searched": int(control.counters[3]),
        "max_depth": depth,
        "max_nodes": budget,
    }
    return RawFront(sols, obj.name, control.status(), stats)


def _interrupted(ws, n, h1, h2, depth, b, found):
    """After a stop while solving budget ``b``: keep the root's incumbent if it beats what we have."""
    st = ws.status
    if st[2] >= 0 and (not found or st[1] < found[-1][0]):
        tree = _tree(ws, n, h1, h2, depth, b, force=(int(st[2]), int(st[3])))
        if tree is not None:
            found.append((st[1].item(), b, tree, False))


def _front(ws, n, h1, h2, depth, budget, sparsity, found, control, obj):
    """Budgets 0..K in turn; a tree is kept when its error is strictly below the previous budget's.

    Returns the largest budget up to which the front is proven.
    """
    found.append((obj.leaf(ws.cnts[0]), 0, RawTree.leaf(ws.cnts[0]), True))
    floor = -1  # the full budget's error: once reached, larger budgets add nothing
    for b in range(1, budget + 1):
        if b == 4 and sparsity is None and budget > 4 and found[-1][0] > 0:
            # solve the full budget early: its optima bound every smaller budget of the same subproblem
            floor = _solve_budget(ws, n, h1, h2, depth, budget, obj.inf)
            if floor < 0:
                _interrupted(ws, n, h1, h2, depth, budget, found)
                return b - 1
        if found[-1][0] == floor:
            break
        if sparsity is not None:
            # a tree with b or more splits costs at least sparsity * b: stop once that cannot win
            a = Fraction(sparsity)
            if a * b >= min(obj.exact(e) / obj.scale + a * t.n_splits for e, _, t, _ in found):
                break
        if found[-1][0] == 0:
            break  # nothing beats a perfect tree
        err = _solve_budget(ws, n, h1, h2, depth, b, obj.inf)
        if err < 0:
            _interrupted(ws, n, h1, h2, depth, b, found)
            return b - 1
        if err < found[-1][0]:
            found.append((err, b, _tree(ws, n, h1, h2, depth, b), True))
            if control.progress is not None:  # the front so far, for a caller drawing a provisional front
                control.report(
                    "murtree", budget=b, partial=RawFront(_solutions(found, obj, b, None, True), obj.name, "running")
                )
        control.counters[0] = b
    return budget


def _single(ws, n, h1, h2, depth, budget, fewest_splits, found, obj):
    """The fewest errors for ``K`` splits; then (binary search) the fewest splits reaching them."""
    found.append((obj.leaf(ws.cnts[0]), 0, RawTree.leaf(ws.cnts[0]), True))
    for b in sorted({min(budget, 3), budget}):  # a cheap depth-2 tree first, for the anytime case
        if b == 0 or found[-1][0] == 0:
            continue
        err = _solve_budget(ws, n, h1, h2, depth, b, obj.inf)
        if err < 0:
            _interrupted(ws, n, h1, h2, depth, b, found)
            e, bb, tree, _ = found[-1]
            found[:] = [(e, bb, tree if tree is not None else _tree(ws, n, h1, h2, depth, bb), False)]
            return
        ws.counters[0] += 1  # budgets done
        if err < found[-1][0]:
            found.append((err, b, None, True))
    best, hi, tree, _ = found[-1]
    lo = found[-2][1] if len(found) > 1 else 0  # E(lo) > best: the fewest splits lie in (lo, hi]
    if hi > 0:
        tree = _tree(ws, n, h1, h2, depth, hi)
        hi = tree.n_splits  # E(splits of the tree) = best already
    proven = True
    if fewest_splits:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            err = _solve_budget(ws, n, h1, h2, depth, mid, best)
            if err < 0:
                proven = False
                break
            ws.counters[0] += 1
            if err <= best:
                hi = mid
            else:
                lo = mid
    if tree is None or tree.n_splits != hi:
        tree = RawTree.leaf(ws.cnts[0]) if hi == 0 else _tree(ws, n, h1, h2, depth, hi)
    found[:] = [(best, hi, tree, proven)]


def _solutions(found, obj, upto, sparsity, front):
    errors = [obj.exact(f[0]) for f in found]
    splits = [f[2].n_splits for f in found]
    hull = hull_flags(errors, splits, obj.scale)
    sols = []
    for i, (cost, b, tree, optimal) in enumerate(found):
        # budgets this tree is optimal for: up to the next tree's, or as far as the front is proven
        nxt = found[i + 1][1] - 1 if i + 1 < len(found) else (upto if optimal else b)
        tree, facts = obj.solution(tree, cost)
        info = {"budget": b, "budget_max": nxt, **facts, "splits": splits[i]}
        if front or sparsity is not None:  # hull facts need the front (a single tree has none)
            info["on_hull"] = hull[i][0]
        if "on_hull" in info and hull[i][0]:
            info["alpha_lo"] = float(hull[i][1])
            info["alpha_hi"] = None if hull[i][2] is None else float(hull[i][2])
        sols.append(RawSolution(tree, optimal, info))
    if sparsity is not None:
        i = _alpha_choice(errors, splits, obj.scale, sparsity)
        sols[i].info["objective"] = float(errors[i] / obj.scale) + sparsity * splits[i]
        sols[i].info["sparsity"] = sparsity
        return [sols[i]]
    if not front:
        return [sols[-1]]
    return sols
