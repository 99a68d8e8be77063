"""Rashomon sets (solvers.rashomon) against a brute-force enumeration of every canonical tree."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control, predict_raw
from treeexplorer.solvers.murtree import murtree
from treeexplorer.solvers.rashomon import rashomon
from weighted_oracle import canonical_trees


def brute(X, y, C, depth, min_leaf=1):
    """Every canonical tree of depth <= ``depth``: ``(errors, splits, key)``; ``key`` names shape and tests."""
    return canonical_trees(X, y, C, depth, min_leaf=min_leaf)


def key(tree, k=0):
    if tree.feature[k] < 0:
        return "L"
    return f"({tree.feature[k]} {key(tree, tree.left[k])} {key(tree, tree.right[k])})"


def depth_of(tree, k=0):
    if tree.feature[k] < 0:
        return 0
    return 1 + max(depth_of(tree, tree.left[k]), depth_of(tree, tree.right[k]))


def check_canonical(tree, X, y, C, min_leaf=1):
    """Counts are the training rows, every leaf holds rows and predicts its majority, no repeated test on a
    path, no internal node with one class in all its leaves."""
    leaves = {}

    def rec(k, rows, path):
        assert np.array_equal(tree.value[k], np.bincount(y[rows], minlength=C))
        f = tree.feature[k]
        if f < 0:
            assert len(rows) >= min_leaf or k == 0  # the single leaf is always a tree
            assert tree.prediction[k] == np.argmax(tree.value[k])
            return {int(tree.prediction[k])}
        assert f not in path
        a = rec(tree.left[k], rows[X[rows, f] == 0], path | {f})
        b = rec(tree.right[k], rows[X[rows, f] == 1], path | {f})
        assert len(a | b) >= 2, "an internal node whose leaves all predict one class"
        return a | b

    rec(0, np.arange(len(y)), frozenset())
    return leaves


@st.composite
def datasets(draw, max_features=5, max_rows=30):
    n_classes = draw(st.integers(2, 3))
    f = draw(st.integers(1, max_features))
    pool = draw(st.integers(1, 12))  # few distinct rows: duplicates and contradictory labels
    n = draw(st.integers(1, max_rows))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    P = rng.integers(0, 2, size=(pool, f), dtype=np.uint8)
    X = P[rng.integers(0, pool, size=n)]
    y = rng.integers(0, n_classes, size=n)
    return X, y, n_classes


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_against_brute(X, y, C, depth, K, k, min_leaf=1):
    everything = [t for t in brute(X, y, C, depth, min_leaf) if t[1] <= K]
    everything.sort(key=lambda t: (t[0], t[1]))
    res = rashomon(X, y, C, max_depth=depth, max_nodes=K, k=k, min_leaf_support=min_leaf)
    sols = res.solutions
    assert res.status == "done"
    assert len(sols) == min(k, len(everything))
    assert res.stats["complete"] == (k > len(everything) or len(sols) == len(everything) and k > len(sols))
    got = [(s.info["errors"], s.info["splits"]) for s in sols]
    assert got == [(e, s) for e, s, _ in everything[: len(sols)]]  # the k smallest, in order
    keys = [key(s.tree) for s in sols]
    assert len(set(keys)) == len(keys)  # distinct
    brute_keys = {kk: (e, s) for e, s, kk in everything}
    last = got[-1] if got else None
    for s, kk in zip(sols, keys):
        tree = s.tree
        assert brute_keys[kk] == (s.info["errors"], s.info["splits"])  # a canonical tree with that cost
        assert int((predict_raw(tree, X) != y).sum()) == s.info["errors"]  # its true errors
        assert tree.n_splits == s.info["splits"] <= K and depth_of(tree) <= depth
        check_canonical(tree, X, y, C, min_leaf)
    # every tree strictly better than the last one reported is in the set
    assert {kk for e, s, kk in everything if (e, s) < last} <= set(keys) if last else True
    return res, everything


@SETTINGS
@given(data=datasets(), depth=st.integers(0, 2), k=st.integers(1, 60))
def test_k_best_match_brute_force_depth_2(data, depth, k):
    X, y, C = data
    _check_against_brute(X, y, C, depth, (1 << depth) - 1, k)


@SETTINGS
@given(data=datasets(max_features=4, max_rows=16), K=st.integers(0, 7), k=st.integers(1, 400))
def test_k_best_match_brute_force_depth_3_every_budget(data, K, k):
    X, y, C = data
    _check_against_brute(X, y, C, 3, K, k)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_features=5, max_rows=25), depth=st.integers(1, 3), min_leaf=st.integers(2, 4))
def test_min_leaf_support_against_brute_force(data, depth, min_leaf):
    X, y, C = data
    _check_against_brute(X, y, C, depth, (1 << depth) - 1, 10_000, min_leaf)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(max_features=6, max_rows=40), depth=st.integers(0, 3))
def test_whole_set_is_every_canonical_tree(data, depth):
    X, y, C = data
    res, everything = _check_against_brute(X, y, C, depth, (1 << depth) - 1, 10**6)
    assert res.stats["complete"]
    assert sorted(key(s.tree) for s in res.solutions) == sorted(kk for _, _, kk in everything)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=datasets(max_features=5, max_rows=30), depth=st.integers(3, 4), K=st.integers(1, 15), back=st.integers(0, 6)
)
def test_bounded_enumeration_near_the_end_of_the_set(data, depth, K, back):
    """MurTree's bounds prune subproblems (depth >= 3): a bound that is too high loses trees, which shows when
    ``k`` is close to the number of trees (every tree must come out) as well as for the first few."""
    X, y, C = data
    X = X[:, :3] if depth == 4 else X  # the brute force's depth-4 trees over 4 tests number 10**5
    K = min(K, (1 << depth) - 1)
    total = sum(1 for t in brute(X, y, C, depth) if t[1] <= K)
    for k in {1, 2, max(1, total - back), total, total + 1}:
        _check_against_brute(X, y, C, depth, K, k)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=datasets(max_features=5, max_rows=30), depth=st.integers(2, 4), gap=st.integers(0, 6), k=st.integers(1, 10**4)
)
def test_epsilon_bound_against_brute_force(data, depth, gap, k):
    """``max_gap`` (the epsilon bound) with the pruning: exactly the trees within ``optimum + gap``, in order."""
    X, y, C = data
    X = X[:, :3] if depth == 4 else X
    everything = sorted(((e, s) for e, s, _ in brute(X, y, C, depth)))
    bound = everything[0][0] + gap
    res = rashomon(X, y, C, max_depth=depth, k=k, max_gap=gap)
    within = [t for t in everything if t[0] <= bound]
    assert [(s.info["errors"], s.info["splits"]) for s in res.solutions] == within[:k]
    assert res.stats["complete"] == (k > len(within))
    assert len({key(s.tree) for s in res.solutions}) == len(res.solutions)


@SETTINGS
@given(data=datasets(max_features=8, max_rows=40), depth=st.integers(1, 4))
def test_first_tree_is_murtrees_optimum_for_every_budget(data, depth):
    X, y, C = data
    for K in range(1 << depth):
        first = rashomon(X, y, C, max_depth=depth, max_nodes=K, k=1).solutions[0]
        opt = murtree(X, y, C, max_depth=depth, max_nodes=K, front=False).solutions[-1]
        assert (first.info["errors"], first.info["splits"]) == (opt.info["errors"], opt.info["splits"])
        assert first.optimal


@SETTINGS
@given(data=datasets(max_features=6, max_rows=40), depth=st.integers(1, 3), extra=st.integers(0, 5))
def test_max_errors_is_the_rashomon_bound(data, depth, extra):
    X, y, C = data
    full = rashomon(X, y, C, max_depth=depth, k=10**6)
    bound = full.solutions[0].info["errors"] + extra
    within = rashomon(X, y, C, max_depth=depth, k=10**6, max_errors=bound)
    assert [key(s.tree) for s in within.solutions] == [key(s.tree) for s in full.solutions if s.info["errors"] <= bound]
    assert within.stats["complete"]


def _data(n=800, f=30, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, f), dtype=np.uint8)
    y = (X[:, 0] ^ X[:, 1] | (rng.random(n) < 0.2)).astype(np.int64)
    return X, y


def test_stopped_run_is_a_prefix_of_the_full_order():
    X, y = _data()
    full = rashomon(X, y, max_depth=3, k=3000)
    keys = [key(s.tree) for s in full.solutions]
    seen = []

    def progress(info):
        if "errors" in info:
            seen.append(info["trees"])
            if info["trees"] >= 100:
                ctl.cancel()

    ctl = Control(progress=progress, poll_interval=10)
    part = rashomon(X, y, max_depth=3, k=3000, control=ctl)
    assert part.status == "cancelled" and 100 <= len(part.solutions) < 3000
    assert [key(s.tree) for s in part.solutions] == keys[: len(part.solutions)]
    full4 = [key(s.tree) for s in rashomon(X, y, max_depth=4, k=2000).solutions]
    for limit in (0.001, 0.05, 0.3):
        ctl = Control(time_limit=limit)
        with ctl:
            part = rashomon(X, y, max_depth=4, k=2000, control=ctl)
        assert part.status in ("time_limit", "done")
        assert [key(s.tree) for s in part.solutions] == full4[: len(part.solutions)]


def test_pool_growth_does_not_change_the_order(monkeypatch):
    import treeexplorer.solvers.rashomon as mod

    X, y = _data(n=300, f=12, seed=5)
    full = rashomon(X, y, max_depth=3, k=2000)
    real = mod._pool_sizes
    monkeypatch.setattr(mod, "_pool_sizes", lambda *a: {name: 8 for name in real(*a)})
    small = rashomon(X, y, max_depth=3, k=2000)
    assert small.stats["restarts"] > 0
    assert [key(s.tree) for s in small.solutions] == [key(s.tree) for s in full.solutions]
    assert [s.info["errors"] for s in small.solutions] == [s.info["errors"] for s in full.solutions]


def test_memory_cap_keeps_a_prefix(monkeypatch):
    import treeexplorer.solvers.rashomon as mod

    X, y = _data(n=400, f=20, seed=6)
    real = mod._pool_sizes
    monkeypatch.setattr(mod, "_pool_sizes", lambda *a: {name: 64 for name in real(*a)})
    full = rashomon(X, y, max_depth=3, k=5000)
    capped = rashomon(X, y, max_depth=3, k=5000, max_bytes=full.stats["memory_bytes"] // 2)
    assert capped.stats["stopped_by"] == "memory" and not capped.stats["complete"]
    assert capped.stats["memory_bytes"] > full.stats["memory_bytes"] // 2  # the growth it refused
    assert [key(s.tree) for s in capped.solutions] == [key(s.tree) for s in full.solutions][: len(capped.solutions)]


def test_bad_input_messages():
    X = np.zeros((4, 2), dtype=np.uint8)
    y = np.array([0, 1, 0, 1])
    for kw, word in (({"k": 0}, "k must"), ({"max_depth": 11}, "max_depth"), ({"max_errors": -1}, "max_errors")):
        with pytest.raises(ValueError, match=word):
            rashomon(X, y, **kw)
    with pytest.raises(ValueError, match="0/1"):
        rashomon(np.full((4, 2), 2), y)


# ------------------------------------------------------------------- BRANCHES' objective: errors / n + λ·splits
# decimals as typed (the ranking recovers them exactly) and dyadic fractions
LAMBDAS = st.sampled_from([0.0, 0.001, 0.01, 0.02, 0.05, 0.1, 0.3, 0.015625, 0.25, 1.0])


def _objective(e, s, n, lam):
    """The exact objective of the λ the user typed (``repr`` of the float: 0.01 is 1/100)."""
    return Fraction(e, n) + Fraction(repr(lam)) * s


def _check_branches_against_brute(X, y, C, depth, K, k, lam, gap=None):
    n = len(y)
    everything = [(_objective(e, s, n, lam), s, e, kk) for e, s, kk in brute(X, y, C, depth) if s <= K]
    everything.sort(key=lambda t: (t[0], t[1]))  # ties: fewer splits first
    if gap is not None:
        everything = [t for t in everything if t[0] <= everything[0][0] + Fraction(repr(gap))]
    kw = {} if gap is None else {"max_objective_gap": gap}
    res = rashomon(X, y, C, max_depth=depth, max_nodes=K, k=k, objective="branches", sparsity=lam, **kw)
    sols = res.solutions
    assert res.status == "done" and res.objective == "error rate + lambda * splits"
    assert Fraction(*res.stats["lambda"]) == Fraction(repr(lam))  # ranked by the λ typed, exactly
    assert len(sols) == min(k, len(everything))
    # the k smallest objectives of the brute force, in order (equal objective and splits: equal errors)
    got = [(_objective(s.info["errors"], s.info["splits"], n, lam), s.info["splits"], s.info["errors"]) for s in sols]
    assert got == [t[:3] for t in everything[: len(sols)]]
    values = [s.info["objective"] for s in sols]
    assert values == sorted(values)  # non-decreasing as reported
    keys = [key(s.tree) for s in sols]
    assert len(set(keys)) == len(keys)
    brute_keys = {t[3]: t[:3] for t in everything}
    best = everything[0][0] if everything else None
    for s, kk, (obj, splits, errors) in zip(sols, keys, got):
        assert brute_keys[kk] == (obj, splits, errors)  # a canonical tree with that cost
        assert int((predict_raw(s.tree, X) != y).sum()) == errors and s.tree.n_splits == splits
        assert s.info["objective"] == float(obj)  # the float nearest the tree's exact objective ...
        assert abs(s.info["objective"] - (errors / n + lam * splits)) <= 1e-12  # ... its value in floats
        assert s.optimal == (obj == best)
    return res, everything


@SETTINGS
@given(data=datasets(), depth=st.integers(0, 2), k=st.integers(1, 60), lam=LAMBDAS)
def test_branches_objective_k_best_match_brute_force_depth_2(data, depth, k, lam):
    X, y, C = data
    _check_branches_against_brute(X, y, C, depth, (1 << depth) - 1, k, lam)


@SETTINGS
@given(data=datasets(max_features=4, max_rows=16), K=st.integers(0, 7), k=st.integers(1, 400), lam=LAMBDAS)
def test_branches_objective_k_best_match_brute_force_depth_3_every_budget(data, K, k, lam):
    X, y, C = data
    _check_branches_against_brute(X, y, C, 3, K, k, lam)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=datasets(max_features=5, max_rows=30),
    depth=st.integers(2, 3),
    gap=st.sampled_from([0, 0.01, 0.05, 0.1, 0.3]),
    k=st.integers(1, 10**4),
    lam=LAMBDAS,
)
def test_branches_objective_epsilon_against_brute_force(data, depth, gap, k, lam):
    """``max_objective_gap``: exactly the trees whose objective is within the optimum's plus the gap, in order."""
    X, y, C = data
    res, within = _check_branches_against_brute(X, y, C, depth, (1 << depth) - 1, k, lam, gap)
    assert res.stats["complete"] == (k > len(within))


@SETTINGS
@given(data=datasets(max_features=8, max_rows=40), depth=st.integers(1, 4), lam=LAMBDAS)
def test_branches_objective_first_tree_is_the_best_of_murtrees_front(data, depth, lam):
    """The first tree's objective is ``min over s`` of MurTree's optimum errors at ``s`` splits over n, plus λ·s."""
    X, y, C = data
    n = len(y)
    front = murtree(X, y, C, max_depth=depth).solutions
    best = min(_objective(s.info["errors"], s.info["splits"], n, lam) for s in front)
    first = rashomon(X, y, C, max_depth=depth, k=1, objective="branches", sparsity=lam).solutions[0]
    assert _objective(first.info["errors"], first.info["splits"], n, lam) == best and first.optimal


def test_branches_objective_stopped_run_is_a_prefix_and_errors_objective_unchanged():
    X, y = _data()
    kw = {"objective": "branches", "sparsity": 0.004}
    full = rashomon(X, y, max_depth=3, k=3000, **kw)
    keys = [key(s.tree) for s in full.solutions]
    assert [s.info["objective"] for s in full.solutions] == sorted(s.info["objective"] for s in full.solutions)
    # the penalised order is not the errors order (else this checks nothing new)
    errs = rashomon(X, y, max_depth=3, k=3000)
    assert keys != [key(s.tree) for s in errs.solutions] and "objective" not in errs.solutions[0].info

    def progress(info):
        if "errors" in info and info["trees"] >= 100:
            ctl.cancel()

    ctl = Control(progress=progress, poll_interval=10)
    part = rashomon(X, y, max_depth=3, k=3000, control=ctl, **kw)
    assert part.status == "cancelled" and 100 <= len(part.solutions) < 3000
    assert [key(s.tree) for s in part.solutions] == keys[: len(part.solutions)]
    full4 = [key(s.tree) for s in rashomon(X, y, max_depth=4, k=2000, **kw).solutions]
    for limit in (0.001, 0.05, 0.3):
        ctl = Control(time_limit=limit)
        with ctl:
            part = rashomon(X, y, max_depth=4, k=2000, control=ctl, **kw)
        assert part.status in ("time_limit", "done")
        assert [key(s.tree) for s in part.solutions] == full4[: len(part.solutions)]


def test_branches_objective_bad_input_messages():
    X = np.zeros((4, 2), dtype=np.uint8)
    y = np.array([0, 1, 0, 1])
    for kw, word in (
        ({"objective": "gini"}, "objective must be one of errors, branches"),
        ({"objective": "branches"}, "needs sparsity"),
        ({"objective": "branches", "sparsity": 2}, "sparsity must be in"),
        ({"objective": "branches", "sparsity": 0.1, "max_gap": 1}, "max_objective_gap"),
        ({"sparsity": 0.1}, "go with objective='branches'"),
        ({"objective": "branches", "sparsity": 0.1, "max_objective_gap": -1}, "max_objective_gap must"),
    ):
        with pytest.raises(ValueError, match=word):
            rashomon(X, y, **kw)


# --------------------------------------------------------------------------------------- API, analysis, CLI
def _table(tmp_path, n=120, seed=11):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 6), dtype=np.uint8)
    y = ((X[:, 1] | X[:, 4]) ^ (rng.random(n) < 0.15)).astype(np.int64)
    path = tmp_path / "bin.csv"
    lines = [",".join([f"t{j}" for j in range(6)] + ["label"])]
    lines += [",".join(map(str, [*row, int(lab)])) for row, lab in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    return path, X, y


def test_api_front_in_order_with_views_json_and_analysis(tmp_path):
    import treeexplorer as tx
    from treeexplorer.front import Front
    from treeexplorer.rashomon import best_with, best_without, feature_sets, feature_shares, filter_set, set_table

    path, X, y = _table(tmp_path)
    front = tx.rashomon(str(path), "label", discretizer="none", max_depth=2, k=30)
    raw = rashomon(X, y, max_depth=2, k=30)
    assert [t.id for t in front.trees] == list(range(len(front.trees))) == list(range(30))
    assert [t.info["errors"] for t in front.trees] == [s.info["errors"] for s in raw.solutions]
    assert [t.metrics["train_errors"] for t in front.trees] == [t.info["errors"] for t in front.trees]
    assert [key_tx(t.tree) for t in front.trees] == [key(s.tree) for s in raw.solutions]
    assert front.trees[0].optimal and front.trees[0].info["gap"] == 0
    assert front.solver == "murtree" and front.stats["rashomon"]["k"] == 30
    back = Front.from_dict(json.loads(front.to_json()))
    assert [t.info["errors"] for t in back.trees] == [t.info["errors"] for t in front.trees]
    # analysis against direct counts
    shares = {s["feature"]: s for s in feature_shares(front)}
    for name, s in shares.items():
        j = int(name[1:])
        uses = [j in set(t.tree.column[t.tree.column >= 0].tolist()) for t in front.trees]
        assert s["trees"] == sum(uses) and s["share"] == sum(uses) / 30
        assert s["root_trees"] == sum(int(t.tree.column[0]) == j for t in front.trees)
    groups = feature_sets(front)
    assert sum(g["trees"] for g in groups) == 30
    assert [g["best_errors"] for g in groups] == sorted(g["best_errors"] for g in groups)
    opt = front.trees[0].info["errors"]
    for name in shares:
        w, wo = best_with(front, name), best_without(front, name)
        keep = filter_set(front, exclude=[name])
        assert (wo["tree"] is None) == (not keep)
        if keep:
            assert wo["tree"] is keep[0] and wo["cost"] == keep[0].info["errors"] - opt
        assert w["tree"] is filter_set(front, require=[name])[0]
    with pytest.raises(ValueError, match="no column"):
        best_without(front, "nope")
    assert [r["rank"] for r in set_table(front)] == list(range(30))


def key_tx(tree, k=0):
    """:func:`key` of a :class:`treeexplorer.Tree` over 0/1 columns (false child = test 0)."""
    if tree.column[k] < 0:
        return "L"
    return f"({tree.column[k]} {key_tx(tree, tree.false_child[k])} {key_tx(tree, tree.true_child[k])})"


def test_api_epsilon_and_errors(tmp_path):
    import treeexplorer as tx

    path, X, y = _table(tmp_path)
    eps = 0.05
    front = tx.rashomon(str(path), "label", discretizer="none", max_depth=2, k=10**5, epsilon=eps)
    full = rashomon(X, y, max_depth=2, k=10**5)
    bound = full.solutions[0].info["errors"] + int(eps * len(y))
    assert len(front.trees) == sum(s.info["errors"] <= bound for s in full.solutions)
    assert front.stats["rashomon"]["complete"]
    for kw, word in (({"solver": "cart"}, "murtree"), ({"k": 0}, "k must"), ({"epsilon": -1}, "epsilon")):
        with pytest.raises(ValueError, match=word):
            tx.rashomon(str(path), "label", **kw)


def test_cli_rashomon_json_and_csv(tmp_path, capsys):
    import csv
    import json

    from treeexplorer.cli import main

    path, X, y = _table(tmp_path)
    out, table = tmp_path / "set.json", tmp_path / "set.csv"
    args = ["rashomon", str(path), "--target", "label", "--discretizer", "none", "--max-depth", "3", "--splits", "3"]
    assert main([*args, "-k", "25", "--out", str(out), "--csv", str(table)]) == 0
    text = capsys.readouterr().out
    assert "columns used" in text
    trees = json.loads(out.read_text())["trees"]
    rows = list(csv.DictReader(table.open()))
    raw = rashomon(X, y, max_depth=3, max_nodes=3, k=25)
    assert [int(r["errors"]) for r in rows] == [s.info["errors"] for s in raw.solutions]
    assert [int(r["splits"]) for r in rows] == [s.info["splits"] for s in raw.solutions]
    assert len(trees) == 25 and all(int(r["splits"]) <= 3 for r in rows)
    for r, s in zip(rows, raw.solutions):
        used = {f"t{int(c)}" for c in s.tree.feature if c >= 0}
        assert set(filter(None, r["features"].split(";"))) == used
    assert main([*args, "-k", "0"]) == 2
    assert "k must" in capsys.readouterr().err


def test_a_stop_while_assembling_keeps_the_best_trees_of_the_order(tmp_path):
    # a Front samples a stopped assembly spread over its sizes; a Rashomon set keeps a prefix of its order
    import treeexplorer as tx
    from treeexplorer.assemble import _RANKED_KEEP

    # rows for several chunks of the held-out count (a stop between); the training rows are not counted again
    # (the engine's counts, checked on a sample: treeexplorer.assemble._engine_counts_hold)
    path, X, y = _table(tmp_path, n=8_000, seed=5)
    held = {"test_size": 0.4, "seed": 0}
    whole = tx.rashomon(str(path), "label", discretizer="none", max_depth=3, k=2_000, **held)
    assert len(whole.trees) > _RANKED_KEEP  # every canonical tree of depth <= 3 over the 6 tests: a few hundred

    def cancel_when_assembling(report):
        if report["phase"] == "assembling":
            control.cancel()

    control = Control(progress=cancel_when_assembling)
    cut = tx.rashomon(str(path), "label", discretizer="none", max_depth=3, k=2_000, control=control, **held)
    assert cut.status == "cancelled" and len(cut.trees) == _RANKED_KEEP
    assert [key_tx(t.tree) for t in cut.trees] == [key_tx(t.tree) for t in whole.trees[:_RANKED_KEEP]]
    assert [t.metrics["train_errors"] for t in cut.trees] == [t.info["errors"] for t in cut.trees]
    assert any("the first of the order" in n for n in cut.notices)


def test_api_and_cli_branches_objective(tmp_path, capsys):
    import csv

    import treeexplorer as tx
    from treeexplorer.cli import main
    from treeexplorer.front import Front
    from treeexplorer.rashomon import best_without, filter_set, set_table

    path, X, y = _table(tmp_path)
    n, lam = len(y), 0.02
    front = tx.rashomon(str(path), "label", discretizer="none", max_depth=3, k=40, objective="branches", sparsity=lam)
    raw = rashomon(X, y, max_depth=3, k=40, objective="branches", sparsity=lam)
    assert [key_tx(t.tree) for t in front.trees] == [key(s.tree) for s in raw.solutions]
    values = [t.info["objective"] for t in front.trees]
    assert values == [s.info["objective"] for s in raw.solutions] == sorted(values)
    exact = [_objective(t.info["errors"], t.info["splits"], n, lam) for t in front.trees]
    assert [t.info["gap"] for t in front.trees] == [float(v - exact[0]) for v in exact]
    assert [t.optimal for t in front.trees] == [v == exact[0] for v in exact]
    assert front.objective == "error rate + 0.02 x splits; Rashomon set, the best trees in order"
    info = front.stats["rashomon"]
    assert (info["objective"], info["sparsity"], info["optimum"]) == ("branches", lam, values[0])
    back = Front.from_dict(json.loads(front.to_json()))
    assert [t.info["objective"] for t in back.trees] == values
    assert [r["objective"] for r in set_table(front)] == values
    # the best tree without a column costs its gap in the objective (or is past the set's last objective)
    for name in (c.name for c in front.schema.columns):
        wo = best_without(front, name)
        keep = filter_set(front, exclude=[name])
        if keep:
            assert wo["tree"] is keep[0] and wo["cost"] == keep[0].info["gap"]
        else:
            assert wo["tree"] is None and wo["at_least"] == values[-1]
    # epsilon is in the objective: exactly the trees within the optimum's objective + epsilon
    eps = 0.03
    within = tx.rashomon(
        str(path), "label", discretizer="none", max_depth=2, k=10**5, objective="branches", sparsity=lam, epsilon=eps
    )
    every = rashomon(X, y, max_depth=2, k=10**5, objective="branches", sparsity=lam).solutions
    best = _objective(every[0].info["errors"], every[0].info["splits"], n, lam)
    bound = best + Fraction(repr(eps))
    assert len(within.trees) == sum(_objective(s.info["errors"], s.info["splits"], n, lam) <= bound for s in every)
    assert within.stats["rashomon"]["complete"]
    for kw, word in (
        ({"objective": "branches"}, "needs sparsity"),
        ({"sparsity": 0.01}, "goes with objective='branches'"),
        ({"objective": "gini", "sparsity": 0.01}, "objective must be"),
        ({"objective": "branches", "sparsity": 1.5}, "sparsity"),
    ):
        with pytest.raises(ValueError, match=word):
            tx.rashomon(str(path), "label", **kw)
    # CLI: --objective branches --sparsity, the objective per tree in the CSV
    table = tmp_path / "set.csv"
    args = ["rashomon", str(path), "--target", "label", "--discretizer", "none", "--max-depth", "3", "-k", "40"]
    assert main([*args, "--objective", "branches", "--sparsity", "0.02", "--csv", str(table)]) == 0
    assert "ranked by error rate + 0.02 x splits" in capsys.readouterr().out
    rows = list(csv.DictReader(table.open()))
    assert [float(r["objective"]) for r in rows] == values
    assert [(int(r["errors"]), int(r["splits"])) for r in rows] == [
        (s.info["errors"], s.info["splits"]) for s in raw.solutions
    ]
    assert main([*args, "--objective", "branches"]) == 2
    assert "needs sparsity" in capsys.readouterr().err
