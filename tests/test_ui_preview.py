"""The data preview: columns, types, missing values and class balance, shown when its card is opened."""

from __future__ import annotations

import pandas as pd

from treeexplorer.data import load_dataset
from treeexplorer.ui.preview import preview_markdown


def test_preview_lists_every_column_with_its_type_range_missing_and_the_classes():
    df = pd.DataFrame(
        {
            "age": [20, 30, None, 40, 50, 60],
            "colour": ["red", "blue", "red", "green", "blue", "red"],
            "label": ["a", "a", "b", "a", "b", "a"],
        }
    )
    ds = load_dataset(df, target="label", drop_missing=True)
    md = preview_markdown(ds, {"age": 1})
    assert "5 rows, 2 feature columns" in md
    assert "| age | numeric | 5 | 20 … 60 | 1 |" in md
    assert "| colour | categorical | 3 | blue, green, red | 0 |" in md
    assert "**Classes** (label): a 4 (80%), b 1 (20%)" in md  # the row missing its age was a b
    # once the rows are dropped, the table shown has no missing value left, and the file's count is named
    md = preview_markdown(ds, {"age": 1}, dropped=1)
    assert "| age | numeric | 5 | 20 … 60 | 0 |" in md
    assert "1 rows with missing values dropped (in the file: age 1); none are left." in md


def test_the_explorer_fills_the_preview_when_opened_and_follows_the_data():
    from treeexplorer.ui import Explorer

    e = Explorer(dataset="iris", run_default=False)
    assert e.preview_card.objects == [] and e.preview_pane.object == ""
    e.preview_card.collapsed = False
    assert "sepal_length" in e.preview_pane.object and "setosa 50 (33%)" in e.preview_pane.object
    e.controller.load_bundled("car")
    assert "buying" in e.preview_pane.object and "unacc 1,210" in e.preview_pane.object
