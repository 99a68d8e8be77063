"""The decision surface with several runs on a penguins-like table (generated here, nothing downloaded).

The hover/click scan: wherever the plot's one tooltip names a run's tree, a click selects that tree.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pandas as pd
import pytest
from browser_helpers import ALL_VIEWS_JS, CHROMIUM, PLOT_INTO_VIEW_JS, POINTS_JS, served_app, settled, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

TIP = ".bk-Tooltip"


def penguins_csv(n: int = 344, seed: int = 0) -> bytes:
    """The palmerpenguins layout and roughly its class structure: species first, sex with gaps, year last."""
    rng = np.random.default_rng(seed)
    species = rng.choice(["Adelie", "Gentoo", "Chinstrap"], n, p=[0.44, 0.36, 0.2])
    centre = {  # bill length, bill depth, flipper, mass
        "Adelie": (38.8, 18.3, 190, 3700),
        "Gentoo": (47.5, 15.0, 217, 5076),
        "Chinstrap": (48.8, 18.4, 196, 3733),
    }
    c = np.array([centre[s] for s in species], dtype=float)
    sd = np.array([2.8, 1.1, 6.5, 450])
    vals = c + rng.normal(0, 1, (n, 4)) * sd
    island = np.where(species == "Gentoo", "Biscoe", np.where(species == "Chinstrap", "Dream", "Torgersen"))
    mix = rng.random(n) < 0.35
    island = np.where(mix, rng.choice(["Biscoe", "Dream", "Torgersen"], n), island)
    df = pd.DataFrame(
        {
            "species": species,
            "island": island,
            "bill_length_mm": vals[:, 0].round(1),
            "bill_depth_mm": vals[:, 1].round(1),
            "flipper_length_mm": vals[:, 2].round(0),
            "body_mass_g": vals[:, 3].round(-1),
            "sex": rng.choice(["male", "female"], n),
            "year": rng.choice([2007, 2008, 2009], n),
        }
    )
    df.loc[rng.choice(n, 9, replace=False), "sex"] = None  # 11 rows with a gap, as in the real table
    df.loc[rng.choice(n, 2, replace=False), ["bill_length_mm", "body_mass_g"]] = np.nan
    return df.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def server():
    with served_app(log_name="panel-serve-surface.log") as s:
        yield s


def open_app(server, new_page, size):
    """A fresh session at ``size``; generous timeouts: on a loaded machine the first page takes minutes."""
    url, _ = server
    page = new_page(None, *size)
    page.goto(url, timeout=400_000)
    page.wait_for_selector("text=#1 uigreedy", timeout=400_000)
    return page


def select(page, label: str, value: str) -> None:
    box = page.locator(f".bk-input-group:has(label:text-is('{label}')) select")
    try:
        box.select_option(value)
    except Exception as exc:  # say what the select offered (seen once: the option was missing for 30 s)
        options = box.evaluate("el => Array.from(el.options).map(o => [o.value, o.textContent, o.disabled])")
        raise AssertionError(f"{label}: no option {value!r} among {options}") from exc


def load_penguins(page) -> None:
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "penguins.csv", "mimeType": "text/csv", "buffer": penguins_csv()}]
    )
    page.wait_for_selector("text=/Drop rows with missing values \\(would drop 11 rows\\)/", timeout=60_000)
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(page.locator(".bk-input-group:has(label:text-is('Target column')) select")).to_have_value("species")
    # the page says which target it guessed and why
    page.wait_for_selector("text=/target 'species' \\(guessed: /", timeout=60_000)
    # a click on the checkbox's label (not on its 13 px box) ticks it
    drop = page.locator(".bk-Checkbox", has_text="Drop rows with missing values")
    drop.locator(".bk-label").click()
    expect(drop.locator("input")).to_be_checked(timeout=30_000)
    page.wait_for_selector("text=/penguins.*333 rows/", timeout=60_000)
    expect(page.locator(".bk-input-group:has(label:text-is('Dataset')) select")).to_have_value(re.compile("penguins"))


def run(page, run_id: int, solver: str) -> None:
    select(page, "Solver", solver)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector(f"text=#{run_id} {solver}", timeout=240_000)
    page.wait_for_function(f"() => ({POINTS_JS})().some(p => p.run === {run_id})", timeout=240_000)


# The lines of a tooltip (its content lives in the Tooltip element's shadow root).
TIP_LINES_JS = """el => {
  for (const root of [el.shadowRoot, el]) {
    const box = root && root.querySelector('div[style*="max-width"]');
    if (box) return Array.from(box.children).map(c => c.textContent).join("\\n");
  }
  return "";
}"""


def tooltips(page) -> list[str]:
    """The text of every tooltip on screen."""
    return [t.evaluate(TIP_LINES_JS) for t in page.locator(TIP).all() if t.is_visible()]


def tooltip(page, timeout_ms: int = 5_000) -> str | None:
    """The one tooltip on screen once it has appeared and two reads agree (under load it shows, or changes to the
    point under the mouse, a while after the move); None when none shows within ``timeout_ms``."""
    last, deadline = None, time.time() + timeout_ms / 1000
    while True:
        tips = tooltips(page)
        assert len(tips) <= 1, f"{len(tips)} tooltips at once: {tips}"
        text = tips[0] if tips else None
        if text and text == last:
            return text
        if time.time() > deadline:
            return text
        last = text
        page.wait_for_timeout(60)


def card(page) -> str:
    return page.locator("p:has-text(', tree ')").first.text_content() or ""


# The train points' screen positions, after scrolling the plot into the window if it left it: one round trip.
VIEW_POINTS_JS = f"() => {{ ({PLOT_INTO_VIEW_JS})(); return ({POINTS_JS})(); }}"


def scan(page, runs: set) -> int:
    """Hover around every point; where the tooltip names a tree, click and check that the card shows it.

    Returns how many spots named a tree.  Positions are read again before each spot; when the point moved
    since the last read (a click may scroll, late data rescales the plot) they are read until they settle.
    """
    page.evaluate(PLOT_INTO_VIEW_JS)
    pts = settled(page)
    assert {p["run"] for p in pts} == runs
    named = 0
    offsets = [(0, 0), (5, 0), (-5, 0), (0, 5), (0, -5)]
    where = lambda p: (p["run"], p["tree"], round(p["x"]), round(p["y"]))  # noqa: E731
    for k in range(len(pts)):
        for dx, dy in offsets:
            now = page.evaluate(VIEW_POINTS_JS)
            if [where(p) for p in now] != [where(p) for p in pts]:  # moving: wait until two reads agree
                now = settled(page, VIEW_POINTS_JS, timeout=3)
            pts = now
            p = pts[k]
            x, y = p["x"] + dx, p["y"] + dy
            page.mouse.move(x, y)
            text = tooltip(page)
            assert text, f"no tooltip {dx, dy} px from the point of run {p['run']} tree {p['tree']}"
            head = text.splitlines()[0]
            m = re.match(r"(#\d+ \S+).* · tree (\d+)", head)
            if m is None:
                continue  # a CV point or the exact front: no tree of a run
            named += 1
            label, tree = m.group(1), m.group(2)
            page.mouse.click(x, y)
            want = re.compile(rf"{re.escape(label)}.*tree {tree}:")
            for _ in range(60):
                if want.search(card(page)):
                    break
                page.wait_for_timeout(100)
            assert want.search(card(page)), f"tooltip named {head!r}, the click showed {card(page)!r}"
    return named


# The CV marks' screen positions (the source with the 1-SE star and the best-mean ring).
MARKS_JS = (
    "() => {"
    + ALL_VIEWS_JS
    + """  const out = [];
  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    const rect = v.el.getBoundingClientRect();
    for (const [m] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (!(d && d.marker && d.cv_mean && d.choice)) continue;
      for (let i = 0; i < d.level.length; i++)
        out.push({marker: d.marker[i], x: rect.x + v.frame.x_scale.compute(d.level[i]),
                  y: rect.y + v.frame.y_scale.compute(d.cv_mean[i])});
    }
  }
  return out;
}"""
)

# Whether each train point is the top element at its position (nothing covers it), and the plot frame's box.
COVER_JS = (
    "() => {"
    + ALL_VIEWS_JS
    + """  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    let pts = null;
    for (const [m] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (d && d.run_id && d.tree && d.train_accuracy) pts = d;
    }
    if (!pts) continue;
    const hosts = new Set();
    for (let el = v.el; el; el = el.parentNode || (el.host ?? null)) hosts.add(el);
    const rect = v.el.getBoundingClientRect(), covered = [];
    for (let i = 0; i < pts.x.length; i++) {
      const x = rect.x + v.frame.x_scale.compute(pts.x[i]), y = rect.y + v.frame.y_scale.compute(pts.y[i]);
      const top = document.elementFromPoint(x, y);
      if (!hosts.has(top)) covered.push([pts.run[i], pts.tree[i], top && (top.className || top.tagName)]);
    }
    const f = v.frame.bbox;
    return {covered, frame: [rect.x + f.left, rect.y + f.top, rect.x + f.right, rect.y + f.bottom],
            legends: views.filter(w => w.model && w.model.type === "Legend" && w.model.visible).length};
  }
  return null;
}"""
)


def check_nothing_covers_a_point(page) -> None:
    """No legend in the plot, every point on top at its spot, the run list outside the plot's frame."""
    page.evaluate(PLOT_INTO_VIEW_JS)
    settled(page)
    got = page.evaluate(COVER_JS)
    assert got is not None and got["legends"] == 0
    assert got["covered"] == [], f"covered points: {got['covered']}"
    left, top, right, bottom = got["frame"]
    box = page.locator(".bk-Checkbox", has_text="#2 cart").bounding_box()
    assert box is not None and (box["y"] >= bottom or box["x"] >= right), (box, got["frame"])


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_penguins_target_the_hover_click_scan_and_the_run_list(server, new_page, size):
    page = open_app(server, new_page, size)
    try:
        check_the_surface(page, size)
    except BaseException:
        shot(page, f"failed-surface-{size[0]}x{size[1]}", full_page=False)
        raise


def check_the_surface(page, size) -> None:
    load_penguins(page)
    for run_id, solver in ((2, "cart"), (3, "dpdt"), (4, "contree")):
        run(page, run_id, solver)
    named = scan(page, {2, 3, 4})
    assert named >= 15
    # five runs and a cross-validated one (its checkbox ticked through its label)
    run(page, 5, "murtree")
    run(page, 6, "branches")
    cv = page.locator(".bk-Checkbox", has_text="Cross-validate")
    cv.locator(".bk-label").click()
    pytest.importorskip("playwright.sync_api").expect(cv.locator("input")).to_be_checked(timeout=30_000)
    select(page, "Solver", "cart")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=/#7 cart.*CV/", timeout=400_000)
    page.wait_for_function(f"() => ({MARKS_JS})().length > 0", timeout=400_000)
    check_nothing_covers_a_point(page)
    check_the_toolbar_keeps_its_tools(page)
    # every run has a remove button named for it
    for k in range(2, 8):
        assert page.get_by_role("button", name=re.compile(rf"^Remove run #{k} ")).count() == 1
    shot(page, f"surface_{size[0]}x{size[1]}", full_page=False)
    shot(page, f"surface_{size[0]}x{size[1]}_full")
    # one tooltip on the 1-SE star (the star, the ring and the mean point share the spot)
    page.evaluate(PLOT_INTO_VIEW_JS)
    star = next(m for m in page.evaluate(MARKS_JS) if m["marker"] == "star")
    page.mouse.move(star["x"], star["y"])
    tooltip(page)  # shown and steady
    tips = tooltips(page)
    assert len(tips) == 1 and "1-SE choice" in tips[0], tips
    shot(page, f"surface_{size[0]}x{size[1]}_star", full_page=False)
    # a live resize: the plot follows, and its toolbar keeps its buttons (it once folded them into "⋮")
    width, height = size
    page.set_viewport_size({"width": 900, "height": height})
    page.wait_for_timeout(800)
    settled(page)  # (under load the relayout takes longer: the points have stopped moving)
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(800)
    settled(page)
    check_the_toolbar_keeps_its_tools(page)
    check_nothing_covers_a_point(page)


def check_the_toolbar_keeps_its_tools(page) -> None:
    """The plot's toolbar shows its buttons (it once folded them into a "⋮" menu on first draw and on resize)."""
    page.evaluate(PLOT_INTO_VIEW_JS)
    overflow = page.locator(".bk-tool-overflow")
    assert not any(o.is_visible() for o in overflow.all()), "the plot's toolbar folded its tools into a menu"
    assert page.get_by_title("Reset").count() >= 1 or page.locator(".bk-tool-icon-reset").count() >= 1
