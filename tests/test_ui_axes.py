"""The Pareto plot's accuracy frame and the "errors above the best" view (treeexplorer.ui.axes)."""

from __future__ import annotations

import math

import pandas as pd

from treeexplorer.ui.axes import accuracy_window, clip_below, errors_above_best


def frame(rows):
    return pd.DataFrame(rows, columns=["run", "splits", "train_accuracy", "test_accuracy", "train_errors"])


# four penguin-like fronts: the 0-split tree at 0.44, every tree with a split within 0.95-1
FRONTS = frame(
    [
        ("a", 0, 0.44, 0.43, 186),
        ("a", 1, 0.95, 0.94, 17),
        ("a", 3, 0.98, 0.96, 7),
        ("b", 0, 0.44, 0.43, 186),
        ("b", 2, 0.97, 0.955, 10),
        ("b", 3, 0.985, 0.95, 5),
        ("b", 7, 1.0, 0.96, 0),
    ]
)


def test_the_frame_holds_the_trees_with_a_split_and_leaves_the_0_split_tree_below():
    start, end = accuracy_window(FRONTS)
    assert 0.9 < start < 0.94  # the lowest with a split is 0.94 (held-out): a margin below it
    assert 1.0 < end < 1.01
    span = 1.0 - 0.94
    assert math.isclose(start, 0.94 - 0.08 * span) and math.isclose(end, 1.0 + 0.08 * span)
    # without the held-out points, the train accuracies alone are framed
    start, _ = accuracy_window(FRONTS.drop(columns="test_accuracy"))
    assert math.isclose(start, 0.95 - 0.08 * 0.05)


def test_other_curves_widen_the_frame_and_nan_is_ignored():
    start, _ = accuracy_window(FRONTS, extra=[0.90, float("nan")])  # a CV mean at one split
    assert math.isclose(start, 0.90 - 0.08 * 0.10)
    df = FRONTS.assign(test_accuracy=float("nan"))  # no held-out rows
    assert math.isclose(accuracy_window(df)[0], 0.95 - 0.08 * 0.05)


def test_no_frame_when_nothing_lies_below_it_or_no_tree_has_a_split():
    assert accuracy_window(FRONTS[FRONTS.splits >= 1]) is None
    assert accuracy_window(FRONTS[FRONTS.splits == 0]) is None
    assert accuracy_window(FRONTS.iloc[:0]) is None


def test_a_single_accuracy_still_gets_an_axis_of_min_span():
    df = frame([("a", 0, 0.5, float("nan"), 5), ("a", 1, 0.9, float("nan"), 1), ("b", 1, 0.9, float("nan"), 1)])
    start, end = accuracy_window(df, min_span=0.02)
    assert start < 0.89 and end > 0.91 and math.isclose(end - start, 0.02 * 1.16)


def test_points_below_the_frame_go_on_its_edge():
    window = (0.9, 1.0)
    ys, moved = clip_below([0.44, 0.95, float("nan"), 0.9], window)
    assert moved == [True, False, False, False]
    assert math.isclose(ys[0], 0.902) and ys[1] == 0.95 and ys[3] == 0.9
    assert clip_below([0.44], None) == ([0.44], [False])


def test_errors_above_the_best_of_at_most_the_same_complexity():
    assert errors_above_best(FRONTS, "splits") == [0, 0, 2, 0, 0, 0, 0]  # a: 7 errors at 3 splits, b: 5
    df = frame([("a", 1, 0, 0, 20), ("b", 1, 0, 0, 17), ("a", 2, 0, 0, 18), ("b", 3, 0, 0, 9), ("a", 3, 0, 0, 12)])
    # level 1: best 17; level 2: best so far 17 (a's 18 is 1 above); level 3: best 9
    assert errors_above_best(df, "splits") == [3, 0, 1, 0, 3]
    assert errors_above_best(df.iloc[:0], "splits") == []


def test_the_figure_frames_pins_and_counts_in_whole_numbers():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "browser"))
    import fakes  # registers uigreedy, a stand-in solver

    from treeexplorer.ui.axes import EDGE_MARKER
    from treeexplorer.ui.controller import Controller, RunSettings
    from treeexplorer.ui.paretofig import ParetoFigure

    fakes.register_fakes()
    c = Controller()
    try:
        assert c.load_bundled("iris")
        runs = [c.run_sync(RunSettings("uigreedy", {"max_depth": 3}), timeout=20) for _ in range(2)]
        fig = ParetoFigure()
        fig.update(runs)
        start, end = fig.window
        assert fig.figure.y_range.start == start and fig.figure.y_range.end == end
        data = fig.points.data
        for i, (splits, acc) in enumerate(zip(data["splits"], data["train_accuracy"])):
            if acc < start:  # the 0-split trees: on the bottom edge as a pin pointing down
                assert splits == 0 and data["marker"][i] == EDGE_MARKER and data["y"][i] > start
            else:
                assert data["y"][i] == acc
        assert len(fig.below) == 2  # one 0-split tree per run
        assert fig.figure.xaxis[0].ticker.min_interval == 1  # splits: never a tick at 0.5
        fig.update(runs, x="avg_tests")
        assert fig.figure.xaxis[0].ticker.min_interval == 0
        fig.update(runs, x="splits", whole=True)
        assert fig.window is None and fig.below == [] and data is not fig.points.data
        assert fig.points.data["y"] == fig.points.data["train_accuracy"]
        fig.update(runs, y="excess")  # the same trees twice: every tree equals the best
        assert set(fig.points.data["y"]) == {0} and fig.figure.yaxis[0].ticker.min_interval == 1
        assert fig.tests.data["x"] == []  # held-out accuracy is not on the training errors' scale
    finally:
        c.close()
        fakes.unregister_fakes()


def test_errors_above_the_best_compare_a_tree_only_with_trees_of_its_kind():
    # a multiway run (one 3-way split: 9 errors) beside a binary run (1 split: 20 errors, 2 splits: 9)
    df = frame([("m", 1, 0, 0, 9), ("b", 1, 0, 0, 20), ("b", 2, 0, 0, 9)])
    assert errors_above_best(df, "splits") == [0, 11, 0]  # as one kind, the binary split is 11 above
    df["multiway"] = [True, False, False]
    assert errors_above_best(df, "splits") == [0, 0, 0]  # each the best of its kind at its splits
    df["multiway"] = [False, False, False]
    assert errors_above_best(df, "splits") == [0, 11, 0]
