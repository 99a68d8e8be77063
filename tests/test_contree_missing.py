"""ConTree with missing values (NaN in ``X``, issue 49): exact against a brute-force oracle over every feature,
threshold and side of the missing rows; trees that say where NaN rows go; complete data unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control, predict_raw
from treeexplorer.solvers._kernels.predict import node_counts_missing
from treeexplorer.solvers.contree import contree
from weighted_oracle import oracle_costs

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def missing_tests(X):
    """Every split of the search space as a column of "goes right" rows: each feature, each threshold over its
    present values (below the least, between neighbours, at the largest) and both sides for the NaN rows.

    Deliberately redundant (mirrored and one-sided partitions included; the oracle skips the empty ones), so that it
    does not share the solver's choice of which of them to try."""
    cols = []
    for j in range(X.shape[1]):
        x = X[:, j]
        gap = np.isnan(x)
        v = np.unique(x[~gap])
        if v.size == 0:
            continue
        for t in [v[0] - 1.0, *((v[:-1] + v[1:]) / 2), v[-1]]:
            for side in (0, 1):
                cols.append(~((x <= t) | (gap & bool(side))))
    return np.array(cols, dtype=bool).T.reshape(X.shape[0], len(cols))


def oracle(X, y, k, depth, w=None, C=None):
    """Least cost (errors without ``w``/``C``) with at most ``b`` splits, ``b = 0 .. 2**depth - 1``."""
    return oracle_costs(missing_tests(X), y, k, depth, w, C)


@st.composite
def datasets(draw, max_rows=11, max_features=3):
    """Small data with few distinct values and random NaNs (some columns without, some nearly all missing)."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_features))
    c = draw(st.integers(2, 3))
    grid = draw(st.sampled_from([2, 3, 5]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(0, grid, (n, p)).astype(float) / grid
    X[rng.random((n, p)) < rng.choice([0.0, 0.2, 0.5, 0.9], p)] = np.nan
    X[rng.integers(n), rng.integers(p)] = np.nan  # at least one gap: the NaN path
    y = rng.integers(0, c, n)
    return X, y, c


def tree_depth(tree, k=0):
    return 0 if tree.feature[k] < 0 else 1 + max(tree_depth(tree, tree.left[k]), tree_depth(tree, tree.right[k]))


def check_tree(tree, X, y, k):
    """The tree says where NaN rows go, only where its node's rows have gaps, and its counts are the walk's."""
    assert tree.missing_left is not None and tree.missing_left.shape == tree.feature.shape
    counts = node_counts_missing(tree.feature, tree.threshold, tree.left, tree.right, tree.missing_left, X, y, k)
    np.testing.assert_array_equal(counts, tree.value)
    reach = [np.arange(X.shape[0])] + [None] * (tree.n_nodes - 1)  # rows at each node (children follow parents)
    for node in range(tree.n_nodes):
        rows = reach[node]
        if tree.feature[node] < 0:
            assert tree.missing_left[node] == 0
            continue
        x = X[rows, tree.feature[node]]
        if not np.isnan(x).any():
            assert tree.missing_left[node] == 0
        go = (x <= tree.threshold[node]) | (np.isnan(x) & (tree.missing_left[node] == 1))
        assert go.any() and not go.all()  # a real split
        reach[tree.left[node]], reach[tree.right[node]] = rows[go], rows[~go]
    return int(np.count_nonzero(predict_raw(tree, X) != y))


def check_front(raw, X, y, k, ref, depth):
    assert raw.objective == "misclassifications"
    best = {}
    for sol in raw.solutions:
        errors = check_tree(sol.tree, X, y, k)
        assert sol.info["errors"] == errors
        assert sol.info["splits"] == sol.tree.n_splits
        assert tree_depth(sol.tree) <= depth
        assert sol.optimal and raw.status == "done"
        best[sol.tree.n_splits] = min(best.get(sol.tree.n_splits, 1 << 30), errors)
    for b in range(ref.size):
        assert min(e for s, e in best.items() if s <= b) == ref[b], (b, ref, best)
    assert raw.stats["lower_bounds"] == [int(v) for v in ref]


@SETTINGS
@given(data=datasets(), depth=st.integers(1, 2))
def test_front_matches_oracle_depth_1_2(data, depth):
    X, y, k = data
    check_front(contree(X, y, k, max_depth=depth), X, y, k, oracle(X, y, k, depth), depth)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_rows=10))
def test_front_matches_oracle_depth_3(data):
    X, y, k = data
    check_front(contree(X, y, k, max_depth=3), X, y, k, oracle(X, y, k, 3), 3)


@SETTINGS
@given(data=datasets(), depth=st.integers(1, 3))
def test_single_tree_reaches_the_optimum(data, depth):
    X, y, k = data
    raw = contree(X, y, k, max_depth=depth, front=False)
    (sol,) = raw.solutions
    assert check_tree(sol.tree, X, y, k) == sol.info["errors"] == oracle(X, y, k, depth)[-1]
    assert sol.optimal and raw.stats["proven"]


@SETTINGS
@given(data=datasets(max_rows=9), depth=st.integers(1, 2))
def test_weighted_costs_with_gaps_match_oracle(data, depth):
    X, y, k = data
    rng = np.random.default_rng(len(y) * 7 + k)
    w = rng.integers(1, 4, len(y)).astype(float)
    C = rng.integers(1, 4, (k, k)).astype(float)
    np.fill_diagonal(C, 0.0)
    raw = contree(X, y, k, max_depth=depth, sample_weight=w, costs=C)
    assert raw.objective == "cost"
    ref = oracle(X, y, k, depth, w, C)
    best = {}
    for sol in raw.solutions:
        check_tree(sol.tree, X, y, k)
        yhat = predict_raw(sol.tree, X)
        cost = float((w * C[y, yhat]).sum())
        assert sol.info["cost"] == pytest.approx(cost) and sol.optimal
        best[sol.tree.n_splits] = cost
    for b in range(ref.size):
        assert min(c for s, c in best.items() if s <= b) == pytest.approx(ref[b])


@SETTINGS
@given(data=datasets(), cap=st.integers(0, 3))
def test_max_nodes_caps_the_front(data, cap):
    X, y, k = data
    ref = oracle(X, y, k, 2)
    raw = contree(X, y, k, max_depth=2, max_nodes=cap)
    assert max(s.tree.n_splits for s in raw.solutions) <= cap
    assert min(s.info["errors"] for s in raw.solutions) == ref[min(cap, 3)]


@SETTINGS
@given(data=datasets(), lam=st.sampled_from([0.0, 0.01, 0.1, 0.3]))
def test_sparsity_picks_the_exact_minimiser(data, lam):
    from fractions import Fraction

    X, y, k = data
    ref = oracle(X, y, k, 2)
    (sol,) = contree(X, y, k, max_depth=2, sparsity=lam).solutions
    n, a = len(y), Fraction(lam)
    best = min(Fraction(int(e), n) + a * b for b, e in enumerate(ref))
    assert Fraction(check_tree(sol.tree, X, y, k), n) + a * sol.tree.n_splits == best and sol.optimal


def test_present_vs_missing_is_one_split():
    """A feature that says nothing but whether it is missing: the split "present vs missing" is found, written as
    ``x <= (largest present value)`` with the NaN rows right."""
    X = np.array([[0.0], [1.0], [2.0], [np.nan], [np.nan], [np.nan]])
    y = np.array([0, 0, 0, 1, 1, 1])
    (sol,) = contree(X, y, max_depth=1, front=False).solutions
    t = sol.tree
    assert sol.info["errors"] == 0 and t.feature[0] == 0 and t.threshold[0] == 2.0 and t.missing_left[0] == 0


def test_missing_rows_go_to_the_side_they_fit():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [np.nan], [np.nan]])
    y = np.array([0, 0, 1, 1, 0, 0])
    (sol,) = contree(X, y, max_depth=1, front=False).solutions
    t = sol.tree
    assert sol.info["errors"] == 0 and t.threshold[0] == 1.5 and t.missing_left[0] == 1
    y = np.array([0, 0, 1, 1, 1, 1])
    (sol,) = contree(X, y, max_depth=1, front=False).solutions
    assert sol.info["errors"] == 0 and sol.tree.missing_left[0] == 0


def test_complete_data_has_no_missing_left():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (40, 3)).astype(float)
    y = rng.integers(0, 2, 40)
    for raw in (contree(X, y, max_depth=2), contree(X, y, max_depth=2, sample_weight=np.full(40, 2.0))):
        assert all(s.tree.missing_left is None for s in raw.solutions)
        assert "missing" not in raw.stats


def test_never_worse_than_cart_with_missing_values():
    """A proven tree is at least as good on its training rows as scikit-learn's CART at the same depth (which sends
    NaN rows to a learned side too: its trees are in the same search space)."""
    tree_mod = pytest.importorskip("sklearn.tree")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 4)).round(1)
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0.5)).astype(np.int64)
    y[rng.random(150) < 0.1] ^= 1
    X[rng.random(X.shape) < 0.15] = np.nan
    for depth in (1, 2, 3):
        cart = tree_mod.DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
        cart_err = int(np.count_nonzero(cart.predict(X) != y))
        (sol,) = contree(X, y, max_depth=depth, front=False).solutions
        assert sol.optimal and check_tree(sol.tree, X, y, 2) == sol.info["errors"] <= cart_err


def test_stopped_run_returns_true_errors_unproven(monkeypatch):
    import treeexplorer.solvers.contree as mod

    monkeypatch.setattr(mod, "_STOP_AFTER_SPLITS", 30)
    rng = np.random.default_rng(2)
    X = rng.integers(0, 6, (60, 4)).astype(float)
    X[rng.random(X.shape) < 0.2] = np.nan
    y = rng.integers(0, 3, 60)
    raw = contree(X, y, max_depth=3, control=Control(time_limit=60))
    assert raw.status == "time_limit" and not raw.stats["proven"]
    for sol in raw.solutions:
        errors = check_tree(sol.tree, X, y, 3)
        assert sol.info["errors"] == errors and not sol.optimal
        assert 0 <= sol.info["lower_bound"] <= errors
    assert raw.stats["lower_bound"] <= raw.stats["upper_bound"]


def test_bad_input_is_one_line():
    X = np.array([[0.0], [np.inf]])
    with pytest.raises(ValueError, match="infinite"):
        contree(X, np.array([0, 1]))
