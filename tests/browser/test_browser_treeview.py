"""The tree view in chromium at 1600×1000 and 1280×800 (issue 16): a 28-split tree readable and unclipped
in a view that fills its card, zoom / pan / reset, full screen, click-to-collapse, the compact layout of a
deep tree, explain a row, and the side-by-side Compare diagrams.

One served app for the module; one page per window size walks through every item (a fresh session each),
so the whole file stays well under a minute after the server is up.  Screenshots: ``test-artifacts/tv_*``.
"""

from __future__ import annotations

import time

import pytest
from browser_helpers import ALL_VIEWS_JS, CHROMIUM, POINTS_JS, served_app, settled, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

# The app's tree views (the main one has a TapTool; the Compare diagrams do not), as drawn: text size,
# ranges, the plot's box on screen, and every node box in data and screen units.
VIEWS_JS = (
    "() => {"
    + ALL_VIEWS_JS
    + """  const out = [];
  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    let boxes = null, bold = null, plain = null;
    for (const [m, rv] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (d && d.hidden && d.left) boxes = d;
      if (m.glyph && m.glyph.text_font_style && m.glyph.text_font_style.value === "bold") bold = m.glyph;
      else if (m.glyph && m.glyph.text_font_size && !(m.glyph.background_fill_color
               && m.glyph.background_fill_color.value)) plain = m.glyph;
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
    const px = g => parseFloat(g.text_font_size.value || g.text_font_size);
    out.push({tap, font: px(bold), plain: px(plain),
      x0: m.x_range.start, x1: m.x_range.end, y0: m.y_range.start, y1: m.y_range.end,
      left: rect.x + fr.left, top: rect.y + fr.top, width: fr.width, height: fr.height, nodes});
  }
  return out;
}"""
)


def same_size(v) -> bool:
    """Both text lines of the boxes at the size the zoom gives (13 px at scale 1)."""
    sx, sy = v["width"] / (v["x1"] - v["x0"]), v["height"] / (v["y1"] - v["y0"])
    return abs(sx - sy) < 0.03 * sx and abs(v["font"] - 13 * sx) < 0.2 and v["plain"] == v["font"]


def main_view(page):
    return next(v for v in page.evaluate(VIEWS_JS) if v["tap"])


def wait_view(page, cond, timeout=60.0):
    """The tree view once ``cond`` holds (generous: on a loaded machine a click's round trip through the server
    took over 20 s)."""
    deadline, v = time.time() + timeout, None
    while time.time() < deadline:
        views = [v for v in page.evaluate(VIEWS_JS) if v["tap"]]
        v = views[0] if views else None
        if v is not None and cond(v):
            return v
        time.sleep(0.15)
    raise AssertionError(
        f"tree view never reached the expected state; last: {v and {k: v[k] for k in v if k != 'nodes'}}"
    )


def _shape(v) -> tuple:
    """What the drawn view's sizes depend on: its box on screen, its ranges and text size."""
    return tuple(round(v[k], 2) for k in ("left", "top", "width", "height", "x0", "x1", "y0", "y1", "font", "plain"))


def wait_settled(page, cond, timeout=60.0, gap_s=0.4):
    """The tree view once ``cond`` holds and its layout has settled: two reads ``gap_s`` apart agree on its box,
    ranges and text size (under load the card's width, and with it the text size, can still change a moment
    after the view first satisfies ``cond``: a size is checked on the settled state)."""
    deadline, last = time.time() + timeout, None
    while True:
        v = wait_view(page, cond, timeout=max(1.0, deadline - time.time()))
        if last is not None and _shape(v) == _shape(last):
            return v
        if time.time() > deadline:
            raise AssertionError(f"tree view never settled; last: { ({k: v[k] for k in v if k != 'nodes'}) }")
        last = v
        time.sleep(gap_s)


def click_point(page, splits):
    deadline = time.time() + 30
    while time.time() < deadline:
        pts = [p for p in page.evaluate(POINTS_JS) if p["run"] == 2 and p["splits"] == splits]
        if pts:
            pts = [p for p in settled(page) if p["run"] == 2 and p["splits"] == splits]  # not while it rescales
            page.mouse.click(pts[0]["x"], pts[0]["y"])
            page.wait_for_selector(f"text=/tree \\d+: {splits} splits/", timeout=30_000)
            return
        time.sleep(0.2)
    raise AssertionError(f"no point with {splits} splits")


@pytest.fixture(scope="module")
def server():
    with served_app(log_name="panel-serve-treeview.log") as s:
        yield s


# Scroll the tree view's scrolling ancestor (across shadow roots) by dy pixels.
SCROLL_JS = (
    "(dy) => {"
    + ALL_VIEWS_JS
    + """  const view = views.find(v => v.frame && v.model.toolbar
    && v.model.toolbar.tools.some(t => t.type === "TapTool" || t.constructor.name === "TapTool") && v.renderer_views);
  let el = view.el;
  while (el) {
    const st = getComputedStyle(el);
    if (el.scrollHeight > el.clientHeight + 5 && /auto|scroll/.test(st.overflowY)) { el.scrollBy(0, dy); return true; }
    el = el.parentElement || (el.getRootNode && el.getRootNode().host);
  }
  window.scrollBy(0, dy);
  return false;
}"""
)


def scroll(page, dy):
    """Scroll by ``dy`` and wait until the tree view stops moving on screen (not a fixed pause: under load the
    scroll and the redraw after it take longer)."""
    page.evaluate(SCROLL_JS, dy)
    wait_settled(page, lambda v: True, gap_s=0.15)


def into_view(page, v, node, size):
    """Scroll the page until ``node`` is visible."""
    width, height = size
    for _ in range(10):
        n = next(n for n in v["nodes"] if n["id"] == node)
        mid = (n["sy0"] + n["sy1"]) / 2
        if 120 < mid < height - 60:
            return n, v
        scroll(page, mid - height / 2)
        v = main_view(page)
    raise AssertionError(f"node {node} not scrolled into view")


def tool_icon(page, v, name):
    """The tree figure's toolbar button ``name`` (wheel-zoom, reset ...): the one just above its frame."""
    for el in page.locator(f".bk-tool-icon-{name}").all():
        box = el.bounding_box()
        if box and v["left"] <= box["x"] <= v["left"] + v["width"] + 40 and abs(box["y"] - v["top"]) < 60:
            return el
    raise AssertionError(f"no {name} tool over the tree")


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)], ids=["1600", "1280"])
def test_tree_view(server, new_page, size):
    width, height = size
    tag = f"{width}x{height}"
    url, _ = server
    page = new_page(url, width, height)
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    page.locator(".bk-input-group:has(label:text-is('Dataset')) select").select_option("balance-scale")
    page.wait_for_selector("text=/Runs on .*balance-scale/", timeout=30_000)
    page.locator(".bk-input-group:has-text('Max depth') input").fill("6")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=#2 uigreedy", timeout=60_000)

    # compact layout of a deep tree (depth 6, 46 splits): collapsed below depth 4, counts on the collapsed nodes
    click_point(page, 46)
    v = wait_view(page, lambda v: any(n["hidden"] for n in v["nodes"]))
    folded = [n for n in v["nodes"] if n["hidden"]]
    shown_splits = sum(1 for n in v["nodes"] if n["test"] != "(leaf)" and not n["hidden"])
    assert shown_splits + sum(n["hidden"] for n in folded) == 46
    assert all("splits hidden" in n["test"] for n in folded)
    n, v = into_view(page, v, folded[0]["id"], size)
    shot(page, f"tv_compact_46_splits_{tag}", full_page=False)
    before = len(v["nodes"])
    page.mouse.click((n["sx0"] + n["sx1"]) / 2, (n["sy0"] + n["sy1"]) / 2)  # expand it
    v = wait_view(page, lambda v: len(v["nodes"]) > before)
    assert next(m for m in v["nodes"] if m["id"] == n["id"])["hidden"] == 0
    scroll(page, -10_000)  # back up to the front

    # a 28-split tree: readable (>= 11 px at 1600 px) and nothing clipped, in a view as wide as its card
    click_point(page, 28)
    v = wait_view(page, lambda v: len(v["nodes"]) == 57 and not any(n["hidden"] for n in v["nodes"]))
    v = wait_settled(page, same_size)
    if width == 1600:
        assert v["font"] >= 11, v["font"]
    assert v["width"] >= 0.8 * (width - 330)  # the card's width (the sidebar takes ~330 px)
    for n in v["nodes"]:
        assert v["left"] - 0.5 <= n["sx0"] and n["sx1"] <= v["left"] + v["width"] + 0.5, n
        assert v["top"] - 0.5 <= n["sy0"] and n["sy1"] <= v["top"] + v["height"] + 0.5, n
    n, v = into_view(page, v, v["nodes"][0]["id"], size)
    shot(page, f"tv_28_splits_{tag}", full_page=False)

    # zoom (the toolbar's wheel zoom), pan (drag), reset
    span0, font0 = v["x1"] - v["x0"], v["font"]
    tool_icon(page, v, "wheel-zoom").click()  # the click scrolls the toolbar into view
    scroll(page, main_view(page)["top"] - 150)
    v = main_view(page)
    cx, cy = v["left"] + v["width"] / 2, v["top"] + 200
    page.mouse.move(cx, cy)
    page.mouse.wheel(0, -400)
    v = wait_view(page, lambda v: v["x1"] - v["x0"] < 0.9 * span0 and v["font"] > font0 * 1.05)
    shot(page, f"tv_zoomed_{tag}", full_page=False)
    x0 = v["x0"]
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 150, cy, steps=5)
    page.mouse.up()
    v = wait_view(page, lambda v: abs(v["x0"] - x0) > 20)
    tool_icon(page, v, "wheel-zoom").click()  # off again: the wheel scrolls the page
    tool_icon(page, v, "reset").click()
    v = wait_view(page, lambda v: abs(v["x1"] - v["x0"] - span0) < 1 and abs(v["font"] - font0) < 0.2)

    # click a split to collapse its subtree, click again to expand it
    node = v["nodes"][1]
    assert node["test"] != "(leaf)"
    n, v = into_view(page, v, node["id"], size)
    page.mouse.click((n["sx0"] + n["sx1"]) / 2, (n["sy0"] + n["sy1"]) / 2)
    v = wait_view(page, lambda v: len(v["nodes"]) < 57)
    n = next(m for m in v["nodes"] if m["id"] == node["id"])
    assert n["hidden"] > 0 and len(v["nodes"]) == 57 - 2 * n["hidden"]
    n, v = into_view(page, v, node["id"], size)
    shot(page, f"tv_collapsed_{tag}", full_page=False)
    page.mouse.click((n["sx0"] + n["sx1"]) / 2, (n["sy0"] + n["sy1"]) / 2)
    v = wait_view(page, lambda v: len(v["nodes"]) == 57)

    # a slow click (Bokeh's "press", which its tap tool ignores) collapses it too; held and released on
    # another node (an attempt to drag) it does nothing; a double click toggles once, not twice
    n, v = into_view(page, v, node["id"], size)
    other = next(
        m
        for m in v["nodes"]
        if m["id"] != node["id"]
        and m["test"] != "(leaf)"  # a split: were it toggled, the count of boxes would change
        and 120 < (m["sy0"] + m["sy1"]) / 2 < height - 60
        and v["left"] < (m["sx0"] + m["sx1"]) / 2 < v["left"] + v["width"]
    )
    page.mouse.move((n["sx0"] + n["sx1"]) / 2, (n["sy0"] + n["sy1"]) / 2)
    page.mouse.down()
    page.wait_for_timeout(600)
    page.mouse.move((other["sx0"] + other["sx1"]) / 2, (other["sy0"] + other["sy1"]) / 2, steps=3)
    page.mouse.up()
    page.wait_for_timeout(800)
    assert len(main_view(page)["nodes"]) == 57
    page.mouse.move((n["sx0"] + n["sx1"]) / 2, (n["sy0"] + n["sy1"]) / 2)
    page.mouse.down()
    page.wait_for_timeout(600)
    page.mouse.up()
    v = wait_view(page, lambda v: len(v["nodes"]) < 57)
    n, v = into_view(page, v, node["id"], size)
    page.mouse.dblclick((n["sx0"] + n["sx1"]) / 2, (n["sy0"] + n["sy1"]) / 2)
    v = wait_view(page, lambda v: len(v["nodes"]) == 57)
    page.wait_for_timeout(800)
    assert len(main_view(page)["nodes"]) == 57  # the double click's second click did not collapse it again

    # full screen
    page.get_by_role("button", name="Full screen").click()
    page.wait_for_function("() => document.fullscreenElement !== null", timeout=10_000)
    v = wait_view(page, lambda v: v["width"] >= width - 60 and same_size(v))  # one scale on both axes
    page.wait_for_timeout(400)
    shot(page, f"tv_fullscreen_{tag}", full_page=False)
    page.evaluate("() => document.exitFullscreen()")
    page.wait_for_function("() => document.fullscreenElement === null", timeout=10_000)
    v = wait_view(page, lambda v: abs(v["x1"] - v["x0"] - span0) < 1 and same_size(v))  # the card's view again

    # explain a row: by index, then typed values (Enter); its path is outlined and its rule shown
    page.get_by_text("Explain a row", exact=True).click()
    page.locator(".bk-input-group:has-text('Row (0-based') input").fill("5")
    page.get_by_role("button", name="Explain", exact=True).click()
    page.wait_for_selector("text=/Row 5.*predicted/", timeout=20_000)
    rule = page.locator("pre:has-text('IF ')").first.text_content()
    assert " THEN " in rule
    v = wait_view(page, lambda v: sum(n["stroke"] == "#111111" for n in v["nodes"]) >= 2 and same_size(v))
    path = [n for n in v["nodes"] if n["stroke"] == "#111111"]
    assert sum(n["test"] == "(leaf)" for n in path) == 1  # one root-to-leaf path
    leaf = next(n for n in path if n["test"] == "(leaf)")
    n, v = into_view(page, v, leaf["id"], size)
    shot(page, f"tv_explain_row_{tag}", full_page=False)
    box = page.locator(".bk-input-group:has-text('or type feature values') input")
    box.fill("left_weight=1, left_distance=1, right_weight=5, right_distance=5")
    box.press("Enter")
    page.wait_for_selector("text=/the typed values.*predicted R/", timeout=20_000)

    # Compare: both trees drawn side by side, the differences outlined in each
    page.get_by_text("Compare", exact=True).click()

    def compared(w) -> bool:
        """Differences outlined, every box inside the plot's frame."""
        inside = all(w["left"] - 0.5 <= n["sx0"] and n["sx1"] <= w["left"] + w["width"] + 0.5 for n in w["nodes"])
        return inside and any(n["stroke"] == "#D55E00" for n in w["nodes"])

    # polled to the settled state: the browser may draw between the server's messages
    deadline, others = time.time() + 60, []
    while time.time() < deadline:
        others = [w for w in page.evaluate(VIEWS_JS) if not w["tap"] and w["nodes"]]
        if len(others) == 2 and all(map(compared, others)):
            break
        time.sleep(0.2)
    assert len(others) == 2
    for w in others:
        assert compared(w), {k: w[k] for k in ("x0", "x1", "left", "width")}
    assert others[0]["left"] + others[0]["width"] <= others[1]["left"] + 1  # side by side
    page.get_by_text("outlined", exact=False).first.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    shot(page, f"tv_compare_{tag}", full_page=False)
