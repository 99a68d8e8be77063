"""The Explorer without a browser: controller (data, jobs, cancel, errors), views and exports."""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import fakes  # noqa: E402,F401  (registers uigreedy / uislow / uifail)
from waiting import HANG_S, wait_progress  # noqa: E402

from treeexplorer.ui.controller import Controller, RunSettings, parse_upload  # noqa: E402
from treeexplorer.ui.views import compare_markdown, pareto_plot, points_frame, progress_text  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _stand_in_solvers():
    fakes.register_fakes()
    yield
    fakes.unregister_fakes()


IRIS_CSV = (Path(__file__).resolve().parent.parent / "assets" / "iris.csv").read_bytes()


def wait_done(c: Controller, timeout: float = HANG_S) -> None:
    assert c.job.wait(timeout), "job did not finish"
    c.poll()
    assert not c.running


@pytest.fixture
def ctrl():
    c = Controller()
    assert c.load_bundled("iris")
    yield c
    c.close()


# -- data ------------------------------------------------------------------------------------------------


def test_bundled_load_lists_columns_and_target(ctrl):
    assert ctrl.target == "species"
    assert ctrl.columns[-1] == "species" and "petal_length" in ctrl.columns
    v = ctrl.data_version
    cols = list(ctrl.columns)
    # petal_width has 22 non-integer values: it needs the user's confirmation before it becomes the target
    assert not ctrl.set_target("petal_width")
    assert ctrl.many_classes == {"column": "petal_width", "n_classes": 22} and "petal_width" in ctrl.error
    assert ctrl.target == "species" and ctrl.data_version == v
    assert ctrl.confirm_many_classes()
    assert ctrl.target == "petal_width" and ctrl.dataset.schema.target == "petal_width"
    assert ctrl.columns == cols and ctrl.data_version > v and ctrl.many_classes is None and not ctrl.error
    assert not ctrl.set_target("nope") and "unknown target column" in ctrl.error


def test_changing_split_invalidates_prepared_data(ctrl):
    p1 = ctrl.prepared()
    assert len(p1.y_test) == 38
    ctrl.test_size = 0.5
    p2 = ctrl.prepared()
    assert len(p2.y_test) == 75 and p2 is not p1
    ctrl.test_size = 0.0
    assert ctrl.prepared().y_test is None


def test_upload_csv_and_parquet(ctrl):
    assert ctrl.load_upload(IRIS_CSV, "flowers.csv")
    assert ctrl.dataset_name == "flowers" and ctrl.dataset.n_rows == 150
    buf = io.BytesIO()
    pd.read_csv(io.BytesIO(IRIS_CSV)).to_parquet(buf)
    assert ctrl.load_upload(buf.getvalue(), "flowers.parquet", target="species")
    assert ctrl.dataset.schema.target == "species" and not ctrl.error


@pytest.mark.parametrize(
    "content,name,expected",
    [
        (b"", "x.csv", "empty"),
        (b"a,b\n1,2\n", "x.xlsx", "unsupported file type"),
        (b"\x00\x01\x02binary", "x.csv", "binary file"),
        (b"not parquet at all", "x.parquet", "not a readable Parquet file"),
        (b"a,b\n1,x\n2,x\n", "x.csv", "single class"),
    ],
)
def test_invalid_uploads_give_messages(ctrl, content, name, expected):
    before = ctrl.dataset_name
    assert not ctrl.load_upload(content, name)
    assert expected in ctrl.error
    assert ctrl.dataset_name == before, "a refused upload keeps the current table"


def test_upload_size_cap():
    with pytest.raises(ValueError, match="upload limit"):
        parse_upload(b"a,b\n" + b"1,2\n" * 100, "big.csv", cap=100)


def test_test_file_upload_replaces_split(ctrl):
    test_rows = b"\n".join(IRIS_CSV.splitlines()[:31])
    assert ctrl.load_test_upload(test_rows, "held.csv")
    assert ctrl.test_name == "held.csv" and len(ctrl.prepared().y_test) == 30
    assert not ctrl.load_test_upload(b"foo,bar\n1,2\n", "bad.csv")
    assert "lacks the column" in ctrl.error
    ctrl.clear_test_upload()
    assert len(ctrl.prepared().y_test) == 38


# -- runs ------------------------------------------------------------------------------------------------


def test_run_adds_a_front_and_selects_the_best_tree(ctrl):
    run = ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 2}), timeout=20)
    assert run is not None and len(run.front) == 3
    assert ctrl.selected[0] == run.id
    _, entry = ctrl.selection()
    assert entry is run.front.best()
    assert "uigreedy" in run.label and "depth=2" in run.label
    df = points_frame(ctrl.runs)
    # the claim is worded by the run's search space (a numeric stand-in on the raw columns)
    assert len(df) == 3 and set(df.proven) == {
        "proven optimal on the raw features (every threshold)",
        "not proven optimal",
    }
    assert df.optimal.tolist() == [True, False, False]


def test_progress_is_forwarded_while_running(ctrl):
    job = ctrl.run(RunSettings("uislow", {"max_depth": 12, "step": 0.1}, time_limit=10))
    report = wait_progress(ctrl, lambda p: p.get("phase") == "growing", "a 'growing' report")
    assert report["trees"] >= 1 and job.running
    ctrl.cancel()
    wait_done(ctrl, HANG_S)
    text = progress_text({"phase": "growing", "elapsed": 1.25, "trees": 1234})
    assert text in ("growing · trees 1,234 · 1.2 s", "growing · trees 1,234 · 1.3 s")


def test_cancel_keeps_partial_front_within_a_second(ctrl):
    job = ctrl.run(RunSettings("uislow", {"max_depth": 12, "step": 0.4}, time_limit=60))
    seen = wait_progress(ctrl, lambda p: p.get("trees", 0) >= 2, "the second tree")["trees"]
    ctrl.cancel()
    assert job.wait(HANG_S), "the cancelled job did not end"
    ctrl.poll()
    run = ctrl.runs[-1]
    # within a second of the solver's own clock (0.4 s a tree), however busy the machine: at most two more trees
    # (one the poll had not yet seen, one in the cancel's way) after the one reported
    assert run.front.status == "cancelled" and 2 <= len(run.front) <= seen + 2 < 13, (seen, len(run.front))
    assert not any(t.optimal for t in run.front)
    assert "cancelled" in ctrl.notice and "kept" in ctrl.notice


def test_time_limit_returns_best_so_far(ctrl):
    run = ctrl.run_sync(RunSettings("uislow", {"max_depth": 12, "step": 0.3}, time_limit=0.5), timeout=HANG_S)
    assert run.front.status == "time_limit" and len(run.front) >= 1
    assert "time limit" in ctrl.notice


def test_solver_error_is_a_readable_message(ctrl, capsys):
    assert ctrl.run_sync(RunSettings("uifail", {}), timeout=HANG_S) is None
    assert ctrl.error == "the stand-in solver refuses this data on purpose"
    assert "Traceback" not in ctrl.error and not ctrl.runs and not ctrl.running


def test_bad_parameters_are_refused_before_starting(ctrl):
    assert ctrl.run(RunSettings("uigreedy", {"max_depth": 99})) is None
    assert "max_depth" in ctrl.error and "[0, 8]" in ctrl.error
    assert ctrl.run(RunSettings("uigreedy", {}, time_limit=-1)) is None
    assert "time_limit must be a positive, finite number of seconds" in ctrl.error  # the library's one message


def test_one_job_at_a_time_per_session(ctrl):
    ctrl.run(RunSettings("uislow", {"max_depth": 5, "step": 0.3}))
    assert ctrl.run(RunSettings("uigreedy", {})) is None
    assert "already in progress" in ctrl.error
    ctrl.cancel()
    wait_done(ctrl)


def test_two_sessions_solve_at_the_same_time():
    sessions = [Controller(), Controller()]
    for c in sessions:
        c.load_bundled("iris")
        c.run_sync(RunSettings("uigreedy", {"max_depth": 1}))  # first-use costs (imports, kernels) out of the clock
        c.clear_runs()
    jobs = [c.run(RunSettings("uislow", {"max_depth": 12, "step": 0.3})) for c in sessions]
    # both solve at once: each reports its second tree while the other is still running (one after the other,
    # the second would start only after the first's 13 trees)
    for c in sessions:
        wait_progress(c, lambda p: p.get("trees", 0) >= 2, "the second tree of each session")
    assert all(j.running for j in jobs), "sessions blocked each other"
    for c in sessions:
        c.cancel()
    for c, j in zip(sessions, jobs):
        assert j.wait(HANG_S)
        c.poll()
        assert len(c.runs) == 1 and c.runs[0].front.status == "cancelled"


def test_closing_the_session_stops_its_job(ctrl):
    job = ctrl.run(RunSettings("uislow", {"max_depth": 12, "step": 0.5}))
    wait_progress(ctrl, lambda p: p.get("trees", 0) >= 1, "the first tree")
    ctrl.close()
    assert job.wait(HANG_S)
    front = job.result(0)
    assert front.status == "cancelled" and len(front) < 13  # ended by the close, not after its 13 trees
    assert ctrl.run(RunSettings("uigreedy", {})) is None  # a closed session starts nothing


def test_remove_and_clear_runs(ctrl):
    r1 = ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 1}))
    r2 = ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 3}))
    assert r1.color != r2.color
    ctrl.remove_run(r2.id)
    assert [r.id for r in ctrl.runs] == [r1.id] and ctrl.selected is None
    ctrl.clear_runs()
    assert ctrl.runs == []


def test_compare_two_trees(ctrl):
    run = ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 3}))
    a, b = run.front.trees[1], run.front.trees[3]
    text = compare_markdown(a, b)
    assert f"Tree {a.id} → tree {b.id}" in text
    assert f"splits: {a.metrics['splits']} → {b.metrics['splits']}" in text
    assert "Only in tree" in text


def test_pareto_plot_has_a_curve_per_run_and_one_point_per_tree(ctrl):
    import holoviews as hv

    ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 1}))
    ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 3}))
    overlay, train, df = pareto_plot(ctrl.runs, "avg_tests")
    curves = [el for el in overlay if isinstance(el, hv.Curve)]
    assert len(curves) == 2 and len(train) == len(df) == 2 + 4
    assert train.kdims[0].name == "avg_tests"
    hv.render(overlay, backend="bokeh")


# -- the Explorer component ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def explorer():
    from treeexplorer.ui import Explorer

    e = Explorer(solver="uigreedy")
    yield e
    e.close()


def test_explorer_opens_with_a_front_shown(explorer):
    c = explorer.controller
    assert len(c.runs) == 1 and c.selected is not None and not c.error
    assert explorer.plot_pane.object is not None and explorer.tree_pane.visible
    _, entry = explorer.controller.selection()
    assert explorer.tree_fig.tree is entry.tree
    assert entry.tree.node_text(0) in explorer.tree_fig.sources["bold"].data["text"]
    assert "solver" in set(explorer.metrics_pane.object["metric"])
    assert not explorer.dl["png"].disabled
    # the Compare tab starts on the next simpler tree of the front
    simpler = max(t.metrics["splits"] for t in c.runs[0].front if t.metrics["splits"] < entry.metrics["splits"])
    assert f"splits: {entry.metrics['splits']} → {simpler}" in explorer.compare_pane.object


def test_the_page_passes_bokeh_validation(caplog):
    """The served app skips Bokeh's per-session document check (treeexplorer.app.servable_page): done here.

    The only finding allowed is W-1002 (an empty layout) on the lazy tabs' placeholders.
    """
    import logging

    from bokeh.document import Document

    from treeexplorer.app import explorer_page

    doc = Document()
    explorer_page("iris").server_doc(doc)
    with caplog.at_level(logging.WARNING, logger="bokeh.core.validation"):
        doc.validate()
    found = [r.getMessage() for r in caplog.records if r.name.startswith("bokeh.core.validation")]
    assert all(m.startswith("W-1002 (EMPTY_LAYOUT)") for m in found), found


def test_solver_widgets_come_from_the_registry(explorer):
    explorer.solver_w.value = "uislow"
    w = explorer.param_widgets
    assert set(w) == {"max_depth", "step"}
    assert (w["max_depth"].start, w["max_depth"].end, w["max_depth"].value) == (0, 12, 6)
    assert explorer.disc_w.value == "raw"
    explorer.solver_w.value = "uigreedy"
    assert set(explorer.param_widgets) == {"max_depth"}


def test_clicking_a_point_selects_its_tree(explorer):
    df = explorer.pareto.frame
    row = df.index[df.splits == 1][0]
    explorer.pareto.points.selected.indices = [int(row)]  # what a tap in the browser sends
    _, entry = explorer.controller.selection()
    assert entry.metrics["splits"] == 1
    assert "tree 1" in explorer.tree_title.object
    assert explorer.dl["png"].filename.endswith("_tree1.png")
    # selecting from code outlines the point without calling back
    explorer.select(explorer.controller.runs[0].id, 0)
    assert list(explorer.pareto.points.selected.indices) == [int(df.index[df.tree == 0][0])]
    # a tap on empty plot (the browser clears its selection): the card keeps its tree and its point the outline
    explorer.pareto.points.selected.indices = []
    assert explorer.controller.selected == (explorer.controller.runs[0].id, 0)
    assert list(explorer.pareto.points.selected.indices) == [int(df.index[df.tree == 0][0])]


def test_pareto_figure_updates_in_place(explorer):
    fig = explorer.pareto.figure
    explorer.x_w.value = "avg_tests"
    assert explorer.pareto.figure is fig and fig.xaxis[0].axis_label == "Expected tests per sample"
    df = explorer.pareto.frame
    assert explorer.pareto.points.data["x"] == df.avg_tests.tolist()
    labels = [e["label"] for e in explorer.pareto.entries]  # the run list (the plot's legend) lists the runs
    assert labels[0] == explorer.controller.runs[0].label
    assert explorer.front.run_list.runs_box.objects[0].objects[1].label == labels[0]
    explorer.show_test_w.value = False
    assert explorer.pareto.tests.data["x"] == []
    explorer.show_test_w.value = True
    explorer.x_w.value = "splits"


def test_exports_of_the_selected_tree_carry_provenance(explorer):
    png = explorer.export("png")
    assert png[:4] == b"\x89PNG"
    rules = explorer.export("txt").decode()
    assert rules.startswith("# dataset: iris") and "THEN" in rules
    tree = json.loads(explorer.export("json"))
    assert tree["provenance"]["solver"] == "uigreedy"
    assert b"<svg" in explorer.export("svg")
    front = json.loads(explorer.export("front_json"))
    assert front["solver"] == "uigreedy" and len(front["trees"]) == len(explorer.controller.runs[0].front)
    csv = explorer.export("front_csv").decode()
    assert csv.startswith("id,") and "train_accuracy" in csv and ",iris,uigreedy," in csv  # header first
    # the download buttons call the same code
    assert explorer.dl["txt"].callback().getvalue().decode() == rules


def test_selecting_a_solver_warms_it_next(explorer, monkeypatch):
    from treeexplorer.ui import warm

    asked = []
    monkeypatch.setattr(warm, "prefer", asked.append)
    explorer.solver_w.value = "uislow"
    assert asked == ["uislow"]


def test_background_run_through_the_ui_keeps_it_responsive(explorer):
    def event():  # a UI event: the front redrawn on another axis; its latency in seconds
        t0 = time.perf_counter()
        explorer.x_w.value = "depth" if explorer.x_w.value != "depth" else "splits"
        return time.perf_counter() - t0

    # the same event with no run going, under this machine's load at the time: what the run may add is measured
    # against it (a shared machine stretched one redraw past the old fixed 1 s bound)
    event()  # the first redraw on an axis builds what the next ones reuse
    idle = max(event() for _ in range(4))
    explorer.solver_w.value = "uislow"
    explorer.param_widgets["max_depth"].value = 4
    explorer.param_widgets["step"].value = 0.2
    job = explorer.run_now()
    assert job is not None and explorer.cancel_w.disabled is False and explorer.run_w.disabled is True
    lat = []
    while job.running:
        lat.append(event())  # mid-solve
        explorer.poll()
        time.sleep(0.05)
    explorer.poll()
    assert len(explorer.controller.runs) == 2 and explorer.run_w.disabled is False
    assert "Last run" in explorer.status_w.object
    # the run adds under 1 s to an event (generous; bench_ui.py reports the real figures)
    assert max(lat) < idle + 1.0, (max(lat), idle)
    explorer.solver_w.value = "uigreedy"


def test_streamed_partial_fronts_are_drawn_until_the_run_ends(explorer):
    from treeexplorer.api import solve

    explorer.solver_w.value = "uislow"
    explorer.param_widgets["max_depth"].value = 3
    explorer.param_widgets["step"].value = 0.3
    job = explorer.run_now()
    partial = solve("iris", solver="uigreedy", test_size=0.25, max_depth=1)
    job.report({"phase": "solving", "elapsed": 0.1, "partial_front": partial})  # as the pipeline streams it
    explorer.poll()
    c = explorer.controller
    assert c.partial is not None and "running" in c.partial.label
    assert set(explorer.pareto.frame.run_id) == {r.id for r in c.runs} | {0}
    explorer.pareto.points.selected.indices = [int(explorer.pareto.frame.index[explorer.pareto.frame.run_id == 0][0])]
    assert c.selected[0] == 0 and explorer.export("txt").startswith(b"# dataset: iris")
    job.wait(10)
    explorer.poll()
    assert c.partial is None and 0 not in set(explorer.pareto.frame.run_id)
    assert c.selected[0] == c.runs[-1].id
    explorer.solver_w.value = "uigreedy"


def test_errors_show_as_alerts_not_tracebacks(explorer):
    explorer.solver_w.value = "uifail"
    explorer.run_now(wait=True)
    assert explorer.error_w.visible and "refuses this data" in explorer.error_w.object
    explorer.controller.error = ""
    assert not explorer.error_w.visible
    explorer.solver_w.value = "uigreedy"


def test_invalid_upload_via_widget_shows_message(explorer):
    explorer.upload_w.param.update(filename="bad.csv", value=b"only_one_column\n1\n2\n")  # as the browser sends it
    assert explorer.error_w.visible and "at least one feature column" in explorer.error_w.object
    explorer.controller.error = ""


def test_valid_upload_via_widget_is_listed_and_labelled(explorer):
    explorer.upload_w.param.update(filename="my_flowers.csv", value=IRIS_CSV)
    assert explorer.dataset_w.value == "uploaded: my_flowers" and not explorer.error_w.visible
    assert "**my_flowers**: 150 rows" in explorer.data_info.object
    run = explorer.run_now(wait=True)
    assert run.label.endswith(" · my_flowers")  # overlaid with runs on the bundled iris
    explorer.dataset_w.value = "iris"
    assert explorer.controller.dataset_name == "iris"


def test_ipywidget_bridge_builds_a_widget(explorer):
    import panel as pn

    widget = pn.ipywidget(explorer)
    assert type(widget).__name__ == "BokehModel"


def test_job_thread_is_a_daemon(ctrl):
    job = ctrl.run(RunSettings("uigreedy", {"max_depth": 1}))
    names = {t.name: t.daemon for t in threading.enumerate()}
    job.wait(5)
    ctrl.poll()
    assert all(d for n, d in names.items() if n.startswith("treeexplorer-job"))


# -- trust (issue 12) --------------------------------------------------------------------------------------


def test_importing_treeexplorer_does_not_import_panel_and_explorer_is_exported():
    import subprocess

    code = (
        "import sys, treeexplorer as tx\n"
        "assert 'panel' not in sys.modules and 'bokeh' not in sys.modules\n"
        "assert tx.Explorer.__name__ == 'Explorer' and 'panel' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_runs_belong_to_their_data_and_come_back(ctrl):
    r1 = ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 1}))
    ctrl.select(r1.id, 1)
    assert ctrl.load_bundled("car")
    assert ctrl.runs == [] and ctrl.selected is None and ctrl.data_label().startswith("car · target class")
    r2 = ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 1}))
    assert r2.label.endswith(" · car") and [r.id for r in ctrl.runs] == [r2.id]
    assert ctrl.load_bundled("iris")
    assert [r.id for r in ctrl.runs] == [r1.id] and ctrl.selected == (r1.id, 1)  # the selection comes back too
    ctrl.seed = 4  # another split is other data
    assert ctrl.runs == []
    ctrl.seed = 0
    assert [r.id for r in ctrl.runs] == [r1.id]
    ctrl.clear_runs()  # the plot's runs only: car's stay
    assert ctrl.runs == [] and [r.id for r in ctrl.all_runs] == [r2.id]


def test_a_run_finishing_after_a_data_switch_stays_with_its_data(ctrl):
    job = ctrl.run(RunSettings("uislow", {"max_depth": 4, "step": 0.5}))
    assert ctrl.load_bundled("car")
    assert job.running, "the run ended before the data switch: nothing left to check"
    wait_done(ctrl)
    assert ctrl.runs == [] and "switch back to that data" in ctrl.notice
    assert job.meta.data_label.startswith("iris")
    ctrl.load_bundled("iris")
    assert len(ctrl.runs) == 1


def test_claims_and_dominance_name_the_search_space(ctrl):
    from treeexplorer.ui.controller import dominance
    from treeexplorer.ui.views import metrics_frame

    raw = ctrl.run_sync(RunSettings("uigreedy", {"max_depth": 3}))
    mid = ctrl.run_sync(RunSettings("uibinary", {"max_depth": 2}, "mid", 3))
    assert mid.front.search_space == {"kind": "tests", "discretizer": "mid", "n_tests": 3}
    dom = dominance(ctrl.runs)
    two = next(t for t in mid.front if t.metrics["splits"] == 2)
    text = dom[(mid.id, two.id)]
    assert text.startswith(f"dominated by run #{raw.id}") and "3 MID tests" in text
    assert all(k[0] == mid.id for k in dom)  # raw's proven tree (the single leaf) is beaten by nobody
    df = points_frame(ctrl.runs, dom)
    row = df[(df.run_id == mid.id) & (df.tree == two.id)].iloc[0]
    assert row.proven == f"proven optimal over the 3 tests of MID; {text}"
    m = dict(metrics_frame(two, mid.front, text).values)
    assert m["status"] == "proven optimal over the 3 tests of MID" and m["dominated"] == text
    assert m["search space"] == "3 binary tests of mid"
    assert "optimal over the 3 tests of MID" in mid.status_text
    job = ctrl.rerun_with_more_tests(mid.id)
    wait_done(ctrl)
    # the library's rule (compare.more_tests_rerun): MID with twice the tests, at least MIN_RERUN_TESTS
    assert job.meta.settings.n_bins == 32 and ctrl.runs[-1].front.search_space["n_tests"] > 3


@pytest.mark.parametrize(
    ("disc", "n_bins", "want_disc", "want_bins"), [("quantile", 2, "quantile", 4), ("mdlp", None, "mid", 32)]
)
def test_rerun_with_more_tests_follows_the_librarys_rule(ctrl, disc, n_bins, want_disc, want_bins):
    # quantile's n_bins counts thresholds per column (2 -> 4, not 2 x all tests); mdlp takes no n_bins (MID does)
    run = ctrl.run_sync(RunSettings("uibinary", {"max_depth": 2}, disc, n_bins))
    job = ctrl.rerun_with_more_tests(run.id)
    wait_done(ctrl)
    assert (job.meta.settings.discretizer, job.meta.settings.n_bins) == (want_disc, want_bins)
    assert ctrl.runs[-1].front.status == "done" and not ctrl.error


def test_same_point_buttons_keep_their_width_in_the_apps_stretching_layout():
    # the app makes widgets stretch by default (pn.extension(sizing_mode="stretch_width")): the kept and
    # relabelled buttons must still sit side by side at their own width, not one full-width row each
    import panel as pn

    from treeexplorer.ui import Explorer

    with pn.config.set(sizing_mode="stretch_width"):
        e = Explorer(dataset="iris", run_default=False)
        try:
            c = e.controller
            for _ in range(2):
                c.run_sync(RunSettings("uigreedy", {"max_depth": 3}))
            df = e.pareto.frame
            e.pareto.points.selected.indices = [int(i) for i in df.index[df.splits == 1]]
            btn = e.same_point_box.objects[1]
            assert btn.visible and btn.sizing_mode != "stretch_width"
            assert btn.width == min(360, 40 + 8 * len(c.runs[0].label))
        finally:
            e.close()


def test_a_tap_on_overlapping_points_picks_the_one_on_top(explorer):
    c = explorer.controller
    c.clear_runs()
    a = c.run_sync(RunSettings("uigreedy", {"max_depth": 3}))
    b = c.run_sync(RunSettings("uigreedy", {"max_depth": 3}))
    df = explorer.pareto.frame
    hits = [int(i) for i in df.index[df.splits == 1]]  # one point of each run under the cursor
    assert len(hits) == 2
    explorer.pareto.points.selected.indices = hits  # what the browser sends for a tap on both
    assert c.selected == (b.id, 1) and explorer.pareto.points.selected.indices == [max(hits)]
    # the card names the other run at this point; its button switches to it
    assert [(r.id, t.id) for r, t in c.same_point()] == [(a.id, 1)]
    btn = explorer.same_point_box.objects[1]
    btn.clicks += 1
    assert c.selected == (a.id, 1)
    # the selected point is drawn on top: tapping the pile again keeps it
    explorer.pareto.points.selected.indices = hits
    assert c.selected == (a.id, 1)
    # the same button, relabelled (new widgets on every click re-walked the whole page's models)
    assert explorer.same_point_box.objects[1] is btn and btn.label.startswith(f"#{b.id} ")
    # hiding run b in the legend removes its points: only a's can be hit
    explorer.pareto._lines[b.id].visible = False
    assert set(explorer.pareto.frame.run_id) == {a.id}
    explorer.pareto._lines[b.id].visible = True
    assert set(explorer.pareto.frame.run_id) == {a.id, b.id}


def test_removing_the_selected_run_or_all_runs_leaves_no_error(explorer):
    c = explorer.controller
    run = c.run_sync(RunSettings("uigreedy", {"max_depth": 2}))
    assert c.selected[0] == run.id and explorer.tree_box.visible
    c.remove_run(run.id)
    assert not c.error and not explorer.tree_box.visible
    c.run_sync(RunSettings("uigreedy", {"max_depth": 2}))
    c.clear_runs()
    assert not c.error and not explorer.error_w.visible
    assert explorer.pareto.points.data["x"] == []
    c.error = "something failed"
    c.run_sync(RunSettings("uigreedy", {"max_depth": 1}))
    assert not explorer.error_w.visible  # the next successful run clears the alert


def test_explorer_parameters_are_live(explorer):
    explorer.test_size = 0.5
    assert explorer.test_size_w.value == 0.5 and explorer.controller.test_size == 0.5
    explorer.solver = "uislow"
    assert explorer.solver_w.value == "uislow"
    explorer.dataset = "car"
    assert explorer.controller.dataset_name == "car" and explorer.dataset_w.value == "car"
    explorer.dataset = "iris"
    explorer.solver = "uigreedy"
    explorer.test_size = 0.25
    assert explorer.controller.dataset_name == "iris" and explorer.controller.test_size == 0.25


def test_a_table_that_did_not_load_is_named_where_the_current_table_is(explorer):
    """After a refused load the header and the data card name both tables: the runs are still on the old one."""
    c = explorer.controller
    explorer.dataset_w.value = "iris"
    holes = IRIS_CSV.replace(b"5.1,3.5,1.4,0.2", b"5.1,inf,1.4,0.2", 1)
    explorer.upload_w.param.update(filename="penguins.csv", value=holes)
    assert "infinite" in c.error and c.dataset_name == "iris"
    caption, info = explorer.front.data_caption.object, explorer.sidebar.data.data_info.object
    assert "Runs on **iris" in caption and "*penguins* did not load" in caption
    assert info.startswith("**penguins** is not loaded") and "Still in use: **iris**: 150 rows" in info
    fixed = IRIS_CSV.replace(b"5.1,3.5,1.4,0.2", b"5.1,,1.4,0.2", 1)  # the fix: a gap is kept, not refused
    explorer.upload_w.param.update(filename="penguins.csv", value=fixed)
    assert c.dataset_name == "penguins" and not c.refused_table
    assert "did not load" not in explorer.front.data_caption.object
    assert explorer.sidebar.data.data_info.object.startswith("**penguins**: 150 rows")
    explorer.target_w.value = "petal_width"  # a setting of the table in use refused: no other table is named
    assert c.many_classes is not None and not c.refused_table
    explorer.many_cancel_w.clicks += 1
    explorer.dataset_w.value = "iris"
    assert not c.refused_table and c.dataset_name == "iris"


def test_many_classes_and_missing_rows_through_the_widgets(explorer):
    c = explorer.controller
    explorer.target_w.value = "petal_width"
    assert c.many_classes == {"column": "petal_width", "n_classes": 22} and explorer.many_w.visible
    explorer.many_cancel_w.clicks += 1
    assert c.target == "species" and not explorer.many_w.visible and not explorer.error_w.visible
    holes = IRIS_CSV.replace(b"5.1,3.5,1.4,0.2", b"5.1,,1.4,0.2", 1)
    explorer.upload_w.param.update(filename="holes.csv", value=holes)
    assert not c.error and c.dataset.n_rows == 150 and "would drop 1 row)" in explorer.drop_missing_w.label
    assert "kept 1 row(s) with missing values" in c.notice
    explorer.drop_missing_w.value = True
    assert not c.error and c.dataset.n_rows == 149 and "drops 1 row)" in explorer.drop_missing_w.label
    explorer.drop_missing_w.value = False
    explorer.upload_w.param.update(filename="nothing.csv", value=None)  # Panel's value for an empty file
    assert c.error == "nothing.csv: the file is empty"
    c.error = ""
    explorer.dataset_w.value = "iris"
