"""Multiway nodes of the shared Tree model: prediction, fallback, metrics, JSON, rules and raw translation."""

import json

import numpy as np
import pytest
from treeexplorer.solvers import RawTree

import treeexplorer as tx
from treeexplorer.export import rules_lines, tree_from_json, tree_json
from treeexplorer.schema import OP_EQ, OP_LE, OP_MULTI, Column, Condition, Schema

SCHEMA = Schema(
    (Column("age", "numeric"), Column("colour", "categorical", ("blue", "green", "red", "pink"))), "y", ("no", "yes")
)
# age, colour code (pink = 3 never appears in training)
X = np.array([[20, 0], [30, 1], [40, 2], [50, 0], [60, 1], [70, 2], [25, 2]], dtype=float)
Y = np.array([0, 1, 1, 0, 0, 1, 1])


def multi_tree():
    """colour ∈ {blue: no, green: (age <= 45 ? yes : no), red: yes}; fallback = red (3 training rows)."""
    column = [1, -1, 0, -1, -1, -1]
    op = [OP_MULTI, 0, OP_LE, 0, 0, 0]
    value = [0, 0, 45.0, 0, 0, 0]
    t = [-1, -1, 3, -1, -1, -1]
    f = [5, -1, 4, -1, -1, -1]
    pred = [1, 0, 1, 1, 0, 1]
    tree = tx.Tree(
        column,
        op,
        value,
        t,
        f,
        np.zeros((6, 2)),
        pred,
        SCHEMA,
        child_offsets=[0, 3, 3, 3, 3, 3, 3],
        children=[1, 2, 5],
        child_values=[0, 1, 2],
    )
    return tree.with_counts(X, Y)


def test_multiway_metrics_count_one_split_and_one_test():
    tree = multi_tree()
    assert tree.has_multiway and tree.is_multi(0) and not tree.is_multi(2)
    assert (tree.n_splits, tree.n_leaves, tree.depth) == (2, 4, 2)
    assert tree.apply(X).tolist() == [1, 3, 5, 1, 4, 5, 5]
    assert tree.train_errors == 0
    # blue and red rows pass one test, green rows two
    assert tree.avg_tests == pytest.approx((1 + 2 + 1 + 1 + 2 + 1 + 1) / 7)
    assert tree.evaluate(X, Y)["avg_tests"] == pytest.approx(tree.avg_tests)
    assert tree.node_depth[[1, 2, 3, 5]].tolist() == [1, 1, 2, 1]
    assert tree.child_list(0) == [1, 2, 5]
    assert tree.edge_text(0, 5) == "colour = red"
    assert tree.node_text(0) == "colour"
    with pytest.raises(ValueError):
        tree.condition(0)


def test_unseen_category_follows_fallback_child():
    tree = multi_tree()
    assert tree.false_child[0] == 5  # red: the child with most training rows
    assert tree.apply(np.array([[30.0, 3.0]])).tolist() == [5]
    assert list(tree.predict(np.array([[30.0, 3.0]]))) == ["yes"]


def test_multiway_json_round_trip_and_structure_key():
    tree = multi_tree()
    back = tree_from_json(tree_json(tree))
    assert back.structure_key() == tree.structure_key()
    assert back.to_dict() == tree.to_dict()
    assert back.apply(X).tolist() == tree.apply(X).tolist()
    node = json.loads(tree_json(tree))["nodes"][0]
    assert node["multiway"]["fallback"] == 5 and node["branches"] == ["colour = blue", "colour = green", "colour = red"]
    assert "true" not in node and "test" not in node
    # the same partition with another fallback is another tree
    other = tx.Tree(
        tree.column,
        tree.op,
        tree.value,
        tree.true_child,
        np.where(np.arange(6) == 0, 1, tree.false_child),
        tree.counts,
        tree.prediction,
        SCHEMA,
        *tree._csr(),
    )
    assert other.structure_key() != tree.structure_key()


def test_binary_json_unchanged_has_no_multiway_fields():
    raw = RawTree([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1], [[3, 3], [1, 2], [2, 1]], [1, 1, 0])
    tree = tx.Tree.from_raw(raw, [Condition(1, OP_EQ, 1.0)], SCHEMA)
    d = tree.to_dict(with_schema=False)
    assert set(d["nodes"][0]) == {
        "id",
        "counts",
        "prediction",
        "prediction_code",
        "test",
        "text",
        "feature",
        "true",
        "false",
        "missing",  # the child a missing value goes to, and why (every binary node has one)
        "missing_rule",
    }
    assert not tree.has_multiway and tree.n_leaves == 2


def test_rules_read_each_multiway_branch():
    lines = rules_lines(multi_tree())
    assert lines[0] == "IF colour = blue THEN no  [n=2, 100%]"
    assert "IF colour = green AND age <= 45 THEN yes  [n=1, 100%]" in lines
    assert "IF colour = red THEN yes  [n=3, 100%]" in lines
    assert len(lines) == 4


def test_from_raw_multiway_node():
    # one-hot tests: 0 = colour red, 1 = colour blue, 2 = colour green; the root splits on all three
    feats = [Condition(1, OP_EQ, 2.0), Condition(1, OP_EQ, 0.0), Condition(1, OP_EQ, 1.0)]
    raw = RawTree(
        [0, -1, -1, -1],
        [0.5, 0, 0, 0],
        [-1] * 4,
        [-1] * 4,
        [[3, 4], [0, 3], [2, 0], [1, 1]],
        multi_offsets=[0, 3, 3, 3, 3],
        multi_children=[1, 2, 3],
        multi_tests=[0, 1, 2],
    )
    assert raw.n_splits == 1 and raw.is_multi(0)
    tree = tx.Tree.from_raw(raw, feats, SCHEMA).with_counts(X, Y)
    assert tree.child_list(0) == [2, 3, 1]  # blue, green, red
    assert tree.false_child[0] == 1  # red had most rows (3)
    assert tree.apply(X).tolist() == [2, 3, 1, 2, 3, 1, 1]
    assert tree.n_splits == 1 and tree.n_leaves == 3
