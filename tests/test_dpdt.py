"""DPDT: exhaustive generator against a brute-force oracle, reported metrics, CART dominance (Prop. 2),
α intervals, state deduplication, memory guard, cancellation and the adapter."""

from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from treeexplorer.solvers import Control
from treeexplorer.solvers._kernels.predict import count_conditions
from treeexplorer.solvers.cart import cart_path
from treeexplorer.solvers.dpdt import GENERATORS, MDPTooLarge, dpdt


def walk_metrics(tree, X, y):
    """(total tests over rows, misclassified rows) recomputed by walking the tree."""
    op = np.zeros(tree.n_nodes, dtype=np.int64)
    counts, n_tests = count_conditions(
        tree.feature,
        op,
        tree.threshold,
        tree.left,
        tree.right,
        np.ascontiguousarray(X, dtype=np.float64),
        y,
        tree.value.shape[1],
    )
    leaves = tree.feature < 0
    errors = int((counts[leaves].sum(axis=1) - counts[leaves].max(axis=1)).sum())
    assert np.array_equal(counts, tree.value)
    return int(n_tests.sum()), errors


def lower_hull(points):
    """Strict vertices of the lower-left convex hull of (T, E) points, by increasing T."""
    pts = sorted(set(points))
    hull = []
    for t, e in pts:
        if hull and e >= hull[-1][1]:
            continue
        while len(hull) >= 2:
            (t0, e0), (t1, e1) = hull[-2], hull[-1]
            if (e1 - e0) * (t - t1) >= (e - e1) * (t1 - t0):
                hull.pop()
            else:
                break
        hull.append((t, e))
    return hull


def brute_force_points(X, y, depth):
    """Every (tests, errors) pair achievable by a tree of at most ``depth`` on (X, y), by enumeration."""
    n_classes = int(y.max()) + 1

    @cache
    def pairs(rows, d):
        idx = np.array(rows)
        counts = np.bincount(y[idx], minlength=n_classes)
        out = {(0, len(rows) - int(counts.max()))}
        if d == 0:
            return frozenset(out)
        for f in range(X.shape[1]):
            for t in np.unique(X[idx, f])[:-1]:
                go = X[idx, f] <= t
                left = pairs(tuple(idx[go]), d - 1)
                right = pairs(tuple(idx[~go]), d - 1)
                out |= {(len(rows) + a + c, b + e) for a, b in left for c, e in right}
        return frozenset(out)

    return pairs(tuple(range(len(y))), depth)


def above_hull(point, hull):
    """Is (T, E) on or above the lower hull polyline (no α ≥ 0 prefers it strictly)?"""
    t, e = point
    for (t0, e0), (t1, e1) in zip(hull, hull[1:]):
        if t0 <= t <= t1:
            return (e - e0) * (t1 - t0) >= (e1 - e0) * (t - t0)
    if t >= hull[-1][0]:
        return e >= hull[-1][1]
    return e >= hull[0][1]


@st.composite
def tiny_data(draw):
    n = draw(st.integers(4, 10))
    p = draw(st.integers(1, 3))
    X = np.array(
        draw(st.lists(st.lists(st.integers(0, 3), min_size=p, max_size=p), min_size=n, max_size=n)), dtype=np.float64
    )
    y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.int64)
    return X, y


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tiny_data(), depth=st.integers(1, 3))
def test_exhaustive_front_is_the_brute_force_hull(data, depth):
    X, y = data
    front = dpdt(X, y, max_depth=depth, generator="exhaustive")
    hull = [s for s in front.solutions if s.info["on_hull"]]
    got = sorted((round(s.info["expected_tests"] * len(y)), s.info["train_errors"]) for s in hull)
    assert got == lower_hull(brute_force_points(X, y, depth))
    assert all(s.optimal for s in front.solutions)
    best = hull[0]  # most accurate first: the α = 0 tree
    assert best.info["alpha_lo"] == 0.0
    assert best.info["train_errors"] == min(e for _, e in brute_force_points(X, y, depth))
    for s in front.solutions:
        assert walk_metrics(s.tree, X, y) == (round(s.info["expected_tests"] * len(y)), s.info["train_errors"])
        assert s.tree.n_nodes == 1 or _depth(s.tree) <= depth


def _depth(tree, k=0):
    if tree.feature[k] < 0:
        return 0
    return 1 + max(_depth(tree, tree.left[k]), _depth(tree, tree.right[k]))


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_reported_metrics_equal_recomputed_ones_and_alpha_intervals_tile(generator):
    X, y = load_wine(return_X_y=True)
    if generator == "exhaustive":  # every threshold: keep it small
        X, y = X[::3, :4], y[::3]
    front = dpdt(X, y, max_depth=3, generator=generator, cart_depth=2, cart_leaves=6, top_b=4, hybrid_depth=1)
    sols = [s for s in front.solutions if s.info["on_hull"]]
    assert front.status == "done" and len(sols) >= 2
    points = []
    for s in sols:
        t, e = walk_metrics(s.tree, X, y)
        assert t == pytest.approx(s.info["expected_tests"] * len(y)) and e == s.info["train_errors"]
        assert s.optimal == (generator == "exhaustive") and s.info["optimal_in_mdp"]
        points.append((t, e))
    # most accurate first, intervals tile [0, inf), each tree optimal inside its own interval
    assert sols[0].info["alpha_lo"] == 0 and sols[-1].info["alpha_hi"] == np.inf
    assert sols[-1].tree.n_nodes == 1
    for a, b in zip(sols, sols[1:]):
        assert a.info["alpha_hi"] == b.info["alpha_lo"] and a.info["alpha_lo"] < a.info["alpha_hi"]
    for s, (t, e) in zip(sols, points):
        lo, hi = s.info["alpha_lo"], s.info["alpha_hi"]
        alpha = (lo + hi) / 2 if hi < np.inf else lo + 1
        assert e + alpha * t == min(e2 + alpha * t2 for t2, e2 in points)


@pytest.mark.parametrize("load", [load_iris, load_wine, load_breast_cancer])
@pytest.mark.parametrize("depth", [2, 3])
def test_cart_pruning_path_is_never_below_the_front(load, depth):
    """Paper, Prop. 2: with the CART generator of the same depth, CART's trees are policies of the MDP."""
    X, y = load(return_X_y=True)
    front = dpdt(X, y, max_depth=depth, generator="cart", cart_depth=depth)
    hull = sorted(
        (round(s.info["expected_tests"] * len(y)), s.info["train_errors"]) for s in front.solutions if s.info["on_hull"]
    )
    path = cart_path(X, y, max_depth=depth)
    for sol in path.solutions:
        assert above_hull(walk_metrics(sol.tree, X, y), hull)
    # and its most accurate tree is at least as accurate as CART's
    assert hull[-1][1] <= walk_metrics(path.solutions[0].tree, X, y)[1]


def test_identical_row_sets_at_one_depth_are_one_state():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, size=(40, 1)).astype(float)
    y = (x[:, 0] + rng.integers(0, 3, size=40) > 3).astype(np.int64)
    one = dpdt(x, y, max_depth=3, generator="exhaustive").stats["states_per_depth"]
    # a copied column proposes the same partitions again: no new state
    two = dpdt(np.hstack([x, x]), y, max_depth=3, generator="exhaustive").stats["states_per_depth"]
    assert one == two and one[1] <= 2 * 5


def test_memory_guard_gives_a_clear_message():
    X, y = load_wine(return_X_y=True)
    with pytest.raises(MDPTooLarge, match="max_states=20 .*lower cart_depth or max_depth.*hybrid"):
        dpdt(X, y, max_depth=4, cart_depth=3, max_states=20)


def test_cancelled_run_returns_valid_trees_not_proven():
    X, y = load_iris(return_X_y=True)
    control = Control()
    control.cancel()
    front = dpdt(X, y, max_depth=3, generator="exhaustive", control=control)
    assert front.status == "cancelled"
    assert len(front.solutions) == 1 and front.solutions[0].tree.n_nodes == 1
    assert not front.solutions[0].optimal and not front.solutions[0].info["optimal_in_mdp"]


def test_time_limit_returns_best_so_far():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 8))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(np.int64)
    kw = {"max_depth": 6, "generator": "cart", "cart_depth": 4, "anytime": False}
    with Control(time_limit=600) as warm:  # numba's start-up (or compiling) is not what is timed here
        dpdt(X[:300], y[:300], control=warm, **kw)
    with Control(time_limit=0.3) as control:
        front = dpdt(X, y, control=control, **kw)
    assert front.status == "time_limit"
    assert front.solutions and not any(s.optimal or s.info["optimal_in_mdp"] for s in front.solutions)
    for s in front.solutions:
        assert walk_metrics(s.tree, X, y)[1] == s.info["train_errors"]
    # the unexpanded states are completed by the greedy MDP: never worse than CART's greedy trees
    assert front.stats["greedy_completion"]
    greedy = dpdt(X, y, max_depth=6, generator="cart", cart_depth=1)
    assert front.solutions[0].info["train_errors"] <= greedy.solutions[0].info["train_errors"]
    hull = [s for s in front.solutions if s.info["on_hull"]]
    errs = [s.info["train_errors"] for s in hull]
    tests = [s.info["expected_tests"] for s in hull]
    assert errs == sorted(errs) and tests == sorted(tests, reverse=True)
    for g in (g for g in greedy.solutions if g.info["on_hull"]):  # every greedy tree is on or above the hull
        lo = [s for s in hull if s.info["alpha_lo"] <= g.info["alpha_lo"] <= s.info["alpha_hi"]][0]
        a = g.info["alpha_lo"]
        assert (
            lo.info["train_errors"] / len(y) + a * lo.info["expected_tests"]
            <= g.info["train_errors"] / len(y) + a * g.info["expected_tests"] + 1e-12
        )


def test_the_greedy_incumbent_holds_every_tree_of_the_greedy_hull():
    """What a stopped run falls back on: the depth-D CART's prunings on the (tests, errors) hull, i.e.
    every vertex of DPDT-1's hull (the MDP with the greedy split only), not scikit-learn's impurity path."""
    from treeexplorer.solvers._kernels.cart import feature_ranks
    from treeexplorer.solvers.dpdt import _greedy_incumbent

    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 8))
    sets = [(X, (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(np.int64)), load_wine(return_X_y=True)]
    for X, y in sets:
        y = np.asarray(y, dtype=np.int64)
        incumbent = _greedy_incumbent(X, y, feature_ranks(X), int(y.max()) + 1, 6, "gini", Control())
        greedy = dpdt(X, y, max_depth=6, cart_depth=1)
        have = {(s.info["train_errors"], round(s.info["expected_tests"], 9)) for s in incumbent.solutions}
        hull = {
            (s.info["train_errors"], round(s.info["expected_tests"], 9)) for s in greedy.solutions if s.info["on_hull"]
        }
        assert len(hull) > 3 and hull <= have


def test_alpha_and_n_alphas_select_trees_of_the_hull():
    X, y = load_wine(return_X_y=True)
    full = dpdt(X, y, max_depth=3, splits_front=False)
    one = dpdt(X, y, max_depth=3, alpha=0.0)
    assert len(one.solutions) == 1 and one.solutions[0].info == full.solutions[0].info
    mid = full.solutions[1].info
    pick = dpdt(X, y, max_depth=3, alpha=(mid["alpha_lo"] + mid["alpha_hi"]) / 2).solutions
    assert len(pick) == 1 and pick[0].info == mid
    coarse = dpdt(X, y, max_depth=3, n_alphas=3).solutions  # α in {0, 0.5, 1}
    assert 1 <= len(coarse) <= 3 and {s.info["train_errors"] for s in coarse} <= {
        s.info["train_errors"] for s in full.solutions
    }


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"generator": "random"}, "generator must be one of"),
        ({"max_depth": -1}, "max_depth must be an integer >= 0"),
        ({"cart_depth": 0}, "cart_depth must be an integer >= 1"),
        ({"criterion": "mse"}, "criterion must be one of"),
        ({"alpha": -0.5}, "alpha must be >= 0"),
    ],
)
def test_bad_parameters_are_explained(kw, message):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=message):
        dpdt(X, y, **kw)


def test_adapter_runs_through_solve():
    from treeexplorer.api import solve
    from treeexplorer.registry import get_solver

    spec = get_solver("dpdt")
    assert spec.input == "numeric" and spec.param("max_depth").default == 3
    front = solve("iris", solver="dpdt", max_depth=2, cart_depth=2, test_size=0.3)
    assert len(front.trees) >= 2 and all(t.metrics["depth"] <= 2 for t in front.trees)
    assert all(("alpha_lo" in t.info) == t.info["on_hull"] for t in front.trees)
    assert any(t.info["kind"] == "budget" for t in front.trees) or all(t.info["on_hull"] for t in front.trees)
    single = solve("iris", solver="dpdt", max_depth=3, front=False)
    assert len(single.trees) == 1 and single.trees[0].metrics["train_errors"] == min(
        t.metrics["train_errors"] for t in solve("iris", solver="dpdt", max_depth=3).trees
    )


@pytest.mark.parametrize("n_classes", [3, 2])  # two classes take their own scan loop
@pytest.mark.parametrize("criterion", [0, 1])
def test_last_depth_split_is_the_best_of_the_generated_tests(criterion, n_classes):
    """The early-stopping CART at the last depth picks a test with the fewest errors among all the
    tests the full CART proposes (depth-first: the very first such test), never a worse one."""
    from treeexplorer.solvers._kernels.cart import feature_ranks
    from treeexplorer.solvers._kernels.dpdt_gen import (
        GEN_CART,
        GEN_CART_LEAVES,
        best_exhaustive_leaf_split,
        generate_tests,
        last_depth_split,
    )

    rng = np.random.default_rng(criterion)
    X = np.round(rng.normal(size=(300, 5)), 1)  # rounded: many equal values
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=300) > 0).astype(np.int64)
    if n_classes == 3:
        y += X[:, 3] > 1
    rank = feature_ranks(X)

    def errors(idx, f, t):
        go = X[idx, f] <= t
        return (
            go.sum() - np.bincount(y[idx[go]], minlength=3).max(),
            (~go).sum() - np.bincount(y[idx[~go]], minlength=3).max(),
        )

    grown = 0
    for _ in range(60):
        idx = np.sort(rng.choice(300, size=rng.integers(2, 300), replace=False)).astype(np.int64)
        for gen, k in [
            (GEN_CART, 1),
            (GEN_CART, 2),
            (GEN_CART, 4),
            (GEN_CART_LEAVES, 2),
            (GEN_CART_LEAVES, 8),
            (GEN_CART_LEAVES, 32),
        ]:
            md, ml = (k, 0) if gen == GEN_CART else (2**31, k)
            f, t, el, er, g = last_depth_split(X, y, rank, idx, n_classes, md, ml, False, criterion)
            grown += g
            feats, thrs = generate_tests(X, y, rank, idx, n_classes, gen, k, 0, 0, criterion)
            if len(feats) == 0:
                assert f == -1
                continue
            errs = [sum(errors(idx, a, b)) for a, b in zip(feats, thrs)]
            assert (el, er) == errors(idx, f, t) and el + er == min(errs)
            assert any(a == f and b == t for a, b in zip(feats, thrs))
            if gen == GEN_CART:  # preorder, first strict improvement: the same test as a full scan
                j = int(np.argmin(errs))
                assert (f, t) == (feats[j], thrs[j])
            # greedy: CART's root split only
            gf, gt, *_ = last_depth_split(X, y, rank, idx, n_classes, md, ml, True, criterion)
            assert (gf, gt) == (feats[0], thrs[0])
        ef, *_ = best_exhaustive_leaf_split(X, y, rank, idx, n_classes)
        assert (ef == -1) == (len(generate_tests(X, y, rank, idx, n_classes, GEN_CART, 1, 0, 0, criterion)[0]) == 0)
    assert grown > 0  # the growth path below the root was exercised


def test_threads_at_the_last_depth_give_the_same_front():
    rng = np.random.default_rng(7)
    X = np.round(rng.normal(size=(800, 4)), 2)
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=800) > 0).astype(np.int64) + (X[:, 2] > 1)
    kw = {"max_depth": 3, "generator": "cart_leaves", "cart_leaves": 16}
    one = dpdt(X, y, n_jobs=1, **kw)
    two = dpdt(X, y, n_jobs=2, **kw)
    assert one.stats["states_per_depth"][-1] >= 128  # enough last-depth states for two threads
    assert [s.info for s in one.solutions] == [s.info for s in two.solutions]
    for a, b in zip(one.solutions, two.solutions):
        assert all(
            np.array_equal(u, v)
            for u, v in zip(
                (a.tree.feature, a.tree.threshold, a.tree.left, a.tree.right, a.tree.value),
                (b.tree.feature, b.tree.threshold, b.tree.left, b.tree.right, b.tree.value),
            )
        )


@pytest.mark.parametrize("depth", [3, 4])
def test_every_state_sorted_from_its_parent_equals_it_sorted_from_the_global_ranks(depth, monkeypatch):
    """``_sorted_rows`` (a parent's order shared by its children, siblings in one pass) against a direct
    sort of each state, on data with ties, at every depth, over the state lists the threads get."""
    import treeexplorer.solvers.dpdt as mod
    from treeexplorer.solvers._kernels.cart import feature_ranks
    from treeexplorer.solvers._kernels.dpdt_mdp import (
        ST_ERR,
        ST_PARENT,
        ST_SIB,
        ST_SIZE,
        ST_START,
        _memo0,
        _rank_positions,
        _sorted_rows,
    )

    rng = np.random.default_rng(depth)
    X = np.round(rng.normal(size=(400, 5)), 1)  # ties inside features
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.int64) + (X[:, 3] > 1)
    ranks = feature_ranks(X)
    seen = {"pairs": 0, "children": 0}

    def check(args):
        pool, tab, states, pool_par = args[9], args[10], args[11], args[12]
        lmap = np.full(X.shape[0], -1, dtype=np.int64)
        memo = _memo0()
        for j, s in enumerate(states):
            if tab[ST_SIZE, s] < 2 or tab[ST_ERR, s] == 0:
                continue
            rows = pool[tab[ST_START, s] : tab[ST_START, s] + tab[ST_SIZE, s]].astype(np.int64)
            assert (np.diff(rows) > 0).all()  # what _mark_subset relies on
            srt, memo = _sorted_rows(ranks, pool, pool_par, tab, states, j, rows, lmap, memo)
            np.testing.assert_array_equal(srt, _rank_positions(ranks, rows))
            for f in range(X.shape[1]):  # and the direct sort is by value, ties by row
                np.testing.assert_array_equal(srt[f], np.lexsort((rows, X[rows, f])))
            seen["pairs"] += bool(j + 1 < len(states) and tab[ST_SIB, s] == states[j + 1])
            seen["children"] += bool(tab[ST_PARENT, s] >= 0)

    def spy(kernel):
        return lambda *args: (check(args), kernel(*args))[1]

    for name in ("level_tests", "last_level_actions"):
        monkeypatch.setattr(mod, name, spy(getattr(mod, name)))
    mod.dpdt(X, y, max_depth=depth + 1, generator="cart", cart_depth=2, n_jobs=2)
    assert seen["pairs"] > 10 and seen["children"] > 50  # both paths ran


def test_row_pool_guard_gives_a_clear_message_and_a_pool_near_the_guard_still_builds():
    X, y = load_wine(return_X_y=True)
    kw = {"max_depth": 3, "generator": "cart", "cart_depth": 2}
    free = dpdt(X, y, **kw)
    with pytest.raises(MDPTooLarge, match="max_pool=500 .*lower cart_depth or max_depth"):
        dpdt(X, y, max_pool=500, **kw)
    # a guard just above the largest depth's rows: the pool grows up to the guard and the front is unchanged
    capped = dpdt(X, y, max_pool=2000, **kw)
    assert [s.info for s in capped.solutions] == [s.info for s in free.solutions]
