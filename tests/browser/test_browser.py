"""Playwright + Debian's chromium against ``panel serve apps/explorer.py`` (the real app file).

The served process imports ``fakes`` (``TREEEXPLORER_PLUGINS``) so most tests do not depend on which solvers
have landed.  One server per module; every test opens its own page (its own session), so any test runs alone
(``-k``).  The ``offline`` guard (conftest) fails a test whose page asks for anything outside localhost.
Screenshots of the main states go to ``test-artifacts/``.
"""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from browser_helpers import (
    ALL_VIEWS_JS,
    ARTIFACTS,
    AXIS_LABEL_JS,
    CHROMIUM,
    PLOT_INTO_VIEW_JS,
    POINTS_JS,
    ROOT,
    TREE_SOURCE_JS,
    TREE_TEXTS_JS,
    hover_point,
    served_app,
    settled,
    shot,
)
from waiting import wait_until

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def server():
    with served_app() as s:
        yield s


@pytest.fixture
def app(server, new_page):
    """A fresh session of the app at 1600×1000, its default run (#1, the greedy stand-in) drawn."""
    url, _ = server
    page = new_page(url)
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    points(page, runs={1})
    return page


def points(page, wait: float = 20.0, runs: set | None = None) -> list[dict]:
    """Train points on the canvas, waiting until some (or exactly the ``runs``) are drawn."""
    deadline = time.time() + wait
    pts = []
    while time.time() < deadline:
        # a click on a point scrolls the tree card into view: bring the plot back before reading positions
        page.evaluate(PLOT_INTO_VIEW_JS)
        pts = page.evaluate(POINTS_JS)
        if (pts if runs is None else {p["run"] for p in pts} == runs) or (runs == set() and not pts):
            return settled(page) if pts else pts  # not while the plot still rescales (a click would miss)
        time.sleep(0.2)
    return pts


def select(page, label: str, value: str) -> None:
    """Choose ``value`` in the sidebar select labelled ``label``."""
    page.locator(f".bk-input-group:has(label:text-is('{label}')) select").select_option(value)


def run_and_wait(page, run_id: int, solver: str = "uigreedy") -> None:
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector(f"text=#{run_id} {solver}", timeout=60_000)


def card_title(page) -> str:
    return page.locator("p:has-text(', tree ')").first.text_content()


def test_app_loads_offline_with_a_default_front(server, new_page):
    url, _ = server
    for width, height in ((1600, 1000), (1280, 800)):
        page = new_page(url, width, height)
        page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
        pts = points(page, runs={1})
        assert len({p["tree"] for p in pts}) == 4  # greedy depths 0..3
        assert page.get_by_text("Selected tree").count() == 1
        page.wait_for_timeout(300)  # let the canvas repaint before the screenshot
        shot(page, f"01_loaded_{width}x{height}")
    # the offline guard (conftest) checks at teardown that nothing outside localhost was requested


def test_a_click_shows_the_tree_whose_nodes_name_their_majority_class(app):
    pt = next(p for p in points(app) if p["run"] == 1 and p["splits"] == 2)
    app.mouse.click(pt["x"], pt["y"])
    app.wait_for_selector("text=tree 2: 2 split", timeout=30_000)
    app.wait_for_function(
        f"() => {{ const t = ({TREE_TEXTS_JS})(); return t.length === 5 && t[0].includes('petal_length'); }}",
        timeout=30_000,
    )
    check_majority_labels(app)
    shot(app, "02_point_selected")


def check_majority_labels(page) -> None:
    """Item 1: every drawn node, internal ones included, is labelled with the class of most rows (argmax)."""
    drawn = page.evaluate(TREE_SOURCE_JS)
    assert drawn["majority"] and len(drawn["majority"]) == len(drawn["classes"])
    for majority, classes in zip(drawn["majority"], drawn["classes"]):
        counts = {name: int(n) for name, n in (part.rsplit(": ", 1) for part in classes.split(", "))}
        label = majority.rsplit(" (", 1)[0]
        assert counts[label] == max(counts.values()), f"node labelled {label!r} but its counts are {counts}"


# The trees whose points the browser shows selected (outlined).
SELECTED_JS = """() => {
  const out = [];
  const walk = v => {
    const d = v.model && v.model.data_source && v.model.data_source.data;
    if (d && d.run_id && d.tree) for (const i of v.model.data_source.selected.indices) out.push(d.tree[i]);
    if (v.child_views) for (const c of v.child_views) walk(c);
    if (v.renderer_views) for (const [, rv] of v.renderer_views) walk(rv);
  };
  for (const v of Object.values(Bokeh.index)) walk(v);
  return out;
}"""


def test_a_slow_click_and_a_quick_second_click_select_their_points_too(app):
    # Bokeh's tap is a click released within 300 ms, and not within 300 ms of the previous tap: a slower
    # press (touch screens, a busy browser between mouse down and up) is a "press", the second of two quick
    # clicks a "double tap".  Both must select, as a tap does.
    def at(splits):
        return next((p["x"], p["y"]) for p in points(app, runs={1}) if p["splits"] == splits)

    app.mouse.move(*at(1))
    app.mouse.down()
    app.wait_for_timeout(600)
    app.mouse.up()
    app.wait_for_selector("text=/#1 uigreedy.*tree 1: 1 split/", timeout=30_000)
    app.mouse.click(*at(0))  # (``points`` waits until the plot has settled)
    # read again at once after the tap (it can scroll the tree card into view): the next click comes within
    # Bokeh's 300 ms, a double tap
    pt = next(p for p in app.evaluate(POINTS_JS) if p["run"] == 1 and p["splits"] == 4)
    app.mouse.click(pt["x"], pt["y"])
    app.wait_for_selector("text=/#1 uigreedy.*tree 3: 4 splits/", timeout=30_000)
    # a press or a click on empty plot keeps the tree, and its point keeps the outline
    x, y = at(4)
    app.mouse.move(x - 60, y + 40)
    app.mouse.down()
    app.wait_for_timeout(600)
    app.mouse.up()
    app.wait_for_timeout(500)
    app.mouse.click(x - 60, y + 40)
    app.wait_for_timeout(1000)
    assert "tree 3: 4 splits" in card_title(app)
    app.wait_for_function(f"() => ({SELECTED_JS})().includes(3)", timeout=10_000)


def test_sat_trees_name_the_majority_class_at_every_node(app):
    # the real SAT solver (pysat): its internal nodes once all read the first class ("setosa 0%")
    select(app, "Solver", "sat")
    app.wait_for_selector("text=Max depth", timeout=30_000)
    run_and_wait(app, 2, "sat")
    pts = [p for p in points(app, runs={1, 2}) if p["run"] == 2 and p["splits"] >= 2]
    pt = max(pts, key=lambda p: p["splits"])
    app.mouse.click(pt["x"], pt["y"])
    app.wait_for_selector(f"text=/#2 sat.*tree {pt['tree']}:/", timeout=30_000)
    app.wait_for_function(f"() => ({TREE_SOURCE_JS})().majority.length === {2 * pt['splits'] + 1}", timeout=30_000)
    check_majority_labels(app)


def test_a_click_on_shared_points_opens_the_run_on_top_and_offers_the_others(app):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # conftest skips without playwright

    run_and_wait(app, 2)  # the same greedy trees again: every point of run 1 lies under one of run 2
    pts = points(app, runs={1, 2})
    pt = next(p for p in pts if p["run"] == 2 and p["splits"] == 1)
    app.mouse.click(pt["x"], pt["y"])
    app.wait_for_selector("text=/#2 uigreedy.*tree 1: 1 split/", timeout=30_000)
    # the card names the other run with the same point; its button switches to that run's tree
    other = app.get_by_role("button", name="#1 uigreedy · depth=3, tree 1")
    other.wait_for(timeout=30_000)
    shot(app, "03_shared_point")
    other.click()
    app.wait_for_selector("text=/#1 uigreedy.*tree 1: 1 split/", timeout=30_000)
    app.get_by_role("button", name="#2 uigreedy · depth=3, tree 1").wait_for(timeout=30_000)
    # hide run 2 in the run list (the legend; a click on the label toggles its checkbox): its points leave the
    # plot and a click can only reach run 1
    app.locator(".bk-Checkbox", has_text="#2 uigreedy").locator(".bk-label").click()
    assert {p["run"] for p in points(app, runs={1})} == {1}
    pt = next(p for p in points(app) if p["splits"] == 2)
    app.mouse.click(pt["x"], pt["y"])
    app.wait_for_selector("text=/#1 uigreedy.*tree 2: 2 splits/", timeout=30_000)
    # shown again, run 2 is on top once more
    app.locator(".bk-Checkbox", has_text="#2 uigreedy").locator(".bk-label").click()
    for attempt in range(3):
        pt = next(p for p in points(app, runs={1, 2}) if p["run"] == 2 and p["splits"] == 4)
        app.mouse.click(pt["x"], pt["y"])
        try:
            app.wait_for_selector("text=/#2 uigreedy.*tree 3: 4 splits/", timeout=10_000)
            break
        except PlaywrightTimeout:
            # Seen once in CI (stop 29, cause not found): the first click after the re-show opened run 1's
            # tree 3, as if the server still had run 2 hidden.  Clicking again must reach run 2.
            if attempt == 2:
                raise


def checkbox(page, label: str):
    """The input of the Panel checkbox labelled ``label`` (input and label are siblings in a shadow root)."""
    return page.locator(".bk-Checkbox", has_text=label).locator("input[type=checkbox]")


def red_alert(page) -> bool:
    """Whether the red (error) alert is on screen (Panel keeps it in the page, hidden, when there is none)."""
    return page.locator(".alert-danger").first.is_visible()


def test_removing_the_selected_run_and_all_runs_shows_no_error(server, app):
    _, log_path = server
    before = log_path.read_text(errors="replace").count("TypeError")
    run_and_wait(app, 2)
    app.get_by_role("button", name="Remove run #2 ").click()  # run 2's: its tree is the one shown
    app.wait_for_selector("text=Click a point of the front to see its tree", timeout=30_000)
    assert points(app, runs={1}) and not red_alert(app)
    run_and_wait(app, 3)
    app.get_by_role("button", name="Remove all runs").click()
    app.wait_for_selector("text=Run a solver to get a front of trees", timeout=30_000)
    assert points(app, runs=set()) == [] and not red_alert(app)
    # a failing run shows a red alert; the next successful run clears it
    select(app, "Solver", "uifail")
    app.wait_for_selector("text=Always raises", timeout=30_000)
    app.get_by_role("button", name="Run", exact=True).click()
    app.wait_for_selector("text=refuses this data on purpose", timeout=20_000)
    select(app, "Solver", "uigreedy")
    app.wait_for_selector("text=Greedy Gini trees", timeout=30_000)
    run_and_wait(app, 4)
    app.wait_for_selector("text=refuses this data on purpose", state="hidden", timeout=30_000)
    assert not red_alert(app)
    log = log_path.read_text(errors="replace")  # (uifail's own traceback is logged on purpose)
    assert log.count("TypeError") == before and "Bokeh.stylesheets" not in log
    shot(app, "04_after_removing_runs")


def test_optimality_claims_name_their_search_space_and_dominated_points(app):
    select(app, "Solver", "uibinary")
    app.wait_for_selector("text=claimed optimal", timeout=30_000)
    select(app, "Discretizer", "mid")
    app.locator(".bk-input-group:has-text('N bins') input").fill("3")
    app.keyboard.press("Tab")
    run_and_wait(app, 2, "uibinary")
    pt = next(p for p in points(app, runs={1, 2}) if p["run"] == 2 and p["splits"] == 2)
    assert pt["proven"].startswith("proven optimal over the 3 tests of MID; dominated by run #1")
    # hover: the claim, qualified, and who dominates it (the tooltip is the only place saying both before a click)
    app.mouse.move(pt["x"], pt["y"] + 1)
    app.wait_for_selector("text=/proven optimal over the 3 tests of MID; dominated by run #1/", timeout=30_000)
    app.mouse.click(pt["x"], pt["y"])
    app.wait_for_selector("text=/#2 uibinary.*tree 2: 2 splits.*proven optimal over the 3 tests of MID/")
    app.wait_for_selector("text=/Tree 2 is dominated by run #1.*the 3 MID tests exclude better thresholds/")
    metrics = app.locator("table").first.text_content()
    assert "proven optimal over the 3 tests of MID" in metrics and "dominated by run #1" in metrics
    shot(app, "05_dominated_claim")
    # the marker legend states the claims of the runs on the plot
    legend = app.locator("text=/proven optimal over its run's search space/")
    assert legend.count() == 1
    # the offered re-run: the library's rule (twice the tests, at least 32)
    app.get_by_role("button", name="Re-run with 32 MID tests").click()
    app.wait_for_selector("text=#3 uibinary · mid/32", timeout=30_000)


def test_runs_belong_to_their_dataset_target_and_split(app):
    select(app, "Dataset", "car")
    app.wait_for_selector("text=/car.*1,728 rows/", timeout=30_000)
    app.wait_for_selector("text=Runs on car · target class", timeout=30_000)
    assert points(app, runs=set()) == []  # iris's run is not drawn over car's axes
    assert app.locator("text=#1 uigreedy").count() == 0
    run_and_wait(app, 2)
    assert app.locator("text=#2 uigreedy · depth=3 · car").count() >= 1  # the session has runs of two tables
    assert {p["run"] for p in points(app, runs={2})} == {2}
    shot(app, "06_car_runs")
    select(app, "Dataset", "iris")
    app.wait_for_selector("text=Runs on iris · target species", timeout=30_000)
    assert {p["run"] for p in points(app, runs={1})} == {1}  # iris's run is back, car's is not drawn
    app.wait_for_selector("text=/#1 uigreedy.*tree 2/", timeout=30_000)  # and so is its selected tree
    # another split is other data too
    app.locator(".bk-input-group:has-text('Split seed') input").fill("3")
    app.keyboard.press("Tab")
    app.wait_for_selector("text=/Runs on iris.*seed 3/", timeout=30_000)
    assert points(app, runs=set()) == []


def test_a_target_with_many_classes_asks_for_confirmation(app):
    select(app, "Target column", "petal_width")
    app.wait_for_selector("text=/target column .petal_width. has 22/", timeout=30_000)  # the message, not an option
    keep = app.get_by_role("button", name="Keep the previous table")
    keep.click()
    app.wait_for_selector("text=/target column 'petal_width' has 22/", state="hidden", timeout=30_000)
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(app.locator(".bk-input-group:has(label:text-is('Target column')) select")).to_have_value("species")
    select(app, "Target column", "petal_width")
    app.get_by_role("button", name=re.compile("Use 'petal_width' anyway")).click()
    app.wait_for_selector("text=/iris.*150 rows.*22 classes/", timeout=30_000)
    assert not red_alert(app)
    shot(app, "07_many_classes_confirmed")


def upload(page, name: str, content: bytes) -> None:
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": content}]
    )


def test_bad_uploads_say_what_is_wrong_and_gaps_are_kept_or_dropped(app):
    upload(app, "nothing.csv", b"")
    app.wait_for_selector("text=nothing.csv: the file is empty", timeout=30_000)
    upload(app, "broken.csv", b"just_one_column\n1\n2\n")
    app.wait_for_selector("text=needs at least one feature column", timeout=30_000)
    lines = (ROOT / "assets" / "iris.csv").read_text().splitlines()
    for i in (5, 40, 90):  # blank one cell in three rows
        cells = lines[i].split(",")
        cells[1] = ""
        lines[i] = ",".join(cells)
    upload(app, "holes.csv", ("\n".join(lines) + "\n").encode())
    app.wait_for_selector("text=Drop rows with missing values (would drop 3 rows)", timeout=30_000)
    app.wait_for_selector("text=/holes.*150 rows/", timeout=30_000)  # the gaps are kept: no refusal
    app.wait_for_selector("text=/kept 3 row\\(s\\) with missing values/", timeout=30_000)
    assert not red_alert(app)
    checkbox(app, "Drop rows with missing values").check()
    app.wait_for_selector("text=/holes.*147 rows/", timeout=30_000)
    app.wait_for_selector("text=Drop rows with missing values (drops 3 rows)", timeout=30_000)
    assert not red_alert(app)
    run_and_wait(app, 2)
    shot(app, "08_missing_rows_dropped")


def test_valid_upload_loads_the_table(app):
    upload(app, "my_flowers.csv", (ROOT / "assets" / "iris.csv").read_bytes())
    app.wait_for_selector("text=/my_flowers.*150 rows/", timeout=30_000)
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(app.locator("select").nth(0)).to_have_value(re.compile("my_flowers"), timeout=30_000)
    expect(app.locator("select").nth(1)).to_have_value("species", timeout=30_000)
    run_and_wait(app, 2)


def _download(page, label: str) -> bytes:
    with page.expect_download(timeout=20_000) as info:
        page.get_by_role("button", name=label, exact=True).click()
    data = Path(info.value.path()).read_bytes()
    (ARTIFACTS / info.value.suggested_filename).write_bytes(data)
    return data


def test_png_and_rules_downloads_are_valid(app):
    from PIL import Image

    png = _download(app, "PNG")
    img = Image.open(io.BytesIO(png))
    img.load()
    assert img.format == "PNG" and img.width > 200 and "iris" in img.text["Title"]
    rules = _download(app, "Rules").decode("utf-8")
    assert rules.startswith("# dataset: iris") and "IF petal_length" in rules


def test_complexity_axis_and_held_out_points(app):
    before = points(app, runs={1})
    app.get_by_role("button", name="Leaves", exact=True).click()
    app.wait_for_function(f"() => ({AXIS_LABEL_JS})().includes('Leaves')", timeout=30_000)
    after = points(app, runs={1})
    assert [p["x"] for p in after] != [p["x"] for p in before]
    checkbox(app, "held-out points").uncheck()
    # the held-out crosses' source (the train points' columns without run_id) empties
    app.wait_for_function(HELD_OUT_EMPTY_JS, timeout=30_000)


HELD_OUT_EMPTY_JS = (
    "() => {"
    + ALL_VIEWS_JS
    + """  let found = false;
  for (const v of views.filter(v => v.renderer_views)) {
    for (const [m] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (d && d.tree && d.test_accuracy && !d.run_id) { found = true; if (d.x.length) return false; }
    }
  }
  return found;
}"""
)


def test_cancel_keeps_a_partial_front(app):
    select(app, "Solver", "uislow")
    app.wait_for_selector("text=One tree per step", timeout=30_000)
    app.locator(".bk-input-group:has-text('Step') input").fill("3")  # 7 trees, 21 s: time to press Cancel
    app.keyboard.press("Tab")
    app.get_by_role("button", name="Run", exact=True).click()
    app.wait_for_selector("text=growing", timeout=30_000)
    shot(app, "09_running")
    t0 = time.time()
    app.get_by_role("button", name="Cancel", exact=True).click()
    app.wait_for_selector("text=/run #2 cancelled: kept the \\d+ tree/", timeout=30_000)
    # stopped by the click, not by running out of trees (21 s); wall time is not asserted: on a busy machine the
    # browser round trips dominate (the controller test checks that the job itself stops within a second)
    assert time.time() - t0 < 21
    app.wait_for_selector("text=/#2 uislow.*cancelled in/", timeout=30_000)
    assert {p["run"] for p in points(app, runs={1, 2})} == {1, 2}


def test_closing_the_tab_stops_its_job(server, app):
    _, log_path = server
    select(app, "Solver", "uislow")
    app.wait_for_selector("text=One tree per step", timeout=30_000)
    app.locator(".bk-input-group:has-text('Step') input").fill("8")  # still running when the session is reaped
    app.keyboard.press("Tab")
    app.get_by_role("button", name="Run", exact=True).click()
    app.wait_for_selector("text=growing", timeout=30_000)
    app.close()
    # the server looks for closed sessions every 0.5 s, forgets them after 15 s
    wait_until(
        lambda: "session closed, cancelled its job" in log_path.read_text(errors="replace"),
        what="the server to cancel the closed session's job",
        every=0.3,
    )


def test_a_multiway_tree_from_branches_is_drawn_with_one_branch_per_category(app):
    # the real BRANCHES solver (compiled by the non-browser tests that ran before) on the bundled car table
    select(app, "Dataset", "car")
    app.wait_for_selector("text=/car.*1,728 rows/", timeout=30_000)
    select(app, "Solver", "branches")
    app.wait_for_selector("text=multiway", timeout=30_000)
    run_and_wait(app, 2, "branches")
    pts = [p for p in points(app, runs={2}) if p["splits"]]
    pt = min(pts, key=lambda p: p["splits"])
    app.mouse.click(pt["x"], pt["y"])
    app.wait_for_selector(f"text=tree {pt['tree']}: {pt['splits']} split", timeout=30_000)
    app.wait_for_function(f"() => ({TREE_SOURCE_JS})().test.some(t => t.includes('one per category'))", timeout=30_000)
    drawn = app.evaluate(TREE_SOURCE_JS)
    categories = {
        "buying": {"vhigh", "high", "med", "low"},
        "maint": {"vhigh", "high", "med", "low"},
        "doors": {"2", "3", "4", "5more"},
        "persons": {"2", "4", "more"},
        "lug_boot": {"small", "med", "big"},
        "safety": {"low", "med", "high"},
    }
    multi = [t.split(":")[0] for t in drawn["test"] if "one per category" in t]
    assert multi and all(categories[col] <= set(drawn["text"]) for col in multi)
    # hovering the point: the tooltip (with the solver's long info line) wraps inside the plot's width
    tip = hover_point(app, 2, pt["tree"], ".bk-Tooltip, .bk-tooltip")
    box = tip.bounding_box()
    assert box is not None and box["width"] <= 420
    shot(app, "10_multiway_tree_hover")
