"""Facts the app states in several places come from one home: the held-out bounds, the default time limit, the
upload types, the split budgets of a depth, and a run's legend words."""

from __future__ import annotations

import inspect

import pytest

import treeexplorer as tx
from treeexplorer.tree import max_splits
from treeexplorer.ui import defaults
from treeexplorer.ui.controller import Controller, RunSettings, parse_upload
from treeexplorer.ui.explorer import Explorer
from treeexplorer.ui.progress import describe
from treeexplorer.ui.rashomonview import RashomonSession
from treeexplorer.ui.sidebar import DataInputs, SolverInputs
from treeexplorer.ui.sweepview import SweepSession, SweepView
from treeexplorer.ui.viewkit import ViewContext


def test_the_held_out_bounds_are_the_sliders_ends():
    ctx = ViewContext(Controller())
    slider = DataInputs(ctx, "iris", 0.25).test_size_w
    assert (slider.start, slider.end) == defaults.HELD_OUT_RANGE
    assert Controller.param.test_size.bounds == defaults.HELD_OUT_RANGE
    assert Explorer.param.test_size.bounds == defaults.HELD_OUT_RANGE
    assert Controller().test_size == Explorer.param.test_size.default == defaults.DEFAULT_HELD_OUT


def test_the_default_time_limit_is_one_number():
    ctx = ViewContext(Controller())
    assert SolverInputs(ctx, "cart").time_w.value == defaults.DEFAULT_TIME_LIMIT
    assert RunSettings("cart").time_limit == defaults.DEFAULT_TIME_LIMIT
    assert SweepView(Controller()).time_w.value == defaults.DEFAULT_TIME_LIMIT
    for fn in (SweepSession.start, RashomonSession.start, Explorer.find_alternatives):
        assert inspect.signature(fn).parameters["time_limit"].default == defaults.DEFAULT_TIME_LIMIT


def test_upload_types_are_the_pickers_accept():
    ctx = ViewContext(Controller())
    data = DataInputs(ctx, "iris", 0.25)
    assert data.upload_w.accept == data.test_upload_w.accept == ",".join(defaults.UPLOAD_SUFFIXES)
    with pytest.raises(tx.DataError, match="unsupported file type .xlsx"):
        parse_upload(b"a,b\n1,2\n", "t.xlsx")


@pytest.mark.parametrize("depth, nodes, want", [(0, None, 0), (1, None, 1), (3, None, 7), (3, 4, 4), (2, 9, 3)])
def test_max_splits_is_the_budget_rule(depth, nodes, want):
    assert max_splits(depth, nodes) == want


def test_progress_counts_budgets_by_the_same_rule():
    text, fraction = describe({"phase": "murtree", "budgets_done": 4}, {"max_depth": 3})
    assert "4 of 8 split budgets" in text and fraction == 0.5
    text, _ = describe({"phase": "murtree", "budgets_done": 2}, {"max_depth": 3, "max_nodes": 2})
    assert "2 of 3 split budgets" in text


def test_fronts_opened_with_labels_keep_them_as_a_field():
    front = tx.solve("iris", solver="cart", max_depth=2, test_size=0.25)
    c = Controller()
    assert c.load_bundled("iris")
    (run,) = c.add_fronts([front], labels=["my front"])
    assert run.settings.name == "my front" and run.settings.label() == "my front"
    assert run.label == f"#{run.id} my front"
    assert "label" not in vars(run.settings)  # nothing bolted onto the instance
    assert RunSettings("cart", {"max_depth": 2}).label() == "cart · depth=2"
