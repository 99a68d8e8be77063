"""DPDT's fronts: both impurity criteria, the splits front against CART's pruning path, the anytime schedule.

The exactness of the splits front within the MDP is checked against the naive reference in
``test_dpdt_naive.py``; here the guarantees that follow from which trees the MDP holds:

* ``criterion="both"`` proposes at every state the union of the gini and the entropy generator's tests, so
  its MDP holds both MDPs' trees: for every α and every split budget it is never worse than either;
* the greedy CART of depth ``max_depth`` is a policy of DPDT-K's MDP (each state's CART starts with the
  greedy split), and so is every subtree on its pruning path: the best tree with at most k splits is never
  worse than CART's pruned tree with at most k splits;
* the anytime schedule (DPDT-1, DPDT-2, ... under one time limit) never returns less than the last K it
  completed.
"""

from fractions import Fraction

import numpy as np
import pytest
from treeexplorer.solvers import Control, predict_raw
from treeexplorer.solvers.cart import cart_path
from treeexplorer.solvers.dpdt import dpdt


def data(seed, n=120, p=4, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).round(2)  # repeated values: ties between thresholds happen
    score = X[:, 0] + 0.8 * X[:, 1] * X[:, -1] + 0.7 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])).astype(np.int64)
    return X, y


def staircase(front, k_max):
    """Errors of the best tree with at most b splits, b = 0 .. k_max, from the front's steps."""
    out = [None] * (k_max + 1)
    for s in front.solutions:
        if s.info["on_splits_front"]:
            for b in range(s.info["budget"], min(s.info["budget_max"], k_max) + 1):
                out[b] = s.info["train_errors"]
    assert None not in out, "the steps cover every budget"
    return out


def value(front, n, alpha):
    """Best objective over the front's trees at trade-off α (row units: errors + α · tests)."""
    return min(
        Fraction(s.info["train_errors"]) + alpha * Fraction(round(s.info["expected_tests"] * n))
        for s in front.solutions
    )


def breakpoints(front):
    return {Fraction(0)} | {Fraction(s.info["alpha_lo"]) for s in front.solutions if s.info["on_hull"]}


@pytest.mark.parametrize("seed", range(6))
def test_both_criteria_never_worse_than_either(seed):
    X, y = data(seed)
    n, depth = len(y), 3
    fronts = {c: dpdt(X, y, max_depth=depth, cart_depth=2, criterion=c) for c in ("gini", "entropy", "both")}
    both = fronts.pop("both")
    for c, front in fronts.items():
        for alpha in breakpoints(front) | breakpoints(both):
            assert value(both, n, alpha) <= value(front, n, alpha), (c, alpha)
        for b, (eb, ec) in enumerate(zip(staircase(both, 7), staircase(front, 7))):
            assert eb <= ec, (c, b)


def test_both_is_strictly_better_somewhere():
    """Over a few data sets, the union of the criteria finds a tree neither criterion's MDP holds."""
    gains = 0
    for seed in range(6):
        X, y = data(seed)
        e = {c: staircase(dpdt(X, y, max_depth=3, cart_depth=2, criterion=c), 7) for c in ("gini", "entropy", "both")}
        gains += sum(b < min(g, h) for b, g, h in zip(e["both"], e["gini"], e["entropy"]))
    assert gains > 0


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_splits_front_never_worse_than_cart_pruning_path(seed, criterion):
    X, y = data(10 + seed, n=150)
    depth = 4
    k_max = 2**depth - 1
    front = dpdt(X, y, max_depth=depth, cart_depth=2, criterion=criterion)
    best = staircase(front, k_max)
    path = cart_path(X, y, max_depth=depth, criterion=criterion).solutions
    for sol in path:
        errors = int((predict_raw(sol.tree, X) != y).sum())
        k = sol.tree.n_splits
        assert best[k] <= errors, f"{k} splits: DPDT {best[k]} > CART {errors}"
    # with both criteria, never worse than either path
    both = staircase(dpdt(X, y, max_depth=depth, cart_depth=2, criterion="both"), k_max)
    assert all(b <= a for a, b in zip(best, both))


def test_splits_front_trees_are_what_they_claim():
    X, y = data(3, n=200)
    front = dpdt(X, y, max_depth=4, cart_depth=2)
    steps = [s for s in front.solutions if s.info["on_splits_front"]]
    assert len(steps) > len([s for s in front.solutions if s.info["on_hull"]]) // 2
    for s in front.solutions:
        assert int((predict_raw(s.tree, X) != y).sum()) == s.info["train_errors"]
        assert s.tree.n_splits == s.info["splits"]
        if s.info["on_splits_front"]:
            assert s.info["splits"] == s.info["budget"] <= s.info["budget_max"]
    errs = [s.info["train_errors"] for s in front.solutions]
    assert errs == sorted(errs), "most accurate first"
    # max_splits caps the staircase; splits_front=False gives the hull only
    capped = dpdt(X, y, max_depth=4, cart_depth=2, max_splits=3)
    assert max(s.info["budget_max"] for s in capped.solutions if s.info["on_splits_front"]) == 3
    hull_only = dpdt(X, y, max_depth=4, cart_depth=2, splits_front=False)
    assert all(s.info["on_hull"] for s in hull_only.solutions)


def test_anytime_stopped_run_never_below_a_cheaper_complete_front():
    """A time limit stops the schedule inside some DPDT-K: the front still holds the last complete K's."""
    rng = np.random.default_rng(7)
    n = 3000
    X = rng.normal(size=(n, 8))
    y = ((X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2]) + 0.3 * rng.normal(size=n)) > 0).astype(np.int64)
    depth, k_max = 5, 31
    dpdt(X[:100], y[:100], max_depth=depth, cart_depth=2)  # numba cache load outside the limit
    with Control(time_limit=1.5) as control:
        front = dpdt(X, y, max_depth=depth, cart_depth=6, control=control)
    k_done = front.stats["anytime_k_done"]
    # DPDT-6 at depth 5 is far too large for 1.5 s: the time limit (or, on a very fast machine, the memory
    # guard) ends the schedule inside some K
    assert 1 <= k_done < 6
    assert front.status == "time_limit" or front.stats["anytime_guard"]
    complete = dpdt(X, y, max_depth=depth, cart_depth=k_done)
    assert all(a <= b for a, b in zip(staircase(front, k_max), staircase(complete, k_max)))
    for alpha in breakpoints(complete) | breakpoints(front):
        assert value(front, n, alpha) <= value(complete, n, alpha)
    assert not any(s.optimal for s in front.solutions)
    for s in front.solutions:
        assert int((predict_raw(s.tree, X) != y).sum()) == s.info["train_errors"]
