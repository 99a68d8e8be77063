"""``Explorer(data, target, **settings)``: every data form ``solve`` takes, fronts opened as runs, settings checked
with ``solve``'s one-line errors, and the selected tree handed back as an estimator (no re-solve)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treeexplorer as tx
from treeexplorer.estimator import TreeExplorerClassifier
from treeexplorer.ui import Explorer


def penguins_like(n=120, seed=0, missing=True) -> pd.DataFrame:
    """A table shaped like palmerpenguins: species first, categorical island/sex, NaNs, a year column last."""
    rng = np.random.default_rng(seed)
    species = rng.choice(["Adelie", "Chinstrap", "Gentoo"], n)
    base = {"Adelie": 38.0, "Chinstrap": 48.0, "Gentoo": 47.0}
    depth = {"Adelie": 18.3, "Chinstrap": 18.4, "Gentoo": 15.0}
    df = pd.DataFrame(
        {
            "species": species,
            "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n),
            "bill_length_mm": [base[s] + rng.normal(0, 1.5) for s in species],
            "bill_depth_mm": [depth[s] + rng.normal(0, 0.5) for s in species],
            "sex": rng.choice(["male", "female"], n),
            "year": rng.choice([2007, 2008, 2009], n),
        }
    )
    if missing:
        df.loc[[3, 17], "bill_length_mm"] = np.nan
        df.loc[[5], "sex"] = None
    return df


def small(**kw):
    return Explorer(max_depth=2, time_limit=20, **kw)


def test_a_dataframe_positionally_guesses_the_target_and_solves_at_once():
    df = penguins_like(missing=False)
    ex = Explorer(df, max_depth=2)
    c = ex.controller
    assert c.target == "species" and "guessed" in c.notice  # the one rule: never the year
    assert not c.error
    assert len(ex.fronts) == 1 and len(ex.fronts[0]) >= 2
    sel = ex.selected
    assert sel is not None and sel.front is ex.fronts[0] and sel.entry in sel.front.trees and sel.run_id == 1
    assert ex.settings().params["max_depth"] == 2  # the keyword is the sidebar's control
    assert ex.dataset_w.value.endswith("DataFrame")


def test_missing_values_are_kept_and_drop_missing_drops_them():
    df = penguins_like()
    kept = Explorer(df, max_depth=2)  # the gaps stay: each split learns where they go
    assert kept.controller.dataset.n_rows == len(df) and not kept.controller.error and kept.fronts
    ex = Explorer(df, max_depth=2, drop_missing=True)
    assert ex.controller.drop_missing and ex.drop_missing_w.value
    assert ex.controller.dataset.n_rows == len(df) - 3


def test_x_y_arrays_tuple_and_named_target():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 0] > 0, "a", "b")
    for ex in (Explorer((X, y), max_depth=2), Explorer(X, y, max_depth=2)):
        assert ex.controller.target == "y" and ex.fronts and ex.fronts[0].best().metrics["train_accuracy"] == 1.0
    df = pd.DataFrame(X, columns=["u", "v", "w"]).assign(label=y, other=np.where(X[:, 1] > 0, "p", "q"))
    assert Explorer(df, target="other", max_depth=1).controller.target == "other"


def test_a_file_path_and_a_bundled_name(tmp_path):
    path = tmp_path / "birds.csv"
    penguins_like(missing=False).to_csv(path, index=False)
    for data in (path, str(path)):
        ex = Explorer(data, max_depth=2)
        assert ex.controller.dataset_name == "birds" and ex.controller.target == "species" and ex.fronts
    ex = Explorer("iris", solver="cart", max_depth=2)
    assert ex.dataset_w.value == "iris" and ex.controller.dataset_name == "iris" and ex.fronts
    assert Explorer(dataset="car", run_default=False).controller.dataset_name == "car"  # the older keyword


def test_fronts_are_opened_as_runs_without_solving():
    f1 = tx.solve("iris", solver="cart", max_depth=3, test_size=0.25)
    f2 = tx.solve("iris", solver="cart", discretizer="quantile", max_depth=2, test_size=0.25)
    one = Explorer(f1)
    assert one.fronts == [f1] and one.selected.front is f1 and one.selected.entry is f1.best()
    assert one.controller.job is None  # nothing was solved
    both = Explorer([f1, f2])
    assert both.fronts == [f1, f2] and [r.id for r in both.controller.runs] == [1, 2]
    both.select(2, f2.trees[0].id)
    assert both.selected.front is f2 and both.selected.entry is f2.trees[0]
    with pytest.raises(ValueError, match="takes no target"):
        Explorer(f1, target="species")


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"max_dept": 3}, "solver 'cart' does not use max_dept"),
        ({"n_bins": 0}, "n_bins must be a positive integer, got 0"),
        ({"discretizer": "foo"}, "unknown discretizer 'foo'"),
        ({"solver": "nope"}, "unknown solver 'nope'"),
        ({"time_limit": -1}, "time_limit must be a positive"),
        ({"seed": -2}, "seed must be an integer"),
        ({"test_size": 1.5}, "test size must be a fraction"),
        ({"progress": print}, "Explorer does not take progress"),
        ({"cv": 1}, "cv must be a number of folds from 3 to 10"),
        ({"discretizer": "raw", "solver": "murtree"}, "needs binary tests"),
    ],
)
def test_settings_get_solves_one_line_errors(kw, message):
    with pytest.raises(ValueError, match=message) as info:
        Explorer(penguins_like(missing=False), **kw)
    assert "\n" not in str(info.value)


def test_settings_reach_the_controls():
    ex = Explorer(
        penguins_like(missing=False),
        solver="murtree",
        discretizer="quantile",
        n_bins=3,
        max_depth=2,
        time_limit=15,
        seed=3,
        test_size=0.3,
    )
    s = ex.settings()
    assert (s.solver, s.discretizer, s.n_bins, s.time_limit, s.params["max_depth"]) == ("murtree", "quantile", 3, 15, 2)
    assert ex.controller.seed == 3 and ex.controller.test_size == 0.3
    front = ex.fronts[0]
    assert front.solver == "murtree" and front.discretizer == "quantile" and front.n_test == round(0.3 * 120)


def test_the_selected_tree_as_an_estimator_predicts_without_solving():
    df = penguins_like(missing=False)
    ex = Explorer(df, max_depth=2)
    sel = ex.selected
    clf = ex.classifier()
    assert isinstance(clf, TreeExplorerClassifier) and clf.tree_ is sel.entry.tree and clf.front_ is sel.front
    assert list(clf.classes_) == ["Adelie", "Chinstrap", "Gentoo"]
    ds = ex.controller.dataset
    expected = np.asarray(ds.schema.classes)[sel.entry.tree.predict_codes(ds.X)]
    assert list(ex.predict(df)) == list(expected)  # the whole table, target column included: ignored
    rows = df.drop(columns="species").head(7)
    assert list(clf.predict(rows)) == list(expected[:7])
    assert clf.predict_proba(rows).shape == (7, 3)
    ex.select(1, sel.front.trees[0].id)  # the root alone: every row gets the majority class
    assert len(set(ex.predict(df))) == 1
    with pytest.raises(ValueError, match="no tree is selected"):
        Explorer(df, max_depth=1, run_default=False).classifier()


def test_from_tree_on_a_front_solved_in_python():
    df = penguins_like(missing=False)
    front = tx.solve(df, solver="cart", max_depth=2)
    entry = front.best()
    clf = TreeExplorerClassifier.from_tree(entry, front)
    ds = tx.load_dataset(df)
    assert list(clf.predict(df.drop(columns="species"))) == list(
        np.asarray(ds.schema.classes)[entry.tree.predict_codes(ds.X)]
    )
