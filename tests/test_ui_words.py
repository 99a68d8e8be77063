"""The app's messages name its controls, not the library's arguments (treeexplorer.ui.jobs.app_words)."""

from __future__ import annotations

import pandas as pd
import pytest

from treeexplorer.data import DataError, load_dataset
from treeexplorer.target import guess_target
from treeexplorer.ui.jobs import app_words


def test_the_missing_values_message_names_the_checkbox():
    """A solver that cannot place gaps (a plug-in's) names the solvers that can, and the app's checkbox."""
    from treeexplorer.api import prepare
    from treeexplorer.encode import check_missing_support
    from treeexplorer.registry import SolverSpec

    df = pd.DataFrame({"a": [1.0, None, 3.0, 4.0], "label": ["x", "y", "x", "y"]})
    spec = SolverSpec("gapless", "numeric", lambda *a, **k: None)
    with pytest.raises(ValueError) as info:
        check_missing_support(spec, prepare(df, "label"))
    text = app_words(str(info.value))
    assert "drop_missing" not in text and "--drop-missing" not in text and "use cart, dpdt" in text
    assert text.endswith("drop those rows: tick **Drop rows with missing values** (Data card)")


def test_the_many_classes_message_names_the_select_and_the_button():
    df = pd.DataFrame({"a": range(60), "y": [i * 0.37 for i in range(60)]})
    with pytest.raises(DataError) as info:
        load_dataset(df, "y")
    text = app_words(str(info.value))
    assert "allow_many_classes" not in text and "--target" not in text
    assert "Choose another **Target column** (Data card), or confirm it with the **Use ... anyway** button" in text


def test_an_ambiguous_target_guess_asks():
    df = pd.DataFrame({"colour": ["r", "g", "b", "r"] * 5, "shape": ["o", "x", "o", "x"] * 5, "v": range(20)})
    guess = guess_target(df)
    if not guess.ambiguous:
        pytest.skip("the rule found one clear target here")
    text = app_words(guess.describe())
    assert "could also be the target: if one of them is, choose it under **Target column**" in text
    assert app_words(text) == text  # applied twice: unchanged


def test_the_time_limit_message_names_the_field():
    from treeexplorer.solvers import time_limit_seconds

    with pytest.raises(ValueError) as info:
        time_limit_seconds(-1)
    text = app_words(str(info.value))
    assert text.startswith(
        "**Time limit (s)** must be a positive number of seconds up to 1e+09 (or empty for no limit)"
    )
    assert "time_limit" not in text and app_words(text) == text
