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


def select_another_tree(page) -> tuple[list, tuple]:
    """Click a tree of run #1 other than the one selected; returns the plot's points and the new title."""
    points = settled(page)
    first = selected_title(page)
    other = next(p for p in points if p["run"] == 1 and str(p["tree"]) != first[1])
    page.mouse.click(other["x"], other["y"])
    page.wait_for_selector(f"text=/tree {other['tree']}: /", timeout=30_000)
    chosen = selected_title(page)
    assert chosen[1] == str(other["tree"])
    return points, chosen


def test_a_saved_session_opens_in_a_fresh_server(new_page, tmp_path):
    with served_app(log_name="panel-serve-session-1.log") as (url, _):
        page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
        points, chosen = select_another_tree(page)
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


def test_a_tab_link_survives_a_server_restart_in_its_browser_only(new_page, tmp_path):
    """The server keeps each tab's session on its disk (treeexplorer.ui.session_store): after a restart the
    same link in the same browser shows the same runs and selection; the link copied into another browser
    gets a new, empty session."""
    env = {"TREEEXPLORER_SESSION_DIR": str(tmp_path / "kept"), "TREEEXPLORER_EXACT_AUTO_ROWS": "0"}
    with served_app(env_extra=env, log_name="panel-serve-restart-1.log") as (url, _):
        page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
        points, chosen = select_another_tree(page)
        page.wait_for_function("() => new URLSearchParams(location.search).get('s')", timeout=30_000)
        token = page.evaluate("() => new URLSearchParams(location.search).get('s')")
        deadline = time.time() + 30  # written in a thread after the selection
        while len(list((tmp_path / "kept").glob("*.txsession"))) != 1:
            assert time.time() < deadline, "the session was not kept on disk"
            time.sleep(0.2)
        time.sleep(1.0)  # the write of the last selection
    with served_app(env_extra=env, log_name="panel-serve-restart-2.log") as (url, _):
        again = page.context.new_page()  # the same browser (its cookie), a new server on another port
        again.goto(f"{url}?s={token}", timeout=180_000)
        again.wait_for_selector("text=/kept by the server/", timeout=120_000)
        again.wait_for_function(f"() => ({POINTS_JS})().length > 0", timeout=60_000)
        assert selected_title(again) == chosen
        assert sorted((p["run"], p["tree"]) for p in again.evaluate(POINTS_JS)) == sorted(
            (p["run"], p["tree"]) for p in points
        )
        shot(again, "session_after_restart", full_page=False)
        stranger = new_page(None, 1280, 800)  # another browser: the copied link shares nothing
        stranger.goto(f"{url}?s={token}", timeout=180_000)
        stranger.wait_for_selector("text=/not open in this browser/", timeout=120_000)
        assert "kept by the server" not in page_text(stranger)


def test_a_page_whose_server_stopped_says_so(new_page):
    from treeexplorer.app import DISCONNECTED

    with served_app(log_name="panel-serve-disconnect.log") as (url, _):
        page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
    page.wait_for_selector(f"text={DISCONNECTED[:40]}", timeout=60_000)  # the server is gone: the page says so
    shot(page, "disconnected", full_page=False)
