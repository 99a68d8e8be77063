"""The weighted objective through the API: class weights, row weights (array or column), costs, their errors."""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.class_weight import compute_sample_weight

import treeexplorer as tx
from treeexplorer.diagnostics import class_report, confusion_matrix
from treeexplorer.objective import Objective, ObjectiveError


def imbalanced(n=400, seed=0):
    """A table where 5 % of the rows are 'sick', told apart by a noisy marker."""
    rng = np.random.default_rng(seed)
    sick = rng.random(n) < 0.05
    marker = rng.normal(size=n) + 1.6 * sick
    other = rng.normal(size=n)
    w = rng.integers(1, 4, n).astype(float)
    return pd.DataFrame({"marker": marker, "other": other, "w": w, "status": np.where(sick, "sick", "well")})


def test_balanced_class_weights_give_a_front_of_the_cost_that_is_not_the_majority_tree():
    df = imbalanced()
    plain = tx.solve(df.drop(columns="w"), "status", solver="cart", max_depth=2)
    front = tx.solve(df.drop(columns="w"), "status", solver="cart", max_depth=2, class_weight="balanced")
    assert plain.weights == {} and plain.score == "accuracy"
    assert front.weights["score"] == "balanced_accuracy" and front.score == "balanced_accuracy"
    assert front.weights["class_weight_mode"] == "balanced"
    assert "for the cost with balanced class weights" in front.optimality or not any(t.optimal for t in front)
    best_plain = max(t.metrics["train_balanced_accuracy"] for t in plain if t.metrics["splits"] == 1)
    best_weighted = max(t.metrics["train_balanced_accuracy"] for t in front if t.metrics["splits"] == 1)
    assert best_weighted > best_plain
    # the cost is sum_i w_i [y_i != yhat_i] with scikit-learn's balanced weights, on every tree
    sw = compute_sample_weight("balanced", df["status"])
    X = df[["marker", "other"]].to_numpy()
    y = (df["status"] == "well").to_numpy().astype(int)  # classes sorted: sick=0, well=1
    for t in front:
        pred = t.tree.predict_codes(X)
        assert t.metrics["train_cost"] == pytest.approx(float(np.sum(sw * (pred != y))))
        report = class_report(confusion_matrix(t.tree, X, y))
        assert t.metrics["train_recall"] == pytest.approx([r["recall"] for r in report])
        assert t.metrics["train_precision"] == [
            None if r["precision"] is None else pytest.approx(r["precision"]) for r in report
        ]
        assert t.metrics["train_balanced_accuracy"] == pytest.approx(np.mean([r["recall"] for r in report]))


def test_the_full_weighted_cart_tree_is_scikit_learns():
    df = imbalanced(seed=1)
    X = df[["marker", "other"]].to_numpy().astype(np.float32).astype(float)
    frame = pd.DataFrame({"marker": X[:, 0], "other": X[:, 1], "w": df["w"], "status": df["status"]})
    front = tx.solve(frame, "status", solver="cart", max_depth=3, class_weight="balanced", sample_weight="w")
    sk = DecisionTreeClassifier(max_depth=3, class_weight="balanced", random_state=0)
    sk.fit(X, frame["status"], sample_weight=frame["w"])
    full = max(front, key=lambda t: t.metrics["splits"])
    assert full.metrics["splits"] == int((sk.tree_.children_left >= 0).sum())
    assert np.array_equal(full.tree.predict(X), sk.predict(X))
    assert front.weights["sample_weight"] == "weight column 'w'"
    assert "w" not in front.schema.feature_names  # the weight column is not a feature


def test_costs_and_arrays_of_weights():
    df = imbalanced(seed=2).drop(columns="w")
    w = np.linspace(0.5, 2.0, len(df))
    a = tx.solve(df, "status", solver="cart", max_depth=2, costs={("sick", "well"): 10.0}, sample_weight=w)
    assert a.weights["costs"] == [[0.0, 10.0], [1.0, 0.0]]
    assert a.weights["sample_weight"] == "sample_weight"
    b = tx.solve(df, "status", solver="cart", max_depth=2, costs=[[0, 10], [1, 0]], sample_weight=w)
    assert [t.metrics["train_cost"] for t in a] == [t.metrics["train_cost"] for t in b]


def test_held_out_rows_are_scored_with_the_same_objective():
    df = imbalanced(seed=3)
    front = tx.solve(df, "status", solver="cart", max_depth=2, class_weight={"sick": 19}, test_size=0.3, seed=0)
    for t in front:
        assert t.metrics["test_cost"] is not None and t.metrics["test_balanced_accuracy"] is not None
    root = next(t for t in front if t.metrics["splits"] == 0)
    # the root predicts one class for every held-out row: its cost counts the rows of the other at their weight
    n_test = front.n_test
    assert 0 < root.metrics["test_cost"] <= 19 * n_test


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"class_weight": "balance"}, "class_weight must be 'balanced'"),
        ({"class_weight": {"ill": 3}}, "'ill' is not a class of 'status'"),
        ({"class_weight": {"sick": -1}}, "finite number >= 0"),
        ({"class_weight": {"sick": 0, "well": 0}}, "every training row weighs 0"),
        ({"costs": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]}, "matrix is 3 x 3 but 'status' has 2 classes"),
        ({"costs": {("sick", "ill"): 3}}, "'ill' is not a class"),
        ({"costs": {("sick", "well"): float("nan")}}, "finite number >= 0"),
        ({"sample_weight": "weight"}, "weight column 'weight' is not in the table"),
        ({"sample_weight": "status"}, "is the target"),
        ({"sample_weight": np.ones(3)}, "give one weight per row"),
        ({"sample_weight": np.full(400, -1.0)}, "negative"),
        ({"sample_weight": np.zeros(400)}, "every weight is zero"),
    ],
)
def test_bad_weights_get_one_line(kw, message):
    df = imbalanced()
    with pytest.raises(ValueError, match=message) as info:
        tx.solve(df.drop(columns="w"), "status", solver="cart", max_depth=1, **kw)
    assert "\n" not in str(info.value)


def test_bad_weight_columns_get_one_line():
    df = imbalanced()
    df["w"] = df["w"].astype(object)
    df.loc[3, "w"] = "heavy"
    with pytest.raises(ValueError, match="weight column 'w' is not numeric"):
        tx.solve(df, "status", solver="cart", sample_weight="w")
    df.loc[3, "w"] = np.inf
    df["w"] = df["w"].astype(float)
    with pytest.raises(ValueError, match="row 4 weighs inf, infinite"):
        tx.solve(df, "status", solver="cart", sample_weight="w")
    df.loc[3, "w"] = np.nan
    with pytest.raises(ValueError, match="the weight column 'w' is missing at row 4; give every row a weight"):
        tx.solve(df, "status", solver="cart", sample_weight="w")


def test_a_solver_without_weights_is_refused_naming_those_with_them():
    from treeexplorer.api import RunRequest, prepare, run_prepared
    from treeexplorer.registry import SolverSpec, get_solver

    cart = get_solver("cart")
    unweighted = SolverSpec(name="unweighted_test", input="numeric", run=cart.run, params=cart.params)
    df = imbalanced()
    with pytest.raises(ObjectiveError, match="'unweighted_test' does not take weights.*the solvers that do: .*cart"):
        run_prepared(prepare(df, "status"), RunRequest.build(unweighted, class_weight="balanced"))
    # the plain objective runs as always
    assert len(run_prepared(prepare(df, "status"), RunRequest.build(unweighted, {"max_depth": 1})))


def test_objective_words():
    assert Objective().describe() == "misclassifications"
    assert Objective.build("balanced").describe() == "the cost with balanced class weights"
    o = Objective.build({"sick": 5}, {("sick", "well"): 10})
    assert o.describe("weight column 'w'") == (
        "the cost with class weights sick=5 and row weights from weight column 'w' and costs sick:well=10"
    )
    assert o.score() == "cost"


def test_cli_weights_flags(tmp_path, capsys):
    from treeexplorer.cli import main

    path = tmp_path / "sick.csv"
    imbalanced().to_csv(path, index=False)
    args = ["solve", str(path), "--target", "status", "--solver", "cart", "--max-depth", "2"]
    assert main([*args, "--class-weight", "balanced", "--weight-column", "w", "--costs", "sick:well=5"]) == 0
    out = capsys.readouterr().out
    assert "weights: minimised the cost with balanced class weights and row weights from weight column 'w'" in out
    assert "train_cost" in out and "train_bacc" in out
    assert main([*args, "--class-weight", "ill=3"]) != 0
    err = capsys.readouterr().err
    assert "'ill' is not a class of 'status'" in err and len(err.strip().splitlines()) == 1
    assert main([*args, "--costs", "sick=3"]) != 0
    assert "TRUE:PREDICTED=COST" in capsys.readouterr().err


def test_estimator_sample_weight_pipeline_and_grid_search():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from treeexplorer.estimator import TreeExplorerClassifier

    df = imbalanced(600, seed=4)
    X, y, w = df[["marker", "other"]], df["status"], df["w"].to_numpy()
    clf = TreeExplorerClassifier(max_depth=2, class_weight="balanced").fit(X, y, sample_weight=w)
    assert clf.front_.weights["sample_weight"] == "sample_weight" and clf.front_.score == "cost"
    # selected by the least held-out cost
    assert clf.selected_.metrics["test_cost"] == min(t.metrics["test_cost"] for t in clf.front_)
    pipe = make_pipeline(StandardScaler(), TreeExplorerClassifier(max_depth=2, class_weight="balanced"))
    pipe.fit(X, y, treeexplorerclassifier__sample_weight=w)
    assert pipe[-1].front_.weights
    gs = GridSearchCV(TreeExplorerClassifier(class_weight="balanced"), {"max_depth": [1, 2]}, cv=3)
    gs.fit(X, y, sample_weight=w)
    assert gs.best_estimator_.front_.weights["class_weight_mode"] == "balanced"
    plain = TreeExplorerClassifier(max_depth=2).fit(X, y)
    assert plain.front_.weights == {} and plain.front_.score == "accuracy"


def test_cross_validation_scores_held_out_rows_with_the_objective():
    df = imbalanced(600, seed=5).drop(columns="w")
    cvf = tx.cross_validate(df, "status", solver="cart", cv=3, max_depth=2, class_weight="balanced")
    assert cvf.score == "balanced_accuracy"
    rows = cvf.table()
    # cv_mean is the mean held-out balanced accuracy of the fold trees chosen at each level
    for r in rows:
        fold_scores = []
        for f in cvf.folds:
            pick = [t for t in f.trees if t["splits"] <= r["level"]]
            best = max(pick, key=lambda t: (t["train_score"], -t["splits"]))
            fold_scores.append(best["test_score"])
        assert r["cv_mean"] == pytest.approx(np.mean(fold_scores))
    assert all(t["test_score"] is not None for f in cvf.folds for t in f.trees)
    plain = tx.cross_validate(df, "status", solver="cart", cv=3, max_depth=2)
    assert plain.score == "accuracy"
    assert all(t["test_score"] == t["test_accuracy"] for f in plain.folds for t in f.trees)
