"""The app's optimality gap: the exact front computed in the background, offered as a button on big data,
and every tree's gap (hover, card, JSON) equal to what :func:`treeexplorer.gap.attach_gaps` says."""

from __future__ import annotations

import copy
import json
import time

import pytest

from treeexplorer.export import export_bytes
from treeexplorer.gap import attach_gaps, exact_front, optimum_by_splits
from treeexplorer.ui.controller import Controller, RunSettings
from treeexplorer.ui.gapview import BOUND_LABEL, EQUALS_OPTIMUM, EXACT_LABEL, ExactRecord, gap_text, reference_curve

WAIT = 180  # seconds: generous, the first contree call of a fresh machine compiles its kernels


def _finish_exact(c: Controller) -> None:
    assert c.exact.job is not None
    assert c.exact.job.wait(WAIT), "the exact front did not finish"
    while c.exact.poll():  # a deeper automatic run may follow
        assert c.exact.job.wait(WAIT)


@pytest.fixture(scope="module")
def iris_cart():
    """iris, a CART run of depth 3, and the exact front the controller computed in the background."""
    c = Controller()
    c.exact.auto = True  # as in the Explorer
    assert c.load_bundled("iris")
    run = c.run_sync(RunSettings("cart", {"max_depth": 3}), timeout=WAIT)
    assert run is not None and not c.error
    # started by the run itself, without blocking: the run is back while the exact job still runs or queues
    assert c.exact.job is not None and c.exact.job.meta.data_key == c.data_key() and c.exact.job.meta.depth == 3
    _finish_exact(c)
    yield c, run
    c.close()


def test_background_exact_front_appears_after_the_first_run(iris_cart):
    c, run = iris_cart
    rec = c.exact.record()
    assert rec is not None and rec.proven and rec.depth == 3 and rec.front.solver == "contree"
    assert not c.exact.running and c.exact.offer is None
    assert "Exact front known (contree, depth 3" in c.exact.status
    # one exact front per data key: another run of the same depth does not recompute it
    job = c.exact.job
    c.run_sync(RunSettings("cart", {"max_depth": 2}), timeout=WAIT)
    assert c.exact.job is job and c.exact.record() is rec


def test_gaps_equal_attach_gaps_and_errors_minus_the_optimum(iris_cart):
    c, run = iris_cart
    prep = c.prepared()
    ex = exact_front(prep, max_depth=3)  # computed here again, independently of the app
    opt = optimum_by_splits(ex)
    expected = attach_gaps(copy.deepcopy(run.front), ex, prep)
    assert len(run.front) >= 3
    for t, u in zip(run.front, expected):
        m = t.metrics
        assert m["gap_errors"] == u.metrics["gap_errors"]
        assert m["gap_errors"] == m["train_errors"] - opt[m["splits"]]  # CART trees are at most depth 3
        words = gap_text(t, c.exact.record())
        if m["gap_errors"] == 0:  # CART proves nothing: the exact front does, and the words say who proved what
            assert words == ("optimal (equals the exact front)" if t.optimal else EQUALS_OPTIMUM)
        else:
            assert words.startswith(f"{m['gap_errors']} error") and f"its {m['splits']} split" in words
    assert any(t.metrics["gap_errors"] > 0 for t in run.front)  # CART is greedy: some tree is above the optimum
    doc = json.loads(export_bytes("front_json", run.front))
    assert [t["gap_errors"] for t in doc["trees"]] == [t.metrics["gap_errors"] for t in run.front]


def test_reference_curve_is_the_optimum(iris_cart):
    c, _ = iris_cart
    rec = c.exact.record()
    ref = reference_curve(rec)
    opt = optimum_by_splits(rec.front)
    assert ref["label"] == EXACT_LABEL and ref["splits"] == list(range(8))
    assert ref["accuracy"] == [1 - opt[k] / rec.front.n_train for k in range(8)]


def test_contree_run_is_its_own_exact_front_with_gap_zero():
    c = Controller()
    c.exact.auto = True  # as in the Explorer
    assert c.load_bundled("iris")
    run = c.run_sync(RunSettings("contree", {"max_depth": 2}), timeout=WAIT)
    assert run is not None and run.front.status == "done"
    assert c.exact.job is None and c.exact.record().front is run.front  # adopted, nothing recomputed
    assert [t.metrics["gap_errors"] for t in run.front] == [0] * len(run.front)
    assert all(gap_text(t, c.exact.record()) == "optimal (equals the exact front)" for t in run.front)
    # contree over a discretizer's tests is optimal over those tests only: compared, never adopted
    binned = c.run_sync(RunSettings("contree", {"max_depth": 2}, discretizer="quantile", n_bins=2), timeout=WAIT)
    assert binned.front.search_space["kind"] == "tests" and c.exact.record().front is run.front
    for t in binned.front:
        opt = optimum_by_splits(run.front)[t.metrics["splits"]]
        assert t.metrics["gap_errors"] == t.metrics["train_errors"] - opt
    assert any(t.metrics["gap_errors"] > 0 for t in binned.front)  # 2 thresholds a feature miss the optimum
    c.close()


def test_big_data_offers_the_button_and_a_time_limited_run():
    c = Controller()
    c.exact.auto, c.exact.auto_rows = True, 50  # iris's 112 training rows count as big here
    assert c.load_bundled("iris")
    run = c.run_sync(RunSettings("cart", {"max_depth": 2}), timeout=WAIT)
    assert run is not None
    assert c.exact.job is None and c.exact.record() is None
    assert c.exact.offer == {"depth": 2, "why": "112 training rows; automatic only up to 50", "known": 0}
    assert all(t.metrics.get("gap_errors") is None and gap_text(t, None) == "" for t in run.front)
    job = c.exact.start(c.exact.offer["depth"], time_limit=30)
    assert job is not None and job.control.time_limit == 30 and c.exact.running
    _finish_exact(c)
    assert c.exact.record().proven and c.exact.offer is None
    assert all(t.metrics["gap_errors"] is not None for t in run.front)
    c.close()


def test_the_computing_state_says_how_far_the_exact_job_is(monkeypatch):
    import threading

    import treeexplorer.ui.gapview as gapview

    release = threading.Event()
    real = gapview.exact_front

    def held_exact_front(prep, max_depth, control):  # reports progress, then waits until the test lets it go
        control.report("contree", root_splits=123, best_errors=6)
        release.wait(WAIT)
        return real(prep, max_depth=max_depth, control=control)

    monkeypatch.setattr(gapview, "exact_front", held_exact_front)
    c = Controller()
    c.exact.auto_rows = 0
    assert c.load_bundled("iris")
    c.run_sync(RunSettings("cart", {"max_depth": 2}), timeout=WAIT)
    job = c.exact.start(2, time_limit=30)
    assert c.exact.status.startswith("Computing the exact front (contree, depth 2, raw features)")
    deadline = time.monotonic() + WAIT
    while "root splits" not in c.exact.status and time.monotonic() < deadline:
        c.exact.poll()
        time.sleep(0.05)
    assert "ConTree: 123 root splits searched, best tree so far 6 errors" in c.exact.status
    assert "of at most 30 s" in c.exact.status and c.exact.running
    release.set()
    assert job.wait(WAIT)
    _finish_exact(c)
    assert c.exact.status.startswith("Exact front known")
    c.close()


def test_stop_cancels_the_exact_job():
    c = Controller()
    c.exact.auto_rows = 0
    assert c.load_bundled("iris")
    c.run_sync(RunSettings("cart", {"max_depth": 3}), timeout=WAIT)
    assert c.exact.offer["depth"] == 3
    c.exact.start(3)
    c.exact.cancel()
    assert c.exact.job.wait(WAIT)
    c.exact.poll()
    assert not c.exact.running
    rec = c.exact.record()
    # cancelled at once: either nothing (offered again) or a front marked as not (fully) proven
    assert (rec is None and c.exact.offer is not None) or rec.front.status in ("cancelled", "done")
    c.close()


def test_stopped_exact_run_claims_only_its_lower_bound(iris_cart):
    """A time-limited exact run: proven budgets give gaps, the others only a range against the lower bound."""
    c, run = iris_cart
    proven = c.exact.record().front
    stopped = copy.deepcopy(proven)
    stopped.status = "time_limit"
    opt = optimum_by_splits(proven)
    # what a stopped run knows: budgets >= 2 bounded 2 errors below the best tree found
    stopped.stats["lower_bounds"] = [opt[k] if k < 2 else opt[k] - 2 for k in range(8)]
    rec = ExactRecord(stopped, 3)
    front = attach_gaps(copy.deepcopy(run.front), stopped, c.prepared())
    for t in front:
        k, e = t.metrics["splits"], t.metrics["train_errors"]
        words = gap_text(t, rec)
        if k < 2:
            assert t.metrics["gap_errors"] == e - opt[k]
            assert "lower bound" not in words
        else:
            assert t.metrics["gap_errors"] is None  # not proven: the JSON says nothing
            assert words.startswith(f"{e - opt[k] + 2} error") and "above the proven lower bound" in words
            assert "optimum not proven" in words
            if e > opt[k]:
                assert f"at least {e - opt[k]} above the optimum" in words
    ref = reference_curve(rec)
    assert ref["label"] == BOUND_LABEL and not ref["proven"]
    assert ref["accuracy"][3] == 1 - (opt[3] - 2) / proven.n_train


def test_explorer_draws_the_reference_and_the_gap_text():
    pytest.importorskip("panel")
    from treeexplorer.textsafe import md
    from treeexplorer.ui import Explorer

    e = Explorer(solver="cart")  # runs CART (depth 5) at start: the exact front is computed at depth 3
    try:
        c = e.controller
        assert c.exact.job is not None and c.exact.job.meta.depth == 3
        assert e.exact_stop_w.visible
        assert c.exact.job.wait(WAIT)
        while e.poll_exact():
            assert c.exact.job.wait(WAIT)
        src = e.pareto.reference.data_source.data
        assert len(src["x"]) == 8 and src["y"] == reference_curve(c.exact.record())["accuracy"]
        assert e.pareto.exact_label == EXACT_LABEL
        assert any(EXACT_LABEL in b.label for b in e.front.run_list.layers_box.objects)
        run = c.runs[0]
        hover = dict(
            zip(zip(e.pareto.points.data["run_id"], e.pareto.points.data["tree"]), e.pareto.points.data["gap"])
        )
        for t in run.front:
            assert hover[(run.id, t.id)] == gap_text(t, c.exact.record())
        _, entry = c.selection()
        words = gap_text(entry, c.exact.record())
        assert md(words) in e.tree_title.object  # the title is Markdown: its text escaped
        assert words in e.metrics_pane.object["value"].tolist()
        # CART's deeper trees (depth 4-5): more than depth 3 covers, so the offer is the depth-4 button
        assert c.exact.offer["depth"] == 4 and e.exact_btn.visible
        # one state per sentence: known to depth 3, not computed beyond it (never "known" then "not computed")
        status = e.front.exact_status_w.object
        assert "Exact front known (contree, depth 3" in status and "Not computed beyond depth 3: " in status
        assert "Exact front not computed" not in status
        e.x_w.value = "depth"  # the exact front is over splits: meaningless here, hidden
        assert e.pareto.reference.data_source.data["x"] == []
        assert e.pareto.exact_label == ""
        assert not any(EXACT_LABEL in b.label for b in e.front.run_list.layers_box.objects)
        e.x_w.value = "leaves"
        assert e.pareto.reference.data_source.data["x"][0] == 1
    finally:
        e.close()


def test_multiway_trees_get_no_gap_and_say_why():
    # BRANCHES on car: one multiway split per categorical column. Counted as the exact front's binary splits it
    # could look "below the optimum", which used to be reported as "its training rows differ".
    c = Controller()
    c.exact.auto = True
    try:
        assert c.load_bundled("car")
        run = c.run_sync(RunSettings("branches", {"sparsity": 0.01}, discretizer="mid"), timeout=WAIT)
        assert run is not None and not c.error
        _finish_exact(c)
        rec = c.exact.record()
        assert rec is not None and rec.proven
        multi = [t for t in run.front if t.tree.has_multiway]
        assert multi, "BRANCHES on car should give multiway trees"
        for t in run.front:
            words = c.exact.text(run, t)
            assert "training rows differ" not in words
            if t.tree.has_multiway:
                assert t.metrics["gap_errors"] is None and words.startswith("multiway splits: not comparable")
            elif t.metrics["depth"] <= rec.depth:
                assert t.metrics["gap_errors"] is not None and t.metrics["gap_errors"] >= 0
        assert "no gap to the exact front" not in (c.notice or "")
    finally:
        c.close()
