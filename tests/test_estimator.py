"""The scikit-learn estimator: estimator checks, selection rules, DataFrames with categorical columns."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import check_estimator

from treeexplorer.estimator import TreeExplorerClassifier

# A weight of 2 is not two copies of a row here: the validation split (or the folds) draw rows, and a copy can
# land on the other side of it.
WEIGHTS_ARE_NOT_COPIES = {
    "check_sample_weight_equivalence_on_dense_data": "the held-out rows are drawn by row: a copy may be held out"
}


def test_passes_scikit_learn_estimator_checks():
    check_estimator(TreeExplorerClassifier(max_depth=3), expected_failed_checks=WEIGHTS_ARE_NOT_COPIES)


def test_weights_are_copies_without_a_validation_split():
    """With ``select="train"`` the weighted CART is scikit-learn's: a weight of 2 is two copies of the row."""
    from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

    check_sample_weight_equivalence_on_dense_data("TreeExplorerClassifier", TreeExplorerClassifier(select="train"))


def test_fit_selects_a_tree_from_the_front():
    X, y = load_iris(return_X_y=True)
    clf = TreeExplorerClassifier(max_depth=4, select="train", max_splits=2).fit(X, y)
    assert clf.tree_.n_splits <= 2
    assert clf.selected_.metrics["train_accuracy"] == max(
        t.metrics["train_accuracy"] for t in clf.front_ if t.metrics["splits"] <= 2
    )
    assert clf.score(X, y) == pytest.approx(clf.selected_.metrics["train_accuracy"])
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1)
    assert np.array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))


def test_validation_selection_and_cross_validation():
    X, y = load_iris(return_X_y=True)
    clf = TreeExplorerClassifier(max_depth=4)
    scores = cross_val_score(clf, X, y, cv=3)
    assert scores.mean() > 0.85
    clf.fit(X, y)
    assert clf.front_.n_test == 38  # validation rows are the front's held-out rows


def test_dataframe_with_categorical_columns_and_string_labels():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 200), "x": rng.normal(size=200)})
    y = np.where((df.colour == "red") | (df.x > 1), "yes", "no")
    clf = TreeExplorerClassifier(max_depth=2, select="train").fit(df, y)
    assert list(clf.feature_names_in_) == ["colour", "x"]
    assert clf.score(df, y) == 1.0
    assert "colour = red" in {clf.tree_.node_text(k) for k in range(clf.tree_.n_nodes) if not clf.tree_.is_leaf(k)}
