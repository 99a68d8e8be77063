"""SAT solver (Avellaneda DT_depth / DT_size) against an exhaustive oracle on tiny data, and its contract."""

import functools
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control, predict_raw
from treeexplorer.solvers.sat import SAT_SOLVERS, ContradictoryExamples, find_conflicts, sat_tree
from waiting import HANG_S, cancelling_control


# -- oracle: every tree over <= 4 binary tests, by exhaustive recursion ------------------------------
def oracle_min_leaves(X, y, max_depth):
    """Minimum number of leaves of a tree of depth <= max_depth that classifies (X, y) without error.

    Tries every test at every node; the two subtrees of a split are independent, so the minimum over all
    trees is the sum of the subtrees' minima (memoised on the set of rows).  ``inf`` when impossible.
    """
    n, p = X.shape
    cols = [sum(1 << i for i in range(n) if X[i, j]) for j in range(p)]

    @functools.cache
    def best(mask, d):
        labels = {int(y[i]) for i in range(n) if mask >> i & 1}
        if len(labels) <= 1:
            return 1
        if d == 0:
            return float("inf")
        out = float("inf")
        for c in cols:
            a, b = mask & c, mask & ~c
            if a and b:
                out = min(out, best(a, d - 1) + best(b, d - 1))
        return out

    return best((1 << n) - 1, max_depth)


def oracle_min_depth(X, y):
    d = 0
    while oracle_min_leaves(X, y, d) == float("inf"):
        d += 1
    return d


def tree_depth(tree):
    depth = {0: 0}
    for k in range(tree.n_nodes):
        if tree.feature[k] >= 0:
            depth[tree.left[k]] = depth[tree.right[k]] = depth[k] + 1
    return max(depth.values())


@st.composite
def consistent_data(draw):
    """Tiny 0/1 data (<= 4 tests) whose identical rows share a label."""
    p = draw(st.integers(1, 4))
    n = draw(st.integers(2, 14))
    n_classes = draw(st.integers(2, 3))
    X = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=p, max_size=p), min_size=n, max_size=n)))
    label_of = draw(st.lists(st.integers(0, n_classes - 1), min_size=2**p, max_size=2**p))
    y = np.array([label_of[int("".join(map(str, r)), 2)] for r in X])
    return X.astype(np.uint8), y, n_classes


def check_perfect(sol, X, y):
    assert np.array_equal(predict_raw(sol.tree, X), y)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(consistent_data())
def test_min_depth_and_min_size_match_the_oracle(data):
    X, y, n_classes = data
    k = oracle_min_depth(X, y)
    front = sat_tree(X, y, n_classes, max_depth=k + 2)
    assert front.status == "done" and front.stats["min_depth"] == k
    first = front.solutions[0]
    assert first.optimal and first.info["size_proven"] and first.info["depth"] == k
    assert tree_depth(first.tree) == k
    # every depth's minimum size, including those whose tree equals a shallower one
    for d, nodes in front.stats["sizes_by_depth"].items():
        assert nodes == 2 * oracle_min_leaves(X, y, d) - 1, d
    assert sorted(front.stats["sizes_by_depth"]) == (list(range(k, k + 3)) if k else [0])
    prev = None
    for sol in front.solutions:
        check_perfect(sol, X, y)
        d = sol.info["depth"]
        assert sol.optimal and sol.tree.n_nodes == 2 * oracle_min_leaves(X, y, d) - 1
        assert tree_depth(sol.tree) == d  # a strictly smaller tree needs the extra level
        assert prev is None or sol.tree.n_nodes < prev  # only strictly smaller trees join the front
        prev = sol.tree.n_nodes


@settings(max_examples=25, deadline=None)
@given(consistent_data())
def test_dt_depth_alone_finds_the_minimum_depth(data):
    X, y, n_classes = data
    front = sat_tree(X, y, n_classes, minimize_size=False)
    (sol,) = front.solutions
    check_perfect(sol, X, y)
    # DT_depth does not minimise the size, except that a single leaf is trivially minimal
    assert sol.optimal and (not sol.info["size_proven"] or sol.tree.n_nodes == 1)
    assert tree_depth(sol.tree) == sol.info["depth"] == oracle_min_depth(X, y)


def _xor_data(n=40, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, p)).astype(np.uint8)
    y = (X[:, 0] ^ X[:, 1] ^ X[:, 2]).astype(np.int64)
    return X, y


@pytest.mark.parametrize("name", SAT_SOLVERS)
def test_every_offered_sat_solver_gives_the_same_optimum(name):
    X, y = _xor_data()
    front = sat_tree(X, y, sat_solver=name, front=False)
    (sol,) = front.solutions
    check_perfect(sol, X, y)
    # 3-bit parity needs all 8 leaves
    assert sol.optimal and sol.info["depth"] == 3 and sol.tree.n_nodes == 15
    assert front.stats["sat_solver"] == name


def test_contradictory_rows_are_named_or_relabelled():
    X = np.array([[0, 1], [1, 1], [0, 1], [1, 0], [0, 1], [1, 1]], dtype=np.uint8)
    y = np.array([0, 1, 1, 0, 1, 0])
    groups = find_conflicts(X, y)
    assert [g.tolist() for g in groups] == [[0, 2, 4], [1, 5]]
    expected = r"5 of 6 training rows \(2 groups\).*rows 0, 1, 2, 4, 5"
    with pytest.raises(ContradictoryExamples, match=expected) as exc:
        sat_tree(X, y)
    assert exc.value.rows.tolist() == [0, 1, 2, 4, 5] and "majority" in str(exc.value)
    front = sat_tree(X, y, conflicts="majority")
    (notice,) = front.stats["notices"]
    assert "relabelled" in notice and "rows 0, 1, 2, 4, 5" in notice
    # group {0,2,4} -> 1 (two of three); tie in {1,5} -> lowest class 0
    relabelled = np.array([1, 0, 1, 0, 1, 0])
    for sol in front.solutions:
        check_perfect(sol, X, relabelled)
        assert sol.tree.value.sum(axis=1)[0] == 6 and sol.tree.value[0].tolist() == [3, 3]  # true labels kept


def test_time_limit_returns_a_perfect_tree_marked_not_proven():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, (400, 24)).astype(np.uint8)
    y = rng.integers(0, 2, 400)
    X, keep = np.unique(X, axis=0, return_index=True)
    y = y[keep]
    control = Control(time_limit=0.5)
    t0 = time.perf_counter()
    with control:
        front = sat_tree(X, y, control=control)
    assert time.perf_counter() - t0 < HANG_S  # (the limit's own promptness: test_limit_property.py)
    assert front.status == "time_limit" and front.solutions
    for sol in front.solutions:
        check_perfect(sol, X, y)
        assert not sol.optimal


def test_cancel_from_another_thread_keeps_a_tree():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, (300, 20)).astype(np.uint8)
    y = rng.integers(0, 3, 300)
    X, keep = np.unique(X, axis=0, return_index=True)
    y = y[keep]
    control, on = cancelling_control(lambda info: info["phase"].startswith("sat "))  # once it asks the SAT solver
    front = sat_tree(X, y, control=control)
    assert on.event.is_set() and front.status == "cancelled" and front.solutions
    assert all(not s.optimal for s in front.solutions)
    check_perfect(front.solutions[-1], X, y)


def test_stopped_before_any_sat_answer_gives_the_greedy_tree_and_says_so():
    X, y = _xor_data()
    control = Control()
    control.cancel()
    front = sat_tree(X, y, control=control)
    (sol,) = front.solutions
    check_perfect(sol, X, y)
    assert not sol.optimal and sol.info["greedy"] and front.stats["min_depth"] is None
    (notice,) = front.stats["notices"]
    assert "minimum depth is between 1 and" in notice and "greedy" in notice


def test_progress_reports_name_the_phase():
    X, y = _xor_data()
    reports = []
    control = Control(progress=reports.append)
    sat_tree(X, y, control=control)
    assert reports and reports[0]["phase"].startswith("sat") and "depth" in reports[0]


def test_single_class_is_a_leaf_and_bad_input_is_explained():
    X = np.array([[0, 1], [1, 0]], dtype=np.uint8)
    (sol,) = sat_tree(X, np.array([1, 1]), 2).solutions
    assert sol.tree.n_nodes == 1 and sol.optimal and sol.tree.prediction[0] == 1
    X, y = _xor_data()
    with pytest.raises(ValueError, match="no tree of depth <= 2 classifies"):
        sat_tree(X, y, max_depth=2)
    with pytest.raises(ValueError, match="sat_solver must be one of"):
        sat_tree(X, y, sat_solver="zchaff")
    with pytest.raises(ValueError, match="conflicts must be"):
        sat_tree(X, y, conflicts="drop")
    with pytest.raises(ValueError, match="0/1 features"):
        sat_tree(X * 2, y)


def test_adapter_is_registered_and_runs_through_the_api():
    from treeexplorer import solve
    from treeexplorer.registry import get_solver

    spec = get_solver("sat")
    assert spec.input == "binary" and spec.default_discretizer == "exact"
    assert {p.name for p in spec.params} == {
        "max_depth",
        "sat_solver",
        "minimize_size",
        "conflicts",
        "front",
        "memory_mb",
    }
    with pytest.raises(ValueError, match="conflicts"):
        spec.resolve({"conflicts": "drop"})
    import pandas as pd

    X, y = _xor_data(60, 4, seed=3)
    df = pd.DataFrame(X, columns=list("abcd")).assign(target=y)
    front = solve(df, "target", solver="sat", discretizer="none", front=False)
    assert len(front.trees) == 1 and front.trees[0].optimal
    assert front.trees[0].metrics["train_accuracy"] == 1.0


def test_depth_and_size_proofs_are_reported_apart():
    rng = np.random.default_rng(5)
    X = (rng.random((60, 6)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ X[:, 1] | X[:, 2]).astype(np.int64)
    front = sat_tree(X, y, 2)
    assert all(s.info["min_depth_proven"] and s.info["size_proven"] for s in front.solutions)
    stopped = Control()
    stopped.cancel()
    first = sat_tree(X, y, 2, control=stopped).solutions[0]  # stopped at once: the greedy fallback
    assert not first.optimal and not first.info["min_depth_proven"] and not first.info["size_proven"]


@pytest.mark.parametrize("m", [9, 12])
def test_the_exactly_one_encoding_over_many_tests_is_exact(m):
    """Clauses 1-2 over more than 8 tests (a sequential counter built with numpy): under every assignment of
    the node's test variables they are satisfiable exactly when one of them is true."""
    from pysat.solvers import Solver
    from treeexplorer.solvers._sat_encoding import PerfectTreeEncoding, SatRunner

    runner = SatRunner("glucose4", np.zeros(1, dtype=np.int64))
    try:
        enc = PerfectTreeEncoding(1, m - 1, 2, runner, False)  # one node over m tests (pass-through included)
        lits = enc.F[0].tolist()
        clauses = enc._exactly_one(np.asarray(lits))
        with Solver(name="glucose4", bootstrap_with=clauses) as s:
            for bits in range(2**m):
                assume = [v if bits >> i & 1 else -v for i, v in enumerate(lits)]
                assert s.solve(assumptions=assume) == (bin(bits).count("1") == 1), bits
    finally:
        runner.close()
