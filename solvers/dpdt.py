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
all CART fits share one global sort of every feature.  Only the convex hull is
returned: trees that are Pareto-optimal but never optimal for any α are not searched for.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from solvers._base import Control, RawFront, RawSolution, RawTree, check_xy
from solvers._kernels.cart import feature_ranks
from solvers._kernels.dpdt_gen import GEN_CART, GEN_CART_LEAVES, GEN_EXHAUSTIVE, GEN_HYBRID, GEN_TOPB
from solvers._kernels.dpdt_hull import backward_hulls, extract_tree
from solvers._kernels.dpdt_mdp import STATUS_MAX_POOL, STATUS_MAX_STATES, STATUS_OK, build_mdp, last_level_actions
from solvers._kernels.predict import node_counts
from solvers.cart import CRITERIA

__all__ = ["dpdt", "GENERATORS", "MDPTooLarge"]

GENERATORS = {"cart": GEN_CART, "cart_leaves": GEN_CART_LEAVES, "topb": GEN_TOPB,
              "exhaustive": GEN_EXHAUSTIVE, "hybrid": GEN_HYBRID}
_COUNTER_NAMES = ("depth", "states", "expanded_at_depth", "states_at_depth", "full_cart_fits")


class MDPTooLarge(ValueError):
    """The MDP would exceed the memory guard (``max_states`` or the row pool)."""


def _check_int(name, value, low):
    if isinstance(value, bool) or int(value) != value or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)

def _last_level(X, y, ranks, n_classes, gen, k, d0, criterion, max_depth, pool, st_start, st_size, st_err,
                level_start, control, n_jobs):
    """Best test of every last-depth state, the states split between ``n_jobs`` threads (nogil kernel)."""
    d = max_depth - 1
    a, b = int(level_start[d]), int(level_start[d + 1])
    control.counters[0] = d
    control.counters[3] = b - a
    states = np.arange(a, b, dtype=np.int64)
    jobs = max(1, min(n_jobs, (b - a) // 64))  # threads only pay off with enough states
    # interleaved chunks: neighbouring states have similar sizes, so the threads get similar work
    chunks = [states[i::jobs] for i in range(jobs)]
    progress = [np.zeros(1, dtype=np.int64) for _ in chunks]

    def run(i):
        return last_level_actions(X, y, ranks, n_classes, gen, k, d, d0, criterion, pool, st_start, st_size,
                                  st_err, chunks[i], control.flag, progress[i])

    if jobs == 1:
        results = [run(0)]
    else:
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            futures = [ex.submit(run, i) for i in range(jobs)]
            while not all(f.done() for f in futures):
                control.counters[2] = sum(int(p[0]) for p in progress)
                time.sleep(0.02)
            results = [f.result() for f in futures]
    out_f = np.full(b - a, -1, dtype=np.int64)
    out_t = np.zeros(b - a)
    out_el = np.zeros(b - a, dtype=np.int64)
    out_er = np.zeros(b - a, dtype=np.int64)
    for i, (f, t, el, er, grown, _) in enumerate(results):
        out_f[i::jobs], out_t[i::jobs], out_el[i::jobs], out_er[i::jobs] = f, t, el, er
        control.counters[4] += grown
    control.counters[2] = b - a
    return out_f, out_t, out_el, out_er


def _append_last_actions(last, a, st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl, act_errr):
    """Add the last depth's actions (one per state that beats its leaf; children are leaves)."""
    out_f, out_t, out_el, out_er = last
    keep = out_f >= 0
    n_act = act_feat.shape[0]
    st_act0 = st_act0.copy()
    st_nact = st_nact.copy()
    st_act0[a:a + keep.shape[0]] = n_act + np.cumsum(keep) - keep
    st_nact[a:a + keep.shape[0]] = keep
    m = int(keep.sum())
    return (st_act0, st_nact, np.concatenate([act_feat, out_f[keep]]), np.concatenate([act_thr, out_t[keep]]),
            np.concatenate([act_left, np.full(m, -1, dtype=np.int64)]),
            np.concatenate([act_right, np.full(m, -1, dtype=np.int64)]),
            np.concatenate([act_errl, out_el[keep]]), np.concatenate([act_errr, out_er[keep]]))



def dpdt(X, y, max_depth: int = 3, generator: str = "cart", cart_depth: int = 3, cart_leaves: int = 32,
         top_b: int = 8, hybrid_depth: int = 2, criterion: str = "gini", max_states: int = 10**6,
         max_pool: int = 5 * 10**7, n_alphas: int | None = None, alpha: float | None = None,
         n_classes: int | None = None, control: Control | None = None, seed: int = 0,
         n_jobs: int | None = None) -> RawFront:
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
    criterion : {"gini", "entropy"}
        Impurity of the CART and topb generators.
    max_states : int
        Memory guard on the number of MDP states.
    max_pool : int
        Memory guard on the rows stored for one depth (4 bytes each).
    n_alphas : int, optional
        Keep only the trees optimal for one of ``n_alphas`` evenly spaced α in [0, 1] (the reference
        implementation's grid); default: every hull tree.
    alpha : float, optional
        Return only the tree optimal for this α (0: the most accurate).
    n_classes : int, optional
    control : Control, optional
        Time limit / cancel (checked at every state while the MDP grows) and progress counters
        (``depth``, ``states``, ``expanded_at_depth``, ``states_at_depth``).
    seed : int
        Seed of the row-set hash (results do not depend on it).
    n_jobs : int, optional
        Threads for the last depth, where states are independent (default: the machine's cores, at most
        4; results do not depend on it).  The kernel releases the GIL, so threads run in parallel.

    Returns
    -------
    RawFront
        One solution per distinct hull tree, from the most accurate to the leaf, with ``info``:
        ``alpha_lo``/``alpha_hi`` (α interval where the tree is optimal), ``expected_tests``,
        ``train_errors``, ``objective_at_alpha_lo``, ``on_hull``, ``optimal_in_mdp``.  ``optimal`` is
        True only for the exhaustive generator on a run that was not stopped.

    Raises
    ------
    MDPTooLarge
        When the MDP exceeds ``max_states`` or ``max_pool``.
    """
    X, y, n_classes = check_xy(X, y, n_classes)
    if generator not in GENERATORS:
        raise ValueError(f"generator must be one of {', '.join(GENERATORS)}; got {generator!r}")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}; got {criterion!r}")
    max_depth = _check_int("max_depth", max_depth, 0)
    cart_depth = _check_int("cart_depth", cart_depth, 1)
    cart_leaves = _check_int("cart_leaves", cart_leaves, 2)
    top_b = _check_int("top_b", top_b, 1)
    hybrid_depth = _check_int("hybrid_depth", hybrid_depth, 0)
    max_states = _check_int("max_states", max_states, 1)
    max_pool = _check_int("max_pool", max_pool, 1)
    if n_alphas is not None:
        n_alphas = _check_int("n_alphas", n_alphas, 1)
    if alpha is not None and not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha!r}")
    n_jobs = _check_int("n_jobs", n_jobs, 1) if n_jobs is not None else min(4, os.cpu_count() or 1)
    gen = GENERATORS[generator]
    k = {"cart": cart_depth, "hybrid": cart_depth, "cart_leaves": cart_leaves, "topb": top_b}.get(generator, 0)

    own = control is None
    control = control or Control()
    zobrist = np.random.default_rng(seed).integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max,
                                                   size=X.shape[0], dtype=np.int64)
    t0 = time.perf_counter()
    control.watch("dpdt: building the MDP", _COUNTER_NAMES)
    try:
        ranks = feature_ranks(X)
        (st_size, st_err, st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl, act_errr,
         level_start, status, st_start, pool) = build_mdp(X, y, ranks, n_classes, max_depth, gen, k, hybrid_depth,
                                                          CRITERIA[criterion], zobrist, max_states, max_pool,
                                                          control.flag, control.counters)
        if status == STATUS_OK and max_depth >= 1 and not control.stopped:
            last = _last_level(X, y, ranks, n_classes, gen, k, hybrid_depth, CRITERIA[criterion], max_depth,
                               pool, st_start, st_size, st_err, level_start, control, n_jobs)
            (st_act0, st_nact, act_feat, act_thr, act_left, act_right, act_errl,
             act_errr) = _append_last_actions(last, level_start[max_depth - 1], st_act0, st_nact, act_feat,
                                              act_thr, act_left, act_right, act_errl, act_errr)
    finally:
        control.unwatch()
    t_build = time.perf_counter() - t0
    full_fits = int(control.counters[4])
    if status == STATUS_MAX_STATES:
        raise MDPTooLarge(f"DPDT's MDP needs more than max_states={max_states} states at depth "
                          f"{int(control.counters[0]) + 1}; lower cart_depth or max_depth, or use "
                          "generator='hybrid' (DPDT-K near the root, greedy below)")
    if status == STATUS_MAX_POOL:
        raise MDPTooLarge(f"DPDT's MDP needs more than max_pool={max_pool} stored rows at depth "
                          f"{int(control.counters[0]) + 1}; lower cart_depth or max_depth, or use "
                          "generator='hybrid'")
    h_start, h_count, h_T, h_E, h_act, h_li, h_ri = backward_hulls(st_size, st_err, st_act0, st_nact,
                                                                   act_left, act_right, act_errl, act_errr)
    t_solve = time.perf_counter() - t0 - t_build
    run_status = "done" if own else control.status()

    n = X.shape[0]
    verts = list(range(int(h_start[0]), int(h_start[0] + h_count[0])))  # increasing tests, decreasing errors
    # α interval of vertex q: between the slopes of its two hull edges (in rows, divided by rows)
    lo = [0.0] * len(verts)
    hi = [float("inf")] * len(verts)
    for q in range(1, len(verts)):
        a, b = verts[q - 1], verts[q]
        s = float(h_E[a] - h_E[b]) / float(h_T[b] - h_T[a])
        hi[q] = s
        lo[q - 1] = s
    chosen = range(len(verts))
    if alpha is not None:
        chosen = [q for q in chosen if lo[q] <= alpha <= hi[q]][-1:]
    elif n_alphas is not None:
        grid = np.linspace(0.0, 1.0, n_alphas) if n_alphas > 1 else np.zeros(1)
        chosen = [q for q in chosen if np.any((grid >= lo[q]) & (grid <= hi[q]))]
    max_nodes = min(2 ** (max_depth + 1) - 1, 2 * n + 1)
    exhaustive_done = gen == GEN_EXHAUSTIVE and run_status == "done"
    sols = []
    for q in sorted(chosen, reverse=True):
        v = verts[q]
        f, t, left, right = extract_tree(v, act_feat, act_thr, act_left, act_right, h_act, h_li, h_ri,
                                         max_nodes)
        value = node_counts(f, t, left, right, X, y, n_classes)
        info = {"alpha_lo": lo[q], "alpha_hi": hi[q], "expected_tests": float(h_T[v]) / n,
                "train_errors": int(h_E[v]), "objective_at_alpha_lo": float(h_E[v] + lo[q] * h_T[v]) / n,
                "on_hull": True, "optimal_in_mdp": run_status == "done"}
        sols.append(RawSolution(RawTree(f, t, left, right, value), exhaustive_done, info))

    per_depth = np.diff(level_start).tolist()
    while per_depth and per_depth[-1] == 0:
        per_depth.pop()
    stats = {"states": int(st_size.shape[0]), "states_per_depth": [int(c) for c in per_depth],
             "actions": int(act_feat.shape[0]), "hull_vertices": int(h_T.shape[0]),
             "full_cart_fits_last_depth": full_fits, "build_s": t_build, "solve_s": t_solve, "generator": generator}
    objective = ("train error rate + α · expected tests per sample, every α (convex hull); "
                 f"tests from {generator}")
    return RawFront(sols, objective, run_status, stats)
