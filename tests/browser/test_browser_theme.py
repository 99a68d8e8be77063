"""The theme switch reloads the page (Panel's template does): the tab keeps its runs and selection."""

from __future__ import annotations

import re
import time

import pytest
from browser_helpers import CHROMIUM, POINTS_JS, served_app, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def server():
    with served_app() as s:
        yield s


def _runs(page, want: set, wait: float = 30.0) -> set:
    deadline, seen = time.time() + wait, set()
    while time.time() < deadline:
        seen = {p["run"] for p in page.evaluate(POINTS_JS)}
        if seen == want:
            break
        time.sleep(0.2)
    return seen


@pytest.mark.parametrize("size", [(1280, 800)], ids=["1280x800"])
def test_switching_theme_keeps_the_runs(server, new_page, size):
    url, _ = server
    page = new_page(url, *size)
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=#2 uigreedy", timeout=60_000)
    assert _runs(page, {1, 2}) == {1, 2}
    page.wait_for_function("() => new URLSearchParams(location.search).get('s')", timeout=10_000)
    token = page.evaluate("() => new URLSearchParams(location.search).get('s')")
    with page.expect_navigation(timeout=60_000):
        page.locator("#theme-switch").click()
    assert re.search(r"[?&]theme=dark", page.url) and f"s={token}" in page.url
    page.wait_for_selector("text=#2 uigreedy", timeout=120_000)
    assert _runs(page, {1, 2}) == {1, 2}  # both runs, not a fresh default run
    assert page.locator("text=#3 uigreedy").count() == 0
    shot(page, "theme_dark_after_switch", full_page=False)
