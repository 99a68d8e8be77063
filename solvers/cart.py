"""CART baseline: greedy trees matching scikit-learn's ``DecisionTreeClassifier`` and their pruning path.

Matching scikit-learn
---------------------
scikit-learn casts ``X`` to float32 before fitting and computes each threshold as
``x[p-1]/2 + x[p]/2`` in float64 from those float32 values.  These functions work on the float64 values
as given, so thresholds are midpoints of the caller's own values.  To reproduce scikit-learn bit for bit
pass ``X.astype(np.float32).astype(np.float64)``; on data whose distinct float64 values stay distinct in
float32 the trees are the same either way (only thresholds differ in the last float32 digits).
Two deliberate differences: ties between equally good splits go to the lowest feature index
(scikit-learn visits features in a random order), and values closer than scikit-learn's 1e-7 are still
treated as distinct.

Weights and costs
-----------------
With ``sample_weight`` (class weights folded in, as scikit-learn folds ``class_weight``) :func:`cart_path`
grows the tree on weighted class masses (``_kernels/cart_weighted.py``: scikit-learn's weighted gini or
entropy, ``min_samples_leaf`` still counting rows) and prunes it by weighted cost complexity (each node's
impurity times its share of the total weight).  A cost matrix does not change the impurity CART splits on: it
labels every node with its class of least cost (``_objective.leaf_prediction``), and each subtree of the path
reports its training cost in ``info["cost"]``.

Missing values
--------------
``X`` may hold NaN (plain and weighted paths, depth-first growth; not ``max_leaves``).  Such a matrix grows in
``_kernels/cart_missing.py``, scikit-learn's rule (>= 1.3): at every node the missing rows of a feature are tried
on both sides of each threshold, and "all present left, missing right" is a candidate too, with threshold
``+inf``; every tree then carries ``missing_left`` (``solvers._base``), 0 at the nodes whose rows have no gap in
the chosen feature.  Ties: the lowest feature, then missing right before missing left, then the lowest
threshold; the proxies compared as floats, strictly better wins (scikit-learn's own test).  A complete matrix
takes the paths above, unchanged, and its trees have ``missing_left = None``.
"""

from __future__ import annotations

import numpy as np

from ._base import Control, RawFront, RawSolution, RawTree, check_xy
from ._kernels.cart import _leaf_only, grow_best_first, grow_depth_first, sorted_rows_stoppable
from ._kernels.cart_missing import grow_missing
from ._kernels.cart_prune import extract_subtree, prune_path, weakest_link_path
from ._kernels.predict import node_counts_missing
from ._objective import Weighting, weighted

__all__ = ["fit_cart", "cart_path", "CRITERIA"]

CRITERIA = {"gini": 0, "entropy": 1}
_NO_LIMIT = 2**31
_NO_BEST_FIRST_MISSING = (
    "cart: max_leaves (best-first growth) does not take missing values (NaN in X) yet; leave max_leaves out"
)


def _missing(X: np.ndarray, leaves: int) -> bool:
    """Whether the checked ``X`` holds NaN (refusing best-first growth, which has no NaN-aware kernel)."""
    has = bool(np.isnan(X).any())
    if has and leaves:
        raise ValueError(_NO_BEST_FIRST_MISSING)
    return has


def _extract(f, t, left, right, value, is_leaf, missing_left) -> RawTree:
    """The subtree keeping the nodes not under an ``is_leaf`` node, as a RawTree (``missing_left`` None: a
    complete matrix's tree, extracted as always)."""
    if missing_left is None:
        return RawTree(*extract_subtree(f, t, left, right, value, is_leaf))
    ids = np.arange(f.shape[0], dtype=np.int64).reshape(-1, 1)
    nf, nt, nl, nr, nv = extract_subtree(f, t, left, right, np.hstack([value, ids]), is_leaf)
    return RawTree(nf, nt, nl, nr, nv[:, :-1], missing_left=missing_left[nv[:, -1]])


def _check_params(max_depth, criterion, min_samples_leaf, max_leaves) -> tuple[int, int, int, int]:
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}; got {criterion!r}")
    if max_depth is not None and (int(max_depth) != max_depth or max_depth < 0):
        raise ValueError(f"max_depth must be a non-negative integer or None, got {max_depth!r}")
    if int(min_samples_leaf) != min_samples_leaf or min_samples_leaf < 1:
        raise ValueError(f"min_samples_leaf must be an integer >= 1, got {min_samples_leaf!r}")
    if max_leaves is not None and (int(max_leaves) != max_leaves or max_leaves < 2):
        raise ValueError(f"max_leaves must be an integer >= 2 or None, got {max_leaves!r}")
    depth = _NO_LIMIT if max_depth is None else int(max_depth)
    leaves = 0 if max_leaves is None else int(max_leaves)
    return depth, CRITERIA[criterion], int(min_samples_leaf), leaves


def build_tree(X, y, idx, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag=None):
    """``cart_build_stoppable`` (see the kernel's parameters) chosen here between depth-first and best-first
    growth: numba then compiles only the growth a run uses (best-first, ``max_leaves``, is rarely asked for)."""
    flag = np.zeros(1, dtype=np.int64) if flag is None else flag
    xc, yc, srt, sorted_all = sorted_rows_stoppable(X, y, idx, flag)
    if not sorted_all:
        return _leaf_only(yc, n_classes)
    if max_leaves <= 0:
        return grow_depth_first(xc, yc, srt, n_classes, max_depth, min_samples_leaf, criterion, flag)
    return grow_best_first(xc, yc, srt, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag)


def fit_cart(
    X,
    y,
    max_depth: int | None = None,
    criterion: str = "gini",
    min_samples_leaf: int = 1,
    max_leaves: int | None = None,
    n_classes: int | None = None,
) -> RawTree:
    """Fit one greedy CART tree.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Numeric features (converted to float64); NaN marks a missing value (see the module docstring).
    y : array-like of shape (n,)
        Class indices ``0..n_classes-1``.
    max_depth : int or None
        Maximum depth (None: grow until leaves are pure or cannot be split).
    criterion : {"gini", "entropy"}
    min_samples_leaf : int
        Minimum number of training rows in each leaf.
    max_leaves : int or None
        When given, grow best-first (largest weighted impurity decrease first) up to this many leaves,
        like scikit-learn's ``max_leaf_nodes``.
    n_classes : int, optional
        Number of classes (default ``max(y) + 1``).

    Returns
    -------
    RawTree
        Node 0 is the root; depth-first trees are numbered in preorder like scikit-learn's.  ``missing_left``
        is set (int64 per node, 1: NaN rows go left) exactly when ``X`` holds NaN.
    """
    X, y, n_classes = check_xy(X, y, n_classes, allow_missing=True)
    depth, crit, msl, leaves = _check_params(max_depth, criterion, min_samples_leaf, max_leaves)
    if _missing(X, leaves):
        f, t, left, right, ml, value, _ = grow_missing(
            X, y, np.ones(X.shape[0]), n_classes, depth, msl, crit, np.zeros(1, dtype=np.int64)
        )
        return RawTree(f, t, left, right, value, missing_left=ml)
    idx = np.arange(X.shape[0], dtype=np.int64)
    f, t, left, right, value, _ = build_tree(X, y, idx, n_classes, depth, leaves, msl, crit)
    return RawTree(f.copy(), t.copy(), left.copy(), right.copy(), value.copy())


def cart_path(
    X,
    y,
    max_depth: int | None = None,
    criterion: str = "gini",
    min_samples_leaf: int = 1,
    max_leaves: int | None = None,
    n_classes: int | None = None,
    control: Control | None = None,
    front: bool = True,
    sample_weight=None,
    costs=None,
) -> RawFront:
    """CART tree and its minimal cost-complexity pruning path, one solution per subtree.

    Parameters
    ----------
    X, y, max_depth, criterion, min_samples_leaf, max_leaves, n_classes
        As :func:`fit_cart`.
    sample_weight : ndarray of float64 (n,), optional
        Row weights (finite, >= 0; checked upstream): the tree grows and is pruned on weighted class masses,
        as scikit-learn's with ``sample_weight`` (see the module docstring; not with ``max_leaves``).
    costs : ndarray of float64 (k, k), optional
        ``costs[true, predicted]``: every node predicts its class of least cost; splits stay on the impurity.
    control : Control, optional
        Time limit / cancel, looked at between nodes while the tree grows (level by level) and between the
        subtrees of the pruning path: a stopped run returns the tree grown so far (its nodes not yet split
        are leaves, ``stats["notices"]`` says so) with status ``"time_limit"`` or ``"cancelled"``.
    front : bool
        False: only the unpruned tree.

    Returns
    -------
    RawFront
        Solution ``j`` is the subtree scikit-learn returns for ``ccp_alpha`` in
        ``[alpha_lo, alpha_hi)`` (``info``: ``alpha_lo``, ``alpha_hi``, ``impurity`` = total weighted
        leaf impurity, ``step``).  Several nodes with the same effective alpha are pruned one at a time,
        as in ``cost_complexity_pruning_path``, giving solutions with ``alpha_lo == alpha_hi``.
        ``optimal`` is always False (CART is greedy).  With weights or costs, ``objective`` is ``"cost"`` and
        each ``info["cost"]`` is the subtree's training cost.
    """
    X, y, n_classes = check_xy(X, y, n_classes, allow_missing=True)
    depth, crit, msl, leaves = _check_params(max_depth, criterion, min_samples_leaf, max_leaves)
    weighting = weighted(sample_weight, costs, y, n_classes)
    missing = _missing(X, leaves)
    if not weighting.plain:
        return _weighted_path(X, y, n_classes, depth, crit, msl, leaves, control, front, weighting, missing)
    idx = np.arange(X.shape[0], dtype=np.int64)
    objective = f"CART ({criterion}) and its cost-complexity pruning path"
    flag = np.zeros(1, dtype=np.int64) if control is None else control.flag
    ml = None
    if control is not None:
        control.watch("cart", ())
    try:
        if missing:
            f, t, left, right, ml, value, _ = grow_missing(X, y, np.ones(X.shape[0]), n_classes, depth, msl, crit, flag)
        else:
            f, t, left, right, value, _ = build_tree(X, y, idx, n_classes, depth, leaves, msl, crit, flag)
    finally:
        if control is not None:
            control.unwatch()
    stopped = control is not None and control.stopped
    status = "done" if control is None else control.status()
    stats = {"n_nodes": int(f.shape[0])}
    if stopped:
        # grown level by level: every node above some depth is split, the nodes not yet split are leaves
        stats["notices"] = [
            f"CART stopped ({status.replace('_', ' ')}) while growing: the tree shown is the tree grown so far "
            f"({int(np.count_nonzero(f >= 0))} splits), its nodes not yet split being leaves"
        ]
    if not front or stopped:
        tree = RawTree(f.copy(), t.copy(), left.copy(), right.copy(), value.copy(), missing_left=ml)
        return RawFront([RawSolution(tree, False, {"alpha_lo": 0.0})], objective, status, stats)
    alphas, imps, pruned = prune_path(left, right, value, crit)
    is_leaf = np.zeros(f.shape[0], dtype=np.bool_)
    sols = []
    for j in range(alphas.shape[0]):
        if pruned[j] >= 0:
            is_leaf[pruned[j]] = True
        if j and j + 1 < alphas.shape[0] and control is not None and control.stopped:
            # out of time while listing the path (a very large tree): keep the subtrees so far and the root
            j = alphas.shape[0] - 1
            is_leaf[:] = True
        hi = float(alphas[j + 1]) if j + 1 < alphas.shape[0] else float("inf")
        info = {"alpha_lo": float(alphas[j]), "alpha_hi": hi, "impurity": float(imps[j]), "step": j}
        sols.append(RawSolution(_extract(f, t, left, right, value, is_leaf, ml), False, info))
        if j == alphas.shape[0] - 1:
            break
    stats["path_length"] = len(sols)
    return RawFront(sols, objective, "done" if control is None else control.status(), stats)


def _weighted_path(
    X, y, n_classes, depth, crit, msl, leaves, control, front, weighting: Weighting, missing=False
) -> RawFront:
    """:func:`cart_path` on weighted rows and/or with a cost matrix (its checked arguments; ``missing``: X holds
    NaN, grown by the NaN-aware kernel)."""
    from ._kernels.cart_weighted import grow_weighted

    if leaves:
        raise ValueError("max_leaves (best-first growth) does not take weights or costs; leave max_leaves out")
    w = weighting.row_weights(X.shape[0])
    C = weighting.cost_matrix(n_classes)
    flag = np.zeros(1, dtype=np.int64) if control is None else control.flag
    if control is not None:
        control.watch("cart", ())
    # rows of weight 0 take no part in the growth (scikit-learn's splitter leaves them out: thresholds,
    # min_samples_leaf and the node sizes are of the weighted rows); they are counted in the nodes afterwards
    pos = w > 0
    some = not pos.all()
    try:
        Xg, yg, wg = (X[pos], y[pos], w[pos]) if some else (X, y, w)
        ml = None
        if missing:
            f, t, left, right, ml, counts, mass = grow_missing(Xg, yg, wg, n_classes, depth, msl, crit, flag)
        else:
            f, t, left, right, counts, mass = grow_weighted(Xg, yg, wg, n_classes, depth, msl, crit, flag)
    finally:
        if control is not None:
            control.unwatch()
    if some:
        if missing:
            counts = node_counts_missing(f, t, left, right, ml, X, y, n_classes)
        else:
            counts = _node_counts(f, t, left, right, X, y, n_classes)
    status = "done" if control is None else control.status()
    stopped = control is not None and control.stopped
    stats = {"n_nodes": int(f.shape[0])}
    node_costs = mass @ C
    prediction = np.argmin(node_costs, axis=1)  # the first least cost: the lowest code on ties
    least = node_costs[np.arange(f.shape[0]), prediction]

    def solution(keep_leaf, info):
        ids = np.arange(f.shape[0], dtype=np.int64).reshape(-1, 1)
        nf, nt, nl, nr, old = extract_subtree(f, t, left, right, ids, keep_leaf)
        old = old[:, 0]
        tree = RawTree(nf, nt, nl, nr, counts[old], prediction[old], missing_left=None if ml is None else ml[old])
        info["cost"] = float(least[old][nf < 0].sum())
        return RawSolution(tree, False, info)

    objective = "cost"
    is_leaf = np.zeros(f.shape[0], dtype=np.bool_)
    if stopped:
        stats["notices"] = [
            f"CART stopped ({status.replace('_', ' ')}) while growing: the tree shown is the tree grown so far "
            f"({int(np.count_nonzero(f >= 0))} splits), its nodes not yet split being leaves"
        ]
    if not front or stopped:
        return RawFront([solution(is_leaf, {"alpha_lo": 0.0})], objective, status, stats)
    from ._kernels.cart import node_impurity

    total = float(mass[0].sum())
    r_node = np.array([mass[k].sum() / total * node_impurity(mass[k], crit) for k in range(f.shape[0])])
    alphas, imps, pruned = weakest_link_path(left, right, r_node, np.ones(f.shape[0]))
    sols = []
    for j in range(alphas.shape[0]):
        if pruned[j] >= 0:
            is_leaf[pruned[j]] = True
        if j and j + 1 < alphas.shape[0] and control is not None and control.stopped:
            j = alphas.shape[0] - 1  # out of time while listing the path: the subtrees so far and the root
            is_leaf[:] = True
        hi = float(alphas[j + 1]) if j + 1 < alphas.shape[0] else float("inf")
        sols.append(
            solution(is_leaf, {"alpha_lo": float(alphas[j]), "alpha_hi": hi, "impurity": float(imps[j]), "step": j})
        )
        if j == alphas.shape[0] - 1:
            break
    stats["path_length"] = len(sols)
    return RawFront(sols, objective, "done" if control is None else control.status(), stats)


def _node_counts(feature, threshold, left, right, X, y, n_classes) -> np.ndarray:
    """The rows of each class reaching every node of a binary tree (``x <= threshold`` goes left): one level at a
    time over all the rows."""
    counts = np.zeros((feature.shape[0], n_classes), dtype=np.int64)
    node = np.zeros(X.shape[0], dtype=np.int64)
    rows = np.arange(X.shape[0])
    while rows.size:
        np.add.at(counts, (node, y[rows]), 1)
        inner = feature[node] >= 0
        rows, node = rows[inner], node[inner]
        go_left = X[rows, feature[node]] <= threshold[node]
        node = np.where(go_left, left[node], right[node])
    return counts
