"""Gaps kept in the browser (issue 49): palmerpenguins uploaded as it is (11 rows with missing values) runs without
"Drop rows with missing values", every row stays, a clicked tree's path reads "or missing" and Explain a row on
row 3 (all four measurements missing) outlines the path the gaps took and says which way each went."""

from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, POINTS_JS, served_app, settled, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def penguins_csv() -> bytes:
    import palmerpenguins

    return palmerpenguins.load_penguins().to_csv(index=False).encode()


@pytest.fixture(scope="module")
def server():
    with served_app(log_name="panel-serve-missing.log") as s:
        yield s


def select(page, label: str, value: str) -> None:
    page.locator(f".bk-input-group:has(label:text-is('{label}')) select").select_option(value)


def test_penguins_with_gaps_runs_and_explains_a_row_with_gaps(server, new_page):
    url, _ = server
    page = new_page(url)
    page.wait_for_selector("text=#1 uigreedy", timeout=300_000)
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "penguins.csv", "mimeType": "text/csv", "buffer": penguins_csv()}]
    )
    page.wait_for_selector("text=/penguins.*344 rows/", timeout=60_000)
    select(page, "Target column", "species")
    # the tick stays off (its label says what it would drop) and the table loaded whole
    page.wait_for_selector("text=Drop rows with missing values (would drop 11 rows)", timeout=30_000)
    select(page, "Solver", "murtree")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=/Last run #2 murtree/", timeout=180_000)
    page.wait_for_selector("text=/kept 11 row\\(s\\) with missing values/", timeout=30_000)

    pts = [p for p in settled(page, POINTS_JS) if p["run"] == 2]
    pt = max(pts, key=lambda p: p.get("splits", 0))  # the largest tree: its splits meet the gaps
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_selector(f"text=/#2 murtree.*tree {pt['tree']}:/", timeout=30_000)

    page.get_by_text("Explain a row", exact=True).click()
    page.locator(".bk-input-group:has-text('Row (0-based') input").fill("3")
    page.get_by_role("button", name="Explain", exact=True).click()
    page.wait_for_selector("text=/Row 3.*predicted/", timeout=30_000)
    rule = page.locator("pre:has-text('IF ')").first.text_content()
    assert "or missing" in rule or "is missing" in rule, rule
    page.wait_for_selector("text=/is missing: it went to/", timeout=10_000)
    shot(page, "missing_penguins_explain_row3", full_page=False)
