"""The columns a run learns from (issue 51): row identifiers left out by default with a note, ``features=`` and
``exclude=`` in the API, the estimator and the CLI, and one identifier rule shared with the target guess."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treeexplorer as tx
from treeexplorer.cli import main
from treeexplorer.columns import column_summary, identifier_columns, identifier_reason
from treeexplorer.data import DataError, load_dataset
from treeexplorer.estimator import TreeExplorerClassifier
from treeexplorer.target import guess_target

RNG = np.random.default_rng(51)


def table(n: int = 120) -> pd.DataFrame:
    """A table with every kind of identifier and real features that must stay."""
    x = RNG.normal(size=n)
    return pd.DataFrame(
        {
            "Unnamed: 0": [f"car {i}" for i in range(n)],  # R's row names, written without a header
            "ID": [str(1_000_000 + i // 2 * 2 + (i % 2)) if i % 9 else "1000000" for i in range(n)],  # some repeats
            "PassengerId": np.arange(1, n + 1),
            "name": [f"person {i}" for i in range(n)],
            "weight": RNG.uniform(40, 90, size=n),  # unique floats: a measurement
            "x": x,
            "site_id": ["a", "b", "c"] * (n // 3),  # named like an id, but a real category (3 values)
            "body_mass_index": RNG.uniform(18, 30, size=n),
            "label": np.where(x > 0, "yes", "no"),
        }
    )


def test_identifiers_by_name_by_row_numbers_and_by_content():
    df = table()
    ids = identifier_columns(df, "label")
    assert set(ids) == {"Unnamed: 0", "ID", "PassengerId", "name"}
    assert ids["PassengerId"] == "it numbers the rows"
    assert "named like an identifier" in ids["ID"]
    # unnamed, but a distinct whole number in every row of a big table
    big = pd.DataFrame({"code": RNG.permutation(300) * 7 + 3, "f": RNG.normal(size=300)})
    assert identifier_reason("code", big["code"]) == "a distinct whole number in every row"
    # row numbers under any name, shuffled or not, from 0 or 1
    assert identifier_reason("row", pd.Series(RNG.permutation(40))) == "it numbers the rows"
    assert identifier_reason("n", pd.Series(np.arange(1, 41, dtype=float))) == "it numbers the rows"


def test_real_features_stay_even_when_unique():
    n = 500
    for name, values in (
        ("weight", RNG.normal(70, 10, size=n)),  # unique floats
        ("length_mm", RNG.uniform(size=n) * 100),
        ("body_mass_index", RNG.uniform(18, 30, size=n)),  # "index" as a word of a measurement's name
        ("site_id", RNG.choice(["a", "b", "c"], size=n)),  # named like an id, three values
        ("count", RNG.integers(0, 10, size=n)),
        ("flag", RNG.integers(0, 2, size=n).astype(bool)),
    ):
        assert identifier_reason(name, pd.Series(values)) is None, name
    # a short unnamed first column that does not number the rows is a feature
    assert identifier_reason("Unnamed: 0", pd.Series([7, 3] * 15), leading=True) is None
    # few rows: all-distinct whole numbers are common there (ages of 12 people)
    assert identifier_reason("age", pd.Series(RNG.permutation(12) + 30)) is None


def test_loader_leaves_identifiers_out_with_a_note_and_brings_them_back():
    df = table()
    ds = load_dataset(df, "label")
    names = ds.schema.feature_names
    assert names == ["weight", "x", "site_id", "body_mass_index"]
    note = next(n for n in ds.notices if "ID-like" in n)
    for col in ("'Unnamed: 0'", "'ID'", "'PassengerId'", "'name'"):
        assert col in note
    assert "features=" in note and "Columns" in note  # how to bring them back
    back = load_dataset(df, "label", features=["ID", "x"])
    assert back.schema.feature_names == ["ID", "x"]
    assert not any("ID-like" in n for n in back.notices)
    kept = load_dataset(df, "label", categorical=["name"])  # listed by the user: kept
    assert "name" in kept.schema.feature_names
    fewer = load_dataset(df, "label", exclude=["weight", "site_id"])
    assert fewer.schema.feature_names == ["x", "body_mass_index"]


def test_column_choices_refused_in_one_line():
    df = table(30)
    cases = [
        ({"features": ["nope"]}, "features names 'nope', which is not a column"),
        ({"exclude": ["nope"]}, "exclude names 'nope', which is not a column"),
        ({"exclude": ["label"]}, "exclude names the target column 'label'"),
        ({"features": ["x"], "exclude": ["x"]}, "no feature column left"),
        ({"features": [3]}, "features must list column names"),
    ]
    for kwargs, words in cases:
        with pytest.raises((DataError, ValueError)) as info:
            load_dataset(df, "label", **kwargs)
        assert words in str(info.value) and "\n" not in str(info.value)


def test_target_guess_shares_the_identifier_rule():
    names = [f"n{i}" for i in range(10)]
    df = pd.DataFrame({"x": RNG.normal(size=10), "grp": ["a", "b"] * 5, "Name": names})
    # ten distinct names could pass for ten classes; the identifier rule says they name the rows
    assert guess_target(df).column == "grp"
    assert identifier_reason("Name", df["Name"]) is not None


def test_column_summary_for_the_app():
    rows = {r["name"]: r for r in column_summary(table(30), "label")}
    assert rows["weight"]["kind"] == "number" and rows["weight"]["identifier"] is None
    assert rows["PassengerId"]["kind"] == "whole number" and rows["PassengerId"]["distinct"] == 30
    assert rows["name"]["kind"] == "text" and rows["name"]["identifier"]
    assert rows["label"]["identifier"] is None  # the target is never called an identifier


def test_solve_estimator_and_cli_take_the_columns(tmp_path, capsys):
    df = table(60)
    front = tx.solve(df, "label", solver="cart", max_depth=1, exclude=["body_mass_index"])
    assert front.schema.feature_names == ["weight", "x", "site_id"]
    assert any("ID-like" in n for n in front.notices)
    front = tx.solve(df, "label", solver="cart", max_depth=1, features=["x"])
    assert front.schema.feature_names == ["x"]
    X, y = df.drop(columns="label"), df["label"]
    clf = TreeExplorerClassifier(solver="cart", max_depth=1, exclude=["weight"]).fit(X, y)
    assert "weight" not in clf.front_.schema.feature_names and "ID" not in clf.front_.schema.feature_names
    assert clf.score(X, y) > 0.9  # predicts from the full X, its used columns picked by name
    clf = TreeExplorerClassifier(solver="cart", max_depth=1, features=["ID", "x"]).fit(X, y)
    assert clf.front_.schema.feature_names == ["ID", "x"]
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    assert main(["solve", str(path), "--target", "label", "--max-depth", "1", "--exclude", "weight", "x"]) == 0
    out = capsys.readouterr().out
    assert "ID-like" in out and "'PassengerId'" in out
    assert main(["solve", str(path), "--target", "label", "--exclude", "nope"]) != 0
    err = capsys.readouterr().err
    assert "exclude names 'nope'" in err and "Traceback" not in err
