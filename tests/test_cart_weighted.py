"""Weighted CART (``sample_weight``, ``class_weight``, ``costs``) against scikit-learn's DecisionTreeClassifier."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_classification
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.class_weight import compute_sample_weight
from treeexplorer.solvers import predict_raw
from treeexplorer.solvers._kernels.cart import node_impurity
from treeexplorer.solvers._objective import leaf_prediction, tree_cost, weighted
from treeexplorer.solvers.cart import CRITERIA, cart_path

from tests.test_cart import as_f32, sk_arrays


def _imbalanced():
    X, y = make_classification(400, 6, n_informative=4, weights=[0.9, 0.1], random_state=3)
    return X, y


def _ties():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 4, size=(300, 5)).astype(float)  # few distinct values: many equal splits
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 3, 300) > 4).astype(np.int64) + (X[:, 2] > 2)
    return X, y


TABLES = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "imbalanced": _imbalanced,
    "ties": _ties,
}


def weighted_decrease(rows, X, y, w, f, t, k, crit):
    """Weighted impurity decrease (times the node's weight) of the split ``X[:, f] <= t`` of ``rows``."""
    mass = np.bincount(y[rows], weights=w[rows], minlength=k)
    go = X[rows, f] <= t
    ml = np.bincount(y[rows[go]], weights=w[rows[go]], minlength=k)
    mr = mass - ml
    parts = [m.sum() * node_impurity(m, crit) for m in (mass, ml, mr)]
    return parts[0] - parts[1] - parts[2]


def compare_up_to_ties(ours, sk, X, y, w, k, crit):
    """Walk both trees on the same rows: equal splits recurse; a split that differs (a tie broken otherwise by
    scikit-learn's random feature order) must have the same weighted impurity decrease.  Returns (compared, same)."""
    sf, st, sl, sr = sk_arrays(sk)
    compared = same = 0
    stack = [(0, 0, np.arange(len(y)))]
    while stack:
        a, b, rows = stack.pop()
        compared += 1
        assert np.array_equal(ours.value[a], np.bincount(y[rows], minlength=k))
        if ours.feature[a] < 0 or sf[b] < 0:
            if (ours.feature[a] < 0) != (sf[b] < 0):
                # scikit-learn splits a node of one class whose gini/entropy rounds above its EPSILON (sums of
                # float weights): a split that changes no prediction; anything else is a real difference
                assert ours.feature[a] < 0 and len(np.unique(y[rows])) == 1, f"leaf/split mismatch at node {a}"
            same += 1
            continue
        go_a = X[rows, ours.feature[a]] <= ours.threshold[a]
        go_b = X[rows, sf[b]] <= st[b]
        da = weighted_decrease(rows, X, y, w, ours.feature[a], ours.threshold[a], k, crit)
        db = weighted_decrease(rows, X, y, w, sf[b], st[b], k, crit)
        assert da == pytest.approx(db, rel=1e-9, abs=1e-9)
        if not np.array_equal(go_a, go_b):
            continue
        same += 1
        stack.append((ours.left[a], sl[b], rows[go_a]))
        stack.append((ours.right[a], sr[b], rows[~go_a]))
    return compared, same


def _weights(kind, y, seed):
    rng = np.random.default_rng(seed)
    if kind == "balanced":
        return "balanced", None, compute_sample_weight("balanced", y)
    if kind == "integer":
        w = rng.integers(0, 5, len(y)).astype(float)
        return None, w, w
    w = rng.uniform(0.1, 3.0, len(y))
    return "balanced", w, w * compute_sample_weight("balanced", y)


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("kind", ["balanced", "integer", "real+balanced"])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_weighted_cart_matches_sklearn_up_to_ties(name, kind, criterion):
    X, y = TABLES[name]()
    X = as_f32(X)
    y = np.asarray(y, dtype=np.int64)
    k = int(y.max()) + 1
    cw, sw, w = _weights(kind, y, seed=len(name))
    sk = DecisionTreeClassifier(max_depth=4, criterion=criterion, class_weight=cw, random_state=0)
    sk.fit(X, y, sample_weight=sw)
    front = cart_path(X, y, max_depth=4, criterion=criterion, n_classes=k, sample_weight=w)
    plain = weighted(w, None, y, k).plain  # balanced iris: every weight 1, the plain path
    assert (front.objective == "cost") != plain
    full = front.solutions[0].tree
    compared, same = compare_up_to_ties(full, sk.tree_, X, y, w, k, CRITERIA[criterion])
    assert same >= 1 and compared >= 1
    ours_pred = predict_raw(full, X)
    ours_cost = tree_cost(y, ours_pred, weighted(w, None, y, k), k)
    if not plain:
        assert front.solutions[0].info["cost"] == pytest.approx(ours_cost, rel=1e-9)
    if same == compared:  # the same tree: the same predictions and weighted training cost
        assert np.array_equal(ours_pred, sk.predict(X))
        assert ours_cost == pytest.approx(tree_cost(y, sk.predict(X), weighted(w, None, y, k), k), rel=1e-12)
    else:  # a tie broken otherwise (random feature order): report, never silently pass a different tree
        assert compared - same <= compared // 2


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("kind", ["integer", "real+balanced"])
def test_weighted_pruning_path_matches_sklearn(name, kind):
    X, y = TABLES[name]()
    X = as_f32(X)
    y = np.asarray(y, dtype=np.int64)
    k = int(y.max()) + 1
    cw, sw, w = _weights(kind, y, seed=1)
    sk = DecisionTreeClassifier(max_depth=5, class_weight=cw, random_state=0)
    path = sk.cost_complexity_pruning_path(X, y, sample_weight=sw)
    sk.fit(X, y, sample_weight=sw)
    front = cart_path(X, y, max_depth=5, n_classes=k, sample_weight=w)
    compared, same = compare_up_to_ties(front.solutions[0].tree, sk.tree_, X, y, w, k, 0)
    if same != compared or sk.tree_.node_count != front.solutions[0].tree.n_nodes:
        pytest.skip(f"{name}: scikit-learn broke a tie otherwise (or split a one-class node): another tree")
    alphas = [s.info["alpha_lo"] for s in front.solutions]
    imps = [s.info["impurity"] for s in front.solutions]
    np.testing.assert_allclose(alphas, path.ccp_alphas, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(imps, path.impurities, rtol=1e-7, atol=1e-12)


def test_costs_label_leaves_by_least_cost_and_plain_weights_take_the_plain_path():
    X, y = _imbalanced()
    X = as_f32(X)
    C = np.array([[0.0, 1.0], [10.0, 0.0]])  # missing a positive costs 10
    front = cart_path(X, y, max_depth=3, n_classes=2, costs=C)
    w = weighted(None, C, y, 2)
    for sol in front.solutions:
        t = sol.tree
        for node in range(t.n_nodes):
            assert t.prediction[node] == leaf_prediction(t.value[node].astype(float), C)[0]
        assert sol.info["cost"] == pytest.approx(tree_cost(y, predict_raw(t, X), w, 2))
    # the root alone: predicting the minority class is cheaper than missing 10x its rows
    assert front.solutions[-1].tree.prediction[0] == 1
    plain = cart_path(X, y, max_depth=3, n_classes=2)
    ones = cart_path(X, y, max_depth=3, n_classes=2, sample_weight=np.ones(len(y)))
    assert plain.objective == ones.objective != "cost"
    assert [s.info for s in plain.solutions] == [s.info for s in ones.solutions]


def test_max_leaves_with_weights_is_refused_in_one_line():
    X, y = _imbalanced()
    with pytest.raises(ValueError, match="max_leaves"):
        cart_path(X, y, max_leaves=4, sample_weight=np.ones(len(y)) * 2)
