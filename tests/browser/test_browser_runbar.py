"""Laptop sizes: Run, Cancel and the progress stay in view however far the sidebar is scrolled; a click on
the front brings the opened tree into view; the export buttons fit their card."""

from __future__ import annotations

import time

import pytest
from browser_helpers import CHROMIUM, POINTS_JS, served_app, settled, shot, stable_box, wait_until

from treeexplorer.ui.detail import TreeDetail

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
    assert wait_until(page, lambda: dataset.bounding_box()["y"] < before - 200)  # the sidebar did scroll
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


def _train_points(page, run: int, timeout: float = 30.0) -> list[dict]:
    deadline = time.time() + timeout
    while time.time() < deadline:
        pts = [p for p in page.evaluate(POINTS_JS) if p["run"] == run]
        if pts:
            return [p for p in settled(page) if p["run"] == run]  # not while the plot rescales
        page.wait_for_timeout(200)
    raise AssertionError(f"run {run}'s points were not drawn")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_click_brings_the_tree_into_view_and_the_exports_fit_their_card(server, new_page, size):
    url, _ = server
    width, height = size
    page = new_page(url, width, height)
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    run = page.get_by_role("button", name="Run", exact=True)
    for k in (2, 3, 4):  # four runs: the front card (plot, run list) fills a laptop screen
        run.click()
        page.wait_for_selector(f"text=#{k} uigreedy", timeout=60_000)
    card = page.locator(f".{TreeDetail.CSS_CLASS}")
    assert card.bounding_box()["y"] > 0.6 * height  # below the fold (or nearly) before the click
    pt = max(_train_points(page, 4), key=lambda p: p["splits"])
    assert 0 <= pt["y"] <= height  # the point is on screen: the user can click it
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_selector(f"text=/#4 uigreedy.*tree {pt['tree']}: {pt['splits']} splits/", timeout=30_000)
    tree = page.locator(f".{TreeDetail.CSS_CLASS} canvas").first

    def visible(box) -> float:
        return min(box["y"] + box["height"], height) - max(box["y"], 0)

    # the card is drawn after the scroll: wait for it in view, then check its settled place
    wait_until(page, lambda: (b := tree.bounding_box()) is not None and visible(b) >= min(b["height"], 0.4 * height))
    box = stable_box(tree)
    assert box is not None and box["height"] > 100
    assert visible(box) >= min(box["height"], 0.4 * height), f"tree view {box} barely visible in a {size} window"
    shot(page, f"layout_{width}x{height}_tree_after_click", full_page=False)
    # every export button lies inside the card and the window, none on top of another
    outer = card.bounding_box()
    boxes = []
    for name in ("PNG", "SVG", "Rules", "Tree JSON", "Front JSON", "Front CSV"):
        b = page.get_by_role("button", name=name, exact=True).bounding_box()
        assert b is not None, name
        assert outer["x"] <= b["x"] and b["x"] + b["width"] <= outer["x"] + outer["width"] + 0.5, (name, b, outer)
        assert b["x"] + b["width"] <= width, (name, b)
        boxes.append(b)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            overlap_x = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
            overlap_y = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
            assert overlap_x <= 0.5 or overlap_y <= 0.5, (a, b)
