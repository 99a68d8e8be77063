"""The pipeline entry point: MID's anytime loop and its streamed best-so-far fronts."""

import numpy as np

import treeexplorer
from treeexplorer.front import Front
from treeexplorer.schema import format_number


def test_mid_anytime_streams_growing_partial_fronts():
    events = []
    front = treeexplorer.solve(
        "iris", solver="murtree", discretizer="mid", mid_budget=60, max_depth=2, progress=events.append
    )
    steps = [e for e in events if e["phase"] == "anytime"]
    ns = [e["mid_n"] for e in steps]  # 1, 2, 4, ... doubling, the last one capped at all ranked tests
    assert len(ns) >= 4 and front.status == "done"
    assert ns[:-1] == [2**i for i in range(len(ns) - 1)] and ns[-2] < ns[-1] <= 2 * ns[-2]
    partials = [e["partial_front"] for e in steps]
    assert all(isinstance(p, Front) and p.status == "running" for p in partials)
    # more tests never hurt the best depth-2 tree; the final front is the last partial one, proven
    best = [max(t.metrics["train_accuracy"] for t in p.trees) for p in partials]
    assert best == sorted(best)
    assert np.isclose(max(t.metrics["train_accuracy"] for t in front.trees), best[-1])
    assert len(front.trees) == len(partials[-1].trees)


def test_format_number_handles_infinities():
    assert [format_number(v) for v in (np.inf, -np.inf, np.nan, 2.45, 42.0)] == ["inf", "-inf", "nan", "2.45", "42"]


def test_contradictory_rows_are_named_as_in_the_file(tmp_path):
    # rows 2 and 5 of the file (after the header) agree on x but not on y; row 3 is dropped (missing value),
    # and held-out rows must not shift the numbering either
    import pandas as pd
    import pytest
    from treeexplorer.solvers.sat import ContradictoryExamples

    df = pd.DataFrame({"x": [0, 1, None, 0, 1, 0, 0, 1, 0, 1], "y": list("abaabababa")})
    df.loc[9, "x"], df.loc[9, "y"] = 1, "b"
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ContradictoryExamples) as exc:
        treeexplorer.solve(path, solver="sat", discretizer="none", drop_missing=True)
    rows_x1 = [i + 1 for i in range(10) if df.x[i] == 1]
    rows_x0 = [i + 1 for i in range(10) if df.x[i] == 0]
    assert sorted(exc.value.rows.tolist()) == sorted(rows_x1 + rows_x0)
    assert "counted from 1 after the header" in str(exc.value) and "conflicts='majority'" in str(exc.value)
    with pytest.raises(ContradictoryExamples) as exc:
        treeexplorer.solve(path, solver="sat", discretizer="none", drop_missing=True, test_size=0.3, seed=1)
    assert set(exc.value.rows.tolist()) <= set(rows_x1 + rows_x0) and 3 not in exc.value.rows
