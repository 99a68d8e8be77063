"""The tree view in chromium at 1600×1000 and 1280×800 (issue 16): a 28-split tree readable and unclipped
in a view that fills its card, zoom / pan / reset, full screen, click-to-collapse, the compact layout of a
deep tree, explain a row, and the side-by-side Compare diagrams.

One served app for the module; one page per window size walks through every item (a fresh session each),
so the whole file stays well under a minute after the server is up.  Screenshots: ``test-artifacts/tv_*``.
"""

from __future__ import annotations

import time

import pytest
from browser_helpers import CHROMIUM, POINTS_JS, served_app, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

# The app's tree views (the main one has a TapTool; the Compare diagrams do not), as drawn: text size,
# ranges, the plot's box on screen, and every node box in data and screen units.
VIEWS_JS = """() => {
  const views = [];
  const walk = v => { views.push(v); if (v.child_views) for (const c of v.child_views) walk(c); };
  for (const v of Object.values(Bokeh.index)) walk(v);
  const out = [];
  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    let boxes = null, bold = null;
    for (const [m, rv] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (d && d.hidden && d.left) boxes = d;
      if (m.glyph && m.glyph.text_font_style && m.glyph.text_font_style.value === "bold") bold = m.glyph;
    }
    if (!boxes) continue;
    const rect = v.el.getBoundingClientRect();
    const fr = v.frame.bbox;
    const xs = v.frame.x_scale, ys = v.frame.y_scale;
    const nodes = [];
    for (let i = 0; i < boxes.id.length; i++) {
      nodes.push({id: boxes.id[i], hidden: boxes.hidden[i], stroke: boxes.stroke[i], test: boxes.test[i],
        sx0: rect.x + xs.compute(boxes.left[i]), sx1: rect.x + xs.compute(boxes.right[i]),
        sy0: rect.y + ys.compute(boxes.top[i]), sy1: rect.y + ys.compute(boxes.bottom[i])});
    }
    const m = v.model;
    const tap = m.toolbar.tools.some(t => t.type === "TapTool" || t.constructor.name === "TapTool");
    out.push({tap, font: parseFloat(bold.text_font_size.value || bold.text_font_size),
      x0: m.x_range.start, x1: m.x_range.end, y0: m.y_range.start, y1: m.y_range.end,
      left: rect.x + fr.left, top: rect.y + fr.top, width: fr.width, height: fr.height, nodes});
  }
  return out;
}"""


def main_view(page):
    return next(v for v in page.evaluate(VIEWS_JS) if v["tap"])


def wait_view(page, cond, timeout=20.0):
    deadline, v = time.time() + timeout, None
    while time.time() < deadline:
        views = [v for v in page.evaluate(VIEWS_JS) if v["tap"]]
        v = views[0] if views else None
        if v is not None and cond(v):
            return v
        time.sleep(0.15)
    raise AssertionError(f"tree view never reached the expected state; last: {v and {k: v[k] for k in v if k != 'nodes'}}")


def click_point(page, splits):
    deadline = time.time() + 30
    while time.time() < deadline:
        pts = [p for p in page.evaluate(POINTS_JS) if p["run"] == 2 and p["splits"] == splits]
        if pts:
            page.mouse.click(pts[0]["x"], pts[0]["y"])
            page.wait_for_selector(f"text=/tree \\d+: {splits} splits/", timeout=30_000)
            return
        time.sleep(0.2)
    raise AssertionError(f"no point with {splits} splits")


@pytest.fixture(scope="module")
def server():
    with served_app(log_name="panel-serve-treeview.log") as s:
        yield s


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)], ids=["1600", "1280"])
def test_tree_view(server, new_page, size):
    width, height = size
    url, _ = server
    page = new_page(url, width, height)
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    page.locator(".bk-input-group:has(label:text-is('Dataset')) select").select_option("balance-scale")
    page.wait_for_selector("text=/Runs on .*balance-scale/", timeout=30_000)
    page.locator(".bk-input-group:has-text('Max depth') input").fill("6")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=#2 uigreedy", timeout=60_000)
    click_point(page, 28)
    tag = f"{width}x{height}"
    v = wait_view(page, lambda v: len(v["nodes"]) == 57)
    page.get_by_role("button", name="Full screen").scroll_into_view_if_needed()
    page.mouse.wheel(0, 150)
    page.wait_for_timeout(300)
    v = main_view(page)
    print({k: v[k] for k in v if k != "nodes"})
    print(min(n["sx0"] for n in v["nodes"]), max(n["sx1"] for n in v["nodes"]), min(n["sy0"] for n in v["nodes"]), max(n["sy1"] for n in v["nodes"]))
    shot(page, f"tv_28_splits_{tag}", full_page=False)
