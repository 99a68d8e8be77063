"""ConTree on the weighted, cost-sensitive objective: exact against the brute-force oracle on raw thresholds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control
from treeexplorer.solvers import contree as ct
from treeexplorer.solvers._kernels.predict import apply_tree
from treeexplorer.solvers._objective import leaf_prediction, tree_cost, weighted
from treeexplorer.solvers.contree import contree
from weighted_oracle import oracle_costs, raw_tests

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw, max_rows=12, max_features=3, integral=None):
    """A small table with raw values (ties included), 2-3 classes, random weights and a random cost matrix."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_features))
    k = draw(st.integers(2, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    whole = draw(st.booleans()) if integral is None else integral
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, p)).astype(float) + (0 if whole else rng.random((n, p)).round(1))
    y = rng.integers(0, k, size=n)
    if whole:
        w = rng.integers(0, 6, size=n).astype(float)
        C = rng.integers(0, 5, size=(k, k)).astype(float)
    else:
        w = rng.random(n) * 4
        C = rng.random((k, k)) * 3
    if w.sum() == 0:
        w[0] = 1.0  # all-zero weights are refused upstream
    if draw(st.booleans()):
        np.fill_diagonal(C, 0.0)
    choice = draw(st.sampled_from(["both", "weights", "costs"]))
    w, C = (None if choice == "costs" else w), (None if choice == "weights" else C)
    assume(not weighted(w, C, y, k).plain)  # all ones and unit costs take the plain path (tested on its own)
    return X, y, k, w, C


def check(raw, X, y, k, w, C, depth):
    """Every tree's cost is its true cost, predictions are least-cost classes, and the front is the oracle's."""
    wt = weighted(w, C, y, k)
    cm = wt.cost_matrix(k)
    rw = wt.row_weights(len(y))
    ref = oracle_costs(raw_tests(X), y, k, depth, w, C)
    assert raw.objective == "cost"
    best = {}
    for sol in raw.solutions:
        t = sol.tree
        leaves = apply_tree(t.feature, t.threshold, t.left, t.right, X)
        assert sol.info["cost"] == tree_cost(y, t.prediction[leaves], wt, k)
        for node in range(t.n_nodes):
            rows = np.flatnonzero(_reaches(t, X, node))
            assert np.array_equal(t.value[node], np.bincount(y[rows], minlength=k))  # plain counts
            mass = np.bincount(y[rows], weights=rw[rows], minlength=k)
            assert t.prediction[node] == leaf_prediction(mass, cm)[0]
        assert sol.optimal
        assert np.isclose(sol.info["cost"], ref[t.n_splits], rtol=1e-9, atol=1e-12)
        best[t.n_splits] = sol.info["cost"]
    for b in range(ref.size):  # one tree per distinct optimum: every budget's optimum is on the front
        assert np.isclose(min(c for s, c in best.items() if s <= b), ref[b], rtol=1e-9, atol=1e-12)
    costs = [best[s] for s in sorted(best)]
    assert all(a > b for a, b in zip(costs, costs[1:]))
    return ref


def _reaches(t, X, node):
    """Rows of ``X`` that pass through ``node``."""
    inside = np.ones(X.shape[0], dtype=bool)
    path = {0: inside}
    stack = [0]
    while stack:
        i = stack.pop()
        if t.feature[i] < 0:
            continue
        go = X[:, t.feature[i]] <= t.threshold[i]
        path[t.left[i]] = path[i] & go
        path[t.right[i]] = path[i] & ~go
        stack += [t.left[i], t.right[i]]
    return path[node]


@SETTINGS
@given(data=problems(), depth=st.integers(1, 2))
def test_front_matches_oracle_depth_1_2(data, depth):
    X, y, k, w, C = data
    check(contree(X, y, k, max_depth=depth, sample_weight=w, costs=C), X, y, k, w, C, depth)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=problems(max_rows=9))
def test_front_matches_oracle_depth_3(data):
    X, y, k, w, C = data
    check(contree(X, y, k, max_depth=3, sample_weight=w, costs=C), X, y, k, w, C, 3)


@SETTINGS
@given(data=problems(max_rows=10), depth=st.integers(1, 3))
def test_single_tree_reaches_the_optimum(data, depth):
    X, y, k, w, C = data
    raw = contree(X, y, k, max_depth=depth, front=False, sample_weight=w, costs=C)
    ref = oracle_costs(raw_tests(X), y, k, depth, w, C)
    (sol,) = raw.solutions
    assert sol.optimal
    assert np.isclose(sol.info["cost"], ref[-1], rtol=1e-9, atol=1e-12)


@SETTINGS
@given(data=problems(max_rows=10), cap=st.integers(0, 3))
def test_max_nodes_caps_the_front(data, cap):
    X, y, k, w, C = data
    raw = contree(X, y, k, max_depth=2, max_nodes=cap, sample_weight=w, costs=C)
    ref = oracle_costs(raw_tests(X), y, k, 2, w, C)
    assert max(s.tree.n_splits for s in raw.solutions) <= cap
    assert np.isclose(min(s.info["cost"] for s in raw.solutions), ref[min(cap, 3)], rtol=1e-9, atol=1e-12)


@SETTINGS
@given(data=problems(max_rows=10, integral=True), lam=st.sampled_from([0.0, 0.01, 0.05, 0.2]))
def test_sparsity_weighs_cost_over_total_weight(data, lam):
    X, y, k, w, C = data
    raw = contree(X, y, k, max_depth=2, sparsity=lam, sample_weight=w, costs=C)
    ref = oracle_costs(raw_tests(X), y, k, 2, w, C)
    total = weighted(w, C, y, k).row_weights(len(y)).sum()
    (sol,) = raw.solutions
    best = min(ref[b] / total + lam * b for b in range(ref.size))
    assert np.isclose(sol.info["objective"], best, rtol=1e-9, atol=1e-12)
    assert sol.optimal


@SETTINGS
@given(data=problems(max_rows=10), depth=st.integers(1, 3), front=st.booleans())
def test_all_ones_weights_and_unit_costs_give_todays_result(data, depth, front):
    X, y, k, _, _ = data
    plain = contree(X, y, k, max_depth=depth, front=front, n_threads=1)
    ones = contree(X, y, k, max_depth=depth, front=front, n_threads=1, sample_weight=np.ones(len(y)),
                   costs=1.0 - np.eye(k))  # fmt: skip
    assert ones.objective == plain.objective == "misclassifications"
    assert [s.info for s in ones.solutions] == [s.info for s in plain.solutions]
    for a, b in zip(ones.solutions, plain.solutions):
        assert np.array_equal(a.tree.feature, b.tree.feature) and np.array_equal(a.tree.threshold, b.tree.threshold)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=problems(max_rows=12), stop=st.integers(1, 40), front=st.booleans())
def test_stopped_run_returns_true_costs_and_a_valid_bound(monkeypatch_module, data, stop, front):
    X, y, k, w, C = data
    monkeypatch_module.setattr(ct, "_STOP_AFTER_SPLITS", stop)
    raw = contree(X, y, k, max_depth=3, front=front, sample_weight=w, costs=C)
    ref = oracle_costs(raw_tests(X), y, k, 3, w, C)
    wt = weighted(w, C, y, k)
    for sol in raw.solutions:
        t = sol.tree
        leaves = apply_tree(t.feature, t.threshold, t.left, t.right, X)
        assert sol.info["cost"] == tree_cost(y, t.prediction[leaves], wt, k)
        assert sol.info["lower_bound"] <= ref[t.n_splits] * (1 + 1e-9) + 1e-12
        assert sol.info["lower_bound"] <= sol.info["cost"]
        assert sol.info["cost"] >= ref[t.n_splits] * (1 - 1e-9) - 1e-12
        if sol.optimal:
            assert np.isclose(sol.info["cost"], ref[t.n_splits], rtol=1e-9, atol=1e-12)
    for b, lb in enumerate(raw.stats["lower_bounds"]):
        assert lb <= ref[b] * (1 + 1e-9) + 1e-12
    if raw.status != "done":
        assert not raw.stats["proven"] and not any(s.optimal for s in raw.solutions)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_stopped_run_bounds_by_rows_alike_in_every_feature(monkeypatch):
    # rows 0-3 share every value: whatever the tree, one leaf holds classes 0 and 1 at weights 1 + 2 and 3
    X = np.array([[0.0, 1.0]] * 4 + [[float(i), float(i % 3)] for i in range(1, 9)])
    y = np.array([0, 0, 1, 1] + [i % 2 for i in range(8)])
    w = np.array([1.0, 2.0, 3.0, 0.5] + [1.0] * 8)
    monkeypatch.setattr(ct, "_STOP_AFTER_SPLITS", 1)
    raw = contree(X, y, 2, max_depth=3, sample_weight=w)
    assert raw.status == "time_limit" and not raw.stats["proven"]
    assert raw.stats["lower_bound"] == 3.0  # min(1 + 2, 3 + 0.5)
    assert "rows alike in every feature" in raw.stats["notices"][0]


def test_cancelled_run_still_returns_a_tree_unproven():
    X = np.arange(20, dtype=float).reshape(10, 2)
    y = np.array([0, 1] * 5)
    with Control() as control:
        control.cancel()
        raw = contree(X, y, 2, max_depth=3, sample_weight=np.arange(1.0, 11.0), control=control)
    assert raw.solutions and not any(s.optimal for s in raw.solutions)
    assert raw.stats["lower_bound"] <= raw.stats["upper_bound"]


def test_costs_change_the_tree_it_picks():
    # 2 malignant (1) among 8 benign: unweighted, one leaf "benign" is best at depth 0 and a costly miss is ignored
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0], [9.0]])
    y = np.array([0, 0, 0, 0, 1, 0, 1, 0, 0, 0])
    C = np.array([[0.0, 1.0], [10.0, 0.0]])
    raw = contree(X, y, 2, max_depth=1, costs=C)
    (leaf, stump) = raw.solutions
    assert leaf.tree.prediction[0] == 1 and leaf.info["cost"] == 8.0  # predicting 1 everywhere: 8 false alarms
    assert stump.info["cost"] == 4.0  # x <= 3.5 benign, the rest malignant: 4 false alarms
    assert stump.tree.threshold[0] == 3.5


def test_registered_adapter_takes_weights():
    from treeexplorer.adapters.contree import SPEC

    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, 1, 0])
    with Control() as control:
        raw = SPEC.run(X, y, 2, control, max_depth=1, sample_weight=np.array([5.0, 1.0, 1.0, 1.0]), costs=None)
    assert SPEC.weighted and raw.objective == "cost"
    assert min(s.info["cost"] for s in raw.solutions) == 1.0
