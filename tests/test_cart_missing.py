"""CART on a matrix with missing values (NaN) against scikit-learn's DecisionTreeClassifier and a brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.tree import DecisionTreeClassifier
from treeexplorer.solvers import predict_raw
from treeexplorer.solvers._kernels.cart import node_impurity
from treeexplorer.solvers._kernels.predict import node_counts_missing
from treeexplorer.solvers.cart import CRITERIA, cart_path, fit_cart

from tests.test_cart import _stopped, as_f32, random_continuous


def with_gaps(X, fraction, seed):
    """``X`` (float32 values, as scikit-learn fits) with ``fraction`` of its cells set to NaN at random (MCAR)."""
    X = as_f32(X)
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


TABLES = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "random": lambda: random_continuous(3, n=400),
}


def goes_left(X, rows, f, t, missing_left):
    """Which of ``rows`` a split sends left: ``x <= t``, or the NaN rows when ``missing_left``."""
    x = X[rows, f]
    return (x <= t) | (np.isnan(x) & bool(missing_left))


def decrease(rows, X, y, w, f, t, ml, k, crit):
    """Weighted impurity decrease (times the node's weight) of a split of ``rows`` that sends NaN left if ``ml``."""
    go = goes_left(X, rows, f, t, ml)
    mass = np.bincount(y[rows], weights=w[rows], minlength=k)
    mleft = np.bincount(y[rows[go]], weights=w[rows[go]], minlength=k)
    parts = [m.sum() * node_impurity(m, crit) for m in (mass, mleft, mass - mleft)]
    return parts[0] - parts[1] - parts[2]


def compare_with_sklearn(ours, sk, X, y, w, k, crit):
    """Walk both trees on the same rows.  Where the splits send the same rows each way, the feature, the threshold
    and (at nodes with gaps in the feature) the missing side must be scikit-learn's, and the walk recurses; where
    they differ (a tie scikit-learn broke by its random feature order) the impurity decreases must be equal.
    Returns (nodes compared, nodes with the same split)."""
    tr = sk.tree_
    compared = same = 0
    stack = [(0, 0, np.arange(len(y)))]
    while stack:
        a, b, rows = stack.pop()
        compared += 1
        assert np.array_equal(ours.value[a], np.bincount(y[rows], minlength=k)), f"class counts of node {a}"
        sk_leaf = tr.children_left[b] < 0
        if ours.feature[a] < 0 or sk_leaf:
            assert (ours.feature[a] < 0) == sk_leaf, f"leaf/split mismatch at our node {a}"
            same += 1
            continue
        fa, ta, ma = ours.feature[a], ours.threshold[a], ours.missing_left[a]
        fb, tb, mb = tr.feature[b], tr.threshold[b], tr.missing_go_to_left[b]
        go_a = goes_left(X, rows, fa, ta, ma)
        go_b = goes_left(X, rows, fb, tb, mb)
        da = decrease(rows, X, y, w, fa, ta, ma, k, crit)
        db = decrease(rows, X, y, w, fb, tb, mb, k, crit)
        assert da == pytest.approx(db, rel=1e-9, abs=1e-9), f"our node {a} splits worse than scikit-learn's"
        if np.array_equal(go_a, go_b):
            if fa == fb:  # (another feature may split the rows alike)
                gaps = bool(np.isnan(X[rows, fa]).any())
                assert ma == (int(mb) if gaps else 0), f"missing side of our node {a}"
                assert ta == pytest.approx(tb, rel=1e-6), f"threshold of our node {a}"
            same += 1
            stack.append((ours.left[a], tr.children_left[b], rows[go_a]))
            stack.append((ours.right[a], tr.children_right[b], rows[~go_a]))
    return compared, same


def sklearn_twin(ours, X, y, w, k, **kw):
    """The scikit-learn tree equal to ours, node for node.  scikit-learn breaks a tie between features by its
    random visiting order (ours: the lowest index) and a tie broken otherwise changes the whole subtree below it
    (its training errors too), so random states are tried until one visits the tied features in index order;
    every tree tried must split each node it shares with ours as well as ours does (``compare_with_sklearn``)."""
    crit = CRITERIA[kw.get("criterion", "gini")]
    for seed in range(40):
        sk = DecisionTreeClassifier(random_state=seed, **kw).fit(X, y, sample_weight=w)
        compared, same = compare_with_sklearn(ours, sk, X, y, w, k, crit)
        if same == compared:
            return sk
    raise AssertionError(f"no random_state of scikit-learn grows our tree ({kw})")


@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize("fraction", [0.05, 0.2])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_matches_sklearn_on_tables_with_gaps(name, fraction, criterion):
    X, y = TABLES[name]()
    X = with_gaps(X, fraction, seed=1)
    k = int(y.max()) + 1
    for depth in (1, 2, 3, 4):
        ours = fit_cart(X, y, max_depth=depth, criterion=criterion)
        assert ours.missing_left is not None and ours.missing_left.dtype == np.int64
        sk = sklearn_twin(ours, X, y, np.ones(len(y)), k, max_depth=depth, criterion=criterion)
        assert np.array_equal(predict_raw(ours, X), sk.predict(X))  # training rows with gaps included


def test_present_vs_missing_split_is_threshold_inf_missing_right():
    # the class is whether feature 0 is missing: the best root split is "present left, missing right"
    rng = np.random.default_rng(0)
    X = as_f32(rng.normal(size=(200, 3)))
    y = (rng.random(200) < 0.3).astype(np.int64)
    X[y == 1, 0] = np.nan
    ours = fit_cart(X, y, max_depth=1)
    sk = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
    assert ours.feature[0] == 0 and ours.threshold[0] == np.inf and ours.missing_left[0] == 0
    assert sk.tree_.threshold[0] == np.inf and not sk.tree_.missing_go_to_left[0]
    assert ours.value[ours.left[0]].tolist() == [int((y == 0).sum()), 0]
    assert np.array_equal(predict_raw(ours, X), y)
    # a feature whose present values are all equal still offers that split (scikit-learn >= 1.9 does too)
    X[:, 0] = np.where(np.isnan(X[:, 0]), np.nan, 1.0)
    assert fit_cart(X, y, max_depth=1).threshold[0] == np.inf


@pytest.mark.parametrize("name", ["iris", "wine", "random"])
def test_weighted_matches_sklearn_sample_weight(name):
    X, y = TABLES[name]()
    X = with_gaps(X, 0.15, seed=2)
    w = np.random.default_rng(5).integers(1, 5, len(y)).astype(float)
    k = int(y.max()) + 1
    for depth in (2, 4):
        front = cart_path(X, y, max_depth=depth, sample_weight=w, front=False)
        ours = front.solutions[0].tree
        sk = sklearn_twin(ours, X, y, w, k, max_depth=depth)
        assert np.array_equal(predict_raw(ours, X), sk.predict(X))


def test_pruning_path_matches_sklearn_with_gaps():
    X, y = random_continuous(1, n=600)
    X = with_gaps(X, 0.1, seed=3)
    kw = {"max_depth": 4, "min_samples_leaf": 10}
    path = DecisionTreeClassifier(random_state=0, **kw).cost_complexity_pruning_path(X, y)
    front = cart_path(X, y, **kw)
    alphas = np.array([s.info["alpha_lo"] for s in front.solutions])
    np.testing.assert_allclose(alphas, path.ccp_alphas, rtol=0, atol=1e-12)
    np.testing.assert_allclose([s.info["impurity"] for s in front.solutions], path.impurities, rtol=0, atol=1e-12)
    for j, sol in enumerate(front.solutions):
        tree = sol.tree
        assert tree.missing_left is not None and tree.missing_left.shape == (tree.n_nodes,)
        assert np.array_equal(tree.value, _counts(tree, X, y, 3)), "class counts of a pruned tree"
        if j + 1 < len(alphas) and alphas[j + 1] == alphas[j]:
            continue  # sklearn's ccp_alpha=a prunes every node of effective alpha a: the last of the group
        sk = DecisionTreeClassifier(random_state=0, ccp_alpha=path.ccp_alphas[j], **kw).fit(X, y)
        assert np.array_equal(predict_raw(tree, X), sk.predict(X))


def test_costs_path_carries_missing_sides_and_counts():
    X, y = TABLES["iris"]()
    X = with_gaps(X, 0.2, seed=4)
    costs = np.array([[0, 1, 5], [1, 0, 1], [5, 1, 0]], dtype=float)
    w = np.where(np.arange(len(y)) % 7 == 0, 0.0, 1.0)  # some rows of weight 0: counted afterwards
    front = cart_path(X, y, max_depth=3, costs=costs, sample_weight=w)
    assert front.objective == "cost" and len(front.solutions) >= 2
    for sol in front.solutions:
        t = sol.tree
        assert t.missing_left is not None
        assert np.array_equal(t.value, _counts(t, X, y, 3))
        leaves = np.flatnonzero(t.feature < 0)
        pred = predict_raw(t, X)
        assert sol.info["cost"] == pytest.approx(float((w * costs[y, pred]).sum()))
        assert set(np.unique(pred)) <= set(t.prediction[leaves])


def test_complete_data_keeps_its_path():
    X, y = load_iris(return_X_y=True)
    front = cart_path(X, y, max_depth=3)
    assert all(s.tree.missing_left is None for s in front.solutions)
    assert fit_cart(X, y, max_depth=2).missing_left is None
    assert cart_path(X, y, max_depth=2, sample_weight=np.arange(150) % 3 + 1.0).solutions[0].tree.missing_left is None


def test_a_stopped_run_returns_the_tree_so_far_with_its_missing_sides():
    X, y = TABLES["wine"]()
    X = with_gaps(X, 0.1, seed=0)
    for kw in ({}, {"sample_weight": np.arange(len(y)) % 3 + 1.0}):
        front = cart_path(X, y, max_depth=3, control=_stopped(), **kw)
        assert front.status == "cancelled" and len(front.solutions) == 1
        tree = front.solutions[0].tree
        assert tree.n_nodes == 1 and tree.missing_left.tolist() == [0] and "notices" in front.stats


def test_refusals_are_one_line():
    X, y = load_iris(return_X_y=True)
    X = with_gaps(X, 0.1, seed=0)
    with pytest.raises(ValueError, match=r"^cart: max_leaves .* missing values .* yet"):
        cart_path(X, y, max_leaves=4)
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        fit_cart(X, y)


# -- small random data: the tree's own walk, its counts, and the best stump by brute force ---------------------


def _counts(tree, X, y, k):
    return node_counts_missing(tree.feature, tree.threshold, tree.left, tree.right, tree.missing_left, X, y, k)


def python_walk(tree, x):
    """The leaf one row reaches, walked in plain Python from the module docstring's rule."""
    k = 0
    while tree.feature[k] >= 0:
        v = x[tree.feature[k]]
        left = tree.missing_left[k] == 1 if np.isnan(v) else v <= tree.threshold[k]
        k = tree.left[k] if left else tree.right[k]
    return k


@st.composite
def gappy_data(draw):
    n = draw(st.integers(2, 30))
    p = draw(st.integers(1, 3))
    k = draw(st.integers(2, 3))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = rng.integers(0, draw(st.integers(1, 5)), size=(n, p)).astype(float)
    X[rng.random((n, p)) < draw(st.sampled_from([0.1, 0.3, 0.6]))] = np.nan
    y = rng.integers(0, k, n)
    return X, y, rng.integers(1, 4, n).astype(float), k


def _fit(X, y, w, weighted, **kw):
    if weighted:
        return cart_path(X, y, sample_weight=w, front=False, n_classes=kw.pop("n_classes"), **kw).solutions[0].tree
    return fit_cart(X, y, **kw)


@settings(max_examples=150, deadline=None)
@given(data=gappy_data(), weighted=st.booleans(), depth=st.integers(1, 4), msl=st.integers(1, 3))
def test_walk_and_counts_agree_with_plain_python(data, weighted, depth, msl):
    X, y, w, k = data
    w = w if weighted else np.ones(len(y))
    tree = _fit(X, y, w, weighted, max_depth=depth, min_samples_leaf=msl, n_classes=k)
    if not np.isnan(X).any():
        assert tree.missing_left is None
        return
    leaves = np.array([python_walk(tree, x) for x in X])
    assert np.array_equal(predict_raw(tree, X), tree.prediction[leaves])
    assert np.array_equal(tree.value, _counts(tree, X, y, k))
    assert (tree.feature[leaves] < 0).all()
    inner = np.flatnonzero(tree.feature >= 0)
    for a in inner:  # a side is learnt only where the node's rows have gaps; min_samples_leaf holds
        assert tree.value[tree.left[a]].sum() >= msl and tree.value[tree.right[a]].sum() >= msl
    assert set(np.unique(tree.missing_left)) <= {0, 1}


def best_stump_decrease(X, y, w, k, crit):
    """The largest weighted impurity decrease over every feature, every threshold between two distinct present
    values, both sides for the missing rows, and "present left, missing right" (None: no split at all)."""
    rows = np.arange(len(y))
    best = None
    for f in range(X.shape[1]):
        x = X[:, f]
        vals = np.unique(x[~np.isnan(x)])
        cands = [(t, ml) for t in (vals[:-1] + vals[1:]) / 2 for ml in (0, 1)]
        if np.isnan(x).any() and len(vals):
            cands.append((np.inf, 0))
        for t, ml in cands:
            d = decrease(rows, X, y, w, f, t, ml, k, crit)
            best = d if best is None else max(best, d)
    return best


@settings(max_examples=150, deadline=None)
@given(data=gappy_data(), weighted=st.booleans(), criterion=st.sampled_from(["gini", "entropy"]))
def test_depth_one_is_the_best_stump(data, weighted, criterion):
    X, y, w, k = data
    w = w if weighted else np.ones(len(y))
    tree = _fit(X, y, w, weighted, max_depth=1, criterion=criterion, n_classes=k)
    crit = CRITERIA[criterion]
    best = best_stump_decrease(X, y, w, k, crit)
    mass = np.bincount(y, weights=w, minlength=k)
    if tree.feature[0] < 0:  # a leaf: the node is pure or no feature can split it
        assert best is None or node_impurity(mass, crit) <= 1e-15
        return
    ml = 0 if tree.missing_left is None else tree.missing_left[0]
    ours = decrease(np.arange(len(y)), X, y, w, tree.feature[0], tree.threshold[0], ml, k, crit)
    assert ours == pytest.approx(best, rel=1e-9, abs=1e-12)
