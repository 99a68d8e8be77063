"""ConTree: exact against a brute-force oracle on raw thresholds, fronts, sparsity, pycontree, time limits."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control
from treeexplorer.solvers._kernels.predict import apply_tree
from treeexplorer.solvers.contree import contree


# --------------------------------------------------------------------------------------------- oracle
def oracle(X, y, n_classes, depth):
    """Fewest errors with at most ``b`` splits, ``b = 0 .. 2**depth - 1``, over every tree of the depth.

    Plain recursion over every feature and every midpoint between consecutive distinct values at every
    node, and every way to share the splits between the children: no bounds, no cache.
    """

    def err(rows):
        return 0 if rows.size == 0 else int(rows.size - np.bincount(y[rows], minlength=n_classes).max())

    def best(rows, d):
        out = np.full(1 << d, err(rows), dtype=np.int64)
        if d == 0:
            return out
        for f in range(X.shape[1]):
            vals = np.unique(X[rows, f])
            for a, b in zip(vals[:-1], vals[1:]):
                t = a / 2 + b / 2
                el = best(rows[X[rows, f] <= t], d - 1)
                er = best(rows[X[rows, f] > t], d - 1)
                for bl in range(el.size):
                    for br in range(er.size):
                        out[bl + br + 1] = min(out[bl + br + 1], el[bl] + er[br])
        return np.minimum.accumulate(out)

    return best(np.arange(X.shape[0]), depth)


def true_errors(tree, X, y):
    leaves = apply_tree(tree.feature, tree.threshold, tree.left, tree.right, np.ascontiguousarray(X, dtype=float))
    return int(np.count_nonzero(tree.prediction[leaves] != y))


def tree_depth(tree, k=0):
    return 0 if tree.feature[k] < 0 else 1 + max(tree_depth(tree, tree.left[k]), tree_depth(tree, tree.right[k]))


def check_front(raw, X, y, ref, depth):
    """Every tree's reported errors are its true errors, and the front matches the oracle at every budget."""
    best = {}
    for sol in raw.solutions:
        t = sol.tree
        assert sol.info["errors"] == true_errors(t, X, y)
        assert sol.info["splits"] == t.n_splits
        assert tree_depth(t) <= depth
        assert sol.optimal
        best[t.n_splits] = min(best.get(t.n_splits, 1 << 30), sol.info["errors"])
    for b in range(ref.size):
        assert min(e for s, e in best.items() if s <= b) == ref[b], (b, ref, best)
    errs = [s.info["errors"] for s in raw.solutions]
    assert errs == sorted(errs, reverse=True) and len(set(errs)) == len(errs)  # strictly decreasing


@st.composite
def datasets(draw, max_rows=12, max_features=3):
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_features))
    c = draw(st.integers(2, 3))
    grid = draw(st.sampled_from([2, 4, 50]))  # few distinct values (ties, one-hot) or nearly all distinct
    X = np.array(draw(st.lists(st.integers(0, grid - 1), min_size=n * p, max_size=n * p)), dtype=float).reshape(n, p)
    y = np.array(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), dtype=np.int64)
    return X / grid, y, c


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=datasets(), depth=st.integers(1, 2))
def test_front_matches_oracle_depth_1_2(data, depth):
    X, y, c = data
    ref = oracle(X, y, c, depth)
    check_front(contree(X, y, c, max_depth=depth), X, y, ref, depth)
    single = contree(X, y, c, max_depth=depth, front=False).solutions[0]
    assert single.info["errors"] == ref[-1] == true_errors(single.tree, X, y)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_rows=9, max_features=3), threads=st.sampled_from([1, 2, 3]))
def test_front_matches_oracle_depth_3(data, threads):
    X, y, c = data
    ref = oracle(X, y, c, 3)
    check_front(contree(X, y, c, max_depth=3, n_threads=threads), X, y, ref, 3)
    single = contree(X, y, c, max_depth=3, front=False, n_threads=threads).solutions[0]
    assert single.info["errors"] == ref[-1] == true_errors(single.tree, X, y)


@pytest.mark.parametrize("front", [True, False])
def test_threads_share_the_root_and_agree_with_one_thread(front):
    # big enough that both threads search root features and prune with each other's best costs
    X, y = _hard_set(400, seed=5)
    one = contree(X, y, max_depth=3, front=front, n_threads=1)
    for threads in (2, 4):
        many = contree(X, y, max_depth=3, front=front, n_threads=threads)
        assert many.stats["threads"] == threads and many.stats["proven"]
        assert many.stats["upper_bounds"] == one.stats["upper_bounds"]
        assert many.stats["lower_bounds"] == one.stats["lower_bounds"]
        assert [(s.info["splits"], s.info["errors"]) for s in many.solutions] == [
            (s.info["splits"], s.info["errors"]) for s in one.solutions
        ]
        for sol in many.solutions:
            assert sol.optimal and sol.info["errors"] == true_errors(sol.tree, X, y)
    with pytest.raises(ValueError, match="n_threads"):
        contree(X, y, max_depth=2, n_threads=0)


@pytest.mark.parametrize("front", [True, False])
def test_lazy_root_seeds_agree_with_eager_ones_on_threads(monkeypatch, front):
    # the root pauses a feature after a few splits, seeds the rest and resumes, alone or while claiming features
    import treeexplorer.solvers.contree as ct

    X, y = _hard_set(150, seed=7)
    monkeypatch.setattr(ct, "_SEED_LAZY_DEPTH", 3)
    monkeypatch.setattr(ct, "_SEED_AFTER_SPLITS", 0)
    eager = contree(X, y, max_depth=3, front=front, n_threads=1)
    monkeypatch.setattr(ct, "_SEED_AFTER_SPLITS", 5)
    for threads in (1, 2):
        lazy = contree(X, y, max_depth=3, front=front, n_threads=threads)
        assert lazy.stats["proven"] and lazy.stats["upper_bounds"] == eager.stats["upper_bounds"]
        assert lazy.stats["lower_bounds"] == eager.stats["lower_bounds"]
        for sol in lazy.solutions:
            assert sol.optimal and sol.info["errors"] == true_errors(sol.tree, X, y)


def test_larger_random_sets_match_oracle():
    rng = np.random.default_rng(7)
    for _ in range(3):
        X = rng.integers(0, 6, size=(40, 3)) / 6
        y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(0, 0.2, 40) > 0.6).astype(np.int64)
        ref = oracle(X, y, 2, 2)
        check_front(contree(X, y, 2, max_depth=2), X, y, ref, 2)


@SETTINGS
@given(data=datasets(max_rows=10), k=st.integers(0, 3))
def test_max_nodes_caps_the_front(data, k):
    X, y, c = data
    ref = oracle(X, y, c, 2)[: k + 1]
    raw = contree(X, y, c, max_depth=2, max_nodes=k)
    assert max(s.info["splits"] for s in raw.solutions) <= k
    check_front(raw, X, y, ref, 2)


@SETTINGS
@given(data=datasets(max_rows=10), lam=st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.25, 1.0]))
def test_sparsity_picks_the_exact_minimiser(data, lam):
    X, y, c = data
    n = len(y)
    ref = oracle(X, y, c, 2)
    raw = contree(X, y, c, max_depth=2, sparsity=lam)
    assert len(raw.solutions) == 1
    sol = raw.solutions[0]
    a = Fraction(lam)
    best = min(Fraction(int(ref[b]), n) + a * b for b in range(ref.size))
    got = Fraction(true_errors(sol.tree, X, y), n) + a * sol.tree.n_splits
    assert got == best and sol.optimal
    # ties go to fewer splits
    assert all(Fraction(int(ref[b]), n) + a * b > best for b in range(sol.tree.n_splits))


def test_thresholds_are_midpoints_and_left_is_le():
    X = np.array([[1.0], [2.0], [4.0], [8.0]])
    y = np.array([0, 0, 1, 1])
    t = contree(X, y, max_depth=1).solutions[-1].tree
    assert t.feature[0] == 0 and t.threshold[0] == 3.0
    assert t.prediction[t.left[0]] == 0 and t.prediction[t.right[0]] == 1


def test_pure_and_constant_inputs():
    X = np.zeros((5, 2))
    y = np.array([0, 1, 0, 1, 1])
    raw = contree(X, y, max_depth=3)
    assert [s.info["errors"] for s in raw.solutions] == [2] and raw.solutions[0].tree.n_splits == 0
    raw = contree(np.arange(6.0).reshape(6, 1), np.zeros(6, dtype=int), max_depth=2)
    assert raw.solutions[0].info["errors"] == 0 and len(raw.solutions) == 1


def test_bad_input_has_clear_messages():
    X = np.random.default_rng(0).random((10, 2))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match="max_depth"):
        contree(X, y, max_depth=-1)
    with pytest.raises(ValueError, match="infinite"):  # NaN is a missing value (tests/test_contree_missing.py)
        contree(np.full((3, 1), np.inf), y[:3])
    with pytest.raises(ValueError, match="sparsity"):
        contree(X, y, sparsity=-1)
    with pytest.raises(MemoryError, match="max_memory_mb"):
        contree(np.zeros((200_000, 50)), np.zeros(200_000, dtype=int), max_depth=4, max_memory_mb=64)


def test_its_memory_refusal_is_one_line_through_solve_and_the_cli(tmp_path, capsys):
    # The solver's own refusal (its cache over max_memory_mb) reached the CLI as a MemoryError traceback.
    import treeexplorer
    from treeexplorer.cli import main
    from treeexplorer.limits import MemoryLimitError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 60)).round(2)  # about 21 MB of ConTree's buffers at depth 4
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(MemoryLimitError, match="raise max_memory_mb"):
        treeexplorer.solve((X, y), solver="contree", max_depth=4, max_memory_mb=16)
    path = tmp_path / "t.csv"
    import pandas as pd

    pd.DataFrame(np.c_[X, y], columns=[*(f"x{i}" for i in range(60)), "label"]).to_csv(path, index=False)
    args = ["solve", str(path), "--target", "label", "--solver", "contree", "--max-depth", "4"]
    code = main([*args, "-P", "max_memory_mb=16"])
    err = capsys.readouterr().err
    assert code != 0 and "max_memory_mb" in err and "Traceback" not in err


def test_cut_offs_never_end_a_node_as_exact(monkeypatch):
    # Regression: a child handed cut-offs <= 0 for its first budget (not for all) stopped searching and called
    # its front exact; the depth-4 front then missed a 2-error tree.  Checked against the search without
    # cut-offs and seeds (the plain DP), on the data that showed it and a few more.
    import treeexplorer.solvers.contree as ct

    for seed in (11, 1003, 1017):
        rng = np.random.default_rng(seed)
        n, p, c = int(rng.integers(20, 120)), int(rng.integers(2, 7)), int(rng.integers(2, 4))
        X = np.round(rng.random((n, p)) * rng.choice([5, 20, 1000]))
        y = ((X[:, 0] > X[:, 1 % p]) ^ (rng.random(n) < 0.2)).astype(np.int64) + (rng.random(n) < 0.1) * (c - 2)
        got = contree(X, y, max_depth=4, n_threads=1)
        with monkeypatch.context() as mp:
            mp.setattr(ct, "_CUTS", 0)
            mp.setattr(ct, "_CUTS_FRONT", 0)
            mp.setattr(ct, "_SEED_PASS", 0)
            plain = contree(X, y, max_depth=4, n_threads=1)
        assert got.stats["upper_bounds"] == plain.stats["upper_bounds"], seed
        assert got.stats["proven"] and got.stats["lower_bounds"] == got.stats["upper_bounds"]
        for sol in got.solutions:
            assert sol.info["errors"] == true_errors(sol.tree, X, y)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_rows=40, max_features=3), front=st.booleans())
def test_second_child_rule_keeps_the_optimum(data, front):
    """The second child of a split is set aside only when the first child's bound prunes the whole interval
    (``_SIBLING_H`` 1, one tree) or already when it proves this one split useless (0): both are exact, at depth 4
    too (where the rule matters most), and equal to the plain DP without cut-offs or seeds.  The front runs the
    same settings with its own cut-offs."""
    import treeexplorer.solvers.contree as ct

    X, y, c = data
    runs = []
    # the last two: the root's seed pass eager (0) or lazy after 3 splits (a feature's search paused and resumed)
    for sib, cuts, seeds, after in ((1, ct._CUTS, 1, 0), (0, 2, 1, 0), (0, 0, 0, 0), (1, ct._CUTS, 1, 3)):
        old = (ct._SIBLING_H, ct._CUTS, ct._CUTS_FRONT, ct._SEED_PASS, ct._SEED_AFTER_SPLITS)
        ct._SIBLING_H, ct._CUTS, ct._CUTS_FRONT, ct._SEED_PASS, ct._SEED_AFTER_SPLITS = sib, cuts, cuts, seeds, after
        try:
            runs.append(contree(X, y, c, max_depth=4, front=front, n_threads=1))
        finally:
            ct._SIBLING_H, ct._CUTS, ct._CUTS_FRONT, ct._SEED_PASS, ct._SEED_AFTER_SPLITS = old
    assert all(r.stats["upper_bounds"] == runs[2].stats["upper_bounds"] for r in runs)
    for r in (runs[0], runs[3]):
        assert r.stats["proven"] and r.stats["lower_bounds"] == r.stats["upper_bounds"]
        for sol in r.solutions:
            assert sol.info["errors"] == true_errors(sol.tree, X, y)


def test_second_child_rule_evaluates_fewer_splits():
    # the structural point of the rule: exact sibling bounds prune the neighbouring splits (wilt at depth 4: 6x)
    import treeexplorer.solvers.contree as ct

    X, y = _hard_set(1500, seed=5)
    counts = {}
    for sib, cuts in ((1, 3), (0, 2)):
        old = (ct._SIBLING_H, ct._CUTS)
        ct._SIBLING_H, ct._CUTS = sib, cuts
        try:
            raw = contree(X, y, max_depth=3, front=False, n_threads=1)
        finally:
            ct._SIBLING_H, ct._CUTS = old
        counts[sib] = (raw.stats["upper_bound"], raw.stats["splits_evaluated"])
    assert counts[1][0] == counts[0][0]
    assert counts[1][1] < counts[0][1], counts


# --------------------------------------------------------------------------------------- time limit
def _hard_set(n=3000, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 6))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.3) ^ (rng.random(n) < 0.25)).astype(np.int64)
    return X, y


@pytest.mark.parametrize("threads", [1, 2])
def test_time_limited_run_reports_true_errors_and_a_valid_bound(threads):
    X, y = _hard_set(700)
    exact = contree(X, y, max_depth=3)
    assert exact.status == "done"
    opt = {s.info["splits"]: s.info["errors"] for s in exact.solutions}
    ctl = Control(time_limit=0.02)
    with ctl:
        raw = contree(X, y, max_depth=3, control=ctl, n_threads=threads)
    assert raw.status in ("time_limit", "done")  # "done" only on a very fast machine: the checks still hold
    lbs = raw.stats["lower_bounds"]
    for b in range(len(lbs)):
        best_b = min(e for s, e in opt.items() if s <= b)
        assert lbs[b] <= best_b
    for sol in raw.solutions:
        assert sol.info["errors"] == true_errors(sol.tree, X, y)
        assert sol.info["lower_bound"] <= min(e for s, e in opt.items() if s <= sol.info["budget"])
        if not sol.optimal:
            continue
        assert sol.info["errors"] == min(e for s, e in opt.items() if s <= sol.info["budget"])
    assert raw.stats["lower_bound"] <= exact.stats["upper_bound"] <= raw.stats["upper_bound"]


def test_cancel_before_start_still_returns_a_tree():
    X, y = _hard_set(500)
    ctl = Control()
    ctl.cancel()
    raw = contree(X, y, max_depth=3, control=ctl, front=False)
    assert raw.status == "cancelled"
    sol = raw.solutions[0]
    assert sol.info["errors"] == true_errors(sol.tree, X, y) and not sol.optimal


def test_progress_reports_counters():
    X, y = _hard_set(300)
    seen = []
    ctl = Control(progress=seen.append, poll_interval=0.01)
    with ctl:
        contree(X, y, max_depth=3, control=ctl)
    assert seen and seen[-1]["phase"] == "contree" and seen[-1]["splits_evaluated"] > 0


# ------------------------------------------------------------------------------------------ pycontree
def _small_sets():
    from treeexplorer.data import load_dataset

    iris = load_dataset("iris")
    Xi, yi = iris.X.astype(float), iris.y
    rng = np.random.default_rng(1)
    Xr = rng.random((300, 4))
    yr = ((Xr[:, 0] + Xr[:, 1] > 1.0) ^ (Xr[:, 2] > 0.7) ^ (rng.random(300) < 0.1)).astype(np.int64)
    Xm = np.round(rng.random((200, 3)) * 5) / 5
    ym = rng.integers(0, 3, 200)
    return [("iris", Xi, yi), ("random300", Xr, yr), ("ties3class", Xm, ym)]


@pytest.mark.parametrize("depth", [2, 3])
def test_same_optimal_errors_as_pycontree(depth):
    pycontree = pytest.importorskip("pycontree")
    for name, X, y in _small_sets():
        ref = pycontree.ConTree(max_depth=depth, time_limit=60).fit(X, y)
        ref_err = int(np.count_nonzero(ref.predict(X) != y))
        ours = contree(X, y, max_depth=depth, front=False).solutions[0]
        assert ours.info["errors"] == ref_err, name
        front = contree(X, y, max_depth=depth)
        assert front.solutions[-1].info["errors"] == ref_err, name


# ------------------------------------------------------------------------------------ API and gaps
def test_registered_and_usable_from_the_api(tmp_path):
    import treeexplorer as tx
    from treeexplorer.registry import available_solvers

    assert "contree" in available_solvers()
    front = tx.solve("iris", solver="contree", max_depth=2, test_size=0.3, seed=0)
    assert front.discretizer == "raw" and front.optimal and front.status == "done"
    assert [t.metrics["splits"] for t in front.trees] == [0, 1, 2]
    assert front.trees[-1].metrics["train_errors"] < front.trees[0].metrics["train_errors"]


def test_gaps_to_the_exact_front(tmp_path):
    from treeexplorer.api import prepare, run_prepared
    from treeexplorer.front import Front
    from treeexplorer.gap import GapError, attach_gaps, exact_front

    prep = prepare("iris", test_size=0.3, seed=0)
    exact = exact_front(prep, max_depth=3)
    cart = run_prepared(prep, "cart", {"max_depth": 3})
    attach_gaps(cart, exact, prep)
    opt = {t.metrics["splits"]: t.metrics["train_errors"] for t in exact.trees}
    for t in cart.trees:
        g = t.metrics["gap_errors"]
        if t.metrics["depth"] <= 3 and t.metrics["splits"] <= 7:
            best = min(e for s, e in opt.items() if s <= t.metrics["splits"])
            assert g == t.metrics["train_errors"] - best >= 0
        else:
            assert g is None
    attach_gaps(exact, exact)
    assert all(t.metrics["gap_errors"] == 0 for t in exact.trees)
    # stored in the front JSON, and read back
    path = tmp_path / "f.json"
    cart.to_json(path)
    back = Front.from_json(path)
    assert [t.metrics.get("gap_errors") for t in back.trees] == [t.metrics["gap_errors"] for t in cart.trees]
    assert '"gap_errors"' in path.read_text()
    # another split is refused
    other = run_prepared(prepare("iris", test_size=0.5, seed=0), "cart", {"max_depth": 2})
    with pytest.raises(GapError, match="same data"):
        attach_gaps(other, exact)
    with pytest.raises(GapError, match="contree"):
        attach_gaps(cart, cart)


def _coarse_set(n=400, seed=5):
    # few distinct values and noisy labels: narrow threshold intervals, so a stopped search knows a positive bound
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, (n, 4)).astype(float)
    y = ((X[:, 0] + X[:, 1] > 4) ^ (rng.random(n) < 0.3)).astype(np.int64)
    return X, y


@pytest.mark.parametrize("depth", [3, 4])
@pytest.mark.parametrize("front", [False, True])
def test_stopped_run_bounds_are_valid_per_budget(monkeypatch, depth, front):
    import treeexplorer.solvers.contree as ct

    X, y = _coarse_set()
    exact = contree(X, y, max_depth=depth, front=front, n_threads=1)
    assert exact.stats["proven"]
    opt = exact.stats["upper_bounds"]
    for stop, seed_after in ((5, 0), (50, 20), (200, 0), (200, 100), (400, 100), (800, 0), (800, 300)):
        monkeypatch.setattr(ct, "_STOP_AFTER_SPLITS", stop)
        monkeypatch.setattr(ct, "_SEED_AFTER_SPLITS", seed_after)
        monkeypatch.setattr(ct, "_SEED_LAZY_DEPTH", 3)
        ctl = Control()
        with ctl:
            raw = contree(X, y, max_depth=depth, front=front, n_threads=1, control=ctl)
        lbs, ubs = raw.stats["lower_bounds"], raw.stats["upper_bounds"]
        assert all(lo <= o <= u for lo, o, u in zip(lbs, opt, ubs)), (stop, seed_after, lbs, opt, ubs)
        for sol in raw.solutions:
            assert sol.info["errors"] == true_errors(sol.tree, X, y)
            assert sol.info["lower_bound"] <= opt[sol.info["budget"]]
        if raw.status == "done":
            assert lbs == ubs == opt


@pytest.mark.parametrize("front", [False, True])
@pytest.mark.parametrize("seed_after", [0, 100])
def test_stopped_run_reports_a_positive_bound_when_the_search_knows_one(monkeypatch, front, seed_after):
    # stopped after the root's seed pass and part of its interval search: every open interval's bound is > 0.
    # seed_after=100: the root seeds lazily, pausing its first feature's search after 100 splits
    import treeexplorer.solvers.contree as ct

    X, y = _coarse_set()
    monkeypatch.setattr(ct, "_SEED_AFTER_SPLITS", seed_after)
    monkeypatch.setattr(ct, "_SEED_LAZY_DEPTH", 3)
    monkeypatch.setattr(ct, "_STOP_AFTER_SPLITS", 400)
    ctl = Control()
    with ctl:
        raw = contree(X, y, max_depth=3, front=front, n_threads=1, control=ctl)
    assert raw.status == "time_limit"
    lbs = raw.stats["lower_bounds"]
    assert all(v > 0 for v in lbs), lbs
    assert raw.stats["lower_bound"] == lbs[-1] > 0
    assert all(s.info["lower_bound"] > 0 for s in raw.solutions)


@pytest.mark.parametrize("front", [False, True])
def test_stopped_run_rebuilds_from_the_cache_within_the_limit(front):
    # Regression (issue 36): rebuilding a stopped run's tree re-solved its depth-2 nodes exactly, ignoring the
    # clock (20,000 x 60, 2 s limit: 50-120 s).  Now the cached choices are used, a node left without one gets its
    # best stump.  Wide enough that an exact depth-2 re-solve takes many seconds.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 40))
    y = (X[:, -1] + 0.5 * rng.normal(size=6000) > 0).astype(np.int64)
    contree(X[:40], y[:40], max_depth=3, front=front, n_threads=1)  # kernels loaded outside the clock
    ctl = Control(time_limit=0.5)
    t = time.perf_counter()
    with ctl:
        raw = contree(X, y, max_depth=3, front=front, n_threads=1, control=ctl)
    wall = time.perf_counter() - t
    assert raw.status == "time_limit"
    assert wall < 0.5 + 1.5, wall
    assert raw.stats["upper_bound"] < len(y) - np.bincount(y).max()  # at least a stump's worth, not a leaf
    for sol in raw.solutions:
        assert sol.info["errors"] == true_errors(sol.tree, X, y)
    assert not raw.stats["proven"]


# ----------------------------------------------------------------------------- limited-discrepancy incumbent
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_rows=9, max_features=3), threads=st.sampled_from([1, 2]))
def test_lds_incumbent_leaves_the_exact_front_unchanged(data, threads):
    # the limited-discrepancy passes (here from depth 3 on, so the root is restricted) only seed the incumbent
    import treeexplorer.solvers.contree as ct

    X, y, c = data
    ref = oracle(X, y, c, 3)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ct, "_LDS_DEPTH", 3)
        mp.setattr(ct, "_EXACT_FIRST_SPLITS", 1)  # the passes run (else a small run finishes before them)
        check_front(contree(X, y, c, max_depth=3, n_threads=threads), X, y, ref, 3)
        single = contree(X, y, c, max_depth=3, front=False, n_threads=threads).solutions[0]
    assert single.optimal and single.info["errors"] == ref[-1] == true_errors(single.tree, X, y)


@pytest.mark.parametrize("front", [True, False])
def test_lds_incumbent_leaves_depth_4_results_unchanged(monkeypatch, front):
    import treeexplorer.solvers.contree as ct

    X, y = _hard_set(100, seed=11)
    monkeypatch.setattr(ct, "_LDS_DEPTH", 99)
    plain = contree(X, y, max_depth=4, front=front, n_threads=1)
    monkeypatch.setattr(ct, "_LDS_DEPTH", 4)
    monkeypatch.setattr(ct, "_EXACT_FIRST_SPLITS", 1)
    for threads in (1, 2):
        raw = contree(X, y, max_depth=4, front=front, n_threads=threads)
        assert raw.stats["proven"] and raw.stats["upper_bounds"] == plain.stats["upper_bounds"]
        assert raw.stats["lower_bounds"] == plain.stats["lower_bounds"]
        for sol in raw.solutions:
            assert sol.optimal and sol.info["errors"] == true_errors(sol.tree, X, y)
            assert sol.info["splits"] == sol.tree.n_splits and tree_depth(sol.tree) <= 4
            if front:
                assert sol.tree.n_splits <= sol.info["budget"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=datasets(max_rows=10, max_features=3),
    front=st.booleans(),
    stop=st.integers(1, 120),
    after_lds=st.booleans(),
)
def test_stopped_run_with_lds_returns_a_valid_tree_and_claims_nothing_unproven(data, front, stop, after_lds):
    # stopped inside a limited-discrepancy pass, inside the exact search, or right after the passes (the incumbent
    # alone): every tree is valid, no better than the optimum, within its budget, and optimal only when it is
    import treeexplorer.solvers.contree as ct

    X, y, c = data
    ref = oracle(X, y, c, 3)
    seen = {}
    orig = ct._lds

    def lds_then_stop(ws, *a, **kw):
        inc = orig(ws, *a, **kw)
        seen.update(inc)
        ws[10][0] = 2  # the time limit strikes as the exact search starts
        return inc

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ct, "_LDS_DEPTH", 3)
        mp.setattr(ct, "_EXACT_FIRST_SPLITS", 1)
        if after_lds:
            mp.setattr(ct, "_lds", lds_then_stop)
        else:
            mp.setattr(ct, "_STOP_AFTER_SPLITS", stop)
        ctl = Control()
        with ctl:
            raw = contree(X, y, c, max_depth=3, front=front, n_threads=1, control=ctl)
    lbs = raw.stats["lower_bounds"]
    assert all(lo <= o for lo, o in zip(lbs, ref[: len(lbs)] if front else [ref[0], ref[-1]]))
    for sol in raw.solutions:
        b = sol.info["budget"]
        opt = ref[min(b, ref.size - 1)] if front else ref[-1]
        assert sol.info["errors"] == true_errors(sol.tree, X, y) >= opt
        assert sol.info["splits"] == sol.tree.n_splits and tree_depth(sol.tree) <= 3
        if front:
            assert sol.tree.n_splits <= b
        assert sol.info["lower_bound"] <= opt
        if sol.optimal:
            assert sol.info["errors"] == opt
    if after_lds and raw.status != "done":
        # the incumbent's tree is returned (or a better one), never marked optimal above the optimum
        best = min(e for e, _ in seen.values()) if seen else None
        if best is not None:
            assert raw.stats["upper_bound"] <= best
        assert raw.stats["proven"] is False or raw.stats["upper_bound"] == ref[-1]


@pytest.mark.parametrize("front", [False, True])
def test_run_stopped_after_the_lds_passes_returns_their_tree_unproven(monkeypatch, front):
    import treeexplorer.solvers.contree as ct

    X, y = _coarse_set()
    exact = contree(X, y, max_depth=4, front=front, n_threads=1)
    assert exact.stats["proven"]
    opt = exact.stats["upper_bounds"]
    seen = {}
    orig = ct._lds

    def lds_then_stop(ws, *a, **kw):
        inc = orig(ws, *a, **kw)
        seen.update(inc)
        ws[10][0] = 2  # the time limit strikes as the exact search starts
        return inc

    monkeypatch.setattr(ct, "_lds", lds_then_stop)
    monkeypatch.setattr(ct, "_EXACT_FIRST_SPLITS", 1)
    ctl = Control()
    with ctl:
        raw = contree(X, y, max_depth=4, front=front, n_threads=1, control=ctl)
    assert raw.status == "time_limit" and not raw.stats["proven"]
    full = len(opt) - 1
    assert raw.stats["upper_bound"] == seen[full][0] > opt[full]  # the passes' tree, not yet the optimum
    for sol in raw.solutions:
        b = sol.info["budget"]
        assert sol.info["errors"] == true_errors(sol.tree, X, y) >= opt[b]
        assert sol.info["lower_bound"] <= opt[b] and sol.tree.n_splits <= (b if front else 15)
        assert sol.optimal == (sol.info["errors"] == sol.info["lower_bound"] == opt[b])


# ------------------------------------------------------------------- exact search first, passes only when paused
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_rows=9, max_features=3), pause=st.integers(1, 200), front=st.booleans())
def test_exact_search_paused_for_the_passes_keeps_the_optimum(data, pause, front):
    # the exact search paused after ``pause`` splits (unwound, its cache kept), the passes, then the search again
    import treeexplorer.solvers.contree as ct

    X, y, c = data
    ref = oracle(X, y, c, 3)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ct, "_LDS_DEPTH", 3)
        mp.setattr(ct, "_EXACT_FIRST_SPLITS", pause)
        raw = contree(X, y, c, max_depth=3, front=front, n_threads=1)
    if front:
        check_front(raw, X, y, ref, 3)
    else:
        sol = raw.solutions[0]
        assert sol.optimal and sol.info["errors"] == ref[-1] == true_errors(sol.tree, X, y)


@pytest.mark.parametrize("threads", [1, 2])
def test_passes_run_only_when_the_exact_search_is_paused(monkeypatch, threads):
    import treeexplorer.solvers.contree as ct

    X, y = _hard_set(120, seed=11)
    calls = []
    orig = ct._lds

    def lds(*a, **kw):
        calls.append(1)
        return orig(*a, **kw)

    monkeypatch.setattr(ct, "_lds", lds)
    plain = contree(X, y, max_depth=4, front=False, n_threads=threads)  # finishes within its exact-first effort
    assert plain.stats["proven"] and not calls
    for seconds in (0.0, 0.002):  # paused by the CPU clock at once or almost: the passes run, the result stays
        monkeypatch.setattr(ct, "_EXACT_FIRST_SECONDS", seconds)
        raw = contree(X, y, max_depth=4, front=False, n_threads=threads)
        assert raw.stats["proven"] and raw.stats["upper_bound"] == plain.stats["upper_bound"]
        assert raw.solutions[0].info["errors"] == true_errors(raw.solutions[0].tree, X, y)
    assert calls


def test_lazy_root_seeds_at_a_share_of_the_time_limit(monkeypatch):
    # depth 4, the split count that triggers the lazy seeds out of reach: the time share (at once here) seeds the
    # root's features, so a run stopped after a fixed number of splits bounds every feature (> 0), below the optimum
    import treeexplorer.solvers.contree as ct

    X, y = _coarse_set()
    opt = contree(X, y, max_depth=4, front=False, n_threads=1).stats["upper_bound"]
    monkeypatch.setattr(ct, "_SEED_AFTER_SPLITS", 10**9)
    monkeypatch.setattr(ct, "_EXACT_FIRST_SPLITS", 10**9)  # no passes: the stop falls in the exact search
    monkeypatch.setattr(ct, "_STOP_AFTER_SPLITS", 3000)
    lbs = {}
    for share in (0.0, 1.0):
        monkeypatch.setattr(ct, "_SEED_SHARE", share)
        ctl = Control(time_limit=600)
        with ctl:
            raw = contree(X, y, max_depth=4, front=False, n_threads=1, control=ctl)
        assert raw.status == "time_limit"
        lbs[share] = raw.stats["lower_bound"]
        assert lbs[share] <= opt <= raw.stats["upper_bound"]
    assert lbs[0.0] > 0 and lbs[1.0] == 0, lbs


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_rows=9, max_features=3), k=st.integers(2, 7))
def test_budget_two_first_matches_oracle_depth_3(data, k):
    """Budget 2 of a node of depth >= 3 solved first as the depth-two node over its rows (``_B2_FIRST``): the front
    matches the oracle, also capped (``max_nodes`` 2 leaves budget 2 the node's last), and every tree rebuilds."""
    X, y, c = data
    ref = oracle(X, y, c, 3)[: k + 1]
    raw = contree(X, y, c, max_depth=3, max_nodes=k, n_threads=1)
    assert max(s.info["splits"] for s in raw.solutions) <= k
    check_front(raw, X, y, ref, 3)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_rows=40, max_features=3))
def test_budget_two_first_leaves_the_depth_4_front_unchanged(data):
    """The depth-4 front with budget 2 solved first equals the plain search's, proven, with true errors."""
    import treeexplorer.solvers.contree as ct

    X, y, c = data
    runs = []
    for flag in (0, 1):
        old = ct._B2_FIRST
        ct._B2_FIRST = flag
        try:
            runs.append(contree(X, y, c, max_depth=4, n_threads=1))
        finally:
            ct._B2_FIRST = old
    assert runs[0].stats["upper_bounds"] == runs[1].stats["upper_bounds"]
    assert runs[1].stats["proven"] and runs[1].stats["lower_bounds"] == runs[1].stats["upper_bounds"]
    for sol in runs[1].solutions:
        assert sol.info["errors"] == true_errors(sol.tree, X, y)


def split_oracle(X, y, n_classes, depth, f):
    """Fewest errors with at most ``b`` splits (``b = 0 .. 2**depth - 1``) of the trees whose root splits on ``f``
    (``BIG`` where ``f`` has no split)."""
    out = np.full(1 << depth, 1 << 40, dtype=np.int64)
    vals = np.unique(X[:, f])
    for a, b in zip(vals[:-1], vals[1:]):
        left = X[:, f] <= a / 2 + b / 2
        el = oracle(X[left], y[left], n_classes, depth - 1)
        er = oracle(X[~left], y[~left], n_classes, depth - 1)
        for bl in range(el.size):
            for br in range(er.size):
                out[bl + br + 1] = min(out[bl + br + 1], el[bl] + er[br])
    return np.minimum.accumulate(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=datasets(max_rows=10, max_features=2),
    depth=st.sampled_from([3, 4]),
    front=st.booleans(),
    stop=st.sampled_from([1, 4, 15, 60, 250, 10**6]),
    blocks=st.sampled_from([(12, 16), (1, 1), (1, 3)]),
)
def test_root_bound_pass_never_claims_more_than_the_oracle(data, depth, front, stop, blocks):
    # the root bound pass (blocks of each feature's rows solved to a small cut-off) runs first, then the search,
    # stopped after ``stop`` splits (inside the pass or after it): every feature's bound from the pass stays at or
    # below the best tree splitting on it at the root, and every reported bound at or below the true optimum.
    # ``blocks``: (errors, rows) per block, (1, 1) one or two rows a block, then merged level by level
    import treeexplorer.solvers.contree as ct

    X, y, c = data
    ref = oracle(X, y, c, depth)
    seen = []

    def spy(*args, **kw):
        fb = bounds(*args, **kw)
        seen.append(fb.copy())
        return fb

    bounds = ct._bounds
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ct, "_BOUND_DEPTH", 2)
        mp.setattr(ct, "_BOUND_AT", 0.0)
        mp.setattr(ct, "_STOP_AFTER_SPLITS", stop)
        mp.setattr(ct, "_BOUND_BLOCK_ERRORS", blocks[0])
        mp.setattr(ct, "_BOUND_BLOCK_ROWS", blocks[1])
        mp.setattr(ct, "_bounds", spy)
        ctl = Control(time_limit=60)
        with ctl:
            raw = contree(X, y, c, max_depth=depth, front=front, n_threads=1, control=ctl)
    for fb in seen:
        for f in range(X.shape[1]):
            best = split_oracle(X, y, c, depth, f)
            want = best[1 : fb.shape[1]] if front else [best[-1]]
            assert all(lo <= o for lo, o in zip(fb[f, 1:], want)), (f, fb[f], best)
    lbs = raw.stats["lower_bounds"]
    opt = list(ref[: len(lbs)]) if front else [int(ref[0]), int(ref[-1])]
    assert all(lo <= o for lo, o in zip(lbs, opt)), (lbs, opt)
    for sol in raw.solutions:
        assert sol.info["errors"] == true_errors(sol.tree, X, y)
        assert sol.info["lower_bound"] <= opt[sol.info["budget"]]
    if raw.status == "done":
        assert lbs == opt


@pytest.mark.parametrize("front", [False, True])
def test_stopped_depth_4_run_reports_the_root_bound_pass(monkeypatch, front):
    # a depth-4 run stopped before its search bounded every root feature: 0 without the bound pass, positive (and
    # at most the optimum, per budget) with it
    import treeexplorer.solvers.contree as ct

    X, y = _coarse_set()
    exact = contree(X, y, max_depth=4, front=front, n_threads=1)
    assert exact.stats["proven"]
    opt = exact.stats["upper_bounds"]
    monkeypatch.setattr(ct, "_BOUND_AT", 0.0)
    monkeypatch.setattr(ct, "_STOP_AFTER_SPLITS", 3000)
    lbs = {}
    for share in (0.0, 0.2):
        monkeypatch.setattr(ct, "_BOUND_SHARE", share)
        ctl = Control(time_limit=60)
        with ctl:
            raw = contree(X, y, max_depth=4, front=front, n_threads=1, control=ctl)
        assert raw.status == "time_limit"
        lbs[share] = raw.stats["lower_bounds"]
        assert all(lo <= o for lo, o in zip(lbs[share], opt)), (share, lbs[share], opt)
        assert raw.stats["lower_bound"] == lbs[share][-1]
        assert all(s.info["lower_bound"] <= opt[s.info["budget"]] for s in raw.solutions)
    assert lbs[0.0][-1] == 0
    assert lbs[0.2][-1] > 0
    assert all(v > 0 for v in lbs[0.2][1:])


@pytest.mark.parametrize("front", [False, True])
def test_block_bounds_add_up_and_stay_below_the_optimum(monkeypatch, front):
    # the whole bound pass, then the search stopped at its first split: small blocks (about 3 of the incumbent's
    # errors each), merged level by level up to halves, give a positive bound, at most the optimum at every budget
    import treeexplorer.solvers.contree as ct

    X, y = _coarse_set(n=240, seed=3)
    exact = contree(X, y, max_depth=4, front=front, n_threads=1)
    opt = exact.stats["upper_bounds"]
    bounds = ct._bounds

    def then_stop(ws, *args):
        fb = bounds(ws, *args)
        ws[12][10] = int(ws[11][3]) + 1  # the search stops at its next split
        return fb

    monkeypatch.setattr(ct, "_bounds", then_stop)
    monkeypatch.setattr(ct, "_BOUND_AT", 0.0)
    monkeypatch.setattr(ct, "_BOUND_BLOCK_ERRORS", 3)
    ctl = Control(time_limit=600)
    with ctl:
        raw = contree(X, y, max_depth=4, front=front, n_threads=1, control=ctl)
    assert raw.status == "time_limit"
    lbs = raw.stats["lower_bounds"]
    assert all(0 < lo <= o for lo, o in zip(lbs[1:], opt[1:])), (lbs, opt)
    assert raw.stats["lower_bound"] == lbs[-1] > 0


def test_rows_alike_in_every_feature_bound_every_tree():
    import treeexplorer.solvers.contree as ct

    X = np.array([[0, 1], [0, 1], [0, 1], [2, 3], [2, 3], [5, 0]], dtype=float)
    y = np.array([0, 1, 1, 0, 1, 0])
    ranks = np.ascontiguousarray(np.argsort(np.argsort(X, axis=0, kind="stable"), axis=0).T)
    _, dense = np.unique(X, axis=0, return_inverse=True)
    assert ct._conflicts(np.vstack([dense.ravel(), dense.ravel()]), y, 2) == 2  # one of each pair of rows alike
    assert ct._conflicts(ranks, y, 2) == 0  # every row distinct under these ranks


def test_block_packing_is_the_best_sum_over_disjoint_blocks():
    # ``_packed`` against every subset of pairwise disjoint blocks: those inside the rows before (after) a position
    # count fully, one reaching across it counts its bound less its rows outside
    import itertools

    import treeexplorer.solvers.contree as ct

    def brute(blocks, x, mirror):
        best = 0
        items = [(a, b, int(bnd[1])) for a, b, _, bnd, _ in blocks]
        for r in range(len(items) + 1):
            for sub in itertools.combinations(items, r):
                if any(not (s[1] <= t[0] or t[1] <= s[0]) for s, t in itertools.combinations(sub, 2)):
                    continue
                outside = [
                    max(0, x - a) - max(0, x - b) if mirror else max(0, b - x) - max(0, a - x) for a, b, _ in sub
                ]
                if sum(o > 0 for o in outside) <= 1:
                    best = max(best, sum(max(0, e - o) for (_, _, e), o in zip(sub, outside)))
        return best

    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(4, 30))
        edges = [0, *sorted(set(rng.integers(1, n, size=int(rng.integers(1, 5))).tolist())), n]
        blocks = [[a, b, False, np.array([0, rng.integers(0, b - a + 1)]), 0] for a, b in zip(edges[:-1], edges[1:])]
        if len(blocks) >= 2 and rng.random() < 0.5:  # a merged block over the first two
            a, b = blocks[0][0], blocks[1][1]
            blocks.append([a, b, False, np.array([0, rng.integers(0, b - a + 1)]), 0])
        pos = np.arange(1, n)
        left = ct._packed(blocks, pos, n, 1, False)
        right = ct._packed(blocks, (n - pos)[::-1], n, 1, True)[::-1]
        assert list(left) == [brute(blocks, k, False) for k in pos]
        assert list(right) == [brute(blocks, k, True) for k in pos]
