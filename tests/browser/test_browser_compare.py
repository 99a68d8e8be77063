"""Compare across runs (issue 51): the selected tree of one run compared with a tree of another run of the
same data, picked in the Compare tab (1280x800); Enter in a run setting still runs."""

from __future__ import annotations

import re

import pytest
from browser_helpers import CHROMIUM, served_app, shot
from test_browser_workspace import page_text

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def test_compare_a_tree_with_a_tree_of_another_run(new_page):
    with served_app(log_name="panel-serve-compare.log") as (url, _):
        page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
        depth = page.locator(".bk-input-group:has-text('Max depth') input").first
        depth.fill("1")
        depth.press("Enter")  # a run setting: Enter runs
        page.wait_for_selector("text=/#2 uigreedy · depth=1, tree \\d+/", timeout=60_000)
        page.get_by_text("Compare", exact=True).click()
        select = page.locator(".bk-input-group:has-text('Compare with') select")
        select.wait_for(timeout=30_000)  # the tab's content is made when first shown
        page.wait_for_function(
            "() => { const walk = (r) => { for (const el of r.querySelectorAll('*')) { if (el.tagName === 'OPTION'"
            " && el.textContent.startsWith('#1 tree')) return true; if (el.shadowRoot && walk(el.shadowRoot))"
            " return true; } return false; }; return walk(document); }",
            timeout=30_000,
        )
        labels = select.locator("option").all_text_contents()
        others = [t for t in labels if t.startswith("#1 tree ")]
        assert others, labels  # the first run's trees are offered, named with their run
        other = others[-1]  # its most complex tree
        select.select_option(label=other)
        tree, splits = re.match(r"#1 tree (\d+): (\d+) split", other).groups()
        page.wait_for_selector(f"text=/Tree \\d+ → tree {tree}/", timeout=30_000)
        text = page_text(page)
        assert f"splits: 1 → {splits}" in text, text[:2000]  # the depth-1 tree against the other run's tree
        shot(page, "ws_compare_two_runs", full_page=False)
