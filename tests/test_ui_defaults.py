"""Facts the app states in several places come from one home: the held-out bounds, the default time limit, the
upload types, the split budgets of a depth, and a run's legend words."""

from __future__ import annotations

import inspect
import math
import sys
import threading
from pathlib import Path

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


@pytest.mark.parametrize("bad", [math.inf, math.nan, -1.0])
def test_every_background_start_checks_its_limit_the_one_way(bad):
    """The exact front, the alternatives and a sweep refuse a limit that is not a positive finite number with the
    library's one message, before any job (and its timer) starts."""
    threads = threading.active_count()
    c = Controller()
    assert c.exact.start(3, time_limit=bad) is None and c.exact.job is None
    assert "time_limit must be a positive, finite number of seconds" in c.error
    session = RashomonSession(lambda: None)
    assert session.start(None, None, time_limit=bad) is None and session.job is None
    assert "time_limit must be a positive, finite number of seconds" in session.status
    sweep = SweepSession(c)
    assert not sweep.start(["cart"], [None], [2], time_limit=bad) and sweep.job is None
    assert "time_limit must be a positive, finite number of seconds" in sweep.error
    assert threading.active_count() == threads


@pytest.fixture
def stand_ins():
    sys.path.insert(0, str(Path(__file__).parent / "browser"))
    import fakes  # registers the stand-in solvers (uislow: a run that lasts until cancelled)

    fakes.register_fakes()
    yield
    fakes.unregister_fakes()


def test_the_run_bar_words_progress_with_the_running_jobs_settings(stand_ins):
    from treeexplorer.ui.sidebar import RunBar

    c = Controller()
    assert c.load_bundled("iris")
    bar = RunBar(ViewContext(c))
    job = c.run(RunSettings("uislow", {"max_depth": 2, "step": 0.3}))
    try:
        c.progress = {"phase": "murtree", "budgets_done": 2, "elapsed": 1.0}  # words and budgets of max_depth 2
        bar.show()
        assert "2 of 4 split budgets" in bar.status_w.object and "of at most 30 s" in bar.status_w.object
        assert bar.progress_w.value == 50
    finally:
        c.cancel()
        job.wait(10)
        c.poll()
