"""The app's weighted objective without a browser: "Weigh the classes", a weight column, remembered per table,
the balanced-accuracy axis and the objective in the figures."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import fakes  # noqa: E402,F401  (registers uigreedy / uislow / uifail)

from treeexplorer.ui.axes import EDGE_MARKER  # noqa: E402


def imbalanced_csv(n=600, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    sick = rng.random(n) < 0.05
    df = pd.DataFrame(
        {
            "marker": np.round(rng.normal(size=n) + 1.8 * sick, 3),
            "other": np.round(rng.normal(size=n), 3),
            "w": rng.integers(1, 4, n),
            "note": np.where(rng.random(n) < 0.5, "a", "b"),
            "diagnosis": np.where(sick, "sick", "well"),
        }
    )
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


@pytest.fixture(scope="module")
def explorer():
    from treeexplorer.ui import Explorer

    fakes.register_fakes()
    e = Explorer(solver="cart")
    yield e
    e.close()
    fakes.unregister_fakes()


def test_balanced_weights_in_the_app(explorer):
    c = explorer.controller
    data = explorer.sidebar.data
    explorer.upload_w.param.update(filename="sick.csv", value=imbalanced_csv())
    assert c.dataset_name == "sick" and c.target == "diagnosis" and not explorer.error_w.visible
    plain = explorer.run_now(wait=True)
    assert plain.front.weights == {}
    data.weigh_w.value = "balanced"
    assert c.class_weight_mode == "balanced" and c.class_weight() == "balanced"
    run = explorer.run_now(wait=True)
    assert run is not None and "balanced" in run.label
    assert run.front.weights["objective"] == "the cost with balanced class weights"
    # not the majority-class tree: the split trees' balanced accuracy is well above the root's 0.5
    split = [t for t in run.front if t.metrics["splits"] >= 1]
    assert max(t.metrics["train_balanced_accuracy"] for t in split) > 0.7
    explorer.front.redraw()
    assert explorer.front.y_w.value == "balanced"  # the axis follows what the run optimised
    assert explorer.pareto.figure.yaxis.axis_label == "Balanced accuracy"
    pts = explorer.pareto.points.data
    mine = [i for i, r in enumerate(pts["run_id"]) if r == run.id]
    assert mine and all(pts["y"][i] == pytest.approx(pts["train_bacc"][i]) for i in mine if pts["splits"][i] >= 1)
    assert all(pts["objective"][i] == "the cost with balanced class weights" for i in mine)
    # the per-class route: one line for a class that is not one
    data.weigh_w.value = "per class"
    data.class_weights_w.value = "ill=3"
    assert explorer.run_now(wait=True) is None and "'ill' is not a class" in c.error
    c.error = ""
    data.class_weights_w.value = "sick=19"
    run = explorer.run_now(wait=True)
    assert run.front.weights["class_weight"] == {"sick": 19.0, "well": 1.0}
    # not balanced: the run optimised the cost, and the axis shows it (per unit of weight, 0 at the top)
    explorer.front.redraw()
    fig = explorer.pareto.figure
    assert explorer.front.y_w.value == "cost" and fig.yaxis.axis_label.startswith("Cost per unit of weight")
    top = explorer.pareto._cost_top
    assert top == 1.0 and fig.yaxis[0].formatter.args == {"top": top}  # ticks read top - y: the cost
    pts = explorer.pareto.points.data
    mine = [i for i, r in enumerate(pts["run_id"]) if r == run.id]
    total = run.front.weights["train_weight"]
    drawn = [i for i in mine if pts["marker"][i] != EDGE_MARKER]  # not moved to the frame's bottom edge
    assert drawn and all(pts["y"][i] == pytest.approx(top - pts["train_cost"][i] / total) for i in drawn)
    best = min(drawn, key=lambda i: pts["train_cost"][i])
    assert pts["y"][best] == max(pts["y"][i] for i in drawn)  # the cheapest tree is drawn highest
    explorer.front.y_w.value = "accuracy"
    assert fig.yaxis[0].formatter is not None and not hasattr(fig.yaxis[0].formatter, "code")


def test_weight_column_and_settings_remembered_per_table(explorer):
    c = explorer.controller
    data = explorer.sidebar.data
    if c.dataset_name != "sick":
        explorer.upload_w.param.update(filename="sick.csv", value=imbalanced_csv())
    data.weigh_w.value = "balanced"
    data.weight_column_w.value = "note"  # text: refused in one line, the weights stay as they were
    assert "weight column 'note' is not numeric" in c.error and c.weight_column == ""
    assert data.weight_column_w.value.startswith("(none")
    c.error = ""
    data.weight_column_w.value = "w"
    assert c.weight_column == "w" and "w" not in c.dataset.schema.feature_names
    run = explorer.run_now(wait=True)
    assert run.front.weights["sample_weight"] == "weight column 'w'"
    explorer.dataset_w.value = "iris"  # another table: its own (none yet)
    assert c.dataset_name == "iris" and c.weight_column == "" and c.class_weight_mode == "none"
    assert data.weigh_w.value == "none"
    explorer.upload_w.param.update(filename="sick (again).csv", value=imbalanced_csv())  # back: as left
    assert c.weight_column == "w" and c.class_weight_mode == "balanced"
    assert data.weigh_w.value == "balanced" and data.weight_column_w.value == "w"
