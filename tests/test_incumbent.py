"""A stopped BRANCHES search is never worse than the greedy incumbent (issue 17)."""

import itertools

import numpy as np
from treeexplorer.solvers import Control
from treeexplorer.solvers._incumbent import GreedyIncumbent
from treeexplorer.solvers.branches import branches_front, fit_branches


def _data(n=3000, p=12, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < 0.5).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] & ~X[:, 3] & 1) | (rng.random(n) < 0.1)).astype(np.int64)
    return X, y


def _objective(tree, n, lam):
    leaves = tree.feature < 0
    return tree.value[leaves].max(axis=1).sum() / n - lam * tree.n_splits


def _prunings(t, k=0):
    """Every subtree of ``t`` rooted at ``k`` as (correct, splits) — brute force over prunings."""
    leaf = [(int(t.value[k].max()), 0)]
    if t.feature[k] < 0:
        return leaf
    both = itertools.product(_prunings(t, t.left[k]), _prunings(t, t.right[k]))
    return leaf + [(a + b, s + u + 1) for (a, s), (b, u) in both]


def test_greedy_pruning_is_the_best_pruning_of_the_greedy_tree():
    X, y = _data(400, 6, seed=3)
    g = GreedyIncumbent(X, y, 2, max_depth=3)
    for lam in (0.0, 0.005, 0.02, 0.1, 0.6):
        tree, obj = g.for_lambda(lam)
        assert abs(_objective(tree, len(y), lam) - obj) < 1e-12
        best = max(c / len(y) - lam * s for c, s in _prunings(g._grown()))
        assert abs(obj - best) < 1e-12


def test_counts_of_the_greedy_tree_use_every_row_even_when_grown_on_a_sample():
    X, y = _data(5000, 8, seed=1)
    tree, _ = GreedyIncumbent(X, y, 2, max_depth=3, max_rows=500).for_lambda(0.0)
    assert tree.value[0].sum() == len(y)
    internal = tree.feature >= 0
    assert np.array_equal(tree.value[internal], tree.value[tree.left[internal]] + tree.value[tree.right[internal]])


def test_stopped_branches_is_never_worse_than_the_greedy_tree():
    X, y = _data()
    lam = 0.001
    control = Control()
    control.cancel()  # stopped before it could search: only the root leaf of its own
    sol = fit_branches(X, y, sparsity=lam, control=control)
    _, greedy_obj = GreedyIncumbent(X, y, 2, max_depth=6).for_lambda(lam)
    assert not sol.optimal
    assert sol.info["objective"] >= greedy_obj - 1e-12
    assert abs(_objective(sol.tree, len(y), lam) - sol.info["objective"]) < 1e-12  # honest value
    assert sol.info["objective"] <= sol.info["upper_bound"] + 1e-12
    assert sol.info.get("incumbent", "").startswith("greedy")
    front = branches_front(X, y, sparsity=lam, front=False, control=control)
    assert front.solutions[0].info["objective"] >= greedy_obj - 1e-12


def test_a_completed_search_is_unchanged_by_the_incumbent():
    X, y = _data(300, 5, seed=2)
    sol = fit_branches(X, y, sparsity=0.01)
    assert sol.optimal and "incumbent" not in sol.info
    _, greedy_obj = GreedyIncumbent(X, y, 2, max_depth=6).for_lambda(0.01)
    assert sol.info["objective"] >= greedy_obj - 1e-12
