"""The Alternatives card's cloud on the real palmerpenguins table (the package's copy; skipped without it): the
set drawn faintly on the Pareto plot on demand, its legend entry, one tooltip per place naming the set's tree, a
click on it opening that tree of the set (never a tree of the run under it), and "Hide" taking it away.
Screenshots at a laptop's 1280 px and at 1600 px (test-artifacts/rashomon-cloud-*.png)."""

from __future__ import annotations

import re

import pytest
from browser_helpers import ALL_VIEWS_JS, CHROMIUM, PLOT_INTO_VIEW_JS, POINTS_JS, served_app, settled, shot
from test_browser_rashomon import CARD, STATUS_DONE, click_point, find, wait_status
from test_browser_surface import tooltip

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

TIP = ".bk-Tooltip"

# Screen positions of the cloud's places (the source with "tip" and "stamp" columns), from Bokeh's own scales.
CLOUD_JS = (
    "() => {"
    + ALL_VIEWS_JS
    + """  const out = [];
  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    const rect = v.el.getBoundingClientRect();
    for (const [m, rv] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (!(d && d.tip && d.stamp && d.count) || m.glyph.marker?.value == "x") continue;
      for (let i = 0; i < d.x.length; i++) out.push({
        rank: d.rank[i], count: d.count[i], title: d.title[i], size: d.size[i], visible: m.visible,
        x: rect.x + v.frame.x_scale.compute(d.x[i]), y: rect.y + v.frame.y_scale.compute(d.y[i])});
    }
  }
  return out;
}"""
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    penguins = pytest.importorskip("palmerpenguins")
    path = tmp_path_factory.mktemp("cloud") / "penguins.csv"
    penguins.load_penguins().dropna().to_csv(path, index=False)  # the real table, its 11 gappy rows dropped
    env = {"TREEEXPLORER_SOLVER": "murtree", "TREEEXPLORER_DATASET": str(path)}
    with served_app(env_extra=env, log_name="panel-serve-rashomon-cloud.log") as s:
        yield s


# The 1280 case is the server's first session: slow to build and to load, its exact front often arrived between
# the browser's fetch of the page and its load, when Panel dropped the run list's new layer entries
# (treeexplorer.ui.viewkit.ViewContext.after_load).
@pytest.mark.parametrize("width, height", [(1280, 800), (1600, 1000)])
def test_the_set_drawn_on_the_plot_and_a_click_opens_its_tree(server, new_page, width, height):
    url, _ = server
    page = new_page(url, width, height, wait_for="text=#1 murtree")
    try:
        check_cloud(page, f"{width}")
    except Exception:
        shot(page, f"failed-rashomon-cloud-{width}", full_page=False)
        raise


def check_cloud(page, tag: str) -> None:
    expect = pytest.importorskip("playwright.sync_api").expect
    errors = []  # the hover and the click run in the page: a script error there fails the test
    page.on("pageerror", lambda e: errors.append(str(e)))
    click_point(page, 3)
    page.get_by_text(CARD).first.click()
    find(page, 300)
    wait_status(page, lambda t: STATUS_DONE.search(t) and "cancelled" not in t)
    card = page.locator(".card", has_text=CARD)
    show = card.get_by_role("button", name="Show on the plot")
    expect(show).to_be_enabled(timeout=30_000)
    assert not page.evaluate(CLOUD_JS)
    show.click()
    expect(card.get_by_role("button", name="Hide from the plot")).to_be_visible(timeout=30_000)
    page.wait_for_function(f"() => ({CLOUD_JS})().length > 0", timeout=30_000)
    page.evaluate(PLOT_INTO_VIEW_JS)
    cloud = settled(page, CLOUD_JS.replace("rank: d.rank[i]", "run: 0, tree: d.rank[i], rank: d.rank[i]"))
    assert sum(p["count"] for p in cloud) == 300  # every tree of the set, at its place
    assert len(cloud) < 300 and max(p["size"] for p in cloud) > min(p["size"] for p in cloud)
    # the legend: the run list's entry says what the faint markers are
    legend = page.get_by_text(re.compile(r"300 trees of the Rashomon set of run #1"))
    expect(legend.first).to_be_visible(timeout=30_000)
    page.evaluate(PLOT_INTO_VIEW_JS)
    shot(page, f"rashomon-cloud-{tag}", full_page=False)
    # a place away from every run's point: its tooltip names the set's tree, a click opens that tree of the set
    tip = page.locator(TIP).first
    for attempt in range(3):  # positions read again right before the hover: the page may have moved
        page.evaluate(PLOT_INTO_VIEW_JS)
        points = settled(page, POINTS_JS)
        cloud = settled(page, CLOUD_JS.replace("rank: d.rank[i]", "run: 0, tree: d.rank[i], rank: d.rank[i]"))
        far = [p for p in cloud if all((p["x"] - q["x"]) ** 2 + (p["y"] - q["y"]) ** 2 > 20**2 for q in points)]
        assert far, "every place of the cloud is under a run's point"
        target = max(far, key=lambda p: p["count"])
        page.mouse.move(5, 5)
        page.mouse.move(target["x"], target["y"])
        try:
            expect(tip).to_be_visible(timeout=8_000)
            break
        except AssertionError:
            if attempt == 2:
                raise AssertionError(f"no tooltip over the cloud; page errors: {errors}") from None
    text = tooltip(page)
    assert "of the Rashomon set" in text and f"click: open alternative #{target['rank']}" in text, text
    assert "train errors" in text and "columns tested" in text
    shot(page, f"rashomon-cloud-hover-{tag}", full_page=False)
    page.mouse.click(target["x"], target["y"])
    page.wait_for_selector(f"text=/#2 alternatives to tree \\d+ · #{target['rank']}: 1 tree /", timeout=30_000)
    page.wait_for_selector(f"text=/tree {target['rank']}: \\d+ splits?/", timeout=30_000)
    # the cloud stays (the selection is on a tree of the set, pinned); Hide takes it away
    page.evaluate(PLOT_INTO_VIEW_JS)
    shot(page, f"rashomon-cloud-opened-{tag}", full_page=False)
    assert page.evaluate(CLOUD_JS)
    card.get_by_role("button", name="Hide from the plot").click()
    page.wait_for_function(f"() => ({CLOUD_JS})().length == 0", timeout=30_000)
    expect(legend).to_have_count(0, timeout=30_000)
    # BokehJS drops, with "reference pNNN isn't known", a patch naming a model the server replaced meanwhile (two
    # quick redraws: the opened tree, then Hide); seen once in a 2-worker CI run, the page went on working (every
    # check above passed). Any other page error fails the test.
    assert not [e for e in errors if not re.fullmatch(r"reference p\d+ isn't known", e)], errors
