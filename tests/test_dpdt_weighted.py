"""Weighted, cost-sensitive DPDT (``sample_weight=``, ``costs=``): whole weights are repeated rows, the front is the
naive reference MDP's, reported costs are the objective's, and class weights help where they should."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import predict_raw
from treeexplorer.solvers._objective import leaf_prediction, tree_cost, weighted
from treeexplorer.solvers.dpdt import dpdt

import treeexplorer as tx
from tests.test_dpdt_naive import ReferenceMDP, lower_hull

SMALL = settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tables(draw, max_rows=16, min_weight=0):
    """A small table of few distinct values (many tied splits), whole row weights and DPDT's settings."""
    n = draw(st.integers(3, max_rows))
    p = draw(st.integers(1, 3))
    k = draw(st.integers(2, 3))
    X = np.array(draw(st.lists(st.lists(st.integers(0, 4), min_size=p, max_size=p), min_size=n, max_size=n)), float)
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    w = np.array(draw(st.lists(st.integers(min_weight, 3), min_size=n, max_size=n)), dtype=float)
    assume(w.sum() > 0)
    gen = draw(st.sampled_from(["cart", "hybrid", "exhaustive"]))
    kw = {"max_depth": draw(st.integers(1, 3)), "generator": gen, "n_classes": k, "hybrid_depth": 1}
    kw["cart_depth"] = draw(st.integers(1, 2))
    return X, y, w, kw


def points(front, total, weighted_run=True):
    """Each tree's (cost, tests in rows or weight, kind, splits), in the front's order."""
    cost = "cost" if weighted_run else "train_errors"
    return [
        (s.info[cost], round(s.info["expected_tests"] * total), s.info["kind"], s.info["splits"])
        for s in front.solutions
    ]


def structures(front):
    return [(s.tree.feature.tolist(), s.tree.threshold.tolist(), s.tree.prediction.tolist()) for s in front.solutions]


@SMALL
@given(tables())
def test_whole_weights_are_repeated_rows(case):
    X, y, w, kw = case
    rep = np.repeat(np.arange(len(y)), w.astype(int))  # weight-0 rows dropped
    ours = dpdt(X, y, sample_weight=w, **kw)
    assert ours.objective == "cost" and ours.status == "done"
    # the same weighted search on the repeated rows (weights 2 there, 2w here: the same masses up to a power of
    # two, so the same float impurities): the same trees and figures, ties included
    doubled = dpdt(X, y, sample_weight=2 * w, **kw)
    repeated = dpdt(X[rep], y[rep], sample_weight=np.full(len(rep), 2.0), **kw)
    assert points(doubled, 2 * w.sum()) == points(repeated, 2 * len(rep))
    assert structures(doubled) == structures(repeated)
    assert [c / 2 for c, *_ in points(doubled, 2 * w.sum())] == [c for c, *_ in points(ours, w.sum())]
    plain = dpdt(X[rep], y[rep], **kw)
    assert points(ours, w.sum())[-1] == points(plain, len(rep), weighted_run=False)[-1]  # the root leaf
    if kw["generator"] == "exhaustive":  # every threshold: no impurity to tie, the plain run's front exactly
        assert points(ours, w.sum()) == points(plain, len(rep), weighted_run=False)
        assert structures(ours) == structures(plain)
        assert all(s.optimal for s in ours.solutions)
    # (the CART generators: the weighted CART's float impurity may break an exact tie otherwise than the plain
    # CART's exact comparison, which changes the MDP; hence the comparison with weights 2 above)


@SMALL
@given(tables(), st.integers(2, 5), st.sampled_from(["cart", "hybrid", "exhaustive", "topb", "cart_leaves"]))
def test_scaled_costs_give_the_plain_trees(case, scale, generator):
    X, y, _, kw = case
    kw = {**kw, "generator": generator, "top_b": 3, "cart_leaves": 3}
    k = kw["n_classes"]
    scaled = dpdt(X, y, costs=scale * (1.0 - np.eye(k)), **kw)
    plain = dpdt(X, y, **kw)
    assert structures(scaled) == structures(plain)
    assert [s.info["cost"] for s in scaled.solutions] == [scale * s.info["train_errors"] for s in plain.solutions]
    assert [s.info["expected_tests"] for s in scaled.solutions] == [s.info["expected_tests"] for s in plain.solutions]


@SMALL
@given(tables(max_rows=10, min_weight=1), st.data())
def test_front_is_the_reference_mdps(case, data):
    """Exhaustive tests, whole weights and costs: the hull and the splits front of the naive reference MDP
    (``tests/test_dpdt_naive.py``) exactly, every tree a policy of it worth what is reported."""
    X, y, w, kw = case
    k = kw["n_classes"]
    C = np.array(data.draw(st.lists(st.integers(0, 3), min_size=k * k, max_size=k * k)), dtype=float).reshape(k, k)
    np.fill_diagonal(C, 0)
    kw = {**kw, "generator": "exhaustive"}
    front = dpdt(X, y, sample_weight=w, costs=C, **kw)
    total = int(w.sum())
    mdp = ReferenceMDP(X, y, kw["max_depth"], "exhaustive", 0, w=w, C=C)
    hull = [s for s in front.solutions if s.info["on_hull"]]
    reported = [(round(s.info["expected_tests"] * total), s.info["cost"]) for s in hull]
    assert reported == lower_hull(mdp.pareto(*mdp.root))[::-1]
    memo = {}
    for s in front.solutions:
        t, e = round(s.info["expected_tests"] * total), s.info["cost"]
        assert mdp.walk(s.tree) == (t, e)
        if s.info["on_splits_front"]:
            for b in range(s.info["budget"], s.info["budget_max"] + 1):
                assert mdp.budget(*mdp.root, b, memo)[0] == e, f"budget {b}"
        assert s.optimal and s.info["optimal_in_mdp"]


def _real_case(seed, n=120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).round(1)
    y = (X[:, 0] + rng.normal(scale=0.8, size=n) > 0.6).astype(np.int64) + (X[:, 1] > 1.0)
    w = rng.uniform(0.0, 3.0, n) * (rng.random(n) > 0.1)  # some rows weigh 0
    C = rng.uniform(0.5, 4.0, (3, 3))
    np.fill_diagonal(C, 0.0)
    return X, y, w, C


@pytest.mark.parametrize("generator", ["cart", "hybrid", "exhaustive"])
@pytest.mark.parametrize("seed", range(3))
def test_reported_cost_is_the_objectives(generator, seed):
    """Real weights and costs: each tree's cost is ``tree_cost`` of its predictions, every node predicts its
    class of least cost, weight-0 rows are counted in the nodes, and no split merely repeats its parent's
    prediction (a rounding error never buys a split)."""
    X, y, w, C = _real_case(seed, n=40 if generator == "exhaustive" else 120)  # exhaustive: small data only
    wt = weighted(w, C, y, 3)
    front = dpdt(X, y, max_depth=3, generator=generator, cart_depth=2, n_classes=3, sample_weight=w, costs=C)
    costs = [s.info["cost"] for s in front.solutions]
    assert costs == sorted(costs) and len(front.solutions) >= 3
    for s in front.solutions:
        tree = s.tree
        assert s.info["cost"] == pytest.approx(tree_cost(y, predict_raw(tree, X), wt, 3), rel=1e-9, abs=1e-9)
        assert tree.value[0].sum() == len(y)
        leaf = _leaves(tree, X)
        for j in range(tree.feature.shape[0]):
            if tree.feature[j] < 0:
                mass = np.bincount(y[leaf == j], weights=w[leaf == j], minlength=3)
                assert tree.prediction[j] == leaf_prediction(mass, C)[0]
            else:
                kids = (tree.left[j], tree.right[j])
                leaves = all(tree.feature[c] < 0 for c in kids)
                assert not (leaves and tree.prediction[kids[0]] == tree.prediction[kids[1]]), "a useless split"


def _leaves(tree, X):
    """The leaf each row reaches."""
    leaf = np.zeros(len(X), dtype=np.int64)
    for i in range(len(X)):
        j = 0
        while tree.feature[j] >= 0:
            j = tree.left[j] if X[i, tree.feature[j]] <= tree.threshold[j] else tree.right[j]
        leaf[i] = j
    return leaf


def test_refusals_are_one_line():
    X, y, w, _ = _real_case(0, n=30)
    for generator in ("topb", "cart_leaves"):
        with pytest.raises(ValueError, match=f"generator='{generator}' does not take row or class weights"):
            dpdt(X, y, generator=generator, sample_weight=w)
    with pytest.raises(ValueError, match="every sample weight is 0"):
        dpdt(X, y, sample_weight=np.zeros(len(y)), costs=2 * (1 - np.eye(3)))


def test_balanced_class_weights_through_the_api():
    """balance-scale (B is 8% of the rows): balanced class weights make the cost ``n (1 - balanced accuracy)``, so
    the weighted run's best tree for every number of splits has a better balanced accuracy than the unweighted
    run's (the same single split: the best one for both)."""
    plain = tx.solve("balance-scale", solver="dpdt")
    balanced = tx.solve("balance-scale", solver="dpdt", class_weight="balanced")
    assert balanced.weights and balanced.weights["class_weight_mode"] == "balanced"
    dw, dp = balanced.to_frame(), plain.to_frame()
    for splits in range(1, 7):
        ours = dw.loc[dw["splits"] <= splits, "train_balanced_accuracy"].max()
        theirs = dp.loc[dp["splits"] <= splits, "train_balanced_accuracy"].max()
        assert ours > theirs if splits > 1 else ours == pytest.approx(theirs), (splits, ours, theirs)
    assert dw.loc[dw["splits"] == 6, "train_balanced_accuracy"].max() > 0.59 > dp["train_balanced_accuracy"].max()


def test_cancelled_run_returns_the_trees_of_the_states_so_far():
    """A cancel lands while the weighted MDP grows: the front holds trees of the states expanded so far (the others
    are leaves), worth what they report, none claimed optimal."""
    from tests.waiting import cancelling_control

    X, y, w, C = _real_case(1)
    control, on = cancelling_control(lambda info: info["phase"].startswith("dpdt") and info.get("states", 0) > 50)
    front = dpdt(X, y, max_depth=3, generator="exhaustive", n_classes=3, sample_weight=w, costs=C, control=control)
    assert front.status == "cancelled" and on.clock.stop().within(2.0), f"the cancel took {on.clock} to land"
    assert not any(s.optimal or s.info["optimal_in_mdp"] for s in front.solutions)
    wt = weighted(w, C, y, 3)
    for s in front.solutions:
        assert s.info["cost"] == pytest.approx(tree_cost(y, predict_raw(s.tree, X), wt, 3), rel=1e-9, abs=1e-9)
    assert min(s.info["cost"] for s in front.solutions) < front.solutions[-1].info["cost"]  # better than the leaf
