"""Rashomon sets ranked by the weighted, cost-sensitive objective: the set against a brute-force enumeration of
every canonical tree with exact (Fraction) costs (``weighted_oracle.canonical_trees``), random integer and real
weights and cost matrices; the first tree against weighted MurTree; and through ``treeexplorer.rashomon``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import predict_raw
from treeexplorer.solvers._objective import tree_cost, weighted
from treeexplorer.solvers.murtree import murtree
from treeexplorer.solvers.rashomon import rashomon
from weighted_oracle import canonical_trees, problems

import treeexplorer as tx

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def key(tree, k=0):
    """The tree's shape and tests, as ``canonical_trees`` names them."""
    if tree.feature[k] < 0:
        return "L"
    return f"({tree.feature[k]} {key(tree, tree.left[k])} {key(tree, tree.right[k])})"


def _approx(x):
    return pytest.approx(float(x), rel=1e-9, abs=1e-9)


@SETTINGS
@given(
    data=problems(max_rows=12, max_features=4),
    depth=st.integers(1, 3),
    K=st.integers(0, 7),
    k=st.integers(1, 400),
    min_leaf=st.sampled_from([1, 1, 2]),
)
def test_k_best_costs_match_the_oracle(data, depth, K, k, min_leaf):
    X, y, n_classes, w, C, _ = data
    K = min(K, (1 << depth) - 1)
    trees = canonical_trees(X, y, n_classes, depth, w, C, min_leaf=min_leaf)
    every = sorted((t for t in trees if t[1] <= K), key=lambda t: t[:2])
    res = rashomon(
        X, y, n_classes, max_depth=depth, max_nodes=K, k=k, sample_weight=w, costs=C, min_leaf_support=min_leaf
    )
    sols = res.solutions
    assert res.status == "done" and res.objective == "cost"
    assert len(sols) == min(k, len(every))
    assert res.stats["complete"] == (k > len(every))
    for sol, (cost, splits, _) in zip(sols, every):  # the k least costs in order, fewer splits first on ties
        assert sol.info["cost"] == _approx(cost) and sol.info["splits"] == splits
    keys = [key(s.tree) for s in sols]
    assert len(set(keys)) == len(keys)  # distinct trees
    oracle = {kk: (cost, splits) for cost, splits, kk in every}
    wt = weighted(w, C, y, n_classes)
    for sol, kk in zip(sols, keys):
        cost, splits = oracle[kk]  # a canonical tree (leaves predicting their least-cost class) ...
        assert sol.info["cost"] == _approx(cost) and sol.tree.n_splits == splits  # ... with that cost
        pred = predict_raw(sol.tree, X)
        assert tree_cost(y, pred, wt, n_classes) == _approx(cost)  # its predictions have that cost
        assert sol.info["errors"] == int((pred != y).sum())
        assert sol.optimal == (sol.info["cost"] == _approx(sols[0].info["cost"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=problems(max_rows=20, max_features=5), depth=st.integers(1, 4))
def test_first_tree_is_weighted_murtrees_optimum_for_every_budget(data, depth):
    X, y, n_classes, w, C, _ = data
    for K in range(min(1 << depth, 8)):
        first = rashomon(X, y, n_classes, max_depth=depth, max_nodes=K, k=1, sample_weight=w, costs=C).solutions[0]
        opt = murtree(X, y, n_classes, max_depth=depth, max_nodes=K, front=False, sample_weight=w, costs=C)
        best = opt.solutions[-1]
        assert first.info["cost"] == _approx(best.info["cost"])
        assert first.info["splits"] == best.info["splits"] and first.optimal


@SETTINGS
@given(data=problems(max_rows=12, max_features=4), depth=st.integers(1, 3), share=st.floats(0.0, 1.0))
def test_max_gap_and_max_errors_are_cost_bounds(data, depth, share):
    """``max_gap`` and ``max_errors`` bound the cost: the set is the full order's prefix within the bound."""
    X, y, n_classes, w, C, _ = data
    full = rashomon(X, y, n_classes, max_depth=depth, k=10**6, sample_weight=w, costs=C).solutions
    best = full[0].info["cost"]
    gap = share * (full[-1].info["cost"] - best)
    tol = 1e-9 * max(1.0, abs(best) + gap)
    for bound in ({"max_gap": gap}, {"max_errors": best + gap}):
        within = rashomon(X, y, n_classes, max_depth=depth, k=10**6, sample_weight=w, costs=C, **bound).solutions
        assert [key(s.tree) for s in within] == [key(s.tree) for s in full[: len(within)]]
        assert all(s.info["cost"] <= best + gap + tol for s in within)
        if len(within) < len(full):  # the first tree left out is beyond the bound
            assert full[len(within)].info["cost"] > best + gap - tol


def test_bad_input_messages():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=np.uint8)
    y = np.array([0, 1, 1, 0])
    w = np.array([1.0, 2.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="objective='branches' ranks error rate .* unweighted"):
        rashomon(X, y, max_depth=2, objective="branches", sparsity=0.01, sample_weight=w)
    with pytest.raises(ValueError, match="max_gap is a cost with weights or costs: a number >= 0"):
        rashomon(X, y, max_depth=2, max_gap=-0.5, sample_weight=w)
    with pytest.raises(ValueError, match="max_errors must be finite"):
        rashomon(X, y, max_depth=2, max_errors=float("inf"), sample_weight=w)
    with pytest.raises(ValueError, match="max_gap must be a non-negative integer"):
        rashomon(X, y, max_depth=2, max_gap=0.5)  # plain: errors
    with pytest.raises(ValueError, match=r"rashomon: 3 distinct \(class, weight\) pairs need .* round the weights"):
        rashomon(X, y, max_depth=2, sample_weight=w, max_bytes=1000)
    # all-ones weights and the default costs are the plain path: errors, no cost
    plain = rashomon(X, y, max_depth=2, k=5, sample_weight=np.ones(4))
    assert plain.objective == "misclassifications" and "cost" not in plain.solutions[0].info


def _table(n=160, seed=5):
    rng = np.random.default_rng(seed)
    a, b, c = (rng.integers(0, 2, n) for _ in range(3))
    rare = (a & b) ^ (rng.random(n) < 0.05)  # a rare class: the plain optimum at depth 1 predicts the majority
    return pd.DataFrame({"a": a, "b": b, "c": c, "label": np.where(rare, "rare", "common")})


def test_api_set_is_ordered_by_the_train_cost():
    df = _table()
    rs = tx.rashomon(df, "label", max_depth=2, k=10, class_weight="balanced", discretizer="none")
    costs = [t.metrics["train_cost"] for t in rs.trees]
    assert len(costs) == 10
    assert all(b >= a - 1e-9 for a, b in zip(costs, costs[1:]))  # in order of the weighted cost
    for t in rs.trees:  # the solver's cost and the assembly's agree, and the gap is in cost
        assert t.info["cost"] == _approx(t.metrics["train_cost"])
        assert t.info["gap"] == _approx(t.info["cost"] - rs.trees[0].info["cost"])
    info = rs.stats["rashomon"]
    assert info["optimum"] == _approx(costs[0])
    assert "balanced class weights" in rs.objective and "Rashomon set" in rs.objective
    plain = tx.rashomon(df, "label", max_depth=2, k=10, discretizer="none")
    assert plain.trees[0].metrics["train_cost"] == plain.trees[0].info["errors"]  # unweighted: errors
    assert [t.info["errors"] for t in plain.trees] == sorted(t.info["errors"] for t in plain.trees)
    with pytest.raises(ValueError, match="objective='branches' ranks the unweighted error rate .* balanced class"):
        tx.rashomon(df, "label", max_depth=2, objective="branches", sparsity=0.01, class_weight="balanced")
    # epsilon bounds the cost by a share of the training rows' total weight (n with balanced weights)
    opts = {"max_depth": 2, "k": 10**4, "class_weight": "balanced", "discretizer": "none"}
    every = tx.rashomon(df, "label", **opts)
    eps = tx.rashomon(df, "label", **opts, epsilon=0.05)
    assert every.stats["rashomon"]["complete"] and eps.stats["rashomon"]["complete"]
    bound = 0.05 * eps.n_train
    within = [t.info["cost"] for t in every.trees if t.info["gap"] <= bound + 1e-9]
    assert len(within) < len(every.trees)  # the bound leaves trees out
    assert [t.info["cost"] for t in eps.trees] == [_approx(c) for c in within]


def test_cli_rashomon_with_class_weights_says_cost(tmp_path, capsys):
    import csv

    from treeexplorer.cli import main

    path = tmp_path / "rare.csv"
    _table().to_csv(path, index=False)
    table = tmp_path / "set.csv"
    args = ["rashomon", str(path), "--target", "label", "--discretizer", "none", "--max-depth", "2", "-k", "8"]
    assert main([*args, "--class-weight", "balanced", "--csv", str(table)]) == 0
    text = capsys.readouterr().out
    assert "ranked by the cost with balanced class weights; optimum cost " in text
    rows = list(csv.DictReader(table.open()))
    api = tx.rashomon(_table(), "label", max_depth=2, k=8, class_weight="balanced", discretizer="none")
    assert [float(r["cost"]) for r in rows] == [_approx(t.info["cost"]) for t in api.trees]
    assert [float(r["gap"]) for r in rows] == [_approx(t.info["gap"]) for t in api.trees]
