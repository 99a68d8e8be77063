"""BRANCHES against an exhaustive oracle of accuracy - λ·splits on tiny random binary data, MurTree and
STreeD at depth limits, plus its contract (front, time limit, memory budget, errors, adapter)."""

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control, predict_raw
from treeexplorer.solvers.branches import DEFAULT_LAMBDAS, branches_front, fit_branches, parse_lambdas


# -- oracle: every tree up to a depth, by exhaustive recursion ----------------------------------------
def oracle(X, y, n_classes, lam, max_depth):
    """Best ``accuracy - lam * splits`` over all trees of depth <= max_depth on the 0/1 tests of ``X``.

    Tries every test at every node, including tests already used above and splits with an empty side
    (they never help, but the oracle does not assume so).  The subtrees of a split are independent, so
    the best tree's value is the best leaf or the best split's two subtree optima minus one split cost.
    """
    n, p = X.shape
    cost = lam * n

    def best(idx, d):
        v = float(np.bincount(y[idx], minlength=n_classes).max()) if len(idx) else 0.0
        if d > 0:
            for a in range(p):
                side = X[idx, a] == 1
                v = max(v, best(idx[~side], d - 1) + best(idx[side], d - 1) - cost)
        return v

    return best(np.arange(n), max_depth) / n


def tree_objective(tree, X, y, lam):
    return float(np.mean(predict_raw(tree, X) == y)) - lam * tree.n_splits


def tree_depth(tree):
    depth = np.zeros(tree.n_nodes, dtype=int)
    for k in range(tree.n_nodes):
        if tree.feature[k] >= 0:
            depth[tree.left[k]] = depth[tree.right[k]] = depth[k] + 1
    return int(depth.max())


def random_problem(seed, n, p, n_classes, noise=0.2):
    # Labels follow a random small rule plus noise, so the optimum is neither a single leaf nor trivial.
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p)).astype(np.uint8)
    rule = (X[:, 0] ^ X[:, min(1, p - 1)]) + (X[:, -1] if n_classes > 2 else 0)
    y = np.where(rng.random(n) < noise, rng.integers(0, n_classes, n), rule % n_classes).astype(np.int64)
    return X, y


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    # Compile the kernels before any timer starts.
    fit_branches(np.array([[0, 1], [1, 0], [1, 1]]), np.array([0, 1, 1]), 0.01)
    # and the front's own path (its greedy incumbent is built under the caller's control, so compiles there)
    X, y = random_problem(0, 60, 6, 3)
    with Control() as c:
        branches_front(X, y, lambdas="0.5,0.01", control=c)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 24),
    p=st.integers(1, 5),
    n_classes=st.integers(2, 3),
    lam=st.sampled_from([0.0, 0.01, 0.03, 0.08, 0.2]),
    max_depth=st.integers(0, 3),
)
def test_matches_oracle_with_depth_limit(seed, n, p, n_classes, lam, max_depth):
    X, y = random_problem(seed, n, p, n_classes)
    sol = fit_branches(X, y, lam, max_depth=max_depth, n_classes=n_classes)
    expected = oracle(X, y, n_classes, lam, max_depth)
    assert sol.optimal
    assert sol.info["objective"] == pytest.approx(expected, abs=1e-9)
    # The returned tree really has that value, respects the limit and its counts are the training counts.
    assert tree_objective(sol.tree, X, y, lam) == pytest.approx(expected, abs=1e-9)
    assert tree_depth(sol.tree) <= max_depth
    assert sol.tree.value[0].sum() == n


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6), n=st.integers(2, 30), p=st.integers(1, 4), lam=st.sampled_from([0.0, 0.005, 0.02, 0.05])
)
def test_matches_oracle_without_depth_limit(seed, n, p, lam):
    # Without a limit a useful tree never tests the same column twice, so depth p bounds the oracle.
    X, y = random_problem(seed, n, p, 2)
    sol = fit_branches(X, y, lam)
    assert sol.optimal
    assert sol.info["objective"] == pytest.approx(oracle(X, y, 2, lam, p), abs=1e-9)
    assert tree_objective(sol.tree, X, y, lam) == pytest.approx(sol.info["objective"], abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_same_optimum_as_streed_at_a_depth_limit(seed):
    # An independent implementation of the same objective (STreeD's cost-complex accuracy: misclassified
    # rows + cost_complexity * n per split) on data too large for the oracle.
    pystreed = pytest.importorskip("pystreed")
    X, y = random_problem(seed, 300, 10, 2 + seed % 2, noise=0.3)
    lam, depth = (0.005, 0.01, 0.02)[seed % 3], 3
    model = pystreed.STreeDClassifier("cost-complex-accuracy", max_depth=depth, cost_complexity=lam, time_limit=30)
    model.fit(X.astype(np.int32), y)
    theirs = float(np.mean(model.predict(X.astype(np.int32)) == y)) - lam * (model.get_n_leaves() - 1)
    sol = fit_branches(X, y, lam, max_depth=depth)
    assert sol.optimal and sol.info["objective"] == pytest.approx(theirs, abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_same_optimum_as_murtree_sparse_at_a_depth_limit(seed):
    # The cross-check: on binary tests at the same depth limit, BRANCHES and MurTree's sparse
    # objective (errors / n + sparsity * splits, minimised) reach the same optimum.
    murtree = pytest.importorskip("treeexplorer.solvers.murtree").murtree
    X, y = random_problem(100 + seed, 250, 9, 2 + seed % 3, noise=0.3)
    lam, depth = (0.004, 0.01, 0.03, 0.0)[seed % 4], 2 + seed % 3
    (theirs,) = murtree(X, y, max_depth=depth, sparsity=lam).solutions
    ours = fit_branches(X, y, lam, max_depth=depth)
    assert ours.optimal and theirs.optimal
    assert ours.info["objective"] == pytest.approx(1.0 - theirs.info["objective"], abs=1e-9)
    assert tree_objective(theirs.tree, X, y, lam) == pytest.approx(ours.info["objective"], abs=1e-9)


def test_deep_optimum_beyond_small_depths():
    # A parity of 3 tests needs depth 3; with a cheap split the unlimited optimum must find it exactly.
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(80, 6)).astype(np.uint8)
    y = (X[:, 1] ^ X[:, 3] ^ X[:, 4]).astype(np.int64)
    sol = fit_branches(X, y, 0.01)
    assert sol.optimal and sol.info["accuracy"] == 1.0 and sol.info["splits"] == 7
    assert set(sol.tree.feature[sol.tree.feature >= 0]) == {1, 3, 4}
    shallow = fit_branches(X, y, 0.01, max_depth=2)
    assert shallow.optimal and shallow.info["objective"] == pytest.approx(oracle(X, y, 2, 0.01, 2))
    assert shallow.info["objective"] < sol.info["objective"]


def test_tree_layout_left_is_the_zero_side():
    X = np.array([[0, 1], [0, 0], [1, 1], [1, 0]] * 3, dtype=np.uint8)
    y = X[:, 0].astype(np.int64)
    t = fit_branches(X, y, 0.05).tree
    assert list(t.feature) == [0, -1, -1] and list(t.threshold) == [0.5, 0.0, 0.0]
    assert list(t.prediction[[t.left[0], t.right[0]]]) == [0, 1]
    assert t.value.tolist() == [[6, 6], [6, 0], [0, 6]]


def test_front_sweeps_lambda_and_keeps_each_tree_once():
    X, y = random_problem(7, 200, 8, 2, noise=0.1)
    front = branches_front(X, y, sparsity=0.005)
    grid = [v for v in DEFAULT_LAMBDAS if v >= 0.005]
    assert front.status == "done" and front.stats["lambdas"] == grid
    keys = {(s.tree.feature.tobytes(), s.tree.left.tobytes()) for s in front.solutions}
    assert len(keys) == len(front.solutions) >= 2
    assert sorted(lam for s in front.solutions for lam in s.info["lambdas"]) == sorted(grid)
    for s in front.solutions:
        assert s.optimal and s.info["lambda_lo"] <= s.info["lambda"] == s.info["lambda_hi"]
        for lam in s.info["lambdas"]:  # optimal at every λ it claims
            best = fit_branches(X, y, lam).info["objective"]
            assert tree_objective(s.tree, X, y, lam) == pytest.approx(best)
    # Larger λ never buys a bigger tree.
    by_lam = sorted(front.solutions, key=lambda s: s.info["lambda"])
    assert [s.tree.n_splits for s in by_lam] == sorted((s.tree.n_splits for s in by_lam), reverse=True)
    single = branches_front(X, y, sparsity=0.005, front=False)
    assert len(single.solutions) == 1 and single.solutions[0].info["lambdas"] == [0.005]
    custom = branches_front(X, y, lambdas="0.1, 0.02,0.1")
    assert custom.stats["lambdas"] == [0.1, 0.02]


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_front_trees_match_the_oracle_at_their_lambdas(seed):
    X, y = random_problem(seed, 20, 4, 2, noise=0.3)
    front = branches_front(X, y, lambdas="0.2,0.08,0.04,0.02,0.005", max_depth=3)
    assert sum(len(s.info["lambdas"]) for s in front.solutions) == 5
    for s in front.solutions:
        for lam in s.info["lambdas"]:
            assert tree_objective(s.tree, X, y, lam) == pytest.approx(oracle(X, y, 2, lam, 3), abs=1e-9)


def test_time_limit_stops_the_sweep_with_the_lambdas_done():
    X, y = random_problem(3, 3000, 40, 3, noise=0.4)
    c = Control(time_limit=1.0)
    with c:
        front = branches_front(X, y, lambdas="0.5,0.3,0.0005,0.0002", control=c)
    assert front.status == "time_limit"
    lams = [lam for s in front.solutions for lam in s.info["lambdas"]]
    assert lams[:2] == [0.5, 0.3] and 0.0002 not in lams  # solved in order; the sweep stopped at 0.0005
    (cut,) = [s for s in front.solutions if 0.0005 in s.info["lambdas"]]
    assert not cut.optimal or cut.info["unproven_lambda"] == 0.0005  # a tree shared with a proven λ says so


def test_time_limit_returns_best_so_far_unproven():
    X, y = random_problem(3, 3000, 40, 3, noise=0.4)
    c = Control(time_limit=0.5)
    t0 = time.perf_counter()
    with c:
        front = branches_front(X, y, sparsity=0.0005, front=False, control=c)
    assert time.perf_counter() - t0 < 5
    assert front.status == "time_limit"
    (sol,) = front.solutions
    assert not sol.optimal
    assert sol.info["upper_bound"] >= sol.info["objective"]
    assert tree_objective(sol.tree, X, y, 0.0005) == pytest.approx(sol.info["objective"])


def test_memory_budget_stops_the_search_and_says_so():
    X, y = random_problem(5, 400, 30, 3, noise=0.4)
    sol = fit_branches(X, y, 0.001, memory_mb=1)
    assert not sol.optimal and "memory budget of 1 MB" in sol.info["stopped"]
    assert sol.info["branches"] < 20_000 and sol.info["upper_bound"] > sol.info["objective"]
    assert tree_objective(sol.tree, X, y, 0.001) == pytest.approx(sol.info["objective"])
    front = branches_front(X, y, sparsity=0.001, lambdas="0.1,0.001,0.0005", memory_mb=1)
    # λ=0.1 is solved; λ=0.001 runs out of memory and the sweep stops there, saying why.
    assert [s.info["lambdas"] for s in front.solutions] == [[0.1], [0.001]]
    assert front.solutions[0].optimal and not front.solutions[1].optimal
    assert "lambda=0.001" in front.stats["notices"][0]
    with pytest.raises(ValueError, match="memory_mb"):
        fit_branches(X, y, memory_mb=0)


def test_cancel_before_start_still_returns_a_tree():
    X, y = random_problem(4, 50, 5, 2)
    c = Control()
    c.cancel()
    front = branches_front(X, y, control=c)
    assert front.status == "cancelled" and len(front.solutions) == 1 and not front.solutions[0].optimal


def test_bad_input_is_explained():
    X, y = random_problem(0, 10, 3, 2)
    with pytest.raises(ValueError, match="sparsity must be in"):
        fit_branches(X, y, 1.5)
    with pytest.raises(ValueError, match="max_depth"):
        fit_branches(X, y, 0.01, max_depth=-1)
    with pytest.raises(ValueError, match="0/1 features"):
        fit_branches(X * 2, y)
    with pytest.raises(ValueError, match="lambdas is empty"):
        parse_lambdas(" , ")
    with pytest.raises(ValueError, match="each lambda"):
        parse_lambdas("0.1,abc")


def test_registered_adapter_runs_through_the_api():
    import treeexplorer as te
    from treeexplorer.registry import get_solver

    spec = get_solver("branches")
    assert spec.input == "binary" and spec.default_discretizer == "mid"
    assert {p.name for p in spec.params} == {"sparsity", "max_depth", "front", "lambdas", "memory_mb", "multiway"}
    front = te.solve("monks-1", solver="branches", discretizer="exact", sparsity=0.02)
    assert front.status == "done" and all(t.optimal for t in front)
    best = max(front, key=lambda t: t.metrics["train_accuracy"])
    assert best.metrics["train_accuracy"] == 1.0  # monks-1 has a perfect tree that λ=0.02 affords
    with pytest.raises(ValueError, match="each lambda"):
        te.solve("monks-1", solver="branches", discretizer="exact", lambdas="x")
    with pytest.raises(ValueError, match="with front off"):
        te.solve("monks-1", solver="branches", discretizer="exact", lambdas="0.1", front=False)
