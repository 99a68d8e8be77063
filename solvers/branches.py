"""BRANCHES: optimal sparse decision trees on binary tests (Chaouki, Read & Bifet).

The objective is ``accuracy - lambda * splits`` on the training rows with no depth limit unless one is
given.  The search is a best-first dynamic programme with branch-and-bound over *branches*
(conjunctions of tests) with the paper's purification bound; see ``solvers._kernels.branches``.

Memo key
--------
Branches are memoised by their canonical sorted conjunction of ``(test, side)`` literals, as in the
paper, not by the bitset of their rows.  The literal set fixes both what matters for a branch's optimum
-- its rows and, under a depth limit, its remaining depth (the number of literals) -- so it is a sound
key in both modes; it costs O(1) per child (an incremental Zobrist hash) instead of O(n/64), and keeps
iteration counts comparable with the paper.  A row-bitset key would merge more branches (different
conjunctions selecting the same rows) but would need the remaining depth in the key and n/64 words of
memory per branch.

Multiway splits
---------------
The paper's advantage on categorical features: given ``groups`` (sets of one-hot tests of one
categorical column, each set partitioning the rows), a group with at least 3 categories among a
branch's rows is one more action of that branch, a *multiway* split with one child per category, which
costs λ ONCE like any split.  The child of category ``c`` is the branch with the literal "test c = 1",
so the lattice, the memo and the purification bound (``rows - cost`` for any split) are unchanged, and
the one-vs-rest binary tests stay available: the optimum with multiway splits is never worse than
without.  A group of two categories present is the same partition as a binary test and is left to it,
unless both are ``group_only`` tests: tests that exist only as branches of their group's multiway split
(never binary splits), which lets a caller complete a group a discretizer kept only some tests of.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._base import Control, RawFront, RawSolution, RawTree, check_xy
from ._incumbent import GreedyIncumbent
from ._kernels.branches import branches_search
from ._kernels.predict import node_counts
from ._objective import Weighting, leaf_prediction, tree_cost, weighted

__all__ = ["fit_branches", "branches_front", "check_groups", "DEFAULT_LAMBDAS", "OBJECTIVE"]

OBJECTIVE = "accuracy - lambda * splits"
# The weighted path's front objective (each tree's ``info["objective"]`` is ``cost / total weight + lambda * splits``)
WEIGHTED_OBJECTIVE = "cost"
# Weights and costs are read as the fraction of smallest denominator (at most this) that rounds to each value
_MAX_DENOMINATOR = 10**6
_INT_LIMIT = 2**31 - 1  # the search stores values in int32
# Sweep grid of the front, largest (cheapest to solve) first; filtered to values >= the caller's sparsity.
DEFAULT_LAMBDAS = (0.2, 0.1, 0.05, 0.03, 0.02, 0.015, 0.01, 0.007, 0.005, 0.003, 0.002, 0.001)
_NO_LIMIT = 2**31
DEFAULT_MEMORY_MB = 2000
_ZOBRIST_SEED = 20240607


def _check_lambda(lam, name: str = "sparsity") -> float:
    try:
        lam = float(lam)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1], got {lam!r}") from None
    if not (math.isfinite(lam) and 0.0 <= lam <= 1.0):
        raise ValueError(f"{name} must be in [0, 1] (cost of one split in accuracy), got {lam!r}")
    return lam


def _check_depth(max_depth) -> int:
    if max_depth is None:
        return _NO_LIMIT
    if isinstance(max_depth, bool) or int(max_depth) != max_depth or max_depth < 0:
        raise ValueError(f"max_depth must be a non-negative integer or None, got {max_depth!r}")
    return int(max_depth)


def parse_lambdas(lambdas) -> list[float]:
    """λ values of a sweep, checked, deduplicated and sorted from the largest down.

    Parameters
    ----------
    lambdas : str or iterable of float
        A comma-separated string ("0.1, 0.01") or numbers, each in [0, 1].

    Returns
    -------
    list of float
    """
    if isinstance(lambdas, str):
        parts = [s.strip() for s in lambdas.split(",") if s.strip()]
    else:
        parts = list(lambdas)
    if not parts:
        raise ValueError("lambdas is empty; give comma-separated values in [0, 1], e.g. 0.05,0.01")
    return sorted({_check_lambda(v, "each lambda") for v in parts}, reverse=True)


def _zobrist(p: int) -> np.ndarray:
    rng = np.random.default_rng(_ZOBRIST_SEED)
    return rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=2 * p, dtype=np.int64)


def _check_memory(memory_mb) -> int:
    if isinstance(memory_mb, bool) or not (isinstance(memory_mb, (int, float)) and memory_mb >= 1):
        raise ValueError(f"memory_mb must be a number of megabytes >= 1, got {memory_mb!r}")
    return int(memory_mb * 2**20)


def check_groups(X, groups, group_only=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR arrays ``(gstart, gtests)`` of the one-hot groups offered as multiway splits, and the mask of
    the tests that are not binary splits.

    Parameters
    ----------
    X : uint8 array of shape (n, p)
        The 0/1 tests.
    groups : sequence of sequences of int, or None
        Each group lists the tests (columns of ``X``) of one categorical column; every row must have
        exactly one of them at 1.  Groups of fewer than 3 tests are ignored (they are binary tests).
    group_only : sequence of int, optional
        Tests (in some group) that may only be branches of their group's multiway split, e.g. categories
        a discretizer did not select, added to complete a group.

    Returns
    -------
    gstart, gtests, only : int64 arrays
    """
    gstart, gtests, seen = [0], [], set()
    for g in groups or ():
        g = [int(a) for a in g]
        if len(g) < 3:
            continue
        if any(not 0 <= a < X.shape[1] for a in g) or seen & set(g) or len(set(g)) != len(g):
            raise ValueError(f"multiway group {g}: tests must be distinct columns of X in one group only")
        if np.any(X[:, g].sum(axis=1, dtype=np.int64) != 1):
            raise ValueError(f"multiway group {g}: its tests must partition the rows (one 1 per row)")
        seen |= set(g)
        gtests += g
        gstart.append(len(gtests))
    only = np.zeros(X.shape[1], dtype=np.int64)
    for a in group_only or ():
        if int(a) not in seen:
            raise ValueError(f"group_only test {a} is in no multiway group of 3 or more tests")
        only[int(a)] = 1
    return np.asarray(gstart, dtype=np.int64), np.asarray(gtests, dtype=np.int64), only


@dataclass
class _Whole:
    """The weighted objective as the kernel takes it: whole weights and costs, scaled.

    ``keep`` are the rows of positive weight (a row of weight 0 changes no cost), ``wrow`` their whole weights,
    ``Ci`` the whole costs; the float objective is ``cost_whole / scale`` with ``scale`` the product of the two
    scalings, and ``total`` the whole weight of every row.
    """

    wt: Weighting
    keep: np.ndarray
    wrow: np.ndarray
    Ci: np.ndarray
    cost_scale: float  # whole costs per unit of cost (``Ci = cost_scale * C``)
    total: int
    top: int  # sum of every row's largest whole cost: the kernel's values lie in 0..top


def _fractions(values, what: str):
    """Each distinct value as an exact fraction of small denominator, or a one-line refusal."""
    out = {}
    for v in np.unique(values):
        fr = Fraction(float(v)).limit_denominator(_MAX_DENOMINATOR)
        if float(fr) != float(v):
            raise ValueError(
                f"branches needs {what} that are whole numbers or simple fractions (as class_weight='balanced' "
                f"gives); {float(v)!r} is neither: round them, or use contree or murtree (exact for any weights)"
            )
        out[float(v)] = fr
    return out


def _whole(wt: Weighting, y, n_classes) -> _Whole:
    """Whole weights and costs with the same optimum (weights and costs each scaled by one positive factor)."""
    w = wt.row_weights(y.shape[0])
    C = wt.cost_matrix(n_classes)
    keep = np.flatnonzero(w > 0)
    if keep.size == 0:
        raise ValueError("every sample weight is 0: give some rows a positive weight")
    fw, fc = _fractions(w[keep], "sample weights"), _fractions(C, "costs")
    dw = math.lcm(*(f.denominator for f in fw.values()))
    dc = math.lcm(*(f.denominator for f in fc.values()))
    nw = [int(f * dw) for f in fw.values()]
    nc = [int(f * dc) for f in fc.values()]
    gw = math.gcd(*nw) or 1
    gc = math.gcd(*nc) or 1
    wrow = np.array([int(fw[float(v)] * dw) // gw for v in w[keep]], dtype=np.int64)
    Ci = np.array([[int(fc[float(v)] * dc) // gc for v in row] for row in C], dtype=np.int64)
    top = int(np.sum(wrow * Ci.max(axis=1)[y[keep]]))
    total = int(wrow.sum())
    if max(top, total) > _INT_LIMIT:
        raise ValueError(
            f"branches: these weights and costs need {max(top, total):,} whole units, over its limit of 2**31; "
            "use simpler weights (fewer distinct fractions) or contree or murtree"
        )
    return _Whole(wt, keep, wrow.astype(np.int32), Ci, dc / gc, total, top)


def _node_masses(tree: RawTree, X, y, w, n_classes) -> np.ndarray:
    """Class masses (sums of row weights) at every node of a tree on 0/1 tests, multiway nodes included."""
    out = np.zeros((tree.n_nodes, n_classes))
    stack = [(0, np.ones(X.shape[0], dtype=bool))]
    while stack:
        k, rows = stack.pop()
        out[k] = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        if tree.is_multi(k):
            for r in range(tree.multi_offsets[k], tree.multi_offsets[k + 1]):
                stack.append((tree.multi_children[r], rows & (X[:, tree.multi_tests[r]] == 1)))
        elif tree.feature[k] >= 0:
            on = X[:, tree.feature[k]] == 1
            stack.append((tree.left[k], rows & ~on))
            stack.append((tree.right[k], rows & on))
    return out


def _weighted_info(tree: RawTree, X, y, n_classes, lam, whole: _Whole, res) -> dict:
    """Weighted path: set each node's least-cost class and return the tree's facts; checks the kernel's value."""
    ub, lb, complete = res
    wt = whole.wt
    C = wt.cost_matrix(n_classes)
    masses = _node_masses(tree, X, y, wt.row_weights(y.shape[0]), n_classes)
    tree.prediction = np.array([leaf_prediction(m, C)[0] for m in masses], dtype=np.int64)
    leaves = tree.feature < 0
    yhat = np.empty(y.shape[0], dtype=np.int64)
    ends = _leaf_of(tree, X)
    yhat[:] = tree.prediction[ends]
    cost = tree_cost(y, yhat, wt, n_classes)
    total = float(wt.row_weights(y.shape[0]).sum())
    splits = tree.n_splits
    # the kernel's value of this tree in whole units (its own least-cost leaves), against its bounds
    wi = np.zeros(y.shape[0], dtype=np.int64)
    wi[whole.keep] = whole.wrow
    imass = _node_masses(tree, X, y, wi.astype(np.float64), n_classes)[leaves]
    cost_whole = float((imass @ whole.Ci).min(axis=1).sum())
    scale = whole.cost_scale * whole.total
    per_split = lam * scale
    value = whole.top - cost_whole - per_split * splits
    eps = 1e-9 * (whole.top + 1.0)
    if value < lb - eps or (complete and value > lb + eps):
        raise AssertionError(f"BRANCHES weighted tree value {value} does not match its bound {lb}")
    info = {
        "lambda": lam,
        "objective": cost / total + lam * splits,
        "cost": cost,
        "accuracy": float(np.count_nonzero(yhat == y)) / y.shape[0],
        "splits": splits,
    }
    if not complete:
        info["lower_bound"] = (whole.top - float(ub)) / scale  # no tree has a smaller objective
    return info


def _leaf_of(tree: RawTree, X) -> np.ndarray:
    """The leaf each row of a 0/1 matrix reaches (multiway nodes by their branch tests)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    stack = [(0, np.arange(X.shape[0]))]
    while stack:
        k, rows = stack.pop()
        if tree.is_multi(k):
            for r in range(tree.multi_offsets[k], tree.multi_offsets[k + 1]):
                stack.append((tree.multi_children[r], rows[X[rows, tree.multi_tests[r]] == 1]))
        elif tree.feature[k] >= 0:
            on = X[rows, tree.feature[k]] == 1
            stack.append((tree.left[k], rows[~on]))
            stack.append((tree.right[k], rows[on]))
        else:
            out[rows] = k
    return out


def _score(info: dict, lam: float) -> float:
    """A tree's objective at ``lam`` as the search maximises it (the weighted one negated)."""
    if "cost" in info:
        return -(info["objective"] - info["lambda"] * info["splits"] + lam * info["splits"])
    return info["accuracy"] - lam * info["splits"]


def _raw_tree(X, y, n_classes, feature, left, right, m_first, m_len, m_child, m_test) -> RawTree:
    """The kernel's arrays as a RawTree with training counts (multiway nodes walked here, by masks)."""
    n_nodes = feature.shape[0]
    threshold = np.where(feature >= 0, 0.5, 0.0)
    if m_child.shape[0] == 0:
        # only the tested columns as floats: the whole matrix would be 8 bytes a cell (18 GB for the exact
        # discretizer's 150,000 tests on 15,000 rows)
        used = np.unique(feature[feature >= 0])
        local = np.where(feature >= 0, np.searchsorted(used, feature), -1)
        Xf = np.ascontiguousarray(X[:, used], dtype=np.float64)
        value = node_counts(local, threshold, left, right, Xf, y, n_classes)
        return RawTree(feature, threshold, left, right, value)
    offsets = np.zeros(n_nodes + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(m_len)
    order = np.concatenate([np.arange(m_first[k], m_first[k] + m_len[k]) for k in range(n_nodes)])
    children, tests = m_child[order], m_test[order]
    value = np.zeros((n_nodes, n_classes), dtype=np.int64)
    stack = [(0, np.ones(X.shape[0], dtype=bool))]
    while stack:
        k, rows = stack.pop()
        value[k] = np.bincount(y[rows], minlength=n_classes)
        if m_len[k] > 0:
            for r in range(offsets[k], offsets[k + 1]):
                stack.append((children[r], rows & (X[:, tests[r]] == 1)))
        elif feature[k] >= 0:
            on = X[:, feature[k]] == 1
            stack.append((left[k], rows & ~on))
            stack.append((right[k], rows & on))
    return RawTree(
        feature, threshold, left, right, value, multi_offsets=offsets, multi_children=children, multi_tests=tests
    )


def _memory_note(max_bytes, n_branches) -> str:
    return (
        f"memory budget of {max_bytes / 2**20:.0f} MB reached after {n_branches} branches "
        "(raise memory_mb, sparsity or give a max_depth)"
    )


def _solve(
    X, y, n_classes, lam, depth, control, zob, max_bytes, gstart, gtests, only, greedy=None, whole=None
) -> RawSolution:
    n = X.shape[0]
    control.watch(f"branches lambda={lam:g}", ("iterations", "branches", "expansions"))
    try:
        rows, weights, per_split = (X, y), (), lam * n
        if whole is not None:  # only the rows of positive weight; the objective in whole units (see ``_whole``)
            rows = (np.ascontiguousarray(X[whole.keep]), np.ascontiguousarray(y[whole.keep]))
            weights, per_split = (whole.wrow, whole.Ci), lam * whole.cost_scale * whole.total
        (feature, left, right, m_first, m_len, m_child, m_test, ub, lb, complete, oom, iters, n_exp, n_br) = (
            branches_search(
                *rows,
                n_classes,
                per_split,
                depth,
                zob,
                max_bytes,
                control.flag,
                control.counters,
                gstart,
                gtests,
                only,
                *weights,
            )  # fmt: skip
        )
    finally:
        control.unwatch()
    tree = _raw_tree(X, y, n_classes, feature, left, right, m_first, m_len, m_child, m_test)
    if whole is not None:
        info = _weighted_info(tree, X, y, n_classes, lam, whole, (ub, lb, complete))
        info.update(iterations=int(iters), expansions=int(n_exp), branches=int(n_br))
        info["multiway_splits"] = int(np.count_nonzero(m_len))
        if oom:
            info["stopped"] = _memory_note(max_bytes, n_br)
        return RawSolution(tree, bool(complete), info)
    value = tree.value
    leaves = tree.feature < 0
    correct = int(value[leaves].max(axis=1).sum())
    splits = tree.n_splits
    objective = correct / n - lam * splits
    info = {
        "lambda": lam,
        "objective": objective,
        "accuracy": correct / n,
        "splits": splits,
        "iterations": int(iters),
        "expansions": int(n_exp),
        "branches": int(n_br),
        "multiway_splits": int(np.count_nonzero(m_len)),
    }
    if not complete:
        info["upper_bound"] = float(ub) / n  # no tree can beat this objective (a proven gap)
        if greedy is not None:  # a stopped search is never worse than the greedy tree
            g_tree, g_obj = greedy.for_lambda(lam)
            if g_obj > objective + 1e-12:
                tree, objective = g_tree, g_obj
                correct, splits = int(g_tree.value[g_tree.feature < 0].max(axis=1).sum()), g_tree.n_splits
                info.update(objective=objective, accuracy=correct / n, splits=splits, multiway_splits=0)
                info["incumbent"] = "greedy (CART on the tests, pruned for lambda): the search had not beaten it"
    if oom:
        info["stopped"] = _memory_note(max_bytes, n_br)
    # The returned tree is worth at least the root's lb (its subtrees may have improved since the root last
    # looked) and exactly lb once proven; anything else would be a bookkeeping bug.
    if objective < lb / n - 1e-7 or (complete and objective > lb / n + 1e-7):
        raise AssertionError(f"BRANCHES tree value {objective} does not match its bound {lb / n}")
    return RawSolution(tree, bool(complete), info)


def _greedy(X, y, n_classes, depth, control=None) -> GreedyIncumbent:
    """The greedy incumbent; with a caller's ``control``, grown now, before the search and under its limit
    (a large one stops with its tree so far), rather than after the limit when the search returns."""
    greedy = GreedyIncumbent(X, y, n_classes, min(depth, _GREEDY_DEPTH), flag=None if control is None else control.flag)
    if control is not None:
        control.report("branches: greedy incumbent")
        greedy._grown()
    return greedy


_GREEDY_DEPTH = 6  # deeper greedy trees rarely survive the λ pruning and cost more to grow


def fit_branches(
    X,
    y,
    sparsity: float = 0.01,
    max_depth: int | None = None,
    n_classes: int | None = None,
    control: Control | None = None,
    memory_mb: float = DEFAULT_MEMORY_MB,
    groups=None,
    group_only=None,
    sample_weight=None,
    costs=None,
) -> RawSolution:
    """The tree maximising ``accuracy - sparsity * splits`` on binary tests.

    Parameters
    ----------
    X : array-like of shape (n, p)
        0/1 tests (bool or integers 0/1); left in the result is the 0 side of a test.
    y : array-like of shape (n,)
        Class indices ``0..n_classes-1`` (any number of classes).
    sparsity : float
        λ in [0, 1]: accuracy given up per split.
    max_depth : int or None
        Depth limit (None: unlimited, the paper's setting).
    n_classes : int, optional
        Number of classes (default ``max(y) + 1``).
    control : Control, optional
        Time limit / cancel; when it stops the search the best tree so far is returned with
        ``optimal=False`` and ``info["upper_bound"]``.
    memory_mb : float
        Budget of the search's store (about 32 bytes per test for every expanded branch, plus about 100
        per stored branch); when it is full the search stops like at a time limit and
        ``info["stopped"]`` says so.
    groups : sequence of sequences of int, optional
        One-hot groups offered as multiway splits (see :func:`check_groups` and the module docstring);
        a multiway split counts as one split.
    group_only : sequence of int, optional
        Tests used only as branches of their group's multiway split (see :func:`check_groups`).
    sample_weight, costs : ndarray of float64, optional
        Row weights ``(n,)`` and ``costs[true, predicted]`` ``(k, k)`` (validated upstream): the tree then
        minimises ``cost / total weight + sparsity * splits`` exactly, ``cost = sum_i w[i] * costs[y[i], yhat[i]]``
        (``info["cost"]``, ``info["objective"]``; ``info["lower_bound"]`` on the objective when stopped).  The
        search counts in whole units: weights and costs must be whole numbers or simple fractions (ValueError
        otherwise), read as the fraction of smallest denominator that rounds to each.

    Returns
    -------
    RawSolution
        ``info`` holds ``lambda``, ``objective``, ``accuracy``, ``splits``, ``multiway_splits``,
        ``iterations``, ``expansions`` and ``branches`` (stored).
    """
    X, y, n_classes = check_xy(X, y, n_classes, binary=True)
    gstart, gtests, only = check_groups(X, groups, group_only)
    lam = _check_lambda(sparsity)
    depth = _check_depth(max_depth)
    max_bytes = _check_memory(memory_mb)
    wt = weighted(sample_weight, costs, y, n_classes)
    whole = None if wt.plain else _whole(wt, y, n_classes)
    own = control is None
    control = control or Control()
    if own:
        control.start()
    try:
        # the greedy incumbent minimises plain errors: the weighted path does without it
        greedy = _greedy(X, y, n_classes, depth, None if own else control) if whole is None else None
        return _solve(
            X, y, n_classes, lam, depth, control, _zobrist(X.shape[1]), max_bytes, gstart, gtests, only, greedy, whole
        )
    finally:
        if own:
            control.stop()


def branches_front(
    X,
    y,
    sparsity: float = 0.01,
    max_depth: int | None = None,
    front: bool = True,
    lambdas=None,
    n_classes: int | None = None,
    control: Control | None = None,
    memory_mb: float = DEFAULT_MEMORY_MB,
    groups=None,
    group_only=None,
    sample_weight=None,
    costs=None,
) -> RawFront:
    """BRANCHES over a λ sweep: each distinct optimal tree once.

    Parameters
    ----------
    X, y, max_depth, n_classes, memory_mb, groups, group_only, sample_weight, costs
        As in :func:`fit_branches` (the memory budget applies to each λ; with weights or costs the front's
        ``objective`` is ``"cost"``).
    sparsity : float
        With ``front=False`` the only λ; with the default grid, the smallest λ of the sweep (the grid
        :data:`DEFAULT_LAMBDAS` keeps the values above it and adds it).
    front : bool
        False: solve for ``sparsity`` only.
    lambdas : str or sequence of float, optional
        Explicit sweep ("0.1,0.02,0.005"); replaces the default grid.
    control : Control, optional
        The time limit covers the whole sweep; λ values are solved from the largest (fastest) down and
        the sweep stops with the best tree so far of the λ being solved.

    Returns
    -------
    RawFront
        One solution per distinct tree; ``info`` gives the λ values it is optimal for (``lambdas``,
        ``lambda_lo``, ``lambda_hi``), ``lambda`` (the largest) and the objective at that λ.
    """
    X, y, n_classes = check_xy(X, y, n_classes, binary=True)
    gstart, gtests, only = check_groups(X, groups, group_only)
    lam = _check_lambda(sparsity)
    depth = _check_depth(max_depth)
    max_bytes = _check_memory(memory_mb)
    if not front:
        grid = [lam]
    elif lambdas is not None:
        grid = parse_lambdas(lambdas)
    else:
        grid = sorted({v for v in DEFAULT_LAMBDAS if v >= lam} | {lam}, reverse=True)
    wt = weighted(sample_weight, costs, y, n_classes)
    whole = None if wt.plain else _whole(wt, y, n_classes)
    objective = OBJECTIVE if whole is None else WEIGHTED_OBJECTIVE
    own = control is None
    control = control or Control()
    if own:
        control.start()
    zob = _zobrist(X.shape[1])
    greedy = _greedy(X, y, n_classes, depth, None if own else control) if whole is None else None
    found: dict = {}
    iterations = 0
    notices = []
    try:
        for lam_k in grid:
            if control.stopped and found:  # the first lambda runs anyway: its root leaf is a best-so-far
                break
            partial = {"partial": RawFront(list(found.values()), objective, "running")} if found else {}
            control.report("branches", lam=lam_k, done=len(found), **partial)  # the front so far
            sol = _solve(X, y, n_classes, lam_k, depth, control, zob, max_bytes, gstart, gtests, only, greedy, whole)
            iterations += sol.info["iterations"]
            t = sol.tree
            key = (
                t.feature.tobytes(),
                t.left.tobytes(),
                t.right.tobytes(),
                None if t.multi_offsets is None else (t.multi_offsets.tobytes(), t.multi_children.tobytes()),
            )
            if sol.optimal and key not in found:
                # Ties: credit λ to a tree already in the front when it is just as good, so the front does
                # not fill with equally scored look-alikes.
                for k, prev in found.items():
                    if prev.optimal and abs(_score(prev.info, lam_k) - _score(sol.info, lam_k)) <= 1e-9:
                        key = k
                        break
            if key in found:
                prev = found[key]
                prev.info["lambdas"].append(lam_k)
                prev.info["lambda_lo"] = lam_k
                prev.optimal = prev.optimal or sol.optimal
                if not sol.optimal:  # only the λ being solved when the time ran out can be unproven
                    prev.info["unproven_lambda"] = lam_k
            else:
                sol.info.update(lambdas=[lam_k], lambda_lo=lam_k, lambda_hi=lam_k)
                found[key] = sol
            if "stopped" in sol.info:  # smaller λ only need more memory: stop the sweep here
                notices.append(
                    f"BRANCHES stopped at lambda={lam_k:g}: {sol.info['stopped']}; that tree is "
                    "the best found, not proven optimal"
                )
                break
    finally:
        if own:
            control.stop()
    sols = list(found.values())
    stats = {"lambdas": grid, "iterations": iterations, "max_depth": max_depth}
    if notices:
        stats["notices"] = notices
    return RawFront(sols, objective, control.status(), stats)
