"""BRANCHES on the weighted, cost-sensitive objective ``cost / total weight + lambda * splits``: exact against
brute-force oracles (binary tests by ``tests/weighted_oracle.py``, multiway splits by recursion)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control
from treeexplorer.solvers._objective import leaf_prediction, tree_cost, weighted
from treeexplorer.solvers.branches import _leaf_of, _node_masses, branches_front, fit_branches
from weighted_oracle import oracle_costs

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw, max_rows=14, max_tests=4):
    """0/1 tests, 2-3 classes, whole or fractional weights (quarters, thirds, balanced) and random costs."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_tests))
    k = draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(0, 2, size=(n, p)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    kind = draw(st.sampled_from(["whole", "quarters", "thirds", "balanced"]))
    if kind == "whole":
        w = rng.integers(0, 6, size=n).astype(float)
    elif kind == "quarters":
        w = rng.integers(0, 12, size=n) / 4
    elif kind == "thirds":
        w = rng.integers(1, 9, size=n) / 3
    else:
        counts = np.bincount(y, minlength=k)
        w = n / (k * counts[y])  # scikit-learn's balanced class weights
    if w.sum() == 0:
        w[0] = 1.0
    C = rng.integers(0, 5, size=(k, k)).astype(float)
    if draw(st.booleans()):
        np.fill_diagonal(C, 0.0)
    choice = draw(st.sampled_from(["both", "weights", "costs"]))
    w, C = (None if choice == "costs" else w), (None if choice == "weights" else C)
    assume(not weighted(w, C, y, k).plain)  # all ones and unit costs take the plain path (tested on its own)
    return X, y, k, w, C


def oracle_objective(X, y, k, w, C, lam, depth):
    """Least ``cost / total + lam * splits`` over the trees of depth <= ``depth`` (every split budget)."""
    per_budget = oracle_costs(X.astype(bool), y, k, depth, w, C)
    total = weighted(w, C, y, k).row_weights(len(y)).sum()
    return min(c / total + lam * b for b, c in enumerate(per_budget))


def check_tree(sol, X, y, k, w, C):
    """The tree's cost is its true cost and each node predicts its least-cost class."""
    wt = weighted(w, C, y, k)
    t = sol.tree
    assert sol.info["cost"] == tree_cost(y, t.prediction[_leaf_of(t, X)], wt, k)
    masses = _node_masses(t, X, y, wt.row_weights(len(y)), k)
    for node in range(t.n_nodes):
        assert t.prediction[node] == leaf_prediction(masses[node], wt.cost_matrix(k))[0]
    total = wt.row_weights(len(y)).sum()
    assert sol.info["objective"] == pytest.approx(sol.info["cost"] / total + sol.info["lambda"] * t.n_splits)


@SETTINGS
@given(data=problems(), lam=st.sampled_from([0.0, 0.01, 0.03, 0.08, 0.2]), depth=st.integers(1, 3))
def test_matches_the_weighted_oracle(data, lam, depth):
    X, y, k, w, C = data
    sol = fit_branches(X, y, lam, max_depth=depth, n_classes=k, sample_weight=w, costs=C)
    assert sol.optimal
    check_tree(sol, X, y, k, w, C)
    assert sol.info["objective"] == pytest.approx(oracle_objective(X, y, k, w, C, lam, depth), rel=1e-9, abs=1e-12)


@SETTINGS
@given(data=problems(max_rows=12, max_tests=3))
def test_front_trees_are_each_optimal_for_their_lambdas(data):
    X, y, k, w, C = data
    raw = branches_front(X, y, 0.01, max_depth=3, n_classes=k, sample_weight=w, costs=C)
    assert raw.objective == "cost"
    for sol in raw.solutions:
        assert sol.optimal
        check_tree(sol, X, y, k, w, C)
        for lam in sol.info["lambdas"]:
            at = sol.info["cost"] / weighted(w, C, y, k).row_weights(len(y)).sum() + lam * sol.tree.n_splits
            assert at == pytest.approx(oracle_objective(X, y, k, w, C, lam, 3), rel=1e-9, abs=1e-12)


@SETTINGS
@given(data=problems(max_rows=10), lam=st.sampled_from([0.0, 0.02, 0.1]))
def test_all_ones_weights_and_unit_costs_give_todays_result(data, lam):
    X, y, k, _, _ = data
    plain = fit_branches(X, y, lam, max_depth=3, n_classes=k)
    ones = fit_branches(X, y, lam, max_depth=3, n_classes=k, sample_weight=np.ones(len(y)), costs=1 - np.eye(k))
    assert ones.info == plain.info
    assert np.array_equal(ones.tree.feature, plain.tree.feature)


def multiway_oracle(X, y, k, w, C, lam, groups, depth):
    """Least ``cost / total + lam * splits`` over trees of binary tests and multiway group splits."""
    total = w.sum()
    cols = [X[:, a].astype(bool) for a in range(X.shape[1])]
    per_split = lam * total

    @cache
    def best(rows: frozenset, d: int) -> float:
        idx = np.fromiter(rows, dtype=np.int64)
        value = float((np.bincount(y[idx], weights=w[idx], minlength=k) @ C).min())
        if d >= depth:
            return value
        for col in cols:
            one = frozenset(int(i) for i in idx[col[idx]])
            if 0 < len(one) < len(rows):
                value = min(value, best(one, d + 1) + best(rows - one, d + 1) + per_split)
        for g in groups:
            parts = [s for s in (frozenset(int(i) for i in idx[cols[a][idx]]) for a in g) if s]
            if len(parts) >= 2:
                value = min(value, sum(best(s, d + 1) for s in parts) + per_split)
        return value

    return best(frozenset(range(len(y))), 0) / total


@pytest.mark.parametrize("seed", range(12))
def test_multiway_matches_the_weighted_oracle(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 22))
    cat = rng.integers(0, 4, n)
    block = np.zeros((n, 4), dtype=np.uint8)
    block[np.arange(n), cat] = 1
    block = block[:, block.sum(axis=0) > 0]
    X = np.hstack([block, rng.integers(0, 2, (n, 2)).astype(np.uint8)])
    groups = [list(range(block.shape[1]))] if block.shape[1] >= 3 else []
    k = int(rng.integers(2, 4))
    y = rng.integers(0, k, n)
    w = rng.integers(1, 5, n).astype(float)
    C = rng.integers(0, 4, (k, k)).astype(float)
    lam = float(rng.choice([0.005, 0.02, 0.05]))
    sol = fit_branches(X, y, lam, max_depth=2, n_classes=k, groups=groups, sample_weight=w, costs=C)
    assert sol.optimal
    check_tree(sol, X, y, k, w, C)
    assert sol.info["objective"] == pytest.approx(multiway_oracle(X, y, k, w, C, lam, groups, 2), rel=1e-9)


def test_costs_change_the_tree():
    # a rare class whose misses cost 10: plain, one leaf "0" is best; weighted, a split isolates class 1
    X = np.array([[0], [0], [0], [0], [0], [0], [0], [0], [1], [1]], dtype=np.uint8)
    y = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 0])
    plain = fit_branches(X, y, 0.05, max_depth=1)
    assert plain.tree.n_splits == 0
    sol = fit_branches(X, y, 0.05, max_depth=1, costs=np.array([[0.0, 1.0], [10.0, 0.0]]))
    assert sol.tree.n_splits == 1 and sol.info["cost"] == 1.0 and sol.optimal


def test_stopped_run_has_a_valid_lower_bound():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(300, 12)).astype(np.uint8)
    y = rng.integers(0, 3, 300)
    w = rng.integers(1, 4, 300).astype(float)
    with Control() as control:
        control.cancel()
        sol = fit_branches(X, y, 0.0, n_classes=3, control=control, sample_weight=w)
    assert not sol.optimal
    assert sol.info["lower_bound"] <= sol.info["objective"]
    assert sol.info["lower_bound"] >= 0.0


def test_real_weights_it_cannot_count_are_refused_in_one_line():
    X = np.array([[0], [1], [1]], dtype=np.uint8)
    y = np.array([0, 1, 0])
    with pytest.raises(ValueError, match="whole numbers or simple fractions") as err:
        fit_branches(X, y, 0.01, sample_weight=np.array([0.1234567891, 1.0, 2.0]))
    assert "\n" not in str(err.value) and "contree" in str(err.value)
    with pytest.raises(ValueError, match="every sample weight is 0"):
        fit_branches(X, y, 0.01, sample_weight=np.zeros(3))


def test_registered_adapter_takes_weights():
    from treeexplorer.adapters.branches import SPEC

    X = np.array([[0], [0], [1], [1]], dtype=np.uint8)
    y = np.array([0, 1, 1, 1])
    with Control() as control:
        raw = SPEC.run(X, y, 2, control, sparsity=0.01, max_depth=1, front=False, sample_weight=np.array(
            [5.0, 1.0, 1.0, 1.0]), costs=None)  # fmt: skip
    assert SPEC.weighted and raw.objective == "cost"
    assert raw.solutions[0].info["cost"] == 1.0
