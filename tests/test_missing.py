"""Missing values kept: where a gap goes, learned by every split, stated once (issue 49).

The oracle enumerates every split of the raw features with gaps: a threshold between two present values with the
gaps on either side, and "x is missing"; a binary solver over the ``exact`` discretizer's tests (each twice, a gap
on either side, plus "is missing") searches exactly that space, so its proven optimum must be the oracle's.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from weighted_oracle import oracle_costs

import treeexplorer as tx
from treeexplorer.data import DataError, load_dataset
from treeexplorer.export import path_conditions, rules_text, tree_from_json, tree_json

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def gap_tests(X: np.ndarray) -> np.ndarray:
    """Every split of a float matrix with gaps as 0/1 columns (see the module docstring)."""
    cols = []
    for j in range(X.shape[1]):
        x = X[:, j]
        gap = np.isnan(x)
        v = np.unique(x[~gap])
        for a, b in zip(v[:-1], v[1:]):
            below = x <= (a + b) / 2
            cols += [below, below | gap]
        if gap.any():
            cols.append(gap)
    return np.array(cols, dtype=bool).T.reshape(X.shape[0], len(cols))


@st.composite
def gappy_tables(draw, max_rows=18, max_features=3):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(4, max_rows))
    f = draw(st.integers(1, max_features))
    k = draw(st.integers(2, 3))
    X = rng.integers(0, draw(st.integers(2, 5)), (n, f)).astype(np.float64)
    X[rng.random((n, f)) < draw(st.sampled_from([0.1, 0.25, 0.5]))] = np.nan
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)  # every class present
    return X, y, k


def frame(X, y) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    df["y"] = [f"c{v}" for v in y]
    return df


def _solve(df, target="y", **kw):
    return tx.solve(df, target=target, test_size=0, **kw)


@SETTINGS
@given(data=gappy_tables(), depth=st.integers(1, 3))
def test_murtree_over_both_sides_reaches_the_raw_oracle_at_every_budget(data, depth):
    X, y, k = data
    df = frame(X, y)
    if df.drop(columns="y").notna().sum().min() == 0 or np.all(np.nanmax(X, axis=0) == np.nanmin(X, axis=0)):
        return  # an empty column is left out, a constant one gives no threshold: the oracle's space differs
    ds = load_dataset(df, "y")
    expect = oracle_costs(gap_tests(ds.X), ds.y, ds.schema.n_classes, depth)
    front = _solve(df, solver="murtree", discretizer="exact", max_depth=depth)
    assert front.status == "done" and all(t.optimal for t in front.trees)
    for b in range(expect.size):
        best = min(t.metrics["train_errors"] for t in front.trees if t.metrics["splits"] <= b)
        assert best == expect[b], (b, best, expect)
    for t in front.trees:  # the metrics are the tree's own, gaps routed as it says
        assert int((codes(t.tree, ds.X) != ds.y).sum()) == t.metrics["train_errors"]


@SETTINGS
@given(data=gappy_tables(max_rows=30))
def test_predictions_agree_between_the_tree_its_json_and_its_rules(data):
    X, y, k = data
    df = frame(X, y)
    splittable = [np.isnan(x).any() or len(np.unique(x)) > 1 for x in X.T]
    assume(df.drop(columns="y").notna().sum().min() > 0 and any(splittable))  # some test to make
    ds = load_dataset(df, "y")
    front = _solve(df, solver="murtree", discretizer="quantile", max_depth=2)
    rng = np.random.default_rng(0)
    new = ds.X.copy()
    new[rng.random(new.shape) < 0.3] = np.nan  # gaps where training had none too (the larger-branch rule)
    for t in front.trees:
        tree = t.tree
        back = tree_from_json(tree_json(tree))
        assert np.array_equal(codes(back, new), codes(tree, new))
        assert np.array_equal(back.op, tree.op) and np.array_equal(back.shows_missing, tree.shows_missing)
        # on the training rows every gap met a node that learned its side, so the rules say where each goes
        assert np.array_equal(rules_predict(tree, ds.X), codes(tree, ds.X))


def codes(tree, X) -> np.ndarray:
    return tree.prediction[tree.apply(X)]


def rules_predict(tree, X) -> np.ndarray:
    """Evaluate a tree's rules text (one rule per leaf, as exported) on rows of ``X``."""
    names = tree.schema.feature_names
    out = np.full(X.shape[0], -1)
    for leaf, path in tree.paths():
        ok = np.ones(X.shape[0], dtype=bool)
        for text in path_conditions(tree, path):
            ok &= _holds(text, X, names, tree.schema)
        assert not (ok & (out >= 0)).any(), "two rules hold for one row"
        out[ok] = tree.prediction[leaf]
    assert (out >= 0).all(), "no rule holds for some row"
    return out


def _holds(text: str, X, names, schema) -> np.ndarray:
    gap_ok = text.endswith(" or missing")
    body = text[: -len(" or missing")] if gap_ok else text
    body = body[1:-1] if body.startswith("(") else body
    for j in sorted(range(len(names)), key=lambda j: -len(names[j])):
        if f" {names[j]} " in f" {body} ":
            x = X[:, j]
            break
    gap = np.isnan(x)
    if body.endswith(" is missing"):
        return gap
    if body.endswith(" is present"):
        return ~gap
    parts = body.split()
    with np.errstate(invalid="ignore"):
        if len(parts) == 5:  # lo < x <= hi
            held = (x > float(parts[0])) & (x <= float(parts[4]))
        elif parts[1] == "<=":
            held = x <= float(parts[2])
        elif parts[1] == ">":
            held = x > float(parts[2])
        elif parts[1] == "=":  # a 0/1 column's test
            held = x == float(parts[2])
        elif parts[1] == "!=":
            held = x != float(parts[2])
        else:
            raise AssertionError(f"unexpected rule text {text!r}")
    return (held & ~gap) | (gap if gap_ok else False)


def test_a_tree_from_complete_rows_sends_a_gap_to_its_larger_branch():
    ds = load_dataset("iris")
    front = tx.solve("iris", solver="murtree", max_depth=2, test_size=0)
    tree = front.best("train_accuracy").tree
    assert not tree.shows_missing.any()  # no training gap: no node says where a gap goes
    sizes = tree.counts.sum(axis=1)
    for k in np.flatnonzero(tree.column >= 0):
        row = ds.X[:1].copy()
        row[0, tree.column[k]] = np.nan
        bigger = tree.true_child[k] if sizes[tree.true_child[k]] >= sizes[tree.false_child[k]] else tree.false_child[k]
        assert _step(tree, k, row[0]) == bigger
    assert "more training rows" in rules_text(tree)
    d = json.loads(tree_json(tree))
    assert {n["missing_rule"] for n in d["nodes"] if "test" in n} == {"larger branch"}


def _step(tree, k, row):
    """The child of node ``k`` a row goes to (the kernels' own rule for the node's op)."""
    from treeexplorer.solvers._kernels.predict import holds

    x = float(row[tree.column[k]])
    return tree.true_child[k] if holds(int(tree.op[k]), x, float(tree.value[k])) else tree.false_child[k]


def test_penguins_keeps_its_gaps_and_a_leaf_reads_or_missing():
    import palmerpenguins

    df = palmerpenguins.load_penguins()
    front = tx.solve(df, target="species", solver="murtree", discretizer="quantile", max_depth=2, test_size=0)
    assert front.n_train == len(df)  # 344: no row dropped
    assert any("kept 11 row(s) with missing values" in n for n in front.notices)
    rules = [rules_text(t.tree) for t in front.trees]
    assert any(" or missing THEN " in r or " or missing AND " in r for r in rules)
    tree = front.best("train_accuracy").tree
    gap_row = df.drop(columns="species").iloc[[3]]  # row 4 of the table: every measurement missing
    est = tx.TreeExplorerClassifier(solver="murtree", discretizer="quantile", max_depth=2)
    est.fit(df.drop(columns="species"), df["species"])
    assert est.predict(gap_row).shape == (1,)
    assert tree.n_splits >= 1


def test_bad_gaps_get_one_line_each(tmp_path):
    df = pd.DataFrame({"a": [1.0, 2, 3, 4], "e": [np.nan] * 4, "y": ["p", "q", None, "q"]})
    ds = load_dataset(df, "y")
    assert ds.n_rows == 3 and ds.schema.feature_names == ["a"]
    assert any("dropped 1 row(s) whose target 'y' is missing (row 3)" in n for n in ds.notices)
    assert any("left out 1 column(s) with no value at all: 'e'" in n for n in ds.notices)
    marked = pd.DataFrame(
        {"a": ["1", "?", "3", "4", "5", "6", "7", "8", "9", "?  "], "b": [1, -999, 3, -999, 5] * 2, "y": list("pq") * 5}
    )
    with pytest.raises(DataError, match=r"na_values=\['\?'\], CLI --na-values '\?'"):
        load_dataset(marked, "y")
    ds = load_dataset(marked, "y", na_values=["?"])
    assert np.isnan(ds.X[:, 0]).sum() == 2
    assert any("-999" in n and "na_values" in n for n in ds.notices)
    ds = load_dataset(marked, "y", na_values=["?", -999])
    assert np.isnan(ds.X).sum(axis=0).tolist() == [2, 4]
    with pytest.raises(DataError, match="every feature column is empty"):
        load_dataset(pd.DataFrame({"e": [np.nan, np.nan], "y": ["p", "q"]}), "y")


def test_the_raw_solvers_place_the_gaps_and_contree_is_never_worse_than_cart():
    import palmerpenguins

    df = palmerpenguins.load_penguins()
    ds = load_dataset(df, "species")
    fronts = {name: _solve(df, "species", solver=name, max_depth=2) for name in ("cart", "dpdt", "contree")}
    for name, front in fronts.items():
        assert front.n_train == len(df), name  # every row, gaps and all
        for t in front.trees:  # the metrics count each gap where the tree sends it
            assert int((codes(t.tree, ds.X) != ds.y).sum()) == t.metrics["train_errors"], name
    exact = fronts["contree"]
    assert all(t.optimal for t in exact.trees) and "a missing value on either side" in exact.optimality
    for greedy in (fronts["cart"], fronts["dpdt"]):
        for t in greedy.trees:
            best = min(e.metrics["train_errors"] for e in exact.trees if e.metrics["splits"] <= t.metrics["splits"])
            assert best <= t.metrics["train_errors"]
    # a tree that learned a gap's side says so in its rules
    assert any("or missing" in rules_text(t.tree) for f in fronts.values() for t in f.trees)


def test_cart_on_penguins_with_gaps_is_scikit_learns_tree():
    """The app's route (one-hot categories, a gap NaN in each of their tests) against DecisionTreeClassifier on
    the same matrix: the same training errors at every depth (scikit-learn breaks ties by a random feature order:
    one of its seeds grows our tree)."""
    import palmerpenguins
    from sklearn.tree import DecisionTreeClassifier

    from treeexplorer.encode import feature_matrix, numeric_features

    df = palmerpenguins.load_penguins()
    ds = load_dataset(df, "species")
    M = feature_matrix(numeric_features(ds.schema), ds.X)
    assert np.isnan(M).any()
    for depth in (1, 2, 3):
        front = _solve(df, "species", solver="cart", max_depth=depth)
        ours = min(t.metrics["train_errors"] for t in front.trees)
        theirs = [
            int((DecisionTreeClassifier(max_depth=depth, random_state=s).fit(M, ds.y).predict(M) != ds.y).sum())
            for s in range(20)
        ]
        assert ours in theirs, (depth, ours, theirs)


def test_the_estimator_takes_nan_arrays_and_refuses_infinity():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    X[::9, 0] = np.nan
    clf = tx.TreeExplorerClassifier(solver="contree", max_depth=2).fit(X, y)
    assert clf.score(X, y) > 0.9 and clf.predict(X[::9]).shape == (9,)
    X[0, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.predict(X[:3])


def test_mids_anytime_loop_gives_the_gap_tests_too():
    import palmerpenguins

    df = palmerpenguins.load_penguins()
    front = _solve(df, "species", solver="murtree", discretizer="mid", mid_budget=2, max_depth=2)
    assert "placing missing values" in front.optimality
    assert any(t.tree.shows_missing.any() for t in front.trees)
