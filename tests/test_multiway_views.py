"""Multiway trees in the app's views: the Bokeh tree view, the HoloViews view, the compare view, metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treeexplorer.api import solve


@pytest.fixture(scope="module")
def front():
    rng = np.random.default_rng(5)
    n = 120
    df = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue", "black"], n),
            "size": rng.choice(["S", "M", "L"], n),
            "age": rng.integers(20, 60, n),
        }
    )
    df["y"] = np.where(df["colour"].isin(["red", "blue"]) ^ (df["size"] == "L") ^ (df["age"] > 50), "p", "q")
    return solve(df, "y", solver="branches", discretizer="quantile", n_bins=3, lambdas="0.05,0.02,0.01", test_size=0)


def multi_entries(front):
    out = [t for t in front if t.tree.has_multiway]
    assert len(out) >= 2
    return out


def test_bokeh_view_draws_every_branch(front):
    from treeexplorer.render.bokehview import TreeFigure

    entry = multi_entries(front)[-1]
    tree = entry.tree
    fig = TreeFigure()
    fig.show(tree)
    n_edges = sum(len(tree.child_list(int(k))) for k in tree.reachable())
    assert len(fig.sources["edges"].data["x0"]) == n_edges == len(tree.reachable()) - 1
    labels = set(fig.sources["elabels"].data["text"])
    multi = [int(k) for k in tree.reachable() if tree.is_multi(int(k))]
    cats = {tree.edge_label(k, c) for k in multi for c in tree.child_list(k)}
    assert cats <= labels and cats & {"red", "green", "blue", "black", "S", "M", "L"}
    tests = fig.sources["boxes"].data["test"]
    assert any("one per category" in t for t in tests)


def test_compare_and_metrics(front):
    from treeexplorer.ui.views import compare_markdown, metrics_frame, rules_markdown

    a, b = multi_entries(front)[:2]
    text = compare_markdown(a, b)
    assert f"splits: {a.metrics['splits']} → {b.metrics['splits']}" in text
    assert "colour = " in text or "size = " in text
    rules = rules_markdown(b)
    assert any(" = " in line for line in rules.splitlines())
    frame = metrics_frame(b, front)
    info = frame.loc[frame.metric == "solver info", "value"].iloc[0]
    assert "multiway" in info
    # the front's metrics count a multiway node as one split and one test per sample
    for t in front:
        assert t.metrics["splits"] == t.tree.n_splits
        assert t.metrics["leaves"] == len(t.tree.leaves)
