"""Diagnostics of a chosen tree: confusion matrix, per-class precision/recall, feature importance (and the
app's view of them), checked against direct computations on the rows."""

from __future__ import annotations

import numpy as np
import pytest

import treeexplorer as tx
from treeexplorer.api import prepare
from treeexplorer.diagnostics import class_report, confusion_matrix, feature_importance


@pytest.fixture(scope="module")
def iris():
    prep = prepare("iris", test_size=0.25, seed=0)
    front = tx.solve("iris", solver="cart", max_depth=3, test_size=0.25, seed=0)
    return prep, front


def test_confusion_matrix_counts_every_row_by_true_and_predicted_class(iris):
    prep, front = iris
    for entry in front:
        tree = entry.tree
        for X, y, errors_key in ((prep.X_train, prep.y_train, "train_errors"), (prep.X_test, prep.y_test, None)):
            m = confusion_matrix(tree, X, y)
            pred = tree.predict_codes(X)
            naive = np.zeros_like(m)
            for t, p in zip(y, pred):
                naive[t, p] += 1
            assert (m == naive).all() and m.sum() == len(y)
            if errors_key:
                assert m.sum() - np.trace(m) == entry.metrics[errors_key]
            else:
                assert np.trace(m) / len(y) == pytest.approx(entry.metrics["test_accuracy"])


def test_class_report_by_hand_and_undefined_ratios():
    m = np.array([[5, 1, 0], [2, 3, 0], [0, 0, 0]])  # class 2: no rows and never predicted
    rows = class_report(m, ["a", "b", "c"])
    assert rows[0]["precision"] == pytest.approx(5 / 7) and rows[0]["recall"] == pytest.approx(5 / 6)
    assert rows[1]["precision"] == pytest.approx(3 / 4) and rows[1]["recall"] == pytest.approx(3 / 5)
    assert rows[1]["f1"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert rows[2] == {
        "class": "c",
        "support": 0,
        "predicted": 0,
        "correct": 0,
        "precision": None,
        "recall": None,
        "f1": None,
    }


def test_error_importance_adds_up_to_the_errors_the_tree_removes(iris):
    _, front = iris
    for entry in front:
        tree = entry.tree
        rows = feature_importance(tree, "error")
        root = tree.counts[0]
        removed = int(root.sum() - root.max()) - entry.metrics["train_errors"]
        assert sum(r["decrease"] for r in rows) == removed
        assert sum(r["splits"] for r in rows) == entry.metrics["splits"]
        if removed:
            assert sum(r["share"] for r in rows) == pytest.approx(1.0)
        assert {r["feature"] for r in rows} <= set(tree.schema.feature_names)


def test_gini_importance_matches_scikit_learn_on_the_same_tree():
    """scikit-learn's feature_importances_ are the normalised weighted Gini decreases: fit its tree, convert it
    to ours through the rows (same structure), and compare."""
    pytest.importorskip("sklearn")
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = ((X[:, 0] > 0.2) ^ (X[:, 2] < -0.5)).astype(int) + (X[:, 1] > 1.2)
    front = tx.solve(X, y, solver="cart", max_depth=3)
    tree = front.trees[-1].tree
    ours = {r["feature"]: r["share"] for r in feature_importance(tree, "impurity")}
    sk = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    names = tree.schema.feature_names
    if sk.tree_.node_count != tree.n_nodes:
        pytest.skip("scikit-learn broke a tie differently: not the same tree")
    expected = {names[i]: v for i, v in enumerate(sk.feature_importances_) if v > 0}
    assert ours.keys() == expected.keys()
    for k, v in expected.items():
        assert ours[k] == pytest.approx(v, abs=1e-9)


def test_importance_kind_is_checked(iris):
    _, front = iris
    with pytest.raises(ValueError, match="kind must be one of error, impurity"):
        feature_importance(front.trees[0].tree, "gain")


def test_app_diagnostics_follow_the_selected_tree(iris):
    from treeexplorer.ui import Explorer

    prep, _ = iris
    e = Explorer(dataset="iris")
    try:
        run = e.controller.runs[-1]
        for entry in list(run.front)[:3]:
            e.select(run.id, entry.id)
            t = e.diagnostics.tables()
            assert (t["train"] == confusion_matrix(entry.tree, prep.X_train, prep.y_train)).all()
            assert (t["held-out"] == confusion_matrix(entry.tree, prep.X_test, prep.y_test)).all()
            assert [r["feature"] for r in t["importance"]] == [r["feature"] for r in feature_importance(entry.tree)]
            assert "precision" in e.diagnostics.pane.object and "Features used" in e.diagnostics.pane.object
        e.controller.clear_runs()
        assert e.diagnostics.tables() is None and "Select a tree" in e.diagnostics.pane.object
    finally:
        e.close()
