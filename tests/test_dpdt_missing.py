"""DPDT on a matrix with missing values (NaN): never worse than CART, valid trees, exhaustive = brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import predict_raw
from treeexplorer.solvers.cart import cart_path, fit_cart
from treeexplorer.solvers.dpdt import dpdt

from tests.test_cart_missing import TABLES, _counts, with_gaps


def check_trees(front, X, y, k, max_depth):
    """Every tree of the front: carries missing sides, counts its rows where they go, reports its own errors."""
    assert front.solutions
    for sol in front.solutions:
        t = sol.tree
        assert t.missing_left is not None and t.missing_left.shape == (t.n_nodes,)
        assert np.array_equal(t.value, _counts(t, X, y, k))
        assert sol.info["train_errors"] == int(np.count_nonzero(predict_raw(t, X) != y))
        assert _depth(t) <= max_depth


def _depth(tree, k=0):
    if tree.feature[k] < 0:
        return 0
    return 1 + max(_depth(tree, tree.left[k]), _depth(tree, tree.right[k]))


@pytest.mark.parametrize("name", ["iris", "wine", "random"])
@pytest.mark.parametrize("generator", ["cart", "hybrid"])
def test_never_worse_than_cart_at_the_same_depth(name, generator):
    X, y = TABLES[name]()
    X = with_gaps(X, 0.15, seed=6)
    k = int(y.max()) + 1
    for depth in (2, 3):
        front = dpdt(X, y, max_depth=depth, generator=generator, hybrid_depth=1)
        check_trees(front, X, y, k, depth)
        assert front.stats["missing_values"] and "cost" not in front.solutions[0].info
        cart_errors = int(np.count_nonzero(predict_raw(fit_cart(X, y, max_depth=depth), X) != y))
        assert min(s.info["train_errors"] for s in front.solutions) <= cart_errors


@pytest.mark.parametrize("name", ["iris", "random"])
def test_weighted_never_worse_than_weighted_cart(name):
    X, y = TABLES[name]()
    X = with_gaps(X, 0.15, seed=7)
    k = int(y.max()) + 1
    w = np.random.default_rng(8).integers(0, 4, len(y)).astype(float)  # some rows of weight 0
    costs = 1.0 - np.eye(k)
    costs[0, 1:] = 3.0
    for kw in ({"sample_weight": w}, {"costs": costs}, {"sample_weight": w, "costs": costs}):
        front = dpdt(X, y, max_depth=3, **kw)
        check_trees(front, X, y, k, 3)
        cart = cart_path(X, y, max_depth=3, front=False, **kw).solutions[0]
        assert cart.tree.missing_left is not None
        assert min(s.info["cost"] for s in front.solutions) <= cart.info["cost"] + 1e-9


def test_complete_data_trees_have_no_missing_sides_and_other_generators_refuse():
    X, y = TABLES["iris"]()
    assert all(s.tree.missing_left is None for s in dpdt(X, y, max_depth=2).solutions)
    assert all(s.tree.missing_left is None for s in dpdt(X, y, max_depth=2, sample_weight=y + 1.0).solutions)
    X = with_gaps(X, 0.1, seed=0)
    for generator in ("topb", "cart_leaves"):
        with pytest.raises(ValueError, match=rf"^dpdt: generator='{generator}' does not take missing values"):
            dpdt(X, y, max_depth=2, generator=generator)


# -- exhaustive DPDT with NaN against a brute force over every depth-2 tree ------------------------------------


def all_tests(X, rows):
    """Every split of ``rows``: each threshold between two distinct present values with the missing rows on either
    side, and "present vs missing"; as boolean masks of the rows going left."""
    out = []
    for f in range(X.shape[1]):
        x = X[rows, f]
        gap = np.isnan(x)
        v = np.unique(x[~gap])
        for t in (v[:-1] + v[1:]) / 2:
            out += [(x <= t), (x <= t) | gap] if gap.any() else [x <= t]
        if gap.any() and v.size:
            out.append(~gap)
    return out


def leaf_errors(y):
    return len(y) - np.bincount(y).max() if len(y) else 0


def best_errors(X, y, rows, depth):
    """The fewest training errors of any tree of depth <= ``depth`` on ``rows`` (tests from :func:`all_tests`)."""
    best = leaf_errors(y[rows])
    if depth == 0 or best == 0:
        return best
    for go in all_tests(X, rows):
        best = min(best, best_errors(X, y, rows[go], depth - 1) + best_errors(X, y, rows[~go], depth - 1))
    return best


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(3, 14),
    p=st.integers(1, 2),
    levels=st.integers(2, 4),
    gap=st.sampled_from([0.15, 0.35]),
    seed=st.integers(0, 2**31 - 1),
    weighted=st.booleans(),
)
def test_exhaustive_is_the_brute_force_optimum(n, p, levels, gap, seed, weighted):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(float)
    X[rng.random((n, p)) < gap] = np.nan
    X[0, 0] = np.nan  # always a gap: this is the NaN path
    y = rng.integers(0, 2, n)
    rows = np.arange(n)
    if weighted:  # whole weights: the weighted problem is the plain one on rows repeated
        w = rng.integers(1, 3, n)
        w[0] = 2  # not all ones (that is the plain problem, whose fronts report no cost)
        rep = np.repeat(rows, w)
        front = dpdt(X, y, max_depth=2, generator="exhaustive", sample_weight=w.astype(float), n_classes=2)
        want = best_errors(X[rep], y[rep], np.arange(rep.size), 2)
        got = min(s.info["cost"] for s in front.solutions)
    else:
        front = dpdt(X, y, max_depth=2, generator="exhaustive", n_classes=2)
        want = best_errors(X, y, rows, 2)
        got = min(s.info["train_errors"] for s in front.solutions)
    assert got == pytest.approx(want)
    assert all(s.optimal for s in front.solutions)
    check_trees(front, X, y, 2, 2)
