"""The served app draws the exact front (contree) as a reference line and shows every tree's gap to it.

``panel serve apps/explorer.py`` with the stand-in solvers (as in ``test_browser.py``); the exact front of the
bundled iris data is computed by the real ``contree`` solver in the server's background after the first run.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import ALL_VIEWS_JS, CHROMIUM, served_app, settled, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

# Legend labels and the step lines without tree data (run lines and the reference) of the Pareto plot.
PLOT_JS = (
    "() => {"
    + ALL_VIEWS_JS
    + """  const out = {legend: [], lines: []};
  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    for (const r of v.model.center || [])
      if (r.items) for (const it of r.items) out.legend.push(typeof it.label === "string" ? it.label : it.label.value);
    for (const [m] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (!d || d.tree || !d.x || !m.glyph || !("mode" in m.glyph)) continue;
      out.lines.push({n: d.x.length, dashed: m.glyph.line_dash.value ? m.glyph.line_dash.value.length > 0
                       : String(m.glyph.line_dash).length > 0, visible: m.visible, y: Array.from(d.y)});
    }
  }
  return out;
}"""
)


def test_exact_front_reference_line_hover_and_card(new_page):
    with served_app(log_name="panel-serve-gap.log") as (url, _):
        page = new_page(url)
        page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
        page.wait_for_selector("text=/Exact front known \\(contree, depth 3/", timeout=300_000)  # after the warm-up
        # the run list (the plot's legend) has the exact line as a sub-item with its checkbox
        page.locator(".bk-Checkbox", has_text="exact optimum (contree, raw features)").wait_for(timeout=30_000)
        plot = page.evaluate(PLOT_JS)
        assert plot["legend"] == []  # no legend inside the plot
        ref = [line for line in plot["lines"] if line["dashed"]]
        assert len(ref) == 1 and ref[0]["n"] == 8 and ref[0]["visible"]  # budgets 0..7 of a depth-3 front
        assert ref[0]["y"] == sorted(ref[0]["y"]) and ref[0]["y"][-1] <= 1.0  # accuracy rises with splits
        pts = [p for p in settled(page) if p["run"] == 1]
        pt = max(pts, key=lambda p: p["splits"] if p["splits"] <= 3 else -1)
        # hover: the tree's gap in words
        page.mouse.move(pt["x"], pt["y"] + 1)
        page.wait_for_selector("text=/vs optimum:/", timeout=30_000)
        tip = page.locator("div:has(> span:text-is('vs optimum:'))").first.text_content()
        assert re.search(
            r"vs optimum:\s*(optimal \(equals the exact front\)|not proven by its run; equals the exact optimum"
            r"|\d+ errors? above the optimum)",
            tip,
        ), tip
        shot(page, "11_exact_front_hover")
        # the card: title and metrics table say the same
        page.mouse.click(pt["x"], pt["y"])
        page.wait_for_selector(f"text=tree {pt['tree']}: {pt['splits']} split", timeout=30_000)
        table = page.locator("table:has-text('vs exact optimum')").first
        table.wait_for(timeout=30_000)
        text = table.text_content()
        m = re.search(r"vs exact optimum\s*(.+?)\s*(?:splits / leaves|dominated)", text)
        assert m, text
        words = m.group(1)
        assert words.strip() in tip
        shot(page, "12_exact_front_card")
