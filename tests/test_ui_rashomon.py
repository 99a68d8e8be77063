"""The Alternatives view's headless session: the set behind a point, filtered without solving again."""

from __future__ import annotations

import time

import numpy as np
import pytest
from waiting import WorkClock, wait_until

import treeexplorer as tx
from treeexplorer.api import prepare
from treeexplorer.data import frame_from_arrays
from treeexplorer.rashomon import rashomon_prepared, tree_columns
from treeexplorer.textsafe import md
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
    note = session.difference_text(shown)
    assert note.startswith(f"Alternative #{shown.id}: ") and view.compare_note.object == md(note)  # data names escaped
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
        e.alternatives.open(5)  # its tree number 5 joins the plot pinned as a run of one point, selected
        sel = e.selected
        assert sel.run_id != run.id and sel.entry is s.front[5] and len(sel.front) == 1
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
    shown = WorkClock()
    shown.mark()
    _wait(session)  # the set's last word applied: status, table, shares, the alternative drawn
    view.refresh()
    # 15 s (of wall time, or of this process's CPU time on a machine other processes keep busy): minutes before
    # it read the set once
    assert shown.within(15), f"{shown} to show a set of 100,000 trees"
    assert len(session.front) == 100_000 and session.status.startswith("100000 trees: ")
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
    wait_until(lambda: "trees so far" in session.status or not session.poll(), what="the search's first trees")
    assert "trees so far" in session.status, session.status
    landed = WorkClock()
    landed.mark()
    session.cancel()
    _wait(session)
    view.refresh()
    assert landed.within(5), f"the cancel took {landed} to land"  # (a search going on would keep the CPU busy)
    assert "cancelled" in session.status


def _places(trees, x, key):
    """The cloud's places computed here: ``{(x, errors): (count, first rank)}``."""
    out = {}
    for t in trees:
        if t.metrics[key] is None:
            continue
        k = (t.metrics[x], t.metrics[key])
        count, rank = out.get(k, (0, t.id))
        out[k] = (count + 1, min(rank, t.id))
    return out


def _drawn(source) -> dict:
    d = source.data
    return {(x, round(y, 9)): (c, r) for x, y, c, r in zip(d["x"], d["y"], d["count"], d["rank"])}


def test_the_cloud_draws_the_listed_trees_for_their_run_and_a_click_opens_only_a_tree_of_the_set():
    from treeexplorer.ui import Explorer

    e = Explorer(dataset="tic-tac-toe", solver="murtree", run_default=False)
    try:
        c, pareto = e.controller, e.front.pareto
        run = c.run_sync(RunSettings("murtree", {"max_depth": 3}))
        point = next(t for t in run.front.trees if t.metrics["splits"] == 3)
        c.select(run.id, point.id)
        s, view = e.alternatives.session, e.alternatives
        s.k = 200
        assert view.cloud_w.disabled and e.find_alternatives() is not None
        _wait(s)
        view.refresh()
        assert len(s.front) == 200 and c.cloud is None and not pareto.cloud.data["x"]
        view.cloud_w.value = True  # "Show on the plot"
        cloud = c.cloud
        assert cloud is not None and cloud.run_id == run.id and cloud.trees == tuple(s.trees())
        assert view.cloud_w.label == "Hide from the plot"
        n_train = c.prepared().y_train.shape[0]
        # one marker per place (splits, training errors), its size growing with the trees there, the best one named
        places = _places(s.front.trees, "splits", "train_errors")
        want = {(k, round(1 - err / n_train, 9)): v for (k, err), v in places.items()}
        assert _drawn(pareto.cloud) == want and sum(pareto.cloud.data["count"]) == 200
        assert len(want) < 200  # many trees share a place
        sizes = dict(zip(pareto.cloud.data["count"], pareto.cloud.data["size"]))
        assert sizes[max(sizes)] > sizes[min(sizes)]
        assert set(pareto.cloud.data["stamp"]) == {cloud.stamp}
        # the held-out layer: the same trees by held-out errors
        assert sum(pareto.cloud_tests.data["count"]) == 200
        held = _places(s.front.trees, "splits", "test_errors")
        assert sorted(zip(pareto.cloud_tests.data["x"], pareto.cloud_tests.data["rank"])) == sorted(
            (k, r) for (k, _), (_, r) in held.items()
        )
        # hover text: the count, errors, splits and columns of the place's best tree
        i = pareto.cloud.data["rank"].index(0)
        tip = pareto.cloud.data["tip"][i]
        best = s.front.trees[0]
        names = [col.name for col in s.front.schema.columns]
        assert f"train errors\t{best.info['errors']}" in tip and f"splits\t{best.metrics['splits']}" in tip
        assert "best here\t#0: " + ", ".join(names[j] for j in tree_columns(best.tree)) in tip
        assert "click: open alternative #0" in tip
        # the legend: an entry in the run list saying what it is
        assert "200 trees of the Rashomon set of run #1" in pareto.cloud_label
        assert any(b.label == pareto.cloud_label for b in e.front.run_list.layers_box.objects)
        # the plot's axes: leaves = splits + 1; errors above the best run tree (no held-out layer there)
        e.front.x_w.value = "leaves"
        assert {x - 1 for x in pareto.cloud.data["x"]} == {k for k, _ in want}
        e.front.y_w.value = "excess"
        assert not pareto.cloud_tests.data["x"] and min(pareto.cloud.data["y"]) == 0
        e.front.x_w.value, e.front.y_w.value = "splits", "accuracy"
        # the filters apply to the cloud (a column some trees do without)
        top = next(r["feature"] for r in s.shares() if r["share"] < 1)
        s.exclude = [top]
        kept = s.trees()
        assert c.cloud.trees == tuple(kept) and sum(pareto.cloud.data["count"]) == len(kept) < 200
        gone = next(t for t in s.front.trees if t not in kept)
        # a click opens the set's tree pinned as a run of its own (one point), the cloud stays (it is the set's)
        n_runs = len(c.runs)
        rank = pareto.cloud.data["rank"][-1]
        pareto._on_cloud_pick("data", {}, {"stamp": [c.cloud.stamp], "rank": [rank], "at": [1]})
        sel = e.selected
        assert sel.entry is s.front[rank] and len(sel.front) == 1 and len(c.runs) == n_runs + 1
        assert c.runs[-1].label.endswith(f" · #{rank}") and c.cloud is not None
        other = pareto.cloud.data["rank"][0]
        pareto._on_cloud_pick("data", {}, {"stamp": [c.cloud.stamp], "rank": [other], "at": [2]})
        assert e.selected.entry.id == other and len(c.runs) == n_runs + 2 and c.cloud is not None  # a second pin
        pareto._on_cloud_pick("data", {}, {"stamp": [c.cloud.stamp], "rank": [rank], "at": [3]})
        assert e.selected.entry.id == rank and len(c.runs) == n_runs + 2  # the first pin again, not a new one
        # never another tree: a stale click, or a tree the filters left out of the cloud, opens nothing
        assert c.open_cloud_tree(rank, stamp=c.cloud.stamp - 1) is None
        assert c.open_cloud_tree(gone.id, stamp=c.cloud.stamp) is None
        assert e.selected.entry.id == rank
        # the selection moves to another run: the cloud goes and the toggle is off
        c.select(run.id, point.id)
        assert c.cloud is not None  # the set's own run
        run2 = c.run_sync(RunSettings("cart", {"max_depth": 3}))
        assert c.selected[0] == run2.id and c.cloud is None
        assert not view.cloud_w.value and not pareto.cloud.data["x"] and not pareto.cloud_label
        # shown for the set's run only: with another run selected the toggle says what to do
        view.cloud_w.value = True
        assert c.cloud is None and not view.cloud_w.value and f"run #{run.id}" in s.status
        # toggled off, and found again: it goes
        c.select(run.id, point.id)
        view.cloud_w.value = True
        assert c.cloud is not None
        view.cloud_w.value = False
        assert c.cloud is None and not pareto.cloud.data["x"]
        view.cloud_w.value = True
        assert e.find_alternatives() is not None
        assert c.cloud is None and not view.cloud_w.value
        _wait(s)
    finally:
        e.close()


def test_in_a_notebook_a_click_on_the_cloud_opens_the_sets_tree_through_the_same_path():
    """``tx.Explorer`` in Jupyter: the front end sends a click as a patch of the document over the comm (Panel's
    ``_on_msg`` applies it); the cloud's pick source changes as in the served app, and the controller opens that
    tree of the set, or nothing for a click on an older cloud."""
    import panel as pn
    from bokeh.document import Document
    from pyviz_comms import Comm

    from treeexplorer.ui import Explorer

    e = Explorer(dataset="tic-tac-toe", solver="murtree", run_default=False)
    try:
        c, pareto = e.controller, e.front.pareto
        run = c.run_sync(RunSettings("murtree", {"max_depth": 3}))
        c.select(run.id, next(t for t in run.front.trees if t.metrics["splits"] == 3).id)
        s, view = e.alternatives.session, e.alternatives
        s.k = 50
        assert e.find_alternatives() is not None
        _wait(s)
        view.refresh()
        view.cloud_w.value = True
        doc = Document()  # what a notebook display builds: the explorer's root in a document tied to a comm
        doc.add_root(pn.panel(e).get_root(doc, Comm()))
        assert pareto.cloud_pick.document is doc

        def click(rank, stamp):  # the front end's message, as Panel's notebook handler applies it
            entries = [["stamp", [stamp]], ["rank", [rank]], ["at", [1]]]
            event = {"kind": "ModelChanged", "model": {"id": pareto.cloud_pick.id}, "attr": "data"}
            doc.apply_json_patch({"events": [{**event, "new": {"type": "map", "entries": entries}}]}, setter="js")

        rank = pareto.cloud.data["rank"][-1]
        click(rank, c.cloud.stamp)
        assert e.selected.entry is s.front[rank] and len(e.selected.front) == 1
        other = pareto.cloud.data["rank"][0]
        click(other, c.cloud.stamp - 1)  # a click made on an older cloud opens nothing
        assert e.selected.entry.id == rank
    finally:
        e.close()


def test_a_weighted_run_lists_its_alternatives_by_training_cost():
    """With the Data card's class weights the set is ranked by the run's cost, and the card says cost."""
    prep = _data()
    settings = RunSettings("murtree", {"max_depth": 2}, discretizer="none", class_weight="balanced")
    front = tx.api.run_prepared(prep, "murtree", {"max_depth": 2}, discretizer="none", class_weight="balanced")
    run = Run(1, "#1", "#000", front, settings)
    point = max(front.trees, key=lambda t: t.metrics["splits"])  # optimal for its number of splits
    session = RashomonSession(lambda: prep, k=20)
    view = RashomonView(session)
    assert view.start(run, point) is not None
    _wait(session)
    view.refresh()
    assert session.weighted()
    costs = [t.info["cost"] for t in session.front.trees]
    assert costs == sorted(costs) and costs[0] == pytest.approx(point.metrics["train_cost"])  # the point is optimal
    assert "training cost" in session.status and "training errors" not in session.status
    table = session.table()
    assert list(table.columns) == ["rank", "cost", "gap", "splits", "features"]
    assert "train cost" in view.table.object.columns
    other = next(t for t in session.front.trees if t.info["cost"] > costs[0] + 1e-6)
    note = session.difference_text(other)
    assert "more training cost than the selected tree" in note, note
    assert all(label.startswith("#") and ": cost " in label for label in view.pick.options)
