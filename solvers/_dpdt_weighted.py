"""DPDT on the weighted, cost-sensitive objective (``sample_weight=``, ``costs=``; see :mod:`solvers._objective`).

The same MDP as the plain path (:mod:`solvers.dpdt`), with rows counted by their weights:

* with row weights, a state's tests come from the CART that scikit-learn's ``DecisionTreeClassifier`` grows on
  its rows with ``sample_weight`` (weighted gini or entropy over class masses:
  :func:`_kernels.cart_weighted.grow_weighted`, the weighted CART's own kernel), or from every threshold
  (``exhaustive``); with a cost matrix alone (which does not change the impurity) from the plain generators;
* a leaf costs the least weighted cost of its rows, ``min_p sum_c W[c] C[c, p]``, and predicts that class;
* a test costs the weight of the rows that take it, so ``T / total weight`` is the expected number of tests
  of a sample drawn by weight (integer weights: exactly the plain path's figures on the rows repeated).

Rows of weight 0 take no part (as in the weighted CART): thresholds are midpoints between values of weighted
rows, and they are counted in the trees' nodes afterwards.  The two dynamic programmes (the lower convex hull
of (tests, cost) of every state, and the best tree for every split budget) are those of
``_kernels/dpdt_hull.py`` and ``_kernels/dpdt_budget.py``, here on Python integers: whole weights and costs as
they are, real ones in quanta of 2**-50 of the largest total (:class:`_Problem`), so every comparison is exact;
a tree's reported cost is recomputed from its leaves with the given weights.  Only ``cart``, ``hybrid`` and
``exhaustive`` take row weights (``cart_leaves`` and ``topb`` rank tests on unweighted counts).  The MDP is built
and solved in Python over numba CART fits (one per state): slower than the plain kernels, no threads, no
greedy incumbent or anytime schedule (a stopped run returns the trees of the states expanded so far, the others
being leaves).

Missing values (NaN in ``X``, weighted or not: :func:`solvers.dpdt.dpdt` sends every such matrix here): a state's
tests come from the NaN-aware CART (:func:`_kernels.cart_missing.grow_missing`, scikit-learn's rule), each with
the side its CART node learnt for the missing rows (0, right, where that node's rows had no gap); ``exhaustive``
proposes every threshold with the missing rows on either side and "present vs missing" (threshold ``+inf``,
missing right).  A transition sends a state's NaN rows that way and every tree carries ``missing_left``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._base import RawFront, RawSolution, RawTree
from ._hull import hull_intervals, lower_hull
from ._kernels.cart import feature_ranks_stoppable
from ._kernels.cart_missing import grow_missing
from ._kernels.cart_weighted import grow_weighted
from ._kernels.dpdt_gen import BOTH, GEN_EXHAUSTIVE, GEN_HYBRID, generate_tests
from ._kernels.predict import node_counts, node_counts_missing
from ._objective import Weighting, leaf_prediction

__all__ = ["weighted_dpdt", "WEIGHTED_GENERATORS"]

WEIGHTED_GENERATORS = ("cart", "hybrid", "exhaustive")


class _State:
    """One MDP state: its weighted rows (positions among them, increasing), depth, weight and leaf."""

    __slots__ = ("rows", "depth", "weight", "leaf", "actions")

    def __init__(self, rows, depth, weight, leaf):
        self.rows, self.depth, self.weight, self.leaf = rows, depth, weight, leaf
        # (feature, threshold, left state, right state, left leaf cost, right leaf cost, missing left); states -1:
        # leaves
        self.actions = []


class _Problem:
    """The weighted rows and the integers the MDP counts in.

    ``cm[i, p]`` is row i's cost when predicted ``p`` and ``wq[i]`` its weight, in whole quanta: 1 when every
    weight and cost is whole (:attr:`Weighting.integral`), else the power of two that puts the largest possible
    total at 2**50 (as MurTree's weighted objective).  A quantity is then off by at most half a quantum per row
    (about ``n * 2**-51`` of the total, float64 summation's own error) and every sum and comparison of the two
    dynamic programmes is exact: a split that changes no prediction never wins by a rounding error.
    """

    def __init__(self, X, y, n_classes, wt: Weighting):
        w = wt.row_weights(X.shape[0])
        keep = w > 0
        self.X, self.y, self.w = np.ascontiguousarray(X[keep]), np.ascontiguousarray(y[keep]), w[keep]
        self.C = wt.cost_matrix(n_classes)
        self.missing = bool(np.isnan(self.X).any())
        self.k = n_classes
        total = float(self.w.sum())
        if not total > 0:
            raise ValueError("dpdt: every sample weight is 0: give some rows a positive weight")
        if total * float(self.C.max(initial=0.0)) >= 1e300:
            raise ValueError("dpdt: weights times costs overflow float64: scale the weights or costs down")
        worst = float(np.sum(self.w * self.C.max(axis=1)[self.y]))  # no tree costs more
        self.q = 1.0 if wt.integral or worst == 0 else 2.0 ** (np.ceil(np.log2(worst)) - 50)
        self.qt = 1.0 if wt.integral else 2.0 ** (np.ceil(np.log2(total)) - 50)
        self.cm = np.rint(self.w[:, None] * self.C[self.y] / self.q).astype(np.int64)
        self.wq = np.rint(self.w / self.qt).astype(np.int64)
        # costs alone do not change the impurity CART splits on: the plain generators then propose the tests
        self.ranks = (
            None
            if wt.sample_weight is not None or self.missing
            else feature_ranks_stoppable(self.X, np.zeros(1, np.int64))[0]
        )

    def mass(self, rows):
        return np.bincount(self.y[rows], weights=self.w[rows], minlength=self.k)

    def leaf(self, rows):
        """The least cost of ``rows`` in quanta (a Python int: exact)."""
        return int(self.cm[rows].sum(axis=0).min())

    def state(self, rows, depth):
        return _State(rows, depth, int(self.wq[rows].sum()), self.leaf(rows))

    def best_leaf_split(self, rows):
        """The first least-cost split of ``rows`` into two leaves over every threshold (features, then thresholds,
        in increasing order: the exhaustive generator's), by one cumulative sum per feature
        (``dpdt_gen.best_exhaustive_leaf_split`` of the weighted objective).  ``(f, t, el, er, missing left)`` or
        None.  A feature with missing values at the state also offers its thresholds with the missing rows left
        and "present vs missing" (``t = inf``), in the order of :meth:`tests`."""
        X, cm = self.X[rows], self.cm[rows]
        total = cm.sum(axis=0)
        best = None
        for f in range(X.shape[1]):
            gap = np.isnan(X[:, f]) if self.missing else None
            if gap is not None and gap.any():
                if gap.all():
                    continue
                present = np.flatnonzero(~gap)
                order = present[np.argsort(X[present, f], kind="stable")]
                mm = cm[gap].sum(axis=0)
            else:
                order = np.argsort(X[:, f], kind="stable")
                mm = None
            x = X[order, f]
            cum = np.cumsum(cm[order], axis=0)[:-1]
            cand = np.flatnonzero(x[1:] > x[:-1])
            # (left costs, right costs, missing left) of each candidate, in the generator's order
            sides = [(cum, total - cum, 0)]
            if mm is not None:
                sides += [((total - mm)[None], mm[None], 0), (cum + mm, total - cum - mm, 1)]
            for j, (cl, cr, ml) in enumerate(sides):
                el, er = cl.min(axis=1), cr.min(axis=1)
                at = np.zeros(1, dtype=np.int64) if j == 1 else cand
                if at.size == 0:
                    continue
                i = at[np.argmin(el[at] + er[at])]  # the first least cost: the lowest threshold
                if best is None or el[i] + er[i] < best[2] + best[3]:
                    if j == 1:
                        t = np.inf
                    else:
                        t = x[i] / 2.0 + x[i + 1] / 2.0
                        t = x[i] if t == x[i + 1] or np.isinf(t) else t  # as cart._midpoint
                    best = (f, float(t), int(el[i]), int(er[i]), ml)
        return best

    def tests(self, rows, gen, k, depth, d0, criterion, flag):
        """The tests ``(feature, threshold, missing left)`` proposed at a state (first occurrences, in the
        generator's order); ``k`` as :func:`_kernels.dpdt_gen.generate_tests` takes it."""
        if self.ranks is not None:
            f, t = generate_tests(self.X, self.y, self.ranks, rows, self.k, gen, k, depth, d0, criterion)
            return [(int(a), float(b), 0) for a, b in zip(f, t)]
        X = self.X[rows]
        if gen == GEN_EXHAUSTIVE:
            out = []
            for f in range(X.shape[1]):
                gaps = bool(np.isnan(X[:, f]).any())
                v = np.unique(X[:, f][~np.isnan(X[:, f])]) if gaps else np.unique(X[:, f])
                t = v[:-1] / 2.0 + v[1:] / 2.0
                t = np.where((t == v[1:]) | np.isinf(t), v[:-1], t)  # as cart._midpoint
                out += [(f, float(x), 0) for x in t]
                if gaps and v.size:  # scikit-learn's order: missing right, present vs missing, missing left
                    out += [(f, np.inf, 0)] + [(f, float(x), 1) for x in t]
            return out
        md = 1 if gen == GEN_HYBRID and depth >= d0 else k
        out, seen = [], set()
        for c in (BOTH - 2, BOTH - 1) if criterion == BOTH else (criterion,):
            if self.missing:
                f, t, _, _, ml, _, _ = grow_missing(X, self.y[rows], self.w[rows], self.k, md, 1, c, flag)
            else:
                f, t, _, _, _, _ = grow_weighted(X, self.y[rows], self.w[rows], self.k, md, 1, c, flag)
                ml = np.zeros(f.shape[0], dtype=np.int64)
            for q in range(f.shape[0]):  # split nodes in preorder, as the plain generator lists them
                test = (int(f[q]), float(t[q]), int(ml[q]))
                if f[q] >= 0 and test not in seen:
                    seen.add(test)
                    out.append(test)
        return out


def _build(pb: _Problem, max_depth, gen, k, d0, criterion, max_states, control):
    """The MDP's states, depth by depth (children after parents); ``None`` past ``max_states``."""
    states = [pb.state(np.arange(pb.y.shape[0]), 0)]
    level = [0]
    for d in range(max_depth):
        known = {}  # the rows of a depth's states: identical row sets are one state
        nxt = []
        last = d == max_depth - 1
        control.counters[0], control.counters[3] = d, len(level)
        for j, s in enumerate(level):
            control.counters[1], control.counters[2] = len(states), j
            if control.stopped:
                return states
            st = states[s]
            if st.rows.shape[0] < 2 or st.leaf == 0:
                continue
            best = None
            if last and gen == GEN_EXHAUSTIVE:  # every threshold to two leaves: one pass per feature
                best = pb.best_leaf_split(st.rows)
                if best is not None and best[2] + best[3] < st.leaf:
                    st.actions.append((best[0], best[1], -1, -1, best[2], best[3], best[4]))
                continue
            for f, t, ml in pb.tests(st.rows, gen, k, d, d0, criterion, control.flag):
                rl, rr = _split_rows(pb, st.rows, f, t, ml)
                if last:  # two leaves: every test costs the state's weight, keep the first least-cost one
                    el, er = pb.leaf(rl), pb.leaf(rr)
                    if el + er < st.leaf and (best is None or el + er < best[4] + best[5]):
                        best = (f, t, -1, -1, el, er, ml)
                    continue
                children = []
                for r in (rl, rr):
                    key = r.tobytes()
                    if key not in known:
                        if len(states) >= max_states:
                            return None
                        known[key] = len(states)
                        nxt.append(len(states))
                        states.append(pb.state(r, d + 1))
                    children.append(known[key])
                st.actions.append((f, t, children[0], children[1], 0, 0, ml))
            if best is not None:
                st.actions.append(best)
        level = nxt
    return states


def _hulls(states):
    """Every state's lower convex hull of (tests, cost), children before parents (``dpdt_hull.backward_hulls``):
    vertices ``(T, E, action, left vertex, right vertex)`` by increasing T."""
    hull = [None] * len(states)
    for s in range(len(states) - 1, -1, -1):
        st = states[s]
        cands = [(0, st.leaf, -1, -1, -1)]
        for a, (_, _, left, right, el, er, _) in enumerate(st.actions):
            if left < 0:
                cands.append((st.weight, el + er, a, -1, -1))
                continue
            L, R = hull[left], hull[right]
            i = j = 0
            while True:  # the Minkowski sum: the children's edges merged by slope, steeper first
                cands.append((st.weight + L[i][0] + R[j][0], L[i][1] + R[j][1], a, i, j))
                if i == len(L) - 1 and j == len(R) - 1:
                    break
                if i == len(L) - 1:
                    j += 1
                elif j == len(R) - 1:
                    i += 1
                elif (L[i + 1][1] - L[i][1]) * (R[j + 1][0] - R[j][0]) <= (R[j + 1][1] - R[j][1]) * (
                    L[i + 1][0] - L[i][0]
                ):
                    i += 1
                else:
                    j += 1
        hull[s] = [cands[q] for q in lower_hull([c[0] for c in cands], [c[1] for c in cands])]
    return hull


def _budgets(states, max_depth, k_max):
    """``V_s[b]``: the least ``(cost, tests)`` below every state with at most ``b`` splits, as entries
    ``(E, T, action, left budget, right budget)`` (``dpdt_budget.budget_values``)."""
    val = [None] * len(states)
    for s in range(len(states) - 1, -1, -1):
        st = states[s]
        cap = min(k_max, 2 ** (max_depth - st.depth) - 1, st.rows.shape[0] - 1) if st.actions else 0
        v = [(st.leaf, 0, -1, 0, 0)] * (cap + 1)
        for a, (_, _, left, right, el, er, _) in enumerate(st.actions):
            for b in range(1, cap + 1):
                if left < 0:
                    cand = (el + er, st.weight, a, 0, 0)
                else:
                    L, R = val[left], val[right]
                    cand = None
                    for bl in range(max(0, b - len(R)), min(b - 1, len(L) - 1) + 1):
                        br = b - 1 - bl
                        c = (L[bl][0] + R[br][0], st.weight + L[bl][1] + R[br][1], a, bl, br)
                        if cand is None or c[:2] < cand[:2]:
                            cand = c
                    if cand is None:
                        continue
                if cand[:2] < v[b][:2]:
                    v[b] = cand
        for b in range(1, cap + 1):  # at most b splits: a smaller budget's tree is a candidate
            if v[b - 1][:2] < v[b][:2]:
                v[b] = v[b - 1]
        val[s] = v
    return val


def _tree(pb: _Problem, X, y, n_classes, root, expand):
    """A root-to-leaves walk as a :class:`RawTree` and its training cost (float64, of the given weights):
    ``expand(choice)`` is None at a leaf, else ``(feature, threshold, left choice, right choice)``; each choice
    carries its weighted rows first.  Every node predicts its class of least cost (``leaf_prediction``); with
    missing values (``pb.missing``) ``expand`` gives ``(feature, threshold, missing left, left, right)`` and the tree
    carries ``missing_left``."""
    feature, threshold, left, right, pred, leaf_costs, miss = [], [], [], [], [], [], []
    stack = [(root, -1, False)]
    while stack:
        choice, parent, is_left = stack.pop()
        k = len(feature)
        if parent >= 0:
            (left if is_left else right)[parent] = k
        p, cost = leaf_prediction(pb.mass(choice[0]), pb.C)
        pred.append(p)
        left.append(-1)
        right.append(-1)
        step = expand(choice)
        if step is None:
            leaf_costs.append(cost)
            feature.append(-1)
            threshold.append(0.0)
            miss.append(0)
            continue
        f, t, ml, lc, rc = step
        feature.append(f)
        threshold.append(t)
        miss.append(ml)
        stack += [(rc, k, False), (lc, k, True)]  # the left child next: preorder
    arr = [np.array(a, dtype=np.int64) for a in (feature, left, right, miss)]
    thr = np.array(threshold, dtype=np.float64)
    pred = np.array(pred, dtype=np.int64)
    if not pb.missing:
        value = node_counts(arr[0], thr, arr[1], arr[2], X, y, n_classes)  # every row, weight 0 too
        return RawTree(arr[0], thr, arr[1], arr[2], value, pred), math.fsum(leaf_costs)
    value = node_counts_missing(arr[0], thr, arr[1], arr[2], arr[3], X, y, n_classes)
    return RawTree(arr[0], thr, arr[1], arr[2], value, pred, missing_left=arr[3]), math.fsum(leaf_costs)


def _split_rows(pb, rows, f, t, ml):
    """The rows of a state that a test sends left and right (the NaN rows left when ``ml``)."""
    x = pb.X[rows, f]
    go = x <= t
    if ml:
        go |= np.isnan(x)
    return rows[go], rows[~go]


def weighted_dpdt(X, y, n_classes, wt: Weighting, *, max_depth, gen, generator, k, d0, criterion, max_states,
                  alpha, n_alphas, splits_front, max_splits, control, own):  # fmt: skip
    """:func:`solvers.dpdt.dpdt` on the weighted objective (its checked arguments; ``gen`` and ``criterion`` are the
    kernels' codes).  Returns the front, or None when the MDP needs more than ``max_states`` states."""
    pb = _Problem(X, y, n_classes, wt)
    total = int(pb.wq.sum())
    ratio = pb.q / pb.qt  # an α in quanta of cost per quantum of tests, in cost per unit of tests
    t0 = time.perf_counter()
    control.watch("dpdt: building the MDP", ("depth", "states", "expanded_at_depth", "states_at_depth"))
    try:
        states = _build(pb, max_depth, gen, k, d0, criterion, max_states, control)
    finally:
        control.unwatch()
    if states is None:
        return None
    t_build = time.perf_counter() - t0
    hull = _hulls(states)
    run_status = "done" if own else control.status()
    optimal = gen == GEN_EXHAUSTIVE and run_status == "done"

    def hull_step(choice):
        rows, s, v = choice
        if s < 0 or hull[s][v][2] < 0:
            return None
        f, t, left, right, _, _, ml = states[s].actions[hull[s][v][2]]
        rl, rr = _split_rows(pb, rows, f, t, ml)
        if left < 0:
            return f, t, ml, (rl, -1, 0), (rr, -1, 0)
        return f, t, ml, (rl, left, hull[s][v][3]), (rr, right, hull[s][v][4])

    root = hull[0]
    Ts, Es = [v[0] for v in root], [v[1] for v in root]
    ivals = hull_intervals(Ts, Es)
    lo_r = [float(iv[1]) * ratio for iv in ivals]
    hi_r = [np.inf if iv[2] is None else float(iv[2]) * ratio for iv in ivals]
    chosen = range(len(root))
    if alpha is not None:
        chosen = [q for q in chosen if lo_r[q] <= alpha <= hi_r[q]][:1]
    elif n_alphas is not None:
        grid = np.linspace(0.0, 1.0, n_alphas) if n_alphas > 1 else np.zeros(1)
        chosen = [q for q in chosen if np.any((grid >= lo_r[q]) & (grid <= hi_r[q]))]
    sols, by_point = [], {}
    for q in chosen:
        tree, cost = _tree(pb, X, y, n_classes, (states[0].rows, 0, q), hull_step)
        info = {
            "alpha_lo": lo_r[q],
            "alpha_hi": hi_r[q],
            "objective_at_alpha_lo": (Es[q] * pb.q + lo_r[q] * Ts[q] * pb.qt) / (total * pb.qt),
            "on_hull": True,
            "on_splits_front": False,
            "kind": "hull",
        }
        sols.append(_solution(tree, cost, Es[q], Ts[q], total, optimal, run_status, info))
        by_point[(Es[q], Ts[q], tree.n_splits)] = sols[-1]
    if splits_front and alpha is None and n_alphas is None:
        k_max = 2**max_depth - 1 if max_splits is None else min(max_splits, 2**max_depth - 1)
        val = _budgets(states, max_depth, k_max)

        def budget_step(choice):
            rows, s, b = choice
            if s < 0:
                return None
            e = val[s][min(b, len(val[s]) - 1)]
            if e[2] < 0:
                return None
            f, t, left, right, _, _, ml = states[s].actions[e[2]]
            rl, rr = _split_rows(pb, rows, f, t, ml)
            return f, t, ml, (rl, left, e[3]), (rr, right, e[4])

        v0 = val[0]
        steps = [b for b in range(len(v0)) if b == 0 or v0[b][0] < v0[b - 1][0]]
        for j, b in enumerate(steps):
            tree, cost = _tree(pb, X, y, n_classes, (states[0].rows, 0, b), budget_step)
            hi = steps[j + 1] - 1 if j + 1 < len(steps) else k_max
            key = (v0[b][0], v0[b][1], tree.n_splits)
            if key in by_point:  # a hull tree that is also a step
                by_point[key].info.update(on_splits_front=True, kind="hull+budget", budget=b, budget_max=hi)
                continue
            info = {"on_hull": False, "on_splits_front": True, "kind": "budget", "budget": b, "budget_max": hi}
            sols.append(_solution(tree, cost, v0[b][0], v0[b][1], total, optimal, run_status, info))
    sols.sort(key=lambda sol: sol.info.pop("_exact"))  # the least cost first, then the fewest tests
    per_depth = np.bincount([st.depth for st in states]).tolist()
    stats = {
        "states": len(states),
        "states_per_depth": per_depth,
        "actions": sum(len(st.actions) for st in states),
        "hull_vertices": sum(len(h) for h in hull),
        "build_s": t_build,
        "solve_s": time.perf_counter() - t0 - t_build,
        "generator": generator,
        "weighted": True,
        "greedy_completion": False,
    }
    return RawFront(sols, "cost", run_status, stats)


def _solution(tree, cost, e, t, total, optimal, run_status, info):
    """A front entry: the tree, its cost (float64) and expected tests per unit of weight, its misclassified rows
    (``e``, ``t``: its cost and tests in quanta, to sort by)."""
    leaves = tree.feature < 0
    value = tree.value[leaves]
    errors = int(value.sum() - value[np.arange(value.shape[0]), tree.prediction[leaves]].sum())
    info.update(
        cost=cost,
        expected_tests=t / total,  # whole numbers: the correctly rounded quotient
        _exact=(e, t),
        train_errors=errors,
        splits=tree.n_splits,
        optimal_in_mdp=run_status == "done",
    )
    return RawSolution(tree, optimal, info)
