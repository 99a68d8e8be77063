"""The numba CART against scikit-learn's DecisionTreeClassifier: trees, impurity decreases, pruning path."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.tree import DecisionTreeClassifier
from treeexplorer.solvers import Control, predict_raw
from treeexplorer.solvers._kernels.cart import node_impurity
from treeexplorer.solvers.cart import CRITERIA, cart_path, fit_cart

LOADERS = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}


def as_f32(X):
    """scikit-learn fits on float32 values: give our CART the same values (see solvers.cart docstring)."""
    return np.asarray(X, dtype=np.float32).astype(np.float64)


def sk_arrays(tree):
    """(feature, threshold, left, right) of a fitted sklearn tree_ in our convention (-1 for leaves)."""
    leaf = tree.children_left < 0
    return (
        np.where(leaf, -1, tree.feature),
        np.where(leaf, 0.0, tree.threshold),
        np.where(leaf, -1, tree.children_left),
        np.where(leaf, -1, tree.children_right),
    )


def decrease(rows, X, y, f, t, n_classes, crit):
    """Weighted impurity decrease of the split ``X[:, f] <= t`` of ``rows``."""
    counts = np.bincount(y[rows], minlength=n_classes)
    go = X[rows, f] <= t
    cl = np.bincount(y[rows[go]], minlength=n_classes)
    n, nl = len(rows), int(go.sum())
    return (
        node_impurity(counts, crit) - nl / n * node_impurity(cl, crit) - (n - nl) / n * node_impurity(counts - cl, crit)
    )


def compare_up_to_ties(ours, sk, X, y, n_classes, crit):
    """Walk both trees on the same rows.  Where the two splits send the same rows left, recurse; where they
    differ (a tie scikit-learn broke by its random feature order) the impurity decreases must be equal.
    Returns (nodes compared, nodes with the same split)."""
    sf, st, sl, sr = sk_arrays(sk)
    compared = same = 0
    stack = [(0, 0, np.arange(len(y)))]
    while stack:
        a, b, rows = stack.pop()
        compared += 1
        assert (ours.feature[a] < 0) == (sf[b] < 0), f"leaf/split mismatch at our node {a}"
        assert np.array_equal(ours.value[a], np.bincount(y[rows], minlength=n_classes))
        if ours.feature[a] < 0:
            same += 1
            continue
        go_a = X[rows, ours.feature[a]] <= ours.threshold[a]
        go_b = X[rows, sf[b]] <= st[b]
        da = decrease(rows, X, y, ours.feature[a], ours.threshold[a], n_classes, crit)
        db = decrease(rows, X, y, sf[b], st[b], n_classes, crit)
        assert da == pytest.approx(db, rel=1e-9, abs=1e-12)
        if np.array_equal(go_a, go_b):
            same += 1
            stack.append((ours.left[a], sl[b], rows[go_a]))
            stack.append((ours.right[a], sr[b], rows[~go_a]))
    return compared, same


def assert_same_tree(ours, sk):
    f, t, left, right = sk_arrays(sk)
    assert np.array_equal(ours.feature, f)
    assert np.array_equal(ours.left, left) and np.array_equal(ours.right, right)
    assert np.array_equal(ours.threshold[f >= 0], t[f >= 0])


def random_continuous(seed, n=300, p=6, k=3):
    """Continuous float32-exact features: no two split candidates tie, so trees must be identical."""
    rng = np.random.default_rng(seed)
    X = as_f32(rng.normal(size=(n, p)))
    score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    return X, y


@pytest.mark.parametrize("name", list(LOADERS))
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("max_depth", [None, 3])
def test_bundled_datasets_match_sklearn_up_to_ties(name, criterion, max_depth):
    X, y = LOADERS[name](return_X_y=True)
    X = as_f32(X)
    ours = fit_cart(X, y, max_depth=max_depth, criterion=criterion)
    sk = DecisionTreeClassifier(max_depth=max_depth, criterion=criterion, random_state=0).fit(X, y).tree_
    compared, same = compare_up_to_ties(ours, sk, X, y, int(y.max()) + 1, CRITERIA[criterion])
    assert compared >= 3 and same >= compared // 2


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_identical_to_sklearn_without_ties(seed, criterion):
    # shallow trees with large nodes: no two candidate splits have the same impurity on these seeds
    X, y = random_continuous(seed, n=1000)
    for kw, skw in [
        ({"max_depth": 3}, {"max_depth": 3}),
        ({"max_leaves": 8, "min_samples_leaf": 20}, {"max_leaf_nodes": 8, "min_samples_leaf": 20}),
    ]:
        ours = fit_cart(X, y, criterion=criterion, **kw)
        clf = DecisionTreeClassifier(criterion=criterion, random_state=seed, **skw).fit(X, y)
        assert_same_tree(ours, clf.tree_)
        Xt = as_f32(np.random.default_rng(99).normal(size=(200, X.shape[1])))
        assert np.array_equal(predict_raw(ours, Xt), clf.predict(Xt))
    # grown until pure, small nodes do tie: equal up to ties
    ours = fit_cart(X, y, criterion=criterion)
    clf = DecisionTreeClassifier(criterion=criterion, random_state=seed).fit(X, y)
    compared, same = compare_up_to_ties(ours, clf.tree_, X, y, 3, CRITERIA[criterion])
    assert same >= 0.8 * compared


@pytest.mark.parametrize("name", list(LOADERS))
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_pruning_path_matches_sklearn(name, criterion):
    X, y = LOADERS[name](return_X_y=True)
    X = as_f32(X)
    path = DecisionTreeClassifier(criterion=criterion, random_state=0).cost_complexity_pruning_path(X, y)
    front = cart_path(X, y, criterion=criterion)
    alphas = np.array([s.info["alpha_lo"] for s in front.solutions])
    imps = np.array([s.info["impurity"] for s in front.solutions])
    np.testing.assert_allclose(alphas, path.ccp_alphas, rtol=0, atol=1e-12)
    np.testing.assert_allclose(imps, path.impurities, rtol=0, atol=1e-12)
    his = [s.info["alpha_hi"] for s in front.solutions]
    assert his[:-1] == list(alphas[1:]) and his[-1] == np.inf
    assert front.solutions[-1].tree.n_nodes == 1 and not any(s.optimal for s in front.solutions)
    n_classes = int(y.max()) + 1
    for j, sol in enumerate(front.solutions):
        if j + 1 < len(alphas) and alphas[j + 1] == alphas[j]:
            continue  # sklearn's ccp_alpha=a prunes every node of effective alpha a: the last of the group
        sk = DecisionTreeClassifier(criterion=criterion, random_state=0, ccp_alpha=path.ccp_alphas[j]).fit(X, y)
        compare_up_to_ties(sol.tree, sk.tree_, X, y, n_classes, CRITERIA[criterion])


@pytest.mark.parametrize("seed", range(3))
def test_pruned_trees_identical_without_ties(seed):
    X, y = random_continuous(seed, n=1000)
    kw = {"max_depth": 4, "min_samples_leaf": 20}
    path = DecisionTreeClassifier(random_state=0, **kw).cost_complexity_pruning_path(X, y)
    front = cart_path(X, y, **kw)
    assert len(front.solutions) == len(path.ccp_alphas)
    for j, sol in enumerate(front.solutions):
        if j + 1 < len(path.ccp_alphas) and path.ccp_alphas[j + 1] == path.ccp_alphas[j]:
            continue
        clf = DecisionTreeClassifier(random_state=0, ccp_alpha=path.ccp_alphas[j], **kw).fit(X, y)
        assert_same_tree(sol.tree, clf.tree_)


def test_float64_thresholds_are_midpoints_of_the_callers_values():
    X = np.array([[0.1], [0.2], [0.30000000000000004], [0.7]])
    y = np.array([0, 0, 1, 1])
    tree = fit_cart(X, y)
    assert tree.threshold[0] == 0.2 / 2 + 0.30000000000000004 / 2
    # identical values are never separated, constant features never split
    tree = fit_cart(np.array([[1.0, 5.0], [1.0, 5.0], [2.0, 5.0]]), np.array([0, 1, 1]))
    assert tree.feature[0] == 0 and tree.n_nodes == 3 and tree.value[1].tolist() == [1, 1]


def test_front_false_returns_only_the_full_tree_and_a_stopped_control_the_tree_so_far():
    X, y = load_iris(return_X_y=True)
    full = fit_cart(X, y, max_depth=3)
    front = cart_path(X, y, max_depth=3, front=False)
    assert len(front.solutions) == 1
    assert np.array_equal(front.solutions[0].tree.feature, full.feature)
    # stopped before the root was searched: the tree so far is the root leaf (tests/test_limits.py stops it
    # while growing)
    front = cart_path(X, y, max_depth=3, control=_stopped())
    assert front.status == "cancelled" and len(front.solutions) == 1
    assert front.solutions[0].tree.n_nodes == 1 and not front.solutions[0].optimal


def _stopped():
    c = Control()
    c.cancel()
    return c


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"criterion": "log_loss"}, "criterion must be one of gini, entropy"),
        ({"max_depth": -2}, "max_depth must be a non-negative integer"),
        ({"min_samples_leaf": 0}, "min_samples_leaf must be an integer >= 1"),
        ({"max_leaves": 1}, "max_leaves must be an integer >= 2"),
    ],
)
def test_bad_parameters_are_explained(kw, message):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=message):
        fit_cart(X, y, **kw)


def test_adapter_registered_and_runs_through_solve():
    from treeexplorer.api import solve
    from treeexplorer.registry import get_solver

    spec = get_solver("cart")
    assert spec.input == "numeric" and {p.name for p in spec.params} >= {"max_depth", "criterion", "front"}
    front = solve("iris", solver="cart", max_depth=-1, criterion="entropy")
    X, y = load_iris(return_X_y=True)
    deepest = max(t.metrics["depth"] for t in front.trees)
    assert deepest == DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y).get_depth()
    single = solve("iris", solver="cart", max_depth=2, front=False)
    assert len(single.trees) == 1 and single.trees[0].metrics["depth"] == 2


@pytest.mark.parametrize("size", [5, 40, 150, 600])
def test_ranked_build_equals_argsort_build(size):
    """DPDT's fits sort subsets by global ranks (radix or one pass over the global order): same trees."""
    from treeexplorer.solvers._kernels.cart import cart_build, cart_build_ranked, feature_ranks

    rng = np.random.default_rng(size)
    X = np.round(rng.normal(size=(600, 4)), 1)
    y = (X[:, 0] + rng.normal(size=600) > 0).astype(np.int64)
    idx = np.sort(rng.choice(600, size=size, replace=False))
    for leaves in (0, 6):
        a = cart_build(X, y, idx, 2, 4, leaves, 1, 0)
        b = cart_build_ranked(X, y, feature_ranks(X), idx, 2, 4, leaves, 1, 0)
        assert all(np.array_equal(u, v) for u, v in zip(a[:5], b[:5])) and a[5] == b[5]
