"""Save session / open it in a fresh server (issue 51): the runs and the selected tree come back, nothing
solved again; the page asks nothing of the internet."""

from __future__ import annotations

import re
import time

import pytest
from browser_helpers import CHROMIUM, POINTS_JS, served_app, settled, shot
from test_browser_workspace import page_text

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

TITLE = re.compile(r"(#\d+ uigreedy[^,]*), tree (\d+): (\d+) splits?")


def selected_title(page) -> tuple:
    deadline = time.time() + 30
    while not (m := TITLE.search(page_text(page))):
        assert time.time() < deadline, "no selected tree on the page"
        time.sleep(0.3)
    return m.groups()


def test_a_saved_session_opens_in_a_fresh_server(new_page, tmp_path):
    with served_app(log_name="panel-serve-session-1.log") as (url, _):
        page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
        points = settled(page)
        first = selected_title(page)
        other = next(p for p in points if p["run"] == 1 and str(p["tree"]) != first[1])
        page.mouse.click(other["x"], other["y"])
        page.wait_for_selector(f"text=/tree {other['tree']}: /", timeout=30_000)
        chosen = selected_title(page)
        assert chosen[1] == str(other["tree"])
        with page.expect_download(timeout=60_000) as info:
            page.get_by_role("button", name="Save session").click()
        path = tmp_path / "work.txsession"
        info.value.save_as(path)
        shot(page, "ws_session_saved", full_page=False)
    assert path.stat().st_size > 0 and b'"format": "treeexplorer-session"' in path.read_bytes()

    with served_app(env_extra={"TREEEXPLORER_DATASET": str(path)}, log_name="panel-serve-session-2.log") as (url, _):
        page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
        page.wait_for_function(f"() => ({POINTS_JS})().length > 0", timeout=60_000)
        assert selected_title(page) == chosen  # the same run, tree and splits selected
        assert sorted((p["run"], p["tree"]) for p in page.evaluate(POINTS_JS)) == sorted(
            (p["run"], p["tree"]) for p in points
        )
        assert "opened the session work.txsession" in page_text(page)
        shot(page, "ws_session_reopened", full_page=False)
