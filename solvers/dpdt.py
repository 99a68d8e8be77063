"""DPDT: decision-tree search as a Markov decision process (Kohler, Akrour & Preux).

States are (training rows, depth); the actions at a state are the tests proposed by a tests-generating
function, plus "predict the majority class".  A test costs α per row that takes it, a leaf costs its
misclassified rows.  The optimal policy for α is the tree minimising

    train error rate + α · expected number of tests per sample

among the trees whose every test was proposed at its state.  Instead of solving for a grid of α values,
the backward induction keeps each state's value as an exact piecewise-linear function of α (the lower
convex hull of its achievable (tests, errors) pairs, see :mod:`solvers._kernels.dpdt_hull`), so the
front holds every tree on the convex hull of (expected tests, error) with its exact α interval.

Generators: ``cart`` (split nodes of a depth-K CART fitted on the state's rows, the paper's DPDT-K),
``cart_leaves`` (CART with L leaves, the public reference code's variant), ``topb`` (B tests with the
largest impurity decrease), ``exhaustive`` (every threshold: the trees are then optimal among all trees
of that depth) and ``hybrid`` (DPDT-K above depth d0, the greedy CART split below).

Engineering (same trees as the plain algorithm): identical row sets at one depth are one state; at the
last depth every test leads to two leaves and costs the same, so only the test with the fewest errors is
kept: the CART there grows one split at a time and stops as soon as a split reaches the fewest errors of
any threshold (computed in the same pass); those states are independent and solved on several threads;
best-first CARTs search a node's split only when its impurity bound could make it the next one expanded;
a state's rows are sorted by one pass over its parent's sorted rows (two siblings in one pass); a last-depth
state that no threshold can improve is not fitted at all.  Only the convex hull is
returned: trees that are Pareto-optimal but never optimal for any α are not searched for.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from ._base import Control, RawFront, RawSolution, RawTree, check_xy
from ._hull import hull_intervals, lower_hull
from ._kernels.cart import cart_build_ranked_stoppable, feature_ranks_stoppable
from ._kernels.cart_prune import extract_subtree, tests_errors_path
from ._kernels.dpdt_budget import budget_values, extract_budget_tree
from ._kernels.dpdt_gen import BOTH, GEN_CART, GEN_CART_LEAVES, GEN_EXHAUSTIVE, GEN_HYBRID, GEN_TOPB
from ._kernels.dpdt_hull import backward_hulls, extract_tree
from ._kernels.dpdt_mdp import (
    A_ERRL,
    A_ERRR,
    A_FEAT,
    A_LEFT,
    A_RIGHT,
    ST_ACT0,
    ST_ERR,
    ST_NACT,
    ST_SIZE,
    STATUS_MAX_POOL,
    STATUS_MAX_STATES,
    STATUS_OK,
    expand_level,
    last_level_actions,
    level_tests,
    mdp_init,
)
from ._kernels.predict import node_counts
from ._objective import weighted
from .cart import CRITERIA

__all__ = ["dpdt", "GENERATORS", "DPDT_CRITERIA", "MDPTooLarge"]

GENERATORS = {
    "cart": GEN_CART,
    "cart_leaves": GEN_CART_LEAVES,
    "topb": GEN_TOPB,
    "exhaustive": GEN_EXHAUSTIVE,
    "hybrid": GEN_HYBRID,
}
# impurities of the CART / topb generators: cart's, or "both" (every state gets the union of the tests
# of the gini and the entropy generator, so the MDP holds both MDPs' trees)
DPDT_CRITERIA = {**CRITERIA, "both": BOTH}
_COUNTER_NAMES = ("depth", "states", "expanded_at_depth", "states_at_depth", "full_cart_fits")
_MIN_STATES_PER_THREAD = 16  # fewer: a thread costs more than it saves


class MDPTooLarge(ValueError):
    """The MDP would exceed the memory guard (``max_states`` or the row pool)."""


def _check_int(name, value, low):
    if isinstance(value, bool) or int(value) != value or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _chunks(states, weights, jobs):
    """Contiguous runs of ``states`` of about equal total weight: several per thread, so threads that
    draw cheap runs pick up more (the work of a state is only roughly its number of rows)."""
    if jobs == 1 or states.shape[0] < 2 * _MIN_STATES_PER_THREAD:
        return [states]
    n_chunks = min(8 * jobs, states.shape[0] // _MIN_STATES_PER_THREAD * 2)
    cum = np.cumsum(weights, dtype=np.float64)
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, n_chunks) / n_chunks)
    return [c for c in np.split(states, np.unique(cuts)) if c.shape[0]]


def _on_threads(call, chunks, jobs, control):
    """``call(chunk, progress)`` for every chunk, on up to ``jobs`` threads (the kernels release the GIL);
    results in chunk order; ``counters[2]`` follows the states done."""
    progress = [np.zeros(1, dtype=np.int64) for _ in chunks]
    if jobs == 1 or len(chunks) == 1:
        return [call(c, p) for c, p in zip(chunks, progress)]
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        futures = [ex.submit(call, c, p) for c, p in zip(chunks, progress)]
        while wait(futures, timeout=0.05).not_done:
            control.counters[2] = sum(int(p[0]) for p in progress)
        return [f.result() for f in futures]


def _build(X, y, ranks, n_classes, max_depth, gen, k, d0, criterion, zobrist, max_states, max_pool, control, n_jobs):
    """Grow the MDP depth by depth: tests of a depth's states on threads, then their children in order;
    the last depth's best tests on threads.  Returns the hull kernel's inputs and the run's figures."""
    st, act, act_thr, pool = mdp_init(y, n_classes)
    n_states, n_act = 1, 0
    level_start = [0, 1]
    status = STATUS_OK
    stopped = False
    t0 = time.perf_counter()
    pool_par = pool  # the previous depth's rows: a state's order comes from its parent's (_sorted_rows)
    for d in range(max_depth - 1):
        a, b = level_start[d], level_start[d + 1]
        control.counters[0], control.counters[2], control.counters[3] = d, 0, b - a
        states = np.arange(a, b, dtype=np.int64)
        chunks = _chunks(states, st[ST_SIZE, a:b], n_jobs)
        args = (X, y, ranks, n_classes, gen, k, d, d0, criterion, pool, st)
        found = _on_threads(
            lambda c, pr, args=args, pool_par=pool_par: level_tests(*args, c, pool_par, control.flag, pr),
            chunks,
            n_jobs,
            control,
        )
        t_feat = np.concatenate([f for f, _, _ in found])
        t_thr = np.concatenate([t for _, t, _ in found])
        sizes = np.concatenate([np.diff(o) for _, _, o in found])
        t_off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        pool_par = pool
        st, act, act_thr, n_states, n_act, pool, status, stopped = expand_level(
            X,
            y,
            n_classes,
            zobrist,
            a,
            b,
            pool,
            st,
            act,
            act_thr,
            n_states,
            n_act,
            t_feat,
            t_thr,
            t_off,
            max_states,
            max_pool,
            control.flag,
            control.counters,
        )
        level_start.append(n_states)
        if status != STATUS_OK or stopped or control.stopped:
            break
    t_upper = time.perf_counter() - t0
    while len(level_start) < max_depth + 2:
        level_start.append(n_states)
    st = np.ascontiguousarray(st[:, :n_states])  # C-contiguous as at the upper depths: one kernel signature
    st_act0, st_nact = st[ST_ACT0].copy(), st[ST_NACT].copy()
    act_feat, act_left, act_right, act_errl, act_errr = (
        act[r, :n_act].copy() for r in (A_FEAT, A_LEFT, A_RIGHT, A_ERRL, A_ERRR)
    )
    act_thr = act_thr[:n_act].copy()
    if status == STATUS_OK and max_depth >= 1 and not control.stopped:
        d = max_depth - 1
        a, b = level_start[d], level_start[d + 1]
        control.counters[0], control.counters[2], control.counters[3] = d, 0, b - a
        chunks = _chunks(np.arange(a, b, dtype=np.int64), st[ST_SIZE, a:b], n_jobs)
        found = _on_threads(
            lambda c, pr: last_level_actions(
                X, y, ranks, n_classes, gen, k, d, d0, criterion, pool, st, c, pool_par, control.flag, pr
            ),
            chunks,
            n_jobs,
            control,
        )
        control.counters[4] = sum(int(r[4]) for r in found)
        last = tuple(np.concatenate([r[i] for r in found]) for i in range(4))
        (st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl, act_errr) = _append_last_actions(
            last, a, st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl, act_errr
        )
    control.counters[2] = control.counters[3]
    tables = (
        st[ST_SIZE].copy(),
        st[ST_ERR].copy(),
        st_act0,
        st_nact,
        act_feat,
        act_thr,
        act_left,
        act_right,
        act_errl,
        act_errr,
    )
    return tables, np.array(level_start, dtype=np.int64), status, t_upper


def _raw_tree(tree, X, y, n_classes):
    if isinstance(tree, tuple):
        f, t, left, right = tree
        tree = RawTree(f, t, left, right, node_counts(f, t, left, right, X, y, n_classes))
    return tree


def _budget_solutions(tables, level_start, max_depth, k_max, hull_sols, X, y, n_classes, optimal, in_mdp):
    """The steps of the splits front (DP over budgets in the MDP): new solutions, and the hull solutions
    that are also steps marked as such."""
    st_size, st_err, st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl, act_errr = tables
    n = X.shape[0]
    st_depth = np.repeat(np.arange(len(level_start) - 1, dtype=np.int64), np.diff(level_start))[: st_size.shape[0]]
    b_start, b_count, b_E, b_T, b_act, b_bl, b_br = budget_values(
        st_size, st_err, st_act0, st_nact, act_left, act_right, act_errl, act_errr, st_depth, max_depth, k_max
    )
    nb = int(b_count[0])
    steps = [b for b in range(nb) if b == 0 or b_E[b] < b_E[b - 1]]  # root entries are 0 .. nb - 1
    by_point = {(s.info["train_errors"], round(s.info["expected_tests"] * n), s.info["splits"]): s for s in hull_sols}
    max_nodes = 2 * nb + 1
    new = []
    for i, b in enumerate(steps):
        b_hi = steps[i + 1] - 1 if i + 1 < len(steps) else k_max
        e, t = int(b_E[b]), int(b_T[b])
        facts = {"budget": b, "budget_max": b_hi, "on_splits_front": True}
        same = by_point.get((e, t, b))
        if same is not None:  # the hull's tree for this point: the same (errors, tests, splits)
            same.info.update(facts, kind="hull+budget")
            continue
        tree = extract_budget_tree(
            b, act_feat, act_thr, act_left, act_right, b_start, b_count, b_act, b_bl, b_br, max_nodes
        )
        info = {
            "expected_tests": t / n,
            "train_errors": e,
            "splits": b,
            "on_hull": False,
            **facts,
            "kind": "budget",
            "optimal_in_mdp": in_mdp,
        }
        new.append(RawSolution(_raw_tree(tree, X, y, n_classes), optimal, info))
    return new


def _anytime(X, y, kw, cart_depth, control, alpha, n_alphas):
    """DPDT-1, DPDT-2, ... DPDT-``cart_depth`` under one ``control`` (see ``dpdt``'s ``anytime``)."""
    done, k_done, times, guard = None, 0, [], None
    ranks = _stoppable_ranks(X, control)  # sorted once for every K
    incumbent = _greedy_incumbent(X, y, ranks, kw["n_classes"], kw["max_depth"], kw["criterion"], control)
    for kk in range(1, cart_depth + 1):
        t0 = time.perf_counter()
        try:
            front = dpdt(X, y, cart_depth=kk, anytime=False, control=control, _ranks=ranks, _incumbent=incumbent, **kw)
        except MDPTooLarge as exc:
            if done is None:
                raise
            guard, front = str(exc), done  # a larger K does not fit: keep the last complete front
            if alpha is not None or n_alphas is not None:
                front = _merge_fronts([done], X.shape[0], "done", done.stats, kw, alpha, n_alphas)
            break
        finally:
            times.append(time.perf_counter() - t0)
        if front.status == "done":
            done, k_done = front, kk
            continue
        if done is not None:
            front = _merge_fronts([front, done], X.shape[0], front.status, front.stats, kw, alpha, n_alphas)
        break
    else:
        front = done
        if alpha is not None or n_alphas is not None:
            front = _merge_fronts([done], X.shape[0], "done", done.stats, kw, alpha, n_alphas)
    front.stats.update(anytime_k_done=k_done, anytime_k_max=cart_depth, anytime_run_s=times, anytime_guard=guard)
    return front


def _stoppable_ranks(X, control):
    """Every feature's sort (shared by all CART fits), or ``None`` when ``control`` stopped it."""
    ranks, complete = feature_ranks_stoppable(X, control.flag)
    return ranks if complete else None


def _greedy_incumbent(X, y, ranks, n_classes, max_depth, criterion, control) -> RawFront:
    """CART of depth ``max_depth`` and its prunings on the lower hull in (expected tests, errors), grown
    under ``control`` before the MDP: a run stopped by a time limit or a cancel returns the hull of its
    own trees and these, never worse than the greedy baseline (DPDT-1's hull), without any work after the
    stop (a stopped CART keeps its tree so far)."""
    n = X.shape[0]
    crit = CRITERIA["entropy"] if criterion == "entropy" else CRITERIA["gini"]
    if ranks is None:  # stopped while sorting: the root leaf
        trees = [RawTree.leaf(np.bincount(y, minlength=n_classes))]
    else:
        idx = np.arange(n, dtype=np.int64)
        f, t, left, right, value, _ = cart_build_ranked_stoppable(
            X, y, ranks, idx, n_classes, max_depth, 0, 1, crit, control.flag
        )
        alphas, _, pruned = tests_errors_path(left, right, value)
        is_leaf = np.zeros(f.shape[0], dtype=np.bool_)
        trees = []
        for j in range(alphas.shape[0]):
            if pruned[j] >= 0:
                is_leaf[pruned[j]] = True
            trees.append(RawTree(*extract_subtree(f, t, left, right, value, is_leaf)))
    sols = []
    for tree in trees:
        inner = tree.feature >= 0
        info = {
            "expected_tests": float(tree.value[inner].sum()) / n,
            "train_errors": int((tree.value.sum(axis=1) - tree.value.max(axis=1))[~inner].sum()),
            "splits": tree.n_splits,
        }
        sols.append(RawSolution(tree, False, info))
    return RawFront(sols, "greedy CART", "done")


def _merge_fronts(fronts, n, status, stats, kw, alpha, n_alphas):
    """One front from the trees of several fronts on the same data: the convex hull in (tests, errors)
    and the splits staircase recomputed over all of them (``alpha`` / ``n_alphas`` as in ``dpdt``)."""
    sols = [s for f in fronts for s in f.solutions]
    pts = [(round(s.info["expected_tests"] * n), s.info["train_errors"], s.tree.n_splits) for s in sols]
    ivals = hull_intervals([p[0] for p in pts], [p[1] for p in pts])
    verts = sorted((i for i in range(len(sols)) if ivals[i][0]), key=lambda i: -pts[i][0])  # most accurate first
    if alpha is not None:
        verts = [i for i in verts if ivals[i][1] <= alpha <= (ivals[i][2] if ivals[i][2] is not None else np.inf)][:1]
    elif n_alphas is not None:
        grid = np.linspace(0.0, 1.0, n_alphas) if n_alphas > 1 else np.zeros(1)
        verts = [i for i in verts if np.any((grid >= ivals[i][1]) & (grid <= (ivals[i][2] or np.inf)))]
    steps = {}
    if kw["splits_front"] and alpha is None and n_alphas is None:
        k_max = (
            2 ** kw["max_depth"] - 1 if kw["max_splits"] is None else min(kw["max_splits"], 2 ** kw["max_depth"] - 1)
        )
        best = None
        for i in sorted(range(len(sols)), key=lambda i: (pts[i][2], pts[i][1], pts[i][0])):
            if pts[i][2] <= k_max and (best is None or pts[i][1] < pts[best][1]):
                steps[i] = pts[i][2]
                best = i
        bounds = sorted(steps.values())
        hi_of = {b: (bounds[j + 1] - 1 if j + 1 < len(bounds) else k_max) for j, b in enumerate(bounds)}
    out = []
    for i in sorted(set(verts) | set(steps), key=lambda i: (pts[i][1], pts[i][0])):
        t, e, sp = pts[i]
        info = {"expected_tests": t / n, "train_errors": e, "splits": sp, "on_hull": i in verts}
        if i in verts:
            lo, hi = float(ivals[i][1]), (float("inf") if ivals[i][2] is None else float(ivals[i][2]))
            info.update(alpha_lo=lo, alpha_hi=hi, objective_at_alpha_lo=(e + lo * t) / n)
        info["on_splits_front"] = i in steps
        if i in steps:
            info.update(budget=steps[i], budget_max=hi_of[steps[i]])
        info["kind"] = "hull+budget" if i in verts and i in steps else ("hull" if i in verts else "budget")
        info["optimal_in_mdp"] = False
        out.append(RawSolution(sols[i].tree, False, info))
    objective = fronts[0].objective
    return RawFront(out, objective, status, dict(stats))


def _append_last_actions(last, a, st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl, act_errr):
    """Add the last depth's actions (one per state that beats its leaf; children are leaves)."""
    out_f, out_t, out_el, out_er = last
    keep = out_f >= 0
    n_act = act_feat.shape[0]
    st_act0 = st_act0.copy()
    st_nact = st_nact.copy()
    st_act0[a : a + keep.shape[0]] = n_act + np.cumsum(keep) - keep
    st_nact[a : a + keep.shape[0]] = keep
    m = int(keep.sum())
    return (
        st_act0,
        st_nact,
        np.concatenate([act_feat, out_f[keep]]),
        np.concatenate([act_thr, out_t[keep]]),
        np.concatenate([act_left, np.full(m, -1, dtype=np.int64)]),
        np.concatenate([act_right, np.full(m, -1, dtype=np.int64)]),
        np.concatenate([act_errl, out_el[keep]]),
        np.concatenate([act_errr, out_er[keep]]),
    )


def _plain_objective(generator: str) -> str:
    return f"train error rate + α · expected tests per sample, every α (convex hull); tests from {generator}"


def _weighted(X, y, n_classes, wt, max_depth, generator, k, d0, criterion, max_states, alpha, n_alphas,
              splits_front, max_splits, control, missing=False) -> RawFront:  # fmt: skip
    """:func:`dpdt` on the weighted objective (:mod:`solvers._dpdt_weighted`), or on any matrix with missing values
    (``missing``; the plain objective is the weighted one with unit weights)."""
    from ._dpdt_weighted import WEIGHTED_GENERATORS, weighted_dpdt

    if generator not in WEIGHTED_GENERATORS and missing:
        raise ValueError(
            f"dpdt: generator={generator!r} does not take missing values (NaN in X) yet; use generator "
            f"{', '.join(repr(g) for g in WEIGHTED_GENERATORS)}"
        )
    if generator not in WEIGHTED_GENERATORS and wt.sample_weight is not None:
        raise ValueError(
            f"dpdt: generator={generator!r} does not take row or class weights (it ranks tests on unweighted "
            f"counts); use generator {', '.join(repr(g) for g in WEIGHTED_GENERATORS)}"
        )
    own = control is None
    front = weighted_dpdt(
        X, y, n_classes, wt, max_depth=max_depth, gen=GENERATORS[generator], generator=generator,
        k=k, d0=d0, criterion=DPDT_CRITERIA[criterion], max_states=max_states, alpha=alpha,
        n_alphas=n_alphas, splits_front=splits_front, max_splits=max_splits, control=control or Control(), own=own,
    )  # fmt: skip
    if front is None:
        raise MDPTooLarge(
            f"DPDT's MDP needs more than max_states={max_states} states; lower cart_depth or max_depth, or use "
            "generator='hybrid' (DPDT-K near the root, greedy below)"
        )
    return front


def dpdt(
    X,
    y,
    max_depth: int = 3,
    generator: str = "cart",
    cart_depth: int = 3,
    cart_leaves: int = 32,
    top_b: int = 8,
    hybrid_depth: int = 2,
    criterion: str = "gini",
    max_states: int = 10**6,
    max_pool: int = 5 * 10**7,
    n_alphas: int | None = None,
    alpha: float | None = None,
    splits_front: bool = True,
    max_splits: int | None = None,
    n_classes: int | None = None,
    control: Control | None = None,
    seed: int = 0,
    n_jobs: int | None = None,
    anytime: bool | None = None,
    sample_weight=None,
    costs=None,
    _ranks: np.ndarray | None = None,
    _incumbent: RawFront | None = None,
) -> RawFront:
    """Build DPDT's MDP on ``(X, y)`` and return every tree of the lower convex hull of (tests, error).

    Parameters
    ----------
    X : array-like of shape (n, p)
        Numeric features.
    y : array-like of shape (n,)
        Class indices ``0..n_classes-1``.
    max_depth : int
        Horizon of the MDP: maximum depth of the trees.
    generator : {"cart", "cart_leaves", "topb", "exhaustive", "hybrid"}
        Tests-generating function (see the module docstring).
    cart_depth : int
        Depth K of the CART fitted at each state (``cart`` and ``hybrid``).
    cart_leaves : int
        Leaves of the best-first CART fitted at each state (``cart_leaves``).
    top_b : int
        Number of tests proposed at each state (``topb``).
    hybrid_depth : int
        ``hybrid``: states shallower than this use DPDT-K, deeper ones one greedy CART split.
    criterion : {"gini", "entropy", "both"}
        Impurity of the CART and topb generators; ``both``: each state's tests are the union of the gini
        and the entropy generator's, so the optimum is never worse than with either alone.
    max_states : int
        Memory guard on the number of MDP states.
    max_pool : int
        Memory guard on the rows stored for one depth (4 bytes each).
    n_alphas : int, optional
        Keep only the trees optimal for one of ``n_alphas`` evenly spaced α in [0, 1] (the reference
        implementation's grid); default: every hull tree.
    alpha : float, optional
        Return only the tree optimal for this α (0: the most accurate).
    splits_front : bool
        Also return, for every number of splits ``k = 0 .. max_splits``, the tree of the MDP with the
        fewest errors among those with at most ``k`` splits (then the fewest expected tests): a DP over
        budgets, exact within the MDP.  One solution per step of that staircase (a tree with exactly
        ``k`` splits and strictly fewer errors than any with fewer); ignored with ``alpha`` or
        ``n_alphas``.
    max_splits : int, optional
        Largest budget of the splits front (default ``2**max_depth - 1``, every budget).
    n_classes : int, optional
    control : Control, optional
        Time limit / cancel (checked at every state while the MDP grows) and progress counters
        (``depth``, ``states``, ``expanded_at_depth``, ``states_at_depth``).  With a control, a greedy
        CART of depth ``max_depth`` (about one CART fit, itself stopped by the control with its tree so
        far) and the greedy MDP (DPDT-1, about as cheap) are built first; a run stopped by its time limit
        or a cancel returns at once the hull and splits front of the MDP's trees (the states not yet
        expanded being leaves) together with those greedy trees (``stats["greedy_completion"]``): never
        worse than the greedy baseline, and no work after the stop.
    seed : int
        Seed of the row-set hash (results do not depend on it).
    n_jobs : int, optional
        Threads for the last depth, where states are independent (default: the machine's cores, at most
        4; results do not depend on it).  The kernel releases the GIL, so threads run in parallel.

    anytime : bool, optional
        Anytime schedule (``cart`` and ``hybrid`` generators): solve DPDT-1, DPDT-2, ... up to
        ``cart_depth`` in turn under the same ``control``, each complete front replacing the previous
        one; when the time limit stops a run, the front is the merge of the last complete front and the
        stopped run's trees (hull and splits front recomputed over both), so it is never worse than a
        cheaper K's complete front (``stats["anytime_k_done"]``).  A K whose MDP exceeds the memory
        guards ends the schedule with the last complete front (``stats["anytime_guard"]``).  Default: on
        when ``control`` has a time limit.
    sample_weight : ndarray of float64 (n,), optional
        Row weights (finite, >= 0; checked upstream).  With ``costs`` they make the objective the weighted cost
        ``sum_i w[i] * costs[y[i], yhat[i]]`` (:mod:`solvers._dpdt_weighted`): the tests come from the weighted
        CART (scikit-learn's ``sample_weight``), a leaf costs its least weighted cost, a test the weight of its
        rows; the trees are optimal within the MDP as above.  Generators ``cart``, ``hybrid`` and
        ``exhaustive`` only (any with ``costs`` alone: costs do not change the impurity); ``anytime``,
        ``n_jobs``, ``max_pool`` and the greedy incumbent do not apply.  A matrix with missing values (NaN in
        ``X``) takes that path too, weighted or not (generators ``cart``, ``hybrid``, ``exhaustive``): every
        test carries the side its missing rows go, learnt by the NaN-aware CART, and every tree ``missing_left``
        (:mod:`solvers._dpdt_weighted`).
    costs : ndarray of float64 (k, k), optional
        ``costs[true, predicted]`` (finite, >= 0; default 0 on the diagonal, 1 elsewhere).

    Returns
    -------
    RawFront
        One solution per distinct hull tree and per step of the splits front, from the most accurate
        to the leaf (fewest errors, then fewest expected tests), with ``info``: ``expected_tests``,
        ``train_errors``, ``splits``, ``on_hull`` (a vertex of the (tests, errors) convex hull: then
        ``alpha_lo``/``alpha_hi``, the α interval where the tree is optimal, and
        ``objective_at_alpha_lo``), ``on_splits_front`` (the best tree of the MDP for the budgets
        ``budget .. budget_max`` splits), ``kind`` (``"hull"``, ``"budget"`` or ``"hull+budget"``),
        ``optimal_in_mdp``.  ``optimal`` is True only for the exhaustive generator on a run that was
        not stopped.  Weighted: ``objective`` is ``"cost"``, ``info["cost"]`` the tree's training cost (the
        errors above), ``expected_tests`` per unit of weight and ``train_errors`` its misclassified rows.

    Raises
    ------
    MDPTooLarge
        When the MDP exceeds ``max_states`` or ``max_pool``.
    """
    X, y, n_classes = check_xy(X, y, n_classes, allow_missing=True)
    missing = bool(np.isnan(X).any())
    if generator not in GENERATORS:
        raise ValueError(f"generator must be one of {', '.join(GENERATORS)}; got {generator!r}")
    if criterion not in DPDT_CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(DPDT_CRITERIA)}; got {criterion!r}")
    max_depth = _check_int("max_depth", max_depth, 0)
    cart_depth = _check_int("cart_depth", cart_depth, 1)
    cart_leaves = _check_int("cart_leaves", cart_leaves, 2)
    top_b = _check_int("top_b", top_b, 1)
    hybrid_depth = _check_int("hybrid_depth", hybrid_depth, 0)
    max_states = _check_int("max_states", max_states, 1)
    max_pool = _check_int("max_pool", max_pool, 1)
    if n_alphas is not None:
        n_alphas = _check_int("n_alphas", n_alphas, 1)
    if max_splits is not None:
        max_splits = _check_int("max_splits", max_splits, 0)
    if alpha is not None and not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha!r}")
    n_jobs = _check_int("n_jobs", n_jobs, 1) if n_jobs is not None else min(4, os.cpu_count() or 1)
    gen = GENERATORS[generator]
    k = {"cart": cart_depth, "hybrid": cart_depth, "cart_leaves": cart_leaves, "topb": top_b}.get(generator, 0)
    wt = weighted(sample_weight, costs, y, n_classes)
    if not wt.plain or missing:
        front = _weighted(X, y, n_classes, wt, max_depth, generator, k, hybrid_depth, criterion, max_states,
                          alpha, n_alphas, splits_front, max_splits, control, missing)  # fmt: skip
        if wt.plain:  # missing values, plain objective: the weighted path's cost is the training errors
            front.objective, front.stats["weighted"] = _plain_objective(generator), False
            for sol in front.solutions:
                sol.info.pop("cost", None)
        front.stats["missing_values"] = missing
        return front

    if anytime is None:
        anytime = control is not None and control.time_limit is not None
    if anytime and generator in ("cart", "hybrid") and cart_depth > 1:
        kw = dict(
            max_depth=max_depth,
            generator=generator,
            hybrid_depth=hybrid_depth,
            criterion=criterion,
            max_states=max_states,
            max_pool=max_pool,
            splits_front=splits_front,
            max_splits=max_splits,
            n_classes=n_classes,
            seed=seed,
            n_jobs=n_jobs,
        )
        return _anytime(X, y, kw, cart_depth, control, alpha, n_alphas)

    own = control is None
    control = control or Control()
    ranks, incumbent = _ranks, _incumbent
    if ranks is None:
        ranks = _stoppable_ranks(X, control)
    if incumbent is None and not own:
        incumbent = _greedy_incumbent(X, y, ranks, n_classes, max_depth, criterion, control)
        if not (gen == GEN_CART and k == 1) and max_depth > 1 and not control.stopped:
            # the greedy MDP (DPDT-1, CART's split at every state: about one CART fit) first, under the same
            # control: a stopped run is then never worse than its trees (the anytime schedule runs it anyway)
            try:
                incumbent = dpdt(
                    X,
                    y,
                    max_depth=max_depth,
                    generator="cart",
                    cart_depth=1,
                    criterion=criterion,
                    splits_front=False,
                    max_states=max_states,
                    max_pool=max_pool,
                    n_classes=n_classes,
                    control=control,
                    n_jobs=n_jobs,
                    anytime=False,
                    _ranks=ranks,
                    _incumbent=incumbent,
                )
            except MDPTooLarge:  # the greedy MDP of a very deep run: the CART incumbent alone
                pass
    if ranks is None:  # stopped while sorting: nothing but the greedy incumbent (the root leaf)
        ranks = np.zeros((2, X.shape[1], 0), dtype=np.int64)  # never read: the stopped run skips every state
    zobrist = np.random.default_rng(seed).integers(
        np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=X.shape[0], dtype=np.int64
    )
    t0 = time.perf_counter()
    control.watch("dpdt: building the MDP", _COUNTER_NAMES)
    try:
        (
            (st_size, st_err, st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl, act_errr),
            level_start,
            status,
            t_upper,
        ) = _build(
            X,
            y,
            ranks,
            n_classes,
            max_depth,
            gen,
            k,
            hybrid_depth,
            DPDT_CRITERIA[criterion],
            zobrist,
            max_states,
            max_pool,
            control,
            n_jobs,
        )
    finally:
        control.unwatch()
    t_build = time.perf_counter() - t0
    full_fits = int(control.counters[4])
    if status == STATUS_MAX_STATES:
        raise MDPTooLarge(
            f"DPDT's MDP needs more than max_states={max_states} states at depth "
            f"{int(control.counters[0]) + 1}; lower cart_depth or max_depth, or use "
            "generator='hybrid' (DPDT-K near the root, greedy below)"
        )
    if status == STATUS_MAX_POOL:
        raise MDPTooLarge(
            f"DPDT's MDP needs more than max_pool={max_pool} stored rows at depth "
            f"{int(control.counters[0]) + 1}; lower cart_depth or max_depth, or use "
            "generator='hybrid'"
        )
    h_start, h_count, h_T, h_E, h_act, h_li, h_ri = backward_hulls(
        st_size, st_err, st_act0, st_nact, act_left, act_right, act_errl, act_errr
    )
    t_solve = time.perf_counter() - t0 - t_build
    run_status = "done" if own else control.status()

    n = X.shape[0]
    max_nodes = min(2 ** (max_depth + 1) - 1, 2 * n + 1)
    # candidates (tests in rows, errors, tree maker): the hull of the root, increasing tests
    cands = [
        (
            int(h_T[v]),
            int(h_E[v]),
            lambda v=v: extract_tree(v, act_feat, act_thr, act_left, act_right, h_act, h_li, h_ri, max_nodes),
        )
        for v in range(int(h_start[0]), int(h_start[0] + h_count[0]))
    ]
    # the hull in (tests, errors), both in rows: the α per row of its intervals is α per sample
    costs, errs = [c[0] for c in cands], [c[1] for c in cands]
    ivals = hull_intervals(costs, errs)
    order = lower_hull(costs, errs)  # increasing tests
    verts = [cands[i] for i in order]
    lo = [float(ivals[i][1]) for i in order]
    hi = [float("inf") if ivals[i][2] is None else float(ivals[i][2]) for i in order]
    chosen = range(len(verts))
    if alpha is not None:
        chosen = [q for q in chosen if lo[q] <= alpha <= hi[q]][-1:]
    elif n_alphas is not None:
        grid = np.linspace(0.0, 1.0, n_alphas) if n_alphas > 1 else np.zeros(1)
        chosen = [q for q in chosen if np.any((grid >= lo[q]) & (grid <= hi[q]))]
    exhaustive_done = gen == GEN_EXHAUSTIVE and run_status == "done"
    in_mdp = run_status == "done"
    sols = []
    for q in sorted(chosen, reverse=True):
        t_rows, e_rows, make = verts[q]
        tree = _raw_tree(make(), X, y, n_classes)
        info = {
            "alpha_lo": lo[q],
            "alpha_hi": hi[q],
            "expected_tests": t_rows / n,
            "train_errors": e_rows,
            "splits": tree.n_splits,
            "objective_at_alpha_lo": (e_rows + lo[q] * t_rows) / n,
            "on_hull": True,
            "on_splits_front": False,
            "kind": "hull",
            "optimal_in_mdp": in_mdp,
        }
        sols.append(RawSolution(tree, exhaustive_done, info))
    t_budget = 0.0
    if splits_front and alpha is None and n_alphas is None:
        t1 = time.perf_counter()
        k_max = 2**max_depth - 1 if max_splits is None else min(max_splits, 2**max_depth - 1)
        tables = (st_size, st_err, st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl, act_errr)
        sols += _budget_solutions(tables, level_start, max_depth, k_max, sols, X, y, n_classes, exhaustive_done, in_mdp)
        sols.sort(key=lambda sol: (sol.info["train_errors"], sol.info["expected_tests"]))
        t_budget = time.perf_counter() - t1

    per_depth = np.diff(level_start).tolist()
    while per_depth and per_depth[-1] == 0:
        per_depth.pop()
    stats = {
        "states": int(st_size.shape[0]),
        "states_per_depth": [int(c) for c in per_depth],
        "actions": int(act_feat.shape[0]),
        "hull_vertices": int(h_T.shape[0]),
        "full_cart_fits_last_depth": full_fits,
        "build_s": t_build,
        "upper_levels_s": t_upper,
        "n_jobs": n_jobs,
        "solve_s": t_solve,
        "generator": generator,
        "greedy_completion": False,
        "splits_front_s": t_budget,
    }
    front = RawFront(sols, _plain_objective(generator), run_status, stats)
    if run_status != "done" and incumbent is not None:
        # stopped before the MDP was complete: states left unexpanded are leaves, which can make the trees
        # poor; the greedy CART grown before the MDP (under the same limit) completes the front
        stats["greedy_completion"] = True
        kw = {"splits_front": splits_front, "max_depth": max_depth, "max_splits": max_splits}
        front = _merge_fronts([front, incumbent], n, run_status, stats, kw, alpha, n_alphas)
    return front
