"""MurTree on the weighted, cost-sensitive objective: the front, the single tree and ``sparsity`` against the
brute-force oracle (``weighted_oracle``) with random integer and real weights and cost matrices."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers._objective import leaf_costs, tree_cost, weighted
from treeexplorer.solvers.murtree import murtree
from weighted_oracle import oracle_costs, problems

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _close(a, b, real):
    return a == pytest.approx(b, rel=1e-9, abs=1e-9) if real else a == b


def _leaves(tree, X):
    """The leaf each row of ``X`` reaches (a row goes right when its test is 1)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        v = 0
        while tree.feature[v] >= 0:
            v = tree.right[v] if X[i, tree.feature[v]] else tree.left[v]
        out[i] = v
    return out


def _check_tree(sol, X, y, k, w, C, real):
    """Plain counts in ``value``, least-cost predictions, and ``info["cost"]`` the tree's training cost."""
    tree = sol.tree
    leaf = _leaves(tree, X)
    for v in np.flatnonzero(tree.feature < 0):
        rows = leaf == v
        assert np.array_equal(tree.value[v], np.bincount(y[rows], minlength=k))
        per = leaf_costs(np.bincount(y[rows], weights=w[rows], minlength=k), C)
        p = tree.prediction[v]
        if real:
            assert per[p] <= per.min() + 1e-9 * max(1.0, per.min())
        else:
            assert p == int(np.argmin(per))  # the least cost, lowest code on ties
    cost = tree_cost(y, tree.prediction[leaf], weighted(w, C, y, k), k)
    assert _close(sol.info["cost"], cost, real)
    assert sol.info["errors"] == int(np.sum(tree.prediction[leaf] != y))


@SETTINGS
@given(data=problems(), depth=st.integers(1, 3), min_leaf=st.sampled_from([1, 1, 2]))
def test_front_reaches_the_oracles_least_cost_at_every_budget(data, depth, min_leaf):
    X, y, k, w, C, real = data
    expect = oracle_costs(X, y, k, depth, w, C, min_leaf)
    fr = murtree(X, y, k, max_depth=depth, sample_weight=w, costs=C, min_leaf_support=min_leaf)
    assert fr.objective == "cost" and fr.status == "done"
    sols = fr.solutions
    assert all(s.optimal for s in sols)
    for b in range(expect.size):
        (s,) = [s for s in sols if s.info["budget"] <= b <= s.info["budget_max"]]
        assert _close(s.info["cost"], expect[b], real), (b, s.info, expect)
        assert s.tree.n_splits <= b
    for a, b in zip(sols, sols[1:]):  # one tree per distinct optimum: each strictly cheaper than the last
        assert b.info["cost"] < a.info["cost"]
        assert b.info["budget"] == b.tree.n_splits
    for s in sols:
        _check_tree(s, X, y, k, w, C, real)


@SETTINGS
@given(data=problems(), depth=st.integers(1, 3))
def test_single_tree_has_the_least_cost_then_the_fewest_splits(data, depth):
    """Also with real weights: no split wins by a rounding error (the search compares whole quanta)."""
    X, y, k, w, C, real = data
    expect = oracle_costs(X, y, k, depth, w, C)
    sol = murtree(X, y, k, max_depth=depth, front=False, sample_weight=w, costs=C).solutions[-1]
    assert sol.optimal and _close(sol.info["cost"], expect[-1], real)
    ties = np.isclose(expect, expect[-1], rtol=1e-9, atol=1e-9) if real else expect == expect[-1]
    assert sol.tree.n_splits == int(np.flatnonzero(ties)[0])
    _check_tree(sol, X, y, k, w, C, real)


@SETTINGS
@given(data=problems(), depth=st.integers(1, 3), alpha=st.sampled_from([0.0, 0.001, 0.01, 0.05, 0.2]))
def test_sparsity_minimises_cost_over_total_weight_plus_alpha_splits(data, depth, alpha):
    X, y, k, w, C, real = data
    expect = oracle_costs(X, y, k, depth, w, C)
    (sol,) = murtree(X, y, k, max_depth=depth, sparsity=alpha, sample_weight=w, costs=C).solutions
    best = min(e / w.sum() + alpha * b for b, e in enumerate(expect))
    assert sol.info["objective"] == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert sol.info["objective"] == pytest.approx(sol.info["cost"] / w.sum() + alpha * sol.tree.n_splits, rel=1e-12)
    if not real:  # exact arithmetic: ties go to fewer splits
        obj = [Fraction(int(e)) / Fraction(w.sum()) + Fraction(alpha) * b for b, e in enumerate(expect)]
        assert sol.tree.n_splits == obj.index(min(obj))


@SETTINGS
@given(data=problems(real=False), depth=st.integers(1, 3), scale=st.sampled_from([2.0, 0.5, 3.0]))
def test_uniform_weights_scale_todays_front(data, depth, scale):
    """Every weight ``s`` (the weighted path: whole for 2 and 3, quanta for 0.5) costs ``s`` x today's errors."""
    X, y, k, _, _, _ = data
    plain = murtree(X, y, k, max_depth=depth)
    fr = murtree(X, y, k, max_depth=depth, sample_weight=np.full(y.size, scale))
    assert [s.info["cost"] for s in fr.solutions] == [scale * s.info["errors"] for s in plain.solutions]
    assert [s.info["budget"] for s in fr.solutions] == [s.info["budget"] for s in plain.solutions]
    assert [s.info["errors"] for s in fr.solutions] == [s.info["errors"] for s in plain.solutions]


@SETTINGS
@given(data=problems(real=False), depth=st.integers(1, 3))
def test_integer_weights_are_row_copies(data, depth):
    """Integer weights cost what the plain solver's errors are on the data with each row repeated w times."""
    X, y, k, w, _, _ = data
    if np.all(w == 1):
        w = 2 * w  # all ones without costs is the plain path
    rep = w.astype(np.int64)
    fr = murtree(X, y, k, max_depth=depth, sample_weight=w)
    copies = murtree(np.repeat(X, rep, axis=0), np.repeat(y, rep), k, max_depth=depth)
    assert [s.info["cost"] for s in fr.solutions] == [float(s.info["errors"]) for s in copies.solutions]


def test_all_ones_weights_and_default_costs_are_todays_front():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, (60, 6)).astype(np.uint8)
    y = rng.integers(0, 3, 60)
    plain = murtree(X, y, max_depth=3)
    same = murtree(X, y, max_depth=3, sample_weight=np.ones(60), costs=1.0 - np.eye(3))
    assert same.objective == plain.objective == "misclassifications"
    assert [s.info for s in same.solutions] == [s.info for s in plain.solutions]
    for a, b in zip(same.solutions, plain.solutions):
        assert np.array_equal(a.tree.feature, b.tree.feature) and np.array_equal(a.tree.value, b.tree.value)


def test_balanced_weights_leave_the_majority_class():
    """A rare class: plain errors predict the majority everywhere; balanced weights find the rare rows."""
    rng = np.random.default_rng(3)
    n = 200
    y = (np.arange(n) < 12).astype(np.int64)  # 12 rare rows
    X = rng.integers(0, 2, (n, 4)).astype(np.uint8)
    X[:12, 0] = 1
    X[12:, 0] = rng.random(n - 12) < 0.2
    plain = murtree(X, y, max_depth=1, front=False).solutions[-1]
    assert plain.tree.n_splits == 0 and plain.tree.prediction[0] == 0
    w = n / (2 * np.bincount(y))[y]
    bal = murtree(X, y, max_depth=1, front=False, sample_weight=w).solutions[-1]
    assert bal.tree.n_splits == 1 and bal.tree.feature[0] == 0
    assert set(bal.tree.prediction[bal.tree.feature < 0]) == {0, 1}


def test_a_cancelled_weighted_run_keeps_the_budgets_it_proved():
    from treeexplorer.solvers import Control

    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, (80, 8)).astype(np.uint8)
    y = rng.integers(0, 2, 80)
    w = rng.uniform(0.1, 2.0, 80)

    def cancel_after_two(event):  # reports come from the solving thread, after each budget's tree
        if event.get("budget", 0) >= 2 and "partial" in event:
            control.cancel()

    control = Control(progress=cancel_after_two).start()
    try:
        fr = murtree(X, y, max_depth=3, sample_weight=w, control=control)
    finally:
        control.stop()
    assert fr.status == "cancelled"
    expect = oracle_costs(X, y, 2, 2, w)  # trees of at most 2 splits have depth <= 2
    proven = [s for s in fr.solutions if s.optimal]
    assert proven and proven[-1].info["budget_max"] >= 2
    for b in range(3):
        (s,) = [s for s in proven if s.info["budget"] <= b <= s.info["budget_max"]]
        assert s.info["cost"] == pytest.approx(expect[b], rel=1e-9)


def test_zero_total_weight_is_refused_in_one_line():
    X = np.array([[0], [1]], dtype=np.uint8)
    with pytest.raises(ValueError, match="every sample weight is 0"):
        murtree(X, np.array([0, 1]), sample_weight=np.zeros(2))
