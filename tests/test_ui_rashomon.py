"""The Alternatives view's headless session: the set behind a point, filtered without solving again."""

from __future__ import annotations

import time

import numpy as np

import treeexplorer as tx
from treeexplorer.api import prepare
from treeexplorer.data import frame_from_arrays
from treeexplorer.rashomon import rashomon_prepared, tree_columns
from treeexplorer.ui import rashomonview
from treeexplorer.ui.comparediagram import tree_differences
from treeexplorer.ui.controller import Run, RunSettings
from treeexplorer.ui.rashomonview import RashomonSession, RashomonView


def _data():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(150, 6)).astype(float)
    y = ((X[:, 0].astype(int) | X[:, 3].astype(int)) ^ (rng.random(150) < 0.1)).astype(int)
    return prepare(frame_from_arrays(X, y), "y")


def _wait(session):
    deadline = time.monotonic() + 600  # a cold cache compiles the kernels first (minutes on a busy machine)
    while session.poll():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_session_lists_the_set_of_the_point_and_filters_without_solving():
    prep = _data()
    settings = RunSettings("murtree", {"max_depth": 3}, discretizer="none")
    front = tx.api.run_prepared(prep, "murtree", {"max_depth": 3}, discretizer="none")
    run = Run(1, "#1", "#000", front, settings)
    point = next(t for t in front.trees if t.metrics["splits"] == 2)
    session = RashomonSession(lambda: prep, k=50)
    opened = []
    view = RashomonView(session, on_open=lambda f, e: opened.append(e))
    assert view.start(run, point) is not None
    _wait(session)
    view.refresh()
    expect = rashomon_prepared(prep, max_depth=3, splits=2, k=50, discretizer="none")
    assert [t.info["errors"] for t in session.front.trees] == [t.info["errors"] for t in expect.trees]
    assert session.front.trees[0].info["errors"] == point.metrics["train_errors"]  # the point is optimal there
    table = session.table()
    assert list(table["rank"]) == list(range(len(expect.trees)))
    assert (table["gap"] >= 0).all() and (table["splits"] <= 2).all()
    assert session.fraction is None and session.status.startswith(f"{len(expect.trees)} trees: ")
    # the card draws one alternative beside the selected tree: one identical to it is never the default
    same = session.same_as_point()
    assert all(session.front[r].info["errors"] == point.metrics["train_errors"] for r in same)
    shown = session.front[view.pick.value]
    assert shown.id not in same or len(same) == len(session.front)
    assert view.compare.box.visible and view.compare.differences == tree_differences(point.tree, shown.tree)
    assert view.compare_note.object.startswith(f"Alternative #{shown.id}: ")
    top = session.shares()[0]["feature"]
    before = session.version
    session.exclude = [top]
    assert session.version > before
    assert all(top not in f.split(", ") for f in session.table()["features"])
    kept = len(session.table())
    text = session.filter_text()
    assert text.startswith(f"{kept} of the {len(expect.trees)} trees test none of {top}") if kept else "None of" in text
    session.exclude, session.require = [], [top]
    assert all(top in f.split(", ") for f in session.table()["features"])
    assert {r["feature"] for r in session.shares()} >= {top}
    view.open(3)
    assert opened and opened[0].id == 3
    assert view.__panel__() is not None


def test_the_explorer_finds_the_alternatives_of_the_selected_tree_and_opens_one_as_a_run():
    from treeexplorer.ui import Explorer

    e = Explorer(dataset="tic-tac-toe", solver="murtree", run_default=False)
    try:
        c = e.controller
        assert e.find_alternatives() is None  # nothing selected yet: it says what to do
        assert "click a point" in e.alternatives.session.status
        run = c.run_sync(RunSettings("murtree", {"max_depth": 2}))
        point = next(t for t in run.front.trees if t.metrics["splits"] == 2)
        c.select(run.id, point.id)
        e.alternatives.session.k = 30
        assert e.find_alternatives() is not None
        _wait(e.alternatives.session)
        s = e.alternatives.session
        assert len(s.front) == 30 and s.front.trees[0].info["errors"] == point.metrics["train_errors"]
        assert all(t.metrics["splits"] <= 2 for t in s.front.trees)
        e.alternatives.open(5)  # the set joins the plot as a run and its tree number 5 is the selection
        sel = e.selected
        assert sel.run_id != run.id and sel.entry.id == 5 and len(sel.front) == 30
        assert e._alternatives_panel() is not None
    finally:
        e.close()


def test_a_set_of_100000_trees_is_shown_and_cancelled_in_bounded_time():
    # the card refreshes on every status change: it reads a big set once, lists its start, and a cancel lands
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(200, 8)).astype(float)
    y = rng.integers(0, 2, size=200)  # noise: the front reaches trees of 7 splits, with many rivals
    prep = prepare(frame_from_arrays(X, y), "y")
    settings = RunSettings("murtree", {"max_depth": 3}, discretizer="none")
    front = tx.api.run_prepared(prep, "murtree", {"max_depth": 3}, discretizer="none")
    run = Run(1, "#1", "#000", front, settings)
    point = max(front.trees, key=lambda t: t.metrics["splits"])
    session = RashomonSession(lambda: prep, k=100_000)
    view = RashomonView(session)
    job = view.start(run, point, time_limit=None)
    assert job.wait(600)
    t0 = time.monotonic()
    _wait(session)  # the set's last word applied: status, table, shares, the alternative drawn
    view.refresh()
    took = time.monotonic() - t0
    assert len(session.front) == 100_000 and session.status.startswith("100000 trees: ")
    assert took < 15, f"{took:.1f} s to show a set of 100,000 trees"  # minutes before it read the set once
    assert len(view.table.object) == rashomonview.SHOWN_ROWS and "the first 500 of the 100,000" in view.status.object
    assert list(view.table.object["#"]) == list(range(rashomonview.SHOWN_ROWS))
    assert len(view.pick.options) == rashomonview.SHOWN_ROWS
    # a filter re-lists from the whole set, not from the rows shown
    top = session.shares()[0]["feature"]
    session.exclude = [top]
    j = [c.name for c in session.front.schema.columns].index(top)
    assert session.trees() == [t for t in session.front.trees if j not in tree_columns(t.tree)]
    session.exclude = []
    # Cancel always wins: started again, cancelled as soon as it searches, it ends within seconds
    assert view.start(run, point, time_limit=None) is not None
    while session.poll() and "trees so far" not in session.status:
        time.sleep(0.02)
    t0 = time.monotonic()
    session.cancel()
    _wait(session)
    view.refresh()
    took = time.monotonic() - t0
    assert took < 5, f"the cancel took {took:.1f} s to land"
    assert "cancelled" in session.status
