"""The Diagnostics tab with 25 classes (issue 51): the confusion matrix scrolls inside its frame, which stays
inside the tree card and clear of the Export buttons beside it (1280x800, a table made here)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from browser_helpers import CHROMIUM, served_app, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    rng = np.random.default_rng(25)
    n = 1000
    cls = rng.integers(0, 25, n)
    df = pd.DataFrame(
        {"a": cls + rng.normal(0, 0.8, n), "b": rng.normal(size=n), "letter": [f"class_{c:02d}" for c in cls]}
    )
    path = tmp_path_factory.mktemp("diag") / "letters.csv"
    df.to_csv(path, index=False)
    with served_app(env_extra={"TREEEXPLORER_DATASET": str(path)}, log_name="panel-serve-diag.log") as s:
        yield s


def test_a_25_class_confusion_matrix_scrolls_inside_its_frame(server, new_page):
    url, _ = server
    page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
    page.get_by_text("Diagnostics", exact=True).click()
    frame = page.locator(".diagnostics-frame").first
    frame.locator("table").first.wait_for(timeout=30_000)
    frame.scroll_into_view_if_needed()
    box = frame.bounding_box()
    sizes = frame.evaluate("el => [el.scrollWidth, el.clientWidth, el.scrollHeight, el.clientHeight]")
    export = page.get_by_role("button", name="PNG", exact=True).bounding_box()
    shot(page, "ws_diagnostics_25_classes", full_page=False)
    card = page.locator(".tx-selected-tree").first.bounding_box()
    assert sizes[0] > sizes[1] or sizes[2] > sizes[3], sizes  # the matrix is larger than the frame: it scrolls
    assert box["x"] + box["width"] <= export["x"] + 1, (box, export)  # clear of the Export buttons
    assert box["x"] >= card["x"] and box["x"] + box["width"] <= card["x"] + card["width"] + 1
