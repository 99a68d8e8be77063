"""Laptop sizes: Run, Cancel and the progress stay in view however far the sidebar is scrolled."""

from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, served_app, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

SIZES = ((1280, 800), (1600, 1000))


@pytest.fixture(scope="module")
def server():
    with served_app() as s:
        yield s


def _in_view(page, box, width: int, height: int) -> bool:
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height and box["x"] + box["width"] <= width


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_cancel_and_progress_stay_in_view(server, new_page, size):
    url, _ = server
    width, height = size
    page = new_page(url, width, height)
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    run, cancel = (page.get_by_role("button", name=n, exact=True) for n in ("Run", "Cancel"))
    assert _in_view(page, run.bounding_box(), width, height) and _in_view(page, cancel.bounding_box(), width, height)
    # the sidebar's cards are taller than the window: scroll it to the end, the run bar stays pinned
    page.locator(".bk-input-group:has(label:text-is('Solver')) select").select_option("uislow")
    page.wait_for_selector("text=One tree per step", timeout=30_000)
    dataset = page.locator(".bk-input-group:has(label:text-is('Dataset')) select")
    before = dataset.bounding_box()["y"]
    page.mouse.move(150, height - 100)
    page.mouse.wheel(0, 5000)
    page.wait_for_timeout(400)
    assert dataset.bounding_box()["y"] < before - 200  # the sidebar did scroll
    assert _in_view(page, run.bounding_box(), width, height)
    page.locator(".bk-input-group:has-text('Step') input").fill("3")
    page.keyboard.press("Tab")
    run.click()
    page.wait_for_selector("text=growing", timeout=30_000)
    progress = page.locator("progress").first
    assert _in_view(page, progress.bounding_box(), width, height)
    assert _in_view(page, cancel.bounding_box(), width, height) and cancel.is_enabled()
    shot(page, f"runbar_{width}x{height}_running", full_page=False)
    cancel.click()
    page.wait_for_selector("text=/run #2 cancelled/", timeout=30_000)


def test_enter_in_a_field_starts_a_run_with_the_value_just_typed(server, new_page):
    url, _ = server
    page = new_page(url, 1280, 800)
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    depth = page.locator(".bk-input-group:has(label:text-is('Max depth')) input").first
    depth.fill("2")
    depth.press("Enter")
    page.wait_for_selector("text=#2 uigreedy · depth=2", timeout=60_000)


def test_the_complexity_axis_explains_its_measures(server, new_page):
    url, _ = server
    page = new_page(url, 1600, 1000)
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    page.locator("[class*='TooltipIcon'] .bk-description").first.hover()
    page.wait_for_selector("text=/Expected tests per sample: how many tests a row goes through/", timeout=10_000)
