"""Cross-validation in the app, headless: a CV run's band and marks, and the Sweep view on a dask cluster."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import fakes  # noqa: E402  (registers uigreedy / uislow / uifail)
from waiting import HANG_S, threads_in, wait_progress, wait_until  # noqa: E402

from treeexplorer.cv import cross_validate  # noqa: E402
from treeexplorer.ui.controller import Controller, RunSettings  # noqa: E402
from treeexplorer.ui.cvfig import step_band  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _stand_in_solvers():
    fakes.register_fakes()
    yield
    fakes.unregister_fakes()


@pytest.fixture(scope="module")
def explorer():
    from treeexplorer.ui import Explorer

    e = Explorer(solver="uigreedy", run_default=False)
    e.cv_option.enabled = True
    e.cv_option.folds = 3
    run = e.run_now(wait=True)
    assert run is not None and run.cv is not None, e.controller.error
    yield e
    e.close()


def test_cv_option_is_off_by_default_and_bounded():
    from treeexplorer.ui.cvoption import CVOption

    opt = CVOption()
    assert opt.cv is None and not opt.folds_w.visible
    opt.enabled = True
    assert opt.cv == 5 and opt.folds_w.visible and (opt.folds_w.start, opt.folds_w.end) == (3, 10)
    c = Controller()
    assert c.load_bundled("iris")
    assert c.run(RunSettings("uigreedy", cv=2)) is None and "3 to 10 folds" in c.error
    c.close()


def test_cv_run_draws_the_mean_and_sd_band_of_its_cv_front(explorer):
    c = explorer.controller
    run = c.runs[-1]
    assert run.settings.cv == 3 and "CV 3-fold" in run.label and len(run.cv.folds) == 3
    # the folds are the library's: the same call on the run's training rows gives the same table
    prep = c.prepared()
    ref = cross_validate(prep.dataset, solver="uigreedy", cv=3, seed=c.seed, refit=False)
    table = run.cv.table("splits")
    assert [(r["level"], r["cv_mean"], r["cv_std"]) for r in table] == [
        (r["level"], r["cv_mean"], r["cv_std"]) for r in ref.table("splits")
    ]
    # the run's front is the refit on the training rows, measured on the held-out rows like any run
    assert run.cv.refit is run.front and run.front.n_train == len(prep.y_train) and run.front.n_test == 38
    layer = explorer.pareto.cv
    df = layer.frame
    assert df.level.tolist() == [r["level"] for r in table]
    assert df.cv_mean.tolist() == [r["cv_mean"] for r in table]
    assert df.cv_std.tolist() == [r["cv_std"] for r in table]
    assert df.n_reached.tolist() == [r["n_reached"] for r in table] and set(df.k) == {3}
    assert layer.means.data["cv_mean"] == df.cv_mean.tolist()
    # the band: one polygon for the run, mean ± sd held from each level to the next
    (xs,), (ys,) = layer.band.data["xs"], layer.band.data["ys"]
    levels = [r["level"] for r in table]
    lo = [r["cv_mean"] - r["cv_std"] for r in table]
    hi = [r["cv_mean"] + r["cv_std"] for r in table]
    assert (xs, ys) == step_band(levels, lo, hi)
    assert max(ys) == pytest.approx(max(hi)) and min(ys) == pytest.approx(min(lo))
    assert layer.band.data["color"] == [run.color]
    labels = [e["label"] for e in explorer.pareto.entries]
    assert "CV mean held-out ±1 sd" in labels
    # the run list offers it as a sub-item whose checkbox hides the layer (and the hit rule skips hidden layers)
    box = next(b for b in explorer.front.run_list.layers_box.objects if b.label == "CV mean held-out ±1 sd")
    box.value = False
    assert not any(r.visible for r in layer.renderers(0))
    box.value = True
    assert all(r.visible for r in layer.renderers(0))


def test_one_se_and_best_marks_and_the_selected_tree(explorer):
    run = explorer.controller.runs[-1]
    one_se, best = run.cv.select("1se", "splits"), run.cv.select("best", "splits")
    marks = explorer.pareto.cv.marks.data
    by_marker = dict(zip(marks["marker"], zip(marks["level"], marks["cv_mean"])))
    assert by_marker["star"] == (one_se["level"], one_se["cv_mean"])
    assert by_marker["circle"] == (best["level"], best["cv_mean"])
    # the run opens on the refit tree the 1-SE rule picks
    assert explorer.controller.selected == (run.id, one_se["tree"].id)
    assert "1-SE" in run.status_text
    # the run's time is its folds' and refit's (it read the refit's alone: "done in 0.00 s")
    assert f"in {run.cv.runtime_s:.2f} s (folds and refit)" in run.status_text
    assert run.cv.runtime_s > run.front.runtime_s


def test_cv_band_follows_the_complexity_axis(explorer):
    run = explorer.controller.runs[-1]
    explorer.x_w.value = "leaves"
    try:
        assert explorer.pareto.cv.frame.level.tolist() == [r["level"] for r in run.cv.table("leaves")]
    finally:
        explorer.x_w.value = "splits"


def test_cv_run_progress_counts_folds_and_cancel_stops_it():
    c = Controller()
    assert c.load_bundled("iris")
    job = c.run(RunSettings("uislow", {"max_depth": 12, "step": 0.05}, cv=4))
    assert job is not None
    report = wait_progress(c, lambda p: p.get("folds_done", 0) >= 1, "the first fold done")
    assert report.get("folds") == 4 and report.get("folds_done") == 1, report
    c.cancel()
    assert job.wait(HANG_S), "cancel did not stop the CV run"
    c.poll()
    # the cancel landed within a fold (0.65 s of the stand-in's own clock): 1 or 2 of the 4 done, below
    assert not c.running and not c.runs
    assert re.search(r"cancelled during cross-validation \([12] of 4 folds done\)", c.error), c.error
    c.close()


# -- the Sweep view -------------------------------------------------------------------------------------


def in_process_cluster():
    """A light dask cluster for tests: one in-process worker (the stand-in solvers are registered here)."""
    from distributed import Client

    client = Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None)
    cluster = client.cluster

    def release():
        client.close()
        cluster.close()

    return client, release


@pytest.fixture(scope="module")
def sweep_session():
    from treeexplorer.ui.sweepview import SweepSession

    c = Controller()
    assert c.load_bundled("iris")
    s = SweepSession(c, connector=in_process_cluster)
    yield s
    s.close()
    assert s.wait(HANG_S) and s.wait_closed(HANG_S)


def poll_until_done(s, timeout: float = HANG_S) -> list[int]:
    """Poll like the view's periodic callback; returns the row counts seen along the way."""
    counts = []
    t0 = time.time()
    while s.poll():
        counts.append(len(s.rows))
        assert time.time() - t0 < timeout, "the sweep did not finish"
        time.sleep(0.05)
    counts.append(len(s.rows))
    return counts


def test_a_sweep_on_a_two_by_one_by_one_grid_fills_the_table(sweep_session):
    from treeexplorer.sweep import sweep
    from treeexplorer.ui.sweepview import SweepView

    s = sweep_session
    view = SweepView(s.controller, session=s)
    assert s.start(["uigreedy", "uifail"], [None], [2], cv=3)
    assert s.running and view.cancel_w.disabled is False and view.run_w.disabled
    counts = poll_until_done(s)
    assert counts[0] <= 1 and counts[-1] == 2  # rows come in as settings finish
    assert s.status == "done" and not s.error and not s.running and view.cancel_w.disabled
    table = s.table()
    assert table["solver"].tolist() == ["uigreedy", "uifail"] and table["max depth"].tolist() == [2, 2]
    ok, failed = table.iloc[0], table.iloc[1]
    # the failing setting shows its message; the other its 1-SE choice, equal to a serial run's
    assert failed["status"] == "error" and "refuses this data on purpose" in failed["message"]
    ref = sweep(s.controller.prepared().dataset, {"solver": ["uigreedy"], "max_depth": [2]}, cv=3, scheduler="serial")
    one_se = ref.fronts[0].select("1se")
    assert ok["status"] == "done" and ok["1-SE splits"] == one_se["level"]
    assert ok["1-SE CV accuracy"] == f"{one_se['cv_mean']:.4f} ± {one_se['cv_std']:.4f}"
    # the widget table and the overlay: the one successful setting, its 1-SE point starred
    assert list(view.table_w.object["solver"]) == ["uigreedy", "uifail"]
    assert view.fig.marks.data["x"] == [one_se["level"]] and view.fig.marks.data["y"] == [one_se["cv_mean"]]
    assert len(view.fig.lines.data["xs"]) == 1 and "#1 uigreedy" in view.fig.lines.data["label"][0]
    assert "1 failed" in view.status_w.object


def test_a_bad_grid_is_refused_with_a_clear_message(sweep_session):
    s = sweep_session
    assert not s.start([], [None], [2]) and "at least one solver" in s.error
    assert not s.start(["uigreedy"], ["nope"], [2]) and "grid discretizer: unknown discretizer 'nope'" in s.error
    assert not s.start(["uigreedy"], [None], [2], cv=11) and "3 to 10 folds" in s.error
    assert not s.running


def test_cancel_stops_every_task_of_a_sweep(sweep_session):
    s = sweep_session
    assert s.start(["uislow"], [None], [8, 10], cv=3, time_limit=60)
    wait_progress(s, lambda p: p.get("phase") == "running", "the sweep's tasks to start")
    wait_until(lambda: threads_in("_run_slow"), what="a task of the sweep at work")
    s.cancel()
    poll_until_done(s)
    # promptly: no setting's 4 tasks of ~3 s each (2 at a time) got to their end, every row says cancelled
    assert s.status == "cancelled" and len(s.rows) == 2
    assert {r["status"] for r in s.rows} <= {"cancelled"} and not s.error


def test_a_cluster_that_cannot_start_is_a_message_not_a_hang():
    from treeexplorer.ui.sweepview import SweepSession

    def broken():
        raise OSError("no cluster here")

    c = Controller()
    assert c.load_bundled("iris")
    s = SweepSession(c, connector=broken)
    assert s.start(["uigreedy"], [None], [2], cv=3)
    poll_until_done(s)
    assert not s.running and s.error == "OSError: no cluster here" and s.rows == []
    s.close()
    assert s.wait_closed(HANG_S)


def test_sweep_rows_stream_in_before_the_sweep_ends(sweep_session):
    s = sweep_session
    assert s.start(["uigreedy", "uislow"], [None], [2], cv=3)  # the greedy setting ends ~1 s before the slow one
    seen = []
    t0 = time.time()
    while s.poll():
        seen.append((len(s.rows), s.progress.get("done", 0)))
        assert time.time() - t0 < HANG_S
        time.sleep(0.02)
    assert any(n == 1 for n, _ in seen), "the first setting's row came only at the end"
    assert s.status == "done" and [r["solver"] for r in s.rows] == ["uigreedy", "uislow"]
    assert s.progress["done"] == s.progress["total"] == 8  # 2 settings x (3 folds + refit)


def test_cv_time_limit_applies_to_each_fold_and_is_told():
    c = Controller()
    assert c.load_bundled("iris")
    run = c.run_sync(RunSettings("uislow", {"max_depth": 6, "step": 0.3}, time_limit=0.5, cv=3), timeout=HANG_S)
    assert run is not None and {f.status for f in run.cv.folds} == {"time_limit"}
    assert run.front.status == "time_limit" and len(run.front) < 7  # the refit stopped too, kept its best so far
    assert "3 of 3 folds hit the time limit" in c.notice
    c.close()


def test_a_sweep_row_opens_as_a_run_with_its_cv_layer(sweep_session):
    from treeexplorer.ui.sweepview import SweepView

    s = sweep_session
    view = SweepView(s.controller, session=s)
    assert s.start(["uigreedy", "uifail"], [None], [2], cv=3)
    poll_until_done(s)
    assert list(view.open_pick_w.options.values()) == [0] and not view.open_w.disabled  # the failed row: no front
    c = s.controller
    before = len(c.runs)
    view.open_pick_w.value = 0
    view.open_w.clicks += 1  # the button, as a click
    assert len(c.runs) == before + 1
    run = c.runs[-1]
    assert run.cv is s.fronts[0] and run.front is s.fronts[0].refit and "sweep #1 uigreedy" in run.label
    assert c.selected == (run.id, s.fronts[0].select("1se")["tree"].id)  # its 1-SE tree, as a CV run shows
    assert s.open_setting(1) is None and "sweep setting #2 has no front" in s.error
