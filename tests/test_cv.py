"""Cross-validated fronts: a hand-computed case, an independent oracle, the 1-SE rule, seeds and errors."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold

import treeexplorer as tx
from treeexplorer.cv import CVFront, FoldResult, cross_validate
from treeexplorer.data import DataError


def _rows(pairs):
    return pd.DataFrame({"x": [p[0] for p in pairs], "y": [p[1] for p in pairs]})


def test_hand_computed_two_folds_with_a_tie():
    # fold 1 trains on A, tests on B; fold 2 the other way round.  One 0/1 feature, CART depth 1.
    A = [(0, 0), (0, 0), (0, 0), (1, 1), (1, 1), (1, 0)]  # leaf 0: 4/6; split x: 5/6
    B = [(0, 0), (1, 1), (1, 1), (0, 1)]  # leaf 1: 3/4; split x (x=0 ties -> class 0): 3/4, a tie
    df = _rows(A + B)
    a, b = list(range(6)), list(range(6, 10))
    f = cross_validate(df, "y", solver="cart", cv=[(a, b), (b, a)], max_depth=1)
    t = f.to_frame()
    assert list(t["splits"]) == [0, 1]
    # level 0: fold 1 leaf(0) on B = 1/4; fold 2 leaf(1) on A = 2/6
    assert t["cv_mean"][0] == pytest.approx((1 / 4 + 2 / 6) / 2)
    assert t["cv_std"][0] == pytest.approx(abs(1 / 4 - 2 / 6) / math.sqrt(2))
    assert t["train_mean"][0] == pytest.approx((4 / 6 + 3 / 4) / 2)
    # level 1: fold 1 split (y = x) on B = 3/4; fold 2 keeps its leaf (train tie -> the simpler tree) = 2/6
    assert t["cv_mean"][1] == pytest.approx((3 / 4 + 2 / 6) / 2)
    assert t["cv_se"][1] == pytest.approx(abs(3 / 4 - 2 / 6) / math.sqrt(2) / math.sqrt(2))
    assert t["train_mean"][1] == pytest.approx((5 / 6 + 3 / 4) / 2)
    assert list(t["n_folds"]) == [2, 2]
    # refit on all 10 rows: leaf 5/10, split 8/10
    assert list(t["tree_splits"]) == [0, 1]
    assert list(t["tree_train_accuracy"]) == pytest.approx([0.5, 0.8])
    # best mean is level 1; level 0 (0.2917) is below 0.5417 - 0.2083, so 1-SE also picks level 1
    assert f.select("best")["level"] == 1 and f.select("1se")["level"] == 1
    assert f.select("1se")["tree"].tree.n_splits == 1


def _fold(index, accs):
    """A fold result whose front has one tree per number of splits with the given held-out accuracies."""
    trees = [
        {
            "splits": s,
            "leaves": s + 1,
            "depth": s,
            "avg_tests": float(s),
            "train_accuracy": 0.5 + 0.1 * s,
            "test_accuracy": a,
        }
        for s, a in enumerate(accs)
    ]
    return FoldResult(index, "done", 0.0, 10, 5, trees)


def test_one_standard_error_rule_picks_the_simplest_level_within_one_se():
    folds = [_fold(0, [0.5, 0.80, 0.90, 0.86]), _fold(1, [0.5, 0.84, 0.82, 0.86]), _fold(2, [0.5, 0.86, 0.88, 0.86])]
    f = CVFront(folds, None, "cart", None, {}, None, 3, 1, 0)
    rows = f.table()
    means = [r["cv_mean"] for r in rows]
    assert means == pytest.approx([0.5, 0.8333333, 0.8666667, 0.86])
    best = rows[2]
    se = np.std([0.90, 0.82, 0.88], ddof=1) / math.sqrt(3)
    assert best["cv_se"] == pytest.approx(se)
    assert f.select("best")["level"] == 2
    # 0.8333 >= 0.8667 - se (se = 0.0240)? no -> level 1 is out; level 2 itself is the simplest within 1 SE
    assert 0.8333333 < 0.8666667 - se and f.select("1se")["level"] == 2
    folds[0] = _fold(0, [0.5, 0.80, 1.00, 0.86])  # a noisier best: its SE now covers level 1
    folds[1] = _fold(1, [0.5, 0.84, 0.76, 0.86])
    f = CVFront(folds, None, "cart", None, {}, None, 3, 1, 0)
    se = np.std([1.00, 0.76, 0.88], ddof=1) / math.sqrt(3)  # 0.0693
    assert 0.88 - se <= 0.8333333 < 0.88
    assert f.select("best")["level"] == 2 and f.select("1se")["level"] == 1
    assert f.select("best", by="leaves")["level"] == 3  # the same trees along leaves (= splits + 1)


def test_matches_an_independent_oracle_on_iris():
    ds = tx.load_dataset("iris")
    cvf = cross_validate("iris", solver="cart", cv=4, seed=3, max_depth=3)
    df = pd.DataFrame(ds.X, columns=ds.schema.feature_names)
    df["species"] = np.asarray(ds.schema.classes)[ds.y]
    skf = StratifiedKFold(4, shuffle=True, random_state=np.random.RandomState(3))
    fronts = []
    for tr, te in skf.split(df, ds.y):  # RepeatedStratifiedKFold's first repeat uses this RandomState
        fronts.append(tx.solve(df.iloc[tr], "species", solver="cart", test=df.iloc[te], max_depth=3))
    levels = sorted({t.metrics["splits"] for fr in fronts for t in fr} | {t.metrics["splits"] for t in cvf.refit})
    table = cvf.to_frame()
    assert list(table["splits"]) == levels
    for L, (_, row) in zip(levels, table.iterrows()):
        accs = []
        for fr in fronts:
            pool = [t for t in fr if t.metrics["splits"] <= L]
            top = max(t.metrics["train_accuracy"] for t in pool)
            pick = min((t for t in pool if t.metrics["train_accuracy"] == top), key=lambda t: t.metrics["splits"])
            accs.append(pick.metrics["test_accuracy"])
        assert row["cv_mean"] == pytest.approx(np.mean(accs))
        assert row["cv_std"] == pytest.approx(np.std(accs, ddof=1))
        assert row["n_reached"] == sum(max(t.metrics["splits"] for t in fr) >= L for fr in fronts)
    full = tx.solve("iris", solver="cart", max_depth=3)
    assert [t.metrics["train_accuracy"] for t in cvf.refit] == [t.metrics["train_accuracy"] for t in full]


def test_same_seed_same_result_other_seed_other_folds_and_repeats():
    a = cross_validate("iris", solver="cart", cv=3, seed=1, max_depth=2).to_frame()
    b = cross_validate("iris", solver="cart", cv=3, seed=1, max_depth=2).to_frame()
    pd.testing.assert_frame_equal(a, b)
    r = cross_validate("iris", solver="cart", cv=3, repeats=2, seed=1, max_depth=2, refit=False)
    assert len(r.folds) == 6 and r.refit is None and r.to_frame()["n_folds"].max() == 6
    assert r.to_frame()["tree_id"].isna().all()


def test_avg_tests_levels_and_progress_and_cancel():
    seen = []
    f = cross_validate("iris", solver="cart", cv=3, max_depth=2, progress=seen.append)
    assert [s["done"] for s in seen] == [1, 2, 3, 4] and seen[-1]["total"] == 4
    t = f.to_frame("avg_tests")
    assert t["avg_tests"].is_monotonic_increasing and t["n_folds"].iloc[-1] == 3
    ctl = tx.Control()
    ctl.cancel()
    c = cross_validate("iris", solver="cart", cv=3, max_depth=2, control=ctl)
    assert c.status == "cancelled" and c.folds[0].trees == []


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="cv must be a number of folds >= 2"):
        cross_validate("iris", cv=1)
    with pytest.raises(DataError, match="cv=200 folds need at least 200 rows"):
        cross_validate("iris", cv=200)
    with pytest.raises(ValueError, match="does not use sparsity"):
        cross_validate("iris", solver="cart", sparsity=0.1)
    with pytest.raises(ValueError, match="fold 1: row 3 is in both train and test"):
        cross_validate("iris", cv=[([1, 2, 3], [3, 4])])
    with pytest.raises(ValueError, match="^n_bins needs a discretizer"):  # checked before any fold runs
        cross_validate("iris", solver="cart", n_bins=4)
    with pytest.raises(ValueError, match="rule must be one of"):
        cross_validate("iris", cv=2, max_depth=1).select("median")


def test_folds_as_parallel_tasks_equal_the_serial_run():
    from distributed import Client

    serial = cross_validate("iris", solver="cart", cv=3, seed=2, max_depth=3)
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        dist = cross_validate("iris", solver="cart", cv=3, seed=2, max_depth=3, scheduler=client)
    pd.testing.assert_frame_equal(serial.to_frame(), dist.to_frame())


def test_estimator_selects_by_cross_validation():
    from sklearn.datasets import load_iris
    from sklearn.utils.estimator_checks import check_estimator

    from tests.test_estimator import WEIGHTS_ARE_NOT_COPIES
    from treeexplorer.estimator import TreeExplorerCV

    check_estimator(TreeExplorerCV(max_depth=2, cv=2), expected_failed_checks=WEIGHTS_ARE_NOT_COPIES)
    X, y = load_iris(return_X_y=True)
    one_se = TreeExplorerCV(max_depth=4, cv=5, random_state=0).fit(X, y)
    best = TreeExplorerCV(max_depth=4, cv=5, random_state=0, rule="best").fit(X, y)
    cvf = cross_validate("iris", solver="cart", cv=5, seed=0, max_depth=4)
    assert one_se.level_ == cvf.select("1se")["level"] and best.level_ == cvf.select("best")["level"]
    assert one_se.tree_.n_splits <= one_se.level_ <= best.level_
    assert one_se.cv_results_["one_se"].sum() == 1 and one_se.front_ is one_se.cv_front_.refit
    assert one_se.score(X, y) == pytest.approx(one_se.selected_.metrics["train_accuracy"])
    with pytest.raises(ValueError, match="rule must be one of 1se, best"):
        TreeExplorerCV(rule="mean").fit(X, y)
