"""MurTree: exactness against a brute-force oracle, front and hull, sparsity, min leaf support, control."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control
from treeexplorer.solvers._kernels.murtree_cache import (
    MAX_FEATURES,
    cache_find,
    cache_put,
    entry_feature,
    entry_nleft,
    entry_optimal,
)
from treeexplorer.solvers._kernels.predict import node_counts
from treeexplorer.solvers.murtree import hull_flags, murtree
from waiting import cancelling_control


# --------------------------------------------------------------------------------------------- oracle
def _err(y, rows, n_classes):
    if rows.size == 0:
        return 0
    c = np.bincount(y[rows], minlength=n_classes)
    return int(rows.size - c.max())


def oracle(X, y, n_classes, depth, min_leaf=1):
    """Fewest errors with at most ``b`` splits for every ``b`` in ``0..2**depth - 1``.

    Plain recursion over every test at every node and every way to share the splits between the two
    children: no bounds, no cache, so it explores every tree of the given depth.
    """

    def best(rows, d):
        out = np.full((1 << d), _err(y, rows, n_classes), dtype=np.int64)  # the leaf, for every budget
        if d == 0:
            return out
        for f in range(X.shape[1]):
            lrows = rows[X[rows, f] == 0]
            rrows = rows[X[rows, f] == 1]
            if lrows.size < min_leaf or rrows.size < min_leaf:
                continue
            el = best(lrows, d - 1)
            er = best(rrows, d - 1)
            for bl in range(el.size):
                for br in range(er.size):
                    b = bl + br + 1
                    out[b] = min(out[b], el[bl] + er[br])
        return np.minimum.accumulate(out)

    return best(np.arange(X.shape[0]), depth)


def tree_depth(tree):
    def rec(k):
        return 0 if tree.feature[k] < 0 else 1 + max(rec(tree.left[k]), rec(tree.right[k]))

    return rec(0)


def check_tree(tree, X, y, n_classes, depth, min_leaf):
    """The tree's stored counts match the data, it respects depth/support, and return its errors."""
    counts = node_counts(tree.feature, tree.threshold, tree.left, tree.right, X.astype(np.float64), y, n_classes)
    np.testing.assert_array_equal(counts, tree.value)
    leaves = tree.feature < 0
    assert tree_depth(tree) <= depth
    assert np.all(tree.value[leaves].sum(axis=1) >= min(min_leaf, X.shape[0]))
    assert np.all(tree.threshold[~leaves] == 0.5)
    return int(sum(c.sum() - c[p] for c, p in zip(tree.value[leaves], tree.prediction[leaves])))


def front_errors(front, budget):
    """Fewest errors for each budget 0..budget, read off a returned front."""
    out = np.empty(budget + 1, dtype=np.int64)
    for b in range(budget + 1):
        out[b] = min(s.info["errors"] for s in front.solutions if s.info["splits"] <= b)
    return out


@st.composite
def datasets(draw, max_features=8):
    n_classes = draw(st.integers(2, 4))
    f = draw(st.integers(1, max_features))
    pool = draw(st.integers(1, 12))  # few distinct rows: duplicates and contradictory labels
    n = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    P = rng.integers(0, 2, size=(pool, f), dtype=np.uint8)
    X = P[rng.integers(0, pool, size=n)]
    y = rng.integers(0, n_classes, size=n)
    return X, y, n_classes


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------------------- exactness
@SETTINGS
@given(data=datasets(), depth=st.integers(0, 3), min_leaf=st.sampled_from([1, 1, 2, 3]))
def test_front_matches_oracle_for_every_budget(data, depth, min_leaf):
    X, y, C = data
    expected = oracle(X, y, C, depth, min_leaf)
    fr = murtree(X, y, C, max_depth=depth, min_leaf_support=min_leaf)
    assert fr.status == "done"
    K = (1 << depth) - 1
    np.testing.assert_array_equal(front_errors(fr, K), expected)
    errs = [s.info["errors"] for s in fr.solutions]
    splits = [s.info["splits"] for s in fr.solutions]
    assert errs == sorted(errs, reverse=True) and len(set(errs)) == len(errs)
    for s in fr.solutions:
        assert s.optimal
        assert check_tree(s.tree, X, y, C, depth, min_leaf) == s.info["errors"]
        assert s.tree.n_splits == s.info["splits"]
        # a front tree uses exactly the fewest splits that reach its error
        assert s.info["splits"] == int(np.argmax(expected <= s.info["errors"]))
    assert splits == sorted(splits)


@SETTINGS
@given(data=datasets(), depth=st.integers(1, 3), max_nodes=st.integers(0, 7), min_leaf=st.sampled_from([1, 2]))
def test_single_tree_fewest_errors_then_fewest_splits(data, depth, max_nodes, min_leaf):
    X, y, C = data
    K = min(max_nodes, (1 << depth) - 1)
    expected = oracle(X, y, C, depth, min_leaf)[: K + 1]
    fr = murtree(X, y, C, max_depth=depth, max_nodes=max_nodes, front=False, min_leaf_support=min_leaf)
    (sol,) = fr.solutions
    assert sol.optimal
    assert check_tree(sol.tree, X, y, C, depth, min_leaf) == expected[K] == sol.info["errors"]
    assert sol.tree.n_splits == int(np.argmax(expected == expected[K]))
    # without the tie-break: same error, within the budget
    fast = murtree(
        X, y, C, max_depth=depth, max_nodes=max_nodes, front=False, min_leaf_support=min_leaf, fewest_splits=False
    ).solutions[0]
    assert check_tree(fast.tree, X, y, C, depth, min_leaf) == expected[K]
    assert fast.tree.n_splits <= K


@SETTINGS
@given(
    data=datasets(max_features=6),
    depth=st.integers(1, 3),
    alpha=st.one_of(st.floats(0, 0.3), st.sampled_from([0.0, 1e-9, 1e-3])),
)
def test_sparsity_is_exact_and_real_valued(data, depth, alpha):
    X, y, C = data
    n = X.shape[0]
    E = oracle(X, y, C, depth)
    a = Fraction(alpha)
    objs = [Fraction(int(e), n) + a * b for b, e in enumerate(E)]
    fr = murtree(X, y, C, max_depth=depth, sparsity=alpha)
    (sol,) = fr.solutions
    errs = check_tree(sol.tree, X, y, C, depth, 1)
    got = Fraction(errs, n) + a * sol.tree.n_splits
    assert got == min(objs)
    # ties go to fewer splits
    assert sol.tree.n_splits == min(b for b, o in enumerate(objs) if o == min(objs))
    assert sol.info["objective"] == pytest.approx(float(min(objs)))


def test_small_alpha_is_not_truncated_to_zero():
    # alpha * n = 0.5 < 1: an integer penalty would be 0 and keep every error-reducing split
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(50, 6), dtype=np.uint8)
    y = (X[:, 0] ^ (rng.random(50) < 0.2)).astype(np.int64)
    E = oracle(X, y, 2, 3)
    alpha = 0.01
    best = min(range(8), key=lambda b: (Fraction(int(E[b]), 50) + Fraction(alpha) * b, b))
    assert E[best] > E[7], "data must make the penalty matter"
    sol = murtree(X, y, max_depth=3, sparsity=alpha).solutions[0]
    assert sol.tree.n_splits == best
    assert murtree(X, y, max_depth=3, sparsity=0.0).solutions[0].info["errors"] == E[7]


def test_hull_flags_mark_the_lower_convex_hull():
    # points (splits, errors): (0,10) (1,6) (2,5) (3,1) (4,0); n = 1
    flags = hull_flags([10, 6, 5, 1, 0], [0, 1, 2, 3, 4], 1)
    assert [f[0] for f in flags] == [True, True, False, True, True]
    assert flags[0][1] == 4 and flags[0][2] is None  # leaf wins for alpha >= 4
    assert flags[1][1] == Fraction(5, 2) and flags[1][2] == 4
    assert flags[3][1] == 1 and flags[3][2] == Fraction(5, 2)
    assert flags[4][1] == 0 and flags[4][2] == 1


def test_front_hull_and_budget_info():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(80, 7), dtype=np.uint8)
    y = rng.integers(0, 3, size=80)
    fr = murtree(X, y, max_depth=3)
    sols = fr.solutions
    assert sols[0].tree.n_nodes == 1 and sols[0].info["budget"] == 0
    for a, b in zip(sols, sols[1:]):
        assert a.info["budget_max"] == b.info["budget"] - 1
    assert sols[-1].info["budget_max"] == 7
    # the hull trees are exactly those that win for some alpha
    for s in sols:
        if s.info["on_hull"]:
            lo, hi = s.info["alpha_lo"], s.info["alpha_hi"]
            alpha = lo + (1.0 if hi is None else (hi - lo) / 2)
            assert murtree(X, y, max_depth=3, sparsity=alpha).solutions[0].info["splits"] == s.info["splits"]


def test_max_nodes_caps_the_front_and_degenerate_inputs():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(30, 5), dtype=np.uint8)
    y = rng.integers(0, 2, size=30)
    fr = murtree(X, y, max_depth=3, max_nodes=2)
    assert max(s.tree.n_splits for s in fr.solutions) <= 2
    np.testing.assert_array_equal(front_errors(fr, 2), oracle(X, y, 2, 3)[:3])
    # a pure dataset, a single row, constant tests: one leaf
    assert murtree(X, np.zeros(30, dtype=int), max_depth=3).solutions[0].tree.n_nodes == 1
    assert murtree(X[:1], y[:1], max_depth=3).solutions[0].tree.n_nodes == 1
    const = murtree(np.ones((10, 3), dtype=np.uint8), np.arange(10) % 2, max_depth=2)
    assert [s.tree.n_nodes for s in const.solutions] == [1]
    assert murtree(X, y, max_depth=0).solutions[0].tree.n_nodes == 1


def test_bad_input_messages():
    X = np.array([[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="0/1"):
        murtree(X, [0, 1])
    ok = np.array([[0, 1], [1, 0]], dtype=np.uint8)
    with pytest.raises(ValueError, match="max_depth"):
        murtree(ok, [0, 1], max_depth=11)
    with pytest.raises(ValueError, match="max_nodes"):
        murtree(ok, [0, 1], max_nodes=-1)
    with pytest.raises(ValueError, match="min_leaf_support"):
        murtree(ok, [0, 1], min_leaf_support=0)
    with pytest.raises(ValueError, match="sparsity"):
        murtree(ok, [0, 1], sparsity=-0.1)
    with pytest.raises(ValueError, match="tests"):
        murtree(np.zeros((2, MAX_FEATURES), dtype=np.uint8), [0, 1])


def test_cache_entries_round_trip_at_their_limits():
    # a slot packs (cost, optimal, feature, n_left) into two int32 and (dataset, depth, budget) into two words
    keys = np.zeros((16, 2), dtype=np.uint64)
    vals = np.zeros((16, 2), dtype=np.int32)
    meta = np.zeros(1, dtype=np.int64)
    status = np.zeros(4, dtype=np.int64)
    h1, h2 = np.uint64(2**64 - 3), np.uint64(2**64 - 5)
    one, zero = np.int64(1), np.int64(0)
    entries = [(10, 1023, 10**6, 1, MAX_FEATURES - 2, 1022), (10, 1022, 2**31 - 1, 0, -1, 0), (2, 3, 0, 1, 0, 1)]
    for d, n, cost, opt, f, nl in entries:
        cache_put(keys, vals, meta, status, h1, h2, np.int64(d), np.int64(n), np.int64(cost), np.int64(opt),
                  np.int64(f), np.int64(nl))  # fmt: skip
    cache_put(keys, vals, meta, status, h1, h2, np.int64(9), np.int64(7), np.int64(2**40), zero, np.int64(-1), zero)
    assert meta[0] == 4 and status[0] == 0
    for d, n, cost, opt, f, nl in entries:
        s = cache_find(keys, h1, h2, np.int64(d), np.int64(n))
        assert s >= 0
        assert (vals[s, 0], entry_optimal(vals, s), entry_feature(vals, s), entry_nleft(vals, s)) == (cost, opt, f, nl)
    s = cache_find(keys, h1, h2, np.int64(9), np.int64(7))
    assert vals[s, 0] == 2**31 - 1  # a bound beyond int32 is clipped: still a lower bound
    assert cache_find(keys, h1, h2 ^ np.uint64(1 << 20), np.int64(2), np.int64(3)) == -1
    assert cache_find(keys, h1, h2, np.int64(2), np.int64(2)) == -1
    # an optimum replaces a bound of the same key; a bound never replaces an optimum
    cache_put(keys, vals, meta, status, h1, h2, np.int64(10), np.int64(1022), np.int64(7), one, np.int64(5), one)
    s = cache_find(keys, h1, h2, np.int64(10), np.int64(1022))
    assert (vals[s, 0], entry_optimal(vals, s), entry_feature(vals, s), entry_nleft(vals, s)) == (7, 1, 5, 1)
    cache_put(keys, vals, meta, status, h1, h2, np.int64(10), np.int64(1022), np.int64(9), zero, np.int64(-1), zero)
    assert (vals[s, 0], entry_optimal(vals, s)) == (7, 1)
    assert meta[0] == 4


# ------------------------------------------------------------------------------------------- control
def _hard(n=1500, f=40, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, f), dtype=np.uint8)
    y = rng.integers(0, 2, size=n)
    return X, y


def test_time_limit_returns_best_so_far_marked_not_proven():
    X, y = _hard()
    murtree(X[:50], y[:50], max_depth=4)  # numba cache load outside the timed part
    events = []
    control = Control(time_limit=0.3, progress=events.append, poll_interval=0.05)
    t = time.perf_counter()
    with control:
        fr = murtree(X, y, max_depth=5, control=control)
    assert time.perf_counter() - t < 3.0
    assert fr.status == "time_limit"
    assert fr.solutions and fr.solutions[0].optimal  # the leaf is proven for budget 0
    errs = [s.info["errors"] for s in fr.solutions]
    assert errs == sorted(errs, reverse=True)
    for s in fr.solutions:
        assert check_tree(s.tree, X, y, 2, 5, 1) == s.info["errors"]
    assert any(e["phase"] == "murtree" and "cache_entries" in e for e in events)
    single = murtree(X, y, max_depth=5, front=False, control=Control(time_limit=0.3).start())
    assert single.status == "time_limit" and not single.solutions[0].optimal
    assert check_tree(single.solutions[0].tree, X, y, 2, 5, 1) == single.solutions[0].info["errors"]


def test_cancel_from_another_thread():
    X, y = _hard(seed=2)
    control, on = cancelling_control("murtree")  # the search's first progress report cancels it
    fr = murtree(X, y, max_depth=5, control=control.start())
    assert on.clock.stop().within(2.8), f"the cancel took {on.clock} to land"
    assert fr.status == "cancelled"
    assert fr.solutions


def test_stopped_before_the_search_returns_the_proven_leaf():
    X, y = _hard(n=200, seed=4)
    for front in (True, False):
        control = Control().start()
        control.cancel()
        fr = murtree(X, y, max_depth=3, front=front, control=control)
        assert fr.status == "cancelled"
        (leaf,) = fr.solutions
        assert leaf.tree.n_nodes == 1 and leaf.info["errors"] == min(np.bincount(y))
        # proven for budget 0 (a front entry), not as the single best tree of budget 7
        assert leaf.optimal == front
        assert leaf.info["budget_max"] == 0


def test_small_cache_grows_without_changing_results():
    # start from a tiny table: the search unwinds, the wrapper grows it and resumes
    from treeexplorer.solvers import murtree as mod

    rng = np.random.default_rng(9)
    X = rng.integers(0, 2, size=(60, 8), dtype=np.uint8)
    y = rng.integers(0, 3, size=60)
    ref = [s.info["errors"] for s in murtree(X, y, max_depth=3).solutions]
    old = mod._CACHE_BITS
    mod._CACHE_BITS = 4
    try:
        fr = murtree(X, y, max_depth=3)
    finally:
        mod._CACHE_BITS = old
    assert [s.info["errors"] for s in fr.solutions] == ref
    assert fr.stats["cache_entries"] > 16


# ------------------------------------------------------------------------------------------ adapter
def test_adapter_registered_and_runs():
    from treeexplorer.registry import get_solver

    spec = get_solver("murtree")
    assert spec.input == "binary" and spec.default_discretizer == "mid"
    params = spec.resolve({"max_depth": 2, "front": False})
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(40, 5), dtype=np.uint8)
    y = rng.integers(0, 2, size=40)
    with Control() as control:
        fr = spec.run(X, y, 2, control, **params)
    assert len(fr.solutions) == 1
    assert fr.solutions[0].info["errors"] == oracle(X, y, 2, 2)[3]
    with pytest.raises(ValueError, match="does not use"):
        spec.resolve({"cart_depth": 3})


# ------------------------------------------------------------------------------------------ pystreed
@pytest.mark.parametrize("seed", [0, 1])
def test_same_optimal_errors_as_pystreed(seed):
    pystreed = pytest.importorskip("pystreed")
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(120, 10), dtype=np.uint8)
    y = (X[:, 0] & X[:, 3] | (rng.random(120) < 0.25)).astype(np.int64)
    for depth in (2, 3):
        clf = pystreed.STreeDClassifier(max_depth=depth, max_num_nodes=(1 << depth) - 1, time_limit=60)
        clf.fit(X, y)
        theirs = int((clf.predict(X) != y).sum())
        ours = murtree(X, y, max_depth=depth, front=False).solutions[0].info["errors"]
        assert ours == theirs


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_on_a_binary_csv(tmp_path, capsys):
    import json

    from treeexplorer.cli import main

    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(90, 6), dtype=np.uint8)
    y = (X[:, 1] | X[:, 4]) ^ (rng.random(90) < 0.15)
    csv = tmp_path / "bin.csv"
    lines = [",".join([f"t{j}" for j in range(6)] + ["label"])]
    lines += [",".join(map(str, [*row, int(lab)])) for row, lab in zip(X, y)]
    csv.write_text("\n".join(lines) + "\n")
    E = oracle(X, y.astype(np.int64), 2, 3)
    common = ["solve", str(csv), "--solver", "murtree", "--discretizer", "none", "--max-depth", "3", "--test-size", "0"]
    out = tmp_path / "front.json"
    assert main([*common, "--out", str(out)]) == 0
    trees = json.loads(out.read_text())["trees"]
    assert [t["splits"] for t in trees] == sorted({int(np.argmax(E <= e)) for e in E})
    assert main([*common, "--max-nodes", "1", "--out", str(out)]) == 0
    assert max(t["splits"] for t in json.loads(out.read_text())["trees"]) <= 1
    alpha = 0.02
    best = min(range(8), key=lambda b: (Fraction(int(E[b]), 90) + Fraction(alpha) * b, b))
    assert main([*common, "--sparsity", str(alpha), "--out", str(out)]) == 0
    (tree,) = json.loads(out.read_text())["trees"]
    assert tree["splits"] == best
    capsys.readouterr()
