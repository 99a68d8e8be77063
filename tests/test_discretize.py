"""Discretizers other than MID's ranking: MDLP, quantile, uniform, exact, none; column handling, texts, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from treeexplorer.data import load_dataset
from treeexplorer.discretize import DISCRETIZER_NAMES, discretize_table, fit_discretizer
from treeexplorer.schema import OP_EQ, OP_LE, Column, Condition, Schema

METHODS_WITH_NUMERIC = ("exact", "mid", "mdlp", "quantile", "uniform")


def numeric_schema(p: int, n_classes: int = 2) -> Schema:
    return Schema(tuple(Column(f"x{j}", "numeric") for j in range(p)), "y", tuple(range(n_classes)))


def mixed_table():
    """age (numeric), colour (3 categories), smoker (numeric 0/1), sex (2 categories), const (constant)."""
    schema = Schema(
        (
            Column("age", "numeric"),
            Column("colour", "categorical", ("blue", "green", "red")),
            Column("smoker", "numeric"),
            Column("sex", "categorical", ("f", "m")),
            Column("const", "numeric"),
        ),
        "sick",
        ("no", "yes"),
    )
    rng = np.random.default_rng(7)
    n = 80
    X = np.column_stack(
        [rng.integers(20, 70, n), rng.integers(0, 3, n), rng.integers(0, 2, n), rng.integers(0, 2, n), np.full(n, 5.0)]
    ).astype(float)
    y = ((X[:, 0] > 45) ^ (X[:, 2] == 1)).astype(np.int64)
    return X, y, schema


# -- MDLP ------------------------------------------------------------------------------------------------


def test_mdlp_finds_the_known_cut_and_nothing_else():
    x = np.arange(100, dtype=float)
    y = (x >= 50).astype(int)
    binz = fit_discretizer("mdlp", x[:, None], y, numeric_schema(1))
    assert binz.conditions == [Condition(0, OP_LE, 49.5)]
    assert binz.gains[0] == pytest.approx(1.0)  # both halves pure: the whole 1 bit


def test_mdlp_stopping_rule_by_hand():
    # MDL test: accept when gain > (log2(N-1) + log2(3^k - 2) - (k Ent(S) - k1 Ent(S1) - k2 Ent(S2))) / N.
    # 4 rows, y = 0 0 0 1: Ent(S) = H(1/4) = 0.811; cut 3.5 gives pure parts: gain 0.811;
    #   bound (log2 3 + log2 7 - 2 * 0.811) / 4 = (1.585 + 2.807 - 1.623) / 4 = 0.692 -> accepted.
    # 8 rows, y = 0 x7 then 1: Ent(S) = H(1/8) = 0.544 = gain of the pure cut 7.5;
    #   bound (log2 7 + log2 7 - 2 * 0.544) / 8 = (2.807 + 2.807 - 1.087) / 8 = 0.566 -> rejected.
    ok = fit_discretizer("mdlp", np.arange(1.0, 5.0)[:, None], np.array([0, 0, 0, 1]), numeric_schema(1))
    assert ok.conditions == [Condition(0, OP_LE, 3.5)]
    no = fit_discretizer(
        "mdlp",
        np.column_stack([np.arange(1.0, 9.0), np.arange(1.0, 9.0) % 2]),
        np.array([0] * 7 + [1]),
        numeric_schema(2),
    )
    # column 0 gives no cut; column 1 is a 0/1 column, which always passes through as one test
    assert no.conditions == [Condition(1, OP_EQ, 1.0)]
    assert any("no cut passes the MDL test" in n and "'x0'" in n for n in no.notices)


def test_mdlp_on_iris_matches_the_published_cuts():
    # Fayyad-Irani MDLP on Fisher's iris (as e.g. R's discretization::mdlp and Weka report):
    # sepal length 5.55, 6.15; sepal width 2.95, 3.35; petal length 2.45, 4.75; petal width 0.8, 1.75.
    ds = load_dataset("iris")
    binz = fit_discretizer("mdlp", ds.X, ds.y, ds.schema)
    got = [(c.column, round(c.value, 6)) for c in binz.conditions]
    assert got == [(0, 5.55), (0, 6.15), (1, 2.95), (1, 3.35), (2, 2.45), (2, 4.75), (3, 0.8), (3, 1.75)]


# -- quantile / uniform / exact ----------------------------------------------------------------------------


def test_quantile_thresholds_and_dedup():
    x = np.arange(1.0, 101.0)
    binz = fit_discretizer("quantile", x[:, None], (x > 50).astype(int), numeric_schema(1), n_bins=3)
    assert [c.value for c in binz.conditions] == [25.5, 50.5, 75.5]
    # eight zeros then 1, 2: every quantile up to 80 % is the value 0 -> one threshold, and a notice
    x = np.array([0.0] * 8 + [1.0, 2.0])
    binz = fit_discretizer("quantile", x[:, None], np.arange(10) % 2, numeric_schema(1), n_bins=2)
    assert [c.value for c in binz.conditions] == [0.5]
    assert any("fewer than 2 distinct thresholds" in n for n in binz.notices)


def test_uniform_thresholds_and_dedup():
    x = np.arange(0.0, 11.0)
    binz = fit_discretizer("uniform", x[:, None], (x > 5).astype(int), numeric_schema(1), n_bins=4)
    assert [c.value for c in binz.conditions] == [2.0, 4.0, 6.0, 8.0]
    # values 0, 1, 2, 3, 10: the widths put 2, 4, 6, 8; 4, 6 and 8 all split the rows as "x <= 3": kept once
    x = np.array([0.0, 1.0, 2.0, 3.0, 10.0])
    binz = fit_discretizer("uniform", x[:, None], np.array([0, 1, 0, 1, 0]), numeric_schema(1), n_bins=4)
    assert [c.value for c in binz.conditions] == [2.0, 4.0]
    assert any("fewer than 4" in n for n in binz.notices)


def test_exact_covers_every_threshold_split():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 9, size=(40, 2)).astype(float)
    y = rng.integers(0, 2, 40)
    binz = fit_discretizer("exact", X, y, numeric_schema(2))
    assert len(binz) == sum(len(np.unique(X[:, j])) - 1 for j in range(2))
    cols = {tuple(col) for col in binz.transform(X).T}
    for j in range(2):
        for t in np.linspace(-1, 10, 111):  # any axis-aligned split is one of the tests (or trivial)
            split = tuple((X[:, j] <= t).astype(np.uint8))
            assert split in cols or len(set(split)) == 1


def test_too_many_bins_says_how_many_exist():
    X = np.column_stack([np.arange(11.0), np.arange(11.0) % 3])
    y = np.arange(11) % 2
    with pytest.raises(ValueError, match=r"the most is 10 \(column 'x0'\)"):
        fit_discretizer("quantile", X, y, numeric_schema(2), n_bins=50)
    # a short column is not an error when another column has enough: its thresholds are all used
    binz = fit_discretizer("uniform", X, y, numeric_schema(2), n_bins=5)
    assert sum(c.column == 1 for c in binz.conditions) == 2
    assert any("'x1' (2)" in n for n in binz.notices)


# -- column handling (every method) -------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS_WITH_NUMERIC)
def test_binary_categorical_and_constant_columns(method):
    X, y, schema = mixed_table()
    binz = fit_discretizer(method, X, y, schema, n_bins=8 if method == "mid" else None)
    by_col = {j: [c for c in binz.conditions if c.column == j] for j in range(5)}
    if method != "mid":  # MID keeps only the top 8 tests; the others keep every fixed test
        assert by_col[1] == [Condition(1, OP_EQ, v) for v in (0.0, 1.0, 2.0)]  # one-hot, all categories
        assert by_col[2] == [Condition(2, OP_EQ, 1.0)]  # numeric 0/1 passes through as one test
        assert by_col[3] == [Condition(3, OP_EQ, 1.0)]  # two categories: one test, the second category
    assert by_col[4] == []
    assert any("constant" in n and "'const'" in n for n in binz.notices)
    assert all(c.op == OP_LE for c in by_col[0])


def test_none_passes_binary_columns_and_names_the_others():
    schema = Schema((Column("a", "numeric"), Column("b", "categorical", ("x", "y"))), "t", (0, 1))
    X = np.array([[0, 1], [1, 0], [1, 1.0]])
    binz = fit_discretizer("none", X, np.array([0, 1, 1]), schema)
    assert [c.text(schema) for c in binz.conditions] == ["a = 1", "b = y"]
    X_, y_, schema_ = mixed_table()
    with pytest.raises(ValueError, match=r"not binary: 'age' \(values 20, 21, 22 \.\.\.\)\. Pick"):
        fit_discretizer("none", X_, y_, schema_)
    # categorical columns are one-hot (one test per category), whatever their number of categories
    no_age = Schema(schema_.columns[1:], schema_.target, schema_.classes)
    binz = fit_discretizer("none", X_[:, 1:], y_, no_age)
    assert [c for c in binz.conditions if c.column == 0] == [Condition(0, OP_EQ, v) for v in (0.0, 1.0, 2.0)]


# -- readable text, transform of unseen rows ------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS_WITH_NUMERIC)
def test_text_round_trip_gives_the_same_split(method):
    ds = load_dataset("iris")
    rng = np.random.default_rng(1)
    X = ds.X + rng.normal(scale=1e-3, size=ds.X.shape)  # awkward decimals
    binz = fit_discretizer(method, X, ds.y, ds.schema, n_bins=6 if method != "mdlp" and method != "exact" else None)
    M = binz.transform(X)
    for j, c in enumerate(binz.conditions):
        name, op, num = c.ascii_text(ds.schema).split(" ")
        assert name == ds.schema.columns[c.column].name and op == "<="
        # the threshold as printed splits the training rows exactly as the test does
        np.testing.assert_array_equal(X[:, c.column] <= float(num), M[:, j].astype(bool))
        assert Condition.from_list(json.loads(json.dumps(c.to_list()))) == c


def test_category_text_and_table_rows():
    X, y, schema = mixed_table()
    rows = discretize_table("mdlp", X, y, schema)
    texts = [r["test"] for r in rows]
    assert "colour = blue" in texts and "colour = red" in texts and "sex = m" in texts and "smoker = 1" in texts
    assert all(r["gain"] is not None and r["gain"] >= 0 for r in rows)
    assert all(r["gain"] is None for r in discretize_table("exact", X, y, schema))


@pytest.mark.parametrize("method", METHODS_WITH_NUMERIC)
def test_transform_of_unseen_rows(method):
    X, y, schema = mixed_table()
    binz = fit_discretizer(method, X[:60], y[:60], schema, n_bins=10 if method == "mid" else None)
    new = np.array([[5.0, 2, 1, 0, 5], [99.0, 0, 0, 1, 7], [45.5, 1, 1, 1, 5]])  # outside the range, too
    M = binz.transform(new)
    assert M.shape == (3, len(binz)) and M.dtype == np.uint8
    for j, c in enumerate(binz.conditions):
        for i in range(3):
            v = new[i, c.column]
            assert M[i, j] == (v <= c.value if c.op == OP_LE else v == c.value)


@pytest.mark.parametrize("method", [m for m in DISCRETIZER_NAMES if m != "none"])
def test_a_column_with_gaps_gives_each_test_with_either_side_and_is_missing(method):
    from treeexplorer.discretize.matrix import build_test_matrix
    from treeexplorer.schema import OP_NA, Condition, base_op, missing_true

    X, y, schema = mixed_table()
    Xn = X.copy()
    Xn[[3, 9], 0] = np.nan
    binz = fit_discretizer(method, Xn, y, schema)
    on_age = [c for c in binz.conditions if c.column == 0]
    assert [c for c in on_age if c.op == OP_NA] == [Condition(0, OP_NA, 0.0, True)]
    sides = [c for c in on_age if c.op != OP_NA]
    plain = {(base_op(c.op), c.value) for c in sides if not missing_true(c.op)}
    either = {(base_op(c.op), c.value) for c in sides if missing_true(c.op)}
    assert plain == either and (plain or method == "mdlp") and all(c.shows_missing for c in on_age)
    assert all(not c.shows_missing for c in binz.conditions if c.column != 0)  # complete columns as before
    _, M = build_test_matrix(binz, Xn)
    assert np.array_equal(M, binz.transform(Xn))
    for j, c in enumerate(binz.conditions):
        assert np.array_equal(M[:, j].astype(bool), c.evaluate(Xn))
    na = binz.conditions.index(Condition(0, OP_NA, 0.0, True))
    assert M[3, na] == 1 and M[9, na] == 1 and M[4, na] == 0
    assert any("with missing values ('age')" in n for n in binz.notices)


# -- errors ----------------------------------------------------------------------------------------------------


def test_errors_are_clear():
    X, y, schema = mixed_table()
    Xn = X.copy()
    Xn[[3, 9], 0] = np.inf
    for method in DISCRETIZER_NAMES:
        with pytest.raises(ValueError, match=r"infinite values in 'age' \(2 rows\)"):
            fit_discretizer(method, Xn, y, schema)
    with pytest.raises(ValueError, match="unknown discretizer 'kmeans'"):
        fit_discretizer("kmeans", X, y, schema)
    for method in ("exact", "mdlp", "none"):
        with pytest.raises(ValueError, match=f"n_bins does not apply to the '{method}'"):
            fit_discretizer(method, X, y, schema, n_bins=3)
    with pytest.raises(ValueError, match="positive integer"):
        fit_discretizer("quantile", X, y, schema, n_bins=0)
    with pytest.raises(ValueError, match="applies to the 'mid' discretizer only"):
        fit_discretizer("mdlp", X, y, schema, criterion="gini")
    with pytest.raises(ValueError, match="X_enc has 2 columns but the schema describes 5"):
        fit_discretizer("exact", X[:, :2], y, schema)
    with pytest.raises(ValueError, match="class codes"):
        fit_discretizer("exact", X, y + 5, schema)
    with pytest.raises(ValueError, match="found no test"):
        fit_discretizer("exact", X[:, [4]], y, Schema((schema.columns[4],), "sick", ("no", "yes")))


def test_notices_are_passed_to_the_caller_list():
    X, y, schema = mixed_table()
    seen: list[str] = []
    binz = fit_discretizer("quantile", X, y, schema, n_bins=2, notices=seen)
    assert seen == binz.notices and any("constant" in n for n in seen)


def test_default_bins_are_lowered_to_what_the_columns_have():
    # three distinct values per column: two thresholds at most; the default (4) is lowered with a notice,
    # an explicit n_bins=4 stays an error
    X = np.column_stack([np.arange(12.0) % 3, np.arange(12.0) // 4])
    y = (X[:, 0] > 0).astype(int)
    for method in ("quantile", "uniform"):
        binz = fit_discretizer(method, X, y, numeric_schema(2))
        assert any("default n_bins=4 lowered to 2" in n for n in binz.notices)
        assert sum(c.column == 0 for c in binz.conditions) == 2  # one threshold between each two values
        with pytest.raises(ValueError, match="the most is 2"):
            fit_discretizer(method, X, y, numeric_schema(2), n_bins=4)
