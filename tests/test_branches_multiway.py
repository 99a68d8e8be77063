"""BRANCHES with multiway splits on one-hot groups against an exhaustive oracle over multiway trees."""

from functools import cache

import numpy as np
import pytest
from treeexplorer.solvers.branches import branches_front, check_groups, fit_branches


def oracle(X, y, n_classes, lam, groups, max_depth=None, group_only=()):
    """Best ``correct/n - lam * splits`` over every tree of binary tests (but ``group_only``) and multiway
    group splits."""
    n = X.shape[0]
    cost = lam * n
    cols = [X[:, a].astype(bool) for a in range(X.shape[1])]

    @cache
    def best(rows: frozenset, depth: int) -> float:
        idx = np.fromiter(rows, dtype=np.int64)
        value = float(np.bincount(y[idx], minlength=n_classes).max())
        if max_depth is not None and depth >= max_depth:
            return value
        for a, col in enumerate(cols):
            if a in group_only:
                continue
            one = frozenset(int(i) for i in idx[col[idx]])
            if 0 < len(one) < len(rows):
                value = max(value, best(one, depth + 1) + best(rows - one, depth + 1) - cost)
        for g in groups:
            parts = [frozenset(int(i) for i in idx[cols[a][idx]]) for a in g]
            parts = [s for s in parts if s]
            if len(parts) >= 2:  # the kernel leaves two-way groups to the binary tests: same value
                value = max(value, sum(best(s, depth + 1) for s in parts) - cost)
        return value

    return best(frozenset(range(n)), 0) / n


def random_case(rng):
    n = int(rng.integers(15, 30))
    sizes = [int(rng.integers(3, 6)), int(rng.integers(3, 5))]
    blocks, groups, start = [], [], 0
    for k in sizes:
        cat = rng.integers(0, k, n)
        block = np.zeros((n, k), dtype=np.uint8)
        block[np.arange(n), cat] = 1
        keep = block.sum(axis=0) > 0  # the discretizer makes one test per category present
        block = block[:, keep]
        blocks.append(block)
        groups.append(list(range(start, start + block.shape[1])))
        start += block.shape[1]
    blocks.append(rng.integers(0, 2, (n, 2)).astype(np.uint8))
    X = np.hstack(blocks)
    n_classes = int(rng.integers(2, 4))
    y = rng.integers(0, n_classes, n)
    return X, y, n_classes, [g for g in groups if len(g) >= 3]


@pytest.mark.parametrize("seed", range(40))
def test_multiway_matches_exhaustive_oracle(seed):
    rng = np.random.default_rng(seed)
    X, y, n_classes, groups = random_case(rng)
    lam = float(rng.choice([0.005, 0.02, 0.05, 0.1]))
    depth = None if seed % 3 else 2
    sol = fit_branches(X, y, lam, max_depth=depth, n_classes=n_classes, groups=groups)
    assert sol.optimal
    assert sol.info["objective"] == pytest.approx(oracle(X, y, n_classes, lam, groups, depth), abs=1e-9)
    # the one-vs-rest tests stay available: multiway never makes the optimum worse
    flat = fit_branches(X, y, lam, max_depth=depth, n_classes=n_classes)
    assert flat.info["objective"] == pytest.approx(oracle(X, y, n_classes, lam, [], depth), abs=1e-9)
    # tests kept for multiway branches only (categories a discretizer left out, added back)
    # (all of the first group's but one, so two multiway-only categories can be all that is left)
    only = [a for a in groups[0] if a != groups[0][1]] + [g[0] for g in groups[1:]]
    part = fit_branches(X, y, lam, max_depth=depth, n_classes=n_classes, groups=groups, group_only=only)
    assert part.optimal
    assert part.info["objective"] == pytest.approx(
        oracle(X, y, n_classes, lam, groups, depth, group_only=set(only)), abs=1e-9
    )
    assert sol.info["objective"] >= flat.info["objective"] - 1e-9
    assert flat.tree.multi_offsets is None and flat.info["multiway_splits"] == 0
    # the returned tree really scores its objective, a multiway node counting as one split
    t = sol.tree
    leaves = t.feature < 0
    assert t.value[0].sum() == len(y)
    correct = t.value[leaves].max(axis=1).sum()
    assert sol.info["objective"] == pytest.approx(correct / len(y) - lam * t.n_splits)
    if t.multi_offsets is not None:
        for k in range(t.n_nodes):
            if t.is_multi(k):
                kids = t.multi_children[t.multi_offsets[k] : t.multi_offsets[k + 1]]
                assert len(kids) >= 3 and t.value[kids].sum() == t.value[k].sum()


def test_multiway_wins_when_every_category_matters():
    # class = category (4 categories): one multiway split (cost λ) against three binary splits (3λ)
    cat = np.repeat(np.arange(4), 10)
    X = np.eye(4, dtype=np.uint8)[cat]
    y = cat % 3
    multi = fit_branches(X, y, 0.05, groups=[[0, 1, 2, 3]])
    flat = fit_branches(X, y, 0.05)
    assert multi.info["splits"] == 1 and multi.info["multiway_splits"] == 1 and multi.info["accuracy"] == 1.0
    assert flat.info["splits"] == 2 and flat.info["accuracy"] == 1.0  # category 3 shares class 0 with 0
    assert multi.info["objective"] == pytest.approx(1.0 - 0.05)
    front = branches_front(X, y, 0.01, groups=[[0, 1, 2, 3]])
    assert all(s.optimal for s in front.solutions)


def test_two_categories_of_group_only_tests_still_split():
    # categories 0 and 2 are multiway-only; below "test 1 = 0" only they remain: a 2-way multiway split is
    # then the only way to separate them
    cat = np.array([0] * 6 + [1] * 6 + [2] * 6)
    X = np.eye(3, dtype=np.uint8)[cat]
    y = np.array([0] * 6 + [1] * 6 + [1] * 6)
    sol = fit_branches(X, y, 0.05, groups=[[0, 1, 2]], group_only=[0, 2])
    assert sol.info["accuracy"] == 1.0 and sol.info["splits"] == 1
    assert sol.info["objective"] == pytest.approx(oracle(X, y, 2, 0.05, [[0, 1, 2]], group_only={0, 2}))
    y2 = np.array([0] * 6 + [0] * 6 + [1] * 6)
    X2 = np.hstack([X, (np.arange(18) % 2 == 0).astype(np.uint8)[:, None]])  # a noise test for the binary side
    sol = fit_branches(X2, y2, 0.01, groups=[[0, 1, 2]], group_only=[0, 2])
    assert sol.info["objective"] == pytest.approx(oracle(X2, y2, 2, 0.01, [[0, 1, 2]], group_only={0, 2}))


@pytest.mark.parametrize("seed", [54, 126, 275, 297, 0, 1, 2, 3])
def test_two_multiway_only_categories_left_below_a_binary_split(seed):
    # f = 1 only on categories 0 and 2, both multiway-only: below f = 1 a two-way multiway split is the one
    # way to tell them apart (these seeds failed when two-category groups were always left to binary tests)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 18))
    cat = rng.integers(0, 3, n)
    f = ((cat != 1) & (rng.random(n) < 0.6)).astype(np.uint8)
    X = np.hstack([np.eye(3, dtype=np.uint8)[cat], f[:, None], rng.integers(0, 2, (n, 1)).astype(np.uint8)])
    y = rng.integers(0, 2, n)
    lam = float(rng.choice([0.01, 0.03, 0.06]))
    sol = fit_branches(X, y, lam, groups=[[0, 1, 2]], group_only=[0, 2])
    assert sol.info["objective"] == pytest.approx(oracle(X, y, 2, lam, [[0, 1, 2]], group_only={0, 2}), abs=1e-9)


def test_groups_are_checked():
    X = np.eye(4, dtype=np.uint8)[[0, 1, 2, 3, 0]]
    assert check_groups(X, None)[0].tolist() == [0]
    assert check_groups(X, [[0, 1]])[0].tolist() == [0]  # two tests: a binary test, ignored
    gstart, gtests, only = check_groups(X, [[0, 1, 2, 3]], [2])
    assert gstart.tolist() == [0, 4] and gtests.tolist() == [0, 1, 2, 3] and only.tolist() == [0, 0, 1, 0]
    with pytest.raises(ValueError, match="no multiway group"):
        check_groups(X, [[0, 1]], [0])
    with pytest.raises(ValueError, match="partition"):
        check_groups(X, [[0, 1, 2]])
    with pytest.raises(ValueError, match="distinct"):
        check_groups(X, [[0, 1, 2, 3], [0, 1, 2]])


def test_multiway_groups_found_and_completed():
    from treeexplorer.adapters.branches import multiway_groups
    from treeexplorer.schema import OP_EQ, OP_LE, Column, Condition, Schema

    schema = Schema(
        (Column("c", "categorical", ("a", "b", "c", "d")), Column("x", "numeric"), Column("z", "numeric")), "y", (0, 1)
    )
    enc = np.array([[0, 1, 0], [1, 5, 1], [2, 3, 0], [3, 1, 1], [0, 2, 0.0]])
    X = np.array([[1, 0, 0, 1, 0], [0, 1, 0, 0, 1], [0, 0, 1, 0, 0], [0, 0, 0, 1, 1], [1, 0, 0, 1, 0]], dtype=np.uint8)
    feats = [
        Condition(0, OP_EQ, 0.0),
        Condition(0, OP_EQ, 1.0),
        Condition(0, OP_EQ, 2.0),
        Condition(1, OP_LE, 3.0),
        Condition(2, OP_EQ, 1.0),
    ]
    # category d (code 3) was left out: a multiway-only test is appended for it
    X2, f2, groups, only = multiway_groups(feats, X, enc, schema)
    assert groups == [[0, 1, 2, 5]] and only == [5] and f2[5] == Condition(0, OP_EQ, 3.0)
    assert X2[:, 5].tolist() == [0, 0, 0, 1, 0] and X2.shape == (5, 6)
    # nothing is added when every category has its test; without the table, only complete groups count
    assert multiway_groups(feats, X, None, None)[2] == []
    full = np.hstack([X[:, :3], (enc[:, :1] == 3).astype(np.uint8)])
    assert multiway_groups(feats[:3] + [Condition(0, OP_EQ, 3.0)], full, enc, schema)[2:] == ([[0, 1, 2, 3]], [])
    assert multiway_groups(None, X)[2] == []


def test_api_completes_mid_groups():
    from pathlib import Path

    import treeexplorer as tx

    car = Path(__file__).resolve().parents[1] / "assets" / "car.csv"
    front = tx.solve(str(car), solver="branches", discretizer="mid", n_bins=4, lambdas="0.05,0.02,0.01", test_size=0)
    multi = [t for t in front if t.tree.has_multiway]
    assert multi and all(t.optimal for t in front)
    tree = multi[-1].tree
    k = next(int(k) for k in tree.reachable() if tree.is_multi(int(k)))
    cats = tree.schema.columns[tree.column[k]].categories
    assert len(tree.child_list(k)) >= 3 and {tree.edge_label(k, c) for c in tree.child_list(k)} <= set(cats)
    assert multi[-1].metrics["train_errors"] == tree.train_errors
    off = tx.solve(
        str(car), solver="branches", discretizer="mid", n_bins=4, lambdas="0.05,0.02,0.01", test_size=0, multiway=False
    )
    assert not any(t.tree.has_multiway for t in off)


def test_cli_car_gives_multiway_trees(tmp_path, capsys):
    import json
    from pathlib import Path

    import treeexplorer as tx
    from treeexplorer.cli import main
    from treeexplorer.schema import Schema

    car = Path(__file__).resolve().parents[1] / "assets" / "car.csv"
    common = [
        "solve",
        str(car),
        "--solver",
        "branches",
        "--discretizer",
        "none",
        "--sparsity",
        "0.01",
        "--no-front",
        "--test-size",
        "0",
        "--rules",
    ]
    fronts = {}
    for multiway in ("true", "false"):
        out = tmp_path / f"front_{multiway}.json"
        assert main([*common, "-P", f"multiway={multiway}", "--out", str(out)]) == 0
        fronts[multiway] = json.loads(out.read_text())
    text = capsys.readouterr().out
    (multi,), (flat,) = fronts["true"]["trees"], fronts["false"]["trees"]
    assert multi["optimal"] and flat["optimal"]
    objective = {k: t["train_accuracy"] - 0.01 * t["splits"] for k, t in (("multi", multi), ("flat", flat))}
    assert objective["multi"] > objective["flat"] + 1e-9
    assert multi["info"]["multiway_splits"] > 0 and flat["info"]["multiway_splits"] == 0
    assert "AND buying = low AND" in text  # a multiway branch reads "column = category"
    tree = tx.Tree.from_dict(multi["tree"], Schema.from_dict(fronts["true"]["schema"]))
    assert tree.has_multiway and tree.n_splits == multi["splits"]
    # every export of the multiway tree from the saved front
    src = str(tmp_path / "front_true.json")
    for fmt in ("rules", "json", "png", "svg"):
        dest = tmp_path / f"tree.{fmt}"
        assert main(["export", src, "--tree", "0", "--format", fmt, "-o", str(dest)]) == 0
        assert dest.stat().st_size > 0
    assert "buying = low AND" in (tmp_path / "tree.rules").read_text()
    back = tx.export.tree_from_json((tmp_path / "tree.json").read_text())
    assert back.structure_key() == tree.structure_key()
    assert (tmp_path / "tree.png").read_bytes()[:4] == b"\x89PNG"
    assert ">vhigh</text>" in (tmp_path / "tree.svg").read_text()


def test_stopped_multiway_search_returns_a_consistent_tree():
    from treeexplorer.solvers import Control

    rng = np.random.default_rng(3)
    n = 3000
    blocks, groups = [], []
    for _ in range(5):
        cat = rng.integers(0, 5, n)
        groups.append(list(range(5 * len(blocks), 5 * len(blocks) + 5)))
        blocks.append(np.eye(5, dtype=np.uint8)[cat])
    X = np.hstack(blocks)
    y = (X[:, 0] | X[:, 6] | (rng.random(n) < 0.3)).astype(np.int64)
    sol = fit_branches(X, y, 0.0001, groups=groups, control=Control(0.3), memory_mb=64)
    t = sol.tree
    correct = t.value[t.feature < 0].max(axis=1).sum()
    assert sol.info["objective"] == pytest.approx(correct / n - 0.0001 * t.n_splits)
    if not sol.optimal:
        assert sol.info["upper_bound"] >= sol.info["objective"] - 1e-9
