"""Tree metrics against hand-computed values, raw-tree translation, Front filtering and JSON round trips."""

import json

import numpy as np
import pytest
from treeexplorer.solvers import RawFront, RawSolution, RawTree

import treeexplorer as tx
from treeexplorer.export import front_csv, rules_lines, rules_text
from treeexplorer.front import pareto_mask
from treeexplorer.registry import Param, SolverSpec, register
from treeexplorer.schema import OP_EQ, OP_LE, Column, Condition, Schema

SCHEMA = Schema((Column("age", "numeric"), Column("colour", "categorical", ("blue", "red"))), "y", ("no", "yes"))
# age, colour code
X = np.array([[20, 1], [30, 0], [40, 1], [50, 0], [60, 1], [70, 0]], dtype=float)
Y = np.array([0, 0, 1, 1, 1, 0])


def hand_tree():
    """age <= 35 ? no : (colour = red ? yes : (age <= 55 ? yes : no))."""
    column = [0, -1, 1, -1, 0, -1, -1]
    op = [OP_LE, 0, OP_EQ, 0, OP_LE, 0, 0]
    value = [35.0, 0, 1.0, 0, 55.0, 0, 0]
    t = [1, -1, 3, -1, 5, -1, -1]
    f = [2, -1, 4, -1, 6, -1, -1]
    pred = [0, 0, 1, 1, 1, 1, 0]
    tree = tx.Tree(column, op, value, t, f, np.zeros((7, 2)), pred, SCHEMA)
    return tree.with_counts(X, Y)


def test_tree_metrics_match_hand_computation():
    tree = hand_tree()
    assert (tree.n_splits, tree.n_leaves, tree.depth) == (3, 4, 3)
    # rows reach leaves: 20,30 -> node1 (depth 1); 40,60 red -> node3 (depth 2); 50 -> node5, 70 -> node6 (depth 3)
    assert tree.apply(X).tolist() == [1, 1, 3, 5, 3, 6]
    assert tree.avg_tests == pytest.approx((1 + 1 + 2 + 3 + 2 + 3) / 6)
    assert tree.train_errors == 0
    ev = tree.evaluate(X, Y)
    assert ev == {"errors": 0, "accuracy": 1.0, "avg_tests": pytest.approx(2.0)}
    assert tree.counts[0].tolist() == [3, 3] and tree.counts[2].tolist() == [1, 3]
    assert tree.node_text(0) == "age ≤ 35"
    assert tree.node_text(2) == "colour = red"
    assert tree.node_text(2, negate=True) == "colour ≠ red"
    assert list(tree.predict(X[:3])) == ["no", "no", "yes"]


def test_rules_are_readable_and_cover_every_leaf():
    lines = rules_lines(hand_tree())
    assert lines[0] == "IF age <= 35 THEN no  [n=2, 100%]"
    assert "IF 35 < age <= 55 AND colour != red THEN yes  [n=1, 100%]" in lines  # age merged into a range
    assert len(lines) == 4


def test_from_raw_binary_test_sends_true_side_left():
    # Raw solver tree on a 0/1 matrix: feature 0 is "colour = red"; raw left is the 0 side (not red).
    raw = RawTree([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1], [[3, 3], [1, 2], [2, 1]], [1, 1, 0])
    tree = tx.Tree.from_raw(raw, [Condition(1, OP_EQ, 1.0)], SCHEMA)
    assert tree.node_text(0) == "colour = red"
    assert tree.true_child[0] == 2 and tree.false_child[0] == 1
    # red rows (codes 1) reach raw node 2 whose class is 0
    assert tree.predict_codes(X).tolist() == [0, 1, 0, 1, 0, 1]
    # numeric feature keeps direction and threshold
    raw2 = RawTree([0, -1, -1], [45.0, 0, 0], [1, -1, -1], [2, -1, -1], [[3, 3], [2, 1], [1, 2]])
    t2 = tx.Tree.from_raw(raw2, [0], SCHEMA)
    assert t2.node_text(0) == "age ≤ 45" and t2.predict_codes(X).tolist() == [0, 0, 0, 1, 1, 1]


def test_pareto_mask_keeps_non_dominated_points():
    x = [0, 1, 1, 2, 3, 3]
    y = [0.5, 0.7, 0.6, 0.7, 0.9, 0.9]
    assert pareto_mask(x, y).tolist() == [True, True, False, False, True, False]


@pytest.fixture
def toy_solver():
    """A registered solver returning three fixed stumps so the pipeline is tested without a real solver."""

    def run(X, y, n_classes, control, depth=1):
        counts = np.bincount(y, minlength=n_classes)
        sols = [RawSolution(RawTree.leaf(counts), True)]
        for thr in (2.45, 4.75):
            sols.append(
                RawSolution(
                    RawTree([2, -1, -1], [thr, 0, 0], [1, -1, -1], [2, -1, -1], np.zeros((3, n_classes)), [0, 0, 1]),
                    False,
                    {"thr": thr},
                )
            )
        sols.append(sols[1])  # duplicates are merged
        return RawFront(sols, "toy objective")

    register(SolverSpec("toy", "numeric", run, (Param("depth", "int", 1, "unused", (1, 3)),)))
    return "toy"


def test_solve_builds_front_with_recomputed_metrics(toy_solver):
    front = tx.solve("iris", solver=toy_solver, test_size=0.2, seed=0)
    assert len(front) == 3 and [t.id for t in front] == [0, 1, 2]
    assert front.objective == "toy objective" and front.discretizer == "raw"
    assert front.n_train == 120 and front.n_test == 30
    for t in front:
        ev = t.tree.evaluate(*_train(front))
        assert t.metrics["train_errors"] == ev["errors"]
    # the 2.45 stump separates setosa perfectly: errors = all virginica + versicolor predicted... recomputed
    assert front.trees[0].optimal and not front.trees[1].optimal
    assert front.pareto("splits", "train_accuracy")[0].metrics["splits"] == 0
    with pytest.raises(ValueError, match="does not use max_nodes"):
        tx.solve("iris", solver=toy_solver, max_nodes=3)
    with pytest.raises(ValueError, match=r"must be in \[1, 3\]"):
        tx.solve("iris", solver=toy_solver, depth=7)


def _train(front):
    prep = tx.prepare("iris", test_size=0.2, seed=0)
    return prep.X_train, prep.y_train


def test_front_json_round_trip_predicts_identically(toy_solver, tmp_path):
    front = tx.solve("iris", solver=toy_solver, test_size=0.2)
    path = tmp_path / "front.json"
    front.to_json(path)
    d = json.loads(path.read_text())
    for key in ("solver", "discretizer", "runtime_s", "n_train", "n_test", "trees"):
        assert key in d
    assert set(d["trees"][1]) >= {
        "id",
        "splits",
        "leaves",
        "depth",
        "avg_tests",
        "train_accuracy",
        "test_accuracy",
        "train_errors",
        "optimal",
        "rules",
    }
    back = tx.Front.from_json(path)
    data = tx.load_dataset("iris")
    for a, b in zip(front, back):
        assert np.array_equal(a.tree.predict_codes(data.X), b.tree.predict_codes(data.X))
        assert a.metrics == b.metrics
    tree = tx.tree_from_json(tx.tree_json(front[1].tree, front, front[1]))
    assert np.array_equal(tree.predict_codes(data.X), front[1].tree.predict_codes(data.X))
    text = rules_text(front[1].tree, front, front[1])
    assert text.startswith("# dataset: iris") and "solver: toy" in text
    assert front_csv(front).count("\n") == 1 + 3  # column names first, then 3 trees


def test_a_cost_front_keeps_the_cheapest_trees_not_the_most_accurate():
    """``drop_dominated`` judges trees by the score the run optimised: the cost is minimised, so a tree with
    fewer errors but a larger cost is dominated by a simpler cheaper one."""
    from treeexplorer.front import Front, FrontTree, non_dominated_mask
    from treeexplorer.tree import Tree

    def entry(i, splits, accuracy, cost):
        m = {"splits": splits, "leaves": splits + 1, "depth": splits, "avg_tests": float(splits)}
        m |= {"train_accuracy": accuracy, "train_cost": cost, "train_balanced_accuracy": accuracy}
        return FrontTree(i, Tree.__new__(Tree), False, m)

    trees = [entry(0, 1, 0.70, 5.0), entry(1, 2, 0.80, 9.0), entry(2, 2, 0.75, 4.0)]
    assert non_dominated_mask(trees).tolist() == [True, True, False]  # by accuracy
    assert non_dominated_mask(trees, "train_cost", larger_is_better=False).tolist() == [True, False, True]
    front = Front.__new__(Front)
    front.trees, front.dominated, front.weights = list(trees), [], {"score": "cost"}
    front.drop_dominated()
    assert [t.metrics["train_cost"] for t in front.trees] == [5.0, 4.0]
    assert [t.metrics["train_cost"] for t in front.dominated] == [9.0]
