"""The Alternatives card (Rashomon set) on a penguins-like table made here: the set of a selected point listed
with progress, its rows, the share bars, an exclude toggle that re-filters without solving again, the side by
side comparison with the selected tree, an alternative opened in the tree view, and Cancel."""

from __future__ import annotations

import io
import re
import time

import pandas as pd
import pytest
from browser_helpers import CHROMIUM, PLOT_INTO_VIEW_JS, POINTS_JS, served_app, settled, shot
from test_browser_surface import penguins_csv

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

CARD = "Alternatives: the near-optimal trees behind the selected point"
STATUS_DONE = re.compile(r"^\d+ trees: (the \d+ best trees|every tree) with at most")

# The share bars' data (the figure whose source has "share" and "root" columns).
SHARES_JS = """() => {
  const walk = (v, out) => { out.push(v); if (v.child_views) for (const c of v.child_views) walk(c, out);
    if (v.renderer_views) for (const [, rv] of v.renderer_views) walk(rv, out); return out; };
  for (const root of Object.values(Bokeh.index)) for (const v of walk(root, [])) {
    const d = v.model && v.model.data_source && v.model.data_source.data;
    if (d && d.share && d.root && d.feature) return {feature: Array.from(d.feature), share: Array.from(d.share)};
  }
  return null;
}"""


# A pane's text without its shadow root's stylesheets.
TEXT_JS = """el => el.shadowRoot
  ? Array.from(el.shadowRoot.children).filter(c => !["STYLE", "LINK"].includes(c.tagName))
      .map(c => c.innerText).join("")
  : el.innerText"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    table = pd.read_csv(io.BytesIO(penguins_csv())).dropna()  # the real table's shape, its gaps dropped
    path = tmp_path_factory.mktemp("rashomon") / "penguins.csv"
    table.to_csv(path, index=False)
    env = {"TREEEXPLORER_SOLVER": "murtree", "TREEEXPLORER_DATASET": str(path)}
    with served_app(env_extra=env, log_name="panel-serve-rashomon.log") as s:
        yield s


def rows(page) -> list[dict]:
    """The card's table, one dict per row (its header's words as keys)."""
    deadline = time.time() + 15
    while True:  # a re-filter redraws the table: a read in the middle of it is read again
        table = page.locator("table:has(th:text-is('columns tested'))").first
        head = [h.strip() for h in table.locator("thead th").all_inner_texts()]
        out = [
            dict(zip(head, (c.strip() for c in r.locator("td").all_inner_texts())))
            for r in table.locator("tbody tr").all()
        ]
        if all("columns tested" in r for r in out) or time.time() > deadline:
            return out
        time.sleep(0.2)


def status(page) -> str:
    return _text(page, ".rashomon-status")


def _text(page, selector: str) -> str:
    """The text of a Panel pane (drawn inside its element's shadow root)."""
    return page.locator(selector).first.evaluate(TEXT_JS).strip()


def wait_status(page, done, timeout: float = 120.0) -> str:
    deadline = time.time() + timeout
    while not done(text := status(page)):
        assert time.time() < deadline, f"the card still says: {text}"
        time.sleep(0.2)
    return text


def click_point(page, splits: int) -> None:
    page.wait_for_function(f"() => ({POINTS_JS})().some(p => p.run === 1)", timeout=240_000)
    page.evaluate(PLOT_INTO_VIEW_JS)  # the card below may have scrolled the plot away
    pt = next(p for p in settled(page) if p["run"] == 1 and p["splits"] == splits)
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_selector(f"text=/tree \\d+: {splits} splits/", timeout=30_000)


def find(page, k: int) -> None:
    card = page.locator(".card", has_text=CARD)
    k_box = card.locator(".bk-input-group:has(label:text-is('Alternatives (k)')) input")
    k_box.fill(str(k))
    k_box.press("Enter")  # sets k; the sidebar's solver does not run (no run #2 below)
    button = page.get_by_role("button", name="Find alternatives to the selected tree")
    button.scroll_into_view_if_needed()
    button.click()


def test_alternatives_card(server, new_page):
    url, _ = server
    page = new_page(url, 1280, 800, wait_for="text=#1 murtree")
    try:
        check_card(page)
    except Exception:
        shot(page, "failed-rashomon-card", full_page=False)
        raise


def check_card(page):
    expect = pytest.importorskip("playwright.sync_api").expect

    # Cancel: the depth-3 trees with up to 7 splits are far more than 100,000; the run is stopped early
    click_point(page, 7)
    page.get_by_text(CARD).first.click()  # the card opens (built on first use)
    find(page, 100_000)
    card = page.locator(".card", has_text=CARD)
    cancel = card.get_by_role("button", name="Cancel")
    expect(cancel).to_be_enabled(timeout=60_000)
    expect(card.locator("progress")).to_be_visible()
    cancel.click()
    expect(cancel).to_be_disabled(timeout=180_000)
    text = status(page)
    assert "cancelled" in text, text
    expect(card.locator("progress")).to_be_hidden()

    # the set of the 3-split tree: listed with its errors, the gap to the selected tree and its columns
    click_point(page, 3)
    t0 = time.time()
    find(page, 60)
    wait_status(page, lambda t: STATUS_DONE.search(t) and "cancelled" not in t)
    listed = rows(page)
    assert len(listed) == 60, status(page)
    errors = [int(r["train errors"]) for r in listed]
    assert errors == sorted(errors) and all(int(r["splits"]) <= 3 for r in listed)
    assert [r["#"] for r in listed] == [str(i) for i in range(60)]
    assert listed[0]["vs selected"] in ("the selected tree", "+0")  # the point is MurTree's optimum there
    assert all(r["vs selected"] == "the selected tree" or r["vs selected"].startswith("+") for r in listed)
    used = {c for r in listed for c in r["columns tested"].split(", ") if c}
    assert used <= {"island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex", "year"}

    # the share bars: one bar per column some listed tree tests, the share of the 60 trees testing it
    deadline = time.time() + 15  # the bars change on the session's next tick (under its document lock)
    while set((bars := page.evaluate(SHARES_JS))["feature"]) != used and time.time() < deadline:
        time.sleep(0.2)
    assert set(bars["feature"]) == used
    for f, share in zip(bars["feature"], bars["share"]):
        assert share == pytest.approx(sum(f in r["columns tested"].split(", ") for r in listed) / 60)

    # the selected tree beside an alternative, differences outlined
    expect(card.get_by_text("Selected tree", exact=False).first).to_be_visible(timeout=30_000)
    expect(card.get_by_text(re.compile(r"Alternative #\d+ \(")).first).to_be_visible()

    # exclude the most used column some trees do without: the list re-filters at once, no new run (the status
    # stays as it was)
    top = next(f for f, share in zip(bars["feature"][::-1], bars["share"][::-1]) if share < 1)
    before = status(page)
    card.locator(".bk-input-group:has(label:text-is('Exclude columns')) input").first.click()
    page.locator(".choices__list--dropdown .choices__item--choice", has_text=re.compile(f"^{top}$")).first.click()
    page.keyboard.press("Escape")
    deadline = time.time() + 15
    while time.time() < deadline and any(top in r["columns tested"].split(", ") for r in rows(page)):
        time.sleep(0.2)
    filtered = rows(page)
    assert filtered and all(top not in r["columns tested"].split(", ") for r in filtered)
    assert len(filtered) < 60 and status(page) == before
    assert _text(page, ".rashomon-filter").startswith(f"{len(filtered)} of the 60 trees test none of {top}")
    deadline = time.time() + 15
    while top in page.evaluate(SHARES_JS)["feature"] and time.time() < deadline:
        time.sleep(0.2)
    assert top not in page.evaluate(SHARES_JS)["feature"]

    # open the shown alternative in the tree view: that one tree is pinned as a run (one point), selected
    pick = card.locator(".bk-input-group:has(label:text-is('Alternative shown beside the selected tree')) select")
    rank = int(pick.evaluate("el => el.options[el.selectedIndex].textContent").split(":")[0].lstrip("#"))
    card.get_by_role("button", name="Open in tree view").click()
    page.wait_for_selector(f"text=/#2 alternatives to tree \\d+ · #{rank}: 1 tree /", timeout=30_000)
    page.wait_for_selector(f"text=/tree {rank}: \\d+ splits?/", timeout=30_000)
    page.wait_for_function(f"() => ({POINTS_JS})().some(p => p.run === 2)", timeout=30_000)
    assert [p["tree"] for p in page.evaluate(POINTS_JS) if p["run"] == 2] == [rank]  # a single point
    assert not page.locator("text=/#2 murtree/").count()
    assert time.time() - t0 < 60
