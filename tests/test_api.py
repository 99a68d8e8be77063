"""The pipeline entry point: MID's anytime loop and its streamed best-so-far fronts."""

import numpy as np

import treeexplorer
from treeexplorer.front import Front
from treeexplorer.schema import format_number


def test_mid_anytime_streams_growing_partial_fronts():
    events = []
    front = treeexplorer.solve("iris", solver="murtree", discretizer="mid", mid_budget=60, max_depth=2,
                               progress=events.append)
    steps = [e for e in events if e["phase"] == "anytime"]
    ns = [e["mid_n"] for e in steps]  # 1, 2, 4, ... doubling, the last one capped at all ranked tests
    assert len(ns) >= 4 and front.status == "done"
    assert ns[:-1] == [2 ** i for i in range(len(ns) - 1)] and ns[-2] < ns[-1] <= 2 * ns[-2]
    partials = [e["partial_front"] for e in steps]
    assert all(isinstance(p, Front) and p.status == "running" for p in partials)
    # more tests never hurt the best depth-2 tree; the final front is the last partial one, proven
    best = [max(t.metrics["train_accuracy"] for t in p.trees) for p in partials]
    assert best == sorted(best)
    assert np.isclose(max(t.metrics["train_accuracy"] for t in front.trees), best[-1])
    assert len(front.trees) == len(partials[-1].trees)


def test_format_number_handles_infinities():
    assert [format_number(v) for v in (np.inf, -np.inf, np.nan, 2.45, 42.0)] == ["inf", "-inf", "nan", "2.45",
                                                                                    "42"]
