"""The app's cross-validate option in a real browser: enable it, run, and see the ±1 sd band drawn.

Same set-up as ``test_browser.py`` (``panel serve apps/explorer.py`` with the stand-in solvers, Debian's
chromium, the offline guard); the screenshot goes to ``test-artifacts/cv_band.png``.
"""

from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, served_app, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

# The CV renderers' data as the browser holds it: the band polygons and the 1-SE / best-mean marks.
CV_JS = """() => {
  const out = {band: [], marks: [], drawn: false};
  const walk = v => {
    const m = v.model, d = m && m.data_source && m.data_source.data;
    if (d && d.kind && d.xs) {
      for (let i = 0; i < d.xs.length; i++) out.band.push({kind: d.kind[i], n: d.xs[i].length,
                                                           ys: Array.from(d.ys[i])});
      out.drawn = out.drawn || (m.visible && v.el !== undefined);
    }
    if (d && d.marker && d.cv_mean) for (let i = 0; i < d.marker.length; i++)
      out.marks.push({marker: d.marker[i], level: d.level[i], mean: d.cv_mean[i]});
    if (v.child_views) for (const c of v.child_views) walk(c);
    if (v.renderer_views) for (const [, rv] of v.renderer_views) walk(rv);
  };
  for (const v of Object.values(Bokeh.index)) walk(v);
  return out;
}"""


@pytest.fixture(scope="module")
def server():
    with served_app(log_name="panel-serve-cv.log") as s:
        yield s


def test_cross_validated_run_draws_its_band_and_one_se_mark(server, new_page, request):
    url, _ = server
    page = new_page(url)
    request.node.funcargs["page"] = page  # the conftest's failure screenshot looks for it
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    assert page.evaluate(CV_JS)["band"] == []  # a plain run has no band
    # input and label are siblings in a shadow root (as test_browser.checkbox finds them)
    page.locator(".bk-Checkbox", has_text="Cross-validate (k folds)").locator("input[type=checkbox]").check()
    page.wait_for_selector("text=k folds", timeout=10_000)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=/#2 uigreedy.*CV 5-fold/", timeout=60_000)
    page.wait_for_function(f"() => ({CV_JS})().band.length === 1", timeout=30_000)
    cv = page.evaluate(CV_JS)
    (band,) = cv["band"]
    assert band["kind"] == "cv band ±1 sd" and band["n"] >= 4  # a stepped polygon, not a degenerate one
    assert max(band["ys"]) > min(band["ys"]) and cv["drawn"]
    assert {m["marker"] for m in cv["marks"]} == {"star", "circle"}
    assert page.get_by_text("1-SE").first.is_visible()
    page.wait_for_timeout(400)  # let the canvas repaint before the screenshot
    shot(page, "cv_band")
