"""A Sweep row is no dead end (issue 51): a sweep run from its card lists its settings, and one opened as a
run joins the plot (its refit front, with its CV layer) and the run list."""

from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, POINTS_JS, served_app, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def server():
    with served_app(env_extra={"TREEEXPLORER_EXACT_AUTO_ROWS": "0"}, log_name="panel-serve-sweep.log") as s:
        yield s


def test_a_sweep_row_opens_as_a_run(server, new_page):
    url, _ = server
    page = new_page(url, 1280, 800)
    page.wait_for_selector("text=#1 uigreedy", timeout=300_000)
    page.get_by_text("Sweep: cross-validate a grid", exact=False).first.click()
    run = page.get_by_role("button", name="Run sweep")
    run.wait_for(timeout=60_000)
    run.click()  # the card's defaults: cart at depths 2 and 3, on a local Dask cluster
    opener = page.get_by_role("button", name="Open as run")
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(run).to_be_disabled(timeout=30_000)
    expect(run).to_be_enabled(timeout=300_000)  # the sweep is over: its settings' list is complete
    expect(opener).to_be_enabled(timeout=30_000)
    pick = page.locator(".bk-input-group:has(label:text-is('Open a setting as a run')) select")
    options = pick.evaluate("el => [...el.options].map(o => o.textContent)")
    assert len(options) == 2 and all(o.startswith(f"#{i + 1} cart") for i, o in enumerate(options)), options
    pick.select_option(index=len(options) - 1)
    opener.click()
    page.wait_for_selector(f"text=/#2 sweep #{len(options)} cart/", timeout=60_000)
    page.wait_for_function(f"() => ({POINTS_JS})().some(p => p.run === 2)", timeout=30_000)
    trees = [p["tree"] for p in page.evaluate(POINTS_JS) if p["run"] == 2]
    assert len(trees) >= 2  # the setting's refit front, every tree a point
    page.wait_for_selector("text=/#2 sweep.*, tree \\d+:/", timeout=30_000)  # its 1-SE tree in the tree view
    shot(page, "sweep_row_opened", full_page=False)
